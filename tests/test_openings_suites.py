"""The match opening suites bench/suites/openings-<variant>.epd, their generator
(bench/suites/openings.py) and their use as ``cardinal match``'s default openings."""
import io
import os
import sys

import pytest

from bench import engines as E
from bench import epd as EPD
from bench import journal
from bench import match as M
from bench import openings as O
from bench.suites import openings as G

REQUIRED = ("chess", "grand", "knightrelay")
SHIPPED = [v for v in ("chess", "grand", "knightrelay", "capablanca") if O.suite_path(v)]
FSF = E.find_fairy_stockfish()


def _need_fsf():
    if FSF is None:
        if os.environ.get("CI") == "true":
            pytest.fail("fairy-stockfish is not installed (CI must apt-get install it)")
        pytest.skip("fairy-stockfish not installed (apt-get install fairy-stockfish; looked on PATH and in /usr/games)")
    return FSF


def _run(module_main, argv):
    out, err = io.StringIO(), io.StringIO()
    old = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        try:
            rc = module_main(argv)
        except SystemExit as e:
            rc = e.code
    finally:
        sys.stdout, sys.stderr = old
    return rc, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("variant", REQUIRED)
def test_required_suites_are_shipped(variant):
    p = O.suite_path(variant)
    assert p is not None and os.path.basename(p) == f"openings-{variant}.epd"


@pytest.mark.parametrize("variant", SHIPPED)
def test_suite_positions_are_distinct_legal_balanced_and_replayable(variant):
    from engine.rules.position import Position
    path = O.suite_path(variant)
    entries = EPD.load_suite(path)
    assert len(entries) >= 500
    keys, ids = set(), set()
    for e in entries:
        pos = Position.from_fen(e.fen, variant)
        assert not pos.warnings, e.id
        assert pos.status() == "ongoing" and not pos.is_check() and pos.legal_moves(), e.id
        key = " ".join(pos.fen().split()[:4])
        assert key == " ".join(e.fen.split()[:4]), e.id            # the FEN reads back as written
        keys.add(key)
        ids.add(e.id)
        assert abs(int(e.ops["ce"][0])) <= G.MAX_CP, e.id
        assert e.ops["c0"][0].startswith(f"{variant} random "), e.id
        line = e.ops["c1"][0].split()                             # the line that made it, from the start
        assert G.MIN_PLIES <= len(line) <= G.MAX_PLIES, e.id
        start = Position.from_fen(None, variant)
        for u in line:
            start.push_uci(u)                                     # raises if illegal
        assert " ".join(start.fen().split()[:4]) == key, e.id
    assert len(keys) == len(entries) and len(ids) == len(entries)
    opened = O.load_openings(path, variant)                      # what cardinal match reads
    assert len(opened) == len(entries) and opened[0].label == entries[0].id


def test_default_openings_are_the_suite_else_the_builtin_lines(monkeypatch, tmp_path):
    grand = O.default_openings("grand")
    assert len(grand) >= 500 and all(op.fen and not op.moves for op in grand)
    assert len({op.fen for op in grand}) == len(grand)
    assert "openings-<variant>.epd" in O.default_openings_help()
    assert O.default_openings_help() in M._parser()._option_string_actions["--openings"].help
    monkeypatch.setattr(O, "SUITES_DIR", str(tmp_path))           # a variant without a suite
    assert O.suite_path("grand") is None
    assert O.default_openings("grand") == O.builtin_openings("grand")


def test_match_plays_the_grand_suite_by_default(tmp_path):
    """Two quick games (adjudicated drawn at once): the journal counts the suite's
    positions and the pair's opening is one of them, not one of the built-in lines."""
    fsf = _need_fsf()
    pgn = tmp_path / "g.pgn"
    spec = f"cmd={fsf} proto=uci name=FSF"
    rc, out, err = _run(M.main, ["--variant", "grand", "--engine", spec, "--engine", spec.replace("FSF", "FSF2"),
                                 "--depth", "1", "--games", "2", "--seed", "3",
                                 "--draw", "movenumber=1", "movecount=1", "score=100000",
                                 "--pgn", str(pgn), "--no-progress"])
    assert rc == 0, err
    header, done, _ = journal.read(str(tmp_path / "g.jsonl"))
    pair = done[0]
    suite = O.load_openings(O.suite_path("grand"), "grand")
    assert header["openings"] == len(suite) >= 500
    assert pair["opening"]["label"] in {op.label for op in suite}
    assert pair["opening"]["fen"] in {op.fen for op in suite}
    assert '[FEN "' + pair["opening"]["fen"] + '"]' in pgn.read_text()


