"""The command line (``python -m engine`` == ``cardinal``): perft output format,
--divide, bad input (exit status 2, one error line naming the field, no
traceback), and the ``bench perft`` wiring."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MOVE_LINE = re.compile(r"^([a-j]\d{1,2}[a-j]\d{1,2}[qrbnca]?): (\d+)$")


def run(*args, timeout=300):
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return subprocess.run([sys.executable, "-m", "engine", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_perft_grand_3():
    r = run("perft", "3", "--variant", "grand")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "Nodes searched: 259514"
    assert len(lines) == 2 and lines[1].startswith("Time:")  # time/nps on its own line
    assert "Traceback" not in r.stderr


def test_perft_default_variant_is_chess():
    r = run("perft", "4")
    assert r.returncode == 0
    assert "Nodes searched: 197281" in r.stdout.splitlines()


def test_perft_divide_format():
    r = run("perft", "2", "--divide")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    blank = lines.index("")
    moves = lines[:blank]
    assert len(moves) == 20
    counts = {}
    for ln in moves:
        m = MOVE_LINE.match(ln)
        assert m, ln
        counts[m.group(1)] = int(m.group(2))
    assert set(counts.values()) == {20}
    assert lines[blank + 1] == "Nodes searched: 400"
    assert lines[blank + 2].startswith("Time:")
    assert len(lines) == blank + 3


def test_perft_divide_grand_rank10_and_promotions():
    r = run("perft", "1", "--divide", "--variant", "grand", "--fen", "9k/3P6/10/10/10/10/10/10/10/4K5 w - - 0 1")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    moves = {ln.split(":")[0] for ln in lines[:lines.index("")]}
    assert {"d9d10q", "d9d10c", "d9d10a", "d9d10r", "d9d10b", "d9d10n"} <= moves
    assert "Nodes searched: 11" in lines


def test_perft_knightrelay_fen():
    r = run("perft", "3", "--variant", "knightrelay", "--fen", "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1")
    assert r.returncode == 0, r.stderr
    assert "Nodes searched: 253" in r.stdout.splitlines()


@pytest.mark.parametrize("variant,fen,field", [
    ("chess", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w KQkq - 0 1", "board"),
    ("grand", "r8r/1nbqkcabn1/pppppppppp/11/10/10/10/PPPPPPPPPP/1NBQKCABN1/R8R w - - 0 1", "board"),
    ("chess", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1", "side"),
    ("chess", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQxq - 0 1", "castling"),
    ("chess", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e9 0 1", "en-passant"),
    ("knightrelay", "4k3/8/8/8/8/8/8/4K2P w - - 0 1", "pawn"),
    ("chess", "8/8/8/8/8/8/8/4K3 w - - 0 1", "king"),
    ("chess", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 99999999999999999999 1", "counters"),
])
def test_malformed_fen_exits_2_with_one_line(variant, fen, field):
    r = run("perft", "2", "--variant", variant, "--fen", fen)
    assert r.returncode == 2
    assert r.stdout == ""
    err = r.stderr.strip().splitlines()
    assert len(err) == 1, r.stderr
    assert err[0].startswith("error:") and field in err[0], err[0]
    assert "Traceback" not in r.stderr


def test_bad_variant_and_depth_exit_2():
    for args in (("perft", "2", "--variant", "shogi"), ("perft", "0"), ("perft", "99")):
        r = run(*args)
        assert r.returncode == 2
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_side_not_to_move_in_check_warns_and_runs():
    r = run("perft", "1", "--fen", "4k3/4R3/8/8/8/8/8/4K3 w - - 0 1")
    assert r.returncode == 0
    assert "warning" in r.stderr and "check" in r.stderr


def test_bench_perft_quick(tmp_path):
    """``cardinal bench perft --quick`` runs ours (and Fairy-Stockfish when installed)
    and writes JSON; the node counts are the published ones and agree with FSF."""
    out = tmp_path / "perft.json"
    r = run("bench", "perft", "--quick", "--json", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "first perft call" in r.stdout
    data = json.loads(out.read_text())
    nodes = {row["position"]: row["nodes"] for row in data["results"]}
    assert nodes == {"grand start": 259514, "chess start": 197281, "kiwipete": 97862}
    for row in data["results"]:
        assert row["seconds"] > 0 and row["mnps"] > 0
        if data["fsf"] is not None:
            assert row["fsf_nodes"] == row["nodes"] and row["match"] is True
            assert row["ratio"] > 0


def test_bench_help_lists_the_benchmarks():
    """``cardinal bench --help`` lists every ``cardinal bench NAME`` with a line each, and
    ``cardinal bench NAME --help`` is that benchmark's own help."""
    r = run("bench", "--help")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert r.stdout.startswith("usage: cardinal bench ") and "--depth" in r.stdout
    listed = re.findall(r"^  (perft|epd|startup|smp|eval) +(\S.*)$", r.stdout, re.M)
    assert [name for name, _ in listed] == ["perft", "epd", "startup", "smp", "eval"], r.stdout
    for name, _ in listed:
        h = run("bench", name, "--help")
        assert h.returncode == 0 and h.stdout.startswith(f"usage: cardinal bench {name} "), (name, h.stderr)


