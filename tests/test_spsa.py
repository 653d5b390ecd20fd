"""SPSA tuning of the search constants (bench/tune/spsa.py, ``cardinal tune spsa``): fishtest's
schedule on worked numbers, convergence on a noisy quadratic, stochastic rounding, clipping,
theta+/theta- pairs (one opening, colours reversed, values by setoption before each game),
journal resume, bad command lines, and a tiny real run."""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import pytest

from bench import pairs as PR
from bench.tune import spsa as S
from search import params as P
from search.params import Param

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "engine", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


# ------------------------------------------------------------------ the algorithm

def test_schedule_matches_fishtest_on_worked_numbers():
    p = Param("X", 90, 40, 180)                      # c_end = (180 - 40) / 20 = 7, r_end = 0.002
    sp = S.Spsa([p], 1000, A=100)
    q = sp.params[0]
    assert (q.c_end, q.r_end) == (7.0, 0.002)
    # fishtest's parse_spsa_params: c = c_end * N^gamma, a_end = r_end * c_end^2, a = a_end * (A + N)^alpha
    assert q.c == pytest.approx(14.063649688, rel=1e-9)
    assert q.a_end == pytest.approx(0.098, rel=1e-12)
    assert q.a == pytest.approx(6.639639075, rel=1e-9)
    # _generate_data: c_k = c / (k + 1)^gamma, R_k = a / (A + k + 1)^alpha / c_k^2
    cs, rs = sp.schedule(0)
    assert cs[0] == pytest.approx(14.063649688, rel=1e-9) and rs[0] == pytest.approx(0.00208615669093, rel=1e-9)
    cs, rs = sp.schedule(9)
    assert cs[0] == pytest.approx(11.145461089, rel=1e-9) and rs[0] == pytest.approx(0.00315522253940, rel=1e-9)
    cs, rs = sp.schedule(999)             # the last iteration: c_end and r_end themselves
    assert cs[0] == pytest.approx(7.0, rel=1e-12) and rs[0] == pytest.approx(0.002, rel=1e-12)
    assert S.Spsa([p], 1000).A == 100.0  # A defaults to 0.1 x iterations


def test_update_is_fishtests():
    sp = S.Spsa([Param("X", 90, 40, 180, integer=False)], 1000, A=100)
    pr = sp.probe(0)
    th0 = sp.theta[0]
    sp.update(pr, 2.0)                   # theta += R * c * result * flip
    assert sp.theta[0] == pytest.approx(th0 + pr.R[0] * pr.c[0] * 2.0 * pr.flips[0])
    assert sp.k == 1
    assert pr.plus[0] == pytest.approx(th0 + pr.c[0] * pr.flips[0])
    assert pr.minus[0] == pytest.approx(th0 - pr.c[0] * pr.flips[0])


def test_converges_on_a_noisy_quadratic():
    """Game pairs drawn from a logistic model of an Elo that is a quadratic with its maximum at
    (40, -30); from (0, 50), 2000 iterations end within 15 (7.5% of the range) of it."""
    ps = [Param("X", 0, -100, 100, r_end=0.02), Param("Y", 50, -100, 100, r_end=0.02, integer=False)]
    opt = (40.0, -30.0)

    def elo(v):
        return -1000 * sum(((x - o) / 200) ** 2 for x, o in zip(v, opt))
    errs = []
    for seed in (1, 2, 3, 4):
        sp = S.Spsa(ps, 2000, seed=seed)
        rng = random.Random(100 + seed)
        for j in range(2000):
            pr = sp.probe(j)
            pw = 1 / (1 + 10 ** (-(elo(pr.plus) - elo(pr.minus)) / 400))
            sp.update(pr, sum(1 if rng.random() < pw else -1 for _ in range(2)))
        errs += [abs(t - o) for t, o in zip(sp.theta, opt)]
    assert max(errs) <= 15, errs
    assert sum(errs) / len(errs) <= 8, errs


