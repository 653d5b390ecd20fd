"""Grand Chess (Christian Freeling, 1984).

Source: Christian Freeling's rules (1984), as summarised in README.md; matches
Fairy-Stockfish variant ``grand``. Derived from chess: 10x10, marshal ``C``
(rook + knight) and cardinal ``A`` (bishop + knight), no castling, pawns
double-step from rank 3, optional promotion on ranks 8-9 and mandatory on 10,
only to a type the side has fewer of than at the start.
"""
from .base import MARSHAL, CARDINAL
from .chess import CHESS

GRAND = CHESS.derive(
    name="grand",
    width=10,
    height=10,
    pieces=CHESS.pieces + (MARSHAL, CARDINAL),
    start_fen="r8r/1nbqkcabn1/pppppppppp/10/10/10/10/PPPPPPPPPP/1NBQKCABN1/R8R w - - 0 1",
    castling=False,
    double_step_rank=2,
    promotion_start=7,
    promotion_types="QCARBN",
    promotion_limits={"Q": 1, "C": 1, "A": 1, "R": 2, "B": 2, "N": 2},
    # insufficient material as in chess (inherited): K v K with at most one knight, or bishops
    # only, all on one colour (Fairy-Stockfish; marshals and cardinals can always mate)
    source="Christian Freeling, Grand Chess (1984); Fairy-Stockfish 'grand'",
    openings=(
        'e3e5 e8e6',
        'f3f5 f8f6',
        'i2h4 i9h7',
        'd3d4 d8d7 i2h4 i9h7',
        'f3f4 e8e6',
        'e3e5 g8g6',
        'c3c4 c8c7',
        'h3h5 h8h6',
    ),
    bench_positions=(
        None,
        'r8r/2bBkcabn1/ppp2p2pp/n2pp5/7p2/7P2/3P2P3/PPP1PP2PP/1N1QKCABN1/R8R w - - 1 6',
        '4r2r2/2b1kc2n1/ppp5Bp/n2ppp4/5a1p2/7P2/P1PPC1P3/1Q2PP2PP/1N2K1ABN1/R8R w - - 3 14',
        '1R8/7rn1/Q1pck4p/3p1p4/5p1p2/7P2/P1PP2P3/3NPP2PP/4K1A1N1/9R w - - 0 24',
        '1R8/2k1c2r2/4Q5/3p1p2n1/2p2p1p2/7P2/P1PP2P3/3NPP2PP/3KA3N1/9R w - - 7 34',
        'r8r/1nbqkc2n1/ppp1pp2pp/5a1p2/3p6/10/3P6/PbP1PPPPPP/1NBQKCABN1/R8R w - - 2 6',
        'r8r/1n1qkc2n1/ppp1pp3p/7p2/5b2p1/2p7/3P1P4/P3PKP1PP/1NQ4BN1/R8R w - - 0 14',
        'r8r/1n2k5/pp2ppn2p/2p1b2c2/8p1/10/P2P1P4/3NPKP1PP/8N1/R5B2R w - - 4 24',
        '7r2/1n2k5/pp2ppn2p/2p7/8p1/7c2/P2P1P4/3NP1P1bP/6KB2/7R2 w - - 5 34',
        'r2r6/1nbqk3n1/pppppp1ppp/5ac3/6B3/6P3/3P6/PQP1PP1PPP/1N2KCABN1/R8R w - - 1 6',
        'r1qr4k1/1nb5n1/p1pppp2Qp/B9/10/6P3/3P3C2/P1P1PP1PPP/1N2K1A1N1/R8R w - - 3 14',
    ),
)
