"""Network training data in chunks (bench/tune/nnue_data.py, ``cardinal tune nnue-data``): the
same seed gives the same chunk files, whatever the worker count; a killed run resumes to the files
of an uninterrupted one; the manifest's digests are the files'; ``verify`` finds a changed or
missing chunk and the same command plays it again, identically; random opening plies are
deterministic and legal; recorded positions pass the filters. Tiny node budgets (200), chess,
two or three games per chunk."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from bench.tune import nnue_data as ND
from bench.tune import selfplay as SP

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NODES = 200
VARIANT = "chess"


def run(*args, timeout=300):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "engine", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def gen(tmp, name, **kw):
    d, m = str(tmp / name / "data"), str(tmp / name / "manifest.json")
    args = dict(positions=10**6, nodes=NODES, chunk_games=2, max_chunks=2, concurrency=1, progress=False)
    args.update(kw)
    r = ND.generate(VARIANT, directory=d, manifest=m, **args)
    return r, d, m


def files(d):
    return {n: open(os.path.join(d, n), "rb").read() for n in sorted(os.listdir(d))}


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """Chunks 0 and 1 (two games each), played in this process."""
    tmp = tmp_path_factory.mktemp("ref")
    r, d, m = gen(tmp, "ref")
    assert not r.interrupted and r.chunks_new == [0, 1] and r.games_new == 4
    return d, m, files(d)


def test_same_seed_same_chunk_files_and_manifest_digests(reference, tmp_path):
    d, m, ref = reference
    assert sorted(ref) == ["chunk-00000.txt", "chunk-00001.txt"]
    man = json.load(open(m))
    assert man["format"] == ND.FORMAT and man["settings"]["nodes"] == NODES
    assert man["settings"]["random_plies"] == list(ND.DEFAULT_RANDOM_PLIES)
    assert man["engine"]["weights"] and "bench" in man["engine"]
    for c in man["chunks"]:
        data = ref[f"chunk-{c['index']:05d}.txt"]
        assert c["sha256"] == hashlib.sha256(data).hexdigest() and c["bytes"] == len(data)
        assert c["positions"] == data.count(b"\nP\t") and c["positions"] > 0
        assert c["seed"] == ND.chunk_seed(1, c["index"]) and c["games"] == 2
    assert man["totals"]["positions"] == sum(c["positions"] for c in man["chunks"])
    # the chunks differ from each other (own seeds), games in id order, global game ids
    text = ref["chunk-00001.txt"].decode()
    assert [ln.split("\t")[1] for ln in text.splitlines() if ln.startswith("G\t")] == ["2", "3"]
    assert ref["chunk-00000.txt"] != ref["chunk-00001.txt"]
    # two worker processes (games finish in any order): the same files
    r, d2, m2 = gen(tmp_path, "pool", concurrency=2)
    assert r.chunks_new == [0, 1] and files(d2) == ref
    assert [c["sha256"] for c in json.load(open(m2))["chunks"]] == [c["sha256"] for c in man["chunks"]]
    # another seed: other games
    r, d3, _ = gen(tmp_path, "seed2", seed=2, max_chunks=1)
    assert files(d3)["chunk-00000.txt"] != ref["chunk-00000.txt"]


def test_dask_workers_make_the_same_chunk_files(reference, tmp_path):
    """``--scheduler local:1`` with two threads (a searcher each): the same files; only the client writes."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail('dask distributed is not installed (pip install ".[test]" installs it)')
        pytest.skip('dask distributed not installed (pip install "cardinal-engine[cluster]")')
    d, m, ref = reference
    r, d2, m2 = gen(tmp_path, "dask", scheduler="local:1", concurrency=2)
    assert r.chunks_new == [0, 1] and files(d2) == ref


