"""Generate verified mate-in-N test positions: ``tests/data/mates_<variant>.epd``.

    PYTHONPATH=. python tests/gen_mates.py [--variant grand|knightrelay|chess] [--count 14] [--seed 1]

Source positions: sparse random positions (two kings plus a few random pieces,
pawns never on the first/last rank), biased so that some have white pawns on the
promotion ranks near the black king (grand: a pawn on rank 9 attacks rank 10) and
some have white knights next to white pieces (knightrelay relay). Candidates are
those our engine scores as mate in 1..3; every kept position is then verified
independently, and only the independently verified distance is written:

* grand: Fairy-Stockfish (on ``PATH`` or in ``/usr/games``, ``UCI_Variant grand``,
  ``go depth 2N+6``) must report ``score mate N``;
* knightrelay: exhaustive search with the plain reference generator
  ``tests/kr_reference.py`` (forced mate within N, not within N-1);
* chess: exhaustive search with python-chess.

Line format: ``FEN; dm N; tags`` with tags ``relay`` (knightrelay: the mating
check is given by relayed knight power only) and ``pawn9`` (grand: the mating
move is a check by a pawn on rank 9).
"""
from __future__ import annotations

import argparse
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from engine.rules.position import Position            # noqa: E402
from engine.rules import layout as L                  # noqa: E402
from engine.rules import movegen as G                 # noqa: E402
from bench.engines import EngineSpec, find_fairy_stockfish, start_engine   # noqa: E402

# Hand-built positions, verified like the random ones. grand: White owns Q, C, A and two
# R, B, N, so by the promotion limits a pawn on ranks 8-9 cannot promote; the mate is given
# by a pawn stepping to rank 9 and attacking rank 10 (variants/rules/grand.md).
HANDMADE = {
    "grand": [
        "8bk/9b/7KP1/10/10/10/10/10/PPPPPP4/RNBQCABNR1 w - - 0 1",
        "bk8/b9/1PK7/10/10/10/10/10/4PPPPPP/1RNBQCABNR w - - 0 1",
    ],
}


def random_fen(rng: random.Random, variant: str, pawn9: bool = False) -> str:
    w = h = 10 if variant == "grand" else 8
    board = {}
    def free(f, r):
        return (f, r) not in board
    # black king mostly on the back rank (room for pawn/back-rank mates), white king anywhere
    bk = (rng.randrange(w), h - 1 if rng.random() < 0.7 else rng.randrange(h))
    board[bk] = "k"
    while True:
        wk = (rng.randrange(w), rng.randrange(h))
        if max(abs(wk[0] - bk[0]), abs(wk[1] - bk[1])) > 1:
            break
    board[wk] = "K"
    heavy = "QCARBN" if variant == "grand" else "QRBN"
    white = [rng.choice(heavy) for _ in range(rng.randint(1, 3))]
    black = [rng.choice(heavy + "PP") for _ in range(rng.randint(0, 3))]
    if variant == "knightrelay" and rng.random() < 0.8:
        white.append("N")
    for p in white:
        while True:
            sq = (rng.randrange(w), rng.randrange(h))
            if free(*sq):
                break
        board[sq] = p
        if variant == "knightrelay" and p == "N" and rng.random() < 0.7:
            # a relayed friend a knight's move away
            df, dr = rng.choice([(1, 2), (2, 1), (-1, 2), (-2, 1), (1, -2), (2, -1), (-1, -2), (-2, -1)])
            f2, r2 = sq[0] + df, sq[1] + dr
            if 0 <= f2 < w and 0 < r2 < h - 1 and free(f2, r2):
                board[(f2, r2)] = rng.choice("QRBP")
    if pawn9:
        # grand: a white pawn on rank 8 next to the black king's file, ready to step to rank 9 with check
        sq = (max(0, min(w - 1, bk[0] + rng.choice((-1, 1)))), h - 3)
        if free(*sq):
            board[sq] = "P"
    elif rng.random() < 0.5:
        # white pawns near promotion (grand: ranks 8-9)
        for _ in range(rng.randint(1, 2)):
            sq = (max(0, min(w - 1, bk[0] + rng.randint(-2, 2))), h - 2 - rng.randint(0, 2))
            if free(*sq):
                board[sq] = "P"
    for p in black:
        for _ in range(20):
            sq = (rng.randrange(w), rng.randrange(1, h - 1) if p == "P" else rng.randrange(h))
            if free(*sq):
                board[sq] = p.lower()
                break
    rows = []
    for r in range(h - 1, -1, -1):
        row, e = "", 0
        for f in range(w):
            p = board.get((f, r))
            if p is None:
                e += 1
            else:
                if e:
                    row += str(e)
                    e = 0
                row += p
        if e:
            row += str(e)
        rows.append(row)
    return "/".join(rows) + " w - - 0 1"


