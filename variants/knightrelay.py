"""Knight Relay Chess (Mannis Charosh, 1972).

Source: ../shared/rules/knightrelay.md (Pritchard, Classified Encyclopedia of
Chess Variants, 2007, p. 169). Derived from chess: pieces a knight's move from
a friendly knight also move like a knight (``relay``; relayed pawns never jump
to their first or last rank); knights neither capture nor can be captured nor
attack (``knights_passive``); no en passant.
"""
from dataclasses import replace

from .chess import CHESS

KNIGHTRELAY = replace(
    CHESS,
    name="knightrelay",
    aliases=("knight-relay", "nrelay"),
    en_passant=False,
    relay=True,
    knights_passive=True,
    insufficient="knightrelay",
    source="../shared/rules/knightrelay.md (Charosh 1972; Pritchard 2007 p. 169)",
    # Evaluation (search/eval.py): a knight neither captures nor can be captured, so it is
    # worth less as a fighter but is a permanent outpost and relays its power to friends.
    eval_weights={
        "values": {"N": (240, 230)},
        "relay_bonus": (18, 10),          # per friendly piece a knight's move from a friendly knight
        "relay_reach": (3, 2),            # per empty square a knight can step to and relay a friend from
        "knight_outpost": (8, 4),         # per rank a (never capturable) knight stands beyond the middle
        "mobility": {"N": (1, 1)},        # knight moves only to empty squares; relaying matters more
    },
)