def test_dask_worker_killed_mid_game_has_its_game_played_again(tmp_path):
    """A real cluster (a scheduler, two one-thread workers): the worker playing a game is killed
    mid-game; the scheduler runs that game again on the other worker and the chunk file is the
    one an undisturbed run makes."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        pytest.skip('dask distributed not installed (pip install "cardinal-engine[cluster]")')
    import threading
    from tests.test_cluster import HANG, Cluster
    import queue
    kw = dict(nodes=3000, chunk_games=2, max_chunks=1)
    c = Cluster(tmp_path)
    try:
        proc_of = {c.worker_of(w): w for w in c.workers}
        started: queue.Queue = queue.Queue()
        c.client.subscribe_topic(ND.TOPIC, lambda event: started.put(event[1]["worker"]))
        out = {}
        th = threading.Thread(target=lambda: out.update(r=gen(tmp_path, "cluster", scheduler=c.address, **kw)))
        th.start()
        victim = proc_of[started.get(timeout=HANG)]      # the first worker to start a game
        time.sleep(0.3)
        os.killpg(victim.pid, signal.SIGKILL)
        th.join(HANG)
        assert not th.is_alive()
    finally:
        c.close()
    r, d, _ = out["r"]
    assert r.chunks_new == [0] and r.games_new == 2
    assert len(r.reruns) >= 1                 # the lost worker's game, started again
    _, d_ref, _ = gen(tmp_path, "undisturbed", **kw)
    assert files(d) == files(d_ref)


def test_partial_chunk_resumes_to_the_same_files(reference, tmp_path):
    d, m, ref = reference
    # a run that finished chunk 0 and stopped inside chunk 1: one whole game, one cut line
    d2, m2 = tmp_path / "data", tmp_path / "manifest.json"
    d2.mkdir()
    (d2 / "chunk-00000.txt").write_bytes(ref["chunk-00000.txt"])
    man = json.load(open(m))
    man["chunks"] = man["chunks"][:1]
    m2.write_text(json.dumps(man))
    text = ref["chunk-00001.txt"].decode()
    first_game_end = text.index("\nG\t2\t") + 1
    first_game_end = text.index("\n", first_game_end) + 1
    (d2 / "chunk-00001.part").write_text(text[:first_game_end] + "P\tr1bqkb")
    rec = ND.read_records(ND.records_path(ND.records_dir(m), 1))
    line = [ln for ln in ND.records_text(ND.records_path(ND.records_dir(m), 1)).split("\n") if ln.startswith("2\t")][0]
    assert set(rec) == {2, 3}
    (d2 / "chunk-00001.games.part").write_text(line + "\n" + "3\t0.5\t1")   # its record, and a cut one
    r = ND.generate(VARIANT, directory=str(d2), manifest=str(m2), progress=False, max_chunks=2, concurrency=1)
    assert r.games_new == 1 and r.chunks_new == [1]          # only the missing game was played
    assert files(str(d2)) == ref
    assert [c["sha256"] for c in json.load(open(m2))["chunks"]] == [c["sha256"] for c in json.load(open(m))["chunks"]]
    # nothing left to do: nothing changes
    r = ND.generate(VARIANT, directory=str(d2), manifest=str(m2), progress=False, max_chunks=2)
    assert r.games_new == 0 and files(str(d2)) == ref


def test_a_game_without_its_record_is_played_again(reference, tmp_path):
    """A ``.part`` game whose record line is not on disk (the record is written first, so only a
    file from elsewhere has this) is played again, so every finished chunk has all its records."""
    d, m, ref = reference
    d2, m2 = tmp_path / "data", tmp_path / "manifest.json"
    d2.mkdir()
    man = json.load(open(m))
    man["chunks"] = []
    m2.write_text(json.dumps(man))
    text = ref["chunk-00000.txt"].decode()
    end = text.index("\n", text.index("\nG\t0\t") + 1) + 1
    (d2 / "chunk-00000.part").write_text(text[:end])
    r = ND.generate(VARIANT, directory=str(d2), manifest=str(m2), progress=False, max_chunks=1, concurrency=1)
    assert r.games_new == 2 and r.chunks_new == [0]
    assert files(str(d2)) == {"chunk-00000.txt": ref["chunk-00000.txt"]}
    assert ND.read_records(ND.records_path(ND.records_dir(str(m2)), 0)) == \
        ND.read_records(ND.records_path(ND.records_dir(m), 0))


def test_lost_chunk_files_are_rebuilt_from_the_game_records_without_playing(reference, tmp_path):
    """The data directory is gone (a new machine), the manifest and its game records are kept (in
    git): the same command rebuilds every chunk file, byte for byte, and plays no game; a record
    that was changed is caught by the chunk's digest and its chunk is played again."""
    d, m, ref = reference
    m2 = tmp_path / "m.json"
    shutil.copy(m, m2)
    shutil.copytree(ND.records_dir(m), ND.records_dir(str(m2)))
    sizes = [os.path.getsize(ND.records_path(ND.records_dir(m), i)) for i in (0, 1)]
    assert sum(sizes) < sum(len(v) for v in ref.values()) / 2          # compact beside the chunk files
    d2 = tmp_path / "data"
    r = ND.generate(VARIANT, directory=str(d2), manifest=str(m2), progress=False, max_chunks=2)
    assert r.restored == [0, 1] and r.games_new == 0 and r.regenerated == [] and r.chunks_new == []
    assert files(str(d2)) == ref
    assert json.load(open(m2))["chunks"] == json.load(open(m))["chunks"]
    # one recorded score changed in chunk 1's records: rebuilt data would differ, so it is played again
    rp = ND.records_path(ND.records_dir(str(m2)), 1)
    text = ND.records_text(rp)
    i = text.index(":", text.index("\n") + 1) + 1
    bad = text[:i] + ("7" if text[i] != "7" else "8") + text[i + 1:]
    ND.write_records(rp, "", [bad])
    (d2 / "chunk-00001.txt").unlink()
    (d2 / "chunk-00000.txt").unlink()
    warnings = []
    r = ND.generate(VARIANT, directory=str(d2), manifest=str(m2), progress=False, max_chunks=2,
                    warn=warnings.append)
    assert r.restored == [0] and r.regenerated == [1] and r.games_new == 2 and r.mismatched == []
    assert any("records" in w and "differs" in w for w in warnings)
    assert files(str(d2)) == ref
    assert ND.records_text(rp) == ND.records_text(ND.records_path(ND.records_dir(m), 1))   # rewritten


