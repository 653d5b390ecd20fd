"""Texel tuning of the linear evaluation (``cardinal tune``): self-play data, then a fit.

Two steps, and an optional one between them (front end: ``cardinal tune`` in :mod:`engine.cli`):

``datagen``
    Self-play games in-process (no UCI): :class:`search.driver.Searcher` with a node
    limit per move (``nodes`` times a per-move factor in ``[1 - NODE_JITTER, 1 + NODE_JITTER]``
    drawn from the game's seed, so games from the same start position differ), one
    searcher per worker process. Game ``g`` starts from opening ``g // 2`` of the
    variant's suite (``bench/suites/openings-<variant>.epd``, order shuffled with
    ``seed``); odd games start from its colour-mirrored position (ranks reversed,
    colours, side to move, castling rights and e.p. square swapped), so each opening
    is played with both colours (past twice the suite's size the openings come round again;
    the node jitter makes those games new ones). Games end by the rules (checkmate, stalemate,
    repetition, 50 moves, insufficient material) or by adjudication on the search
    scores: a win once the last ``WIN_PLIES`` scores are all beyond ``WIN_CP`` for the
    same side, a draw once the last ``DRAW_PLIES`` scores are within ``DRAW_CP`` after
    ply ``DRAW_AFTER_PLY``, a draw at ``MAX_PLIES`` plies.

    Recorded positions (the quiet filter): from ply ``SKIP_PLIES`` of the game on,
    not in check, the searched best move neither a capture nor a promotion, and
    ``|score| <= MAX_RECORD_CP`` (no mate scores).

``teacher`` (optional)
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

``fit``
    Texel tuning: features of every position by :func:`search.eval.eval_features`,
    a train/validation split by game id, the scaling constant ``K`` fitted first
    (bounded scalar minimisation of the loss with the starting weights), then
    ``w_mg, w_eg`` by L-BFGS-B (scipy) within :func:`search.eval.feature_bounds`,
    only the features of :func:`search.eval.feature_used`.

Data file (text, UTF-8, tab-separated; one header line, then whole games)::

    # cardinal-tune v1 variant=grand nodes=4000 seed=1 openings=default weights=hand
    P <fen> <result> <score> <game> <ply>       one recorded position
    G <game> <result> <plies> <termination> <opening>   end of game <game>

``result`` is the game result from White's point of view (``1``, ``0.5``, ``0``),
``score`` the search score in centipawns from White's point of view, ``ply`` the
plies played since the game's start position, ``termination`` one of
``checkmate stalemate repetition fifty insufficient adj-win adj-draw max-plies``;
the header's ``weights`` names the evaluation weights the games were played with
(:func:`weights_digest`; informative: a resumed file keeps its first header).
A game's ``P`` lines and its ``G`` line are appended in one write and flushed, and
only positions followed by their game's ``G`` line count: an interrupted run loses
at most the games in flight, and running the same command again plays the missing
game ids (every game is a function of ``seed`` and its id, so the data set is
reproducible up to line order).

Model and loss (Texel): for a position with feature vector ``f`` (white minus black
counts) and phase ``p`` in ``0..total``, the white score in centipawns is
``s = (w_mg.f * p + w_eg.f * (total - p)) / total`` and the predicted result
``sigmoid(s) = 1 / (1 + 10 ** (-K * s / 400))``. Loss = mean over positions of
``(target - sigmoid(s)) ** 2`` with ``target = lambda * result + (1 - lambda) *
sigmoid_K_s(search score)``, plus ``l2 * sum(((w - w_start) / 100) ** 2)`` over the
free weights. ``K_s`` is ``K`` (``score_k='same'``) or, for a teacher's scores on another
scale (``score_k='fit'``, the default when the header names a ``teacher``), the
minimiser of mean ``(result - sigmoid_K_s(score)) ** 2`` over the training positions.
"""
from __future__ import annotations

import json
import math
import os
import random
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field

import numpy as np

import variants as _variants
from bench.outputs import naming

from search.eval import (WS_SIZE, FEATURES, eval_features, phase_total, load_weights, write_weights,
                         feature_bounds, feature_used, build_eval)

NF = len(FEATURES)

# ---- datagen defaults and rules
DEFAULT_NODES = 4000        # node limit per move (times the jitter factor)
DEFAULT_GAMES = 1800        # per variant: 35-40 min with 2 worker processes on two cores (47-53 games/min measured)
NODE_JITTER = 0.25          # per-move node limit factor in [0.75, 1.25]
SKIP_PLIES = 8              # positions recorded from this ply of the game on
MAX_RECORD_CP = 2000        # |search score| above this is not recorded (mates, won games)
WIN_CP, WIN_PLIES = 1000, 4           # adjudicated win: last 4 scores beyond +-1000 cp, same side
DRAW_CP, DRAW_PLIES, DRAW_AFTER_PLY = 10, 8, 80   # adjudicated draw: 8 scores within 10 cp after ply 80
MAX_PLIES = 400             # a game still running after this many plies is a draw
MATE_CP = 30000             # a mate score as centipawns (minus the moves to mate)
HASH_MB = 16
HEADER = "# cardinal-tune v1"
HEADER_KEYS = ("variant", "nodes", "seed", "openings")

# ---- fit defaults
DEFAULT_VAL = 0.1
DEFAULT_MAX_ITER = 400
DEFAULT_L2 = 1e-5
# Half game result, half search score: on 160 knightrelay games (3 seeded 40-game validation splits)
# the results-only validation loss fell by 0.0034 with 0.5 but rose by 0.003 with 1.0 (over-fit).
DEFAULT_LAMBDA = 0.5
SCALE = 100.0               # L-BFGS-B works on weights in pawns (better conditioned than cp)
LN10 = math.log(10.0)


def default_data_path(variant: str) -> str:
    """``tune-data/<variant>.txt`` (relative to the working directory; not in git)."""
    return os.path.join("tune-data", f"{variant}.txt")


