"""Texel tuning (bench/tune/, ``cardinal tune``): the fitter recovers known weights on
synthetic data, a fit on real self-play data lowers the loss and writes a weights file
that loads back, datagen's resume / Ctrl-C semantics, the quiet filter, White-POV
results and scores, and bad command lines (exit status 2, one line, no traceback)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import scipy.sparse as sp

from bench import tune as T

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(*args, timeout=120):
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return subprocess.run([sys.executable, "-m", "engine", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def searcher():
    from search.driver import Searcher
    return Searcher(4)


# ------------------------------------------------------------------ the fitter

def _synthetic(n=40000, nf=6, total=24, K=1.3, seed=5):
    rng = np.random.default_rng(seed)
    F = rng.integers(-2, 3, size=(n, nf)).astype(np.float64)
    F[:, -1] = rng.choice([-1.0, 1.0], size=n)            # a tempo-like feature
    phase = rng.integers(0, total + 1, size=n).astype(np.float64)
    w_mg = np.array([100.0, 300.0, -50.0, 0.0, 200.0, 15.0])[:nf]
    w_eg = np.array([150.0, 250.0, -20.0, 80.0, 120.0, 5.0])[:nf]
    m = T.Model(sp.csr_matrix(F), phase, total)
    y = (rng.random(n) < T.sigmoid(m.scores(w_mg, w_eg), K)).astype(np.float64)
    return m, y, w_mg, w_eg, K


def test_sigmoid_is_texel_logistic():
    assert T.sigmoid(0.0, 1.0) == pytest.approx(0.5)
    assert T.sigmoid(400.0, 1.0) == pytest.approx(1 / (1 + 10 ** -1))
    assert T.sigmoid(-200.0, 2.0) == pytest.approx(1 / (1 + 10 ** 1))


def test_gradient_matches_finite_differences():
    m, y, w_mg, w_eg, K = _synthetic(n=2000)
    rng = np.random.default_rng(1)
    a, b = w_mg + rng.normal(0, 30, len(w_mg)), w_eg + rng.normal(0, 30, len(w_eg))
    _, gm, ge = m.loss_grad(a, b, K, y)
    h = 1e-3
    for i in range(len(a)):
        d = np.zeros(len(a))
        d[i] = h
        num_m = (m.loss(a + d, b, K, y) - m.loss(a - d, b, K, y)) / (2 * h)
        num_e = (m.loss(a, b + d, K, y) - m.loss(a, b - d, K, y)) / (2 * h)
        assert gm[i] == pytest.approx(num_m, rel=1e-4, abs=1e-12)
        assert ge[i] == pytest.approx(num_e, rel=1e-4, abs=1e-12)


def test_fit_recovers_known_k_and_weights():
    m, y, w_mg, w_eg, K = _synthetic()
    # K with the true weights
    assert T.fit_k(m, w_mg, w_eg, y) == pytest.approx(K, abs=0.08)
    # weights from a far start (all zero except a frozen feature), K known
    free = np.array([True, True, True, True, True, True])
    free_mg = free.copy()
    free_mg[3] = False                       # frozen: keeps its start value
    w0m = np.zeros(6)
    w0m[3] = 0.0
    w0e = np.zeros(6)
    bounds = [(0, None)] * 5 + [(None, None)]
    bounds[2] = (None, 0)
    r = T.fit_weights(m, y, K, w0m, w0e, free_mg, free, bounds, bounds, l2=0.0, max_iter=500)
    assert r.converged, r.message
    assert r.w_mg[3] == 0.0
    np.testing.assert_allclose(r.w_mg, w_mg, atol=12)
    np.testing.assert_allclose(r.w_eg, w_eg, atol=12)
    assert m.loss(r.w_mg, r.w_eg, K, y) <= m.loss(w_mg, w_eg, K, y) + 1e-6


def test_fit_respects_bounds_and_l2():
    m, y, w_mg, w_eg, K = _synthetic(n=5000)
    free = np.ones(6, dtype=bool)
    # feature 2 is really negative: bounded at >= 0 it ends on the bound
    b = [(0, None)] * 6
    r = T.fit_weights(m, y, K, np.zeros(6), np.zeros(6), free, free, b, b, l2=0.0)
    assert r.w_mg[2] == pytest.approx(0.0, abs=1e-6) and r.w_eg[2] == pytest.approx(0.0, abs=1e-6)
    # a huge L2 penalty keeps the weights at the start
    w0 = np.full(6, 50.0)
    r = T.fit_weights(m, y, K, w0, w0, free, free, None, None, l2=1e6)
    np.testing.assert_allclose(r.w_mg, w0, atol=0.5)


def test_split_by_game_is_seeded_and_keeps_games_whole():
    game = np.repeat(np.arange(50), 7)
    a = T.split_by_game(game, 0.2, 3)
    assert np.array_equal(a, T.split_by_game(game, 0.2, 3))
    assert len(np.unique(game[a])) == 10
    assert not set(game[a]) & set(game[~a])
    assert not np.array_equal(a, T.split_by_game(game, 0.2, 4))


# ------------------------------------------------------------------ datagen

def _lines(path, kind):
    with open(path, encoding="utf-8") as fh:
        return [ln.rstrip("\n").split("\t") for ln in fh if ln.startswith(kind + "\t")]


def test_datagen_resume_and_interrupt(tmp_path):
    one = str(tmp_path / "one.txt")
    r = T.datagen("knightrelay", 3, one, nodes=300, progress=False)
    assert (r.games_done, r.games_new) == (3, 3) and not r.interrupted
    two = str(tmp_path / "two.txt")
    T.datagen("knightrelay", 2, two, nodes=300, progress=False)
    first = open(two, "rb").read()
    r = T.datagen("knightrelay", 3, two, nodes=300, progress=False)
    assert (r.games_done, r.games_new) == (3, 1)
    data = open(two, "rb").read()
    assert data.startswith(first)                          # the first two games unchanged
    assert [g[1] for g in _lines(two, "G")] == ["0", "1", "2"]
    assert data == open(one, "rb").read()                  # reproducible: same games as in one go
    # nothing to do: unchanged
    r = T.datagen("knightrelay", 3, two, nodes=300, progress=False)
    assert r.games_new == 0 and open(two, "rb").read() == data
    # a crash in the middle of writing a game: its lines are dropped, the game is played again
    with open(two, "a", encoding="utf-8") as fh:
        fh.write("P\trnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\t1\t5\t3\t9\nP\tr")
    ds = T.read_data(two, "knightrelay")
    assert 3 not in set(ds.game)
    r = T.datagen("knightrelay", 4, two, nodes=300, progress=False)
    assert r.games_new == 1
    assert open(two, "rb").read().startswith(data) and [g[1] for g in _lines(two, "G")] == ["0", "1", "2", "3"]

    # Ctrl-C after the first finished game: it is kept, the rest are not written
    three = str(tmp_path / "three.txt")

    def stop(g):
        raise KeyboardInterrupt
    r = T.datagen("knightrelay", 3, three, nodes=300, progress=False, log=stop)
    assert r.interrupted and r.games_done == 1
    assert [g[1] for g in _lines(three, "G")] == ["0"]
    # other settings on the same file: refused
    with pytest.raises(ValueError, match="nodes"):
        T.datagen("knightrelay", 3, three, nodes=301, progress=False)


def test_recorded_positions_are_quiet_and_results_white_pov(tmp_path):
    from engine.rules.position import Position
    out = str(tmp_path / "g.txt")
    T.datagen("grand", 4, out, nodes=300, progress=False)
    games = {g[1]: g for g in _lines(out, "G")}
    assert len(games) == 4
    draws = {"stalemate", "repetition", "fifty", "insufficient", "adj-draw", "max-plies"}
    for gid, g in games.items():
        res, term = float(g[2]), g[4]
        assert (res == 0.5) == (term in draws), g
    pos_lines = _lines(out, "P")
    assert pos_lines
    for _, fen, res, score, gid, ply in pos_lines:
        assert res == games[gid][2]                     # every position carries its game's result
        assert int(ply) >= T.SKIP_PLIES and abs(int(score)) <= T.MAX_RECORD_CP
        assert not Position.from_fen(fen, "grand").is_check()
    # the mirrored opening: odd games start from the colour-swapped position
    assert games["1"][5] == games["0"][5] + " (mirrored)"


def test_results_and_scores_are_white_pov(searcher, monkeypatch):
    # White mates in one / Black mates in one
    g = T.play_game(searcher, "chess", 0, "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", "w", 200, 1)
    assert (g.result, g.termination, g.plies) == (1.0, "checkmate", 1)
    g = T.play_game(searcher, "chess", 0, "r5k1/8/8/8/8/8/5PPP/6K1 b - - 0 1", "b", 200, 1)
    assert (g.result, g.termination, g.plies) == (0.0, "checkmate", 1)
    # Black a queen up: adjudicated as Black's win, White-POV scores negative whoever is to move
    monkeypatch.setattr(T.selfplay, "SKIP_PLIES", 0)     # the module whose play_game reads it
    g = T.play_game(searcher, "chess", 0, "3qk3/pppp4/8/8/8/8/PPPP4/4K3 w - - 0 1", "q", 300, 1)
    assert (g.termination, g.result, g.plies) == ("adj-win", 0.0, T.WIN_PLIES - 1)
    assert len(g.positions) >= 3 and all(sc < -300 for _, sc, _ in g.positions)
    assert {p[0].split()[1] for p in g.positions} == {"w", "b"}


def test_mirror_fen():
    f = "r3k2r/pp3ppp/8/3pP3/8/8/PPP2PPP/R3K2R w KQk d6 0 12"
    m = T.mirror_fen(f)
    assert m == "r3k2r/ppp2ppp/8/8/3Pp3/8/PP3PPP/R3K2R b Kkq d3 0 12"
    assert T.mirror_fen(m) == f


# ------------------------------------------------------------------ fit on real data

def test_fit_on_selfplay_data_lowers_loss_and_writes_weights(tmp_path):
    data = str(tmp_path / "kr.txt")
    T.datagen("knightrelay", 6, data, nodes=300, progress=False)
    wpath = str(tmp_path / "kr.json")
    rep = T.fit("knightrelay", data, out=wpath, seed=2, val=0.34, max_iter=100)
    assert rep.n_train > 0 and rep.n_val > 0 and rep.n_train + rep.n_val == rep.n_positions
    assert rep.loss_after[0] < rep.loss_before[0]
    assert 0.05 < rep.K < 10
    with open(wpath, encoding="utf-8") as fh:
        d = json.load(fh)
    assert d["version"] == 1 and d["variant"] == "knightrelay"
    used = np.asarray(T.feature_used("knightrelay"), dtype=bool)
    names = {T.FEATURES[i] for i in np.flatnonzero(used)}
    assert set(d["mg"]) == names and set(d["eg"]) == names      # the features this variant uses
    assert d["meta"]["positions"] == rep.n_positions and d["meta"]["K"] == pytest.approx(rep.K, abs=1e-5)
    assert d["meta"]["data"] == "kr.txt" and d["meta"]["seed"] == 2
    # the history of the shipped weights goes on, with this fit as its newest entry
    _, shipped = T.previous_history("knightrelay")
    assert d["meta"]["history"][:-1] == shipped and d["meta"]["history"][-1]["fit"] == len(shipped) + 1
    assert d["meta"]["history"][-1]["data"] == "kr.txt" and d["meta"]["history_note"]
    mg, eg = T.load_weights("knightrelay", wpath)          # the engine's reader accepts it
    assert np.array_equal(mg, rep.new_mg) and np.array_equal(eg, rep.new_eg)
    # frozen features keep their start value
    assert np.array_equal(mg[~used], rep.old_mg[~used]) and np.array_equal(eg[~used], rep.old_eg[~used])
    # deterministic
    rep2 = T.fit("knightrelay", data, seed=2, val=0.34, max_iter=100, write=False)
    assert np.array_equal(rep2.new_mg, rep.new_mg) and rep2.K == rep.K


def test_cli_fit_prints_report(tmp_path):
    data = str(tmp_path / "kr.txt")
    T.datagen("knightrelay", 2, data, nodes=300, progress=False)
    r = run("tune", "fit", "--variant", "knightrelay", "--data", data, "--out", str(tmp_path / "w.json"),
            "--max-iter", "30", "--val", "0.5")
    assert r.returncode == 0, r.stderr
    for key in ("train:", "validation:", "K = ", "before", "after", "moved most", "wrote"):
        assert key in r.stdout, r.stdout
    assert os.path.exists(tmp_path / "w.json")


# ------------------------------------------------------------------ command line

@pytest.mark.parametrize("args,word", [
    (("tune", "--variant", "shogi"), "shogi"),
    (("tune", "datagen", "--variant", "shogi"), "shogi"),
    (("tune", "pgn", "--variant", " ", "--pgn", "x.pgn", "--out", "y.txt"), "--variant is empty"),
    (("tune", "fit", "--variant", "grand", "--data", "/nonexistent/x.txt"), "x.txt"),
    (("tune", "fit", "--variant", "grand"), "--data"),
    (("tune", "datagen"), "--variant"),
    (("tune", "datagen", "--variant", "grand", "--games", "0"), "--games"),
    (("tune", "datagen", "--variant", "grand", "--nodes", "abc"), "--nodes"),
    (("tune", "datagen", "--variant", "grand", "--concurrency", "-1"), "--concurrency"),
    (("tune", "fit", "--variant", "grand", "--data", "x", "--val", "1.5"), "--val"),
    (("tune", "fit", "--variant", "grand", "--data", "x", "--lambda", "2"), "--lambda"),
    (("tune", "fit", "--variant", "grand", "--data", "x", "--max-iter", "0"), "--max-iter"),
    (("tune", "datagen", "--variant", "grand", "--bogus"), "--bogus"),
])
def test_cli_misuse_exits_2_with_one_line(args, word):
    r = run(*args)
    assert r.returncode == 2, (r.returncode, r.stderr)
    err = r.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and word in err[0], r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""


def test_cli_bad_data_files_exit_2(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("hello\tworld\n")
    r = run("tune", "fit", "--variant", "grand", "--data", str(bad))
    assert r.returncode == 2 and "bad.txt:1" in r.stderr and "Traceback" not in r.stderr
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    r = run("tune", "fit", "--variant", "grand", "--data", str(empty))
    assert r.returncode == 2 and "no positions" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    # another variant's data file
    other = tmp_path / "kr.txt"
    other.write_text("# cardinal-tune v1 variant=knightrelay nodes=300 seed=1 openings=default\n")
    r = run("tune", "fit", "--variant", "grand", "--data", str(other))
    assert r.returncode == 2 and "knightrelay" in r.stderr and "Traceback" not in r.stderr
    r = run("tune", "datagen", "--variant", "grand", "--out", str(other), "--games", "1")
    assert r.returncode == 2 and "variant" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
def test_cli_ctrl_c_keeps_finished_games(tmp_path, how):
    """Ctrl-C (SIGINT to the process group), or SIGTERM to the parent alone as ``kill PID``
    or a job scheduler sends it, with two worker processes: exit 130, no traceback (also
    none from a worker left behind: its stderr is this pipe, which stays open until every
    worker is gone), the file holds only whole games, and running again continues it."""
    out = tmp_path / "d.txt"
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT
    p = subprocess.Popen([sys.executable, "-m", "engine", "tune", "datagen", "--variant", "knightrelay",
                          "--games", "400", "--nodes", "300", "--concurrency", "2", "--out", str(out)],
                         cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    t0 = time.time()
    while time.time() - t0 < 300 and not (out.exists() and out.read_text().count("\nG\t") >= 2):
        time.sleep(0.2)
    if how == "ctrl-c":
        os.killpg(p.pid, signal.SIGINT)
    else:
        p.send_signal(signal.SIGTERM)
    so, se = p.communicate(timeout=60)
    assert p.returncode == 130, se
    assert "Traceback" not in se and "interrupted" in se
    text = out.read_text()
    assert text.endswith("\n") and text.rstrip("\n").split("\n")[-1].startswith("G\t")
    n = text.count("\nG\t")
    assert 2 <= n < 400
    header, done, end = T.scan_data(str(out))
    assert end == len(text.encode()) and len(done) == n
    r = T.datagen("knightrelay", n + 1, str(out), nodes=300, progress=False)
    assert r.games_done == n + 1 and r.games_new == len(set(range(n + 1)) - done) >= 1


@pytest.mark.parametrize("variant", ["grand", "knightrelay"])
def test_model_matches_the_engine_eval(variant):
    """The tuner's model (features, phase, taper) gives the engine's evaluate(), so fitted
    weights mean in the engine what they meant in the fit."""
    from engine.rules.position import Position
    from search.eval import build_eval, evaluate, WS_SIZE
    from tests.conftest import playouts
    fens = [f for g in playouts(variant, 4, 120, 3) for f in g.fens[::5]]
    F, phase = T.extract_features(variant, fens)
    w_mg, w_eg = T.load_weights(variant)
    s = T.Model(F, phase, T.phase_total(variant)).scores(w_mg, w_eg)
    ev = build_eval(variant)
    ws = np.zeros(WS_SIZE, dtype=np.int32)
    for fen, x in zip(fens, s):
        pos = Position.from_fen(fen, variant)
        e = int(evaluate(pos.board, pos.st, pos.vt, ev, ws))
        white = e if pos.turn == 0 else -e
        assert white == int(x) or abs(white - x) < 1.0 + 1e-6, (fen, white, x)


def test_cli_tune_runs_datagen_then_fit(tmp_path):
    data, w = tmp_path / "d.txt", tmp_path / "w.json"
    r = run("tune", "--variant", "knightrelay", "--games", "3", "--nodes", "300", "--concurrency", "1",
            "--data", str(data), "--out", str(w), "--max-iter", "20", "--val", "0.34")
    assert r.returncode == 0, r.stderr
    assert "datagen:" in r.stdout and "3/3 games" in r.stdout and "K = " in r.stdout and "wrote" in r.stdout
    assert data.read_text().count("\nG\t") == 3
    assert json.loads(w.read_text())["meta"]["games"] == 3


# ------------------------------------------------------------------ teacher scores (cardinal tune teacher)

FAKE_UCI = r'''
import os, sys
table = {}
with open(os.environ["FAKE_TABLE"]) as fh:
    for ln in fh:
        key, kind, v = ln.rstrip("\n").split("\t")
        table[key] = (kind, int(v))
log = open(os.environ["FAKE_LOG"], "a")
fen = None
for line in sys.stdin:
    tok = line.split()
    if not tok:
        continue
    if tok[0] == "quit":
        break
    if tok[0] == "uci":
        print("id name FakeTeacher")
        print("option name UCI_Variant type combo default chess var chess var grand var knightrelay")
        print("option name Hash type spin default 16 min 1 max 1024")
        print("option name Threads type spin default 1 min 1 max 8")
        print("uciok", flush=True)
    elif tok[0] == "setoption":
        log.write(" ".join(tok) + "\n")
        log.flush()
    elif tok[0] == "isready":
        print("readyok", flush=True)
    elif tok[0] == "position":
        fen = " ".join(tok[2:8])
    elif tok[0] == "eval" and os.environ.get("FAKE_NO_EVAL"):
        print("Unknown command: eval", flush=True)
    elif tok[0] == "eval":     # Stockfish's static evaluation: the table's cp as pawns, White's view
        log.write("eval " + fen + "\n")
        log.flush()
        kind, v = table.get(" ".join(fen.split()[:4]), ("cp", 7))
        if kind == "mate":
            print("Total evaluation: none (in check)", flush=True)
        else:
            print("     Term    |    White    |    Black    |    Total")
            print(f"Total evaluation: {(v if fen.split()[1] == 'w' else -v) / 100:.2f} (white side)", flush=True)
    elif tok[0] == "go":
        log.write("go " + fen + " | " + " ".join(tok[1:]) + "\n")
        log.flush()
        kind, v = table.get(" ".join(fen.split()[:4]), ("cp", 7))
        print("info depth 1 score cp 99999 nodes 1 pv a2a3")
        print(f"info depth 2 score {kind} {v} nodes 2 pv a2a3")
        print("bestmove a2a3", flush=True)
'''

# White to move / Black to move / a mate / a duplicate (in game 1) / an unfinished game (3)
_W1 = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"
_B1 = "4k3/8/8/8/8/8/4P3/4K3 b - - 0 1"
_M1 = "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1"
_W2 = "4k3/8/8/8/8/8/3QP3/4K3 w - - 3 9"
_B2 = "4k3/8/8/8/8/8/3QP3/4K3 b - - 4 9"
TEACH_IN = ("# cardinal-tune v1 variant=chess nodes=300 seed=1 openings=default weights=hand\n"
            f"P\t{_W1}\t1\t50\t0\t8\nP\t{_B1}\t1\t60\t0\t9\nP\t{_M1}\t1\t70\t0\t10\n"
            "G\t0\t1\t11\tcheckmate\top0\n"
            f"P\t{_W2}\t0.5\t-5\t1\t8\nP\t{_B2}\t0.5\t-6\t1\t9\nP\t{_W1}\t0.5\t40\t1\t12\n"
            "G\t1\t0.5\t90\tadj-draw\top0 (mirrored)\n"
            "G\t2\t0\t3\tcheckmate\top1\n"
            f"P\t{_W2}\t0\t1\t3\t8\n")


@pytest.fixture
def fake_teacher(tmp_path, monkeypatch):
    exe = tmp_path / "fake-teacher"
    exe.write_text(f"#!{sys.executable}\n" + FAKE_UCI)
    exe.chmod(0o755)
    table = tmp_path / "table.tsv"
    table.write_text(f"4k3/8/8/8/8/8/4P3/4K3 w - -\tcp\t120\n"
                     f"4k3/8/8/8/8/8/4P3/4K3 b - -\tcp\t-130\n"     # Black to move, Black worse: White +130
                     f"6k1/5ppp/8/8/8/8/8/R5K1 w - -\tmate\t1\n"
                     f"4k3/8/8/8/8/8/3QP3/4K3 w - -\tcp\t900\n"
                     f"4k3/8/8/8/8/8/3QP3/4K3 b - -\tcp\t-910\n")
    log = tmp_path / "engine.log"
    monkeypatch.setenv("FAKE_TABLE", str(table))
    monkeypatch.setenv("FAKE_LOG", str(log))
    data = tmp_path / "in.txt"
    data.write_text(TEACH_IN)
    return str(exe), str(data), log


def _gos(log):
    return [ln for ln in log.read_text().splitlines() if ln.startswith("go ")] if log.exists() else []


def test_teacher_scores_white_pov_drops_mates_and_caches(fake_teacher, tmp_path):
    from bench.engines import live_processes
    exe, data, log = fake_teacher
    out = str(tmp_path / "out.txt")
    r = T.teacher("chess", data, out, depth=3, engine=exe, progress=False)
    assert (r.games_total, r.games_done, r.games_new) == (3, 3, 3) and not r.interrupted
    assert r.positions_new == 5 and r.mates_dropped == 1 and r.searches == 5   # _W1 twice: searched once
    assert live_processes() == 0
    header = T.parse_header(open(out).readline())
    assert header["teacher"] == "fake-teacher" and header["depth"] == "3"
    assert header["variant"] == "chess" and header["nodes"] == "300" and header["weights"] == "hand"
    rows = _lines(out, "P")
    assert [(fen, res, sc, g, ply) for _, fen, res, sc, g, ply in rows] == [
        (_W1, "1", "120", "0", "8"), (_B1, "1", "130", "0", "9"),
        (_W2, "0.5", "900", "1", "8"), (_B2, "0.5", "910", "1", "9"), (_W1, "0.5", "120", "1", "12")]
    assert [g[1:] for g in _lines(out, "G")] == [["0", "1", "11", "checkmate", "op0"],
                                                ["1", "0.5", "90", "adj-draw", "op0 (mirrored)"],
                                                ["2", "0", "3", "checkmate", "op1"]]
    text = log.read_text()
    assert "setoption name UCI_Variant value chess" in text and "setoption name Threads value 1" in text
    assert "setoption name Hash value 16" in text
    assert all(g.endswith("| depth 3") for g in _gos(log))
    ds = T.read_data(out, "chess", dedup=False)              # the fitter reads it
    assert list(ds.score) == [120, 130, 900, 910, 120] and T.default_score_k(ds.header) == "fit"


def test_teacher_resumes_and_keeps_finished_games_on_ctrl_c(fake_teacher, tmp_path):
    from bench.engines import live_processes
    exe, data, log = fake_teacher
    full = str(tmp_path / "full.txt")
    T.teacher("chess", data, full, depth=3, engine=exe, progress=False)
    want = open(full, "rb").read()
    # Ctrl-C after the first game: it is kept, the engine is killed
    part = str(tmp_path / "part.txt")

    def stop(gid):
        raise KeyboardInterrupt
    r = T.teacher("chess", data, part, depth=3, engine=exe, progress=False, log=stop)
    assert r.interrupted and r.games_done == 1 and live_processes() == 0
    assert [g[1] for g in _lines(part, "G")] == ["0"]
    # a game cut in the middle of its lines, then a rerun: only the missing games are searched
    with open(part, "a", encoding="utf-8") as fh:
        fh.write(f"P\t{_W2}\t0.5\t900\t1\t8\nP\t4k")
    log.write_text("")
    r = T.teacher("chess", data, part, depth=3, engine=exe, progress=False)
    assert (r.games_done, r.games_new) == (3, 2) and open(part, "rb").read() == want
    assert sorted(g.split(" | ")[0][3:] for g in _gos(log)) == sorted([_W1, _W2, _B2])
    # complete: nothing to do, no engine started
    log.write_text("")
    r = T.teacher("chess", data, part, depth=3, engine=exe, progress=False)
    assert r.games_new == 0 and open(part, "rb").read() == want and _gos(log) == []
    # another depth on the same file: refused
    with pytest.raises(ValueError, match="depth"):
        T.teacher("chess", data, part, depth=4, engine=exe, progress=False)


def test_teacher_concurrency_two_engines(fake_teacher, tmp_path):
    exe, data, log = fake_teacher
    out = str(tmp_path / "out.txt")
    r = T.teacher("chess", data, out, depth=2, engine=exe, concurrency=2, progress=False)
    assert r.games_done == 3 and r.positions_new == 5
    assert sorted(g[1] for g in _lines(out, "G")) == ["0", "1", "2"]
    assert sorted(int(p[3]) for p in _lines(out, "P")) == [120, 120, 130, 900, 910]


def test_cli_teacher(fake_teacher, tmp_path):
    exe, data, log = fake_teacher
    out = tmp_path / "o.txt"
    r = run("tune", "teacher", "--variant", "chess", "--data", data, "--out", str(out), "--depth", "2",
            "--engine", exe)
    assert r.returncode == 0, r.stderr
    assert "3/3 games" in r.stdout and "1 mate scores dropped" in r.stdout and out.exists()
    for args, word in [(("--data", str(tmp_path / "nope.txt"), "--out", str(out)), "nope.txt"),
                       (("--data", data, "--out", str(tmp_path / "x.txt"), "--engine", str(tmp_path / "none")), "none"),
                       (("--data", data, "--out", str(tmp_path / "x.txt"), "--engine", exe, "--depth", "100"), "--depth"),
                       (("--data", data, "--out", str(tmp_path / "x.txt"), "--engine", exe, "--variant", "grand"),
                        "variant chess"),
                       (("--data", data), "--out")]:
        a = ["tune", "teacher", "--variant", "chess", *args]
        r = run(*a)
        assert r.returncode == 2, (a, r.stderr)
        err = r.stderr.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error:") and word in err[0], (a, r.stderr)
        assert "Traceback" not in r.stderr
    assert not (tmp_path / "x.txt").exists()


def test_cli_teacher_write_that_fails_names_the_file_and_keeps_it(fake_teacher, tmp_path):
    """An --out that takes the file and refuses its bytes (here a link to /dev/full, as a
    full disk): one error line naming it, and the output is not deleted (a device is not
    the header-only file a failed start would leave)."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    exe, data, log = fake_teacher
    out = tmp_path / "full.txt"
    out.symlink_to("/dev/full")
    r = run("tune", "teacher", "--variant", "chess", "--data", data, "--out", str(out), "--depth", "2",
            "--engine", exe)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [f"error: {out}: No space left on device"], r.stderr
    assert os.path.islink(out)


