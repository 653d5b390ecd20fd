"""Skill Level: a weaker Cardinal for people (UCI option ``Skill Level``, 0-20).

Level 20 is full strength and changes nothing. Below it, Stockfish's scheme:
the search stops at depth ``1 + level``, looks at (at least) ``MULTIPV`` root
lines, and plays one of them chosen by :func:`pick`: each line's score gets a
push that grows with its distance to the best score (scaled by the weakness,
``120 - 2 * level``) plus a random part bounded by the spread of the scores
(at most a pawn). Weak levels so pick almost at random among near-best moves;
strong levels rarely leave the best one and never take a clear blunder.
The random numbers come from a seeded generator (:func:`rng`), so a game
replays the same way from the same commands.
"""
from __future__ import annotations

import random

FULL = 20          # full strength: no depth cap, no random pick
MULTIPV = 4        # root lines compared below full strength
PAWN = 100         # the random part never exceeds a pawn's worth of score spread
SEED = 20          # seed of the generator (fixed: reproducible games)


def valid(level) -> bool:
    return isinstance(level, int) and not isinstance(level, bool) and 0 <= level <= FULL


def depth_cap(level: int) -> int | None:
    """Deepest iteration at ``level`` (``None``: no cap)."""
    return None if level >= FULL else 1 + level


def multipv(level: int, requested: int) -> int:
    """Root lines to search: the requested MultiPV, at least :data:`MULTIPV` below full strength."""
    return requested if level >= FULL else max(requested, MULTIPV)


def rng(seed: int = SEED) -> random.Random:
    return random.Random(seed)


def pick(scores: list[int], level: int, gen: random.Random) -> int:
    """Index of the line to play among root lines with ``scores`` (best first).
    At full strength (or with one line) the best line."""
    if level >= FULL or len(scores) < 2:
        return 0
    top = scores[0]
    delta = min(top - scores[-1], PAWN)
    weakness = 120 - 2 * level
    best, best_value = 0, None
    for i, sc in enumerate(scores):
        push = (weakness * (top - sc) + delta * gen.randrange(weakness)) // 128
        if best_value is None or sc + push >= best_value:
            best, best_value = i, sc + push
    return best
