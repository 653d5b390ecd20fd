"""The match runner (bench/match.py and its parts: engines, referee, openings, PGN,
time control) with real Debian engines and scripted fake engines.

Real engines: Fairy-Stockfish (UCI) and Sjaak II (XBoard) from /usr/games or PATH;
those tests skip when the binaries are missing (and fail under CI=true).
"""
import io
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from bench import engines as E
from bench import match as M
from bench import pairs, stats
from bench import openings as O
from bench import referee as R
from bench import timecontrol as T

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FAKE = os.path.join(HERE, "fake_engine.py")


FSF = E.find_fairy_stockfish()
SJAAK = E.find_sjaak()


def _need(path, name):
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{name} is not installed (CI must apt-get install it)")
        pytest.skip(f"{name} not installed (apt-get install {name}; looked on PATH and in /usr/games)")
    return path


def fsf_spec(name="FSF"):
    return f"cmd={_need(FSF, 'fairy-stockfish')} proto=uci name={name}"


def fake_spec(mode, proto="uci"):
    return f"cmd='{sys.executable} {FAKE} {mode}' proto={proto} name=Fake"


def _pid_gone(pid):
    try:
        with open(f"/proc/{pid}/status") as fh:
            return "\nState:\tZ" in fh.read()      # a zombie is dead
    except FileNotFoundError:
        return True


def run(argv, tmp_path, name="out.pgn"):
    """Run main() in-process; returns (status, pgn text, stdout, stderr)."""
    pgn = tmp_path / name
    out, err = io.StringIO(), io.StringIO()
    old = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        rc = M.main(argv + ["--pgn", str(pgn), "--no-progress"])
    finally:
        sys.stdout, sys.stderr = old
    return rc, (pgn.read_text() if pgn.exists() else ""), out.getvalue(), err.getvalue()


def tags_of(pgn_text):
    games = [g for g in pgn_text.strip().split("\n\n[") if g]
    out = []
    for g in games:
        out.append(dict(re.findall(r'^\[?(\w+) "([^"]*)"\]', g, re.M)))
    return out


@pytest.fixture
def builtin_lines(monkeypatch, tmp_path_factory):
    """Default openings = the variants' built-in lines (start position + moves), as for a
    variant without an opening suite: for the tests of that wire format and PGN."""
    monkeypatch.setattr(O, "SUITES_DIR", str(tmp_path_factory.mktemp("no-suites")))


# ------------------------------------------------------------------ pure helpers
def test_engine_spec_parse():
    s = E.EngineSpec.parse("cmd='python -m engine' proto=xboard name=My\\ Engine option.Hash=64 arg=-x dir=/tmp")
    assert s.cmd == ["python", "-m", "engine", "-x"] and s.proto == "xboard"
    assert s.name == "My Engine" and s.options == {"Hash": "64"} and s.dir == "/tmp"
    for bad in ("proto=uci", "cmd=x proto=cecp", "cmd=x bogus=1", "cmd=x name"):
        with pytest.raises(ValueError):
            E.EngineSpec.parse(bad)


def test_parse_tc_and_pgn_timecontrol():
    assert T.parse_tc("5+0.05") == (5.0, 0.05)
    assert T.parse_tc("40") == (40.0, 0.0)
    for bad in ("", "abc", "0+1", "5+-1", "40/60"):
        with pytest.raises(ValueError):
            T.parse_tc(bad)
    assert T.TimeControl(5, 0.05).pgn() == "5+0.05"
    assert T.TimeControl(None, 0, movetime=500).pgn() == "0.5/move"
    assert T.TimeControl(None, 0, depth=3).pgn() == "inf"


@pytest.mark.parametrize("variant", sorted(O.OPENINGS))
def test_builtin_openings_are_legal(variant):
    from engine.rules.position import Position
    assert len(O.OPENINGS[variant]) >= 4
    for line in O.OPENINGS[variant]:
        pos = Position.from_fen(None, variant)
        for u in line.split():
            pos.push_uci(u)       # raises if illegal
        assert pos.status() == "ongoing"


def test_cecp_rank_shift_on_10_rank_boards():
    g = R.GameState("grand", None)
    assert g.pos.uci(g.parse("e2e4", zero_based=True)) == "e3e5"       # CECP 0-based -> e3e5
    assert g.pos.uci(g.parse("e3e5", zero_based=False)) == "e3e5"
    g.push(g.parse("e3e5", False))
    assert g.uci0 == ["e2e4"] and g.uci == ["e3e5"]
    c = R.GameState("chess", None)
    assert c.pos.uci(c.parse("e2e4", zero_based=True)) == "e2e4"       # 8x8: no shift
    assert c.pos.uci(c.parse("Nf3", zero_based=False)) == "g1f3"       # SAN fallback
    with pytest.raises(ValueError):
        c.parse("(none)", False)
    with pytest.raises(ValueError):
        c.parse("e1e8", False)


def test_load_openings(tmp_path):
    f = tmp_path / "o.epd"
    f.write_text("# comment\n\nrnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - id \"x\";\n")
    ops = O.load_openings(str(f), "chess")
    assert len(ops) == 1 and ops[0].fen.split()[1] == "b"
    f.write_text("not a fen\n")
    with pytest.raises(ValueError, match="o.epd:1"):
        O.load_openings(str(f), "chess")


# ------------------------------------------------------------------ real engines
def test_fsf_vs_fsf_chess_pgn_readable_by_python_chess(tmp_path, builtin_lines):
    chess = pytest.importorskip("chess")
    import chess.pgn
    rc, pgn, out, err = run(["--engine", fsf_spec("A"), "--engine", fsf_spec("B"), "--depth", "1",
                             "--games", "2"], tmp_path)
    assert rc == 0, err
    assert "Score of A vs B:" in out and "Elo difference:" in out and "LOS:" in out
    fh = io.StringIO(pgn)
    seen = 0
    while True:
        game = chess.pgn.read_game(fh)
        if game is None:
            break
        seen += 1
        h = game.headers
        for t in ("Event", "Site", "Date", "Round", "White", "Black", "Result", "TimeControl",
                  "Termination", "PlyCount"):
            assert t in h, t
        assert "Variant" not in h and "FEN" not in h       # Cute Chess omits them for standard chess
        assert not game.errors, game.errors
        board = game.end().board()
        assert int(h["PlyCount"]) == board.ply()
        if h["Termination"] == "normal" and h["Result"] != "1/2-1/2":
            assert board.is_checkmate()
        assert {h["White"], h["Black"]} == {"A", "B"}
    assert seen == 2
    # colours alternate with the same opening
    t = tags_of(pgn)
    assert t[0]["White"] == "A" and t[1]["White"] == "B"


