"""Lazy SMP: the multi-threaded search (search/driver.py), the UCI ``Threads`` option and
the XBoard ``cores`` command.

No wall-clock bounds: waits are event-based with generous timeouts, so the module
passes with other CPU-heavy processes on the machine.
"""
from __future__ import annotations

import io
import re
import threading

import pytest

from engine.protocol import session
from engine.protocol.loop import run as run_loop
from engine.rules.position import Position
from search import driver
from search.driver import Limits, Searcher, helper_skips
from tests.engine_proc import EngineProcess
from tests.test_uci import FakeSearcher

READY_TIMEOUT = 180.0
WAIT = 120.0   # s, generous: a busy machine makes searches slow, never wrong


@pytest.fixture(scope="module", autouse=True)
def _compiled_search():
    Searcher(1).warm_up()


def search(pos, limits, threads=1, searcher=None):
    s = searcher or Searcher(8)
    s.threads = threads
    infos, done = [], []
    s.start(pos, limits, infos.append, lambda b, p: done.append((b, p)))
    s.wait(WAIT)
    assert len(done) == 1, "on_done must be called exactly once"
    return done[0][0], infos, s


def helper_threads_alive():
    return [t for t in threading.enumerate() if t.name.startswith("cardinal-helper") and t.is_alive()]


# ---------------------------------------------------------------- settings
def test_thread_range_is_the_same_in_the_protocol_and_the_search():
    assert (session.THREADS_MIN, session.THREADS_MAX) == (driver.THREADS_MIN, driver.THREADS_MAX) == (1, 64)
    assert session.THREADS_DEFAULT == 1 and Searcher(1).threads == 1


def test_threads_setter_refuses_bad_values_and_keeps_the_last_good_one():
    s = Searcher(1)
    s.threads = 3
    for bad in (0, -1, 65, "2", 2.0, True, None):
        with pytest.raises(ValueError):
            s.threads = bad
    assert s.threads == 3


def test_helper_skip_pattern():
    # helper 1 (the only one with Threads=2) searches every other depth; the game ply shifts the phase
    assert [d for d in range(1, 9) if not helper_skips(1, d, 0)] == [2, 4, 6, 8]
    assert [d for d in range(1, 9) if not helper_skips(1, d, 1)] == [1, 3, 5, 7]
    # helpers 3 and 4 (skip size 2) search pairs of depths, one depth apart
    assert [d for d in range(1, 9) if not helper_skips(3, d, 0)] == [1, 4, 5, 8]
    assert [d for d in range(1, 9) if not helper_skips(4, d, 0)] == [3, 4, 7, 8]


# ---------------------------------------------------------------- one thread: today's search
def test_one_thread_is_the_single_threaded_search():
    """Threads=1 starts no helper and reports the main thread's nodes only; a Searcher that
    ran with 2 threads, set back to 1 and cleared (ucinewgame), searches exactly as a fresh one."""
    pos = Position.from_fen(None, "grand")
    b1, i1, _ = search(pos, Limits(depth=7))
    assert not any("thread_nodes" in i for i in i1)
    s = Searcher(8)
    search(Position.from_fen(None, "chess"), Limits(depth=6), threads=2, searcher=s)
    s.clear_hash()
    b2, i2, _ = search(pos, Limits(depth=7), threads=1, searcher=s)
    assert b1 == b2
    strip = [{k: v for k, v in i.items() if k not in ("time", "nps", "hashfull")} for i in i1]
    assert strip == [{k: v for k, v in i.items() if k not in ("time", "nps", "hashfull")} for i in i2]


# ---------------------------------------------------------------- two threads
@pytest.mark.parametrize("variant,fen,depth", [
    ("grand", None, 10),
    ("chess", "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4", 9),
])
def test_two_threads_play_a_legal_move_and_report_the_summed_nodes(variant, fen, depth):
    pos = Position.from_fen(fen, variant)
    best, infos, s = search(pos, Limits(depth=depth), threads=2)
    assert best in pos.legal_moves()
    assert infos[-1]["depth"] == depth and infos[-1]["pv"][0] == pos.uci(best)
    for i in infos:   # every info: nodes is the sum over the two threads
        assert len(i["thread_nodes"]) == 2 and i["nodes"] == sum(i["thread_nodes"]), i
    assert any(i["thread_nodes"][1] > 0 for i in infos), "the helper thread searched no node"
    assert s._thread_nodes()[1] > 0
    assert not helper_threads_alive()     # joined before on_done


@pytest.mark.parametrize("watcher_asleep", [False, True])
def test_node_limit_is_on_the_sum_over_the_threads(monkeypatch, watcher_asleep):
    """``go nodes N`` with two threads stops the two together at N instead of each thread running
    to its own N. The sum is counted in the search itself, so it holds with the watcher thread
    asleep for the whole search too (as on a machine too busy to wake it)."""
    if watcher_asleep:
        monkeypatch.setattr(Searcher, "_watcher", lambda self, on_info, done: done.wait())
    n = 100_000
    pos = Position.from_fen(None, "grand")
    best, infos, s = search(pos, Limits(nodes=n), threads=2)
    assert best in pos.legal_moves()
    main, helper = s._thread_nodes()
    total = main + helper
    assert helper > 0
    # within a 1024-node poll per thread (and a few nodes of unwinding); without the sum each
    # thread runs to its own n
    assert n <= total <= n + 8 * 1024, (main, helper)


