"""Perft benchmark: our numba perft against Fairy-Stockfish's ``go perft`` in the
same run, on the same positions (``cardinal bench perft``).

Positions: the grand start position to depth 4, the chess start
position to depth 5 and Kiwipete (Chess Programming Wiki "Perft Results",
position 2) to depth 4. ``--quick`` uses one ply less each (for tests).

Both sides count leaves in bulk at the last ply (our ``movegen.perft``;
Stockfish's ``perft`` counts the move list at depth 1 as well), so nodes per
second are comparable. Fairy-Stockfish is looked up on ``PATH`` as
``fairy-stockfish``, else at ``/usr/games/fairy-stockfish`` (Debian), or given
with ``--fsf PATH`` (:func:`bench.engines.find_fairy_stockfish`); it is driven
over UCI (:class:`bench.engines.UciEngine`): ``uci``, ``setoption name
UCI_Variant value V``, ``isready``, ``position startpos|fen ...``,
``go perft N``, reading until ``Nodes searched: N``. Its timing runs from
sending ``go perft`` to reading that line (process start-up excluded).

Our timing excludes numba compilation/cache loading: a warm-up call runs first
and its time is reported on its own line (``first call``), as is the import
time of the engine (numpy + numba).

Output: a table (position, depth, nodes, our seconds and Mnps, FSF seconds and
Mnps, ratio = our nps / FSF nps, whether the node counts agree). Exit status 0
if every count that could be compared agrees, 1 otherwise, 2 on bad arguments.
``--json FILE`` writes the same results as JSON (a path that cannot be written is
an error before the run; a write that fails at the end, such as a full disk, is one
``error:`` line after the table, exit status 1).
"""
from __future__ import annotations

import argparse
import json
import sys
import time

from bench.engines import Died, EngineError, EngineSpec, NoReply, find_fairy_stockfish, start_engine
from bench.outputs import check_output_path, error_line, write_text

KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"

# (name, variant, fen or None for the start position, depth)
POSITIONS = [
    ("grand start", "grand", None, 4),
    ("chess start", "chess", None, 5),
    ("kiwipete", "chess", KIWIPETE, 4),
]

PERFT_TIMEOUT = 600.0   # s for one Fairy-Stockfish ``go perft``


def fsf_perft(eng, variant: str, fen: str | None, depth: int) -> tuple[int, float]:
    """(nodes, seconds) of Fairy-Stockfish's ``go perft depth`` (timed from sending it)."""
    eng.set_variant(variant)
    eng.position(fen)
    eng.sync()
    t0 = time.perf_counter()
    nodes = eng.perft(depth, PERFT_TIMEOUT)
    return nodes, time.perf_counter() - t0


def _mnps(nodes, seconds):
    return nodes / seconds / 1e6 if nodes and seconds else None