def test_teacher_depth_0_takes_the_static_evaluation(fake_teacher, tmp_path):
    """--depth 0: Stockfish's eval command instead of a search; its 'Total evaluation' (pawns,
    White's view) becomes centipawns; a position it prints no number for is dropped."""
    exe, data, log = fake_teacher
    out = tmp_path / "o.txt"
    r = run("tune", "teacher", "--variant", "chess", "--data", data, "--out", str(out), "--depth", "0",
            "--engine", exe)
    assert r.returncode == 0, r.stderr
    assert "1 mate scores dropped" in r.stdout
    assert _gos(log) == [] and sum(ln.startswith("eval ") for ln in log.read_text().splitlines()) == 5
    sc = {p[1]: int(p[3]) for p in _lines(str(out), "P")}
    assert sc[_W1] == 120 and sc[_B1] == 130 and sc[_W2] == 900 and sc[_B2] == 910 and _M1 not in sc
    assert T.parse_header(out.read_text().splitlines()[0])["depth"] == "0"


def test_teacher_depth_0_with_an_engine_without_eval_fails_at_once(fake_teacher, tmp_path, monkeypatch):
    """An engine that does not know 'eval': a one-line error (no wait for the search timeout)
    and no output file left behind to block the next run."""
    exe, data, log = fake_teacher
    monkeypatch.setenv("FAKE_NO_EVAL", "1")
    out = tmp_path / "o.txt"
    r = run("tune", "teacher", "--variant", "chess", "--data", data, "--out", str(out), "--depth", "0",
            "--engine", exe, timeout=60)
    assert r.returncode == 2 and "printed no static evaluation" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert not out.exists()
    monkeypatch.delenv("FAKE_NO_EVAL")
    r = run("tune", "teacher", "--variant", "chess", "--data", data, "--out", str(out), "--depth", "0",
            "--engine", exe)
    assert r.returncode == 0 and out.exists(), r.stderr
    r = run("tune", "teacher", "--variant", "chess", "--data", data, "--out", data, "--engine", exe)
    assert r.returncode == 2 and "must not be the input" in r.stderr, r.stderr


