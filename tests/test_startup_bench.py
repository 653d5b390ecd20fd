"""`cardinal bench startup` measures uciok, readyok and the first bestmove of a real start."""
import os

from bench.engines import cardinal_command
from bench.startup import measure_once


def test_measure_once_reports_uciok_readyok_bestmove_in_order():
    cmd, cwd = cardinal_command()
    r = measure_once(cmd, dict(os.environ), "grand", cwd)
    assert set(r) == {"uciok", "readyok", "bestmove"}
    assert 0 < r["uciok"] <= r["readyok"] <= r["bestmove"]