def test_fsf_vs_sjaak_grand_uci_and_xboard(tmp_path, builtin_lines):
    from engine.rules.position import Position
    _need(SJAAK, "sjaakii")
    rc, pgn, out, err = run(["--variant", "grand", "--engine", fsf_spec(),
                             "--engine", f"cmd={SJAAK} proto=xboard name=Sjaak",
                             "--tc", "1+0.05", "--games", "2", "--debug"], tmp_path)
    assert rc == 0, err
    # the wire: UCI variant + full move list; XBoard variant, level, clocks in cs, 0-based ranks
    assert "FSF > setoption name UCI_Variant value grand" in err
    assert "FSF > position startpos moves e3e5 e8e6" in err
    assert re.search(r"FSF > go wtime \d+ btime \d+ winc 50 binc 50", err)
    for line in ("Sjaak > variant grand", "Sjaak > level 0 0:01 0.05", "Sjaak > e2e4", "Sjaak > e7e5",
                 "Sjaak > force", "Sjaak > go", "Sjaak > result "):
        assert line in err, line
    assert re.search(r"Sjaak > time \d+\n.*Sjaak > otim \d+", err)
    assert "Sjaak > usermove" not in err          # Sjaak has no usermove feature: bare moves
    games = tags_of(pgn)
    assert len(games) == 2
    for g in games:
        assert g["Variant"] == "grand" and g["TimeControl"] == "1+0.05"
        assert g["Termination"] in ("normal", "time forfeit"), g
    # replay the SAN of each game with Cardinal's rules
    for block in re.split(r"\n\n(?=\[Event)", pgn.strip()):
        movetext = block.split("\n\n", 1)[1]
        movetext = re.sub(r"\{[^}]*\}", " ", movetext)
        sans = [w for w in movetext.split() if not re.match(r"^\d+\.+$", w) and w not in
                ("1-0", "0-1", "1/2-1/2", "*")]
        pos = Position.from_fen(None, "grand")
        for s in sans:
            pos.push(pos.parse_san(s))
        ply = int(re.search(r'PlyCount "(\d+)"', block).group(1))
        assert ply == len(sans)
        res = re.search(r'Result "([^"]+)"', block).group(1)
        term = re.search(r'Termination "([^"]+)"', block).group(1)
        if term == "normal" and pos.result() is not None:
            assert pos.result() == res


def test_concurrency_and_rounds(tmp_path):
    rc, pgn, out, err = run(["--engine", fsf_spec("A"), "--engine", fsf_spec("B"), "--depth", "1",
                             "--games", "4", "--concurrency", "2"], tmp_path)
    assert rc == 0, err
    assert sorted(int(t["Round"]) for t in tags_of(pgn)) == [1, 2, 3, 4]
    assert ("warning:" in err) == (4 > (os.cpu_count() or 1))     # 4 engine processes


def test_fen_openings_file(tmp_path):
    chess = pytest.importorskip("chess")
    import chess.pgn
    f = tmp_path / "open.epd"
    fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
    black_fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
    f.write_text(fen + "\n" + black_fen + "\n")
    rc, pgn, out, err = run(["--engine", fsf_spec("A"), "--engine", fsf_spec("B"), "--depth", "1",
                             "--games", "4", "--openings", str(f)], tmp_path)
    assert rc == 0, err
    fh = io.StringIO(pgn)
    fens = []
    for _ in range(4):
        g = chess.pgn.read_game(fh)
        assert g.headers["SetUp"] == "1" and not g.errors
        fens.append(g.headers["FEN"])
    assert fens[0] == fens[1] and fens[2] == fens[3] and fens[0] != fens[2]
    assert "1... " in pgn      # black to move in the second opening


# ------------------------------------------------------------------ adjudication with fake engines
def _single(tmp_path, fake_mode, extra=(), first=None, proto="uci"):
    first = first or fsf_spec()
    rc, pgn, out, err = run(["--engine", first, "--engine", fake_spec(fake_mode, proto),
                             "--games", "1", *extra], tmp_path, f"{fake_mode}-{len(os.listdir(tmp_path))}.pgn")
    t = tags_of(pgn)
    return rc, t, pgn, err


def test_illegal_move_loses(tmp_path):
    # FSF is White (round 1), the fake plays Black: e1e8 is illegal -> Black loses
    rc, t, pgn, err = _single(tmp_path, "illegal", ["--depth", "1"])
    assert rc == 0, err
    assert t[0]["Result"] == "1-0" and t[0]["Termination"] == "illegal move"
    assert "Black makes an illegal move: e1e8" in pgn
    assert "Forfeits: illegal move 1" in run(["--engine", fsf_spec(), "--engine", fake_spec("illegal"),
                                               "--games", "1", "--depth", "1"], tmp_path, "b.pgn")[2]


def test_bestmove_none_is_illegal(tmp_path):
    rc, t, pgn, err = _single(tmp_path, "none", ["--depth", "1"])
    assert t[0]["Termination"] == "illegal move" and t[0]["Result"] == "1-0"


def test_crash_loses_as_abandoned(tmp_path):
    rc, t, pgn, err = _single(tmp_path, "crash", ["--depth", "1"])
    assert rc == 0, err
    assert t[0]["Result"] == "1-0" and t[0]["Termination"] == "abandoned"
    assert "Black disconnects" in pgn


def test_crashed_engine_is_restarted_for_the_next_game(tmp_path):
    rc, pgn, out, err = run(["--engine", fsf_spec(), "--engine", fake_spec("crash"), "--games", "2",
                             "--depth", "1"], tmp_path)
    assert rc == 0, err
    t = tags_of(pgn)
    assert [g["Termination"] for g in t] == ["abandoned", "abandoned"]
    assert [g["Result"] for g in t] == ["1-0", "0-1"]


