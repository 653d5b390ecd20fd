"""Orthodox chess. Source: FIDE Laws of Chess (the baseline every other record derives from)."""
from .base import Variant, NoMate, PAWN, KNIGHT_P, BISHOP, ROOK, QUEEN, KING

CHESS = Variant(
    name="chess",
    aliases=("standard", "normal"),
    xboard_name="normal",
    width=8,
    height=8,
    pieces=(PAWN, KNIGHT_P, BISHOP, ROOK, QUEEN, KING),
    start_fen="rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    castling=True,
    castling_king_file=4,            # e1 / e8
    castling_rook_files=(7, 0),      # h-file rook (O-O), a-file rook (O-O-O)
    castling_king_to=(6, 2),         # g1 / c1
    castling_rook_to=(5, 3),         # f1 / d1
    en_passant=True,
    double_step_rank=1,
    promotion_start=7,
    promotion_types="QRBN",
    # No mate is possible (python-chess's definition): K v K with at most one knight, or
    # bishops only, all on squares of one colour.
    insufficient_material=(NoMate({"N": 1}), NoMate({"B": None}, one_colour="B")),
    source="FIDE Laws of Chess, articles 3 and 9",
    openings=(
        'e2e4 e7e5 g1f3 b8c6',
        'd2d4 d7d5 c2c4 e7e6',
        'e2e4 c7c5 g1f3 d7d6',
        'd2d4 g8f6 c2c4 g7g6',
        'c2c4 e7e5 b1c3 g8f6',
        'g1f3 d7d5 g2g3 g8f6',
        'e2e4 e7e6 d2d4 d7d5',
        'e2e4 c7c6 d2d4 d7d5',
    ),
    bench_positions=(
        None,
        'r1bqkb1r/1ppppppp/7n/p7/8/PP2P3/2QPNPPP/RNB1KB1R w KQkq - 1 6',
        'r1b1kb1r/1ppp1pp1/7p/pq2p3/5P2/P1N1P3/3PN1BP/R1B2K1R w kq - 1 14',
        '3k1r2/1B1p4/1pp2P1p/p4p2/8/P3P2P/1B1PNK2/R6R w - - 1 24',
        '5r2/2k2P1R/3p4/1p6/p1p1B3/P3P2P/1B1PNK2/R7 w - - 0 34',
        'r1bqkb1r/pppn1ppp/8/3np3/Q7/3P1N2/PP2PPPP/RNB1KB1R w KQkq - 0 6',
        'r2kr3/pppbbppp/8/2nQ2B1/6N1/3P2P1/PP2PP1P/RN2KB1R w KQ - 1 14',
        'rnbq1bnr/pp1p1kpp/4pp2/2Q5/8/2NBP3/PPPP1PPP/R1B1K1NR w KQ - 1 6',
        'rnbk2nr/6pB/1p2pp2/pNbp3Q/P7/1P2PN2/2PP1PPP/R3K2R w KQ - 2 14',
        'r2k2r1/8/5ppQ/pBpp1b2/P3p3/NPPnPNPP/4KP2/R6R w - - 0 24',
        '1rk2r2/3b4/8/p7/Pp2p3/NPP1P1PP/3K1n2/R7 w - - 0 34',
    ),
)
