"""Regenerate the grand and knightrelay EPD suites (and the extra chess ``am`` lines).

    python -m bench.suites.generate [--seed 1] [--fsf /usr/games/fairy-stockfish]

How positions are made and verified:

* grand: positions from Fairy-Stockfish self-play (depth 3, random first plies).
  Mate in 1: every move that mates is found with Cardinal's rules
  (``bm`` lists all of them) and Fairy-Stockfish must agree (``mate 1`` and its
  best move among them). Mate in 2: Fairy-Stockfish ``multipv 8`` at depth 9;
  ``bm`` lists every first move it scores ``mate 2`` (kept only when fewer than 8
  do, so none are missed). Winning captures: the best move is a capture scored at
  least +3 pawns and at least 3 pawns better than the second best (``multipv 2``).
  Avoid moves (``am``): a capture of a piece (not a pawn) that Fairy-Stockfish
  scores at least 3 pawns worse than its best move (``searchmoves``, depth 9).
* knightrelay: Fairy-Stockfish does not know the variant, so positions come from
  random playouts with Cardinal's rules (captures preferred). Mates in 1 list
  every mating move in ``bm``; positions whose mate uses a
  relayed knight move (a non-knight piece jumping like a knight) are preferred.
  Mates in 2 are found by exhaustive search with Cardinal's rules (``bm`` lists
  every first move that forces mate in 2), on positions with no mate in 1.
* chess: the classic positions are from Win At Chess (F. Reinfeld, 1958, as
  distributed in EPD form), kept only where Fairy-Stockfish finds the key move
  in 1 s; this script adds ``am`` lines made as for grand.

The output goes to stdout; the shipped files were made with the default seed.
"""
from __future__ import annotations

import argparse
import random
import sys

from bench.engines import EngineSpec, find_fairy_stockfish, start_engine
from engine.rules import layout as L


SEARCH_TIMEOUT = 600.0   # s for one Fairy-Stockfish search


class Fsf:
    """Fairy-Stockfish for one variant, over the UCI client of bench/engines.py."""

    def __init__(self, path, variant):
        self.eng = start_engine(EngineSpec(cmd=[path], name="Fairy-Stockfish"), variant=variant)
        self.eng.set_variant(variant)
        self.eng.sync()

    def bestmove(self, moves, depth):
        """Best move (UCI text) after ``moves`` from the start position."""
        self.eng.set_option("MultiPV", 1)
        self.eng.position(None, moves)
        return self.eng.search(f"depth {depth}", SEARCH_TIMEOUT).bestmove

    def analyse(self, fen, depth, multipv=1, searchmoves=None):
        """{multipv: (first move, kind, value)} from the last info line per multipv, and the best move."""
        self.eng.set_option("MultiPV", multipv)
        self.eng.position(fen)
        r = self.eng.search(f"depth {depth}" + (f" searchmoves {' '.join(searchmoves)}" if searchmoves else ""),
                            SEARCH_TIMEOUT)
        lines = {}
        for i in r.infos:
            if i.get("pv") and "score" in i and "bound" not in i:
                lines[i.get("multipv", 1)] = (i["pv"][0], *i["score"])
        return lines, r.bestmove

    def close(self):
        self.eng.quit()


def mates_in_one(pos):
    out = []
    for m in pos.legal_moves():
        pos.push(m)
        if pos.status() == "checkmate":
            out.append(m)
        pos.pop()
    return out


def is_relay_jump(pos, m):
    frm, to = L.move_from(m), L.move_to(m)
    p = int(pos.board[frm]) & 15
    df, dr = abs(L.file_of(to) - L.file_of(frm)), abs(L.rank_of(to) - L.rank_of(frm))
    return p not in (L.KNIGHT, L.KING) and {df, dr} == {1, 2}


def fsf_games(fsf_path, variant, n_games, rng):
    """Positions (FEN) from Fairy-Stockfish self-play at depth 3 with 4 random first plies."""
    from engine.rules.position import Position
    f = Fsf(fsf_path, variant)
    fens = []
    for _ in range(n_games):
        pos = Position.from_fen(None, variant)
        moves = []
        for ply in range(200):
            if pos.status() != "ongoing":
                break
            if ply < 4:
                m = rng.choice(pos.legal_moves())
            else:
                m = pos.parse_uci(f.bestmove(moves, 3))
            moves.append(pos.uci(m))
            pos.push(m)
            if ply >= 12:
                fens.append(pos.fen())
    f.close()
    return fens


