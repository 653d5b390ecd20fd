"""``cardinal bench [--variant V] [--depth D] [--compare-fsf]``: the search node-count signature.

Searches a fixed set of positions per variant (the start position plus ten
middlegame/endgame positions from fixed engine self-play) to a fixed depth with a fresh
hash (16 MiB), single-threaded, and prints a line per variant, then the totals
``Nodes searched: N`` and ``Nodes/second: N``. The node count is deterministic:
it changes only when the search or evaluation changes (quote it as ``Bench: N``
in commit messages of functional changes).

``--evalfile FILE`` evaluates with that NNUE network file (:mod:`search.nnue`) instead of the
linear evaluation, on the net's variant (``--variant`` may only name that one): its node count is
not the signature, and with ``--compare-fsf`` it gives the network's speed.

``--stop-latency N`` instead measures how fast a search obeys ``stop()``: N
infinite searches (positions cycled over all variants) are stopped after
200-400 ms, and the time from ``stop()`` to ``on_done`` is reported (ms).

``--compare-fsf`` also runs Fairy-Stockfish (found on ``PATH`` or in
``/usr/games``, 1 thread, 16 MiB hash, a new game per position) on the same chess, grand
or capablanca positions to the same depth and prints its nps side by side (it has no
knightrelay: asking for that variant is an error; a Fairy-Stockfish that is missing or
fails is an error too, exit status 2 before the run or 1 after it), then
the nps ratio (Cardinal / Fairy-Stockfish) and the nodes-to-depth ratio. The two engines
take turns position by position, the first of each pair alternating, so a change in the
machine's load hits both alike (on a busy 2-core machine one engine run after the other
can differ by 10-20% from load alone). ``--rounds K`` repeats the set K times and also
prints each round's ratio and their median. Cardinal's time is the wall time around each
whole search (its start-up included, about 5 ms per position), Fairy-Stockfish's the time
it reports itself; the interleaved line, not the signature line above it, is the one to
compare.
"""
from __future__ import annotations

import statistics
import sys
import time

from bench.args import KeepLinesFormatter, OneLineParser
from bench.engines import Died, EngineError, EngineSpec, NoReply, find_fairy_stockfish, start_engine

DEFAULT_DEPTH = 7
FSF_VARIANTS = ("chess", "grand", "capablanca")   # bench variants Fairy-Stockfish plays (it has no knightrelay)
FSF_TIMEOUT = 600.0   # s for one Fairy-Stockfish search

import variants as _variants

# Bench positions are variant data (each record's ``bench_positions``; None = start position).
POSITIONS = {name: list(v.bench_positions) for name, v in _variants.VARIANTS.items()}


def bench_variant(variant: str, depth: int, verbose: bool = False, net=None):
    """Search every bench position of ``variant`` to ``depth`` (with the NNUE network ``net``,
    if given); returns (nodes, seconds)."""
    total, secs = 0, 0.0
    for fen in POSITIONS[variant]:
        last = cardinal_position(variant, fen, depth, net)
        secs += last["seconds"]
        total += last.get("nodes", 0)
        if verbose:
            print(f"  {last['fen']}  nodes {last.get('nodes')}  score {last.get('score')}", file=sys.stderr)
    return total, secs


def cardinal_position(variant: str, fen: str | None, depth: int, net=None) -> dict:
    """Cardinal on one position to ``depth`` with a fresh 16 MiB hash, history and killers
    (deterministic node counts), evaluating with the NNUE network ``net`` if given: its last
    info dict, plus ``seconds`` (wall time around the whole search) and ``fen``."""
    from engine.rules.position import Position
    from search.driver import Searcher, Limits
    s = Searcher(16)
    if net is not None:
        s.set_net(net)
    pos = Position.from_fen(fen, variant)
    last = {}
    t0 = time.perf_counter()
    s.start(pos, Limits(depth=depth), lambda i: last.update(i), lambda b, p: None)
    s.wait()
    last.update(seconds=time.perf_counter() - t0, fen=pos.fen())
    return last


def fsf_position(eng, variant: str, fen: str | None, depth: int) -> tuple[int, float]:
    """Fairy-Stockfish (started engine ``eng``, variant set) on one position to ``depth``, as a
    new game: (nodes, seconds) from its own final info line."""
    from engine.rules.position import Position
    eng.new_game()
    eng.position(fen or Position.from_fen(None, variant).fen())
    infos = [i for i in eng.search(f"depth {depth}", FSF_TIMEOUT).infos if "nodes" in i and "time" in i]
    if not infos:
        raise EngineError(f"no 'info ... nodes ... time' line before its bestmove (position {fen or 'startpos'})")
    return infos[-1]["nodes"], infos[-1]["time"] / 1000.0


def compare_fsf(variant: str, depth: int, exe: str, rounds: int = 1, net=None):
    """Both engines on every bench position of ``variant``, taking turns position by position
    (who goes first alternates), ``rounds`` times over.

    Returns ``[(cardinal_nodes, cardinal_s, fsf_nodes, fsf_s), ...]``, one tuple per round.
    Raises the engine errors of :mod:`bench.engines` if Fairy-Stockfish fails.
    """
    out = []
    with start_engine(EngineSpec(cmd=[exe], name="Fairy-Stockfish",
                                 options={"Threads": "1", "Hash": "16"})) as eng:
        eng.set_variant(variant)
        k = 0
        for _ in range(rounds):
            cn = cs = fn = fs = 0
            for fen in POSITIONS[variant]:
                if k % 2:
                    fn_, fs_ = fsf_position(eng, variant, fen, depth)
                    mine = cardinal_position(variant, fen, depth, net)
                else:
                    mine = cardinal_position(variant, fen, depth, net)
                    fn_, fs_ = fsf_position(eng, variant, fen, depth)
                k += 1
                cn, cs, fn, fs = cn + mine.get("nodes", 0), cs + mine["seconds"], fn + fn_, fs + fs_
            out.append((cn, cs, fn, fs))
    return out


