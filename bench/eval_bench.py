"""``cardinal bench eval [--variant V] [--repeat N] [--rounds K]``: the cost of the static evaluation.

Evaluates every position of the variant's bench set and opening suite (the positions of
``cardinal bench`` and ``bench/suites/openings-<variant>.epd``, so about 530) ``N`` times
(default 200) in one compiled loop, ``K`` rounds (default 3), and prints the best round
as nanoseconds per evaluation, timed in CPU seconds of this process (``time.process_time``),
so other work on the machine slows the figure little. The search pays this
at most nodes, so an evaluation term's cost shows here at once, without the noise of
searches whose trees the new term also changes: run it in two checkouts, one after the
other, and compare. A variant whose weights leave an optional term unweighted does not
pay for it (see ``search.eval``).

Output, one line per variant::

    grand        evaluations    106200  ns/eval     690  (531 positions x 200, best of 3)
"""
from __future__ import annotations

import sys
import time

import numpy as np

from bench.args import OneLineParser
from engine.rules.jit import njit
from search.eval import build_eval, evaluate, WS_SIZE

DEFAULT_REPEAT = 200
DEFAULT_ROUNDS = 3


@njit(cache=True, nogil=True)
def _eval_loop(boards, sts, vt, ev, ws, repeat):
    """Evaluate each row of ``boards``/``sts`` (``int32[P, *]``, one position per row) ``repeat``
    times; returns the sum of the scores (so the work cannot be optimised away)."""
    total = 0
    for _ in range(repeat):
        for i in range(boards.shape[0]):
            total += evaluate(boards[i], sts[i], vt, ev, ws)
    return total


def positions(variant: str):
    """``(boards, sts, vt)``: the bench positions and opening suite of ``variant`` as stacked arrays."""
    from bench.search_bench import POSITIONS
    from bench.tune import opening_fens
    from engine.rules.position import Position
    fens = list(POSITIONS[variant]) + [f for f, _ in opening_fens(variant)]
    ps = [Position.from_fen(f, variant) for f in fens]
    return np.stack([p.board for p in ps]), np.stack([p.st for p in ps]), ps[0].vt


def eval_cost(variant: str, repeat: int = DEFAULT_REPEAT, rounds: int = DEFAULT_ROUNDS) -> tuple[float, int, int]:
    """``(ns_per_eval, positions, checksum)``: the best of ``rounds`` timed loops."""
    boards, sts, vt = positions(variant)
    ev = build_eval(variant)
    ws = np.zeros(WS_SIZE, np.int32)
    chk = _eval_loop(boards[:1], sts[:1], vt, ev, ws, 1)     # compile / load outside the timing
    best = float("inf")
    for _ in range(rounds):
        t0 = time.process_time()     # CPU time: a busy machine's time slices are not counted
        chk = _eval_loop(boards, sts, vt, ev, ws, repeat)
        best = min(best, time.process_time() - t0)
    return best * 1e9 / (len(boards) * repeat), len(boards), int(chk)


def main(argv) -> int:
    import variants as _variants
    ap = OneLineParser(prog="cardinal bench eval", description=__doc__.split("\n\n")[1])
    ap.add_argument("--variant", default=None, help=f"{', '.join(_variants.all_names())} "
                    f"(default: {', '.join(_variants.names())})")
    ap.add_argument("--repeat", type=int, default=DEFAULT_REPEAT,
                    help=f"evaluations of each position per round (default {DEFAULT_REPEAT})")
    ap.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS, help=f"timed rounds, best kept (default {DEFAULT_ROUNDS})")
    a = ap.parse_args(argv)
    if not 1 <= a.repeat <= 1_000_000:
        print(f"error: --repeat must be 1..1000000, not {a.repeat}", file=sys.stderr)
        return 2
    if not 1 <= a.rounds <= 100:
        print(f"error: --rounds must be 1..100, not {a.rounds}", file=sys.stderr)
        return 2
    try:
        names = [_variants.get(a.variant).name] if a.variant else list(_variants.names())
    except KeyError as e:
        print(f"error: {e.args[0] if e.args else e}", file=sys.stderr)
        return 2
    for name in names:
        ns, n, _ = eval_cost(name, a.repeat, a.rounds)
        print(f"{name:<12} evaluations {n * a.repeat:>9}  ns/eval {ns:>7.0f}  "
              f"({n} positions x {a.repeat}, best of {a.rounds})", flush=True)
    return 0