def test_teacher_without_engine_is_an_error(fake_teacher, tmp_path, monkeypatch):
    from bench import engines as E
    exe, data, log = fake_teacher
    monkeypatch.setattr(E, "find_fairy_stockfish", lambda explicit=None: None)
    with pytest.raises(ValueError, match="Fairy-Stockfish not found"):
        T.teacher("chess", data, str(tmp_path / "o.txt"), progress=False)


def test_teacher_with_fairy_stockfish(tmp_path):
    from bench.engines import find_fairy_stockfish, live_processes
    if find_fairy_stockfish() is None:
        pytest.skip("Fairy-Stockfish not installed")
    # grand: White a queen up, White to move and Black to move; a level start position
    up_w = "r8r/1nbqkcabn1/pppppppppp/10/10/10/10/PPPPPPPPPP/1NBQKCABN1/R8R w - - 0 1".replace("1nbqkcabn1", "1nb1kcabn1")
    up_b = up_w.replace(" w ", " b ")
    start = "r8r/1nbqkcabn1/pppppppppp/10/10/10/10/PPPPPPPPPP/1NBQKCABN1/R8R w - - 0 1"
    data = tmp_path / "g.txt"
    data.write_text("# cardinal-tune v1 variant=grand nodes=300 seed=1 openings=default weights=hand\n"
                    f"P\t{up_w}\t1\t0\t0\t8\nP\t{up_b}\t1\t0\t0\t9\nP\t{start}\t0.5\t0\t0\t10\n"
                    "G\t0\t1\t40\tadj-win\tx\n")
    out = str(tmp_path / "o.txt")
    r = T.teacher("grand", str(data), out, depth=2, progress=False)
    assert r.positions_new == 3 and r.searches == 3 and live_processes() == 0
    sc = [int(p[3]) for p in _lines(out, "P")]
    assert sc[0] > 300 and sc[1] > 300 and abs(sc[2]) < 200, sc
    assert T.parse_header(open(out).readline())["teacher"] == "fairy-stockfish"
    static = str(tmp_path / "s.txt")          # its static evaluation (eval command) agrees in sign
    T.teacher("grand", str(data), static, depth=0, progress=False)
    sc = [int(p[3]) for p in _lines(static, "P")]
    assert sc[0] > 300 and sc[1] > 300 and abs(sc[2]) < 200, sc


