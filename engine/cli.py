"""The `cardinal` command (also `python -m engine`).

Sub-commands:

    cardinal                      protocol loop on stdin/stdout (UCI or XBoard, chosen by the first command)
    cardinal perft DEPTH [--variant V] [--fen FEN] [--divide]
    cardinal bench [--variant V] [--depth D]     search node-count signature
    cardinal bench perft|epd|startup|smp ...     benchmark suites (see bench/; smp: 1 vs N threads, time to depth)
    cardinal match ...                           engine-vs-engine matches (bench/match.py)
    cardinal warmup                              compile and cache every numba function
    cardinal serve [--host H] [--port P] [--open] [--max-engines N]   browser board (engine/web/)

Heavy imports (numpy, numba) happen inside the sub-commands, so the protocol
loop can answer `uci` before numba is loaded. Errors in user input print one
line to stderr and exit with status 2 (no traceback).
"""
from __future__ import annotations

import argparse
import sys

import variants   # plain data, cheap to import


MAX_PERFT_DEPTH = 20   # deeper runs never finish from any real position


def _perft(argv) -> int:
    ap = argparse.ArgumentParser(prog="cardinal perft", description="Count leaf nodes of the legal move tree "
                                 "(bulk counting: the last ply counts legal moves without playing them).")
    ap.add_argument("depth", type=int)
    ap.add_argument("--variant", default="chess", help=f"{', '.join(variants.all_names())} (default chess)")
    ap.add_argument("--fen", default=None, help="start FEN (default: the variant's start position)")
    ap.add_argument("--divide", action="store_true", help="print the count below each root move first")
    a = ap.parse_args(argv)
    import time
    from engine.rules.position import Position
    try:
        pos = Position.from_fen(a.fen, a.variant)
    except (ValueError, KeyError) as e:
        print(f"error: {e.args[0] if e.args else e}", file=sys.stderr)
        return 2
    for w in pos.warnings:
        print(f"warning: {w}", file=sys.stderr)
    if not 1 <= a.depth <= MAX_PERFT_DEPTH:
        print(f"error: depth must be 1..{MAX_PERFT_DEPTH}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    if a.divide:
        total = 0
        for mv, n in pos.divide(a.depth):
            print(f"{mv}: {n}")
            total += n
        print()
    else:
        total = pos.perft(a.depth)
    dt = time.perf_counter() - t0
    print(f"Nodes searched: {total}")
    print(f"Time: {dt * 1000:.0f} ms, {total / max(dt, 1e-9):.0f} nodes/second")
    return 0


def _bench(argv) -> int:
    if argv and argv[0] == "perft":
        from bench.perft import main
        return main(argv[1:])
    if argv and argv[0] == "epd":
        from bench.epd import main
        return main(argv[1:])
    if argv and argv[0] == "startup":
        from bench.startup import main
        return main(argv[1:])
    if argv and argv[0] == "smp":
        from bench.smp import main
        return main(argv[1:])
    from bench.search_bench import main
    return main(argv)


def _match(argv) -> int:
    from bench.match import main
    return main(argv)


def _warmup(argv) -> int:
    from engine.warmup import main
    return main(argv)


def _serve(argv) -> int:
    from engine.web.server import main
    return main(argv)


COMMANDS = {"perft": _perft, "bench": _bench, "match": _match, "warmup": _warmup, "serve": _serve}


def main(argv=None) -> int:
    """Entry point of the ``cardinal`` console script; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:
        from engine.protocol.loop import run
        return run()
    if argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if argv[0] in ("-V", "--version"):
        from engine import __version__
        print(f"Cardinal {__version__}")
        return 0
    cmd = COMMANDS.get(argv[0])
    if cmd is None:
        print(f"error: unknown command {argv[0]!r} (try: cardinal --help)", file=sys.stderr)
        return 2
    try:
        return cmd(argv[1:]) or 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