def _fmt(x, spec):
    return "-" if x is None else format(x, spec)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="cardinal bench perft",
                                 description="Perft speed: ours against Fairy-Stockfish (same positions, same run).")
    ap.add_argument("--json", metavar="FILE", help="also write the results as JSON to FILE")
    ap.add_argument("--quick", action="store_true", help="one ply less per position (grand 3, chess 4, kiwipete 3)")
    ap.add_argument("--fsf", metavar="PATH", help="Fairy-Stockfish executable (default: PATH, then /usr/games)")
    ap.add_argument("--no-fsf", action="store_true", help="do not run Fairy-Stockfish")
    ap.add_argument("--repeat", type=int, default=1, metavar="N",
                    help="time each perft N times and keep the fastest (default 1)")
    try:
        a = ap.parse_args([] if argv is None else list(argv))
    except SystemExit as e:
        return int(e.code or 0)
    if a.repeat < 1:
        print("error: --repeat must be at least 1", file=sys.stderr)
        return 2
    err = check_output_path(a.json)
    if err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    fsf_path = None if a.no_fsf else find_fairy_stockfish(a.fsf)
    if a.fsf and fsf_path is None:
        print(f"error: --fsf {a.fsf}: not an executable", file=sys.stderr)
        return 2

    t0 = time.perf_counter()
    from engine.rules.position import Position
    import_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    Position.from_fen(None, "chess").perft(2)   # numba: compile or load from the cache
    first_call_s = time.perf_counter() - t0
    for _, variant, fen, _ in POSITIONS:        # per-position warm-up (tables, caches)
        Position.from_fen(fen, variant).perft(2)

    fsf = None
    if fsf_path:
        try:
            fsf = start_engine(EngineSpec(cmd=[fsf_path], name="Fairy-Stockfish"))
        except EngineError as e:
            print(f"warning: cannot start Fairy-Stockfish: {e}", file=sys.stderr)
            fsf = None

    results = []
    try:
        for name, variant, fen, depth in POSITIONS:
            if a.quick:
                depth -= 1
            pos = Position.from_fen(fen, variant)
            best = None
            for _ in range(a.repeat):
                t0 = time.perf_counter()
                nodes = pos.perft(depth)
                dt = time.perf_counter() - t0
                best = dt if best is None else min(best, dt)
            row = {"position": name, "variant": variant, "fen": fen or pos.fen(), "depth": depth,
                   "nodes": nodes, "seconds": best, "mnps": _mnps(nodes, best),
                   "fsf_nodes": None, "fsf_seconds": None, "fsf_mnps": None, "ratio": None, "match": None}
            if fsf is not None:
                fbest = None
                for _ in range(a.repeat):
                    fnodes, fdt = fsf_perft(fsf, variant, fen, depth)
                    fbest = fdt if fbest is None else min(fbest, fdt)
                row.update(fsf_nodes=fnodes, fsf_seconds=fbest, fsf_mnps=_mnps(fnodes, fbest),
                           match=fnodes == nodes)
                if row["mnps"] and row["fsf_mnps"]:
                    row["ratio"] = row["mnps"] / row["fsf_mnps"]
            results.append(row)
    except (Died, NoReply, EngineError) as e:
        print(f"error: Fairy-Stockfish ({fsf_path}) failed: {e or 'no answer'}", file=sys.stderr)
        return 1
    finally:
        if fsf is not None:
            fsf.quit()

    print(f"engine import (numpy, numba): {import_s:.2f} s; first perft call (numba compile or cache load): "
          f"{first_call_s:.2f} s")
    print(f"Fairy-Stockfish: {(fsf.id_name or 'Fairy-Stockfish') + ' (' + fsf_path + ')' if fsf is not None else 'not run'}")
    head = f"{'position':<12} {'depth':>5} {'nodes':>12} {'ours s':>8} {'ours Mnps':>9} " \
           f"{'FSF s':>8} {'FSF Mnps':>8} {'ratio':>6}  nodes agree"
    print(head)
    print("-" * len(head))
    for r in results:
        agree = "n/a" if r["match"] is None else ("yes" if r["match"] else f"NO (FSF {r['fsf_nodes']})")
        print(f"{r['position']:<12} {r['depth']:>5} {r['nodes']:>12} {r['seconds']:>8.3f} {_fmt(r['mnps'], '9.2f'):>9} "
              f"{_fmt(r['fsf_seconds'], '8.3f'):>8} {_fmt(r['fsf_mnps'], '8.2f'):>8} {_fmt(r['ratio'], '6.2f'):>6}  {agree}")
    if a.json:
        out = {"import_s": import_s, "first_call_s": first_call_s, "fsf": fsf_path if fsf is not None else None,
               "fsf_name": fsf.id_name if fsf is not None else None, "quick": a.quick, "repeat": a.repeat,
               "results": results}
        try:
            write_text(a.json, json.dumps(out, indent=2))
        except OSError as e:           # a full disk, /dev/full: the table above is kept
            print(f"error: {error_line(e)}", file=sys.stderr)
            return 1
    return 1 if any(r["match"] is False for r in results) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