def engine_mate(pos, depth):
    from search.driver import Searcher, Limits
    s = Searcher(4)
    out = {}
    s.start(pos, Limits(depth=depth), lambda i: out.update(i), lambda b, p: out.update(best=b))
    s.wait()
    sc = out.get("score")
    if sc and sc[0] == "mate" and sc[1] > 0:
        p, pv = pos.copy(), []
        for m in out.get("pv", []):      # the Searcher's PV is move strings
            pv.append(p.push_uci(m))
        return sc[1], pv
    return None, None


# ---------------------------------------------------------------- verifiers
class Fsf:
    """Fairy-Stockfish as the grand verifier (the UCI client of bench/engines.py)."""

    def __init__(self, variant):
        path = find_fairy_stockfish()
        if path is None:
            raise SystemExit("Fairy-Stockfish not found (PATH, /usr/games)")
        self.eng = start_engine(EngineSpec(cmd=[path], name="Fairy-Stockfish", options={"Threads": "1"}),
                                variant=variant)
        self.eng.set_variant(variant)

    def mate(self, fen, n):
        self.eng.new_game()
        self.eng.position(fen)
        sc = self.eng.search(f"depth {2 * n + 6}", 600.0).last.get("score")
        return sc[1] if sc and sc[0] == "mate" else None


def kr_mates_within(pos, n, R):
    """Exhaustive: can the side to move force mate within n moves (reference generator)?"""
    moves = R._legal(pos)
    # checks first: they are the likely mating tries
    nxt = [(m, R._apply(pos, m)) for m in moves]
    nxt.sort(key=lambda t: not R._side_in_check(t[1].board, t[1].side))
    for m, p2 in nxt:
        replies = R._legal(p2)
        if not replies:
            if R._side_in_check(p2.board, p2.side):
                return True
            continue
        if n > 1 and all(kr_mates_within(R._apply(p2, r), n - 1, R) for r in replies):
            return True
    return False


def kr_exact(fen, n):
    import tests.kr_reference as R
    pos = R._parse_fen(fen)
    if R._insufficient(pos.board):
        return False
    return kr_mates_within(pos, n, R) and (n == 1 or not kr_mates_within(pos, n - 1, R))


def chess_mates_within(b, n):
    import chess
    for m in list(b.legal_moves):
        b.push(m)
        try:
            if b.is_checkmate():
                return True
            if n > 1 and not b.is_game_over() and all(_reply_ok(b, r, n - 1) for r in list(b.legal_moves)):
                return True
        finally:
            b.pop()
    return False


def _reply_ok(b, r, n):
    b.push(r)
    try:
        return chess_mates_within(b, n)
    finally:
        b.pop()


def chess_exact(fen, n):
    import chess
    b = chess.Board(fen)
    return chess_mates_within(b, n) and (n == 1 or not chess_mates_within(b, n - 1))