def test_fit_scale_recovers_a_known_scale():
    rng = np.random.default_rng(3)
    s = rng.uniform(-900, 900, 60000)
    for k in (0.45, 1.6):
        y = (rng.random(len(s)) < T.sigmoid(s, k)).astype(np.float64)
        assert T.fit_scale(s, y) == pytest.approx(k, rel=0.06)
        # half the scale in the scores: twice the K
        assert T.fit_scale(s / 2, y) == pytest.approx(2 * k, rel=0.06)


def test_fit_score_k_default_and_teacher_scale(tmp_path):
    data = tmp_path / "kr.txt"
    T.datagen("knightrelay", 4, str(data), nodes=300, progress=False)
    # self-play data: 'same' by default, the same fit as with score_k='same' given
    rep = T.fit("knightrelay", str(data), seed=2, val=0.25, max_iter=30, write=False)
    assert rep.score_k == "same" and rep.K_s == rep.K and rep.meta["score_k"] == "same"
    rep2 = T.fit("knightrelay", str(data), seed=2, val=0.25, max_iter=30, write=False, score_k="same")
    assert np.array_equal(rep.new_mg, rep2.new_mg) and np.array_equal(rep.new_eg, rep2.new_eg)
    assert rep.loss_after == rep2.loss_after
    # a teacher's file with scores on three times the scale: K_s fitted, about a third of the scale of the
    # original scores, and 'fit' is the default
    lines = data.read_text().splitlines(keepends=True)
    out = [lines[0].rstrip("\n") + " teacher=fake depth=6\n"]
    for ln in lines[1:]:
        f = ln.rstrip("\n").split("\t")
        if f[0] == "P":
            f[3] = str(3 * int(f[3]))
        out.append("\t".join(f) + "\n")
    tdata = tmp_path / "kr-teacher.txt"
    tdata.write_text("".join(out))
    rt = T.fit("knightrelay", str(tdata), seed=2, val=0.25, max_iter=30, write=False)
    assert rt.score_k == "fit" and rt.meta["score_k"] == "fit"
    ds = T.read_data(str(data), "knightrelay")
    vm = T.split_by_game(ds.game, 0.25, 2)
    ks_orig = T.fit_scale(ds.score[~vm], ds.result[~vm])
    assert rt.K_s == pytest.approx(ks_orig / 3, rel=1e-3)
    with pytest.raises(ValueError, match="score_k"):
        T.fit("knightrelay", str(tdata), write=False, score_k="bogus")


