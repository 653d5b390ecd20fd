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
:mod:`bench.referee` (one game: clocks and adjudication), :mod:`bench.adjudication`
(draw/resign by score), :mod:`bench.pairs` (the pair schedule, player and tally),
:mod:`bench.journal` (the results journal), :mod:`bench.cluster` (Dask),
:mod:`bench.openings`, :mod:`bench.pgn`, :mod:`bench.timecontrol` and
:mod:`bench.stats`; this module is the runner (:func:`run_match` with a
:class:`MatchConfig`) and the command line (:func:`main`).

Work and record go by game pair (one opening, both colours): the local pool
(``--concurrency`` threads) or a Dask cluster (``--scheduler``) plays pairs, and
this process alone appends each finished pair to the PGN and to the journal
(fsynced), so nothing recorded is lost and nothing is recorded twice;
``--resume JOURNAL`` continues a stopped match.

Engines: ``--engine`` takes Cute Chess-style ``key=value`` pairs in one
argument (split like a shell line, so ``cmd='python -m engine'`` and
``'option.Move Overhead=20'`` work): ``cmd`` (required; itself split like a
shell line), ``proto`` (``uci`` or ``xboard``, default ``uci``), ``name``,
``dir`` (working directory), ``arg`` (extra argument, repeatable), the
engine's own limits ``tc=``, ``st=``, ``depth=``, ``nodes=`` (with no match
limit at all, an engine with its own ``depth=``/``nodes=`` gets no clock) and
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
import hashlib
import os
import queue
import shlex
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field

from tqdm import tqdm

import variants as _variants
from bench import journal, stats
from bench.adjudication import Adjudication
from bench.args import check_scheduler
from bench.engines import (HANDSHAKE_TIMEOUT, READY_TIMEOUT, EngineError, EngineSpec, kill_all,
                           sigterm_as_interrupt)
from bench.journal import now_iso
from bench.openings import default_openings, default_openings_help, load_openings
from bench.outputs import check_output_path, error_line, naming
from bench.pairs import DEFAULT_SEED, EngineSlot, GameSettings, Tally, play_pair, schedule
from bench.pgn import pgn_text
from bench.referee import GameState
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
    tc_default: bool = False              # tc is the default clock (no --tc, --movetime, --depth or --nodes)
    concurrency: int = 1
    openings: list | None = None          # list of Opening; None = the variant's default (bench.openings.default_openings)
    pgn_path: str | None = None           # append each game as it finishes
    sprt: stats.SPRT | None = None
    timemargin_ms: float = 20.0
    move_timeout: float = 60.0
    handshake_timeout: float = HANDSHAKE_TIMEOUT
    ready_timeout: float = READY_TIMEOUT
    event: str = "Cardinal match"
    progress: bool = True                 # a progress bar on stderr when it is a terminal
    debug: bool = False
    seed: int | None = None               # opening shuffle; None: in order (or the resumed journal's seed)
    adjudication: Adjudication | None = None
    journal_path: str | None = None       # results journal (JSON lines), appended
    resume_path: str | None = None        # continue the match of this journal
    scheduler: str | None = None          # 'tcp://HOST:PORT' or 'local:N' (Dask); None: local pool
    connect_timeout: float = 30.0         # s to reach the scheduler
    argv: list | None = None              # the command line, for the journal header


@dataclass
class MatchResult:
    games: list                      # GameRecord, in finishing order
    wins: int = 0                    # from the first engine's point of view
    draws: int = 0
    losses: int = 0
    names: tuple = ("", "")
    interrupted: bool = False
    sprt_status: str | None = None
    sprt_decided: tuple | None = None  # (pairs, LLR) when the SPRT decided; pairs in flight finish after it
    error: str | None = None
    tally: Tally | None = None       # W-D-L and pentanomial counts, resumed pairs included
    resumed_pairs: int = 0

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