# ---------------------------------------------------------------- tags
def tags_for(pos, pv, variant):
    """Tags of the final mating move of the engine's PV."""
    p = pos.copy()
    for m in pv:
        p.push(m)
    if p.status() != "checkmate":
        return []
    tags = []
    us = p.turn
    ksq = int(p.st[L.S_KSQ + us])
    if variant == "knightrelay":
        vt = p.vt.copy()
        vt[L.V_FLAGS] &= ~L.VF_RELAY
        vt.setflags(write=False)
        if not G.is_attacked(p.board, p.st, vt, ksq, 1 - us):
            tags.append("relay")
    if variant == "grand":
        last = pv[-1]
        frm_piece = p.board[L.move_to(last)]
        if frm_piece == L.PAWN and L.rank_of(L.move_to(last)) == 8:
            tags.append("pawn9")
    return tags


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--variant", default="grand")
    ap.add_argument("--count", type=int, default=14)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tries", type=int, default=20000)
    ap.add_argument("--pawn9", action="store_true", help="grand: only keep mates by a pawn step to rank 9")
    ap.add_argument("--relay", action="store_true", help="knightrelay: only keep mates by a relayed check")
    ap.add_argument("--append", action="store_true", help="append to the EPD file instead of rewriting it")
    a = ap.parse_args(argv)
    v = a.variant
    rng = random.Random(a.seed)
    fsf = Fsf(v) if v == "grand" else None
    found = {1: [], 2: [], 3: []}
    want = {1: a.count // 3 + 1, 2: a.count // 3 + 1, 3: a.count // 3}
    special = 0
    for fen in HANDMADE.get(v, []):
        pos = Position.from_fen(fen, v)
        n, pv = engine_mate(pos, 6)
        ok = n is not None and (fsf.mate(fen, n) == n if v == "grand" else kr_exact(fen, n))
        if ok:
            tags = tags_for(pos, pv, v)
            special += bool(tags)
            found[n].append((fen, n, tags))
            print(f"{fen}; dm {n}; {' '.join(tags)}", file=sys.stderr)
        else:
            print(f"# hand-made position rejected: {fen}", file=sys.stderr)
    for _ in range(a.tries):
        if all(len(found[k]) >= want[k] for k in found):
            break
        fen = random_fen(rng, v, a.pawn9)
        try:
            pos = Position.from_fen(fen, v)
        except ValueError:
            continue
        if pos.warnings or pos.is_check() or pos.status() != "ongoing":
            continue
        n, pv = engine_mate(pos, 6)
        if n is None or n > 3:
            continue
        tags = tags_for(pos, pv, v)
        if (a.pawn9 and "pawn9" not in tags) or (a.relay and "relay" not in tags):
            continue
        if len(found[n]) >= want[n] and not (tags and special < 4):
            continue
        if v == "grand":
            ok = fsf.mate(fen, n) == n
        elif v == "knightrelay":
            ok = kr_exact(fen, n)
        else:
            ok = chess_exact(fen, n)
        if not ok:
            print(f"# rejected (verifier disagrees): {fen} engine dm {n}", file=sys.stderr)
            continue
        if tags:
            special += 1
        found[n].append((fen, n, tags))
        print(f"{fen}; dm {n}; {' '.join(tags)}", file=sys.stderr)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", f"mates_{v}.epd")
    with open(path, "a" if a.append else "w") as f:
        if not a.append:
            f.write(f"# {v} mate-in-N positions, generated by tests/gen_mates.py --variant {v} --seed {a.seed}; "
                    f"verified by {'Fairy-Stockfish' if v == 'grand' else 'tests/kr_reference.py exhaustive search' if v == 'knightrelay' else 'python-chess exhaustive search'}\n")
        for k in (1, 2, 3):
            for fen, n, tags in found[k]:
                f.write(f"{fen}; dm {n}; {' '.join(tags)}\n")
    print(f"wrote {sum(len(x) for x in found.values())} positions to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