def test_cli_fit_reports_k_s(tmp_path):
    data = tmp_path / "kr.txt"
    T.datagen("knightrelay", 2, str(data), nodes=300, progress=False)
    r = run("tune", "fit", "--variant", "knightrelay", "--data", str(data), "--out", str(tmp_path / "w.json"),
            "--max-iter", "10", "--val", "0.5", "--score-k", "fit")
    assert r.returncode == 0, r.stderr
    assert "K_s = " in r.stdout and "fitted to the score column" in r.stdout
    assert json.loads((tmp_path / "w.json").read_text())["meta"]["score_k"] == "fit"
    r = run("tune", "fit", "--variant", "knightrelay", "--data", str(data), "--score-k", "bogus")
    assert r.returncode == 2 and "--score-k" in r.stderr and "Traceback" not in r.stderr


# ------------------------------------------------------------------ several data files

def _data_file(path, games, header=None):
    """A data file of ``games``: a list of (game id, result, [fens])."""
    with open(path, "w", encoding="utf-8") as fh:
        if header is not None:
            fh.write(T.header_line(header))
        for gid, r, fens in games:
            for ply, fen in enumerate(fens):
                fh.write(f"P\t{fen}\t{r}\t{10 * ply}\t{gid}\t{ply}\n")
            fh.write(f"G\t{gid}\t{r}\n")
    return str(path)


