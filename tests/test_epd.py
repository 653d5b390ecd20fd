"""``cardinal bench epd`` and the shipped suites in bench/suites/."""
import json
import os
import sys

import pytest

from bench import epd as E

SUITES = {v: os.path.join(E.SUITES_DIR, v + ".epd") for v in E.SUITES}


def test_parse_epd_line_ops_and_counters():
    e = E.parse_epd_line('2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - bm Qg6 Qh4; am Qe1; '
                         'id "WAC 001; quoted";', 3)
    assert e.fen.endswith(" w - - 0 1")
    assert e.ops["bm"] == ["Qg6", "Qh4"] and e.ops["am"] == ["Qe1"] and e.id == "WAC 001; quoted"
    e = E.parse_epd_line("8/8/8/8/8/8/8/K1k5 w - - 12 40 bm Kb1;", 1)
    assert e.fen == "8/8/8/8/8/8/8/K1k5 w - - 12 40"
    e = E.parse_epd_line("8/8/8/8/8/8/8/K1k5 b - - hmvc 7; fmvn 30;", 1)
    assert e.fen.endswith(" b - - 7 30") and e.id == "line 1"
    assert E.parse_epd_line("   # comment", 1) is None
    with pytest.raises(ValueError):
        E.parse_epd_line("8/8/8 w", 1)
    with pytest.raises(ValueError):
        E.parse_epd_line('8/8/8/8/8/8/8/K1k5 w - - id "open', 1)


@pytest.mark.parametrize("variant", E.SUITES)
def test_shipped_suites_are_legal_positions_with_legal_ops(variant):
    from engine.rules.position import Position
    entries = E.load_suite(SUITES[variant])
    assert len(entries) >= 8
    ids = set()
    for e in entries:
        pos = Position.from_fen(e.fen, variant)
        assert pos.status() == "ongoing" and not pos.warnings, e.id
        assert e.ops.get("bm") or e.ops.get("am"), e.id
        E.resolve(pos, e.ops.get("bm", []) + e.ops.get("am", []))     # raises if a move is unknown/illegal
        assert e.id not in ids
        ids.add(e.id)


def test_knightrelay_mates_are_mates_and_complete():
    from engine.rules.position import Position
    from bench.suites.generate import mates_in_one, mates_in_two
    kinds = set()
    for e in E.load_suite(SUITES["knightrelay"]):
        kind = " ".join(e.ops.get("c0", []))
        pos = Position.from_fen(e.fen, "knightrelay")
        want = set(E.resolve(pos, e.ops["bm"]))
        if kind == "mate in 1":
            assert set(mates_in_one(pos)) == want, e.id
        elif kind == "mate in 2":
            assert not mates_in_one(pos) and set(mates_in_two(pos)) == want, e.id
        kinds.add(kind)
    assert kinds == {"mate in 1", "mate in 2"}


@pytest.mark.timing       # the solve rate at 200 ms a position depends on the CPU time the search gets
def test_bench_epd_cli_with_cardinal(tmp_path, capsys):
    out = tmp_path / "r.json"
    rc = E.main(["knightrelay", "--movetime", "200", "--no-progress", "--json", str(out)])
    assert rc == 0
    table = capsys.readouterr().out
    assert "solved" in table and "KR.001" in table
    data = json.loads(out.read_text())
    assert data["variant"] == "knightrelay" and data["total"] == len(data["positions"]) >= 8
    assert data["solved"] >= data["total"] - 2     # mates in 1: the search must find nearly all


def test_bench_epd_bad_input(tmp_path, capsys):
    assert E.main([str(tmp_path / "nope.epd")]) == 2
    bad = tmp_path / "bad.epd"
    bad.write_text("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - bm Ke4;\n")
    assert E.main([str(bad), "--movetime", "50", "--no-progress"]) == 2
    assert "Ke4" in capsys.readouterr().err


