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
)
