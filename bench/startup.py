"""``cardinal bench startup``: how fast Cardinal answers a GUI, warm and cold.

For each run a fresh engine process is started (this Python, ``-m engine``,
from the same package as this command); the
clock starts just before the process is spawned. Measured: time to ``uciok``
after ``uci`` is written at once, time to ``readyok`` for an ``isready``
written right after ``uciok`` (GUIs do the same: Cute Chess allows 35 s and
15 s), and time to the first ``bestmove`` for ``position startpos`` +
``go movetime 300`` sent after ``readyok``. *Warm* uses the normal numba cache (populated by a first, unmeasured
run); *cold* gives each run its own empty ``NUMBA_CACHE_DIR`` (a new temporary
directory), so every numba function is compiled again. Prints a table (median,
min, max in seconds) and can write JSON (``--json FILE``).
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import sys
import tempfile
import time

from bench.engines import Died, EngineError, EngineProcess, NoReply, cardinal_command
from bench.outputs import check_output_path, error_line, write_text

TIMEOUT = 600.0   # s per answer: a cold start on a slow machine compiles everything


def measure_once(cmd: list[str], env: dict | None, variant: str | None = None, cwd: str | None = None,
                 timeout: float = TIMEOUT) -> dict:
    """One start: {'uciok': s, 'readyok': s, 'bestmove': s} (seconds from spawn, each taken
    when the line was read). Raises ``RuntimeError`` naming the missing answer."""
    t0 = time.monotonic()
    p = EngineProcess(cmd, "startup", cwd, env)
    out = {}
    try:
        p.send("uci")
        for want in ("uciok", "readyok", "bestmove"):
            deadline = time.monotonic() + timeout
            while True:
                try:
                    t, line = p.readline(deadline)
                except NoReply:
                    raise RuntimeError(f"no {want!r} within {timeout:g} s") from None
                except Died:
                    raise RuntimeError(f"engine exited before {want!r}{p.stderr_text()}") from None
                if line.split()[:1] == [want]:
                    out[want] = t - t0
                    break
            if want == "uciok":
                if variant:
                    p.send(f"setoption name UCI_Variant value {variant}")
                p.send("isready")
            elif want == "readyok":
                p.send("position startpos")
                p.send("go movetime 300")
    except Died:
        raise RuntimeError(f"engine closed its input{p.stderr_text()}") from None
    finally:
        p.quit(timeout=10)
    return out


def run(cmd: list[str], warm_reps: int, cold_reps: int, variant: str | None = None, log=None,
        cwd: str | None = None) -> dict:
    base = dict(os.environ)
    results = {"warm": [], "cold": []}
    if warm_reps:
        measure_once(cmd, base, variant, cwd)       # populate the cache (not measured)
        for _ in range(warm_reps):
            results["warm"].append(measure_once(cmd, base, variant, cwd))
            if log:
                log(f"warm: {results['warm'][-1]}")
    for _ in range(cold_reps):
        with tempfile.TemporaryDirectory(prefix="cardinal-numba-") as d:
            env = dict(base, NUMBA_CACHE_DIR=d)
            results["cold"].append(measure_once(cmd, env, variant, cwd))
            if log:
                log(f"cold: {results['cold'][-1]}")
    return results


def summarise(results: dict) -> list[dict]:
    rows = []
    for kind in ("warm", "cold"):
        runs = results[kind]
        if not runs:
            continue
        for what in ("uciok", "readyok", "bestmove"):
            xs = [r[what] for r in runs]
            rows.append({"start": kind, "answer": what, "runs": len(xs), "median_s": round(statistics.median(xs), 3),
                         "min_s": round(min(xs), 3), "max_s": round(max(xs), 3)})
    return rows


def main(argv) -> int:
    ap = argparse.ArgumentParser(prog="cardinal bench startup", description=__doc__.split("\n\n")[0])
    ap.add_argument("--warm", type=int, default=3, metavar="N", help="warm starts to measure (default 3)")
    ap.add_argument("--cold", type=int, default=1, metavar="N", help="cold starts to measure (default 1)")
    ap.add_argument("--variant", default=None, help="send UCI_Variant before isready (e.g. grand)")
    ap.add_argument("--cmd", default=None, help="engine command (default: this Python, -m engine)")
    ap.add_argument("--json", default=None, metavar="FILE")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args(argv)
    if a.warm < 0 or a.cold < 0 or a.warm + a.cold == 0:
        print("error: need at least one run (--warm N / --cold N)", file=sys.stderr)
        return 2
    err = check_output_path(a.json)
    if err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if a.cmd:
        try:
            cmd, cwd = shlex.split(a.cmd), None
        except ValueError as e:
            print(f"error: --cmd: {e}", file=sys.stderr)
            return 2
        if not cmd:
            print("error: --cmd: empty command", file=sys.stderr)
            return 2
    else:
        cmd, cwd = cardinal_command()
    log = (lambda s: print(s, file=sys.stderr)) if a.verbose else None
    try:
        results = run(cmd, a.warm, a.cold, a.variant, log, cwd)
    except EngineError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except (RuntimeError, OSError) as e:
        print(f"error: {shlex.join(cmd)}: {e}", file=sys.stderr)
        return 1
    rows = summarise(results)
    print(f"{'start':<6} {'answer':<8} {'runs':>4} {'median s':>9} {'min s':>7} {'max s':>7}")
    for r in rows:
        print(f"{r['start']:<6} {r['answer']:<8} {r['runs']:>4} {r['median_s']:>9.3f} {r['min_s']:>7.3f} "
              f"{r['max_s']:>7.3f}")
    if a.json:
        try:
            write_text(a.json, json.dumps({"cmd": cmd, "rows": rows, "runs": results}, indent=1))
        except OSError as e:           # a full disk, /dev/full: the table above is kept
            print(f"error: {error_line(e)}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