def default_weights_path(variant: str) -> str:
    """``variants/weights/<variant>.json`` in this checkout (where ``write_weights`` writes by default)."""
    return os.path.join(os.path.dirname(os.path.abspath(_variants.__file__)), "weights", f"{variant}.json")


# =============================================================== datagen

def mirror_fen(fen: str) -> str:
    """The colour-mirrored position: ranks reversed, piece colours, side to move,
    castling rights and the e.p. square swapped (an equivalent game for the other side)."""
    f = fen.split()
    ranks = f[0].split("/")
    h = len(ranks)
    board = "/".join(r.swapcase() for r in reversed(ranks))
    side = "b" if f[1] == "w" else "w"
    castle = "-" if f[2] == "-" else "".join(sorted(f[2].swapcase(), key="KQkq".index))
    ep = f[3]
    if ep != "-":
        ep = ep[0] + str(h + 1 - int(ep[1:]))
    return " ".join([board, side, castle, ep] + f[4:6])


def game_seed(seed: int, gid: int) -> int:
    """The random seed of game ``gid`` (node jitter), a function of ``seed`` and ``gid`` only."""
    return (int(seed) * 1_000_003 + int(gid) * 7919 + 12345) & 0xFFFFFFFF


def opening_fens(variant: str, path: str | None = None) -> list[tuple[str, str]]:
    """``[(fen, label)]``: the variant's opening suite (``path`` None) or an EPD/FEN file.
    Raises ``ValueError``/``OSError`` for a bad file."""
    from bench.openings import default_openings, load_openings
    from engine.rules.position import Position
    ops = load_openings(path, variant) if path else default_openings(variant)
    out = []
    for op in ops:
        pos = Position.from_fen(op.fen, variant)
        for m in op.moves:
            pos.push_uci(m)
        out.append((pos.fen(), op.label or pos.fen()))
    return out


