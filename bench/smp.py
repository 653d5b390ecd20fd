"""``cardinal bench smp``: time to depth of the Lazy SMP search, 1 thread against N.

For each bench position of the chosen variants (each variant record's
``bench_positions``; the start position first) one single-threaded search runs
for ``--time`` seconds (an infinite search stopped then); the deepest iteration
it completed, D, and the time it completed it at (the ``time`` of its ``info``
line) are noted. Then a search with ``--threads`` threads runs ``go depth D`` on
the same position, and the time its main thread completes depth D is noted.
Every search starts from a fresh Searcher (empty hash, 16 MiB by default).
Prints a line per position and the totals: the speed-up is the summed
1-thread time over the summed N-thread time (and the geometric mean of the
per-position ratios), next to the nodes-per-second ratio (how much more work
the N threads did per second: on a busy machine the speed-up cannot exceed it)
and the cores each search got (this process's CPU time over its wall time).

The wall-clock speed-up needs N free cores. The column ``node`` does not: it is
the nodes the single thread searched to complete depth D over the nodes the
N-thread search's main thread searched to complete it (the ``thread_nodes`` of
its ``info``). Since the threads run at the same speed when each has a core,
that is the speed-up N free cores give; on a busy machine it is the figure to
trust, and the wall-clock one shows what the load left of it.

Wall-clock figures: run it on a quiet machine (``uptime`` load well below the
core count); the load average at the start and end is printed with the result.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import threading
import time

import variants as _variants

DEFAULT_VARIANTS = ("grand", "chess")
DEFAULT_TIME = 6.0          # s of the 1-thread search per position
DEFAULT_THREADS = 2
TIMEOUT_FACTOR = 4.0        # the N-thread search is stopped after this many times the 1-thread time


def _search(pos, limits, threads: int, hash_mb: int, stop_after: float | None):
    """One search on a fresh Searcher: (the main line's ``info`` dicts without bound lines,
    CPU seconds of this process over wall seconds, i.e. the cores it got)."""
    from search.driver import Searcher
    s = Searcher(hash_mb)
    s.threads = threads
    infos = []
    done = threading.Event()
    w0, c0 = time.perf_counter(), time.process_time()
    s.start(pos, limits, infos.append, lambda b, p: done.set())
    if not done.wait(stop_after):
        s.stop()
    s.wait()
    cores = (time.process_time() - c0) / max(time.perf_counter() - w0, 1e-9)
    return [i for i in infos if i.get("multipv") == 1 and i.get("bound") is None], cores


def time_to_depth(variant: str, fen, seconds: float, threads: int, hash_mb: int = 16) -> dict:
    """One position: {'depth', 't1', 't2', 'nodes1', 'main2', 'nps1', 'nps2', 'cores1', 'cores2'}
    (times in s; ``main2``: the N-thread search's main thread nodes at depth D; t2 and main2
    None if it did not reach the depth within ``TIMEOUT_FACTOR`` times t1)."""
    from engine.rules.position import Position
    from search.driver import Limits, MAX_DEPTH
    pos = Position.from_fen(fen, variant)
    one, cores1 = _search(pos, Limits(infinite=True), 1, hash_mb, seconds)
    if not one:
        raise RuntimeError(f"no iteration completed in {seconds:g} s: {pos.fen()}")
    depth = int(one[-1]["depth"])
    # the first info of a depth is its completion (the watcher repeats it once a second later on)
    last = next(i for i in one if i["depth"] == depth)
    t1 = last["time"] / 1000.0
    if depth >= MAX_DEPTH:   # the search ran out of depths (a mate or a bare ending): nothing to time
        return dict(depth=depth, t1=t1, t2=None, nodes1=last["nodes"], main2=None, nps1=last["nps"], nps2=0,
                    cores1=cores1, cores2=0.0, ended=True)
    many, cores2 = _search(pos, Limits(depth=depth), threads, hash_mb, max(1.0, TIMEOUT_FACTOR * t1))
    hit = [i for i in many if i["depth"] == depth]
    t2 = hit[0]["time"] / 1000.0 if hit else None
    main2 = hit[0]["thread_nodes"][0] if hit else None
    nps2 = many[-1]["nps"] if many else 0
    return dict(depth=depth, t1=t1, t2=t2, nodes1=last["nodes"], main2=main2, nps1=last["nps"], nps2=nps2,
                cores1=cores1, cores2=cores2, ended=False)


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def main(argv) -> int:
    ap = argparse.ArgumentParser(prog="cardinal bench smp", description=__doc__.split("\n\n")[1])
    ap.add_argument("--variant", action="append", default=None,
                    help=f"variant (repeatable; default {' and '.join(DEFAULT_VARIANTS)})")
    ap.add_argument("--time", type=float, default=DEFAULT_TIME,
                    help=f"seconds of the 1-thread search per position (default {DEFAULT_TIME:g})")
    ap.add_argument("--threads", type=int, default=DEFAULT_THREADS,
                    help=f"threads of the compared search (default {DEFAULT_THREADS})")
    ap.add_argument("--positions", type=int, default=0, help="first K bench positions per variant (default all)")
    ap.add_argument("--hash", type=int, default=16, help="MiB per search (default 16)")
    a = ap.parse_args(argv)
    from search.driver import THREADS_MAX, Searcher
    names = []
    for v in a.variant or DEFAULT_VARIANTS:
        try:
            names.append(_variants.get(v).name)
        except KeyError as e:
            print(f"error: {e.args[0]}", file=sys.stderr)
            return 2
    if not 2 <= a.threads <= THREADS_MAX:
        print(f"error: --threads must be 2..{THREADS_MAX}", file=sys.stderr)
        return 2
    if not 0.1 <= a.time <= 3600:
        print("error: --time must be 0.1..3600 s", file=sys.stderr)
        return 2
    Searcher(1).warm_up()   # compile/load outside the timed part
    print(f"cardinal bench smp: 1 vs {a.threads} threads, {a.time:g} s per position at 1 thread, "
          f"hash {a.hash} MiB, {os.cpu_count()} CPUs, load {_load()}")
    n = a.threads
    print(f"{'variant':12s} {'pos':>3s} {'depth':>5s} {'t1 (s)':>8s} {f't{n} (s)':>8s} {'speed-up':>8s} "
          f"{'node':>6s} {'nps1':>8s} {f'nps{n}':>8s} {'cores1':>6s} {f'cores{n}':>6s}")
    sum1 = sum2 = 0.0
    ratios, nps_ratios, cores, node_ratios = [], [], [], []
    missed = 0
    for v in names:
        fens = list(_variants.get(v).bench_positions) or [None]
        if a.positions > 0:
            fens = fens[:a.positions]
        for k, fen in enumerate(fens):
            r = time_to_depth(v, fen, a.time, n, a.hash)
            if r["ended"]:
                print(f"{v:12s} {k:3d} {r['depth']:5d}  (the 1-thread search ran out of depths: skipped)")
                continue
            nps_ratios.append(r["nps2"] / max(r["nps1"], 1))
            cores.append((r["cores1"], r["cores2"]))
            tail = f"{r['nps1']:8d} {r['nps2']:8d} {r['cores1']:6.2f} {r['cores2']:6.2f}"
            if r["t2"] is None:
                missed += 1
                print(f"{v:12s} {k:3d} {r['depth']:5d} {r['t1']:8.2f} {'-':>8s} {'-':>8s} {'-':>6s} "
                      f"{tail}  (depth not reached in {TIMEOUT_FACTOR:g}x t1)")
                continue
            sum1 += r["t1"]
            sum2 += r["t2"]
            ratios.append(r["t1"] / max(r["t2"], 1e-3))
            node_ratios.append(r["nodes1"] / max(r["main2"], 1))
            print(f"{v:12s} {k:3d} {r['depth']:5d} {r['t1']:8.2f} {r['t2']:8.2f} {ratios[-1]:8.2f} "
                  f"{node_ratios[-1]:6.2f} {tail}")
            sys.stdout.flush()
    if not ratios:
        print("no position reached its depth with the threads")
        return 1
    geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
    node_geo = math.exp(sum(math.log(x) for x in node_ratios) / len(node_ratios))
    print(f"Time to depth, {len(ratios)} positions: 1 thread {sum1:.1f} s, {n} threads {sum2:.1f} s: "
          f"speed-up {sum1 / max(sum2, 1e-9):.2f} (geometric mean {geo:.2f})"
          + (f"; {missed} not reached" if missed else ""))
    print(f"Main-thread nodes to depth, 1 thread / {n} threads: geometric mean {node_geo:.2f} "
          f"(the speed-up with {n} free cores)")
    print(f"Nodes/second ratio {n} threads / 1: {sum(nps_ratios) / len(nps_ratios):.2f} (mean); cores used "
          f"{sum(c[0] for c in cores) / len(cores):.2f} / {sum(c[1] for c in cores) / len(cores):.2f} (mean); "
          f"load {_load()}")
    return 0