@pytest.mark.parametrize("where", ["missing directory", "a directory", "/proc"])
def test_bench_epd_bad_json_path_fails_before_the_run(tmp_path, capsys, where):
    path = {"missing directory": tmp_path / "no" / "r.json", "a directory": tmp_path,
            "/proc": "/proc/r.json"}[where]           # /proc: writable by its bits (as root), yet no new file
    rc = E.main(["knightrelay", "--movetime", "50", "--no-progress", "--json", str(path)])
    assert rc == 2
    c = capsys.readouterr()
    assert c.out == ""                       # nothing was searched
    err = c.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --json") and str(path) in err[0], c.err
    assert not (tmp_path / "no").exists()


def test_bench_epd_json_write_that_fails_at_the_end_is_one_line(tmp_path, capsys):
    """/dev/full takes the file and refuses the bytes (a full disk): the table is printed and
    the one error line names the path given."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    suite = tmp_path / "one.epd"
    suite.write_text('6k1/5ppp/8/8/8/8/8/R5K1 w - - bm Ra8#; id "m1";\n')
    rc = E.main([str(suite), "--variant", "chess", "--movetime", "50", "--no-progress", "--json", "/dev/full"])
    c = capsys.readouterr()
    assert rc == 1 and "m1" in c.out and "solved" in c.out
    assert c.err.strip().splitlines() == ["error: /dev/full: No space left on device"], c.err


def test_bench_epd_engine_that_dies_is_a_one_line_error(capsys):
    fake = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_engine.py")
    rc = E.main(["chess", "--movetime", "50", "--no-progress",
                 "--engine", f"cmd='{sys.executable} {fake} crash' name=Crashy"])
    assert rc == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and "Crashy" in err[0], err


def test_loss_miner_keeps_the_position_before_a_collapse_with_the_opponents_reply(tmp_path):
    """bench/suites/mine_losses.py: Cardinal (White here) scores +0.50, +0.40, then -3.00: one
    collapse, kept once, as the position after its +0.50 move with Black's reply there as bm;
    a game without a drop gives nothing; bad input is one line and status 2."""
    import subprocess
    import sys
    sys.path.insert(0, E.SUITES_DIR)
    try:
        import mine_losses as M
    finally:
        sys.path.pop(0)
    moves = ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6", "O-O", "Be7"]
    def game(scores, white="Cardinal"):
        body = []
        for i, m in enumerate(moves):
            if i % 2 == 0:
                body.append(f"{i // 2 + 1}.")
            c = scores.get(i, "+0.10/9 0.1s")
            body.append(f"{m} {{{c}}}")
        return (f'[Event "x"]\n[White "{white}"]\n[Black "FSF"]\n[Result "0-1"]\n\n'
                + " ".join(body) + " 0-1\n\n")
    pgn = tmp_path / "ladder.pgn"
    pgn.write_text(game({0: "+0.50/9 0.1s", 2: "+0.40/9 0.1s", 4: "-3.00/9 0.1s"})
                   + game({}) + game({0: "+0.50/9 0.1s", 2: "-3.00/9 0.1s"}, white="Other"))
    lines, counts = M.mine("chess", "Cardinal", [str(pgn)])
    assert counts == {"games": 2, "positions": 1, "skipped": 0}
    assert lines == ['rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - bm e5; '
                     'id "ladder.pgn game 1 ply 2"; c0 "50 -> -300";']
    (e,) = E.load_suite(str(_write(tmp_path / "s.epd", lines)))      # cardinal bench epd reads it
    from engine.rules.position import Position
    assert E.resolve(Position.from_fen(e.fen, "chess"), e.ops["bm"])
    r = subprocess.run([sys.executable, os.path.join(E.SUITES_DIR, "mine_losses.py"), "--variant",
                        "chess", "--engine", "Nobody", "--pgn", str(pgn)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "no chess game of 'Nobody'" in r.stderr and "Traceback" not in r.stderr


def _write(path, lines):
    path.write_text("".join(line + "\n" for line in lines))
    return path