def test_kept_records_are_never_replaced_by_a_partial_set_and_chunks_limits_replays(reference, tmp_path):
    """A records file that fails its check has its chunk played again; stopped after a game, its
    ``.games.part`` holds one game. Once the good records are back (git checkout), the next run
    rebuilds the chunk from them and must not write the one-game ``.games.part`` over them.
    ``max_chunks`` (``--chunks``) also bounds the listed chunks that are played again."""
    d, m, ref = reference
    m2 = tmp_path / "m.json"
    shutil.copy(m, m2)
    rdir = ND.records_dir(str(m2))
    shutil.copytree(ND.records_dir(m), rdir)
    good = open(ND.records_path(rdir, 0), "rb").read()
    d2 = tmp_path / "data"
    d2.mkdir()
    lines = ND.records_text(ND.records_path(rdir, 0)).split("\n")
    ND.write_records(ND.records_path(rdir, 0), "", [lines[0] + "\n", lines[2] + "\n"])   # game 0 dropped
    (d2 / "chunk-00000.part").write_text(ref["chunk-00000.txt"].decode().split("\nP\t")[0] + "\n")
    (d2 / "chunk-00000.games.part").write_text(lines[2] + "\n")   # as a stopped run leaves it
    open(ND.records_path(rdir, 0), "wb").write(good)                # the good records are back
    r = ND.generate(VARIANT, directory=str(d2), manifest=str(m2), progress=False, max_chunks=1)
    assert r.restored == [0, 1] and r.games_new == 0          # rebuilding plays nothing: every chunk
    assert open(ND.records_path(rdir, 0), "rb").read() == good
    assert files(str(d2)) == ref
    # chunk 1 lost with no records: --chunks 1 does not play it, --chunks 2 does
    os.remove(ND.records_path(rdir, 1))
    os.remove(d2 / "chunk-00001.txt")
    r = ND.generate(VARIANT, directory=str(d2), manifest=str(m2), progress=False, max_chunks=1)
    assert r.games_new == 0 and sorted(os.listdir(d2)) == ["chunk-00000.txt"]
    checks = ND.verify(str(m2), str(d2))
    assert [(c.index, c.status, c.records) for c in checks] == [(0, "ok", False), (1, "missing", False)]
    with pytest.raises(ValueError, match="variant chess, not grand"):
        ND.verify(str(m2), str(d2), "grand")
    r = ND.generate(VARIANT, directory=str(d2), manifest=str(m2), progress=False, max_chunks=2)
    assert r.regenerated == [1] and files(str(d2)) == ref