def tuned_specs(specs: list, tc) -> list:
    """The engine specs as the runner starts them: its own Cardinal engines get a Move
    Overhead that suits a short ``--movetime`` (a fifth of it, at most the default)
    unless the user set one. ``tc``: one TimeControl, or one per engine."""
    out = []
    tcs = list(tc) if isinstance(tc, (list, tuple)) else [tc] * len(specs)
    for s, tc in zip(specs, tcs):
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


def _engine_tcs(cfg: MatchConfig) -> list:
    """Each engine's time control: the match's with the engine's own limits over it. An engine
    with its own ``depth=`` or ``nodes=`` and no ``tc=``/``st=`` plays without a clock when the
    match set no limit at all (as ``--nodes`` without ``--tc``): a UCI engine told ``go nodes``
    does not manage its time, so under the default clock it would lose on time."""
    tcs = []
    for s in cfg.engines:
        tc = cfg.tc.with_limits(s.limits)
        if cfg.tc_default and ("depth" in s.limits or "nodes" in s.limits) \
                and "tc" not in s.limits and "st" not in s.limits:
            tc.base, tc.inc = None, 0.0
        tcs.append(tc)
    for s, tc in zip(cfg.engines, tcs):
        if tc.nodes and s.proto == "xboard":
            raise ValueError(f"engine {s.label!r}: a node limit needs a UCI engine (XBoard has no node limit)")
    return tcs


def _digest(openings: list) -> str:
    h = hashlib.sha1()
    for op in openings:
        h.update(f"{op.fen}|{' '.join(op.moves)}\n".encode())
    return h.hexdigest()[:16]


def _spec_labels(specs: list) -> list[str]:
    names = [s.name or s.label for s in specs]
    if names[0] == names[1]:
        names[1] += " (2)"
    return names


def _opening_json(op) -> dict:
    return {"label": op.label, "fen": op.fen, "moves": list(op.moves)}


def _pair_line(res, task, tally: Tally, names: list, sprt, attempts: list) -> dict:
    games = []
    for g in res.games:
        games.append({"round": g.round, "white": g.white, "black": g.black, "result": g.result,
                      "termination": g.termination, "reason": g.reason, "plies": g.plies,
                      "score": g.score_for(0)})
    scores = [g["score"] for g in games]
    line = {"type": "pair", "pair": res.pair, "opening": _opening_json(task.opening),
            "engines": list(names), "games": games,
            "points": sum(scores), "pentanomial_cell": stats.pair_cell(*scores) if len(scores) == 2 else None,
            "worker": res.worker, "pid": res.pid, "attempt": max(1, len(attempts)),
            "started": now_iso(res.started) if res.started else None,
            "finished": now_iso(res.finished) if res.finished else None,
            "totals": tally.snapshot(sprt)}
    if len(attempts) > 1:
        line["attempts"] = [{"worker": a.get("worker"), "pid": a.get("pid"),
                             "started": now_iso(a["t"]) if a.get("t") else None} for a in attempts]
    return line


