"""Re-scoring a data file with an outside engine (``cardinal tune teacher``).

Re-scores every recorded position of a data file with an outside UCI engine
(default Fairy-Stockfish, :func:`bench.engines.find_fairy_stockfish`) at a fixed
depth (``go depth D``; ``UCI_Variant`` the variant, ``Threads`` 1, ``Hash``) and
writes the same games to another data file with the score column replaced by the
teacher's score (White's point of view; a ``mate`` score, or none, drops the
position: its game's other positions and ``G`` line stay). The header keeps the
input's keys and adds ``teacher=<engine file name> depth=D``. ``ucinewgame`` before
each game; a position seen before in the run (same first four FEN fields) takes
the score found then. Written like ``datagen``: whole games appended and flushed,
a rerun skips the games ``OUT`` has, Ctrl-C keeps the finished games, the engine
processes (``concurrency``, one thread each) are always killed.
"""
from __future__ import annotations

import os
import re
import sys
import time
from dataclasses import dataclass

import variants as _variants
from bench.outputs import naming
from bench.tune.datafile import HEADER, HEADER_KEYS, _append, header_line, parse_header, scan_data
from bench.tune.selfplay import HASH_MB

DEFAULT_TEACHER_DEPTH = 6
TEACHER_TIMEOUT = 600.0     # s per search: a fixed-depth search that takes longer is an engine fault
TEACHER_KEYS = ("teacher", "depth")


def _teacher_games(path: str, variant: str):
    """``(header, [(gid, [(fen, result_text, ply_text)], g_line)])``: the finished games of a
    data file in file order (positions of unfinished games left out). Raises ``ValueError``
    for a malformed line or another variant's file, ``OSError``."""
    header = None
    pending: dict = {}
    games = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if n == 1 and line.startswith("#"):
                header = parse_header(line)
                if header is None:
                    raise ValueError(f"{path}: not a cardinal tune data file (no '{HEADER}' header line)")
                if header.get("variant") != variant:
                    raise ValueError(f"{path}: data of variant {header.get('variant')}, not {variant}")
                continue
            if not line.endswith("\n"):
                break
            if not line.strip() or line.startswith("#"):
                continue
            f = line.rstrip("\n").split("\t")
            try:
                if f[0] == "P" and len(f) == 6:
                    float(f[2]), float(f[3]), int(f[5])
                    if len(f[1].split()) < 4:
                        raise ValueError
                    pending.setdefault(int(f[4]), []).append((f[1], f[2], f[5]))
                elif f[0] == "G" and len(f) >= 3:
                    gid = int(f[1])
                    games.append((gid, pending.pop(gid, []), line))
                else:
                    raise ValueError
            except (ValueError, IndexError):
                raise ValueError(f"{path}:{n}: malformed line (expected 'P\\tfen\\tresult\\tscore\\tgame\\tply' "
                                 "or 'G\\tgame\\tresult...')") from None
    if header is None:
        raise ValueError(f"{path}: not a cardinal tune data file (no '{HEADER}' header line)")
    return header, games


@dataclass
class TeacherResult:
    """What :func:`teacher` did: games in ``path`` (of the input's finished games), games and
    positions written now, searches run (the rest came from the cache), positions dropped for
    a mate score."""
    path: str
    games_total: int
    games_done: int
    games_new: int
    positions_new: int
    searches: int
    mates_dropped: int
    seconds: float
    interrupted: bool = False


STATIC_EVAL_RE = re.compile(r"^(?:Total|Final) evaluation:?\s+([+-]?\d+(?:\.\d+)?)")


def teacher_score(eng, fen: str, depth: int, white_to_move: bool) -> int | None:
    """White's score (cp) of one fixed-depth search by UCI engine ``eng``
    (a :class:`bench.engines.UciEngine`); None for a mate score or no score.
    ``depth`` 0: the engine's static evaluation instead, from Stockfish's ``eval``
    command (its ``Total evaluation: -1.33 (white side)`` line, in pawns; None if the
    engine prints none, e.g. in check)."""
    eng.position(fen)
    if depth == 0:
        eng.proc.send("eval")
        eng.proc.send("isready")     # its readyok ends the eval output: an engine without eval cannot hang us
        _, lines = eng.proc.expect(lambda s: s.strip() == "readyok", TEACHER_TIMEOUT)
        found = [s for s in lines if s.startswith(("Total evaluation", "Final evaluation"))]
        if not found:
            raise ValueError(f"engine {eng.label!r} printed no static evaluation for 'eval' (Stockfish's "
                             "'Total evaluation: ...' line): --depth 0 needs a Stockfish-family engine")
        m = STATIC_EVAL_RE.match(found[-1])
        return None if m is None else int(round(float(m.group(1)) * 100))
    r = eng.search(f"depth {int(depth)}", TEACHER_TIMEOUT)
    sc = r.last.get("score")
    if sc is None or sc[0] != "cp":
        return None
    return int(sc[1]) if white_to_move else -int(sc[1])


