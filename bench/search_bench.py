"""``cardinal bench [--variant V] [--depth D] [--compare-fsf]``: the search node-count signature.

Searches a fixed set of positions per variant (the start position plus ten
middlegame/endgame positions from fixed engine self-play) to a fixed depth with a fresh
hash (16 MiB), single-threaded, and prints a line per variant, then the totals
``Nodes searched: N`` and ``Nodes/second: N``. The node count is deterministic:
it changes only when the search or evaluation changes (quote it as ``Bench: N``
in commit messages of functional changes).

``--stop-latency N`` instead measures how fast a search obeys ``stop()``: N
infinite searches (positions cycled over all variants) are stopped after
200-400 ms, and the time from ``stop()`` to ``on_done`` is reported (ms).

``--compare-fsf`` also runs Fairy-Stockfish (found on ``PATH`` or in
``/usr/games``, 1 thread, 16 MiB hash) on the same grand/chess positions to the same depth and prints its nps
side by side (it has no knightrelay).
"""
from __future__ import annotations

import argparse
import sys
import time

from bench.engines import Died, EngineError, EngineSpec, NoReply, find_fairy_stockfish, start_engine

DEFAULT_DEPTH = 7
FSF_TIMEOUT = 600.0   # s for one Fairy-Stockfish search

import variants as _variants

# Bench positions are variant data (each record's ``bench_positions``; None = start position).
POSITIONS = {name: list(v.bench_positions) for name, v in _variants.VARIANTS.items()}


def bench_variant(variant: str, depth: int, verbose: bool = False):
    """Search every bench position of ``variant`` to ``depth``; returns (nodes, seconds)."""
    from engine.rules.position import Position
    from search.driver import Searcher, Limits
    total, secs = 0, 0.0
    for fen in POSITIONS[variant]:
        s = Searcher(16)  # fresh hash, history and killers: deterministic node counts
        pos = Position.from_fen(fen, variant)
        last = {}
        t0 = time.perf_counter()
        s.start(pos, Limits(depth=depth), lambda i: last.update(i), lambda b, p: None)
        s.wait()
        secs += time.perf_counter() - t0
        total += last.get("nodes", 0)
        if verbose:
            print(f"  {pos.fen()}  nodes {last.get('nodes')}  score {last.get('score')}", file=sys.stderr)
    return total, secs


def fsf_variant(variant: str, depth: int, exe: str):
    """Fairy-Stockfish on the same positions: (nodes, seconds) summed from its own final info lines."""
    from engine.rules.position import Position
    with start_engine(EngineSpec(cmd=[exe], name="Fairy-Stockfish",
                                 options={"Threads": "1", "Hash": "16"})) as eng:
        eng.set_variant(variant)
        nodes, ms = 0, 0
        for fen in POSITIONS[variant]:
            eng.new_game()
            eng.position(fen or Position.from_fen(None, variant).fen())
            last = [i for i in eng.search(f"depth {depth}", FSF_TIMEOUT).infos if "nodes" in i and "time" in i][-1]
            nodes += last["nodes"]
            ms += last["time"]
    return nodes, ms / 1000.0


def stop_latency(n: int) -> int:
    """Print the stop() -> on_done latency (ms) of ``n`` infinite searches."""
    import threading
    from engine.rules.position import Position
    from search.driver import Searcher, Limits
    s = Searcher(16)
    s.warm_up()
    lat = []
    cases = [(v, f) for v in ("grand", "knightrelay", "chess") for f in POSITIONS[v]]
    for i in range(n):
        v, fen = cases[i % len(cases)]
        pos = Position.from_fen(fen, v)
        done = threading.Event()
        t_done = []
        s.start(pos, Limits(infinite=True), lambda info: None,
                lambda b, p: (t_done.append(time.perf_counter()), done.set()))
        time.sleep(0.2 + 0.2 * (i % 3) / 2)
        t0 = time.perf_counter()
        s.stop()
        done.wait(10)
        s.wait(10)
        lat.append((t_done[0] - t0) * 1000 if t_done else float("inf"))
    lat.sort()
    print(f"stop latency over {n} searches: mean {sum(lat) / n:.1f} ms, median {lat[n // 2]:.1f} ms, "
          f"max {lat[-1]:.1f} ms")
    return 0


def main(argv) -> int:
    ap = argparse.ArgumentParser(prog="cardinal bench", description=__doc__.split("\n\n")[1])
    ap.add_argument("--variant", default=None, help="chess, grand or knightrelay (default: all three)")
    ap.add_argument("--depth", type=int, default=DEFAULT_DEPTH, help=f"search depth (default {DEFAULT_DEPTH})")
    ap.add_argument("--compare-fsf", action="store_true", help="also run Fairy-Stockfish on grand/chess positions")
    ap.add_argument("--verbose", action="store_true", help="per-position lines on stderr")
    ap.add_argument("--stop-latency", type=int, metavar="N", default=0,
                    help="measure stop() -> bestmove latency over N infinite searches instead")
    a = ap.parse_args(argv)
    if a.stop_latency > 0:
        return stop_latency(a.stop_latency)
    from variants import get
    if a.variant:
        try:
            names = [get(a.variant).name]
        except KeyError as e:
            print(f"error: {e.args[0]}", file=sys.stderr)
            return 2
    else:
        names = list(_variants.names())
    if a.depth < 1 or a.depth > 60:
        print("error: depth must be 1..60", file=sys.stderr)
        return 2
    from search.driver import Searcher
    Searcher(1).warm_up()  # compile/load outside the timed part
    total, secs = 0, 0.0
    for v in names:
        c0 = time.process_time()
        n, t = bench_variant(v, a.depth, a.verbose)
        cpu = time.process_time() - c0   # CPU seconds: a fairer speed figure on a busy machine
        if v in _variants.BENCH_SIGNATURE:
            total += n
            secs += t
        print(f"{v:12s} depth {a.depth}: nodes {n:10d}  time {t * 1000:8.0f} ms  nps {n / max(t, 1e-9):9.0f}"
              f"  (per CPU second {n / max(cpu, 1e-9):9.0f})")
        if a.compare_fsf and v in ("grand", "chess"):
            exe = find_fairy_stockfish()
            try:
                if exe is None:
                    raise EngineError("not found on PATH or in /usr/games")
                fn, ft = fsf_variant(v, a.depth, exe)
                print(f"{'  fairy-sf':12s} depth {a.depth}: nodes {fn:10d}  time {ft * 1000:8.0f} ms  "
                      f"nps {fn / max(ft, 1e-9):9.0f}")
            except (EngineError, Died, NoReply, IndexError) as e:
                print(f"  fairy-stockfish unavailable: {e or 'no answer'}", file=sys.stderr)
    print(f"Nodes searched: {total}")   # the signature: only variants in variants.BENCH_SIGNATURE are added
    print(f"Nodes/second: {int(total / max(secs, 1e-9))}")
    return 0
