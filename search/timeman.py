"""Time management: how long to think, from the clock.

``allocate(limits, side, move_overhead) -> (soft_ms, hard_ms)``:

* ``soft``: the driver starts no new iteration after it (an iteration that
  starts later would rarely finish); ``hard``: a timer thread sets the stop flag
  then. ``None`` means no limit (depth/nodes/infinite/ponder searches).
* ``movetime``: ``soft`` is None and ``hard`` is ``movetime - overhead``: the search
  thinks for the whole time it was given (UCI: "search exactly x mseconds"; Stockfish
  applies no time management to ``movetime`` either), stopping early only with one legal
  move or a mate proven well inside the horizon.
* clock: with ``mtg`` = moves to go (``movestogo``, else 30 assumed; at least 1) and
  ``left = time - move_overhead`` (the overhead, GUI/OS lag, is kept in reserve)
  ``soft = left/mtg + 0.75*inc`` and ``hard = min(4*soft, left/3 + inc)`` (never about a third
  of the clock on one move in sudden death; the whole slice when ``movestogo`` = 1),
  both capped at ``time - overhead - 10 ms`` so the flag cannot fall. Floors of 1 ms keep
  a move coming even on an empty clock.

``next_iteration_ok(elapsed, soft, falling_cp, changes, stable_depths) -> bool``: between
iterations, whether to start another one. After Stockfish 11's ``search.cpp`` ("Do we have
time for the next iteration?"): the base is ``TM_NEXT_ITER_PCT`` % of ``soft`` (the next iteration
takes about as long as all before it, so one started later would rarely finish inside
``soft``), scaled up when the score falls (against the last iteration and the last move) and
when the best move keeps changing, and down when it has not changed for several iterations.
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
        return None, t
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


# --- between iterations (Stockfish 11's fallingEval, bestMoveInstability, timeReduction) ---
# The factors are tunable (search.params, kind 'time', in percent or per mille):
#   TM_NEXT_ITER_PCT        base share of soft: an iteration costs about what all earlier ones did
#   TM_FALLING_PERMILLE_CP  more time per cp the score fell (sum of both drops; SF11's 6/354 per unit is ~0.036/cp)
#   TM_FALLING_MAX_PCT      at most this much time for a falling score (SF11: 1.5/0.51 ~ 2.9)
#   TM_FALLING_MIN_PCT      a rising score saves a little (SF11 clamps at 0.5/0.51 ~ 0.98)
#   TM_STABLE_DEPTHS        best move unchanged for this many iterations: stable (SF11: 9, deeper searches)
#   TM_STABLE_PCT           ... then stop sooner (SF11: about 1/1.9)
CHANGE_DECAY = 0.5        # best-move changes halve each iteration, as SF11's totBestMoveChanges


def next_iteration_ok(elapsed_ms: float, soft_ms: float, falling_cp: float, changes: float,
                      stable_depths: int, tuned: dict | None = None) -> bool:
    """Whether to start another iteration at ``elapsed_ms`` into a move with budget ``soft_ms``.

    ``falling_cp``: how far the score fell, in centipawns: (last move's score - this
    iteration's) + (last iteration's - this one's), mate scores clipped by the caller;
    ``changes``: decayed count of best-move changes (see ``CHANGE_DECAY``);
    ``stable_depths``: iterations since the best move last changed; ``tuned``: the
    parameter values (:mod:`search.params`; None: the defaults).
    """
    t = tuned if tuned is not None else _defaults()
    falling = min(t["TM_FALLING_MAX_PCT"] / 100, max(t["TM_FALLING_MIN_PCT"] / 100,
                                                     1.0 + t["TM_FALLING_PERMILLE_CP"] / 1000 * falling_cp))
    instability = 1.0 + changes
    reduction = t["TM_STABLE_PCT"] / 100 if stable_depths >= t["TM_STABLE_DEPTHS"] else 1.0
    return elapsed_ms < t["TM_NEXT_ITER_PCT"] / 100 * soft_ms * falling * instability * reduction


def _defaults() -> dict:
    from .params import defaults
    return defaults()
