"""Grand Chess (Christian Freeling, 1984).

Source: ../shared/rules/grand.md (copied for users into README.md); matches
Fairy-Stockfish variant ``grand``. Derived from chess: 10x10, marshal ``C``
(rook + knight) and cardinal ``A`` (bishop + knight), no castling, pawns
double-step from rank 3, optional promotion on ranks 8-9 and mandatory on 10,
only to a type the side has fewer of than at the start.
"""
from dataclasses import replace

from .base import MARSHAL, CARDINAL
from .chess import CHESS

GRAND = replace(
    CHESS,
    name="grand",
    aliases=(),
    width=10,
    height=10,
    pieces=CHESS.pieces + (MARSHAL, CARDINAL),
    start_fen="r8r/1nbqkcabn1/pppppppppp/10/10/10/10/PPPPPPPPPP/1NBQKCABN1/R8R w - - 0 1",
    castling=False,
    double_step_rank=2,
    promotion_start=7,
    promotion_types="QCARBN",
    promotion_limits={"Q": 1, "C": 1, "A": 1, "R": 2, "B": 2, "N": 2},
    insufficient="grand",
    source="../shared/rules/grand.md (Freeling 1984; Fairy-Stockfish 'grand')",
)
