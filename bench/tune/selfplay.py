"""Self-play games for the tuning data (``cardinal tune datagen``).

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
``|score| <= MAX_RECORD_CP`` (no mate scores). Games are written to the data file
(:mod:`bench.tune.datafile`) as they finish.

:func:`play_game` serves the network's data too (:mod:`bench.tune.nnue_data`): it can open a
game with random legal moves (:func:`random_plies_count`, :func:`play_random_plies`; counted in
the plies, never recorded) and skip positions where a capture wins material by static exchange
(:class:`WinningCapture`). Without them it plays the games it always did.
"""
from __future__ import annotations

import os
import random
import sys
import time
from dataclasses import dataclass

import variants as _variants
from bench.outputs import naming
from bench.tune.datafile import (HEADER, HEADER_KEYS, GameRecord, _append, format_game, header_line,
                                 scan_data, weights_digest)

DEFAULT_NODES = 4000        # node limit per move (times the jitter factor)
DEFAULT_GAMES = 1800        # per variant: 35-40 min with 2 worker processes on two cores (47-53 games/min measured)
NODE_JITTER = 0.25          # per-move node limit factor in [0.75, 1.25]
SKIP_PLIES = 8              # positions recorded from this ply of the game on
MAX_RECORD_CP = 2000        # |search score| above this is not recorded (mates, won games)
WIN_CP, WIN_PLIES = 1000, 4           # adjudicated win: last 4 scores beyond +-1000 cp, same side
DRAW_CP, DRAW_PLIES, DRAW_AFTER_PLY = 10, 8, 80   # adjudicated draw: 8 scores within 10 cp after ply 80
MAX_PLIES = 400             # a game still running after this many plies is a draw
MATE_CP = 30000             # a mate score as centipawns (minus the moves to mate)
RANDOM_PLIES_SALT = 0x5DEECE66D   # the random plies' generator: the game seed xor this
HASH_MB = 16


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
    last = {}
    best, _ = searcher.search_sync(pos, Limits(nodes=int(nodes)), last.update)
    return best, last.get("score")


def _is_quiet_move(pos, m: int) -> bool:
    from engine.rules import layout as L
    if L.move_promo(m):
        return False
    if L.move_flags(m) & L.F_EP:
        return False
    return int(pos.board[L.move_to(m)]) == L.EMPTY


def random_plies_count(seed: int, gid: int, random_plies: tuple[int, int]) -> tuple[int, random.Random]:
    """``(n, rng)``: how many random plies game ``gid`` opens with (``lo..hi``, from its seed) and
    the generator that picks them (independent of the node jitter's)."""
    rng = random.Random(game_seed(seed, gid) ^ RANDOM_PLIES_SALT)
    lo, hi = random_plies
    return rng.randint(int(lo), int(hi)), rng


def play_random_plies(pos, n: int, rng: random.Random) -> list[str]:
    """Play up to ``n`` uniformly random legal moves on ``pos`` (fewer if the game ends);
    returns them in UCI."""
    out = []
    for _ in range(n):
        if pos.status() != "ongoing":
            break
        m = rng.choice(sorted(pos.legal_moves()))
        out.append(pos.uci(m))
        pos.push(m)
    return out


class WinningCapture:
    """``pos`` -> True if the side to move has a capture that wins material by static exchange
    evaluation (:func:`engine.rules.see.see_ge` at least 1 cp, with the variant's fixed exchange
    values, the search's)."""

    def __init__(self, variant: str):
        import numpy as np
        from engine.rules.see import SEE_MAX_LIFT
        self.scratch = np.zeros(2 * SEE_MAX_LIFT, dtype=np.int32)

    def __call__(self, pos) -> bool:
        import numpy as np
        from engine.rules import layout as L
        from engine.rules.see import see_ge
        for m in pos.legal_moves():
            if int(pos.board[L.move_to(m)]) != L.EMPTY and see_ge(pos.board, pos.st, pos.vt, m, np.int64(1),
                                                                  self.scratch):
                return True
        return False


def play_game(searcher, variant: str, gid: int, fen: str, label: str, nodes: int, seed: int,
              max_plies: int = MAX_PLIES, random_plies: tuple[int, int] | None = None,
              skip_winning_captures: bool = False) -> GameRecord:
    """Play game ``gid`` from ``fen`` with ``searcher`` on both sides (deterministic: fresh
    hash, node limits from :func:`game_seed`). ``random_plies`` ``(lo, hi)``: first play
    ``lo..hi`` random legal moves (:func:`random_plies_count`; not recorded, but counted in the
    plies). ``skip_winning_captures``: also skip positions where the side to move has a capture
    that wins material (:class:`WinningCapture`)."""
    from engine.rules.position import Position
    rng = random.Random(game_seed(seed, gid))
    pos = Position.from_fen(fen, variant)
    searcher.clear_hash()
    white_scores: list[int] = []
    recs = []
    moves: list[str] = []
    if random_plies is not None:
        n, rrng = random_plies_count(seed, gid, random_plies)
        moves = play_random_plies(pos, n, rrng)
    n_random = len(moves)
    ply = n_random
    winning_capture = WinningCapture(variant) if skip_winning_captures else None
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
                and not pos.is_check() and _is_quiet_move(pos, best)
                and (winning_capture is None or not winning_capture(pos))):
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
        moves.append(pos.uci(best))
        pos.push(best)
        ply += 1
    return GameRecord(gid, result, ply, term, label, recs, moves, n_random)


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
