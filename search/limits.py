"""Search limits (plain Python, no numba: the protocol layer imports it at start-up)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Limits:
    """Search limits; all times in milliseconds (UCI ``go`` parameters)."""
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