def test_killed_run_resumes_to_the_uninterrupted_files(reference, tmp_path):
    """SIGKILL in the middle of chunk 1 (no clean-up at all), then the same command again."""
    d, m, ref = reference
    d2, m2 = tmp_path / "data", tmp_path / "m.json"
    cmd = ["tune", "nnue-data", "--variant", VARIANT, "--nodes", str(NODES), "--chunk-games", "2",
           "--chunks", "2", "--concurrency", "1", "--dir", str(d2), "--manifest", str(m2), "--no-progress"]
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.Popen([sys.executable, "-m", "engine", *cmd], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True)
    part = d2 / "chunk-00001.part"
    t0 = time.time()
    while time.time() - t0 < 240 and p.poll() is None:
        if part.exists() and b"\nG\t" in part.read_bytes():     # chunk 1's first game is in
            os.killpg(p.pid, signal.SIGKILL)
            break
        time.sleep(0.02)
    p.communicate(timeout=60)
    assert p.returncode == -signal.SIGKILL, "the run ended before it could be killed mid-chunk"
    assert part.exists() and not (d2 / "chunk-00001.txt").exists()
    assert len(json.load(open(m2))["chunks"]) == 1
    r = run(*cmd)
    assert r.returncode == 0, r.stderr
    assert "chunk 1: 2 games" in r.stdout and "Traceback" not in r.stderr
    assert files(str(d2)) == ref
    assert [c["sha256"] for c in json.load(open(m2))["chunks"]] == [c["sha256"] for c in json.load(open(m))["chunks"]]


