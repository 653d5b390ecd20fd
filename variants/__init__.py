"""Variant records (data only) and their lookup by name.

``get(name)`` accepts the canonical name or an alias (``standard``/``normal``
for chess) and raises ``KeyError`` for an unknown variant.
"""
from .base import Variant, Piece
from .chess import CHESS
from .grand import GRAND
from .knightrelay import KNIGHTRELAY

VARIANTS = {v.name: v for v in (CHESS, GRAND, KNIGHTRELAY)}


def get(name: str) -> Variant:
    """Return the variant record for ``name`` (case-insensitive, aliases allowed)."""
    key = (name or "chess").strip().lower()
    if key in VARIANTS:
        return VARIANTS[key]
    for v in VARIANTS.values():
        if key in v.aliases:
            return v
    raise KeyError(f"unknown variant {name!r} (known: {', '.join(VARIANTS)})")


__all__ = ["Variant", "Piece", "VARIANTS", "get", "CHESS", "GRAND", "KNIGHTRELAY"]