def test_flag_fall_loses_on_time(tmp_path):
    rc, t, pgn, err = _single(tmp_path, "slow", ["--tc", "1+0"])
    assert rc == 0, err
    assert t[0]["Result"] == "1-0" and t[0]["Termination"] == "time forfeit"
    assert "Black loses on time" in pgn
    rc, t, pgn, err = _single(tmp_path, "slow", ["--movetime", "300"])
    assert t[0]["Termination"] == "time forfeit" and t[0]["TimeControl"] == "0.3/move"


def test_xboard_claiming_illegal_loses_and_resign(tmp_path):
    rc, t, pgn, err = _single(tmp_path, "xb-claim", ["--depth", "1"], proto="xboard")
    assert rc == 0, err
    assert t[0]["Result"] == "1-0" and t[0]["Termination"] == "adjudication"
    rc, t, pgn, err = _single(tmp_path, "xb-resign", ["--depth", "1"], proto="xboard")
    assert t[0]["Result"] == "1-0" and t[0]["Termination"] == "normal"
    assert "Black resigns" in pgn


def test_nonexistent_command_is_a_clear_error(tmp_path):
    rc, pgn, out, err = run(["--engine", "cmd=/nonexistent/engine-xyz proto=uci name=Ghost",
                             "--engine", fake_spec("illegal")], tmp_path)
    assert rc == 2
    assert "Ghost" in err and "/nonexistent/engine-xyz" in err and "Traceback" not in err
    assert not E.live_processes()