def test_sigterm_with_two_workers_keeps_whole_games(tmp_path):
    """SIGTERM (as ``kill PID`` or a job scheduler sends it) to a run with a worker pool: exit 130,
    one line, no traceback, the ``.part`` ends with a whole game, and the same command continues it."""
    d2, m2 = tmp_path / "data", tmp_path / "m.json"
    cmd = ["tune", "nnue-data", "--variant", VARIANT, "--nodes", str(NODES), "--chunk-games", "40",
           "--chunks", "1", "--concurrency", "2", "--dir", str(d2), "--manifest", str(m2), "--no-progress"]
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.Popen([sys.executable, "-m", "engine", *cmd], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    part = d2 / "chunk-00000.part"
    t0 = time.time()
    while time.time() - t0 < 240 and p.poll() is None and not (part.exists() and part.read_text().count("\nG\t") >= 2):
        time.sleep(0.05)
    p.send_signal(signal.SIGTERM)
    so, se = p.communicate(timeout=60)
    assert p.returncode == 130, se
    assert "Traceback" not in se and "interrupted" in se
    text = part.read_text()
    assert text.rstrip("\n").split("\n")[-1].startswith("G\t") and 2 <= text.count("\nG\t") < 40
    assert json.load(open(m2))["chunks"] == []


def test_verify_finds_changed_and_missing_chunks_and_generate_replays_them(reference, tmp_path):
    d, m, ref = reference
    d2 = tmp_path / "data"
    shutil.copytree(d, d2)
    m2 = tmp_path / "m.json"
    shutil.copy(m, m2)
    assert [c.status for c in ND.verify(str(m2), str(d2))] == ["ok", "ok"]
    r = run("tune", "nnue-data", "verify", "--variant", VARIANT, "--dir", str(d2), "--manifest", str(m2))
    assert r.returncode == 0 and "2 of 2 chunks ok" in r.stdout, r.stdout + r.stderr
    # one changed byte in chunk 1, chunk 0 lost
    data = bytearray(ref["chunk-00001.txt"])
    i = data.index(b"\nP\t") + 20
    data[i] = ord("x") if data[i] != ord("x") else ord("y")
    (d2 / "chunk-00001.txt").write_bytes(bytes(data))
    (d2 / "chunk-00000.txt").unlink()
    checks = ND.verify(str(m2), str(d2))
    assert [(c.index, c.status) for c in checks] == [(0, "missing"), (1, "changed")]
    r = run("tune", "nnue-data", "verify", "--variant", VARIANT, "--dir", str(d2), "--manifest", str(m2))
    assert r.returncode == 1 and "to play again: 0, 1" in r.stdout and "Traceback" not in r.stderr
    assert "chunk 0: missing" in r.stdout and "chunk 1: changed" in r.stdout
    # the same settings (from the manifest) play them again, identical to the digests
    warnings = []
    r = ND.generate(VARIANT, directory=str(d2), manifest=str(m2), progress=False, warn=warnings.append, max_chunks=2)
    assert r.regenerated == [0, 1] and r.mismatched == [] and r.chunks_new == []
    assert any(".bad" in w for w in warnings)
    assert {k: v for k, v in files(str(d2)).items() if k.endswith(".txt")} == ref
    assert [c.status for c in ND.verify(str(m2), str(d2))] == ["ok", "ok"]
    assert json.load(open(m2))["chunks"] == json.load(open(m))["chunks"]


def test_other_settings_or_engine_are_refused(reference, tmp_path):
    d, m, _ = reference
    m2 = tmp_path / "m.json"
    shutil.copy(m, m2)
    with pytest.raises(ValueError, match="nodes=200, not 300"):
        ND.generate(VARIANT, directory=str(tmp_path / "d"), manifest=str(m2), nodes=300, progress=False)
    with pytest.raises(ValueError, match="random_plies=0-8, not 2-3"):
        ND.generate(VARIANT, directory=str(tmp_path / "d"), manifest=str(m2), random_plies=(2, 3), progress=False)
    man = json.load(open(m2))
    man["engine"]["bench"] = 12345
    m2.write_text(json.dumps(man))
    with pytest.raises(ValueError, match="bench 12345"):
        ND.generate(VARIANT, directory=str(tmp_path / "d"), manifest=str(m2), progress=False)
    r = run("tune", "nnue-data", "--variant", VARIANT, "--dir", str(tmp_path / "d"), "--manifest", str(m2))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "bench 12345" in r.stderr


@pytest.mark.parametrize("args, word", [
    (["--random-plies", "8-2"], "random-plies"),
    (["--random-plies", "x"], "random-plies"),
    (["--nodes", "0"], "--nodes"),
    (["--chunk-games", "0"], "--chunk-games"),
    (["--variant", "nosuch"], "nosuch"),
    (["--scheduler", "nonsense"], "scheduler"),
    (["--float64"], "--float64"),          # a trainer option, not a data-generation one
])
def test_cli_bad_input_is_one_line_exit_2(args, word, tmp_path):
    base = ["tune", "nnue-data", "--variant", VARIANT, "--dir", str(tmp_path / "d"), "--manifest", str(tmp_path / "m.json")]
    r = run(*base, *args)
    assert r.returncode == 2 and word in r.stderr and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
    assert not (tmp_path / "m.json").exists()


def test_verify_without_a_manifest_is_one_line_exit_2(tmp_path):
    r = run("tune", "nnue-data", "verify", "--variant", VARIANT, "--manifest", str(tmp_path / "none.json"))
    assert r.returncode == 2 and "no such manifest" in r.stderr and r.stderr.count("\n") == 1


# ---------------------------------------------------------------------------- the games themselves

@pytest.fixture(scope="module")
def searcher():
    from search.driver import Searcher
    return Searcher(4)


def test_random_plies_are_deterministic_and_legal(searcher):
    from engine.rules.position import Position
    ns = {SP.random_plies_count(ND.chunk_seed(1, 0), g, (0, 8))[0] for g in range(200)}
    assert ns == set(range(9))                         # every count of 0..8 occurs
    assert SP.random_plies_count(7, 3, (0, 8))[0] == SP.random_plies_count(7, 3, (0, 8))[0]
    start = Position.from_fen(None, VARIANT).fen()
    a = SP.play_game(searcher, VARIANT, 3, start, "s", NODES, 7, random_plies=(5, 5), max_plies=12)
    b = SP.play_game(searcher, VARIANT, 3, start, "s", NODES, 7, random_plies=(5, 5), max_plies=12)
    assert a == b and a.random_plies == 5 and a.plies == 12 and len(a.moves) == 12
    c = SP.play_game(searcher, VARIANT, 4, start, "s", NODES, 7, random_plies=(5, 5), max_plies=12)
    assert c.moves[:5] != a.moves[:5]                  # another game id: other random moves
    pos = Position.from_fen(start, VARIANT)
    for mv in a.moves:
        assert mv in pos.legal_uci()
        pos.push_uci(mv)
    # the search does not play the random moves: without them the game starts otherwise
    d = SP.play_game(searcher, VARIANT, 3, start, "s", NODES, 7, max_plies=12)
    assert d.random_plies == 0 and d.moves[:5] != a.moves[:5]


def test_recorded_positions_pass_the_filters(searcher):
    """Replaying each game: recorded positions are the game's, not in check, the move played there
    (the search's best move) neither a capture nor a promotion, no capture wins material by SEE."""
    from engine.rules.position import Position
    from engine.rules import layout as L
    win = SP.WinningCapture(VARIANT)
    s = ND.Settings(VARIANT, nodes=NODES)
    ops = SP.opening_fens(VARIANT)
    recorded = skipped_winning = 0
    for i in range(4):
        task = ND.game_task(s, ops, 5, i)
        g = SP.play_game(searcher, *task[:6], random_plies=task[6], skip_winning_captures=True)
        rec = {fen: (sc, ply) for fen, sc, ply in g.positions}
        pos = Position.from_fen(task[2], VARIANT)
        for ply, mv in enumerate(g.moves):
            fen = pos.fen()
            m = pos.parse_uci(mv)
            if fen in rec:
                assert rec[fen][1] == ply and ply >= SP.SKIP_PLIES and ply >= g.random_plies
                assert not pos.is_check()
                assert int(pos.board[L.move_to(m)]) == L.EMPTY and not L.move_promo(m)
                assert not win(pos)
                recorded += 1
            elif ply >= max(SP.SKIP_PLIES, g.random_plies) and not pos.is_check() and \
                    int(pos.board[L.move_to(m)]) == L.EMPTY and win(pos):
                skipped_winning += 1
            pos.push(m)
        assert len(rec) == len(g.positions)           # every recorded position was met
    assert recorded > 20 and skipped_winning > 0


def test_an_installed_cardinal_finds_the_checkouts_manifest_and_refuses_an_unknown_bench(reference, tmp_path,
                                                                                       monkeypatch):
    """Installed without git (site-packages): the default manifest is the working directory's
    checkout's, and continuing a manifest whose Bench this engine cannot tell is refused (its games
    might differ), rather than started afresh or played unchecked."""
    d, m, _ = reference
    checkout = tmp_path / "checkout"
    (checkout / "bench" / "runs").mkdir(parents=True)
    shutil.copy(m, checkout / "bench" / "runs" / f"nnue-data-{VARIANT}.json")
    monkeypatch.setattr(ND, "ROOT", str(tmp_path / "site-packages"))
    monkeypatch.chdir(checkout)
    assert ND.default_manifest(VARIANT) == str(checkout / "bench" / "runs" / f"nnue-data-{VARIANT}.json")
    monkeypatch.setattr(ND, "engine_identity", lambda v: {"commit": None, "bench": None, "weights": "hand"})
    with pytest.raises(ValueError, match="cannot tell this engine's Bench"):
        ND.generate(VARIANT, directory=str(tmp_path / "data"), progress=False, max_chunks=1)