# four chess positions after one move each (f2 after two), and a chess data header
_FOUR_FENS = ("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
              "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
              "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1",
              "rnbqkbnr/pppppppp/8/8/2P5/8/PP1PPPPP/RNBQKBNR b KQkq - 0 1")
_CHESS_HEAD = {"variant": "chess", "nodes": 300, "seed": 1}


def test_several_data_files_are_one_data_set(tmp_path):
    f1, f2, f3, f4 = _FOUR_FENS
    head = dict(_CHESS_HEAD)
    a = _data_file(tmp_path / "a.txt", [(0, 1, [f1, f2]), (1, 0, [f3])], head)
    b = _data_file(tmp_path / "b.txt", [(0, 0.5, [f2, f4])], dict(head, seed=2))  # game 0 again; f2 again
    ds = T.read_data([a, b], "chess")
    assert ds.fens == [f1, f2, f3, f4] and ds.duplicates == 1 and ds.games == 3
    assert list(ds.game) == [0, 0, 1, 2]           # b's game 0 is a game of its own
    assert list(ds.result) == [1, 1, 0, 0.5] and ds.header["seed"] == "1"
    assert [h["seed"] for h in ds.headers] == ["1", "2"]   # every file's header, in order
    one = T.read_data(a, "chess")                   # one file reads as before
    assert one.fens == [f1, f2, f3] and list(one.game) == [0, 0, 1]
    # a teacher's scores are on another scale: not fitted with self-play scores
    c = _data_file(tmp_path / "c.txt", [(0, 1, [f4])], dict(head, teacher="fairy-stockfish", depth=6))
    with pytest.raises(ValueError, match="teacher"):
        T.read_data([a, c], "chess")
    # the command line takes several files, and names them in the weights file
    r = run("tune", "fit", "--variant", "chess", "--data", a, b, "--out", str(tmp_path / "w.json"),
            "--max-iter", "5", "--val", "0.34")
    assert r.returncode == 0, r.stderr
    assert "4 positions from 3 games" in r.stdout, r.stdout
    with open(tmp_path / "w.json", encoding="utf-8") as fh:
        meta = json.load(fh)["meta"]
    assert meta["data"] == "a.txt+b.txt"
    assert [h["seed"] for h in meta["data_headers"]] == ["1", "2"]   # one header per file, as named
    r = run("tune", "fit", "--variant", "chess", "--data", a, c, "--out", str(tmp_path / "w.json"))
    assert r.returncode == 2 and "teacher" in r.stderr and "Traceback" not in r.stderr


