"""Engine-vs-engine matches: ``cardinal match`` (a small cutechess-cli).

Plays games between two engines over UCI or XBoard (CECP v2), checks every
move with Cardinal's own rules, adjudicates the end of the game, keeps the
clocks, prints W-D-L with the Elo difference and writes PGN. The way the
engines are driven copies Cute Chess 1.5::

    cardinal match --variant grand --games 10 --tc 5+0.05 \\
        --engine "cmd=cardinal proto=uci name=Cardinal" \\
        --engine "cmd=/usr/games/fairy-stockfish proto=uci name=FSF option.Hash=64" \\
        --pgn games.pgn

The parts: :mod:`bench.engines` (the UCI/XBoard client and ``--engine`` specs),
:mod:`bench.referee` (one game: clocks and adjudication), :mod:`bench.openings`,
:mod:`bench.pgn`, :mod:`bench.timecontrol` and :mod:`bench.stats`; this module
is the runner (:func:`run_match` with a :class:`MatchConfig`) and the command
line (:func:`main`).

Engines: ``--engine`` takes Cute Chess-style ``key=value`` pairs in one
argument (split like a shell line, so ``cmd='python -m engine'`` and
``'option.Move Overhead=20'`` work): ``cmd`` (required; itself split like a
shell line), ``proto`` (``uci`` or ``xboard``, default ``uci``), ``name``,
``dir`` (working directory), ``arg`` (extra argument, repeatable) and
``option.NAME=VALUE`` (UCI ``setoption``, XBoard ``option NAME=VALUE``; an
option the engine does not declare or refuses gives a warning). With no
``--engine`` Cardinal plays itself (this Python, ``-m engine``, from the same
package as the runner). Those own engines get a Move Overhead of at most a
fifth of ``--movetime``; other engines get a warning when the movetime is not
above their overhead.

An engine that lost by a fault (illegal move, time forfeit, crash, stall) is
restarted before its next game. A move that arrives more than
``--timemargin`` milliseconds late loses on time (default 20 ms, which covers
this runner's own pipe and thread-scheduling latency; Cute Chess uses 0).
"""
from __future__ import annotations

import argparse
import collections
import dataclasses
import os
import queue
import signal
import sys
import threading
import time
from dataclasses import dataclass, field

from tqdm import tqdm

import variants as _variants
from bench import stats
from bench.engines import (HANDSHAKE_TIMEOUT, READY_TIMEOUT, EngineError, EngineSpec, kill_all,
                           start_engine)
from bench.openings import builtin_openings, load_openings
from bench.pgn import pgn_text
from bench.referee import GameRecord, GameState, play_game
from bench.timecontrol import TimeControl, parse_tc

VARIANTS = _variants.all_names()
OVERHEAD_OPTION = "Move Overhead"
DEFAULT_OVERHEAD_MS = 100     # Cardinal's Move Overhead; assumed for engines that do not declare one


@dataclass
class MatchConfig:
    """Everything :func:`run_match` needs. ``engines`` holds two :class:`EngineSpec`."""
    engines: list
    variant: str = "chess"
    games: int = 2
    tc: TimeControl = field(default_factory=TimeControl)
    concurrency: int = 1
    openings: list | None = None          # list of Opening; None = built-in set
    pgn_path: str | None = None           # append each game as it finishes
    sprt: stats.SPRT | None = None
    timemargin_ms: float = 20.0
    move_timeout: float = 60.0
    handshake_timeout: float = HANDSHAKE_TIMEOUT
    ready_timeout: float = READY_TIMEOUT
    event: str = "Cardinal match"
    progress: bool = True                 # a progress bar on stderr when it is a terminal
    debug: bool = False


@dataclass
class MatchResult:
    games: list                      # GameRecord, in finishing order
    wins: int = 0                    # from the first engine's point of view
    draws: int = 0
    losses: int = 0
    names: tuple = ("", "")
    interrupted: bool = False
    sprt_status: str | None = None
    error: str | None = None

    def score_line(self) -> str:
        n = self.wins + self.draws + self.losses
        pct = (self.wins + 0.5 * self.draws) / n if n else 0.0
        return (f"Score of {self.names[0]} vs {self.names[1]}: {self.wins} - {self.losses} - {self.draws} "
                f"[{pct:.3f}] {n}")


def _labels(specs: list, engines0: list | None = None) -> list[str]:
    names = [s.name or (engines0[i].id_name if engines0 else None) or s.label for i, s in enumerate(specs)]
    if names[0] == names[1]:
        names[1] = names[1] + " (2)"
    return names


def _warn(msg: str) -> None:
    print(f"warning: {msg}", file=sys.stderr, flush=True)