class _LocalPairs:
    """The local pool: one thread per game slot, each with its own two engines, taking
    pairs from a queue (same interface as :class:`bench.cluster.DaskPairs`). With ``feed`` the
    threads wait for pairs that :meth:`add` brings (SPSA) until :meth:`stop_new`; without it
    they end when the queue is empty."""

    def __init__(self, slots: list, settings: GameSettings, tasks: list, feed: bool = False):
        self.feed = feed
        self.slots, self.settings = slots, settings
        self.jobs: queue.Queue = queue.Queue()
        for t in tasks:
            self.jobs.put(t)
        self.out: queue.Queue = queue.Queue()
        self.abandon = threading.Event()
        self.no_new = threading.Event()
        self.threads = [threading.Thread(target=self._work, args=(k, s), daemon=True, name=f"match-{k}")
                        for k, s in enumerate(slots)]

    def start(self) -> None:
        for t in self.threads:
            t.start()

    def _work(self, k: int, slot: EngineSlot) -> None:
        while not self.no_new.is_set() and not self.abandon.is_set():
            try:
                task = self.jobs.get(timeout=0.1) if self.feed else self.jobs.get_nowait()
            except queue.Empty:
                if self.feed:
                    continue
                return
            try:
                res = play_pair(slot, self.settings, task, self.abandon,
                                lambda k, rec: self.out.put(("game", (k, rec))))
            except EngineError as e:
                self.out.put(("error", str(e)))
                return
            except Exception as e:  # a bug or an unexpected engine failure: report, do not hang
                if not self.abandon.is_set():
                    self.out.put(("error", f"pair {task.pair}: {type(e).__name__}: {e}"))
                return
            res.worker = f"local/{k}"
            self.out.put(("pair", res))

    def add(self, tasks: list) -> None:
        for t in tasks:
            self.jobs.put(t)

    def get(self, timeout: float = 0.2):
        try:
            return self.out.get(timeout=timeout)
        except queue.Empty:
            return None

    def attempts(self, pair: int) -> list:
        return []

    def idle(self) -> bool:
        return not any(t.is_alive() for t in self.threads) and self.out.empty()

    def stop_new(self) -> None:
        self.no_new.set()

    def abort(self) -> None:
        self.abandon.set()
        kill_all()

    def drain(self) -> list:
        """Events still queued (after :meth:`close`: the threads have stopped)."""
        out = []
        while True:
            try:
                out.append(self.out.get_nowait())
            except queue.Empty:
                return out

    def close(self) -> None:
        for t in self.threads:
            if t.ident is not None:           # started (a failed journal start closes an unstarted pool)
                t.join(timeout=5)
        for s in self.slots:
            s.close()
        kill_all()                  # also an engine a worker was restarting meanwhile


def run_match(cfg: MatchConfig, warn=_warn) -> MatchResult:
    """Play the match; returns the result (also on Ctrl-C: ``interrupted`` is set).

    Pairs of games (one opening, both colours) are played by the local pool of
    ``cfg.concurrency`` threads or, with ``cfg.scheduler``, by a Dask cluster
    (:mod:`bench.cluster`); each finished pair is appended to the PGN and to the journal
    (both fsynced) by this process alone. ``warn`` gets one-line warnings (an option an
    engine does not know or refuses, a movetime at or below an engine's Move Overhead),
    each once. Raises :class:`EngineError` if an engine cannot be started (no child left
    running), ``ValueError`` for bad configuration (also a journal that does not belong
    to this match, and :class:`bench.journal.InUse` when another run holds the journal or
    the PGN) and ``ConnectionError`` when the scheduler cannot be reached.

    The journal and the PGN are locked (:class:`bench.journal.OutputLock`) for the whole
    run, before the journal is read: two runs appending to one journal (a ``--resume``
    while the first run is alive) would record every pair twice.
    """
    held = journal.lock_outputs([cfg.resume_path or cfg.journal_path, cfg.pgn_path])
    try:
        return _run_match(cfg, warn)
    finally:
        journal.release_all(held)