def test_cli_fit_unwritable_out_fails_before_the_fit(tmp_path):
    """/proc looks writable (as root every permission test passes) but takes no new file:
    found before the data is read, naming the path given (not a temporary file)."""
    if not os.path.isdir("/proc/self"):
        pytest.skip("needs Linux /proc")
    a = _data_file(tmp_path / "a.txt", [(0, 1, list(_FOUR_FENS[:2])), (1, 0, [_FOUR_FENS[2]])], _CHESS_HEAD)
    for step in (("fit", "--data", a), ("--data", str(tmp_path / "new.txt"))):
        r = run("tune", *step, "--variant", "chess", "--out", "/proc/w.json", "--max-iter", "5")
        assert r.returncode == 2 and r.stdout == "", r.stdout + r.stderr      # no fit, no datagen
        assert r.stderr.strip().splitlines() == ["error: --out /proc/w.json: cannot create a file in /proc "
                                                 "(No such file or directory)"], r.stderr
    assert not (tmp_path / "new.txt").exists()
    r = run("tune", "fit", "--variant", "chess", "--data", a, "--out", "/dev/full")   # renamed over: a device
    assert r.returncode == 2 and "--out /dev/full: not a regular file" in r.stderr and r.stdout == ""


def test_write_weights_failure_names_the_weights_file(tmp_path):
    from search.eval import NF, write_weights
    target = tmp_path / "w.json"
    target.mkdir()                    # the rename over it fails after the temporary file is written
    (target / "x").write_text("")
    with pytest.raises(OSError) as e:
        write_weights("chess", [0] * NF, [0] * NF, {}, path=str(target))
    assert e.value.filename == str(target)
    assert sorted(os.listdir(tmp_path)) == ["w.json"]          # the temporary file is removed
    if os.path.isdir("/proc/self"):
        with pytest.raises(OSError) as e:
            write_weights("chess", [0] * NF, [0] * NF, {}, path="/proc/w.json")
        assert e.value.filename == "/proc/w.json"