def test_openings_option_still_overrides(tmp_path):
    f = tmp_path / "two.epd"
    f.write_text("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -\n"
                 'rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - id "open game";\n')
    cfg = M.config_from_args(["--variant", "chess", "--openings", str(f)])
    assert [op.label for op in cfg.openings] == [f"{f}:1", "open game"]
    assert M.config_from_args(["--variant", "chess"]).openings is None      # None: the default suite


def test_generator_tiny_chess_suite(tmp_path):
    _need_fsf()
    out = tmp_path / "o.epd"
    rc, _, err = _run(G.main, ["--variant", "chess", "--count", "3", "--seed", "5", "--depth", "4",
                               "--max-cp", "200", "--out", str(out)])
    assert rc == 0, err
    text = out.read_text()
    assert "# Made by: python -m bench.suites.openings --variant chess --count 3" in text
    entries = EPD.load_suite(str(out))
    assert len(entries) == 3 and len({e.fen for e in entries}) == 3
    for e in entries:
        assert e.ops["acd"] == ["4"] and abs(int(e.ops["ce"][0])) <= 200
        assert e.ops["c0"][0].startswith("chess random ") and " fsf d4 " in e.ops["c0"][0]
    assert len(O.load_openings(str(out), "chess")) == 3
    again = tmp_path / "again.epd"
    assert _run(G.main, ["--variant", "chess", "--count", "3", "--seed", "5", "--depth", "4",
                         "--max-cp", "200", "--out", str(again)])[0] == 0
    body = [x for x in text.splitlines() if not x.startswith("#")]
    assert body == [x for x in again.read_text().splitlines() if not x.startswith("#")]   # reproducible


def test_generator_knightrelay_uses_cardinal(tmp_path):
    out = tmp_path / "kr.epd"
    rc, _, err = _run(G.main, ["--variant", "knightrelay", "--count", "2", "--depth", "2",
                               "--max-cp", "300", "--out", str(out)])
    assert rc == 0, err
    entries = EPD.load_suite(str(out))
    assert len(entries) == 2 and all(" cardinal d2 " in e.ops["c0"][0] for e in entries)
    assert "Cardinal" in out.read_text().splitlines()[0]


def test_loses_material_filter():
    from engine.rules.position import Position
    fen = "rnbqkb1r/pppp1ppp/5n2/4p3/4P3/2N5/PPPP1PPP/R1BQKBNR w KQkq - 0 3"     # 1.e4 Nf6 2.Nc3 e5
    pos = Position.from_fen(fen, "chess")
    for bad in ("d1h5", "d1g4", "f1a6", "c3d5"):      # the queen to the knight, the bishop to a pawn, e4 left
        assert G.loses_material(pos, pos.parse_uci(bad)), bad
    for fine in ("g1f3", "d2d4", "f1d3", "f1c4"):     # d4: an exchange that comes out even
        assert not G.loses_material(pos, pos.parse_uci(fine)), fine
    assert pos.fen() == fen                            # the position is restored


@pytest.mark.parametrize("argv, what", [
    (["--variant", "nosuch"], "invalid choice"),
    (["--variant", "chess", "--count", "0"], "--count must be at least 1"),
    (["--variant", "chess", "--depth", "0"], "--depth must be at least 1"),
    (["--variant", "chess", "--fsf", "/nonexistent/fsf"], "Fairy-Stockfish not found"),
    (["--variant", "chess", "--out", "/nonexistent/dir/o.epd"], "no such directory"),
    (["--variant", "chess", "--out", "/proc/o.epd"], "cannot create a file in /proc"),
    (["--variant", "chess", "--count", "x"], "invalid int value"),
])
def test_generator_bad_input_is_one_line_status_2(argv, what):
    rc, out, err = _run(G.main, argv)
    assert rc == 2 and what in err and err.count("\n") == 1 and err.startswith("error: "), err
    assert "Traceback" not in err and out == ""


def test_generator_write_that_fails_names_the_file():
    """/dev/full takes the suite and refuses its bytes (a full disk): one line naming it."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    rc, _, err = _run(G.main, ["--variant", "knightrelay", "--count", "2", "--depth", "2",
                               "--max-cp", "300", "--out", "/dev/full"])
    assert rc == 2 and err.strip().splitlines()[-1] == "error: /dev/full: No space left on device", err
    assert "Traceback" not in err