def _run_match(cfg: MatchConfig, warn) -> MatchResult:
    """:func:`run_match` with its output files locked."""
    if cfg.variant not in VARIANTS:
        raise ValueError(f"unknown variant {cfg.variant!r} (choose from {', '.join(VARIANTS)})")
    cfg.variant = _variants.canonical(cfg.variant)
    if len(cfg.engines) != 2:
        raise ValueError("a match needs exactly two engines")
    openings = cfg.openings or default_openings(cfg.variant)
    for op in openings:      # validate the default openings too (and load the rules' numba code)
        g = GameState(cfg.variant, op.fen)
        for u in op.moves:
            g.push(g.pos.parse_uci(u))
        g.pos.status()
    tcs = _engine_tcs(cfg)
    specs = tuned_specs(cfg.engines, tcs)
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

    # ---- the schedule, the journal (resume) and the PGN, all checked before any engine runs
    journal_path = cfg.resume_path or cfg.journal_path
    header, done_lines = None, {}
    if cfg.resume_path:
        header, done_lines, _ = journal.read(cfg.resume_path)
        if cfg.seed is not None and cfg.seed != header.get("seed"):
            raise ValueError(f"--resume {cfg.resume_path}: the match was played with --seed "
                             f"{header.get('seed')}, not {cfg.seed}")
        seed = header.get("seed", DEFAULT_SEED)
    else:
        seed = DEFAULT_SEED if cfg.seed is None else cfg.seed
        if journal_path and os.path.exists(journal_path) and os.path.getsize(journal_path) > 0:
            raise ValueError(f"journal {journal_path} already exists: continue that match with "
                             f"--resume {journal_path}, or give another --journal")
    tasks = schedule(openings, cfg.games, seed)
    identity = {"variant": cfg.variant, "games": cfg.games, "seed": seed,
                "engines": _spec_labels(cfg.engines), "openings_digest": _digest(openings)}
    if header is not None:
        for k, v in identity.items():
            if header.get(k) != v:
                raise ValueError(f"--resume {cfg.resume_path}: the journal is for another match "
                                 f"({k} {header.get(k)!r} there, {v!r} now)")
    tally = Tally()
    for k in sorted(done_lines):
        tally.add_scores([g["score"] for g in done_lines[k]["games"]])
    remaining = [t for t in tasks if t.pair not in done_lines]
    by_id = {t.pair: t for t in tasks}
    keep = None if header is None else {g["round"] for line in done_lines.values() for g in line["games"]}
    # opened before any engine runs, so a bad path fails at once
    pgn_fh, pgn_offset, jr = journal.open_outputs(cfg.pgn_path, journal_path, keep,
                                                  header.get("pgn_offset", 0) if header else 0)

    settings = GameSettings(match_id=uuid.uuid4().hex[:12], variant=cfg.variant, specs=specs,
                            names=_spec_labels(specs), tcs=tcs, timemargin_ms=cfg.timemargin_ms,
                            move_timeout=cfg.move_timeout, handshake_timeout=cfg.handshake_timeout,
                            ready_timeout=cfg.ready_timeout, adjudication=cfg.adjudication)
    ex = None
    try:
        if cfg.scheduler:
            from bench.cluster import DaskPairs
            ex = DaskPairs(cfg.scheduler, settings, remaining, concurrency=max(1, cfg.concurrency),
                           connect_timeout=cfg.connect_timeout)
            names = settings.names
            ex.start()
        else:
            conc = min(max(1, cfg.concurrency), len(remaining))      # no engines when nothing is left
            slots = []
            try:
                for _ in range(conc):
                    slot = EngineSlot(settings, warn_once, dbg)
                    slots.append(slot)
                    slot.start()
                    for spec, e, tc in zip(specs, slot.engines, tcs):
                        msg = _overhead_warning(spec, e, tc)
                        if msg:
                            warn_once(msg)
            except BaseException:
                for s in slots:
                    for e in s.engines:
                        if e is not None:
                            e.proc.kill()
                kill_all()
                raise
            names = _labels(specs, slots[0].engines) if slots else settings.names
            settings.names = names
            for s in slots:
                for i, e in enumerate(s.engines):
                    e.label = e.proc.label = names[i]
            ex = _LocalPairs(slots, settings, remaining)
    except BaseException:
        if ex is not None and cfg.scheduler:
            ex.close()
        if pgn_fh:
            pgn_fh.close()
        if jr:
            jr.close()
        raise

    tc_text = [t.pgn() for t in tcs]
    try:
        if jr and header is None:
            jr.write({"type": "match", "format": journal.FORMAT, "version": journal.VERSION,
                      "match_id": settings.match_id, **identity, "names": list(names),
                      "pairs": len(tasks), "commands": [shlex.join(s.cmd) for s in specs],
                      "protocols": [s.proto for s in specs], "tc": tc_text,
                      "openings": len(openings),
                      "sprt": dataclasses.asdict(cfg.sprt) if cfg.sprt else None,
                      "adjudication": dataclasses.asdict(cfg.adjudication) if cfg.adjudication else None,
                      "pgn": os.path.abspath(cfg.pgn_path) if cfg.pgn_path else None, "pgn_offset": pgn_offset,
                      "scheduler": cfg.scheduler or f"local pool x{cfg.concurrency}",
                      "argv": cfg.argv})
        elif jr:
            jr.write({"type": "resume", "match_id": settings.match_id, "done_pairs": len(done_lines),
                      "remaining_pairs": len(remaining), "totals": tally.snapshot(cfg.sprt)})
    except OSError:                 # the journal cannot be written (a full disk): no game is played
        ex.abort()
        ex.close()
        if pgn_fh:
            pgn_fh.close()
        jr.close()
        raise

    res = MatchResult(games=[], names=tuple(names), tally=tally, resumed_pairs=len(done_lines))
    res.wins, res.draws, res.losses = tally.wins, tally.draws, tally.losses
    bar = None
    if cfg.progress:
        # disable=None: a bar only when stderr is a terminal (no '\r'-joined lines in logs)
        bar = tqdm(total=cfg.games, initial=tally.games, desc=f"{names[0]} vs {names[1]}", unit="game",
                   file=sys.stderr, dynamic_ncols=True, disable=None)
    recorded = set(done_lines)
    partial: dict = {}            # pair id -> games finished in a pair not finished (local pool)

    def record(pr) -> bool:
        """Append a finished pair to the PGN and the journal; False if it is not one, or if
        it could not be written (then ``res.error`` names the file: the match stops)."""
        for w in pr.warnings:
            warn_once(w)
        if not pr.complete or pr.pair in recorded:      # abandoned, or a pair already recorded
            return False
        if res.error:         # a file failed: the pairs still coming are played again by --resume
            return False
        partial.pop(pr.pair, None)
        pr.games.sort(key=lambda g: g.round)
        try:
            if pgn_fh:
                with naming(cfg.pgn_path):
                    journal.fsync_write(pgn_fh, "".join(pgn_text(g, cfg.event, tc=tc_text) for g in pr.games))
        except OSError as e:        # a full disk: not in the journal, so --resume plays the pair again
            res.error = error_line(e)
            return False
        recorded.add(pr.pair)
        tally.add(pr.games)
        res.games.extend(pr.games)
        res.wins, res.draws, res.losses = tally.wins, tally.draws, tally.losses
        if jr:
            try:
                jr.write(_pair_line(pr, by_id[pr.pair], tally, names, cfg.sprt, ex.attempts(pr.pair)))
            except OSError as e:    # in the PGN, not in the journal: --resume drops it there, plays it again
                res.error = error_line(e)
                return False
        if bar is not None:
            bar.set_postfix_str(_progress_text(tally, cfg.sprt), refresh=False)
            bar.update(len(pr.games))
        return True

    stopping = False
    status = "finished"
    try:
        if not cfg.scheduler:
            ex.start()
        while True:
            ev = ex.get(0.2)
            if ev is None:
                if ex.idle():
                    break
                continue
            kind, item = ev
            if kind == "error":
                res.error = item
                status = "error"
                break
            if kind == "warning":
                warn_once(item)
                continue
            if kind == "rerun":
                if jr:
                    jr.write({"type": "rerun", **item})
                continue
            if kind == "game":
                partial.setdefault(item[0], []).append(item[1])
                continue
            pr = item
            ok = record(pr)
            if res.error:               # the PGN or the journal could not be written
                status = "error"
                break
            if not ok:
                continue
            if cfg.sprt is not None and not stopping:
                v = cfg.sprt.llr_pentanomial(tally.penta)
                st = cfg.sprt.decide(v)
                if st != "continue":
                    res.sprt_status = st
                    res.sprt_decided = (tally.pairs, v)
                    stopping = True
                    ex.stop_new()          # running pairs finish and are recorded
    except KeyboardInterrupt:
        res.interrupted = True
        status = "interrupted"
    finally:
        if res.interrupted or res.error:
            ex.abort()              # running games are abandoned (not written)
        ex.close()
        if not cfg.scheduler:       # what the pool finished meanwhile is kept
            for kind, item in ex.drain():
                if kind == "pair":
                    record(item)
                elif kind == "game":
                    partial.setdefault(item[0], []).append(item[1])
        if partial:
            # finished games of unfinished pairs: kept in the PGN, not in the journal (the
            # pair is the unit of record: --resume plays the whole pair again and drops these)
            left = sorted((g for gs in partial.values() for g in gs), key=lambda g: g.round)
            res.games.extend(left)
            written = True
            if pgn_fh:
                try:
                    journal.fsync_write(pgn_fh, "".join(pgn_text(g, cfg.event, tc=tc_text) for g in left))
                except OSError:
                    written = False
            if jr and written:
                try:
                    jr.write({"type": "unfinished", "pairs": sorted(partial),
                              "rounds": [g.round for g in left]})
                except (OSError, ValueError):
                    pass
        if bar is not None:
            bar.close()
        if pgn_fh:
            try:
                pgn_fh.close()
            except OSError:         # what a failed write left in the buffer (already reported)
                pass
        if jr:
            if res.sprt_status:
                status = f"sprt {res.sprt_status}"
            if res.error and status == "finished":
                status = "error"
            try:
                end = {"type": "end", "status": status, "error": res.error, "totals": tally.snapshot(cfg.sprt)}
                if res.sprt_decided:
                    end["sprt_decided"] = {"pairs": res.sprt_decided[0], "llr": round(res.sprt_decided[1], 4)}
                jr.write(end)
            except (OSError, ValueError):
                pass
            jr.close()
    return res