def fsf_suite(fsf_path, variant, rng, want=(4, 4, 3, 3)):
    from engine.rules.position import Position
    fens = fsf_games(fsf_path, variant, 12, rng)
    rng.shuffle(fens)
    f = Fsf(fsf_path, variant)
    m1, m2, wc, am = [], [], [], []
    for fen in fens:
        if all(len(x) >= w for x, w in zip((m1, m2, wc, am), want)):
            break
        pos = Position.from_fen(fen, variant)
        if pos.status() != "ongoing":
            continue
        mates = mates_in_one(pos)
        if mates:
            if len(m1) < want[0] and len(mates) <= 3:
                lines, best = f.analyse(fen, 6)
                if lines[1][1:] == ("mate", 1) and pos.parse_uci(best) in mates:
                    m1.append((fen, [pos.san(m) for m in mates], "mate in 1"))
            continue
        lines, best = f.analyse(fen, 9, multipv=8)
        firsts = [pv for pv, kind, v in lines.values() if kind == "mate" and v == 2]
        if firsts and len(m2) < want[1]:
            if len(lines) == 8 and len(firsts) == 8:
                continue
            m2.append((fen, [pos.san(pos.parse_uci(u)) for u in firsts], "mate in 2"))
            print(f"# found {m2[-1]}", file=sys.stderr, flush=True)
            continue
        if any(kind == "mate" for _, kind, _ in lines.values()):
            continue
        top = sorted(lines.values(), key=lambda x: -x[2])
        if len(wc) < want[2] and len(top) >= 2:
            (b, _, v1), (_, _, v2) = top[0], top[1]
            mv = pos.parse_uci(b)
            if v1 >= 300 and v1 - v2 >= 300 and int(pos.board[L.move_to(mv)]) not in (L.EMPTY, L.OFF):
                wc.append((fen, [pos.san(mv)], "winning capture"))
                continue
        if len(am) < want[3]:
            best_v = top[0][2]
            caps = [m for m in pos.legal_moves() if int(pos.board[L.move_to(m)]) not in (L.EMPTY, L.OFF)
                    and int(pos.board[L.move_to(m)]) & 15 != L.PAWN]
            for m in caps[:3]:
                ls, _ = f.analyse(fen, 9, searchmoves=[pos.uci(m)])
                if ls and ls[1][1] == "cp" and ls[1][2] <= best_v - 300 and top[0][1] == "cp":
                    am.append((fen, [pos.san(m)], "poisoned capture"))
                    break
    f.close()
    return m1 + m2 + wc + am


def relay_suite(rng, want=6, max_games=20000):
    from engine.rules.position import Position
    relay, plain = [], []
    for _ in range(max_games):
        if len(relay) >= want:
            break
        pos = Position.from_fen(None, "knightrelay")
        for ply in range(160):
            if pos.status() != "ongoing":
                break
            legal = pos.legal_moves()
            if ply >= 10:
                mates = mates_in_one(pos)
                if 1 <= len(mates) <= 2 and len(legal) >= 8:
                    entry = (pos.fen(), [pos.san(m) for m in mates], "mate in 1")
                    if any(is_relay_jump(pos, m) for m in mates):
                        if entry[0] not in [e[0] for e in relay]:
                            relay.append(entry)
                    elif len(plain) < want:
                        plain.append(entry)
                    break
            caps = [m for m in legal if int(pos.board[L.move_to(m)]) not in (L.EMPTY, L.OFF)]
            pos.push(rng.choice(caps) if caps and rng.random() < 0.6 else rng.choice(legal))
    return relay[:want] + plain[: max(0, 10 - len(relay[:want]))]


def _has_mate_in_one(pos) -> bool:
    for m in pos.legal_moves():
        pos.push(m)
        mate = pos.status() == "checkmate"
        pos.pop()
        if mate:
            return True
    return False


def mates_in_two(pos):
    """Every first move that forces mate in 2 (exhaustive; the caller ensures no mate in 1)."""
    out = []
    for m in pos.legal_moves():
        pos.push(m)
        replies = pos.legal_moves() if pos.status() == "ongoing" else None
        ok = bool(replies)
        for r in replies or ():
            pos.push(r)
            ok = pos.status() == "ongoing" and _has_mate_in_one(pos)
            pos.pop()
            if not ok:
                break
        pos.pop()
        if ok:
            out.append(m)
    return out


def relay_mate2(rng, want=4, budget_s=300.0):
    """Knightrelay mates in 2 by exhaustive search over random-playout positions whose side to move
    has a move leaving the opponent at most 3 replies (a cheap filter before the full search)."""
    import time
    from engine.rules.position import Position
    out, t_end = [], time.monotonic() + budget_s
    while len(out) < want and time.monotonic() < t_end:
        pos = Position.from_fen(None, "knightrelay")
        for ply in range(160):
            if pos.status() != "ongoing":
                break
            legal = pos.legal_moves()
            if ply >= 16 and not _has_mate_in_one(pos):
                narrow = False
                for m in legal:
                    pos.push(m)
                    n = len(pos.legal_moves()) if pos.status() == "ongoing" else 99
                    pos.pop()
                    if n <= 3:
                        narrow = True
                        break
                if narrow:
                    firsts = mates_in_two(pos)
                    if 1 <= len(firsts) <= 3:
                        out.append((pos.fen(), [pos.san(m) for m in firsts], "mate in 2"))
                        print(f"# found {out[-1]}", file=sys.stderr, flush=True)
                        break
            caps = [m for m in legal if int(pos.board[L.move_to(m)]) not in (L.EMPTY, L.OFF)]
            pos.push(rng.choice(caps) if caps and rng.random() < 0.6 else rng.choice(legal))
    return out


def write(entries, prefix, out=sys.stdout):
    for i, (fen, moves, what) in enumerate(entries, 1):
        op = "am" if what == "poisoned capture" else "bm"
        f4 = " ".join(fen.split()[:4])
        out.write(f'{f4} {op} {" ".join(moves)}; id "{prefix}.{i:03d}"; c0 "{what}";\n')


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.suites.generate")
    ap.add_argument("variant", choices=("chess", "grand", "knightrelay"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--fsf", default=None, help="Fairy-Stockfish (default: PATH, then /usr/games)")
    a = ap.parse_args(argv)
    fsf = find_fairy_stockfish(a.fsf)
    if fsf is None and a.variant != "knightrelay":
        ap.error(f"Fairy-Stockfish not found ({a.fsf or 'PATH, /usr/games'})")
    rng = random.Random(a.seed)
    if a.variant == "knightrelay":
        write(relay_suite(rng) + relay_mate2(rng), "KR")
    elif a.variant == "grand":
        write(fsf_suite(fsf, "grand", rng), "GR")
    else:
        write(fsf_suite(fsf, "chess", rng, want=(0, 0, 0, 3)), "CAM")
    return 0


if __name__ == "__main__":
    sys.exit(main())
