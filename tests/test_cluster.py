"""``cardinal match --scheduler``: game pairs on a real Dask cluster (a ``dask scheduler``
and two ``dask worker`` processes on 127.0.0.1), the results journal and ``--resume``.

Cardinal (depth 1) plays a fast fake engine (tests/fake_engine.py, legal chess);
resign adjudication keeps the games short. Every wait is for an event (workers
registered, journal lines written, a task running on a worker), each with a
generous deadline that only guards against a hang.
"""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

import pytest

from bench import match as M

try:
    import distributed
except ImportError:          # the optional 'cluster' extra (the 'test' extra installs it)
    distributed = None


def _need_dask():
    if distributed is None:
        if os.environ.get("CI") == "true":
            pytest.fail('dask distributed is not installed (pip install ".[test]" installs it)')
        pytest.skip('dask distributed not installed (pip install "cardinal-engine[cluster]")')

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FAKE = os.path.join(HERE, "fake_engine.py")
HANG = 120.0          # s: only a hang takes this long


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env():
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES", None)
    return env


class Cluster:
    def __init__(self, tmp_path, workers=2):
        self.port = _free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.log = open(tmp_path / "dask.log", "w")
        self.procs = []
        self.sched = self._spawn([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                  "--port", str(self.port), "--no-dashboard"], tmp_path)
        self.workers = [self._spawn([sys.executable, "-m", "distributed.cli.dask_worker", self.address,
                                     "--nthreads", "1", "--no-nanny", "--no-dashboard", "--host", "127.0.0.1",
                                     "--local-directory", str(tmp_path / f"w{i}")], tmp_path)
                        for i in range(workers)]
        self.client = distributed.Client(self.address, timeout=HANG)
        self.client.wait_for_workers(workers, timeout=HANG)

    def _spawn(self, cmd, cwd):
        p = subprocess.Popen(cmd, cwd=cwd, env=_env(), stdout=self.log, stderr=subprocess.STDOUT,
                             start_new_session=True)
        self.procs.append(p)
        return p

    def worker_of(self, proc):
        """The scheduler's address of the worker process ``proc``."""
        for addr, pid in self.client.run(os.getpid).items():
            if pid == proc.pid:
                return addr
        return None

    def close(self):
        try:
            self.client.close()
        except Exception:
            pass
        for p in reversed(self.procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=30)
        self.log.close()


@pytest.fixture
def cluster(tmp_path):
    _need_dask()
    c = Cluster(tmp_path)
    yield c
    c.close()


def fake(delay_ms=0):
    return f"cmd='{sys.executable} {FAKE} legal::{delay_ms}' proto=uci name=Fake"


def match_argv(cluster_addr, pgn, games=20, fake_delay=0, extra=()):
    return ["--engine", fake(fake_delay), "--depth", "1", "--games", str(games), "--seed", "5",
            "--resign", "movecount=2", "score=800", "--pgn", str(pgn), "--no-progress",
            "--ready-timeout", "120", "--handshake-timeout", "120",
            "--scheduler", cluster_addr, *extra]


def run_main(argv, tty=False):
    from tests.conftest import capture_main
    return capture_main(M.main, argv, tty)


def pgn_games(text):
    """(round, result, white) of each game in a PGN text."""
    out = []
    for block in re.split(r"(?m)^(?=\[Event )", text):
        if not block.strip():
            continue
        r = int(re.search(r'\[Round "(\d+)"\]', block).group(1))
        res = re.search(r'\[Result "([^"]+)"\]', block).group(1)
        white = re.search(r'\[White "([^"]+)"\]', block).group(1)
        out.append((r, res, white))
    return out


def journal_lines(path):
    with open(path) as fh:
        return [json.loads(line) for line in fh if line.strip()]