def _progress_text(t: Tally, sprt) -> str:
    e, m = stats.pair_stats(t.penta)[:2] if t.pairs else stats.elo_with_error(t.wins, t.draws, t.losses)
    text = f"W-D-L {t.wins}-{t.draws}-{t.losses}  Elo {stats._fmt(e)} +/- {stats._fmt(m)}"
    if sprt is not None:
        lo, hi = sprt.bounds
        text += f"  LLR {sprt.llr_pentanomial(t.penta):.2f} ({lo:.2f}, {hi:.2f})"
    return text


def summary_table(res: MatchResult, sprt=None) -> str:
    """The final table: games and W-D-L, pentanomial counts, Elo +/- 95 % by both models,
    normalized Elo, LOS and (with an SPRT) both LLRs."""
    t = res.tally or Tally()
    rows = [("games", f"{t.games} ({t.pairs} complete pairs"
                      + (f", {res.resumed_pairs} pairs from the journal" if res.resumed_pairs else "") + ")"),
            ("W-D-L", f"{t.wins}-{t.draws}-{t.losses}"),
            ("pentanomial", " ".join(f"{k} {v}" for k, v in zip(stats.PENTANOMIAL_LABELS, t.penta)))]
    if t.pairs:
        e, m, nelo, los5 = stats.pair_stats(t.penta)
        text = f"{stats._fmt(e)} +/- {stats._fmt(m)}, nElo {stats._fmt(nelo)}, LOS "
        if los5 is None:
            text += (f"n/a (needs at least {stats.MIN_PAIRS} pairs and {stats.MIN_CELLS} "
                     "non-empty pentanomial cells)")
        else:
            text += f"{100 * los5:.1f} %"
        rows.append(("Elo (pairs)", text))
    if t.games:
        e, m = stats.elo_with_error(t.wins, t.draws, t.losses)
        rows.append(("Elo (games)", f"{stats._fmt(e)} +/- {stats._fmt(m)}, LOS "
                                    f"{100 * stats.los(t.wins, t.losses):.1f} %"))
    if sprt is not None:
        rows.append(("LLR", f"{sprt.llr_pentanomial(t.penta):.2f} pentanomial, "
                            f"{sprt.llr(t.wins, t.draws, t.losses):.2f} trinomial"))
    w = max(len(k) for k, _ in rows)
    return "\n".join(f"  {k:<{w}}  {v}" for k, v in rows)


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
    ap.add_argument("--tc", default=None, help="time control base+inc in seconds (default 5+0.05; "
                    "none for an engine with its own depth= or nodes=)")
    ap.add_argument("--movetime", type=int, default=None, metavar="MS", help="fixed time per move in ms")
    ap.add_argument("--depth", type=int, default=None, help="fixed search depth in plies (alone or with --tc)")
    ap.add_argument("--nodes", type=int, default=None, metavar="N",
                    help="node limit per move (UCI 'go nodes N'; alone or with --tc; UCI engines only)")
    ap.add_argument("--concurrency", type=int, default=1,
                    help="games played at once (default 1); with --scheduler local:N, per worker")
    ap.add_argument("--seed", type=int, default=None,
                    help="shuffle the openings with this random seed (default: in their order); "
                         "the same seed gives the same games order")
    ap.add_argument("--draw", nargs="+", default=None, metavar="K=V",
                    help="draw adjudication: movenumber=N movecount=N score=N (cutechess-cli -draw; off by default)")
    ap.add_argument("--resign", nargs="+", default=None, metavar="K=V",
                    help="resign adjudication: movecount=N score=N [twosided=true] (cutechess-cli -resign)")
    ap.add_argument("--journal", default=None, metavar="FILE",
                    help="results journal, one JSON line per game pair (default: the --pgn name with .jsonl)")
    ap.add_argument("--resume", default=None, metavar="JOURNAL",
                    help="continue the match of JOURNAL (same command line): finished pairs are skipped")
    ap.add_argument("--scheduler", default=None, metavar="ADDR",
                    help="play on a Dask cluster: tcp://HOST:PORT (dask scheduler) or local:N "
                         '(N local worker processes); needs pip install "cardinal-engine[cluster]"')
    ap.add_argument("--connect-timeout", type=float, default=30.0, metavar="S",
                    help="seconds to wait for the --scheduler (default 30)")
    ap.add_argument("--openings", default=None, metavar="FILE",
                    help="EPD/FEN file of start positions, each played with both colours; "
                         + default_openings_help())
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
    if a.nodes is not None and a.nodes < 1:
        raise ValueError("--nodes must be at least 1")
    if a.movetime is not None:
        tc = TimeControl(base=None, inc=0.0, movetime=a.movetime, depth=a.depth, nodes=a.nodes)
    elif a.tc is None and (a.depth is not None or a.nodes is not None):
        tc = TimeControl(base=None, inc=0.0, depth=a.depth, nodes=a.nodes)
    else:
        b, i = parse_tc(a.tc or "5+0.05")
        tc = TimeControl(base=b, inc=i, depth=a.depth, nodes=a.nodes)
    if a.nodes is not None:
        for s in specs:
            if s.proto == "xboard" and "nodes" not in s.limits:
                raise ValueError(f"--nodes: engine {s.label!r} speaks XBoard, which has no node limit")
    if a.scheduler is not None:
        check_scheduler(a.scheduler)
    if a.resume is not None and not os.path.isfile(a.resume):
        raise ValueError(f"--resume {a.resume}: no such journal file")
    if a.resume and a.journal and os.path.abspath(a.resume) != os.path.abspath(a.journal):
        raise ValueError("--resume JOURNAL continues that journal; do not give another --journal")
    journal_path = a.journal
    journal_opt = "--journal"
    if journal_path is None and a.pgn and not a.resume and os.path.exists(a.pgn) and not os.path.isfile(a.pgn):
        # a device or pipe (/dev/stdout): no journal beside it, in /dev
        print(f"note: --pgn {a.pgn} is not a regular file: no results journal (give --journal FILE "
              "to keep one, for --resume)", file=sys.stderr)
    elif journal_path is None and a.pgn and not a.resume:
        journal_path = os.path.splitext(a.pgn)[0] + ".jsonl"
        if os.path.abspath(journal_path) == os.path.abspath(a.pgn):
            journal_path = a.pgn + ".journal.jsonl"
        journal_opt = "journal (from --pgn)"
    for path, opt in ((a.pgn, "--pgn"), (journal_path, journal_opt), (a.resume, "--resume")):
        why = check_output_path(path, opt)
        if why:
            raise ValueError(why)
    openings = load_openings(a.openings, a.variant) if a.openings else None
    try:
        sprt = stats.SPRT.parse(a.sprt) if a.sprt else None
    except ValueError as e:
        raise ValueError(f"--sprt: bad value in {' '.join(a.sprt)!r}: {e}") from None
    adj = Adjudication.parse(a.draw, a.resign)
    tc_default = a.tc is None and a.movetime is None and a.depth is None and a.nodes is None
    return MatchConfig(engines=specs, variant=a.variant, games=a.games, tc=tc, tc_default=tc_default,
                       concurrency=a.concurrency, openings=openings, pgn_path=a.pgn, sprt=sprt,
                       timemargin_ms=a.timemargin, move_timeout=a.move_timeout,
                       handshake_timeout=a.handshake_timeout, ready_timeout=a.ready_timeout,
                       event=a.event, progress=not a.no_progress, debug=a.debug, seed=a.seed,
                       adjudication=adj if adj.active else None, journal_path=journal_path,
                       resume_path=a.resume, scheduler=a.scheduler, argv=list(argv),
                       connect_timeout=a.connect_timeout)


