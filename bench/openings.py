"""Match openings: the variant's opening suite, its built-in balanced lines, or FEN/EPD
start positions from a file.

By default ``cardinal match`` plays the variant's opening suite,
``bench/suites/openings-<variant>.epd`` (500 or more balanced start positions, made by
``python -m bench.suites.openings``; see that module for the format); a variant without
one falls back to the few built-in lines of its record (``variants/*.py``, field
``openings``).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass

import variants as _variants
from engine.rules.position import Position

SUITES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "suites")

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


def suite_path(variant: str) -> str | None:
    """The variant's shipped opening suite, ``bench/suites/openings-<variant>.epd`` (None: it has none)."""
    p = os.path.join(SUITES_DIR, f"openings-{_variants.canonical(variant)}.epd")
    return p if os.path.isfile(p) else None


def default_openings(variant: str) -> list[Opening]:
    """What ``cardinal match`` plays without ``--openings``: the variant's opening suite
    (:func:`suite_path`), else its built-in lines (:func:`builtin_openings`)."""
    p = suite_path(variant)
    return load_openings(p, variant) if p else builtin_openings(variant)


def suite_size(path: str) -> int:
    """Positions in an EPD/FEN file by a cheap count (lines that are not blank or ``#`` comments)."""
    with open(path, encoding="utf-8") as fh:
        return sum(1 for raw in fh if raw.strip() and not raw.lstrip().startswith("#"))


def default_openings_help() -> str:
    """Where the default openings come from, for ``cardinal match --help`` (no rules loaded)."""
    sizes = [(v, suite_path(v)) for v in _variants.names()]
    have = ", ".join(f"{v} {suite_size(p)}" for v, p in sizes if p)
    lacking = [v for v, p in sizes if not p]
    text = f"default: bench/suites/openings-<variant>.epd, N balanced positions: {have or 'none shipped'}"
    if lacking:
        text += f"; the variant's built-in lines for {', '.join(lacking)}"
    return text


_ID = re.compile(r'(?:^|;)\s*id\s+"([^"]*)"')


def load_openings(path: str, variant: str) -> list[Opening]:
    """EPD/FEN lines (blank lines and ``#`` comments skipped; EPD operations after the
    four FEN fields are ignored but ``id``, which names the opening; else it is
    ``path:line``). Raises ``ValueError`` naming the line, ``OSError``."""
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
            m = _ID.search(" ".join(f[4:]))
            out.append(Opening(pos.fen(), (), m.group(1) if m else f"{path}:{n}"))
    if not out:
        raise ValueError(f"{path}: no positions")
    return out
