"""`cardinal bench startup` measures uciok, readyok and the first bestmove of a real start."""
import os
import sys

from bench.startup import measure_once, _root


def test_measure_once_reports_uciok_readyok_bestmove_in_order():
    env = dict(os.environ)
    env["PYTHONPATH"] = _root()
    r = measure_once([sys.executable, "-m", "engine"], env, "grand")
    assert set(r) == {"uciok", "readyok", "bestmove"}
    assert 0 < r["uciok"] <= r["readyok"] <= r["bestmove"]