def teacher(variant: str, data: str, out: str, depth: int = DEFAULT_TEACHER_DEPTH, engine: str | None = None,
            concurrency: int = 1, hash_mb: int = HASH_MB, progress: bool = True, log=None,
            warn=None) -> TeacherResult:
    """Re-score every recorded position of data file ``data`` with an outside UCI engine
    (default Fairy-Stockfish) at fixed depth ``depth`` and write the games to ``out``
    (the same format, the score column replaced; see the module docstring).

    ``concurrency`` engine processes (one thread each). Raises ``ValueError`` for a bad
    input or output file or no engine, ``bench.engines.EngineError`` if the engine fails;
    Ctrl-C ends the run with ``interrupted=True`` (finished games kept). Every engine
    process is killed before returning.
    """
    import queue
    import threading
    from bench import engines as E
    variant = _variants.get(variant).name
    if not 0 <= int(depth) <= 99:
        raise ValueError(f"depth must be 0..99, not {depth}")
    path = E.find_fairy_stockfish(engine)
    if path is None:
        raise ValueError(f"{engine}: not an executable file" if engine else
                         "Fairy-Stockfish not found (install fairy-stockfish, or give --engine PATH)")
    src_header, games = _teacher_games(data, variant)
    name = os.path.basename(path).replace(" ", "_") or "engine"
    params = {k: v for k, v in src_header.items() if k not in TEACHER_KEYS}
    params.update({"teacher": name, "depth": int(depth)})
    done: set = set()
    fresh = False
    if os.path.exists(out) and os.path.exists(data) and os.path.samefile(out, data):
        raise ValueError(f"{out}: the output must not be the input file")
    if os.path.exists(out) and os.path.getsize(out) > 0:
        header, done, end = scan_data(out)
        if header is None:
            raise ValueError(f"{out}: not a cardinal tune data file (no '{HEADER}' header line)")
        for k in HEADER_KEYS + TEACHER_KEYS:
            if str(header.get(k)) != str(params.get(k)):
                raise ValueError(f"{out}: made with {k}={header.get(k)}, not {params.get(k)} "
                                 "(use another --out, or the same settings to continue it)")
        if end < os.path.getsize(out):   # an unfinished game's lines: dropped
            with open(out, "r+b") as fh:
                fh.truncate(end)
    else:           # created once the engines are up, so a failed start leaves no file behind
        fresh = True
    all_ids = {g[0] for g in games}
    todo = [g for g in games if g[0] not in done]
    res = TeacherResult(out, len(all_ids), len(done & all_ids), 0, 0, 0, 0, 0.0)
    t0 = time.perf_counter()
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=sum(len(g[1]) for g in todo), desc=f"teacher {variant} depth {depth}", unit="pos",
                   file=sys.stderr, dynamic_ncols=True, disable=None, mininterval=0.5)
    cache: dict = {}
    tasks: queue.Queue = queue.Queue()
    for g in todo:
        tasks.put(g)
    results: queue.Queue = queue.Queue()
    stop = threading.Event()
    engs = []
    threads = []

    def work(eng):
        try:
            while not stop.is_set():
                try:
                    gid, plist, gline = tasks.get_nowait()
                except queue.Empty:
                    break
                eng.proc.send("ucinewgame")
                lines, searched, mates = [], 0, 0
                for fen, rtext, ptext in plist:
                    if stop.is_set():
                        return
                    key = " ".join(fen.split()[:4])
                    if key in cache:
                        sc = cache[key]
                    else:
                        sc = teacher_score(eng, fen, depth, fen.split()[1] == "w")
                        cache[key] = sc
                        searched += 1
                    if sc is None:
                        mates += 1
                        continue
                    lines.append(f"P\t{fen}\t{rtext}\t{sc}\t{gid}\t{ptext}\n")
                lines.append(gline)
                results.put((gid, "".join(lines), len(plist), len(lines) - 1, searched, mates))
        except BaseException as e:     # the engine died or hung: reported by the main thread
            if not stop.is_set():
                results.put(e)
        finally:
            results.put(None)

    fh = None
    try:
        if todo:
            for i in range(max(1, min(int(concurrency), len(todo)))):
                spec = E.EngineSpec(cmd=[path], name=f"{name}-{i + 1}",
                                    options={"Threads": "1", "Hash": str(int(hash_mb))})
                eng = E.UciEngine(spec, variant=variant, warn=warn)
                engs.append(eng)
                eng.set_variant(variant)
                eng.sync()
        if fresh:
            os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        fh = open(out, "a", encoding="utf-8")
        if fresh:
            with naming(out):
                fh.write(header_line(params))
                fh.flush()
        for eng in engs:
            th = threading.Thread(target=work, args=(eng,), daemon=True, name=f"teacher-{eng.label}")
            th.start()
            threads.append(th)
        running = len(threads)
        while running:
            try:
                item = results.get(timeout=0.5)
            except queue.Empty:
                continue
            if item is None:
                running -= 1
                continue
            if isinstance(item, BaseException):
                if isinstance(item, (E.Died, E.NoReply)):
                    during = f"during a search at depth {depth}" if depth else "during a static evaluation"
                    raise E.EngineError(f"engine {path}: {'died' if isinstance(item, E.Died) else 'no answer'} "
                                        f"{during}") from None
                raise item
            gid, text, n_in, n_out, searched, mates = item
            _append(fh, text, out)
            res.games_new += 1
            res.games_done += 1
            res.positions_new += n_out
            res.searches += searched
            res.mates_dropped += mates
            if bar is not None:
                bar.set_postfix_str(f"{res.games_done}/{res.games_total} games", refresh=False)
                bar.update(n_in)
            if log is not None:
                log(gid)
    except KeyboardInterrupt:
        res.interrupted = True
    finally:
        stop.set()
        for eng in engs:
            eng.kill()
        for th in threads:
            th.join(timeout=10)
        if fh is not None:
            try:
                fh.close()
            except OSError:     # what a failed write left in the buffer (that write raised)
                pass
            if fresh and res.games_new == 0 and todo and not res.interrupted and os.path.isfile(out):
                os.unlink(out)       # the teacher failed before its first game: no header-only file
        if bar is not None:
            bar.close()
        res.seconds = time.perf_counter() - t0
    return res