def game_start(openings: list, seed: int, gid: int) -> tuple[str, str]:
    """``(fen, label)`` of game ``gid``: opening ``gid // 2`` of the seeded order, mirrored for odd ids."""
    order = list(range(len(openings)))
    random.Random(seed).shuffle(order)
    fen, label = openings[order[(gid // 2) % len(order)]]
    if gid % 2:
        return mirror_fen(fen), label + " (mirrored)"
    return fen, label


@dataclass
class GameRecord:
    """One finished self-play game: ``result`` White's score (1, 0.5, 0), ``positions``
    ``[(fen, white_score_cp, ply)]`` that passed the quiet filter."""
    gid: int
    result: float
    plies: int
    termination: str
    opening: str
    positions: list = field(default_factory=list)


def _score_cp(score) -> int | None:
    if not score:
        return None
    kind, v = score
    if kind == "mate":
        return (MATE_CP - abs(int(v))) * (1 if v > 0 else -1)
    return int(v)


def search_move(searcher, pos, nodes: int):
    """One synchronous search: ``(best_move, score)``, score ``('cp', v)``/``('mate', n)`` for
    the side to move (None if no iteration finished)."""
    from search.driver import Limits
    last, out = {}, []
    searcher.start(pos, Limits(nodes=int(nodes)), last.update, lambda b, p: out.append(b))
    try:
        searcher.wait()
    except KeyboardInterrupt:
        searcher.stop()
        searcher.wait()
        raise
    return (out[0] if out else None), last.get("score")


def _is_quiet_move(pos, m: int) -> bool:
    from engine.rules import layout as L
    if L.move_promo(m):
        return False
    if L.move_flags(m) & L.F_EP:
        return False
    return int(pos.board[L.move_to(m)]) == L.EMPTY


def play_game(searcher, variant: str, gid: int, fen: str, label: str, nodes: int, seed: int,
              max_plies: int = MAX_PLIES) -> GameRecord:
    """Play game ``gid`` from ``fen`` with ``searcher`` on both sides (deterministic: fresh
    hash, node limits from :func:`game_seed`)."""
    from engine.rules.position import Position
    rng = random.Random(game_seed(seed, gid))
    pos = Position.from_fen(fen, variant)
    searcher.clear_hash()
    white_scores: list[int] = []
    recs = []
    ply = 0
    result, term = 0.5, "max-plies"
    while True:
        st = pos.status()
        if st != "ongoing":
            r = pos.result()
            result, term = (1.0 if r == "1-0" else 0.0 if r == "0-1" else 0.5), st
            break
        if ply >= max_plies:
            break
        n = max(1, int(round(nodes * rng.uniform(1.0 - NODE_JITTER, 1.0 + NODE_JITTER))))
        best, score = search_move(searcher, pos, n)
        if best is None:      # cannot happen in an ongoing game; end it as a draw
            term = "no-move"
            break
        cp = _score_cp(score)
        if cp is None:
            cp = 0
        wcp = cp if pos.turn == 0 else -cp
        if (ply >= SKIP_PLIES and score is not None and score[0] == "cp" and abs(cp) <= MAX_RECORD_CP
                and not pos.is_check() and _is_quiet_move(pos, best)):
            recs.append((pos.fen(), wcp, ply))
        white_scores.append(wcp)
        last = white_scores[-WIN_PLIES:]
        if len(last) == WIN_PLIES and (all(x >= WIN_CP for x in last) or all(x <= -WIN_CP for x in last)):
            result, term = (1.0 if last[-1] > 0 else 0.0), "adj-win"
            break
        last = white_scores[-DRAW_PLIES:]
        if ply + 1 >= DRAW_AFTER_PLY and len(last) == DRAW_PLIES and all(abs(x) < DRAW_CP for x in last):
            result, term = 0.5, "adj-draw"
            break
        pos.push(best)
        ply += 1
    return GameRecord(gid, result, ply, term, label, recs)


def _fmt_result(r: float) -> str:
    return "1" if r == 1.0 else "0" if r == 0.0 else "0.5"


def format_game(g: GameRecord) -> str:
    """The data-file lines of a game (its ``P`` lines, then its ``G`` line)."""
    res = _fmt_result(g.result)
    lines = [f"P\t{fen}\t{res}\t{sc}\t{g.gid}\t{ply}\n" for fen, sc, ply in g.positions]
    label = g.opening.replace("\t", " ").replace("\n", " ")
    lines.append(f"G\t{g.gid}\t{res}\t{g.plies}\t{g.termination}\t{label}\n")
    return "".join(lines)


def header_line(params: dict) -> str:
    return HEADER + "".join(f" {k}={v}" for k, v in params.items()) + "\n"


def weights_digest(variant: str) -> str:
    """What the games are played with: the first 12 hex digits of the SHA-256 of the
    variant's weights file, or ``hand`` (no file: the hand-set weights)."""
    import hashlib
    from search.eval import weights_path
    p = weights_path(variant)
    if not os.path.exists(p):
        return "hand"
    with open(p, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()[:12]


def parse_header(line: str) -> dict | None:
    if not line.startswith(HEADER):
        return None
    out = {}
    for item in line[len(HEADER):].split():
        k, _, v = item.partition("=")
        out[k] = v
    return out


def scan_data(path: str) -> tuple[dict | None, set, int]:
    """``(header, finished game ids, end offset)`` of a data file; the offset (bytes) is the end
    of the last finished game's ``G`` line (anything after it is an unfinished game)."""
    done: set = set()
    header = None
    end = 0
    off = 0
    with open(path, "rb") as fh:
        for i, raw in enumerate(fh):
            off += len(raw)
            if not raw.endswith(b"\n"):
                break
            if i == 0:
                header = parse_header(raw.decode("utf-8"))
                end = off
                continue
            if raw.startswith(b"G\t"):
                done.add(int(raw.split(b"\t")[1]))
                end = off
    return header, done, end


# worker process state
_W = {}


def _worker_init():
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # the parent handles Ctrl-C and ends the pool


def _searcher():
    s = _W.get("searcher")
    if s is None:
        from search.driver import Searcher
        s = _W["searcher"] = Searcher(HASH_MB)
    return s


def _worker_play(task) -> GameRecord:
    variant, gid, fen, label, nodes, seed = task
    return play_game(_searcher(), variant, gid, fen, label, nodes, seed)


@dataclass
class DatagenResult:
    """What :func:`datagen` did: games in the file, games played now, positions written now."""
    path: str
    games_done: int
    games_new: int
    positions_new: int
    seconds: float
    interrupted: bool = False


def _append(fh, text: str, path: str) -> None:
    """Append one game's lines, on disk when this returns; ``OSError`` names ``path``."""
    with naming(path):
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())


def datagen(variant: str, games: int, out: str, nodes: int = DEFAULT_NODES, concurrency: int = 1,
            seed: int = 1, openings: str | None = None, progress: bool = True,
            log=None) -> DatagenResult:
    """Play games ``0..games-1`` that ``out`` lacks and append them (see the module docstring).

    Raises ``ValueError`` if ``out`` was made with another variant, node count, seed or
    opening file; ``OSError`` for unreadable files. Ctrl-C ends the run with
    ``interrupted=True`` (finished games kept; in-flight games lost).
    """
    variant = _variants.get(variant).name
    params = {"variant": variant, "nodes": int(nodes), "seed": int(seed),
              "openings": os.path.abspath(openings) if openings else "default"}
    ops = opening_fens(variant, openings)
    done: set = set()
    if os.path.exists(out) and os.path.getsize(out) > 0:
        header, done, end = scan_data(out)
        if header is None:
            raise ValueError(f"{out}: not a cardinal tune data file (no '{HEADER}' header line)")
        for k in HEADER_KEYS:
            if str(header.get(k)) != str(params[k]):
                raise ValueError(f"{out}: made with {k}={header.get(k)}, not {params[k]} "
                                 "(use another --out, or the same settings to continue it)")
        if end < os.path.getsize(out):   # an unfinished game's lines: dropped
            with open(out, "r+b") as fh:
                fh.truncate(end)
    else:
        d = os.path.dirname(os.path.abspath(out))
        os.makedirs(d, exist_ok=True)
        with naming(out), open(out, "w", encoding="utf-8") as fh:
            fh.write(header_line({**params, "weights": weights_digest(variant)}))
    todo = [g for g in range(games) if g not in done]
    tasks = [(variant, g, *game_start(ops, seed, g), int(nodes), int(seed)) for g in todo]
    res = DatagenResult(out, len(done & set(range(games))), 0, 0, 0.0)
    t0 = time.perf_counter()
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=games, initial=res.games_done, desc=f"datagen {variant}", unit="game",
                   file=sys.stderr, dynamic_ncols=True, disable=None)
    pool = None
    fh = open(out, "a", encoding="utf-8")
    try:
        if not tasks:
            pass
        elif concurrency <= 1:
            it = (_worker_play(t) for t in tasks)
        else:
            import multiprocessing as mp
            pool = mp.get_context("spawn").Pool(min(concurrency, len(tasks)), initializer=_worker_init)
            it = pool.imap_unordered(_worker_play, tasks, chunksize=1)
        for g in (it if tasks else ()):
            _append(fh, format_game(g), out)
            res.games_new += 1
            res.games_done += 1
            res.positions_new += len(g.positions)
            if bar is not None:
                bar.set_postfix_str(f"{res.positions_new} positions", refresh=False)
                bar.update(1)
            if log is not None:
                log(g)
        if pool is not None:
            pool.close()
            pool.join()
            pool = None
    except KeyboardInterrupt:
        res.interrupted = True
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
        try:
            fh.close()
        except OSError:         # what a failed write left in the buffer (that write raised)
            pass
        if bar is not None:
            bar.close()
        res.seconds = time.perf_counter() - t0
    return res


# =============================================================== teacher

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


# =============================================================== pgn

PGN_SCORE_RE = re.compile(r"^\s*([+-]?\d+(?:\.\d+)?)/\d+")   # Cute Chess / match-runner comment: "+0.35/12 0.52s"
PGN_RESULTS = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}


@dataclass
class PgnDataResult:
    """What :func:`pgn_data` did: games read, games written (finished, of the variant, legal),
    games skipped and why (``{reason: count}``), positions written."""
    path: str
    games_read: int
    games_written: int
    positions: int
    skipped: dict = field(default_factory=dict)


def pgn_comment_cp(comment: str) -> int | None:
    """Centipawns of a move comment's score (the mover's view, as Cute Chess and
    ``cardinal match`` write it: ``+0.35/12 0.52s``); None for a mate score (``+M5``),
    a book move or no score."""
    m = PGN_SCORE_RE.match(comment or "")
    return None if m is None else int(round(float(m.group(1)) * 100))


def pgn_data(variant: str, pgns, out: str) -> PgnDataResult:
    """Write the finished games of PGN files ``pgns`` (a list of paths; games of other
    variants are skipped) as a data file ``out`` (overwritten; written to a temporary file
    and renamed, so a failure leaves no half file), game ids ``0..`` in file order.

    Positions are chosen by the ``datagen`` quiet filter applied to the moves played:
    from ply ``SKIP_PLIES`` on, not in check, the move played neither a capture nor a
    promotion, and the mover's comment score within ``MAX_RECORD_CP`` (a position
    whose move has no score, a mate score or a book comment is left out). The score
    column is that comment's score from White's view: in a match between different
    engines it mixes their scales, so fit such data on results (``--lambda 1``) or
    re-score it with ``cardinal tune teacher`` first. Games without a result (``*``),
    with an illegal move or a bad FEN are skipped and counted in ``skipped``. The
    header records ``source=pgn``.

    Raises ``OSError`` for an unreadable input or unwritable output (naming ``out``),
    ``ValueError`` if no game or no position was usable, or ``out`` is not a regular
    file or is one of the inputs (a previous ``out`` is then left as it was).
    """
    from bench.pgn_reader import read_games, replay
    variant = _variants.get(variant).name
    if not out:
        raise ValueError("--out is empty")
    target = os.path.realpath(out)     # a symbolic link: its file is replaced, not the link
    if os.path.exists(target) and not os.path.isfile(target):
        raise ValueError(f"{out}: not a regular file (the data file is written to a new file, then renamed)")
    for path in pgns:
        if not path:
            raise ValueError("a --pgn file name is empty")
        if os.path.exists(path) and os.path.realpath(path) == target:
            raise ValueError(f"{out}: the output must not be one of the --pgn files")
    res = PgnDataResult(out, 0, 0, 0)
    chunks = []

    def skip(why):
        res.skipped[why] = res.skipped.get(why, 0) + 1

    for path in pgns:
        with open(path, encoding="utf-8", errors="replace") as fh:
            games = read_games(fh.read().lstrip("\ufeff"))     # a byte-order mark is not a tag
        for g in games:
            res.games_read += 1
            try:
                gv = _variants.get(g.variant).name
            except KeyError:
                gv = g.variant
            if gv != variant:
                skip("other variant")
                continue
            if g.result not in PGN_RESULTS or not g.complete:
                skip("no result")
                continue
            try:
                start, moves = replay(g)
            except ValueError:
                skip("illegal move or bad FEN")
                continue
            gid = res.games_written
            r = PGN_RESULTS[g.result]
            rt = _fmt_result(r)
            pos = start.copy()
            lines = []
            for ply, (mv, com) in enumerate(zip(moves, g.comments)):
                cp = pgn_comment_cp(com)
                if (ply >= SKIP_PLIES and cp is not None and abs(cp) <= MAX_RECORD_CP
                        and not pos.is_check() and _is_quiet_move(pos, mv)):
                    wcp = cp if pos.turn == 0 else -cp
                    lines.append(f"P\t{pos.fen()}\t{rt}\t{wcp}\t{gid}\t{ply}\n")
                pos._push(mv)
            term = (g.tags.get("Termination") or "pgn").replace("\t", " ").replace(" ", "-") or "pgn"
            label = f"{g.tags.get('White', '?')} - {g.tags.get('Black', '?')}".replace("\t", " ").replace("\n", " ")
            lines.append(f"G\t{gid}\t{rt}\t{len(moves)}\t{term}\t{label}\n")
            chunks.append("".join(lines))
            res.games_written += 1
            res.positions += len(lines) - 1
    if not res.games_written:
        why = ", ".join(f"{n} {k}" for k, n in sorted(res.skipped.items())) or "no games"
        raise ValueError(f"no finished {variant} game in {', '.join(map(str, pgns))} ({why})")
    if not res.positions:
        raise ValueError(f"no position of the {res.games_written} finished {variant} games passed the filter "
                         "(the moves need score comments such as '+0.35/12 0.52s')")
    d = os.path.dirname(target)
    tmp = os.path.join(d, f".{os.path.basename(target)}.{os.getpid()}.tmp")
    try:
        os.makedirs(d, exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(header_line({"variant": variant, "source": "pgn", "games": res.games_written}))
            fh.writelines(chunks)
        os.replace(tmp, target)
    except OSError as e:
        raise OSError(e.errno, e.strerror, out) from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return res


# =============================================================== fit

@dataclass
class DataSet:
    """Positions of a data file: ``fens`` list[str] (n), ``result`` float64[n] (White's game
    result), ``score`` float64[n] (search score, cp, White's view), ``game`` int64[n], ``ply`` int32[n]."""
    fens: list
    result: np.ndarray
    score: np.ndarray
    game: np.ndarray
    ply: np.ndarray
    games: int = 0
    duplicates: int = 0
    header: dict | None = None
    headers: list = field(default_factory=list)   # one header (dict or None) per file read, in order
    file_positions: list = field(default_factory=list)   # positions kept from each file, in order


def read_data(path, variant: str | None = None, dedup: bool = True) -> DataSet:
    """Read a data file (positions of finished games only); with ``dedup`` keep the first of
    positions with the same FEN (move counters ignored). ``path``: one file, or a list of files
    read as one data set (each file's game numbers shifted past the previous files', so the
    train/validation split keeps whole games; duplicates dropped across files; ``header`` is
    the first file's, ``headers`` every file's in order). Raises ``ValueError`` for a malformed
    line, another variant's file, or files of which some were re-scored by a teacher and some
    not (their score scales differ), ``OSError``."""
    if not isinstance(path, (str, os.PathLike)):
        paths = list(path)
        if not paths:
            raise ValueError("no data file given")
        parts = []
        seen: set = set()
        base = 0
        for p in paths:
            d = _read_one(p, variant, dedup, seen)
            if parts and bool((d.header or {}).get("teacher")) != bool((parts[0].header or {}).get("teacher")):
                raise ValueError(f"{p}: scores from {'a teacher' if (d.header or {}).get('teacher') else 'self-play'}, "
                                 f"unlike {paths[0]}: the files cannot be fitted together")
            parts.append(DataSet(d.fens, d.result, d.score, d.game + base, d.ply, d.games, d.duplicates, d.header))
            if len(d.game):
                base = int(parts[-1].game.max()) + 1
        return DataSet([f for d in parts for f in d.fens], np.concatenate([d.result for d in parts]),
                       np.concatenate([d.score for d in parts]), np.concatenate([d.game for d in parts]),
                       np.concatenate([d.ply for d in parts]), sum(d.games for d in parts),
                       sum(d.duplicates for d in parts), parts[0].header, [d.header for d in parts],
                       [len(d.fens) for d in parts])
    return _read_one(path, variant, dedup, set())


def _read_one(path: str, variant: str | None, dedup: bool, seen: set) -> DataSet:
    """One data file for :func:`read_data`; FENs in ``seen`` count as duplicates (and new ones are added)."""
    fens, res, sc, gm, pl = [], [], [], [], []
    pending: dict = {}
    dups = 0
    games = 0
    header = None
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if n == 1 and line.startswith("#"):
                header = parse_header(line)
                if header and variant and header.get("variant") != variant:
                    raise ValueError(f"{path}: data of variant {header.get('variant')}, not {variant}")
                continue
            if not line.endswith("\n"):
                break     # a line cut by a crash: its game is unfinished
            if not line.strip() or line.startswith("#"):
                continue
            f = line.rstrip("\n").split("\t")
            try:
                if f[0] == "P" and len(f) == 6:
                    pending.setdefault(int(f[4]), []).append((f[1], float(f[2]), float(f[3]), int(f[5])))
                elif f[0] == "G" and len(f) >= 3:
                    gid = int(f[1])
                    games += 1
                    for fen, r, s, p in pending.pop(gid, []):
                        if not 0.0 <= r <= 1.0 or len(fen.split()) < 4:
                            raise ValueError
                        if dedup:
                            key = " ".join(fen.split()[:4])
                            if key in seen:
                                dups += 1
                                continue
                            seen.add(key)
                        fens.append(fen)
                        res.append(r)
                        sc.append(s)
                        gm.append(gid)
                        pl.append(p)
                else:
                    raise ValueError
            except (ValueError, IndexError):
                raise ValueError(f"{path}:{n}: malformed line (expected 'P\\tfen\\tresult\\tscore\\tgame\\tply' "
                                 "or 'G\\tgame\\tresult...')") from None
    return DataSet(fens, np.array(res, dtype=np.float64), np.array(sc, dtype=np.float64),
                   np.array(gm, dtype=np.int64), np.array(pl, dtype=np.int32), games, dups, header, [header],
                   [len(fens)])


def extract_features(variant: str, fens, progress: bool = False):
    """Features of every position: ``(F, phase)``, ``F`` a scipy CSR matrix float64[n, NF]
    (white-relative counts from :func:`search.eval.eval_features`), ``phase`` float64[n] in
    ``0..phase_total(variant)``. Raises ``ValueError`` for a bad FEN (naming it)."""
    import scipy.sparse as sp
    from engine.rules.position import Position
    ev = build_eval(variant)
    ws = np.zeros(WS_SIZE, dtype=np.int32)
    f = np.zeros(NF, dtype=np.int32)
    n = len(fens)
    phase = np.zeros(n, dtype=np.float64)
    indptr = np.zeros(n + 1, dtype=np.int64)
    idx_parts, val_parts = [], []
    pos = Position(variant)
    it = fens
    if progress:
        from tqdm import tqdm
        it = tqdm(fens, desc="features", unit="pos", file=sys.stderr, dynamic_ncols=True, disable=None,
                  mininterval=0.5)
    for i, fen in enumerate(it):
        try:
            pos.set_fen(fen)
        except ValueError as e:
            raise ValueError(f"bad FEN {fen!r}: {e}") from None
        phase[i] = eval_features(pos.board, pos.st, pos.vt, ev, ws, f)
        nz = np.flatnonzero(f)
        idx_parts.append(nz.astype(np.int32))
        val_parts.append(f[nz].astype(np.float64))
        indptr[i + 1] = indptr[i] + len(nz)
    ind = np.concatenate(idx_parts) if idx_parts else np.zeros(0, np.int32)
    val = np.concatenate(val_parts) if val_parts else np.zeros(0)
    F = sp.csr_matrix((val, ind, indptr), shape=(n, NF))
    return F, phase


def split_by_game(game: np.ndarray, val: float, seed: int) -> np.ndarray:
    """Boolean mask (validation) over positions: a ``val`` fraction of the game ids, chosen
    with ``seed`` (all positions of a game on the same side)."""
    ids = np.unique(game)
    if val <= 0 or len(ids) < 2:
        return np.zeros(len(game), dtype=bool)
    rng = np.random.default_rng(seed)
    k = min(len(ids) - 1, max(1, int(round(val * len(ids)))))
    vids = rng.choice(ids, size=k, replace=False)
    return np.isin(game, vids)


def sigmoid(s, K: float):
    """Texel's win probability of a White score ``s`` (cp): ``1 / (1 + 10 ** (-K * s / 400))``."""
    return 0.5 * (1.0 + np.tanh(0.5 * K * LN10 / 400.0 * np.asarray(s, dtype=np.float64)))


class Model:
    """The tapered linear evaluation on a fixed set of positions.

    ``F`` CSR float64[n, NF] features, ``phase`` float64[n] in ``0..total``;
    :meth:`scores` of weights ``w_mg, w_eg`` float[NF] are White scores in cp (float64[n]).
    """

    def __init__(self, F, phase, total: int):
        self.F = F
        self.p = np.asarray(phase, dtype=np.float64) / float(total)
        self.q = 1.0 - self.p

    def scores(self, w_mg, w_eg) -> np.ndarray:
        M = self.F @ np.stack([np.asarray(w_mg, np.float64), np.asarray(w_eg, np.float64)], axis=1)
        return M[:, 0] * self.p + M[:, 1] * self.q

    def loss(self, w_mg, w_eg, K: float, target) -> float:
        """Mean squared error of ``target`` float64[n] vs :func:`sigmoid` (no penalty)."""
        if self.F.shape[0] == 0:
            return float("nan")
        d = sigmoid(self.scores(w_mg, w_eg), K) - target
        return float(np.mean(d * d))

    def loss_grad(self, w_mg, w_eg, K: float, target):
        """``(loss, d loss / d w_mg, d loss / d w_eg)``, gradients float64[NF] (analytic)."""
        n = self.F.shape[0]
        s = self.scores(w_mg, w_eg)
        sg = sigmoid(s, K)
        d = sg - target
        c = K * LN10 / 400.0
        g = (2.0 / n) * d * sg * (1.0 - sg) * c          # d loss / d s_i
        G = self.F.T @ np.stack([g * self.p, g * self.q], axis=1)
        return float(np.mean(d * d)), np.asarray(G[:, 0]).ravel(), np.asarray(G[:, 1]).ravel()


def fit_k(model: Model, w_mg, w_eg, result, lo: float = 0.05, hi: float = 10.0) -> float:
    """Texel's ``K``: the minimiser of the loss of ``result`` with fixed weights (bounded scalar search)."""
    return fit_scale(model.scores(w_mg, w_eg), result, lo, hi)


def fit_scale(s, result, lo: float = 0.05, hi: float = 10.0) -> float:
    """The ``K`` in ``[lo, hi]`` minimising mean ``(result - sigmoid_K(s)) ** 2`` for White
    scores ``s`` (cp; bounded scalar search). :func:`fit_k` on the model's scores; ``K_s``
    on the data file's score column."""
    from scipy.optimize import minimize_scalar
    s = np.asarray(s, dtype=np.float64)
    result = np.asarray(result, dtype=np.float64)

    def f(K):
        d = sigmoid(s, K) - result
        return float(np.mean(d * d))
    r = minimize_scalar(f, bounds=(lo, hi), method="bounded", options={"xatol": 1e-6})
    return float(r.x)


def _bounds_pair(bounds, nf):
    """``feature_bounds`` as (mg bounds, eg bounds), each a list of nf (lo, hi)."""
    b = list(bounds)
    if len(b) == nf:
        return b, b
    if len(b) == 2 * nf:
        return b[:nf], b[nf:]
    raise ValueError(f"feature_bounds has {len(b)} entries, expected {nf} or {2 * nf}")


@dataclass
class FitResult:
    """Fitted weights ``w_mg, w_eg`` float64[NF] (not rounded) and the optimiser's report."""
    w_mg: np.ndarray
    w_eg: np.ndarray
    iterations: int
    evaluations: int
    converged: bool
    message: str


def fit_weights(model: Model, target, K: float, w0_mg, w0_eg, free_mg, free_eg, bounds_mg=None,
                bounds_eg=None, l2: float = DEFAULT_L2, max_iter: int = DEFAULT_MAX_ITER) -> FitResult:
    """L-BFGS-B on the Texel loss plus ``l2 * sum(((w - w0) / 100) ** 2)`` over the free weights.

    ``free_mg, free_eg`` bool[NF] choose the weights to fit (the rest keep ``w0``);
    ``bounds_*`` lists of NF ``(lo, hi)`` in cp (None: free). Deterministic.
    """
    from scipy.optimize import minimize
    w0_mg = np.asarray(w0_mg, dtype=np.float64)
    w0_eg = np.asarray(w0_eg, dtype=np.float64)
    nf = len(w0_mg)
    im = np.flatnonzero(free_mg)
    ie = np.flatnonzero(free_eg)
    nm = len(im)
    bm = bounds_mg or [(None, None)] * nf
    be = bounds_eg or [(None, None)] * nf

    def sb(lohi):
        lo, hi = lohi
        return (None if lo is None else lo / SCALE, None if hi is None else hi / SCALE)
    bnds = [sb(bm[i]) for i in im] + [sb(be[i]) for i in ie]
    x0 = np.concatenate([w0_mg[im], w0_eg[ie]]) / SCALE
    for j, (lo, hi) in enumerate(bnds):   # a start outside the bounds is moved onto them
        if lo is not None and x0[j] < lo:
            x0[j] = lo
        if hi is not None and x0[j] > hi:
            x0[j] = hi
    xs0 = np.concatenate([w0_mg[im], w0_eg[ie]]) / SCALE

    def unpack(x):
        wm = w0_mg.copy()
        we = w0_eg.copy()
        wm[im] = x[:nm] * SCALE
        we[ie] = x[nm:] * SCALE
        return wm, we

    def fg(x):
        wm, we = unpack(x)
        loss, gm, ge = model.loss_grad(wm, we, K, target)
        dx = x - xs0
        loss += l2 * float(dx @ dx)
        grad = np.concatenate([gm[im], ge[ie]]) * SCALE + 2.0 * l2 * dx
        return loss, grad
    if len(x0) == 0:
        return FitResult(w0_mg.copy(), w0_eg.copy(), 0, 0, True, "nothing to fit")
    r = minimize(fg, x0, jac=True, method="L-BFGS-B", bounds=bnds,
                 options={"maxiter": int(max_iter), "ftol": 1e-13, "gtol": 1e-9, "maxcor": 20})
    wm, we = unpack(r.x)
    return FitResult(wm, we, int(r.nit), int(r.nfev), bool(r.success), str(r.message))


def git_commit() -> str | None:
    """The checkout's HEAD commit (None outside git)."""
    try:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        r = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10)
        return r.stdout.strip() or None if r.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


@dataclass
class TuneReport:
    """What :func:`fit` did (printed by :func:`print_report`)."""
    variant: str
    data: str
    n_positions: int
    n_games: int
    duplicates: int
    n_train: int
    n_val: int
    g_train: int
    g_val: int
    K: float
    loss_before: tuple     # (train, val)
    loss_after: tuple      # (train, val), rounded weights
    fit: FitResult | None
    old_mg: np.ndarray
    old_eg: np.ndarray
    new_mg: np.ndarray     # int32[NF], rounded
    new_eg: np.ndarray
    free: int
    seconds_features: float
    seconds_fit: float
    path: str | None = None
    meta: dict = field(default_factory=dict)
    score_k: str = "same"  # 'same': the score column scaled with K; 'fit': with its own K_s
    K_s: float | None = None


def default_score_k(header: dict | None) -> str:
    """``fit`` for a data file whose scores are not Cardinal's own: its header records a teacher
    (:func:`teacher`) or a PGN source (:func:`pgn_data`); else ``same``."""
    return "fit" if header and (header.get("teacher") or header.get("source") == "pgn") else "same"


def _path_list(x) -> list:
    """One path (``str`` or path-like) as a one-item list; any other iterable of paths as a list."""
    return [x] if isinstance(x, (str, os.PathLike)) else list(x)


def fit(variant: str, data, out: str | None = None, seed: int = 1, val: float = DEFAULT_VAL,
        max_iter: int = DEFAULT_MAX_ITER, lam: float = DEFAULT_LAMBDA, l2: float = DEFAULT_L2,
        write: bool = True, progress: bool = False, score_k: str | None = None,
        free: list[str] | None = None, val_data=None) -> TuneReport:
    """Texel-tune ``variant``'s weights on data file ``data`` (or a list of files, read as one
    data set: :func:`read_data`); write them (``out``, default
    ``variants/weights/<variant>.json``) unless ``write`` is False. ``score_k``: ``same`` (the
    score column's sigmoid uses K), ``fit`` (its own ``K_s``, fitted to the training results),
    None: :func:`default_score_k` of the file's header. ``free``: fit only the features whose
    names start with one of these prefixes (``["hanging_", "tempo"]``); the others keep their
    weights (None: all the variant's features). ``val_data``: data file(s) whose positions are
    the validation set, instead of a ``val`` fraction of ``data``'s games; positions of ``data``
    with a FEN found there are dropped from training. Give games no fit has seen: a split of
    ``data`` also holds out games that the starting weights may have been fitted on, which
    flatters them. Raises ``ValueError`` for a malformed or empty
    data file, a bad ``score_k`` or ``free`` prefixes that match no feature of the variant,
    ``OSError``."""
    variant = _variants.get(variant).name
    used = np.asarray(feature_used(variant), dtype=bool)
    if free is not None:
        prefixes = tuple(free)
        used &= np.array([name.startswith(prefixes) for name in FEATURES], dtype=bool)
        if not used.any():
            raise ValueError(f"--free {' '.join(prefixes)}: no feature of {variant} starts with that")
    paths = _path_list(data)
    vpaths = [] if val_data is None else _path_list(val_data)
    label = " + ".join(str(p) for p in paths)
    # validation files first: read as one data set, the duplicates dropped are training positions
    ds = read_data(vpaths + paths, variant)
    n_vpos = sum(ds.file_positions[:len(vpaths)])
    if vpaths and n_vpos == 0:
        raise ValueError(f"{' + '.join(str(p) for p in vpaths)}: no positions of finished games")
    if len(ds.fens) == n_vpos:
        raise ValueError(f"{label}: no positions of finished games")
    if vpaths:
        label += f" (validation: {' + '.join(str(p) for p in vpaths)})"
    t0 = time.perf_counter()
    F, phase = extract_features(variant, ds.fens, progress=progress)
    t_feat = time.perf_counter() - t0
    total = phase_total(variant)
    vmask = (np.arange(len(ds.fens)) < n_vpos) if vpaths else split_by_game(ds.game, val, seed)
    tmask = ~vmask
    mt = Model(F[tmask], phase[tmask], total)
    mv = Model(F[vmask], phase[vmask], total)
    w0_mg, w0_eg = (np.asarray(w, dtype=np.int64) for w in load_weights(variant))
    t1 = time.perf_counter()
    K = fit_k(mt, w0_mg, w0_eg, ds.result[tmask])
    if score_k is None:
        score_k = default_score_k(ds.header)
    if score_k not in ("same", "fit"):
        raise ValueError(f"score_k must be 'same' or 'fit', not {score_k!r}")
    K_s = fit_scale(ds.score[tmask], ds.result[tmask]) if score_k == "fit" else K

    def target(mask):
        y = ds.result[mask]
        if lam >= 1.0:
            return y
        return lam * y + (1.0 - lam) * sigmoid(ds.score[mask], K_s)
    yt, yv = target(tmask), target(vmask)
    before = (mt.loss(w0_mg, w0_eg, K, yt), mv.loss(w0_mg, w0_eg, K, yv))
    bm, be = _bounds_pair(feature_bounds(variant), NF)
    fr = fit_weights(mt, yt, K, w0_mg, w0_eg, used, used, bm, be, l2=l2, max_iter=max_iter)
    new_mg = np.rint(fr.w_mg).astype(np.int32)
    new_eg = np.rint(fr.w_eg).astype(np.int32)
    after = (mt.loss(new_mg, new_eg, K, yt), mv.loss(new_mg, new_eg, K, yv))
    t_fit = time.perf_counter() - t1
    rep = TuneReport(variant, label, len(ds.fens), ds.games, ds.duplicates, int(tmask.sum()), int(vmask.sum()),
                     len(np.unique(ds.game[tmask])), len(np.unique(ds.game[vmask])), K, before, after, fr,
                     w0_mg, w0_eg, new_mg, new_eg, 2 * int(used.sum()), t_feat, t_fit,
                     score_k=score_k, K_s=K_s)

    def r6(x):
        return None if x != x else round(float(x), 6)
    rep.meta = {"method": "Texel tuning, L-BFGS-B", "data": "+".join(os.path.basename(p) for p in paths),
                "data_headers": [h or {} for h in ds.headers[len(vpaths):]], "positions": rep.n_positions,
                "games": ds.games,
                "train_positions": rep.n_train, "val_positions": rep.n_val, "K": round(K, 6),
                "score_k": score_k, "K_s": round(K_s, 6),
                "loss_before": {"train": r6(before[0]), "val": r6(before[1])},
                "loss_after": {"train": r6(after[0]), "val": r6(after[1])},
                "free": list(free) if free is not None else "all",
                "lambda": lam, "l2": l2, "val_fraction": None if vpaths else val, "seed": seed,
                "max_iter": max_iter,
                "iterations": fr.iterations, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "commit": git_commit()}
    if vpaths:
        rep.meta["val_data"] = "+".join(os.path.basename(p) for p in vpaths)
        rep.meta["val_data_headers"] = [h or {} for h in ds.headers[:len(vpaths)]]
    # the history of the fits goes on: the starting weights' entries, then this fit's
    note, history = previous_history(variant)
    rep.meta["history_note"] = note
    rep.meta["history"] = history + [{
        "fit": len(history) + 1, "date": rep.meta["date"][:10], "commit": rep.meta["commit"],
        "data": rep.meta["data"] + (f" (validation {rep.meta['val_data']})" if vpaths else ""),
        "free": rep.meta["free"], "lambda": lam, "l2": l2,
        "val_loss": [r6(before[1]), r6(after[1])]}]
    if write:
        write_weights(variant, new_mg, new_eg, rep.meta, path=out)
        rep.path = out or default_weights_path(variant)
    return rep


HISTORY_NOTE = ("history: one entry per fit, oldest first (the fields above describe the last one); "
                "val_loss is [before, after] the fit on its validation set")


def previous_history(variant: str) -> tuple[str, list]:
    """``(history_note, history)`` of the shipped weights file of ``variant`` (the weights a fit
    starts from): its ``meta.history`` list, empty when it has none or cannot be read."""
    from search.eval import weights_path
    try:
        with open(weights_path(variant), encoding="utf-8") as fh:
            meta = json.load(fh).get("meta") or {}
        hist = meta.get("history")
        return str(meta.get("history_note") or HISTORY_NOTE), list(hist) if isinstance(hist, list) else []
    except (OSError, ValueError, AttributeError):
        return HISTORY_NOTE, []


def moved_most(rep: TuneReport, k: int = 15) -> list[tuple[str, str, int, int]]:
    """The ``k`` weights that changed most: ``[(feature, 'mg'|'eg', old, new)]``."""
    rows = []
    for i, name in enumerate(FEATURES):
        rows.append((abs(int(rep.new_mg[i]) - int(rep.old_mg[i])), name, "mg", int(rep.old_mg[i]), int(rep.new_mg[i])))
        rows.append((abs(int(rep.new_eg[i]) - int(rep.old_eg[i])), name, "eg", int(rep.old_eg[i]), int(rep.new_eg[i])))
    rows.sort(key=lambda r: (-r[0], r[1], r[2]))
    return [r[1:] for r in rows[:k] if r[0] > 0]


def print_report(rep: TuneReport, file=None) -> None:
    file = file or sys.stdout

    def p(*a):
        print(*a, file=file)

    def fl(x):
        return "   n/a  " if x != x else f"{x:.6f}"
    p(f"data: {rep.data}: {rep.n_positions} positions from {rep.n_games} games "
      f"({rep.duplicates} duplicate FENs dropped)")
    p(f"train: {rep.n_train} positions ({rep.g_train} games), validation: {rep.n_val} positions ({rep.g_val} games)")
    p(f"features: {len(FEATURES)} x (mg, eg), {rep.free} weights free; "
      f"feature extraction {rep.seconds_features:.1f} s")
    p(f"K = {rep.K:.4f}")
    if rep.K_s is not None:
        how = "fitted to the score column" if rep.score_k == "fit" else "the same as K"
        p(f"K_s = {rep.K_s:.4f} (score scale, {how})")
    p(f"loss     train      validation")
    p(f"before   {fl(rep.loss_before[0])}   {fl(rep.loss_before[1])}")
    p(f"after    {fl(rep.loss_after[0])}   {fl(rep.loss_after[1])}   (rounded weights)")
    if rep.fit is not None:
        p(f"L-BFGS-B: {rep.fit.iterations} iterations, {rep.fit.evaluations} evaluations, "
          f"{rep.seconds_fit:.1f} s ({rep.fit.message})")
    rows = moved_most(rep)
    p(f"{len(rows)} weights that moved most:")
    w = max([len(r[0]) for r in rows] + [8])
    for name, ph, old, new in rows:
        p(f"  {name:<{w}s} {ph}  {old:6d} -> {new:6d}  ({new - old:+d})")
    if rep.path:
        p(f"wrote {rep.path}")