def check_consistent(pgn_path, journal_path, games):
    """Every game exactly once in the PGN, each pair exactly once in the journal, the
    journal's results equal to the PGN's, and the pentanomial counts add up."""
    g = pgn_games(open(pgn_path).read())
    rounds = [r for r, _, _ in g]
    assert sorted(rounds) == list(range(1, games + 1)), sorted(rounds)
    lines = journal_lines(journal_path)
    assert lines[0]["type"] == "match" and lines[0]["format"] == "cardinal-match-journal"
    pairs = [ln for ln in lines if ln["type"] == "pair"]
    ids = [p["pair"] for p in pairs]
    assert sorted(ids) == list(range(games // 2)), ids                 # each pair once
    by_round = {r: (res, white) for r, res, white in g}
    penta = [0] * 5
    w = d = l = 0
    for p in pairs:
        assert [x["round"] for x in p["games"]] == [2 * p["pair"] + 1, 2 * p["pair"] + 2]
        scores = []
        for x in p["games"]:
            assert by_round[x["round"]] == (x["result"], x["white"]), x
            sc = x["score"]
            want = 0.5 if x["result"] == "1/2-1/2" else float((x["result"] == "1-0") == (x["white"] == "Cardinal"))
            assert sc == want
            scores.append(sc)
            w, d, l = w + (sc == 1), d + (sc == 0.5), l + (sc == 0)
        assert p["pentanomial_cell"] == int(2 * sum(scores))
        penta[p["pentanomial_cell"]] += 1
        assert (p["opening"]["fen"] or p["opening"]["moves"]) and p["engines"] == ["Cardinal", "Fake"]
    last = pairs[-1]["totals"]
    assert last["pentanomial"] == penta and sum(penta) == games // 2
    assert (last["wins"], last["draws"], last["losses"]) == (w, d, l) and w + d + l == games
    assert lines[-1]["type"] == "end" and lines[-1]["totals"]["pentanomial"] == penta
    return lines


def test_twenty_games_on_two_dask_workers(cluster, tmp_path):
    pgn = tmp_path / "c.pgn"
    rc, out, err = run_main(match_argv(cluster.address, pgn))
    assert rc == 0, err
    lines = check_consistent(pgn, tmp_path / "c.jsonl", 20)
    workers = {ln["worker"] for ln in lines if ln["type"] == "pair"}
    assert len(workers) == 2 and all(w.startswith("tcp://127.0.0.1:") for w in workers), workers
    assert "Score of Cardinal vs Fake:" in out and "pentanomial" in out
    assert "Elo (pairs)" in out and "Traceback" not in err


def test_worker_killed_mid_match_pair_rerun(cluster, tmp_path):
    pgn, jpath = tmp_path / "k.pgn", tmp_path / "k.jsonl"
    env = _env()
    client_log = open(tmp_path / "client.log", "w")
    p = subprocess.Popen([sys.executable, "-m", "engine", "match",
                          *match_argv(cluster.address, pgn, fake_delay=40)],
                         cwd=ROOT, env=env, stdout=client_log, stderr=subprocess.STDOUT)
    try:
        victim = cluster.workers[0]
        deadline = time.monotonic() + HANG
        addr = cluster.worker_of(victim)
        assert addr is not None
        # wait until a pair is recorded and the victim is running one
        while time.monotonic() < deadline:
            done = os.path.exists(jpath) and sum(ln["type"] == "pair" for ln in journal_lines(jpath)) >= 1
            busy = cluster.client.processing().get(addr)
            if done and busy:
                break
            time.sleep(0.05)
        else:
            pytest.fail("the match never got going")
        victim.kill()                                  # SIGKILL
        assert p.wait(timeout=HANG) == 0, open(tmp_path / "client.log").read()
    finally:
        if p.poll() is None:
            p.kill()
        client_log.close()
    lines = check_consistent(pgn, jpath, 20)
    reruns = [ln for ln in lines if ln["type"] == "rerun"]
    assert reruns, "the journal does not show the re-run"
    rerun_ids = {r["pair"] for r in reruns}
    for ln in lines:
        if ln["type"] == "pair" and ln["pair"] in rerun_ids:
            assert ln["attempt"] >= 2 and len(ln["attempts"]) >= 2
            assert ln["worker"] != addr                # finished on the surviving worker


def test_client_killed_then_resume(cluster, tmp_path):
    pgn, jpath = tmp_path / "r.pgn", tmp_path / "r.jsonl"
    argv = match_argv(cluster.address, pgn, fake_delay=20)
    p = subprocess.Popen([sys.executable, "-m", "engine", "match", *argv], cwd=ROOT, env=_env(),
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + HANG
        while time.monotonic() < deadline:
            if os.path.exists(jpath) and sum(ln["type"] == "pair" for ln in journal_lines(jpath)) >= 3:
                break
            if p.poll() is not None:
                pytest.fail("the match ended before it was killed")
            time.sleep(0.05)
        p.kill()
        p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    before = {ln["pair"] for ln in journal_lines(jpath) if ln["type"] == "pair"}
    assert 3 <= len(before) < 10
    assert not any(ln["type"] == "end" for ln in journal_lines(jpath))
    rc, out, err = run_main(argv + ["--resume", str(jpath)])
    assert rc == 0, err
    lines = check_consistent(pgn, jpath, 20)
    assert any(ln["type"] == "resume" and ln["done_pairs"] == len(before) for ln in lines)
    assert f"{len(before)} pairs from the journal" in out


def test_local_cluster_and_sprt_stop(tmp_path):
    _need_dask()
    # loose bounds: Cardinal beats the fake at once; running pairs finish and are recorded
    pgn = tmp_path / "s.pgn"
    rc, out, err = run_main(["--engine", fake(), "--depth", "1", "--games", "200", "--resign", "movecount=2",
                             "score=800", "--pgn", str(pgn), "--scheduler", "local:2",
                             "--sprt", "elo0=0", "elo1=200", "alpha=0.2", "beta=0.2",
                             "--ready-timeout", "120", "--handshake-timeout", "120"], tty=True)
    assert rc == 0, err
    # one progress bar (stderr is a terminal here) with games, W-D-L, Elo +/- error and LLR (the
    # pair error bar is n/a before 10 pairs in 2 pentanomial cells)
    assert re.search(r"Cardinal vs Fake: .*\d+/200 .*W-D-L \d+-\d+-\d+  Elo [\d.inf-]+ \+/- (?:[\d.inf]+|n/a)  "
                     r"LLR -?\d+\.\d\d \(-1\.39, 1\.39\)", err), err
    assert re.search(r"SPRT: llr \d+\.\d\d \(-1\.39, 1\.39\) \[0, 200\]: H1 accepted", out), out
    lines = journal_lines(tmp_path / "s.jsonl")
    pairs = [ln for ln in lines if ln["type"] == "pair"]
    assert 1 <= len(pairs) < 100
    assert lines[-1]["type"] == "end" and lines[-1]["status"] == "sprt H1"
    g = pgn_games(pgn.read_text())
    assert len(g) == 2 * len(pairs) and len({r for r, _, _ in g}) == len(g)


def test_without_dask_the_scheduler_option_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)        # import distributed -> ImportError
    rc, out, err = run_main(["--engine", fake(), "--scheduler", "local:2", "--pgn", str(tmp_path / "x.pgn")])
    assert rc == 2
    assert err.startswith("error: ") and 'pip install "cardinal-engine[cluster]"' in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_bad_scheduler_addresses(tmp_path):
    _need_dask()
    for bad in ("local:0", "local:x", "nowhere"):
        rc, out, err = run_main(["--engine", fake(), "--scheduler", bad, "--pgn", str(tmp_path / "x.pgn")])
        assert rc == 2 and err.startswith("error: --scheduler"), (bad, err)
    port = _free_port()          # nothing listens there
    rc, out, err = run_main(["--engine", fake(), "--scheduler", f"tcp://127.0.0.1:{port}", "--games", "2",
                             "--depth", "1", "--pgn", str(tmp_path / "y.pgn"), "--connect-timeout", "2"])
    assert rc == 2 and "error:" in err and "Traceback" not in err, err


# ------------------------------------------------------------------ the journal in local mode
def local_argv(pgn, games=12, extra=()):
    return ["--engine", fake(20), "--depth", "1", "--games", str(games), "--seed", "9",
            "--resign", "movecount=2", "score=800", "--pgn", str(pgn), "--no-progress",
            "--ready-timeout", "120", "--handshake-timeout", "120", *extra]


def _ctrl_c_when(p, ready, why_ended):
    """Wait (at most HANG s) until ``ready()``, then send the match process ``p`` Ctrl-C
    (SIGINT) and check it exits with status 130; fails with ``why_ended()`` if the match
    ends first."""
    deadline = time.monotonic() + HANG
    while time.monotonic() < deadline:
        if ready():
            break
        if p.poll() is not None:
            pytest.fail(why_ended())
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    assert p.wait(timeout=HANG) == 130


def test_local_ctrl_c_then_resume_repairs_the_pgn(tmp_path):
    pgn, jpath = tmp_path / "l.pgn", tmp_path / "l.jsonl"
    pgn.write_text("")        # an existing file: the match appends to it
    keep = '[Event "earlier"]\n[Round "1"]\n[Result "*"]\n\n*\n\n'
    pgn.write_text(keep)      # a game from before this match: kept as it is
    argv = local_argv(pgn)
    p = subprocess.Popen([sys.executable, "-m", "engine", "match", *argv], cwd=ROOT, env=_env(),
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        _ctrl_c_when(p, lambda: os.path.exists(jpath) and sum(ln["type"] == "pair" for ln in journal_lines(jpath)) >= 2,
                     lambda: "the match ended before Ctrl-C: " + p.stderr.read())
    finally:
        if p.poll() is None:
            p.kill()
    lines = journal_lines(jpath)
    assert lines[-1]["type"] == "end" and lines[-1]["status"] == "interrupted"
    done = {ln["pair"] for ln in lines if ln["type"] == "pair"}
    assert 2 <= len(done) < 6
    # the PGN holds every recorded pair, and the finished games of unfinished pairs
    unfinished = [r for ln in lines if ln["type"] == "unfinished" for r in ln["rounds"]]
    rounds = sorted(r for r, _, _ in pgn_games(pgn.read_text()[len(keep):]))
    assert rounds == sorted([2 * k + 1 for k in done] + [2 * k + 2 for k in done] + unfinished)
    # a crash after the PGN write but before the journal line: a game the journal does not hold
    text = pgn.read_text()
    last = text[text.rindex("[Event "):]
    missing = min(set(range(6)) - done)
    pgn.write_text(text + last + re.sub(r'\[Round "\d+"\]', f'[Round "{2 * missing + 1}"]', last))
    rc, out, err = run_main(argv + ["--resume", str(jpath)])
    assert rc == 0, err
    text = pgn.read_text()
    assert text.startswith(keep)
    (tmp_path / "ours.pgn").write_text(text[len(keep):])
    check_consistent(tmp_path / "ours.pgn", jpath, 12)


def test_resume_checks_the_journal(tmp_path):
    pgn = tmp_path / "j.pgn"
    rc, out, err = run_main(local_argv(pgn, games=2))
    assert rc == 0, err
    jpath = str(tmp_path / "j.jsonl")
    rc, out, err = run_main(local_argv(pgn, games=2))            # the journal exists: no silent overwrite
    assert rc == 2 and "already exists" in err and "--resume" in err
    for extra, what in ((["--games", "4"], "games"), (["--seed", "10"], "seed")):
        argv = local_argv(pgn, games=2) + extra + ["--resume", jpath]
        rc, out, err = run_main(argv)
        assert rc == 2 and err.startswith("error: --resume") and what in err, err
    rc, out, err = run_main(local_argv(pgn, games=2) + ["--resume", jpath])     # complete: nothing to play
    assert rc == 0 and "1 pairs from the journal" in out
    assert len(pgn_games(pgn.read_text())) == 2
    header = open(jpath).readline()
    for bad, why in (("not json\n", "not a JSON line"),
                     (header + '{"type": "pair", "pair": 0, "games": [{"round": 1}]}\n', "not a valid 'pair' line")):
        (tmp_path / "bad.jsonl").write_text(bad)
        rc, out, err = run_main(local_argv(tmp_path / "b.pgn", games=2) + ["--resume", str(tmp_path / "bad.jsonl")])
        assert rc == 2 and err.startswith("error:") and why in err and "Traceback" not in err, err


def test_local_ctrl_c_keeps_the_finished_game_of_an_unfinished_pair(tmp_path):
    pgn, jpath, errp = tmp_path / "u.pgn", tmp_path / "u.jsonl", tmp_path / "err.txt"
    hang = f"cmd='{sys.executable} {FAKE} legal:0::hangwhite' proto=uci name=Hang"
    errf = open(errp, "w")
    p = subprocess.Popen([sys.executable, "-m", "engine", "match", "--engine", fake(), "--engine", hang,
                          "--depth", "1", "--games", "2", "--pgn", str(pgn), "--no-progress", "--debug",
                          "--resign", "movecount=2", "score=800"],
                         cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL, stderr=errf)
    def hang_asked_to_move_in_round_2():
        # round 2: the hanging engine has White and has been asked to move
        text = errp.read_text()
        return text.count("Hang > ucinewgame") >= 2 and "Hang > go" in text.split("Hang > ucinewgame")[2]

    try:
        _ctrl_c_when(p, hang_asked_to_move_in_round_2, lambda: "the match ended: " + errp.read_text()[-2000:])
    finally:
        if p.poll() is None:
            p.kill()
        errf.close()
    games = pgn_games(pgn.read_text())
    assert [r for r, _, _ in games] == [1]                 # the finished game is kept
    lines = journal_lines(jpath)
    assert [ln for ln in lines if ln["type"] == "pair"] == []
    assert any(ln["type"] == "unfinished" and ln["rounds"] == [1] for ln in lines)
    assert lines[-1]["type"] == "end" and lines[-1]["status"] == "interrupted"
