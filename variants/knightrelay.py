"""Knight Relay Chess (Mannis Charosh, 1972).

Source: Mannis Charosh (1972); D. B. Pritchard, The Classified Encyclopedia
of Chess Variants (2007), p. 169; summarised in README.md. Derived from chess: pieces a knight's move from
a friendly knight also move like a knight (``relay``; relayed pawns never jump
to their first or last rank); knights neither capture nor can be captured nor
attack (``knights_passive``); no en passant.
"""
from .base import NoMate
from .chess import CHESS

KNIGHTRELAY = CHESS.derive(
    name="knightrelay",
    en_passant=False,
    relay=True,
    knights_passive=True,
    # variants/rules/knightrelay.md: no mate is possible with kings and knights only (knights attack nothing),
    # nor with a single bishop.
    insufficient_material=(NoMate({"N": None}), NoMate({"B": 1})),
    # XBoard does not know the variant: engine-defined pieces (Betza): knights move but never
    # capture, pawns without e.p., king with castling.
    xboard_pieces=("piece N& mN", "piece P& fmWfcFifmW2", "piece K& KisO2"),
    source="Mannis Charosh (1972); Pritchard, Classified Encyclopedia of Chess Variants (2007) p. 169",
    # Evaluation (search/eval.py): a knight neither captures nor can be captured, so it is
    # worth less as a fighter but is a permanent outpost and relays its power to friends.
    eval_weights={
        "values": {"N": (240, 230)},
        "relay_bonus": (18, 10),          # per friendly piece a knight's move from a friendly knight
        "relay_reach": (3, 2),            # per empty square a knight can step to and relay a friend from
        "knight_outpost": (8, 4),         # per rank a (never capturable) knight stands beyond the middle
        "mobility": {"N": (1, 1)},        # knight moves only to empty squares; relaying matters more
    },
    openings=(
        'e2e4 e7e5',
        'd2d4 d7d5',
        'c2c4 c7c5',
        'g1f3 g8f6',
        'b1c3 b8c6',
        'e2e4 e7e5 g1f3 b8c6',
        'd2d4 d7d5 b1c3 g8f6',
        'g2g3 g7g6',
    ),
    bench_positions=(
        None,
        'rnbqk1nr/p2p1p1p/2p1p1p1/1pb5/8/1PN1P3/PPP2PPP/R1BQKBNR w kq - 2 6',
        'rnb1k2r/p2pn2p/2p1p3/1pbq2p1/4N3/1P1P2PN/PPP1B2P/R1B2K1R w kq - 3 14',
        'rnb1k1r1/p2pn3/2p1p2p/1p4p1/7q/1PB5/PP1NPN1P/3RK2R w - - 0 24',
        'rn3k2/8/3ppN1R/p3p1p1/Pp3n2/1P4P1/1P2PN2/4K3 w - - 3 34',
        'r1bqk1nr/pppp1ppp/2n5/8/8/b1N1P3/2PP1PPP/R2QKBNR w KQkq - 0 6',
        '3qk2r/r1p2p1p/2npbnp1/1p1B4/4P3/1PN2N2/2P2PPP/3QK2R w Kk - 1 14',
        '1q2rk2/r4p2/2np1Q2/3N2pn/1p6/1P3N2/2P2PP1/5RK1 w - - 4 24',
        '8/5p2/R1np4/3N3n/1k4p1/1P3N2/2p2PP1/6K1 w - - 0 34',
        'r1bqk2r/ppppbpp1/2n1pn2/7p/6Q1/2PBP3/PP1P1PPP/RNB1K1NR w KQkq - 0 6',
        'r2q1k1r/ppp1b1p1/2n2p2/3p1b1p/3Q4/1PnBPP1N/P2P2PP/RNB1K2R w KQ - 2 14',
    ),
)