def test_bench_perft_bad_args():
    r = run("bench", "perft", "--repeat", "0", "--no-fsf")
    assert r.returncode == 2
    r = run("bench", "perft", "--fsf", "/nonexistent/fsf")
    assert r.returncode == 2


@pytest.mark.timing
def test_bench_stop_latency_reports_milliseconds():
    r = run("bench", "--stop-latency", "3")
    assert r.returncode == 0, r.stderr
    m = re.search(r"stop latency over 3 searches: mean ([\d.]+) ms, median ([\d.]+) ms, max ([\d.]+) ms", r.stdout)
    assert m, r.stdout
    assert float(m.group(3)) < 500        # generous: the target (20 ms) is for the benchmark, not the test


@pytest.mark.parametrize("where", ["missing directory", "a directory", "/proc"])
def test_bench_perft_bad_json_path_fails_before_the_run(tmp_path, where):
    path = {"missing directory": tmp_path / "no" / "perft.json", "a directory": tmp_path,
            "/proc": "/proc/perft.json"}[where]       # /proc: writable by its bits (as root), yet no new file
    r = run("bench", "perft", "--quick", "--no-fsf", "--json", str(path))
    assert r.returncode == 2 and r.stdout == ""           # nothing was counted
    err = r.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --json") and "Traceback" not in r.stderr, r.stderr
    assert str(path) in err[0]