def sprt_line(res: MatchResult, sprt: stats.SPRT) -> str:
    """The closing ``SPRT: llr ...`` line of a match run with ``sprt``: the final pentanomial
    LLR, the bounds, the verdict and the pair count. Pairs still running when the LLR crossed
    a bound are finished and counted (as fishtest and cutechess-cli do), so the final LLR may
    sit back inside the bounds; the line then also gives the pair and LLR of the decision."""
    lo, hi = sprt.bounds
    v = sprt.llr_pentanomial(res.tally.penta)
    verdict = {"H1": "H1 accepted", "H0": "H0 accepted", None: "no decision"}[res.sprt_status]
    if res.sprt_decided and res.sprt_decided[0] != res.tally.pairs:
        k = res.tally.pairs - res.sprt_decided[0]
        verdict += (f" at pair {res.sprt_decided[0]} (llr {res.sprt_decided[1]:.2f}); "
                    f"{k} pair{'s' if k != 1 else ''} in flight finished after it")
    return (f"SPRT: llr {v:.2f} ({lo:.2f}, {hi:.2f}) [{sprt.elo0:g}, {sprt.elo1:g}]: {verdict} "
            f"(pentanomial, {res.tally.pairs} pairs)")


def main(argv: list[str] | None = None) -> int:
    """``cardinal match``: 0 on success, 1 if the match stopped on an engine error or on a
    PGN or journal write that failed (a full disk: one ``error: PATH: REASON`` line),
    2 for bad input or an engine that cannot start, 130 on Ctrl-C."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        cfg = config_from_args(argv)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"error: {error_line(e)}", file=sys.stderr)
        return 2
    ncpu = os.cpu_count() or 1
    if 2 * cfg.concurrency > ncpu and not cfg.scheduler:
        print(f"warning: {2 * cfg.concurrency} engine processes on {ncpu} CPU cores; engines will "
              "compete for time (lower --concurrency for fair clocks)", file=sys.stderr)
    cfg_stdout = not cfg.pgn_path
    try:
        with sigterm_as_interrupt():
            res = run_match(cfg)
    except (EngineError, ValueError, ConnectionError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"error: {error_line(e)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        kill_all()
        print("interrupted", file=sys.stderr)
        return 130
    if cfg_stdout:
        tc = [t.pgn() for t in _engine_tcs(cfg)]
        for g in sorted(res.games, key=lambda g: g.round):
            sys.stdout.write(pgn_text(g, cfg.event, tc=tc))
    print(res.score_line())
    print(stats.summary(res.wins, res.draws, res.losses))
    print(summary_table(res, cfg.sprt))
    if cfg.sprt is not None:
        print(sprt_line(res, cfg.sprt))
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
