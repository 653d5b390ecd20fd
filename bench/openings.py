"""Match openings: the variants' built-in balanced lines, or FEN/EPD start positions from a file."""
from __future__ import annotations

from dataclasses import dataclass

import variants as _variants
from engine.rules.position import Position

# Built-in balanced openings: each variant record's ``openings`` (short lines from the
# start position, UCI coordinates with 1-based ranks), each played with both colours.
OPENINGS = {name: list(v.openings) for name, v in _variants.VARIANTS.items()}


@dataclass
class Opening:
    """A start FEN (None: the variant's start position) and moves played from it."""
    fen: str | None = None
    moves: tuple = ()
    label: str = ""


def builtin_openings(variant: str) -> list[Opening]:
    return [Opening(None, tuple(line.split()), line) for line in OPENINGS[_variants.canonical(variant)]]


def load_openings(path: str, variant: str) -> list[Opening]:
    """EPD/FEN lines (blank lines and ``#`` comments skipped; EPD operations after the
    four FEN fields are ignored). Raises ``ValueError`` naming the line, ``OSError``."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for n, raw in enumerate(fh, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            f = line.split()
            if len(f) < 4:
                raise ValueError(f"{path}:{n}: not a FEN/EPD line")
            counters = f[4:6] if len(f) >= 6 and f[4].isdigit() and f[5].isdigit() else ["0", "1"]
            fen = " ".join(f[:4] + counters)
            try:
                pos = Position.from_fen(fen, variant)
            except ValueError as e:
                raise ValueError(f"{path}:{n}: {e}") from None
            if pos.status() != "ongoing":
                raise ValueError(f"{path}:{n}: the game is already over ({pos.status()})")
            out.append(Opening(pos.fen(), (), f"{path}:{n}"))
    if not out:
        raise ValueError(f"{path}: no positions")
    return out
