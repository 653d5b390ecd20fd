"""Variant records (data only) and the registry: the one list of variant names.

Every list of variant names in Cardinal (UCI ``UCI_Variant`` combo, XBoard
``variants`` feature, CLI choices, warm-up, benchmarks, tests) derives from
:data:`VARIANTS` through the functions here. Adding a variant is one record
module plus one line in :data:`_RECORDS`.

``get(name)`` accepts the canonical name or an alias (``standard``/``normal``
for chess) and raises ``KeyError`` for an unknown variant.
"""
from .base import Variant, Piece, NoMate
from .chess import CHESS
from .grand import GRAND
from .knightrelay import KNIGHTRELAY
from .capablanca import CAPABLANCA

_RECORDS = (CHESS, GRAND, KNIGHTRELAY, CAPABLANCA)
VARIANTS = {v.name: v for v in _RECORDS}

# Variants whose node counts make up the `cardinal bench` signature; others are
# printed on their own lines and not added, so the signature stays comparable.
BENCH_SIGNATURE = ("chess", "grand", "knightrelay")


def names() -> tuple:
    """Canonical variant names, in registry order."""
    return tuple(VARIANTS)


def all_names() -> tuple:
    """Every accepted name, each canonical name followed by its aliases (CLI choices,
    the UCI_Variant combo)."""
    return tuple(n for v in VARIANTS.values() for n in (v.name, *v.aliases))


def canonical(name: str):
    """The canonical name for ``name`` or an alias (exact, lower-case), or ``None``."""
    if name in VARIANTS:
        return name
    for v in VARIANTS.values():
        if name in v.aliases or (v.xboard_name and name == v.xboard_name):
            return v.name
    return None


def get(name: str) -> Variant:
    """Return the variant record for ``name`` (case-insensitive, aliases allowed)."""
    key = (name or "chess").strip().lower()
    c = canonical(key)
    if c is None:
        raise KeyError(f"unknown variant {name!r} (known: {', '.join(VARIANTS)})")
    return VARIANTS[c]


__all__ = ["Variant", "Piece", "NoMate", "VARIANTS", "BENCH_SIGNATURE", "names", "all_names", "canonical", "get",
           "CHESS", "GRAND", "KNIGHTRELAY", "CAPABLANCA"]
