"""Time management: how long to think, from the clock.

``allocate(limits, side, move_overhead) -> (soft_ms, hard_ms)``:

* ``soft``: the driver starts no new iteration after it (an iteration that
  starts later would rarely finish); ``hard``: a timer thread sets the stop flag
  then. ``None`` means no limit (depth/nodes/infinite/ponder searches).
* ``movetime``: both are ``movetime - overhead``.
* clock: with ``mtg`` = moves to go (``movestogo``, else 30 assumed; at least 1) and
  ``left = time - move_overhead`` (the overhead, GUI/OS lag, is kept in reserve)
  ``soft = left/mtg + 0.75*inc`` and ``hard = min(4*soft, left/3 + inc)`` (never about a third
  of the clock on one move in sudden death; the whole slice when ``movestogo`` = 1),
  both capped at ``time - overhead - 10 ms`` so the flag cannot fall. Floors of 1 ms keep
  a move coming even on an empty clock.
"""
from __future__ import annotations

# Move Overhead (ms) kept in reserve for GUI/OS lag: the one default for the Searcher and the
# protocols' option. Cute Chess counts from `go` to `bestmove` with no margin, and a Python
# engine loses tens of ms to pipes and thread wake-ups.
MOVE_OVERHEAD_DEFAULT = 100
DEFAULT_MTG = 30          # assumed moves left in sudden death: a typical game length beyond the opening
SAFETY_MS = 10            # kept in hand besides the move overhead (thread wake-up, Python, pipe)


def allocate(limits, side: int, move_overhead: int = MOVE_OVERHEAD_DEFAULT):
    """Return ``(soft_ms, hard_ms)`` (floats or None) for ``limits`` (:class:`search.driver.Limits`)."""
    if limits.movetime is not None:
        t = max(1.0, float(limits.movetime) - move_overhead)
        return t, t
    clock = limits.wtime if side == 0 else limits.btime
    if clock is None:   # only the other side's clock was sent: still play on a clock, never forever
        clock = limits.btime if side == 0 else limits.wtime
    if clock is None:
        return None, None
    inc = float(limits.winc if side == 0 else limits.binc) or 0.0
    clock = float(clock)
    mtg = limits.movestogo if limits.movestogo else DEFAULT_MTG
    mtg = max(1, min(int(mtg), 80))
    left = max(0.0, clock - move_overhead)
    soft = left / mtg + 0.75 * inc
    if mtg == 1:
        hard = left
    else:
        hard = min(4.0 * soft, left / 3.0 + inc)
    cap = clock - move_overhead - SAFETY_MS
    soft = min(soft, cap)
    hard = min(hard, cap)
    hard = max(1.0, hard)
    soft = min(max(1.0, soft), hard)
    return soft, hard