def test_cli_datagen_write_that_fails_names_the_file():
    """/dev/full takes the data file and refuses its bytes (a full disk)."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    r = run("tune", "datagen", "--variant", "knightrelay", "--games", "1", "--nodes", "50", "--out", "/dev/full",
            "--no-progress")
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == ["error: /dev/full: No space left on device"], r.stderr
    assert os.path.exists("/dev/full") and not os.path.isfile("/dev/full")


def test_fit_validates_on_held_out_files(tmp_path):
    """``--val-data``: the validation set is exactly those files' positions, and training
    drops every position with a FEN found there (no leak through a repeated position)."""
    f1, f2, f3, f4 = _FOUR_FENS
    head = dict(_CHESS_HEAD)
    a = _data_file(tmp_path / "a.txt", [(0, 1, [f1, f2]), (1, 0, [f3])], head)
    v = _data_file(tmp_path / "v.txt", [(0, 0.5, [f2, f4])], dict(head, seed=7))
    rep = T.fit("chess", a, val_data=v, write=False, max_iter=5, val=0.5)
    assert (rep.n_val, rep.n_train, rep.g_val, rep.g_train) == (2, 2, 1, 2)   # f2, f4 | f1, f3
    assert "validation: " in rep.data and rep.meta["val_data"] == "v.txt" and rep.meta["val_fraction"] is None
    assert [h["seed"] for h in rep.meta["val_data_headers"]] == ["7"]
    assert [h["seed"] for h in rep.meta["data_headers"]] == ["1"]
    plain = T.fit("chess", a, write=False, max_iter=5, val=0.5)
    assert plain.n_val + plain.n_train == 3 and "val_data" not in plain.meta
    r = run("tune", "fit", "--variant", "chess", "--data", a, "--val-data", v, "--out", str(tmp_path / "w.json"),
            "--max-iter", "5")
    assert r.returncode == 0, r.stderr
    assert "validation: 2 positions (1 games)" in r.stdout, r.stdout
    with open(tmp_path / "w.json", encoding="utf-8") as fh:
        meta = json.load(fh)["meta"]
    assert meta["data"] == "a.txt" and meta["val_data"] == "v.txt" and meta["val_positions"] == 2
    empty = tmp_path / "e.txt"
    empty.write_text("")
    r = run("tune", "fit", "--variant", "chess", "--data", a, "--val-data", str(empty))
    assert r.returncode == 2 and "e.txt" in r.stderr and "Traceback" not in r.stderr
    r = run("tune", "fit", "--variant", "chess", "--data", a, "--val-data", str(tmp_path / "missing.txt"))
    assert r.returncode == 2 and "missing.txt" in r.stderr and "Traceback" not in r.stderr


def test_fit_only_the_free_features(tmp_path):
    """``--free PREFIX...`` fits only the features named so; every other weight stays as it was."""
    fens = ["rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
            "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
            "rnbqkb1r/pppppppp/5n2/8/3P4/8/PPP1PPPP/RNBQKBNR w KQkq - 1 2",
            "r1bqkbnr/pppppppp/2n5/8/2P5/8/PP1PPPPP/RNBQKBNR w KQkq - 1 2"]
    a = _data_file(tmp_path / "a.txt", [(g, [1, 0, 0.5, 1][g], [fens[g]]) for g in range(4)],
                   {"variant": "chess", "nodes": 300, "seed": 1})
    mask = np.array([n.startswith(("tempo", "mobility_")) for n in T.FEATURES])
    full = T.fit("chess", a, write=False, max_iter=20, val=0.25)
    part = T.fit("chess", a, write=False, max_iter=20, val=0.25, free=["tempo", "mobility_"])
    moved = (full.new_mg != full.old_mg) | (full.new_eg != full.old_eg)
    assert moved[~mask].any()                     # a full fit moves other weights too ...
    assert (part.new_mg[~mask] == part.old_mg[~mask]).all() and (part.new_eg[~mask] == part.old_eg[~mask]).all()
    assert part.free == 2 * int((mask & T.feature_used("chess")).sum())
    with pytest.raises(ValueError, match="no feature"):
        T.fit("chess", a, write=False, free=["nosuchfeature"])
    r = run("tune", "fit", "--variant", "chess", "--data", a, "--free", "nosuch", "--out", str(tmp_path / "w.json"))
    assert r.returncode == 2 and "no feature" in r.stderr and "Traceback" not in r.stderr


# ------------------------------------------------------------------ PGN games as data

_PGN_MOVES = ("e4 e5 Nf3 Nc6 Bb5 a6 Ba4 Nf6 O-O Be7 Re1 b5 Bb3 d6 c3 O-O Bxf7+ Rxf7 h3 h6 d4 Bb7").split()
# per ply: the move comment (default "+0.<ply>/9 0.01s": score = ply centipawns, the mover's view)
_PGN_COMMENTS = {8: "book", 14: "+25.00/9 0.01s", 15: "book", 18: "+M3/20 0.01s", 19: "book",
                 20: "-1.50/12 0.01s", 21: "+0.40/10 0.01s"}


def _pgn_game(result="1-0", variant=None, moves=_PGN_MOVES):
    tags = [f'[White "a"]', f'[Black "b"]', f'[Result "{result}"]', '[Termination "adjudication"]']
    if variant:
        tags.append(f'[Variant "{variant}"]')
    body = []
    for i, m in enumerate(moves):
        if i % 2 == 0:
            body.append(f"{i // 2 + 1}.")
        body.append(m + " {" + _PGN_COMMENTS.get(i, f"+0.{i:02d}/9 0.01s") + "}")
    return "\n".join(tags) + "\n\n" + " ".join(body) + " " + result + "\n\n"


def test_pgn_games_become_data_with_the_quiet_filter(tmp_path):
    """The datagen filter on the moves played (from ply 8, not in check, quiet, a comment
    score within 2000 cp: no book, mate or huge score), scores turned to White's view,
    results from the Result tag; unfinished, other-variant and illegal games skipped."""
    pgn = tmp_path / "games.pgn"
    illegal = list(_PGN_MOVES)
    illegal[5] = "Qh4h8"
    pgn.write_text(_pgn_game("1-0") + _pgn_game("*") + _pgn_game("0-1", variant="grand")
                   + _pgn_game("0-1", moves=illegal) + _pgn_game("1/2-1/2"))
    out = tmp_path / "d.txt"
    r = T.pgn_data("chess", [str(pgn)], str(out))
    assert (r.games_read, r.games_written) == (5, 2)
    assert r.skipped == {"no result": 1, "other variant": 1, "illegal move or bad FEN": 1}
    ds = T.read_data(str(out), "chess", dedup=False)
    assert T.parse_header(out.read_text().splitlines()[0]) == {"variant": "chess", "source": "pgn", "games": "2"}
    expect = {9: -9, 10: 10, 11: -11, 12: 12, 13: -13, 20: -150, 21: -40}
    first = ds.game == 0
    assert dict(zip(ds.ply[first].tolist(), ds.score[first].tolist())) == expect
    assert set(ds.result[first]) == {1.0} and set(ds.result[~first]) == {0.5}
    assert r.positions == 2 * len(expect) == len(ds.fens)
    from engine.rules.position import Position
    p = Position.from_fen(ds.fens[0], "chess")       # ply 9: black to move after 5. O-O
    assert p.turn == 1 and p.fen().split()[0] == "r1bqkb1r/1ppp1ppp/p1n2n2/4p3/B3P3/5N2/PPPP1PPP/RNBQ1RK1"
    assert T.default_score_k(ds.header) == "fit"


def test_cli_tune_pgn(tmp_path):
    pgn = tmp_path / "g.pgn"
    pgn.write_text(_pgn_game("0-1"))
    out = tmp_path / "d.txt"
    r = run("tune", "pgn", "--variant", "chess", "--pgn", str(pgn), "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "1 of 1 games (7 positions)" in r.stdout
    assert len(T.read_data(str(out), "chess").fens) == 7
    # nothing usable, a missing file: one line, exit 2, the old output kept
    before = out.read_text()
    for args, word in ((["--variant", "grand", "--pgn", str(pgn)], "other variant"),
                       (["--variant", "chess", "--pgn", str(tmp_path / "none.pgn")], "none.pgn")):
        r = run("tune", "pgn", *args, "--out", str(out))
        assert r.returncode == 2 and word in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert out.read_text() == before
    # games without score comments: nothing to learn from, an error (not an empty data file)
    bare = tmp_path / "bare.pgn"
    bare.write_text(_pgn_game("1-0").replace("{", "(").replace("}", ")"))
    r = run("tune", "pgn", "--variant", "chess", "--pgn", str(bare), "--out", str(out))
    assert r.returncode == 2 and "score comments" in r.stderr, r.stderr
    # the output is one of the inputs, or not a regular file (a FIFO here, /dev/null for a user)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for target, word in ((pgn, "--pgn files"), (fifo, "not a regular file")):
        r = run("tune", "pgn", "--variant", "chess", "--pgn", str(pgn), "--out", str(target))
        assert r.returncode == 2 and word in r.stderr, r.stderr
    assert pgn.read_text() == _pgn_game("0-1") and fifo.is_fifo() and out.read_text() == before
    # xz-compressed PGN (bench/runs/ keeps the SPRTs' games so) reads the same; a bad one is one line
    import lzma
    xz = tmp_path / "g.pgn.xz"
    xz.write_bytes(lzma.compress(_pgn_game("0-1").encode()))
    out2 = tmp_path / "d2.txt"
    r = run("tune", "pgn", "--variant", "chess", "--pgn", str(xz), "--out", str(out2))
    assert r.returncode == 0 and "1 of 1 games (7 positions)" in r.stdout, (r.stdout, r.stderr)
    assert out2.read_text() == out.read_text()
    (tmp_path / "bad.pgn.xz").write_bytes(b"not xz at all")
    r = run("tune", "pgn", "--variant", "chess", "--pgn", str(tmp_path / "bad.pgn.xz"), "--out", str(out2))
    assert r.returncode == 2 and "not an xz file" in r.stderr and "Traceback" not in r.stderr, r.stderr
    # a byte-order mark before the first tag is not a game
    bom = tmp_path / "bom.pgn"
    bom.write_text("\ufeff" + _pgn_game("0-1"), encoding="utf-8")
    r = run("tune", "pgn", "--variant", "chess", "--pgn", str(bom), "--out", str(out))
    assert r.returncode == 0 and "1 of 1 games" in r.stdout, (r.stdout, r.stderr)