def test_stop_ends_an_infinite_two_thread_search():
    s = Searcher(8)
    s.threads = 2
    first_info, done = threading.Event(), threading.Event()
    got = []
    pos = Position.from_fen(None, "grand")
    s.start(pos, Limits(infinite=True), lambda i: first_info.set(),
            lambda b, p: (got.append(b), done.set()))
    assert first_info.wait(WAIT)
    assert s.running and len(helper_threads_alive()) == 1
    s.stop()
    assert done.wait(WAIT), "no bestmove after stop"
    s.wait(WAIT)
    assert got[0] in pos.legal_moves()
    assert not helper_threads_alive()


# ---------------------------------------------------------------- protocols in process: the option reaches the searcher
class Recording(FakeSearcher):
    made: list = []

    def __init__(self, hash_mb=16):
        super().__init__(hash_mb)
        self.threads = 1
        self.threads_at_go = []
        Recording.made.append(self)

    def start(self, pos, limits, on_info, on_done):
        self.threads_at_go.append(self.threads)
        super().start(pos, limits, on_info, on_done)


def _session(script: bytes):
    Recording.made = []
    out = io.StringIO()
    assert run_loop(stdin=io.BytesIO(script), stdout=out, searcher_factory=lambda hash_mb: Recording(hash_mb)) == 0
    return out.getvalue().splitlines(), Recording.made[0]


def test_uci_threads_option_listed_validated_and_applied():
    lines, s = _session(b"uci\nsetoption name Threads value 3\nisready\nposition startpos\ngo depth 1\n"
                        b"setoption name Threads value 0\nsetoption name Threads value abc\n"
                        b"setoption name Threads value 65\nsetoption name Threads\nisready\ngo depth 1\n"
                        b"setoption name threads value 1\nisready\ngo depth 1\nquit\n")
    assert "option name Threads type spin default 1 min 1 max 64" in lines
    errors = [ln for ln in lines if ln.startswith("info string error")]
    assert errors == ["info string error: setoption Threads: value 0 out of range 1..64",
                      "info string error: setoption Threads: value 'abc' is not an integer",
                      "info string error: setoption Threads: value 65 out of range 1..64",
                      "info string error: setoption Threads: value 'None' is not an integer"], errors
    assert s.threads_at_go == [3, 3, 1]    # a refused value keeps the last good one


def test_xboard_cores_announced_validated_and_applied():
    lines, s = _session(b"xboard\nprotover 2\ncores 2\nnew\nvariant grand\nforce\ngo\ncores 0\ncores x\n"
                        b"cores 1000\nforce\ngo\nquit\n")
    feat = [ln for ln in lines if ln.startswith("feature myname")]
    assert feat and " smp=1 " in feat[0] and " memory=1 " in feat[0]
    assert "Error (expected cores N): cores 0" in lines and "Error (expected cores N): cores x" in lines
    assert s.threads_at_go == [2, 64]       # above the maximum: the maximum (as memory does)


def test_xboard_memory_is_unaffected_by_cores():
    lines, s = _session(b"xboard\nprotover 2\nmemory 8\ncores 2\nping 1\nquit\n")
    assert "pong 1" in lines and not any(ln.startswith("Error") for ln in lines)


# ---------------------------------------------------------------- the real engine process
def test_uci_two_threads_real_engine():
    with EngineProcess() as e:
        e.send("uci")
        e.expect("uciok", 60)
        e.send("setoption name Threads value 2", "setoption name UCI_Variant value grand", "isready")
        e.expect("readyok", READY_TIMEOUT)
        e.send("position startpos moves e3e5", "go depth 7")
        lines = e.expect(r"bestmove .*", WAIT)
        assert not any(ln.startswith("info string error") for ln in lines), lines
        from engine.rules.position import Position as P
        pos = P.from_fen(None, "grand")
        pos.push_uci("e3e5")
        assert lines[-1].split()[1] in pos.legal_uci()
        assert any(re.match(r"info depth 7 .* nodes \d+ nps \d+", ln) for ln in lines), lines
        e.send("go infinite")
        e.expect(r"info depth \d+ .*", WAIT)
        e.send("stop")
        lines = e.expect(r"bestmove .*", WAIT)
        assert lines[-1].split()[1] in pos.legal_uci()
        e.send("quit")


def test_xboard_cores_then_a_move_real_engine():
    with EngineProcess() as e:
        e.send("xboard", "protover 2")
        lines = e.expect("feature done=1", READY_TIMEOUT)
        assert any(" smp=1 " in ln for ln in lines)
        e.send("cores 2", "new", "variant grand", "sd 5", "usermove e2e4")   # CECP ranks count from 0 on grand
        lines = e.expect(r"move \S+", WAIT)
        assert not any(ln.startswith("Error") for ln in lines), lines
        e.send("quit")


# ---------------------------------------------------------------- cardinal bench smp
def test_bench_smp_runs_and_refuses_bad_arguments():
    import subprocess
    import sys
    from tests.engine_proc import ROOT
    r = subprocess.run([sys.executable, "-m", "engine", "bench", "smp", "--variant", "chess", "--positions", "1",
                        "--time", "0.3"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert re.search(r"^chess +0 +\d+ +[\d.]+ +\S+ +\S+ +\S+ +\d+ +\d+ ", r.stdout, re.M), r.stdout
    assert re.search(r"^Nodes/second ratio 2 threads / 1: [\d.]+", r.stdout, re.M), r.stdout
    for bad in (["--threads", "1"], ["--variant", "nope"], ["--time", "0"]):
        r = subprocess.run([sys.executable, "-m", "engine", "bench", "smp"] + bad, cwd=ROOT, capture_output=True,
                           text=True, timeout=120)
        assert r.returncode == 2 and r.stderr.startswith("error:"), (bad, r.stderr)