def test_silent_engine_times_out_and_leaves_no_process(tmp_path):
    pidfile = tmp_path / "pid"
    os.environ["FAKE_PIDFILE"] = str(pidfile)
    try:
        rc, pgn, out, err = run(["--engine", fake_spec("illegal"), "--engine",
                                 f"cmd='{sys.executable} {FAKE} silent' name=Mute",
                                 "--handshake-timeout", "2", "--debug"], tmp_path)
    finally:
        del os.environ["FAKE_PIDFILE"]
    assert rc == 2
    assert "Mute" in err and "no 'uciok' within 2 s" in err      # the given timeout fired, not the default
    pids = [int(p) for p in re.findall(r"started pid (\d+)", err)]
    assert len(pids) == 2
    pids.append(int(pidfile.read_text()))           # the fake's own child (same process group)
    deadline = time.monotonic() + 5
    while not all(_pid_gone(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert all(_pid_gone(p) for p in pids), pids
    assert not E.live_processes()


def test_engine_without_readyok_or_variant(tmp_path):
    rc, pgn, out, err = run(["--engine", fake_spec("illegal"), "--engine", fake_spec("noready"),
                             "--ready-timeout", "1"], tmp_path)
    assert rc == 2 and "readyok" in err
    rc, pgn, out, err = run(["--variant", "grand", "--engine", fake_spec("illegal"),
                             "--engine", fake_spec("novariant")], tmp_path)
    assert rc == 2 and "grand" in err and "support" in err


def test_bad_arguments(tmp_path):
    for argv in (["--games", "0"], ["--tc", "x"], ["--tc", "5", "--movetime", "100"],
                 ["--engine", "proto=uci"], ["--sprt", "elo0=5", "elo1=0"],
                 ["--openings", str(tmp_path / "missing.epd")]):
        rc, pgn, out, err = run(argv, tmp_path)
        assert rc == 2, argv
        assert err.startswith("error:"), (argv, err)


def test_unwritable_pgn_is_an_error_before_engines_start(tmp_path, capsys):
    rc = M.main(["--engine", fake_spec("illegal"), "--engine", fake_spec("illegal"), "--no-progress",
                 "--pgn", str(tmp_path / "no" / "such" / "dir.pgn")])
    assert rc == 2 and capsys.readouterr().err.startswith("error:")
    assert not E.live_processes()


def _main(argv):
    """Run main() in-process; returns (status, stdout, stderr)."""
    from tests.conftest import capture_main
    return capture_main(M.main, argv)


def _two_legal(games=2):
    return ["--engine", legal_spec("A"), "--engine", legal_spec("B"), "--depth", "1", "--games", str(games),
            "--resign", "movecount=2", "score=800", "--no-progress"]


@pytest.mark.parametrize("opt", ["--pgn", "--journal"])
def test_output_in_a_place_that_takes_no_new_file_is_an_error_before_engines_start(tmp_path, opt):
    """/proc looks writable (as root every permission test passes) but takes no new file."""
    if not os.path.isdir("/proc/self"):
        pytest.skip("needs Linux /proc")
    argv = _two_legal() + [opt, "/proc/m.out"] + (["--pgn", str(tmp_path / "m.pgn")] if opt == "--journal" else [])
    rc, out, err = _main(argv)
    assert rc == 2 and out == "" and not E.live_processes()
    assert err.strip().splitlines() == [f"error: {opt} /proc/m.out: cannot create a file in /proc "
                                        "(No such file or directory)"], err
    assert not (tmp_path / "m.pgn").exists()


def test_pgn_write_that_fails_names_the_file_and_ends_the_journal(tmp_path):
    """/dev/full takes the PGN and refuses its bytes (a full disk): one error line naming the
    file, exit status 1, and the journal keeps its ``end`` line (status ``error``)."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    jpath = tmp_path / "full.jsonl"
    rc, out, err = _main(_two_legal(4) + ["--pgn", "/dev/full", "--journal", str(jpath)])
    assert rc == 1, err
    assert err.strip().splitlines()[-1] == "error: /dev/full: No space left on device", err
    assert "Traceback" not in err and "Score of A vs B" in out
    lines = [json.loads(ln) for ln in jpath.read_text().splitlines()]
    assert lines[0]["type"] == "match" and [ln["type"] for ln in lines if ln["type"] == "pair"] == []
    assert lines[-1]["type"] == "end" and lines[-1]["status"] == "error"
    assert lines[-1]["error"] == "/dev/full: No space left on device"
    assert not E.live_processes()


def test_journal_write_that_fails_names_the_file(tmp_path):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    rc, out, err = _main(_two_legal() + ["--pgn", str(tmp_path / "j.pgn"), "--journal", "/dev/full"])
    assert rc == 2 and err.strip().splitlines() == ["error: /dev/full: No space left on device"], err
    assert not E.live_processes()


def _tally(*pair_scores):
    t = pairs.Tally()
    for scores in pair_scores:
        t.add_scores(list(scores))
    return t


def test_short_matches_print_and_record_no_pair_interval():
    """4 games used to print ``Elo (pairs) 190.3 +/- 27.8, nElo 2833.7`` beside ``+/- 458.0``
    by games: the pair-based error bar, nElo and LOS are n/a (null in the journal) below 10
    pairs or 2 non-empty pentanomial cells; the point estimate stays."""
    sprt = stats.SPRT(0, 5)
    for t in (_tally((1, 1), (0.5, 1)), _tally((0.5, 0.5)), _tally(*[(1, 0)] * 12)):
        table = M.summary_table(M.MatchResult(games=[], tally=t), sprt)
        row = next(ln for ln in table.splitlines() if "Elo (pairs)" in ln)
        assert re.search(r"Elo \(pairs\)\s+-?\d+\.\d \+/- n/a, nElo n/a, LOS n/a \(needs at least 10 pairs", row), row
        assert "Elo (games)" in table and "LLR" in table
        assert M._progress_text(t, None).endswith("+/- n/a")
        snap = t.snapshot(sprt)
        assert snap["elo_error"] is None and snap["nelo"] is None and snap["los"] is None
        assert isinstance(snap["elo"], float) and isinstance(snap["llr"], float)
    t = _tally(*[(1, 0)] * 6, *[(1, 1)] * 4, (0.5, 0))      # 11 pairs in 3 cells: numbers
    row = next(ln for ln in M.summary_table(M.MatchResult(games=[], tally=t)).splitlines() if "Elo (pairs)" in ln)
    assert re.search(r"\d+\.\d \+/- \d+\.\d, nElo \d+\.\d, LOS \d+\.\d %$", row), row
    snap = t.snapshot()
    assert all(isinstance(snap[k], float) for k in ("elo", "elo_error", "nelo", "los"))


def test_output_lock_names_the_holder_and_is_all_or_none(tmp_path):
    from bench import journal as J
    a, b = str(tmp_path / "a.jsonl"), str(tmp_path / "a.pgn")
    held = J.lock_outputs([a, b, None, a])             # None and repeats skipped
    assert [lk.path for lk in held] == [a, b]
    assert (tmp_path / "a.jsonl.lock").read_text() == f"{os.getpid()}\n"
    with pytest.raises(J.InUse, match=rf"{re.escape(b)} is in use by another cardinal match \(pid {os.getpid()}\)"):
        J.lock_outputs([str(tmp_path / "c.jsonl"), b])   # flock: a second open file is a second holder
    assert not (tmp_path / "c.jsonl.lock").exists()       # the lock taken before the refusal is let go
    J.release_all(held)
    assert sorted(os.listdir(tmp_path)) == []             # the lock files go with the locks
    J.release_all(J.lock_outputs([a]))                   # free again


def test_second_run_on_a_journal_in_use_is_refused(tmp_path):
    """A ``--resume`` (or any second run) while the first run is alive used to append to the
    same journal and PGN, recording every pair twice: now it stops at once, naming the PID
    of the run that holds them, and leaves the first run's files alone."""
    pgn, jpath = tmp_path / "lk.pgn", tmp_path / "lk.jsonl"
    env = dict(os.environ, PYTHONPATH=ROOT)
    slow = [f"cmd='{sys.executable} {FAKE} legal::20' proto=uci name={n}" for n in "AB"]   # 20 ms a move
    argv = [sys.executable, "-m", "engine", "match", "--engine", slow[0], "--engine", slow[1], "--depth", "1",
            "--games", "200", "--resign", "movecount=2", "score=800", "--pgn", str(pgn), "--no-progress"]
    first = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120                 # only a hang takes this long
        while not (jpath.exists() and '"type":"pair"' in jpath.read_text()):
            assert first.poll() is None, first.stderr.read()
            assert time.monotonic() < deadline
            time.sleep(0.05)
        for extra in (["--resume", str(jpath)], ["--journal", str(tmp_path / "other.jsonl")]):
            second = subprocess.run(argv + extra, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
            assert second.returncode == 2, second.stderr
            err = second.stderr.strip().splitlines()
            held = jpath if extra[0] == "--resume" else pgn
            assert err == [f"error: {held} is in use by another cardinal match (pid {first.pid}): "
                           "wait for that run to end, or stop it first"], second.stderr
        assert first.poll() is None                       # the first run goes on
    finally:
        first.send_signal(signal.SIGTERM)
        first.wait(timeout=120)
    assert first.returncode == 130
    lines = [json.loads(ln) for ln in jpath.read_text().splitlines()]
    assert [ln["type"] for ln in lines].count("match") == 1 and "resume" not in [ln["type"] for ln in lines]
    pairs = [ln["pair"] for ln in lines if ln["type"] == "pair"]
    assert pairs and len(pairs) == len(set(pairs)) and lines[-1]["type"] == "end"
    rounds = [int(r) for r in re.findall(r'^\[Round "(\d+)"\]', pgn.read_text(), re.M)]
    assert len(rounds) == len(set(rounds)) >= 2 * len(pairs)
    assert sorted(os.listdir(tmp_path)) == ["lk.jsonl", "lk.pgn"]     # no other journal, no lock file left


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_keeps_pgn_and_kills_engines(tmp_path, sig):
    """Ctrl-C, or SIGTERM (``kill PID``), mid-match: exit 130, the PGN's finished games kept
    whole, every engine process ended."""
    fsf = _need(FSF, "fairy-stockfish")
    pgn = tmp_path / "int.pgn"
    env = dict(os.environ, PYTHONPATH=ROOT)
    errf = open(tmp_path / "err.txt", "w+")
    p = subprocess.Popen([sys.executable, "-m", "engine", "match", "--engine", f"cmd={fsf} name=A",
                          "--engine", f"cmd={fsf} name=B", "--depth", "3", "--games", "500",
                          "--pgn", str(pgn), "--no-progress", "--debug"],
                         stdout=subprocess.PIPE, stderr=errf, text=True, env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not pgn.exists() or "[Event" not in pgn.read_text()):
        time.sleep(0.1)
    time.sleep(0.3)
    p.send_signal(sig)
    out, _ = p.communicate(timeout=30)
    errf.seek(0)
    err = errf.read()
    errf.close()
    assert p.returncode == 130, err[-2000:]
    text = pgn.read_text()
    n = text.count("[Event ")
    assert n >= 1 and text.count("[Result ") == n and text.rstrip().endswith(("1-0", "0-1", "1/2-1/2"))
    pids = [int(x) for x in re.findall(r"started pid (\d+)", err)]
    assert len(pids) >= 2
    deadline = time.monotonic() + 10
    while not all(_pid_gone(x) for x in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert all(_pid_gone(x) for x in pids)
    assert "Score of A vs B" in out


def test_sprt_stops_early_and_progress_bar(tmp_path):
    pgn = tmp_path / "s.pgn"
    out, err = io.StringIO(), io.StringIO()
    old = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        # loose bounds (alpha = beta = 0.45: LLR bounds +/-0.2) decide after a few games
        rc = M.main(["--engine", fsf_spec("A"), "--engine", fsf_spec("B"), "--depth", "1", "--games", "200",
                     "--sprt", "elo0=0", "elo1=200", "alpha=0.45", "beta=0.45", "--pgn", str(pgn)])
    finally:
        sys.stdout, sys.stderr = old
    assert rc == 0, err.getvalue()
    o = out.getvalue()
    assert re.search(r"SPRT: llr -?\d+\.\d\d \(-0\.20, 0\.20\) \[0, 200\]: H[01] accepted", o), o
    n = int(re.search(r"Score of A vs B: \d+ - \d+ - \d+ \[[\d.]+\] (\d+)", o).group(1))
    assert 1 <= n < 200 and pgn.read_text().count("[Event ") >= n
    assert "A vs B" not in err.getvalue() and "\r" not in err.getvalue()   # stderr is no terminal: no bar
    # the journal's end record says where the test decided: a bound crossed, at most all pairs
    end = [json.loads(ln) for ln in open(tmp_path / "s.jsonl", encoding="utf-8")][-1]
    assert end["type"] == "end" and end["status"] in ("sprt H0", "sprt H1")
    assert abs(end["sprt_decided"]["llr"]) >= 0.2 - 1e-4 and 1 <= end["sprt_decided"]["pairs"] <= end["totals"]["pairs"]


def test_sprt_line_names_the_decision_when_pairs_in_flight_finished_after_it():
    """Pairs running when the LLR crossed a bound finish and are counted: the final LLR may be
    back inside the bounds, so the line gives the pair and LLR where the test decided."""
    sprt = stats.SPRT(elo0=0, elo1=15)
    tally = pairs.Tally()
    tally.penta = [46, 58, 109, 74, 75]                       # LLR 2.97: H1 here
    v = sprt.llr_pentanomial(tally.penta)
    assert sprt.decide(v) == "H1"
    res = M.MatchResult(games=[], sprt_status="H1", sprt_decided=(tally.pairs, v), tally=tally)
    assert M.sprt_line(res, sprt) == "SPRT: llr 2.97 (-2.94, 2.94) [0, 15]: H1 accepted (pentanomial, 362 pairs)"
    tally.penta[1] += 1                                       # the pair in flight: a loss and a draw (LD)
    assert M.sprt_line(res, sprt) == ("SPRT: llr 2.93 (-2.94, 2.94) [0, 15]: H1 accepted at pair 362 (llr 2.97); "
                                      "1 pair in flight finished after it (pentanomial, 363 pairs)")


class _Tty(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("tty", [True, False])
def test_progress_bar_only_on_a_terminal(tmp_path, tty):
    out, err = io.StringIO(), (_Tty() if tty else io.StringIO())
    old = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        rc = M.main(["--engine", fake_spec("illegal"), "--engine", fake_spec("none"), "--depth", "1",
                     "--games", "2", "--pgn", str(tmp_path / "p.pgn")])
    finally:
        sys.stdout, sys.stderr = old
    assert rc == 0, err.getvalue()
    assert ("Fake vs Fake (2)" in err.getvalue() and "2/2" in err.getvalue()) == tty, err.getvalue()
    assert "Score of Fake vs Fake (2): 1 - 1 - 0" in out.getvalue()     # the summary either way


def test_pgn_to_stdout_without_pgn_option():
    out, err = io.StringIO(), io.StringIO()
    old = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        rc = M.main(["--engine", fsf_spec("A"), "--engine", fsf_spec("B"), "--depth", "1", "--games", "2",
                     "--no-progress"])
    finally:
        sys.stdout, sys.stderr = old
    o = out.getvalue()
    assert rc == 0 and o.count("[Event ") == 2 and o.index('[Round "1"]') < o.index('[Round "2"]')
    assert o.index("[Event ") < o.index("Score of A vs B")


def test_uci_options_and_per_game_sequence(tmp_path, builtin_lines):
    rc, pgn, out, err = run(["--engine", fsf_spec() + " option.Hash=8 option.Threads=1",
                             "--engine", fake_spec("illegal"), "--depth", "1", "--games", "1", "--debug"],
                            tmp_path)
    assert rc == 0, err
    lines = [ln.split(" ", 1)[1] for ln in err.splitlines() if " FSF > " in ln]
    assert lines[:2] == ["FSF > uci", "FSF > setoption name Hash value 8"]
    i = lines.index("FSF > ucinewgame")
    assert lines[i - 1] == "FSF > setoption name UCI_Variant value chess"
    assert lines[i + 1:i + 5] == ["FSF > isready", "FSF > position startpos moves e2e4 e7e5 g1f3 b8c6",
                                  "FSF > isready", "FSF > go depth 1"]


# ------------------------------------------------------------------ the runner's own engines
def test_own_cardinal_runs_the_same_engine_package(tmp_path, monkeypatch):
    # a checkout-like 'engine' package in the working directory must not replace the running one
    decoy = tmp_path / "engine"
    decoy.mkdir()
    (decoy / "__init__.py").write_text("")
    (decoy / "__main__.py").write_text("print('id name Decoy')\n")
    monkeypatch.chdir(tmp_path)
    spec = E.EngineSpec.cardinal()
    assert spec.cmd == [sys.executable, "-m", "engine"]
    probe = spec.cmd[:-2] + ["-c", "import engine; print(engine.__file__)"]
    r = subprocess.run(probe, cwd=spec.dir, env=spec.env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    import engine
    assert os.path.samefile(r.stdout.strip(), engine.__file__)
    cmd, cwd = E.cardinal_command()          # the same for bench startup and the tests' client
    assert cmd == spec.cmd and cwd == spec.dir


@pytest.mark.parametrize("alias", ["standard", "normal"])
def test_variant_aliases_of_chess(tmp_path, alias):
    rc, pgn, out, err = run(["--variant", alias, "--engine", fake_spec("illegal"), "--engine", fake_spec("none"),
                             "--depth", "1", "--games", "2"], tmp_path)
    assert rc == 0, err
    games = tags_of(pgn)
    assert len(games) == 2 and all("Variant" not in g for g in games)      # played as chess
    assert [g["Termination"] for g in games] == ["illegal move", "illegal move"]


# ------------------------------------------------------------------ engine options
def test_option_names_with_spaces_need_quoting():
    for text in ("cmd=x 'option.Move Overhead=20'", 'cmd=x "option.Move Overhead=20"',
                 "cmd=x option.Move\\ Overhead=20"):
        assert E.EngineSpec.parse(text).options == {"Move Overhead": "20"}, text
    with pytest.raises(ValueError, match="quote"):
        E.EngineSpec.parse("cmd=x option.Move Overhead=20")


def _warnings(err):
    return [ln for ln in err.splitlines() if ln.startswith("warning:")]


def test_unknown_or_refused_option_is_a_warning(tmp_path):
    rc, pgn, out, err = run(["--engine", fsf_spec() + " option.Bogus=1 option.Hash=abc option.Threads=1",
                             "--engine", fake_spec("illegal"), "--depth", "1", "--games", "1"], tmp_path)
    assert rc == 0, err
    w = _warnings(err)
    assert any("'FSF'" in ln and "'Bogus'" in ln and "unknown option" in ln for ln in w), err
    assert any("'FSF'" in ln and "'Hash'" in ln and "'abc'" in ln for ln in w), err
    assert not any("'Threads'" in ln for ln in w), err
    assert len(w) == 2, w


def test_option_refused_by_the_engine_is_a_warning(tmp_path):
    # the fake declares no spin limits for 'Style' but answers its setoption with an error line
    rc, pgn, out, err = run(["--engine", fake_spec("illegal") + " option.Style=wild",
                             "--engine", fake_spec("none"), "--depth", "1", "--games", "1"], tmp_path)
    assert rc == 0, err
    w = _warnings(err)
    assert len(w) == 1 and "'Fake'" in w[0] and "Style" in w[0] and "refused" in w[0], err


def test_movetime_and_move_overhead():
    own, other = E.EngineSpec.cardinal(), E.EngineSpec.parse("cmd=x name=X")
    mine = E.EngineSpec.cardinal(**{"Move Overhead": "7"})
    tuned = M.tuned_specs([own, other, mine], T.TimeControl(None, 0, movetime=50))
    assert tuned[0].options == {"Move Overhead": "10"}        # a fifth of the movetime
    assert tuned[1].options == {} and tuned[2].options == {"Move Overhead": "7"}
    assert M.tuned_specs([own], T.TimeControl(None, 0, movetime=5000))[0].options == {"Move Overhead": "100"}
    assert M.tuned_specs([own], T.TimeControl(5, 0.05))[0].options == {}
    assert own.options == {}                                  # the caller's spec is not changed


def test_movetime_at_or_below_an_engines_overhead_warns(tmp_path):
    # Fairy-Stockfish declares Move Overhead default 30; the fake declares none (100 ms assumed)
    rc, pgn, out, err = run(["--engine", fsf_spec(), "--engine", fake_spec("illegal"), "--movetime", "30",
                             "--games", "1"], tmp_path)
    assert rc == 0, err
    w = _warnings(err)
    assert len(w) == 2, w
    assert any("'FSF'" in ln and "--movetime 30" in ln and "(30 ms)" in ln for ln in w), w
    assert any("'Fake'" in ln and "100 ms" in ln for ln in w), w
    rc, pgn, out, err = run(["--engine", fsf_spec() + " option.Move\\ Overhead=5", "--engine", fake_spec("illegal"),
                             "--movetime", "30", "--games", "1"], tmp_path, "b.pgn")
    assert rc == 0, err
    w = _warnings(err)
    assert len(w) == 1 and "'Fake'" in w[0], w              # the user set FSF's overhead


@pytest.mark.timing
def test_own_cardinal_gets_an_overhead_that_suits_the_movetime(tmp_path):
    rc, pgn, out, err = run(["--engine", fake_spec("illegal"), "--movetime", "60", "--games", "1", "--debug",
                             "--ready-timeout", "120", "--handshake-timeout", "120"], tmp_path)
    assert rc == 0, err
    assert "Cardinal > setoption name Move Overhead value 12" in err
    assert not any("Cardinal" in ln for ln in _warnings(err)), _warnings(err)
    t = tags_of(pgn)
    assert t[0]["White"] == "Cardinal" and t[0]["Termination"] == "illegal move"
    assert re.search(r"\{[+-][\d.M]+/\d+ 0\.0[2-9]\d*s[,}]", pgn), pgn      # it used the time (not 1 ms)


# ------------------------------------------------------------------ per-engine limits, --nodes, --seed
def legal_spec(name, score=None, extra=""):
    mode = "legal" if score is None else f"legal:{score}"
    return f"cmd='{sys.executable} {FAKE} {mode}' proto=uci name={name} {extra}".rstrip()


def _go_lines(err, name):
    return [ln.split(" > ", 1)[1] for ln in err.splitlines() if f" {name} > go" in ln]


def test_engine_spec_limits():
    s = E.EngineSpec.parse("cmd=x tc=10+0.1 depth=8 nodes=5000")
    assert s.limits == {"tc": (10.0, 0.1), "depth": 8, "nodes": 5000}
    assert E.EngineSpec.parse("cmd=x st=1.5").limits == {"st": 1.5}
    for bad in ("cmd=x tc=abc", "cmd=x st=0", "cmd=x depth=0", "cmd=x nodes=-5", "cmd=x tc=5 st=1",
                "cmd=x proto=xboard nodes=100", "cmd=x nodes=100 proto=xboard"):
        with pytest.raises(ValueError, match="--engine"):
            E.EngineSpec.parse(bad)
    g = T.TimeControl(5, 0.05, depth=3)
    assert g.with_limits({"tc": (10.0, 0.1)}) == T.TimeControl(10.0, 0.1, depth=3)
    assert g.with_limits({"st": 1.0}) == T.TimeControl(None, 0.0, movetime=1000, depth=3)
    assert g.with_limits({"depth": 8, "nodes": 50}) == T.TimeControl(5, 0.05, depth=8, nodes=50)
    assert g == T.TimeControl(5, 0.05, depth=3)          # unchanged


def test_per_engine_depth_and_nodes_on_the_wire(tmp_path):
    rc, pgn, out, err = run(["--engine", legal_spec("A", extra="depth=3"), "--engine",
                             legal_spec("B", extra="nodes=300"), "--depth", "1", "--games", "2", "--debug"],
                            tmp_path)
    assert rc == 0, err
    a, b = _go_lines(err, "A"), _go_lines(err, "B")
    assert a and all(ln == "go depth 3" for ln in a), a
    assert b and all(ln == "go depth 1 nodes 300" for ln in b), b
    assert all(g["TimeControl"] == "inf" for g in tags_of(pgn))


class _WireLog:
    """A stand-in for an engine process that logs what the driver writes and reads."""

    def __init__(self):
        self.log = []

    def send(self, line):
        self.log.append(("write", (line,)))

    def send_lines(self, lines):
        self.log.append(("write", tuple(lines)))

    def expect(self, match, timeout):
        assert match("readyok")
        self.log.append(("read", "readyok"))
        return "readyok", ["readyok"]


@pytest.mark.parametrize("tc,timed", [(T.TimeControl(base=None, inc=0.0, nodes=500), False),
                                      (T.TimeControl(base=None, inc=0.0, depth=3), False),
                                      (T.TimeControl(base=None, inc=0.0, movetime=200, nodes=500), True),
                                      (T.TimeControl(base=5.0, inc=0.05, nodes=500), True)])
def test_uci_go_waits_for_readyok_only_with_a_clock(tc, timed):
    """Each move sends position, isready and go in that order. With a clock or a move time
    the driver reads readyok before it writes go (the position is set before the clock
    starts); without either (depth and node limits) no clock is charged, so go goes out in
    the same write and readyok is read after it: one round trip fewer per move."""
    eng = object.__new__(E.UciEngine)
    eng.proc, eng.info = _WireLog(), {"score": ("cp", 3)}
    game = R.GameState("chess", None)
    game.push(game.pos.parse_uci("e2e4"))
    eng.go(game, tc, [5000.0, 5000.0])
    go = [ln for kind, lines in eng.proc.log if kind == "write" for ln in lines if ln.startswith("go")]
    assert len(go) == 1 and ("nodes 500" in go[0] or "depth 3" in go[0])
    if timed:
        assert eng.proc.log == [("write", ("position startpos moves e2e4",)), ("write", ("isready",)),
                                ("read", "readyok"), ("write", (go[0],))]
    else:
        assert eng.proc.log == [("write", ("position startpos moves e2e4", "isready", go[0])),
                                ("read", "readyok")]
    assert eng.info == {}


def test_global_nodes(tmp_path):
    rc, pgn, out, err = run(["--engine", legal_spec("A"), "--engine", legal_spec("B", extra="nodes=7"),
                             "--nodes", "500", "--games", "1", "--debug"], tmp_path)
    assert rc == 0, err
    assert set(_go_lines(err, "A")) == {"go nodes 500"} and set(_go_lines(err, "B")) == {"go nodes 7"}
    assert "info string go nodes 500" in err                 # the engine received it
    rc, pgn, out, err = run(["--engine", legal_spec("A"), "--engine", fake_spec("xb-resign", "xboard"),
                             "--nodes", "500"], tmp_path, "x.pgn")
    assert rc == 2 and err.startswith("error: --nodes") and "XBoard" in err and "Traceback" not in err


def test_time_odds_pgn_tags_and_clocks(tmp_path):
    rc, pgn, out, err = run(["--engine", legal_spec("A", extra="tc=2+0.02"), "--engine",
                             legal_spec("B", extra="tc=1+0.01"), "--games", "2", "--debug"], tmp_path)
    assert rc == 0, err
    g = tags_of(pgn)
    assert [(x["White"], x["WhiteTimeControl"], x["BlackTimeControl"]) for x in g] == \
        [("A", "2+0.02", "1+0.01"), ("B", "1+0.01", "2+0.02")]
    assert all("TimeControl" not in x for x in g)
    assert re.search(r"A > go wtime 2000 btime 1000 winc 20 binc 10\n", err), err   # A's first move as White
    rc, pgn, out, err = run(["--engine", legal_spec("A", extra="st=0.5"), "--engine", legal_spec("B"),
                             "--tc", "1+0.01", "--games", "1", "--debug"], tmp_path, "st.pgn")
    assert rc == 0, err
    assert set(_go_lines(err, "A")) == {"go movetime 500"}
    assert tags_of(pgn)[0]["WhiteTimeControl"] == "0.5/move"


def test_seed_shuffles_openings_reproducibly():
    from bench.pairs import schedule
    ops = O.builtin_openings("chess")
    plain = schedule(ops, 40, None)
    assert [t.opening for t in plain[:len(ops)]] == ops                 # no seed: in order
    a, b, c = schedule(ops, 40, 7), schedule(ops, 40, 7), schedule(ops, 40, 8)
    assert a == b and a != c and a != plain
    for k, t in enumerate(a):
        assert t.pair == k and t.rounds == ((2 * k + 1, 0), (2 * k + 2, 1))    # colours reversed in a pair
    first = [t.opening.label for t in a[:len(ops)]]
    assert sorted(first) == sorted(o.label for o in ops)                 # each opening once per pass
    assert schedule(ops, 5, 7)[-1].rounds == ((5, 0),)                   # an odd last game


def test_seed_on_the_command_line(tmp_path):
    def openings(seed, name):
        rc, pgn, out, err = run(["--engine", legal_spec("A"), "--engine", legal_spec("B"), "--depth", "1",
                                 "--games", "6", "--seed", str(seed)], tmp_path, name)
        assert rc == 0, err
        return [g["FEN"] for g in tags_of(pgn)]        # the default: the chess opening suite
    x, y, z = openings(3, "a.pgn"), openings(3, "b.pgn"), openings(4, "c.pgn")
    assert x == y and x[0::2] == x[1::2] and x != z


# ------------------------------------------------------------------ adjudication
def test_adjudicator_counts():
    from bench.adjudication import Adjudication, Adjudicator
    adj = Adjudicator(Adjudication(resign_movecount=2, resign_score=500))
    assert adj.add(1, ("cp", -600), 5, 10) is None
    assert adj.add(0, ("cp", 0), 5, 11) is None
    assert adj.add(1, ("cp", -600), 5, 12) == 0                    # Black resigns: White wins
    adj = Adjudicator(Adjudication(resign_movecount=2, resign_score=500))
    adj.add(1, ("cp", -600), 5, 10)
    adj.add(1, None, None, 12)                                      # no score: the count restarts
    assert adj.add(1, ("mate", -3), 5, 14) is None
    assert adj.add(1, ("cp", -500), 5, 16) == 0
    adj = Adjudicator(Adjudication(draw_movenumber=10, draw_movecount=1, draw_score=5))
    assert adj.add(0, ("cp", 3), 5, 15) is None and adj.add(1, ("cp", -5), 5, 16) is None   # move 8 < 10
    assert adj.add(0, ("cp", 0), 5, 20) == "draw"


def test_draw_adjudication(tmp_path):
    rc, pgn, out, err = run(["--engine", legal_spec("A", 0), "--engine", legal_spec("B", 0), "--depth", "1",
                             "--games", "2", "--draw", "movenumber=5", "movecount=2", "score=10"], tmp_path)
    assert rc == 0, err
    for g in tags_of(pgn):
        assert (g["Result"], g["Termination"], g["PlyCount"]) == ("1/2-1/2", "adjudication", "10"), g
    assert pgn.count("Draw by adjudication") == 2


def test_resign_adjudication_and_twosided(tmp_path, builtin_lines):
    rc, pgn, out, err = run(["--engine", legal_spec("A", 0), "--engine", legal_spec("B", -600), "--depth", "1",
                             "--games", "2", "--resign", "movecount=3", "score=500"], tmp_path)
    assert rc == 0, err
    g = tags_of(pgn)
    assert [(x["Result"], x["Termination"], x["PlyCount"]) for x in g] == \
        [("1-0", "adjudication", "10"), ("0-1", "adjudication", "9")]
    assert "White wins by adjudication" in pgn and "Black wins by adjudication" in pgn
    assert "Score of A vs B: 2 - 0 - 0" in out
    # two-sided: the winner's own score must agree (A says 0 here, so no adjudication)
    rc, pgn, out, err = run(["--engine", legal_spec("A", 0), "--engine", legal_spec("B", -600), "--depth", "1",
                             "--games", "1", "--resign", "movecount=3", "score=500", "twosided=true"],
                            tmp_path, "two.pgn")
    assert rc == 0, err
    assert tags_of(pgn)[0]["Termination"] != "adjudication"
    rc, pgn, out, err = run(["--engine", legal_spec("A", 700), "--engine", legal_spec("B", -600), "--depth", "1",
                             "--games", "1", "--resign", "movecount=3", "score=500", "twosided=true"],
                            tmp_path, "two2.pgn")
    assert (tags_of(pgn)[0]["Result"], tags_of(pgn)[0]["Termination"]) == ("1-0", "adjudication")


def test_adjudication_off_by_default_and_bad_arguments(tmp_path):
    rc, pgn, out, err = run(["--engine", legal_spec("A", 0), "--engine", legal_spec("B", -600), "--depth", "1",
                             "--games", "1"], tmp_path)
    assert rc == 0 and tags_of(pgn)[0]["Termination"] != "adjudication"
    for argv in (["--draw", "movenumber=x"], ["--draw", "movenumber=5", "score=3"], ["--resign", "score=5"],
                 ["--resign", "movecount=3", "score=500", "twosided=maybe"], ["--resign", "bogus=1"],
                 ["--nodes", "0"]):
        rc, pgn, out, err = run(argv, tmp_path, "bad.pgn")
        assert rc == 2, argv
        assert err.startswith("error:"), (argv, err)
        assert "Traceback" not in err


def test_own_node_limit_plays_without_the_default_clock():
    """With no match limit, an engine with its own nodes= (or depth=) and no tc=/st= gets no clock:
    told `go nodes` a UCI engine ignores the clock, so the default 5+0.05 would flag it. An explicit
    --tc, or the engine's own tc=, still gives it a clock; the other engine keeps the default."""
    def tcs(*argv):
        return M._engine_tcs(M.config_from_args(list(argv)))
    a, b = tcs("--engine", "cmd=x nodes=40000", "--engine", "cmd=y")
    assert (a.base, a.nodes) == (None, 40000) and a.pgn() == "inf"
    assert (b.base, b.inc, b.nodes) == (5.0, 0.05, None)
    a, _ = tcs("--engine", "cmd=x depth=6", "--engine", "cmd=y")
    assert (a.base, a.depth) == (None, 6)
    a, _ = tcs("--engine", "cmd=x nodes=40000", "--engine", "cmd=y", "--tc", "10+0.1")
    assert (a.base, a.inc, a.nodes) == (10.0, 0.1, 40000)
    a, _ = tcs("--engine", "cmd=x nodes=40000 tc=3+0.03", "--engine", "cmd=y")
    assert (a.base, a.inc, a.nodes) == (3.0, 0.03, 40000)


def test_a_device_pgn_gets_no_journal_or_lock_beside_it(tmp_path):
    """``--pgn /dev/null`` (a device, not a file) plays: the PGN is flushed but not fsynced
    (devices refuse fsync), no default journal or lock file is made in /dev, and two runs may
    share it."""
    if not os.path.exists("/dev/null"):
        pytest.skip("no /dev/null")
    before = set(os.listdir("/dev"))
    rc, out, err = _main(_two_legal() + ["--pgn", "/dev/null"])
    assert rc == 0, err
    assert "Score of A vs B" in out and "no results journal" in err and "Traceback" not in err
    assert set(os.listdir("/dev")) - before == set()
    from bench import journal as J
    held = J.lock_outputs(["/dev/null", str(tmp_path / "x.pgn")])
    try:
        assert len(held) == 1 and J.lock_outputs(["/dev/null"]) == []     # the device is never locked
    finally:
        J.release_all(held)


def test_a_bad_sprt_value_names_the_option():
    rc, out, err = _main(_two_legal() + ["--sprt", "elo0=x", "elo1=5"])
    assert rc == 2 and err.strip().splitlines() == \
        ["error: --sprt: bad value in 'elo0=x elo1=5': could not convert string to float: 'x'"], err