def test_stochastic_rounding_has_the_right_mean():
    rng = random.Random(5)
    for x in (3.3, -2.75, 7.0):
        vals = [S.stochastic_round(x, rng.random()) for _ in range(40000)]
        assert set(vals) <= {int(x // 1), int(x // 1) + 1}
        assert sum(vals) / len(vals) == pytest.approx(x, abs=0.01)
    # integer parameters are sent rounded that way: the mean of many probes is theta +- c
    sp = S.Spsa([Param("X", 10, 0, 100)], 1000)
    sp.params[0].theta = 10.4
    probes = [sp.probe(j) for j in range(20000)]
    assert all(isinstance(pr.plus[0], int) for pr in probes)
    up = [pr.plus[0] for pr in probes if pr.flips[0] == 1]
    assert sum(up) / len(up) == pytest.approx(10.4 + probes[0].c[0], abs=0.02)


def test_clipping_at_the_range_ends():
    sp = S.Spsa([Param("X", 180, 40, 180), Param("Y", 40, 40, 180)], 100)
    for j in range(50):
        pr = sp.probe(j)
        assert all(40 <= v <= 180 for v in pr.plus + pr.minus)
        assert 180 in (pr.plus[0], pr.minus[0]) and 40 in (pr.plus[1], pr.minus[1])
    pr = sp.probe(0)
    sp.update(pr, 1e9 * pr.flips[0])     # a huge step up for X, down or up for Y: both stay in range
    assert sp.theta[0] == 180
    sp.update(pr, -1e9 * pr.flips[0])
    assert sp.theta[0] == 40 and 40 <= sp.theta[1] <= 180
    with pytest.raises(ValueError, match="out of range"):
        S.Spsa([Param("X", 90, 40, 180)], 10, start={"X": 200})


# ------------------------------------------------------------------ pairs

def _stub(log=None):
    def play(task):
        plus, minus = dict(task.options[0]), dict(task.options[1])
        if log is not None:
            log.append(task)
        d = abs(int(minus["RFP_MARGIN"]) - 120) - abs(int(plus["RFP_MARGIN"]) - 120)
        s = 1.0 if d > 0 else 0.0 if d < 0 else 0.5
        return [s, s]
    return play


def _cfg(tmp_path, name="j.jsonl", iterations=20, **kw):
    return S.SpsaConfig("grand", S.select_params(["RFP_MARGIN", "FUT_MARGIN"]), iterations=iterations,
                        journal_path=str(tmp_path / name), progress=False, **kw)


def test_pairs_share_an_opening_colours_reversed_values_by_setoption(tmp_path, monkeypatch):
    log = []
    S.run_spsa(_cfg(tmp_path, iterations=6), play=_stub(log))
    assert len(log) == 6
    for j, t in enumerate(log):
        assert t.pair == j and t.rounds == ((2 * j + 1, 0), (2 * j + 2, 1))    # engine 0 White, then Black
        assert [n for n, _ in t.options[0]] == ["RFP_MARGIN", "FUT_MARGIN"] == [n for n, _ in t.options[1]]
    # bench.pairs.play_pair plays both games of such a task from its one opening, each engine
    # told its values by setoption before each game
    played, sent = [], []

    class Eng:
        def __init__(self, i):
            self.i = i

        def set_option(self, name, value):
            sent.append((self.i, name, value))

    class Slot:
        engines = [Eng(0), Eng(1)]

        def start(self):
            return self.engines

    class Rec:
        fault = None

    def fake_game(engines, white_index, variant, opening, *a):
        played.append((white_index, opening, list(sent)))
        sent.clear()
        return Rec()
    monkeypatch.setattr(PR, "play_game", fake_game)
    t = log[3]
    res = PR.play_pair(Slot(), PR.GameSettings("m", "grand", [], [], []), t)
    assert res.complete and [w for w, _, _ in played] == [0, 1]
    assert played[0][1] is played[1][1] is t.opening
    for _, _, opts in played:
        assert [(i, n, v) for i, n, v in opts if i == 0] == [(0, n, v) for n, v in t.options[0]]
        assert [(i, n, v) for i, n, v in opts if i == 1] == [(1, n, v) for n, v in t.options[1]]


def test_journal_resume_reaches_the_same_state(tmp_path):
    full = S.run_spsa(_cfg(tmp_path, "full.jsonl"), play=_stub())
    part = S.run_spsa(_cfg(tmp_path, "part.jsonl"), play=_stub(), stop_after=7)
    assert part.interrupted and part.spsa.k == 7
    resumed = S.run_spsa(S.SpsaConfig("grand", [], resume_path=str(tmp_path / "part.jsonl"), progress=False),
                         play=_stub())
    assert resumed.resumed == 7 and resumed.spsa.k == 20 and not resumed.interrupted
    assert resumed.spsa.theta == full.spsa.theta
    _, a = S.read_journal(str(tmp_path / "full.jsonl"))
    _, b = S.read_journal(str(tmp_path / "part.jsonl"))
    strip = [{k: v for k, v in ln.items() if k != "time"} for ln in a]
    assert strip == [{k: v for k, v in ln.items() if k != "time"} for ln in b]
    assert [ln["theta"] for ln in b][-1] == full.spsa.theta
    # a replay of the journal gives the same state again
    sp = S.Spsa(S.select_params(["RFP_MARGIN", "FUT_MARGIN"]), 20)
    assert S.replay(sp, b) == 20 and sp.theta == full.spsa.theta


def test_starts_from_the_variants_values(tmp_path, monkeypatch):
    f = tmp_path / "grand.json"
    f.write_text(json.dumps({"params": {"RFP_MARGIN": 100}}))
    monkeypatch.setattr(P, "params_path", lambda v: str(f))
    res = S.run_spsa(_cfg(tmp_path, iterations=2), play=_stub())
    header, _ = S.read_journal(str(tmp_path / "j.jsonl"))
    assert [p["start"] for p in header["params"]] == [100, 160]     # FUT_MARGIN: the default
    assert res.spsa.params[0].start == 100


def test_outputs_values_file_diff_and_svg(tmp_path):
    res = S.run_spsa(_cfg(tmp_path, iterations=30), play=_stub())
    out = tmp_path / "grand.json"
    vals = S.write_values(res.spsa, "grand", str(out), {"method": "test"})
    assert P.load_file(str(out)) == vals and set(vals) == {"RFP_MARGIN", "FUT_MARGIN"}
    lines = S.diff_lines(res.spsa)
    assert lines[0].startswith("RFP_MARGIN") and "90 ->" in lines[0]
    svg = S.svg_plot(res.spsa, res.history, "t")
    assert svg.startswith("<svg") and svg.count("<polyline") == 2 and svg.rstrip().endswith("</svg>")
    import xml.dom.minidom
    xml.dom.minidom.parseString(svg)



def _pgn_game(rnd: int) -> str:
    return (f'[Event "x"]\n[Site "?"]\n[Date "?"]\n[Round "{rnd}"]\n[White "a"]\n[Black "b"]\n'
            f'[Result "*"]\n\n1. e4 *\n\n')


def test_resume_drops_pgn_games_the_journal_does_not_hold(tmp_path):
    """A run's PGN is named in its journal's header with where the run began writing; a resumed
    run (no --pgn given) drops the games after that point whose pairs the journal lacks (written
    just before a crash) and keeps everything before it."""
    pgn = tmp_path / "g.pgn"
    pgn.write_text(_pgn_game(999))                      # another run's game, before this run's offset
    part = S.run_spsa(_cfg(tmp_path, "p.jsonl", pgn=str(pgn)), play=_stub(), stop_after=3)
    assert part.interrupted and part.spsa.k == 3
    header, lines = S.read_journal(str(tmp_path / "p.jsonl"))
    assert header["pgn"] == str(pgn) and header["pgn_offset"] == len(_pgn_game(999))
    assert sorted(g["round"] for ln in lines for g in ln["games"]) == [1, 2, 3, 4, 5, 6]
    with open(pgn, "a") as fh:                          # the journalled games, then two of a lost pair
        fh.write("".join(_pgn_game(r) for r in (1, 2, 3, 4, 5, 6, 7, 8)))
    S.run_spsa(S.SpsaConfig("grand", [], resume_path=str(tmp_path / "p.jsonl"), progress=False),
               play=_stub(), stop_after=1)
    from bench.pgn_reader import read_games
    assert [g.tags["Round"] for g in read_games(pgn.read_text())] == ["999", "1", "2", "3", "4", "5", "6"]


def test_pgn_option_is_checked_like_the_journal(tmp_path):
    r = run("tune", "spsa", "--variant", "grand", "--pgn", str(tmp_path), "--journal", str(tmp_path / "j.jsonl"))
    assert r.returncode == 2 and "--pgn" in r.stderr and "is a directory" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "j.jsonl").exists()


def test_a_real_pair_is_written_to_the_pgn_as_training_data(tmp_path):
    """One real iteration (chess, 200 nodes a move): both games land in --pgn with the rounds the
    journal records, legal from their opening, their moves scored; ``cardinal tune pgn`` reads them."""
    from tests.engine_proc import ensure_warm_cache
    ensure_warm_cache()        # a cold compile on a busy machine would outlast the engines' start-up wait
    j, pgn = tmp_path / "s.jsonl", tmp_path / "s.pgn"
    r = run("tune", "spsa", "--variant", "chess", "--params", "RFP_MARGIN", "--iterations", "1", "--nodes", "200",
            "--journal", str(j), "--out", str(tmp_path / "chess.json"), "--pgn", str(pgn), "--no-progress",
            timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    from bench.pgn_reader import read_games, replay
    games = read_games(pgn.read_text())
    _, lines = S.read_journal(str(j))
    assert [int(g.tags["Round"]) for g in games] == [g["round"] for g in lines[0]["games"]] == [1, 2]
    assert [g.tags["White"] for g in games] == ["theta+", "theta-"]
    for g in games:
        replay(g)                                        # raises on an illegal move
        assert g.result in ("1-0", "0-1", "1/2-1/2") and any(g.comments), (lines, pgn.read_text())
    assert games[0].tags.get("FEN") == games[1].tags.get("FEN")     # one opening, colours reversed

# ------------------------------------------------------------------ command line

@pytest.mark.parametrize("args,msg", [
    (("--variant", "shogi"), "shogi"),
    (("--variant", "grand", "--params", "NO_SUCH"), "unknown parameter 'NO_SUCH'"),
    (("--variant", "grand", "--iterations", "0"), "--iterations must be at least 1"),
    (("--variant", "grand", "--alpha", "1.5"), "--alpha must be in (0, 1]"),
    (("--variant", "grand", "--A", "-1"), "--A must not be negative"),
    (("--variant", "grand", "--params", "time"), "give --tc"),
    (("--variant", "grand", "--nodes", "x"), "--nodes"),
    (("--variant", "grand", "--scheduler", "nowhere"), "expected tcp://HOST:PORT or local:N"),
    (("--variant", "grand", "--journal", "/proc/spsa.jsonl"), "/proc"),
    (("--variant", "grand", "--resume", "/nonexistent/j.jsonl"), "no such journal"),
])
def test_bad_input_is_one_line_and_status_2(args, msg):
    r = run("tune", "spsa", *args)
    assert r.returncode == 2, r.stderr
    assert msg in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "Traceback" not in r.stderr


def test_unreachable_scheduler_is_one_line_status_2_and_the_journal_kept(tmp_path):
    """Nothing listens at the scheduler's address: one error line naming it, exit status 2, no
    traceback, and the journal of an earlier run is left as it was."""
    import socket
    with socket.socket() as sk:          # a port that was free a moment ago: nothing listens there
        sk.bind(("127.0.0.1", 0))
        port = sk.getsockname()[1]
    j = tmp_path / "s.jsonl"
    r = run("tune", "spsa", "--variant", "grand", "--params", "FUT_MARGIN", "--iterations", "2",
            "--scheduler", f"tcp://127.0.0.1:{port}", "--journal", str(j), "--no-progress", timeout=180)
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"127.0.0.1:{port}" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "Traceback" not in r.stderr
    if j.exists():
        header, lines = S.read_journal(str(j))
        assert lines == []


def test_resume_of_another_file_is_an_error(tmp_path):
    bad = tmp_path / "x.jsonl"
    bad.write_text('{"format": "something-else"}\n')
    r = run("tune", "spsa", "--variant", "grand", "--resume", str(bad))
    assert r.returncode == 2 and "not a cardinal tune spsa journal" in r.stderr


@pytest.mark.slow
def test_tiny_real_run_local_concurrency_2(tmp_path):
    j, out, plot = tmp_path / "s.jsonl", tmp_path / "chess.json", tmp_path / "s.svg"
    r = run("tune", "spsa", "--variant", "chess", "--params", "RFP_MARGIN", "FUT_MARGIN", "--iterations", "2",
            "--nodes", "500", "--concurrency", "2", "--journal", str(j), "--out", str(out), "--plot", str(plot),
            "--no-progress", timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    header, lines = S.read_journal(str(j))
    assert header["variant"] == "chess" and len(lines) == 2
    for ln in lines:
        assert [g["white"] for g in ln["games"]] == ["theta+", "theta-"]
        assert ln["result"] == sum(1 if g["plus_score"] == 1 else -1 if g["plus_score"] == 0 else 0
                                   for g in ln["games"])
    assert set(json.loads(out.read_text())["params"]) == {"RFP_MARGIN", "FUT_MARGIN"}
    assert plot.read_text().startswith("<svg")
    assert "spsa chess: 2/2 iterations" in r.stdout and "RFP_MARGIN" in r.stdout


@pytest.mark.slow
def test_dask_cluster_with_a_worker_killed_mid_run(tmp_path):
    """Two ``dask worker`` processes; one is killed while it plays a pair: the pair is played
    again elsewhere (journalled as a re-run) and the run ends with every iteration done once."""
    import time
    from tests.test_cluster import HANG, Cluster, _env, _need_dask
    _need_dask()
    cluster = Cluster(tmp_path)
    j = tmp_path / "d.jsonl"
    log = open(tmp_path / "client.log", "w")
    p = subprocess.Popen([sys.executable, "-m", "engine", "tune", "spsa", "--variant", "chess", "--params",
                          "RFP_MARGIN", "--iterations", "6", "--nodes", "300", "--scheduler", cluster.address,
                          "--journal", str(j), "--out", str(tmp_path / "chess.json"), "--no-progress"],
                         cwd=ROOT, env=_env(), stdout=log, stderr=subprocess.STDOUT)
    try:
        victim = cluster.workers[0]
        addr = cluster.worker_of(victim)
        deadline = time.monotonic() + 4 * HANG
        while time.monotonic() < deadline:
            done = j.exists() and sum('"type":"iter"' in ln for ln in j.read_text().splitlines()) >= 1
            if done and cluster.client.processing().get(addr):
                break
            time.sleep(0.05)
        else:
            pytest.fail("the run never got going")
        victim.kill()
        assert p.wait(timeout=6 * HANG) == 0, (tmp_path / "client.log").read_text()
    finally:
        if p.poll() is None:
            p.kill()
        log.close()
        cluster.close()
    header, lines = S.read_journal(str(j))
    assert len(lines) == 6 and len({ln["pair"] for ln in lines}) == 6      # every iteration once
    assert any(json.loads(ln).get("type") == "rerun" for ln in j.read_text().splitlines())
    assert "6/6 iterations" in (tmp_path / "client.log").read_text()