def tuned_specs(specs: list, tc: TimeControl) -> list:
    """The engine specs as the runner starts them: its own Cardinal engines get a Move
    Overhead that suits a short ``--movetime`` (a fifth of it, at most the default)
    unless the user set one."""
    out = []
    for s in specs:
        if s.own and tc.movetime and not s.has_option(OVERHEAD_OPTION):
            s = dataclasses.replace(s, options={**s.options,
                                                OVERHEAD_OPTION: str(min(DEFAULT_OVERHEAD_MS, tc.movetime // 5))})
        out.append(s)
    return out


def _overhead_warning(spec: EngineSpec, engine, tc: TimeControl) -> str | None:
    """A warning when ``--movetime`` is not above the Move Overhead of an engine whose
    overhead the runner does not set (its declared default, else Cardinal's 100 ms)."""
    if not tc.movetime or spec.has_option(OVERHEAD_OPTION):
        return None
    declared = engine.option_default(OVERHEAD_OPTION)
    try:
        overhead = int(declared) if declared is not None else DEFAULT_OVERHEAD_MS
    except ValueError:
        overhead = DEFAULT_OVERHEAD_MS
    if tc.movetime > overhead:
        return None
    what = f"its Move Overhead ({overhead} ms)" if declared is not None else \
        f"a usual Move Overhead ({DEFAULT_OVERHEAD_MS} ms; the engine does not declare one)"
    return (f"engine {engine.label!r}: --movetime {tc.movetime} ms is not above {what}, so it may "
            f"move almost at once (set 'option.{OVERHEAD_OPTION}=N' in its --engine spec)")


def run_match(cfg: MatchConfig, warn=_warn) -> MatchResult:
    """Play the match; returns the result (also on Ctrl-C: ``interrupted`` is set).

    ``warn`` gets one-line warnings (an option an engine does not know or refuses, a
    movetime at or below an engine's Move Overhead), each once.
    Raises :class:`EngineError` if an engine cannot be started (no child left running)
    and ``ValueError`` for bad configuration.
    """
    if cfg.variant not in VARIANTS:
        raise ValueError(f"unknown variant {cfg.variant!r} (choose from {', '.join(VARIANTS)})")
    cfg.variant = _variants.canonical(cfg.variant)
    if len(cfg.engines) != 2:
        raise ValueError("a match needs exactly two engines")
    openings = cfg.openings or builtin_openings(cfg.variant)
    for op in openings:      # validate the built-in lines too
        g = GameState(cfg.variant, op.fen)
        for u in op.moves:
            g.pos.push_uci(u)
    conc = max(1, min(cfg.concurrency, cfg.games))
    specs = tuned_specs(cfg.engines, cfg.tc)
    lock = threading.Lock()
    warned: set = set()

    def warn_once(msg: str) -> None:
        with lock:
            if msg in warned:
                return
            warned.add(msg)
        warn(msg)

    dbg = None
    if cfg.debug:
        def dbg(msg):
            with lock:
                sys.stderr.write(f"{time.monotonic():.3f} {msg}\n")
                sys.stderr.flush()

    kw = dict(debug=dbg, handshake_timeout=cfg.handshake_timeout, ready_timeout=cfg.ready_timeout,
              warn=warn_once)
    pgn_fh = open(cfg.pgn_path, "a", encoding="utf-8") if cfg.pgn_path else None   # fail before any engine runs
    pairs: list[list] = []
    try:
        for w in range(conc):
            pair = []
            for i, spec in enumerate(specs):
                pair.append(start_engine(spec, spec.name or spec.label, cfg.variant, **kw))
                msg = _overhead_warning(spec, pair[-1], cfg.tc)
                if msg:
                    warn_once(msg)
            pairs.append(pair)
    except BaseException:
        for pair in pairs:
            for e in pair:
                e.proc.kill()
        kill_all()
        if pgn_fh:
            pgn_fh.close()
        raise
    names = _labels(specs, pairs[0])
    for pair in pairs:
        for i, e in enumerate(pair):
            e.label = names[i]
            e.proc.label = names[i]

    jobs: queue.Queue = queue.Queue()
    for i in range(cfg.games):
        jobs.put((i + 1, openings[(i // 2) % len(openings)], i % 2))
    results: queue.Queue = queue.Queue()
    stop = threading.Event()

    def worker(pair):
        while not stop.is_set():
            try:
                rnd, op, white_index = jobs.get_nowait()
            except queue.Empty:
                return
            try:
                rec = play_game(pair, white_index, cfg.variant, op, cfg.tc, rnd,
                                cfg.timemargin_ms, cfg.move_timeout, stop)
            except EngineError as e:
                results.put(("error", str(e)))
                return
            except Exception as e:  # a bug or an unexpected engine failure: report, do not hang
                if stop.is_set():
                    return
                results.put(("error", f"game {rnd}: {type(e).__name__}: {e}"))
                return
            if rec is None or stop.is_set():
                return
            if rec.fault is not None:       # restart the engine that failed
                i = rec.fault
                pair[i].proc.kill()
                try:
                    pair[i] = start_engine(specs[i], names[i], cfg.variant, **kw)
                    pair[i].label = names[i]
                except EngineError as e:
                    results.put(("game", rec))
                    results.put(("error", f"restarting after a forfeit: {e}"))
                    return
            results.put(("game", rec))

    threads = [threading.Thread(target=worker, args=(p,), daemon=True, name=f"match-{k}")
               for k, p in enumerate(pairs)]
    res = MatchResult(games=[], names=tuple(names))
    bar = None
    if cfg.progress:
        # disable=None: a bar only when stderr is a terminal (no '\r'-joined lines in logs)
        bar = tqdm(total=cfg.games, desc=f"{names[0]} vs {names[1]}", unit="game", file=sys.stderr,
                   dynamic_ncols=True, disable=None)
    tc = cfg.tc.pgn()
    try:
        for t in threads:
            t.start()
        finished = 0
        while finished < cfg.games:
            try:
                kind, item = results.get(timeout=0.2)
            except queue.Empty:
                if not any(t.is_alive() for t in threads) and results.empty():
                    break
                continue
            if kind == "error":
                res.error = item
                break
            rec: GameRecord = item
            finished += 1
            res.games.append(rec)
            sc = rec.score_for(0)
            if sc == 1.0:
                res.wins += 1
            elif sc == 0.0:
                res.losses += 1
            else:
                res.draws += 1
            if pgn_fh:
                pgn_fh.write(pgn_text(rec, cfg.event, tc=tc))
                pgn_fh.flush()
            if bar is not None:
                e, m = stats.elo_with_error(res.wins, res.draws, res.losses)
                bar.set_postfix_str(f"W-D-L {res.wins}-{res.draws}-{res.losses}  Elo {stats._fmt(e)} "
                                    f"+/- {stats._fmt(m)}", refresh=False)
                bar.update(1)
            if cfg.sprt is not None:
                st = cfg.sprt.status(res.wins, res.draws, res.losses)
                if st != "continue":
                    res.sprt_status = st
                    break
    except KeyboardInterrupt:
        res.interrupted = True
    finally:
        stop.set()
        if bar is not None:
            bar.close()
        if pgn_fh:
            pgn_fh.close()
        if res.interrupted or res.error:
            kill_all()              # running games are abandoned (not written)
        else:
            for t in threads:       # after an SPRT decision running games stop at their next move
                t.join()
            for pair in pairs:
                for e in pair:
                    e.quit()
        for t in threads:
            t.join(timeout=5)
        kill_all()                  # also an engine a worker was restarting meanwhile
    return res


# ---------------------------------------------------------------------------- CLI
def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="cardinal match",
        description="Play engine-vs-engine games (UCI or XBoard) with Cardinal's rules as referee. "
                    "Default: Cardinal against itself.",
        epilog='Example: cardinal match --variant grand --games 4 --engine "cmd=cardinal proto=uci" '
               '--engine "cmd=/usr/games/sjaakii proto=xboard name=Sjaak"')
    ap.add_argument("--engine", action="append", default=[], metavar="SPEC",
                    help='"cmd=CMD proto=uci|xboard name=NAME dir=DIR arg=ARG option.NAME=VALUE"; give it twice '
                         "(once: that engine against Cardinal; none: Cardinal against itself)")
    ap.add_argument("--variant", default="chess", choices=VARIANTS)
    ap.add_argument("--games", type=int, default=2, help="number of games (default 2)")
    ap.add_argument("--tc", default=None, help="time control base+inc in seconds (default 5+0.05)")
    ap.add_argument("--movetime", type=int, default=None, metavar="MS", help="fixed time per move in ms")
    ap.add_argument("--depth", type=int, default=None, help="fixed search depth in plies (alone or with --tc)")
    ap.add_argument("--concurrency", type=int, default=1, help="games played at once (default 1)")
    ap.add_argument("--openings", default=None, metavar="FILE",
                    help="EPD/FEN file of start positions (default: built-in balanced openings); "
                         "each is played with both colours")
    ap.add_argument("--pgn", default=None, metavar="FILE",
                    help="append each game to FILE as it ends (default: print all PGN to stdout at the end)")
    ap.add_argument("--sprt", nargs="+", default=None, metavar="K=V",
                    help="stop early by SPRT: elo0=0 elo1=5 alpha=0.05 beta=0.05 (fishtest GSPRT, logistic Elo)")
    ap.add_argument("--timemargin", type=float, default=20.0, metavar="MS",
                    help="grace time in ms before a late move loses on time (default 20; Cute Chess uses 0)")
    ap.add_argument("--move-timeout", type=float, default=60.0, metavar="S",
                    help="seconds an engine may think without a clock (--depth only) before it forfeits")
    ap.add_argument("--handshake-timeout", type=float, default=HANDSHAKE_TIMEOUT, metavar="S",
                    help="seconds to wait for uciok / feature done=1 (default 35)")
    ap.add_argument("--ready-timeout", type=float, default=READY_TIMEOUT, metavar="S",
                    help="seconds to wait for the first readyok/pong after start (default 60)")
    ap.add_argument("--event", default="Cardinal match", help="PGN Event tag")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    ap.add_argument("--debug", action="store_true", help="log all engine traffic to stderr")
    return ap


def config_from_args(argv: list[str]) -> MatchConfig:
    """Parse the command line into a :class:`MatchConfig`; raises ``ValueError`` for bad input."""
    ap = _parser()
    a = ap.parse_args(argv)
    specs = [EngineSpec.parse(s) for s in a.engine]
    if len(specs) > 2:
        raise ValueError("give --engine at most twice")
    while len(specs) < 2:
        specs.insert(0, EngineSpec.cardinal())
    if a.games < 1:
        raise ValueError("--games must be at least 1")
    if a.concurrency < 1:
        raise ValueError("--concurrency must be at least 1")
    if a.movetime is not None and a.tc is not None:
        raise ValueError("give either --tc or --movetime, not both")
    if a.movetime is not None and a.movetime <= 0:
        raise ValueError("--movetime must be positive")
    if a.depth is not None and a.depth < 1:
        raise ValueError("--depth must be at least 1")
    if a.movetime is not None:
        tc = TimeControl(base=None, inc=0.0, movetime=a.movetime, depth=a.depth)
    elif a.tc is None and a.depth is not None:
        tc = TimeControl(base=None, inc=0.0, depth=a.depth)
    else:
        b, i = parse_tc(a.tc or "5+0.05")
        tc = TimeControl(base=b, inc=i, depth=a.depth)
    openings = load_openings(a.openings, a.variant) if a.openings else None
    sprt = stats.SPRT.parse(a.sprt) if a.sprt else None
    return MatchConfig(engines=specs, variant=a.variant, games=a.games, tc=tc,
                       concurrency=a.concurrency, openings=openings, pgn_path=a.pgn, sprt=sprt,
                       timemargin_ms=a.timemargin, move_timeout=a.move_timeout,
                       handshake_timeout=a.handshake_timeout, ready_timeout=a.ready_timeout,
                       event=a.event, progress=not a.no_progress, debug=a.debug)


def main(argv: list[str] | None = None) -> int:
    """``cardinal match``: 0 on success, 1 if the match stopped on an engine error,
    2 for bad input or an engine that cannot start, 130 on Ctrl-C."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        cfg = config_from_args(argv)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"error: {e.filename}: {e.strerror}", file=sys.stderr)
        return 2
    ncpu = os.cpu_count() or 1
    if 2 * cfg.concurrency > ncpu:
        print(f"warning: {2 * cfg.concurrency} engine processes on {ncpu} CPU cores; engines will "
              "compete for time (lower --concurrency for fair clocks)", file=sys.stderr)
    cfg_stdout = not cfg.pgn_path
    old = None
    if threading.current_thread() is threading.main_thread():
        def _term(signum, frame):
            raise KeyboardInterrupt
        old = signal.signal(signal.SIGTERM, _term)
    try:
        res = run_match(cfg)
    except EngineError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"error: {e.filename or ''}: {e.strerror or e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        kill_all()
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)
    if cfg_stdout:
        tc = cfg.tc.pgn()
        for g in sorted(res.games, key=lambda g: g.round):
            sys.stdout.write(pgn_text(g, cfg.event, tc=tc))
    print(res.score_line())
    print(stats.summary(res.wins, res.draws, res.losses))
    if cfg.sprt is not None:
        lo, hi = cfg.sprt.bounds
        v = cfg.sprt.llr(res.wins, res.draws, res.losses)
        verdict = {"H1": "H1 accepted", "H0": "H0 accepted", None: "no decision"}[res.sprt_status]
        print(f"SPRT: llr {v:.2f} ({lo:.2f}, {hi:.2f}) [{cfg.sprt.elo0:g}, {cfg.sprt.elo1:g}]: {verdict}")
    faults = collections.Counter(g.termination for g in res.games if g.fault is not None)
    if faults:
        print("Forfeits: " + ", ".join(f"{k} {v}" for k, v in sorted(faults.items())))
    sys.stdout.flush()
    if res.interrupted:
        print(f"interrupted after {len(res.games)} games", file=sys.stderr)
        return 130
    if res.error:
        print(f"error: {res.error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
