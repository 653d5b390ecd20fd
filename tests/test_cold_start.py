"""First start with a cold numba cache under Cute Chess's timeouts (a scripted GUI).

Cute Chess gives an engine 35 s from its start to answer ``uci`` with ``uciok``
(ProtocolStartTimeout) and 15 s for each ``readyok`` (PingTimeout), and it
forfeits a move that comes after the clock ran out. Each test starts Cardinal
with an empty ``NUMBA_CACHE_DIR``, so everything is compiled on the spot:

* two engines at once sharing one cache directory (a first self-play match):
  the second waits for the first one's compile and loads its cache;
* one engine while another process keeps a core busy.

Both must answer within those limits and play a legal move on a 10+0.1 clock.
These take 30-60 s each (``timing`` marker: they measure wall-clock time).
"""
from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

from tests.engine_proc import EngineProcess

UCIOK_LIMIT = 35.0     # Cute Chess ProtocolStartTimeout, from the engine's start
READYOK_LIMIT = 15.0   # Cute Chess PingTimeout
CLOCK_MS = 10000       # tc=10+0.1: the first go after the first isready
INC_MS = 100


def legal_grand_start() -> set[str]:
    from engine.rules.position import Position
    return set(Position.from_fen(None, "grand").legal_uci())


def scripted_gui(e: EngineProcess, times: dict) -> None:
    """What Cute Chess sends for a grand game with Cardinal as White; records when each
    answer arrived (seconds since the engine started) and fails on any timeout."""
    e.send("uci")
    e.expect("uciok", UCIOK_LIMIT - (time.monotonic() - e.t0))
    times["uciok"] = time.monotonic() - e.t0
    t = time.monotonic()
    e.send("isready")
    e.expect("readyok", READYOK_LIMIT)
    times["readyok"] = time.monotonic() - t
    e.send("setoption name UCI_Variant value grand", "ucinewgame", "position startpos")
    t = time.monotonic()
    e.send("isready")
    e.expect("readyok", READYOK_LIMIT)
    times["readyok2"] = time.monotonic() - t
    t = time.monotonic()
    e.send(f"go wtime {CLOCK_MS + INC_MS} btime {CLOCK_MS + INC_MS} winc {INC_MS} binc {INC_MS}")
    line = e.expect(r"bestmove .*", (CLOCK_MS + INC_MS) / 1000.0)[-1]
    times["bestmove"] = time.monotonic() - t
    times["move"] = line.split()[1]


def run_guis(engines: list[EngineProcess]) -> list[dict]:
    results = [{} for _ in engines]
    errors: list = [None] * len(engines)

    def work(k):
        try:
            scripted_gui(engines[k], results[k])
        except BaseException as ex:   # reported by the main thread
            errors[k] = ex

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(engines))]
    for th in threads:
        th.start()
    for th in threads:
        th.join(120)
    for k, ex in enumerate(errors):
        if ex is not None:
            raise AssertionError(f"engine {k}: {ex}; times so far {results[k]}") from ex
    return results


def check(results: list[dict]) -> None:
    legal = legal_grand_start()
    for r in results:
        print(f"cold start: uciok {r['uciok']:.1f} s, readyok {r['readyok']:.2f} s, "
              f"second readyok {r['readyok2']:.2f} s, first bestmove {r['bestmove']:.2f} s ({r['move']})")
        assert r["uciok"] < UCIOK_LIMIT and r["readyok"] < READYOK_LIMIT and r["readyok2"] < READYOK_LIMIT, r
        assert r["bestmove"] * 1000 < CLOCK_MS + INC_MS, r
        assert r["move"] in legal, r


@pytest.mark.timing
def test_two_cold_engines_sharing_one_empty_cache(tmp_path):
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    engines = [EngineProcess(env=env), EngineProcess(env=env)]
    try:
        results = run_guis(engines)
    finally:
        codes = [e.close() for e in engines]
    check(results)
    assert codes == [0, 0], codes
    assert not any("Traceback" in ln for e in engines for ln in e.stderr)


@pytest.mark.timing
def test_cold_engine_with_a_busy_core(tmp_path):
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        e = EngineProcess(env={"NUMBA_CACHE_DIR": str(tmp_path / "numba")})
        try:
            results = run_guis([e])
        finally:
            code = e.close()
    finally:
        busy.kill()
        busy.wait(10)
    check(results)
    assert code == 0
    assert not any("Traceback" in ln for ln in e.stderr)
