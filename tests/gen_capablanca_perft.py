"""Generate the Capablanca Chess perft reference: ``tests/data/capablanca.epd``.

    PYTHONPATH=. python tests/gen_capablanca_perft.py > tests/data/capablanca.epd

Counts up to ``PYFFISH_LIMIT`` leaf nodes are computed with pyffish (the
Fairy-Stockfish library, variant ``capablanca``) by walking its legal-move lists;
bigger ones (the ``slow`` test tier) with the Fairy-Stockfish binary
(``go perft``), which must also agree with pyffish on every smaller count of the
same position. Cardinal's own generator is used only to choose the depths.

Positions: the start position; both sides' castling with the king on f and the
rooks on a and j (open paths, paths crossed by attacked squares, a rook path
square attacked); promotions to Q, C, A, R, B, N with and without capture; and
en-passant captures on four files reached from the start position.
"""
from __future__ import annotations

import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import pyffish as sf                                  # noqa: E402

from engine.rules.position import Position            # noqa: E402

V = "capablanca"
FSF = "/usr/games/fairy-stockfish"
PYFFISH_LIMIT = 1_500_000      # pyffish walks its move lists (milliseconds a call); bigger counts: the binary
SLOW_LIMIT = 40_000_000        # the deepest count kept per position

START = "rnabqkbcnr/pppppppppp/10/10/10/10/PPPPPPPPPP/RNABQKBCNR w KQkq - 0 1"
POSITIONS = [
    (START, "start position"),
    ("r4k3r/pppqapcppp/2n4n2/4p5/4P5/2N4N2/PPPQAPCPPP/R4K3R w KQkq - 0 1", "castling both sides, open paths"),
    ("r4k3r/10/10/10/1a5c2/10/b9/R4K3R w KQkq - 0 1",
     "white castling: h1 and e1 attacked (no castling), b1 attacked (rook path only)"),
    ("r4k3r/10/b9/1C5A2/10/10/10/R4K3R b KQkq - 0 1",
     "black castling: e8 attacked (no queen-side castling), b8 attacked (rook path only)"),
    ("r4k2n1/1P6P1/10/10/10/10/1p6p1/R4K2N1 w Qq - 0 1", "promotions with and without capture, queen-side castling"),
    ("5k4/2P4P2/10/10/10/10/2p4p2/5K4 b - - 0 1", "promotions, pawns only"),
]
EP_LINES = (["e2e4", "a7a6", "e4e5", "d7d5"], ["h2h4", "d7d5", "h4h5", "g7g5"],
            ["a2a3", "e7e5", "a3a4", "e5e4", "d2d4"], ["e2e4", "d7d5", "e4d5", "c7c5"])


def pyffish_perft(fen: str, depth: int) -> int:
    if depth == 1:
        return len(sf.legal_moves(V, fen, []))
    total = 0
    for m in sf.legal_moves(V, fen, []):
        if depth == 2:
            total += len(sf.legal_moves(V, fen, [m]))
        else:
            total += pyffish_perft(sf.get_fen(V, fen, [m]), depth - 1)
    return total


class FsfPerft:
    def __init__(self, path: str):
        self.p = subprocess.Popen([path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.send("uci")
        self.send(f"setoption name UCI_Variant value {V}")

    def send(self, s: str) -> None:
        self.p.stdin.write(s + "\n")
        self.p.stdin.flush()

    def perft(self, fen: str, depth: int) -> int:
        self.send(f"position fen {fen}")
        self.send(f"go perft {depth}")
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("Fairy-Stockfish exited")
            if line.startswith("Nodes searched:"):
                return int(line.split(":")[1])


def main() -> None:
    start = sf.start_fen(V)
    assert start == START, start
    positions = list(POSITIONS)
    for line in EP_LINES:
        positions.append((sf.get_fen(V, start, line), "e.p. capture possible after " + " ".join(line)))
    fsf = FsfPerft(FSF)
    print("# Format (one position a line, not classic EPD): a full 6-field FEN, then ' ;D<depth> <leaf nodes>' groups.")
    print("# Capablanca Chess perft reference, made by tests/gen_capablanca_perft.py: counts up to")
    print(f"# {PYFFISH_LIMIT:,} leaf nodes from pyffish (Fairy-Stockfish library, variant capablanca), larger ones")
    print("# from the Fairy-Stockfish 11.1 binary (go perft), which agrees with pyffish on all smaller counts.")
    for fen, what in positions:
        ours = Position.from_fen(fen, V)
        groups = []
        counts = [1]
        for depth in range(1, 9):
            if len(counts) > 1 and counts[-1] * counts[-1] / counts[-2] > 3 * SLOW_LIMIT:
                break                            # the next count would be far too big
            estimate = ours.perft(depth)        # only to choose the depth
            if estimate > SLOW_LIMIT:
                break
            counts.append(estimate)
            n = fsf.perft(fen, depth)
            if estimate <= PYFFISH_LIMIT:
                ref = pyffish_perft(fen, depth)
                assert ref == n, (fen, depth, ref, n)
            groups.append(f";D{depth} {n}")
            print(f"{what}: D{depth} {n}", file=sys.stderr, flush=True)
        print(f"# {what}")
        print(fen + " " + " ".join(groups), flush=True)
    fsf.send("quit")


if __name__ == "__main__":
    main()
