"""Capablanca Chess (José Raúl Capablanca, 1920s; 10x8).

Source: D. B. Pritchard, The Classified Encyclopedia of Chess Variants (2007);
matches Fairy-Stockfish variant ``capablanca`` and XBoard's ``capablanca``.
Derived from chess on a 10x8 board with the archbishop ``A`` (bishop + knight,
Cardinal's ``cardinal`` type) and the chancellor ``C`` (rook + knight, the
``marshal`` type). The king starts on f1 and castles to i1 (rook j1 to h1) or
c1 (rook a1 to d1); pawns double-step, capture en passant and promote to any
of Q, C, A, R, B, N without limit. Insufficient material as in chess (the
archbishop and chancellor can mate alone).
"""
from .base import MARSHAL, CARDINAL
from .chess import CHESS

CAPABLANCA = CHESS.derive(
    name="capablanca",
    width=10,
    height=8,
    pieces=CHESS.pieces + (MARSHAL, CARDINAL),
    start_fen="rnabqkbcnr/pppppppppp/10/10/10/10/PPPPPPPPPP/RNABQKBCNR w KQkq - 0 1",
    castling_king_file=5,            # f1 / f8
    castling_rook_files=(9, 0),      # j-file rook (O-O), a-file rook (O-O-O)
    castling_king_to=(8, 2),         # i1 / c1
    castling_rook_to=(7, 3),         # h1 / d1
    promotion_types="QCARBN",
    source="Pritchard, Classified Encyclopedia of Chess Variants (2007); Fairy-Stockfish 'capablanca'",
    # symmetric first moves; Fairy-Stockfish 11.1 (depth 14) scores them all within a pawn of
    # the start position (White's first-move edge, about +0.5 to +1.0 pawn, whichever is played)
    openings=(
        'e2e4 e7e5',
        'f2f4 f7f5',
        'e2e3 e7e6',
        'i2i3 i7i6',
        'b1c3 b8c6',
        'i1h3 i8h6',
        'c2c4 c7c5',
        'e2e3 e7e5',
        'g2g3 g7g6 i1h3 i8h6',
        'e2e3 e7e6 b1c3 b8c6',
    ),
    # start, then moves 6, 14 and 24 (White to move) of two Fairy-Stockfish self-play games
    # (depth 7) after 1. e4 e5 and 1. i3 i6
    bench_positions=(
        None,
        'rnab1kbr2/ppp2ppp1p/3p3n2/1q2p5/4P5/3P3N2/PPP2PPPPP/RN1BQKBC1R w KQq - 2 6',
        'r2b1kbr2/ppp3pp1p/2np3n2/5q4/3B1Q4/1PNP3N2/P1P3PPPP/R2B1K3R w KQq - 1 14',
        '2kr4r1/ppp3pp1p/2npb2n2/b9/4N5/1P1P4P1/P1P1NBPP1P/R2B3RK1 w - - 5 24',
        'rnabqk1c1r/ppp1p1pp1p/4bp1np1/3p6/3P1P4/2P4NP1/PP2P1PP1P/RNABQKBC1R w KQkq - 1 6',
        'rn2qk3r/ppb3pp1c/2p1ap1np1/3p5p/3PpPP3/N1P1P2CP1/PP2BA1P1P/R3QKB2R w KQkq - 2 14',
        'rn2k5/2a1b2p2/ppp2p2p1/2Pp1P3p/3Pp1P3/N3P3PP/PP2B2P2/R4KB2R w KQ - 0 24',
    ),
)
