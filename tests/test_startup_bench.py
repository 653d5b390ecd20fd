"""`cardinal bench startup` measures uciok, readyok and the first bestmove of a real start."""
import os

from bench.engines import cardinal_command
import pytest

from bench.startup import main, measure_once


def test_measure_once_reports_uciok_readyok_bestmove_in_order():
    cmd, cwd = cardinal_command()
    r = measure_once(cmd, dict(os.environ), "grand", cwd)
    assert set(r) == {"uciok", "readyok", "bestmove"}
    assert 0 < r["uciok"] <= r["readyok"] <= r["bestmove"]


@pytest.mark.parametrize("where", ["missing directory", "a directory", "/proc"])
def test_bad_json_path_fails_before_any_engine_starts(tmp_path, capsys, where):
    path = {"missing directory": tmp_path / "no" / "s.json", "a directory": tmp_path,
            "/proc": "/proc/s.json"}[where]           # /proc: writable by its bits (as root), yet no new file
    assert main(["--warm", "1", "--cold", "0", "--json", str(path)]) == 2
    c = capsys.readouterr()
    assert c.out == ""
    err = c.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --json"), c.err