def test_bench_perft_json_write_that_fails_at_the_end_is_one_line():
    """/dev/full takes the file and refuses the bytes (a full disk): the table stays on
    stdout and the error names the path given."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    r = run("bench", "perft", "--quick", "--no-fsf", "--json", "/dev/full")
    assert r.returncode == 1, r.stderr
    assert "kiwipete" in r.stdout                          # the results are kept
    assert r.stderr.strip().splitlines() == ["error: /dev/full: No space left on device"], r.stderr


class NeverWarm:
    """A searcher whose warm-up never ends (a cold compile still running at ``quit``)."""

    def __init__(self, hash_mb: int = 16):
        pass

    def warm_up(self):
        import threading
        threading.Event().wait()


def test_protocol_exit_skips_shutdown_while_a_thread_still_works(monkeypatch):
    """``quit`` during a cold compile ends the process at once with the loop's status
    (os._exit, after flushing), instead of an interpreter shutdown that tears the
    compiling thread down and can abort the process."""
    import threading
    from engine import cli
    calls = []
    monkeypatch.setattr(cli.os, "_exit", calls.append)
    assert cli._exit_now_if_busy(0) == 0 and calls == []     # idle: the normal return
    release = threading.Event()
    t = threading.Thread(target=release.wait, name="cardinal-warmup", daemon=True)
    t.start()
    try:
        assert cli.background_work() == ["cardinal-warmup"]
        cli._exit_now_if_busy(0)
        assert calls == [0]
    finally:
        release.set()
        t.join(5)


def test_quit_while_the_search_still_compiles_exits_cleanly():
    """End to end: the warm-up is still busy when ``quit`` arrives; the process answers what
    came before, exits with status 0 at once and prints no traceback."""
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["CARDINAL_SEARCHER"] = "tests.test_cli:NeverWarm"
    code = ("import sys\nfrom engine.protocol import session\nsession.PING_WAIT = 0.2\n"
            "from engine import cli\nsys.exit(cli.main([]))\n")
    r = subprocess.run([sys.executable, "-c", code], input="uci\nisready\nquit\n", cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == "readyok" and "uciok" in r.stdout
    assert "Traceback" not in r.stderr


def test_bench_compare_fsf_interleaved_rounds():
    """``--compare-fsf --rounds 2``: both engines' lines, then the nps ratio with each round's
    value and their median, and the nodes-to-depth ratio; Cardinal's node count is the same
    deterministic one as the plain bench line."""
    from bench.engines import find_fairy_stockfish
    if find_fairy_stockfish() is None:
        pytest.skip("Fairy-Stockfish is not installed (.ci/run installs it)")
    r = run("bench", "--variant", "grand", "--depth", "3", "--compare-fsf", "--rounds", "2")
    assert r.returncode == 0, r.stderr
    plain = re.search(r"^grand\s+depth 3: nodes\s+(\d+)", r.stdout, re.M)
    mine = re.search(r"^\s+cardinal\s+depth 3: nodes\s+(\d+)", r.stdout, re.M)
    assert plain and mine and plain.group(1) == mine.group(1), r.stdout
    assert re.search(r"^\s+fairy-sf\s+depth 3: nodes\s+\d+", r.stdout, re.M), r.stdout
    m = re.search(r"grand nps ratio \(Cardinal / Fairy-Stockfish\): ([\d.]+) over 2 rounds; "
                  r"per round ([\d.]+) ([\d.]+), median ([\d.]+)", r.stdout)
    assert m, r.stdout
    lo, hi, med = float(m.group(2)), float(m.group(3)), float(m.group(4))
    assert 0 < lo <= hi and abs(med - (lo + hi) / 2) < 0.0011
    assert re.search(r"grand nodes-to-depth ratio \(Cardinal / Fairy-Stockfish\): [\d.]+", r.stdout)


@pytest.mark.parametrize("args, says", [
    (("--compare-fsf", "--rounds", "0"), "--rounds must be 1..100"),
    (("--compare-fsf", "--rounds", "abc"), "invalid int value"),
    (("--rounds", "3"), "give --compare-fsf too"),
    (("--variant", "knightrelay", "--compare-fsf"), "does not play knightrelay"),
])
def test_bench_misuse_is_one_line_and_status_2(args, says):
    r = run("bench", "--depth", "2", *args)
    err = r.stderr.strip().splitlines()
    assert r.returncode == 2 and r.stdout == "", (r.stdout, r.stderr)
    assert len(err) == 1 and err[0].startswith("error:") and says in err[0], r.stderr


def test_bench_compare_fsf_without_fairy_stockfish_is_an_error_before_the_run():
    """Asked for a comparison that cannot happen: one error line, status 2, nothing searched."""
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT
    env["PATH"] = os.path.dirname(sys.executable)        # no fairy-stockfish on PATH
    code = ("import sys, bench.engines as E; E.DEBIAN_GAMES = '/nonexistent'; from engine import cli; "
            "sys.exit(cli.main(['bench', '--variant', 'grand', '--depth', '2', '--compare-fsf']))")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    err = r.stderr.strip().splitlines()
    assert r.returncode == 2 and r.stdout == "", (r.stdout, r.stderr)
    assert len(err) == 1 and "fairy-stockfish not found" in err[0], r.stderr


@pytest.mark.parametrize("args", [("perft", "--variant", "grand", "--divide", "2"),
                                  ("tune", "nnue-data", "verify", "--variant", "grand")])
def test_a_reader_that_leaves_is_no_traceback(args):
    """``cardinal ... | head``: the pipe closes before the output is written; the command stops
    quietly with status 141 (a shell tool killed by SIGPIPE), no traceback."""
    r, w = os.pipe()
    os.close(r)
    try:
        p = subprocess.run([sys.executable, "-m", "engine", *args], cwd=ROOT, stdout=w, stderr=subprocess.PIPE,
                           text=True, timeout=300)
    finally:
        os.close(w)
    assert "Traceback" not in p.stderr and "BrokenPipe" not in p.stderr, p.stderr
    assert p.returncode == 141, (p.returncode, p.stderr)
