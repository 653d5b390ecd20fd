"""The match runner's time control (seconds and milliseconds as a GUI gives them).

Not the search API's :class:`search.limits.Limits` (milliseconds, one search):
:class:`TimeControl` is what a match gives each engine for a whole game.
"""
from __future__ import annotations

import math
from dataclasses import dataclass


def seconds_text(x: float) -> str:
    """``5.0`` -> ``5``, ``0.05`` -> ``0.05`` (at most 3 decimals), as Cute Chess writes times."""
    s = f"{x:.3f}".rstrip("0").rstrip(".")
    return s or "0"


@dataclass
class TimeControl:
    """``base``/``inc`` in seconds (a clock), or ``movetime`` in ms, and/or ``depth`` plies
    and/or ``nodes`` (UCI ``go nodes``)."""
    base: float | None = 5.0
    inc: float = 0.05
    movetime: int | None = None
    depth: int | None = None
    nodes: int | None = None

    def with_limits(self, limits: dict) -> "TimeControl":
        """This time control with one engine's own limits (cutechess-cli's per-engine
        ``tc=``, ``st=``, ``depth=``, ``nodes=``) put over it: ``tc`` (base, inc) sets a
        clock and drops a movetime, ``st`` (seconds per move) sets a movetime and drops
        the clock, ``depth``/``nodes`` replace those limits."""
        tc = TimeControl(self.base, self.inc, self.movetime, self.depth, self.nodes)
        if "tc" in limits:
            tc.base, tc.inc = limits["tc"]
            tc.movetime = None
        if "st" in limits:
            tc.base, tc.inc = None, 0.0
            tc.movetime = max(1, int(round(limits["st"] * 1000)))
        if "depth" in limits:
            tc.depth = limits["depth"]
        if "nodes" in limits:
            tc.nodes = limits["nodes"]
        return tc

    @property
    def clock(self) -> bool:
        return self.base is not None

    def pgn(self) -> str:
        """PGN ``TimeControl`` value as Cute Chess writes it: ``5+0.05``, ``0.5/move``, ``inf``."""
        if self.clock:
            return f"{seconds_text(self.base)}+{seconds_text(self.inc)}" if self.inc else seconds_text(self.base)
        if self.movetime:
            return f"{seconds_text(self.movetime / 1000)}/move"
        return "inf"


def parse_tc(text: str) -> tuple[float, float]:
    """``"5+0.05"`` -> (5.0, 0.05) seconds; ``"40"`` -> (40.0, 0.0). Raises ``ValueError``."""
    base, _, inc = text.partition("+")
    if "/" in base:
        raise ValueError(f"time control {text!r}: moves/time controls are not supported (use base+inc)")
    try:
        b, i = float(base), float(inc) if inc else 0.0
    except ValueError:
        raise ValueError(f"time control {text!r} is not base+inc in seconds") from None
    if not (b > 0 and i >= 0 and math.isfinite(b) and math.isfinite(i)):
        raise ValueError(f"time control {text!r}: base must be > 0 and increment >= 0")
    return b, i
