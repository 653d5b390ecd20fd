"""Orthodox chess. Source: FIDE Laws of Chess (the baseline every other record derives from)."""
from .base import Variant, PAWN, KNIGHT_P, BISHOP, ROOK, QUEEN, KING

CHESS = Variant(
    name="chess",
    aliases=("standard", "normal"),
    width=8,
    height=8,
    pieces=(PAWN, KNIGHT_P, BISHOP, ROOK, QUEEN, KING),
    start_fen="rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    castling=True,
    en_passant=True,
    double_step_rank=1,
    promotion_start=7,
    promotion_types="QRBN",
    insufficient="chess",
    source="FIDE Laws of Chess, articles 3 and 9",
)
