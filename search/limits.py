"""Search limits (plain Python, no numba: the protocol layer imports it at start-up)."""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

_TIMES = ("wtime", "btime", "winc", "binc", "movetime")
MAX_DEPTH = 98   # deepest iteration the driver runs (search.core.MAX_PLY - 2; a test checks it)


@dataclass
class Limits:
    """Search limits; all times in milliseconds (UCI ``go`` parameters).

    Raises ``ValueError`` for a value no search can honour: a negative time,
    increment or node count, a ``depth``, ``mate`` or ``movestogo`` below 1, or a
    non-integer. A ``depth`` above :data:`MAX_DEPTH` searches to :data:`MAX_DEPTH`.
    """
    wtime: int | None = None
    btime: int | None = None
    winc: int = 0
    binc: int = 0
    movestogo: int | None = None
    movetime: int | None = None
    depth: int | None = None
    nodes: int | None = None
    mate: int | None = None     # mate in N moves
    infinite: bool = False
    ponder: bool = False

    def __post_init__(self):
        for name, low in (("wtime", 0), ("btime", 0), ("winc", 0), ("binc", 0), ("movetime", 0),
                          ("nodes", 0), ("movestogo", 1), ("depth", 1), ("mate", 1)):
            v = getattr(self, name)
            if v is None:
                continue
            kind = numbers.Real if name in _TIMES else numbers.Integral
            if isinstance(v, bool) or not isinstance(v, kind) or (kind is numbers.Real and not math.isfinite(v)):
                raise ValueError(f"Limits: {name} must be {'a number' if kind is numbers.Real else 'an int'}, "
                                 f"not {v!r}")
            if v < low:
                raise ValueError(f"Limits: {name} {v} out of range (at least {low})")