def print_comparison(variant: str, depth: int, rounds: list) -> None:
    """The side-by-side lines of :func:`compare_fsf`'s result."""
    cn = sum(r[0] for r in rounds)
    cs = sum(r[1] for r in rounds)
    fn = sum(r[2] for r in rounds)
    fs = sum(r[3] for r in rounds)
    c_nps, f_nps = cn / max(cs, 1e-9), fn / max(fs, 1e-9)
    print(f"{'  cardinal':12s} depth {depth}: nodes {rounds[0][0]:10d}  time {cs * 1000 / len(rounds):8.0f} ms  "
          f"nps {c_nps:9.0f}   (interleaved with Fairy-Stockfish)")
    print(f"{'  fairy-sf':12s} depth {depth}: nodes {rounds[0][2]:10d}  time {fs * 1000 / len(rounds):8.0f} ms  "
          f"nps {f_nps:9.0f}")
    line = f"  {variant} nps ratio (Cardinal / Fairy-Stockfish): {c_nps / max(f_nps, 1e-9):.3f}"
    if len(rounds) > 1:
        per = sorted((c_n / max(c_s, 1e-9)) / max(f_n / max(f_s, 1e-9), 1e-9) for c_n, c_s, f_n, f_s in rounds)
        line += (f" over {len(rounds)} rounds; per round {' '.join(f'{x:.3f}' for x in per)}, "
                 f"median {statistics.median(per):.3f}")
    print(line)
    print(f"  {variant} nodes-to-depth ratio (Cardinal / Fairy-Stockfish): {rounds[0][0] / max(rounds[0][2], 1):.2f}")


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


def main(argv, epilog: str | None = None) -> int:
    """``cardinal bench``; ``epilog``: the text after the options in ``--help`` (the
    command line lists the other benchmarks there)."""
    ap = OneLineParser(prog="cardinal bench", description=" ".join(__doc__.split("\n\n")[1].split()),
                       epilog=epilog, formatter_class=KeepLinesFormatter)
    ap.add_argument("--variant", default=None, help=f"{', '.join(_variants.all_names())} "
                    f"(default: {', '.join(_variants.names())})")
    ap.add_argument("--depth", type=int, default=DEFAULT_DEPTH, help=f"search depth (default {DEFAULT_DEPTH})")
    ap.add_argument("--compare-fsf", action="store_true",
                    help=f"also run Fairy-Stockfish on the same positions ({', '.join(FSF_VARIANTS)})")
    ap.add_argument("--rounds", type=int, default=1,
                    help="with --compare-fsf: repeat the interleaved comparison K times (default 1)")
    ap.add_argument("--verbose", action="store_true", help="per-position lines on stderr")
    ap.add_argument("--evalfile", metavar="FILE", default=None,
                    help="evaluate with this NNUE network file (on its variant; not the signature)")
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
    net = None
    if a.evalfile is not None:
        from search import nnue as N
        try:
            net = N.read_net(a.evalfile, names[0] if a.variant else None)
        except N.NnueError as e:
            print(f"error: --evalfile: {e}", file=sys.stderr)
            return 2
        names = [N.read_variant(a.evalfile)] if not a.variant else names
    if a.depth < 1 or a.depth > 60:
        print("error: depth must be 1..60", file=sys.stderr)
        return 2
    if not 1 <= a.rounds <= 100:
        print("error: --rounds must be 1..100", file=sys.stderr)
        return 2
    if a.rounds != 1 and not a.compare_fsf:
        print("error: --rounds repeats the --compare-fsf comparison; give --compare-fsf too", file=sys.stderr)
        return 2
    exe = None
    if a.compare_fsf:
        if a.variant and names[0] not in FSF_VARIANTS:
            print(f"error: --compare-fsf: Fairy-Stockfish does not play {names[0]} "
                  f"(it is compared on {', '.join(FSF_VARIANTS)})", file=sys.stderr)
            return 2
        exe = find_fairy_stockfish()
        if exe is None:
            print("error: --compare-fsf: fairy-stockfish not found on PATH or in /usr/games "
                  "(apt-get install fairy-stockfish)", file=sys.stderr)
            return 2
    from search.driver import Searcher
    Searcher(1).warm_up()  # compile/load outside the timed part
    total, secs = 0, 0.0
    failed = False
    for v in names:
        c0 = time.process_time()
        n, t = bench_variant(v, a.depth, a.verbose, net)
        cpu = time.process_time() - c0   # CPU seconds: a fairer speed figure on a busy machine
        if v in _variants.BENCH_SIGNATURE:
            total += n
            secs += t
        print(f"{v:12s} depth {a.depth}: nodes {n:10d}  time {t * 1000:8.0f} ms  nps {n / max(t, 1e-9):9.0f}"
              f"  (per CPU second {n / max(cpu, 1e-9):9.0f})")
        if exe is not None and v in FSF_VARIANTS:
            try:
                print_comparison(v, a.depth, compare_fsf(v, a.depth, exe, a.rounds, net))
            except (EngineError, Died, NoReply) as e:
                print(f"error: --compare-fsf: Fairy-Stockfish failed: {e or 'no answer'}", file=sys.stderr)
                failed = True
    if net is not None:
        print(f"(evaluated with the network {a.evalfile}: not the Bench signature)")
    print(f"Nodes searched: {total}")   # the signature: only variants in variants.BENCH_SIGNATURE are added
    print(f"Nodes/second: {int(total / max(secs, 1e-9))}")
    return 1 if failed else 0
