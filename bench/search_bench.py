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

``--compare-fsf`` also runs Fairy-Stockfish (``/usr/games/fairy-stockfish``,
1 thread, 16 MiB hash) on the same grand/chess positions to the same depth and prints its nps
side by side (it has no knightrelay).
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time

DEFAULT_DEPTH = 7

POSITIONS = {
    "chess": [
        None,
        "r1bqkb1r/1ppppppp/7n/p7/8/PP2P3/2QPNPPP/RNB1KB1R w KQkq - 1 6",
        "r1b1kb1r/1ppp1pp1/7p/pq2p3/5P2/P1N1P3/3PN1BP/R1B2K1R w kq - 1 14",
        "3k1r2/1B1p4/1pp2P1p/p4p2/8/P3P2P/1B1PNK2/R6R w - - 1 24",
        "5r2/2k2P1R/3p4/1p6/p1p1B3/P3P2P/1B1PNK2/R7 w - - 0 34",
        "r1bqkb1r/pppn1ppp/8/3np3/Q7/3P1N2/PP2PPPP/RNB1KB1R w KQkq - 0 6",
        "r2kr3/pppbbppp/8/2nQ2B1/6N1/3P2P1/PP2PP1P/RN2KB1R w KQ - 1 14",
        "rnbq1bnr/pp1p1kpp/4pp2/2Q5/8/2NBP3/PPPP1PPP/R1B1K1NR w KQ - 1 6",
        "rnbk2nr/6pB/1p2pp2/pNbp3Q/P7/1P2PN2/2PP1PPP/R3K2R w KQ - 2 14",
        "r2k2r1/8/5ppQ/pBpp1b2/P3p3/NPPnPNPP/4KP2/R6R w - - 0 24",
        "1rk2r2/3b4/8/p7/Pp2p3/NPP1P1PP/3K1n2/R7 w - - 0 34",
    ],
    "grand": [
        None,
        "r8r/2bBkcabn1/ppp2p2pp/n2pp5/7p2/7P2/3P2P3/PPP1PP2PP/1N1QKCABN1/R8R w - - 1 6",
        "4r2r2/2b1kc2n1/ppp5Bp/n2ppp4/5a1p2/7P2/P1PPC1P3/1Q2PP2PP/1N2K1ABN1/R8R w - - 3 14",
        "1R8/7rn1/Q1pck4p/3p1p4/5p1p2/7P2/P1PP2P3/3NPP2PP/4K1A1N1/9R w - - 0 24",
        "1R8/2k1c2r2/4Q5/3p1p2n1/2p2p1p2/7P2/P1PP2P3/3NPP2PP/3KA3N1/9R w - - 7 34",
        "r8r/1nbqkc2n1/ppp1pp2pp/5a1p2/3p6/10/3P6/PbP1PPPPPP/1NBQKCABN1/R8R w - - 2 6",
        "r8r/1n1qkc2n1/ppp1pp3p/7p2/5b2p1/2p7/3P1P4/P3PKP1PP/1NQ4BN1/R8R w - - 0 14",
        "r8r/1n2k5/pp2ppn2p/2p1b2c2/8p1/10/P2P1P4/3NPKP1PP/8N1/R5B2R w - - 4 24",
        "7r2/1n2k5/pp2ppn2p/2p7/8p1/7c2/P2P1P4/3NP1P1bP/6KB2/7R2 w - - 5 34",
        "r2r6/1nbqk3n1/pppppp1ppp/5ac3/6B3/6P3/3P6/PQP1PP1PPP/1N2KCABN1/R8R w - - 1 6",
        "r1qr4k1/1nb5n1/p1pppp2Qp/B9/10/6P3/3P3C2/P1P1PP1PPP/1N2K1A1N1/R8R w - - 3 14",
    ],
    "knightrelay": [
        None,
        "rnbqk1nr/p2p1p1p/2p1p1p1/1pb5/8/1PN1P3/PPP2PPP/R1BQKBNR w kq - 2 6",
        "rnb1k2r/p2pn2p/2p1p3/1pbq2p1/4N3/1P1P2PN/PPP1B2P/R1B2K1R w kq - 3 14",
        "rnb1k1r1/p2pn3/2p1p2p/1p4p1/7q/1PB5/PP1NPN1P/3RK2R w - - 0 24",
        "rn3k2/8/3ppN1R/p3p1p1/Pp3n2/1P4P1/1P2PN2/4K3 w - - 3 34",
        "r1bqk1nr/pppp1ppp/2n5/8/8/b1N1P3/2PP1PPP/R2QKBNR w KQkq - 0 6",
        "3qk2r/r1p2p1p/2npbnp1/1p1B4/4P3/1PN2N2/2P2PPP/3QK2R w Kk - 1 14",
        "1q2rk2/r4p2/2np1Q2/3N2pn/1p6/1P3N2/2P2PP1/5RK1 w - - 4 24",
        "8/5p2/R1np4/3N3n/1k4p1/1P3N2/2p2PP1/6K1 w - - 0 34",
        "r1bqk2r/ppppbpp1/2n1pn2/7p/6Q1/2PBP3/PP1P1PPP/RNB1K1NR w KQkq - 0 6",
        "r2q1k1r/ppp1b1p1/2n2p2/3p1b1p/3Q4/1PnBPP1N/P2P2PP/RNB1K2R w KQ - 2 14",
    ],
}


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
    p = subprocess.Popen([exe], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    def send(s):
        p.stdin.write(s + "\n")
        p.stdin.flush()
    def until(prefix):
        lines = []
        while True:
            ln = p.stdout.readline()
            if not ln:
                raise RuntimeError("fairy-stockfish exited")
            lines.append(ln)
            if ln.startswith(prefix):
                return lines
    send("uci"); until("uciok")
    send(f"setoption name UCI_Variant value {variant}")
    send("setoption name Threads value 1")
    send("setoption name Hash value 16")
    nodes, ms = 0, 0
    for fen in POSITIONS[variant]:
        fen = fen or Position.from_fen(None, variant).fen()
        send("ucinewgame"); send("isready"); until("readyok")
        send(f"position fen {fen}")
        send(f"go depth {depth}")
        lines = until("bestmove")
        last = [ln for ln in lines if ln.startswith("info") and " nodes " in ln][-1].split()
        nodes += int(last[last.index("nodes") + 1])
        ms += int(last[last.index("time") + 1])
    send("quit")
    p.wait(5)
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
        names = ["chess", "grand", "knightrelay"]
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
        total += n
        secs += t
        print(f"{v:12s} depth {a.depth}: nodes {n:10d}  time {t * 1000:8.0f} ms  nps {n / max(t, 1e-9):9.0f}"
              f"  (per CPU second {n / max(cpu, 1e-9):9.0f})")
        if a.compare_fsf and v in ("grand", "chess"):
            exe = shutil.which("fairy-stockfish") or "/usr/games/fairy-stockfish"
            try:
                fn, ft = fsf_variant(v, a.depth, exe)
                print(f"{'  fairy-sf':12s} depth {a.depth}: nodes {fn:10d}  time {ft * 1000:8.0f} ms  "
                      f"nps {fn / max(ft, 1e-9):9.0f}")
            except (OSError, RuntimeError, ValueError, IndexError) as e:
                print(f"  fairy-stockfish unavailable: {e}", file=sys.stderr)
    print(f"Nodes searched: {total}")
    print(f"Nodes/second: {int(total / max(secs, 1e-9))}")
    return 0
