"""UCI transcripts against the real ``cardinal`` process (``python -m engine``) over pipes.

Transcripts follow the UCI specification and what Cute Chess and
Fairy-Stockfish send. Every wait has a timeout (tests/engine_proc.py), so a
hung engine fails instead of hanging the run. Searches are short (small
movetime/depth/clock) to keep the module fast.
"""
from __future__ import annotations

import re
import subprocess
import sys
import time

import pytest

from engine import __version__
import variants
from tests.engine_proc import EngineProcess, ROOT, ensure_warm_cache

READY_TIMEOUT = 180.0   # first readyok may compile numba on an empty cache
INFO_RE = re.compile(r"info depth (\d+) seldepth (\d+) multipv (\d+) score (cp -?\d+|mate -?\d+)"
                     r"( lowerbound| upperbound)? nodes (\d+) nps (\d+) time (\d+) hashfull (\d+)( pv( \S+)+)?")
MOVE_RE = r"[a-j](?:10|[1-9])[a-j](?:10|[1-9])[qrbnca]?"

GRAND_END = "4k5/10/6P3/10/10/10/10/10/1p2K5/10 b - - 0 1"


def start_engine() -> EngineProcess:
    e = EngineProcess()
    e.send("uci")
    e.expect("uciok", 30)
    e.send("isready")
    e.expect("readyok", READY_TIMEOUT)
    return e


@pytest.fixture(scope="module")
def eng():
    e = start_engine()
    yield e
    assert e.close() == 0


def legal(variant: str, fen: str | None, moves: list[str]) -> list[str]:
    from engine.rules.position import Position
    pos = Position.from_fen(fen, variant)
    for m in moves:
        pos.push_uci(m)
    return pos.legal_uci()


def bestmove(lines: list[str]) -> tuple[str, str | None]:
    m = re.fullmatch(r"bestmove (\S+)(?: ponder (\S+))?", lines[-1])
    assert m, lines[-1]
    return m.group(1), m.group(2)


def check_infos(lines: list[str]) -> None:
    infos = [ln for ln in lines if ln.startswith("info") and not ln.startswith("info string")]
    for ln in infos:
        assert INFO_RE.fullmatch(ln), ln


def sync(e: EngineProcess) -> list[str]:
    e.send("isready")
    return e.expect("readyok", 30)


# ---------------------------------------------------------------- start-up
def test_protocol_modules_do_not_import_numba():
    code = ("import sys, engine.cli, engine.protocol.loop, engine.protocol.uci, engine.protocol.xboard, engine.protocol.session; "
            "bad = [m for m in ('numpy', 'numba') if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                       env={"PYTHONPATH": ROOT, "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.timing
def test_handshake_and_quit_status():
    ensure_warm_cache()         # a warm start answers uciok at once (a cold one compiles first)
    e = EngineProcess()
    t0 = time.monotonic()
    lines = e.ask("uci", "uciok", 30)
    t_uciok = time.monotonic() - t0
    assert lines[0] == f"id name Cardinal {__version__}"
    assert lines[1].startswith("id author ")
    opts = set(lines[2:-1])
    assert "option name UCI_Variant type combo default chess var chess var standard var normal var grand var knightrelay var capablanca" in opts
    for name in ("Hash type spin", "Move Overhead type spin", "Clear Hash type button", "Ponder type check",
                 "MultiPV type spin default 1 min 1 max 5"):
        assert any(o.startswith("option name " + name) for o in opts), name
    assert t_uciok < 5.0      # target 0.5 s warm; loose bound for a busy test machine
    e.ask("isready", "readyok", READY_TIMEOUT)
    e.send("quit")
    assert e.proc.wait(10) == 0
    e.close()


def test_eof_exits_zero():
    e = EngineProcess()
    e.ask("uci", "uciok", 30)
    e.proc.stdin.close()
    assert e.proc.wait(30) == 0
    e.close()


def test_isready_before_uci_selects_uci():
    e = EngineProcess()
    e.ask("isready", "readyok", READY_TIMEOUT)
    e.send("go perft 1")
    lines = e.expect(r"Nodes searched: \d+", 30)
    assert lines[-1] == "Nodes searched: 20"
    assert e.close() == 0


# ---------------------------------------------------------------- Cute Chess game sequences
@pytest.mark.parametrize("variant,uci_name", [("grand", "grand"), ("knightrelay", "knightrelay"),
                                              ("chess", "standard")])
@pytest.mark.timing
def test_cutechess_game_sequence(eng, variant, uci_name):
    e = eng
    e.send(f"setoption name UCI_Variant value {uci_name}", "ucinewgame", "setoption name Ponder value false",
           "position startpos")
    sync(e)
    moves: list[str] = []
    clock = [5050, 5050]
    for ply in range(6):
        if moves:
            e.send("position startpos moves " + " ".join(moves))
            sync(e)
        t0 = time.monotonic()
        e.send(f"go wtime {clock[0]} btime {clock[1]} winc 50 binc 50")
        lines = e.expect(r"bestmove .*", 10)
        used = int((time.monotonic() - t0) * 1000)
        check_infos(lines)
        best, ponder = bestmove(lines)
        assert re.fullmatch(MOVE_RE, best)
        assert best in legal(variant, None, moves), (variant, moves, best)
        assert used < clock[ply % 2], used
        clock[ply % 2] += 50 - used
        moves.append(best)
        if ponder:
            assert ponder in legal(variant, None, moves)


def test_grand_position_fen_with_moves_and_promotions(eng):
    e = eng
    e.send("setoption name UCI_Variant value grand", "ucinewgame",
           f"position fen {GRAND_END} moves e10f10 g8g9a f10g9 e2f2 b2b1q", "d")
    lines = e.expect(r"Legal moves: .*", 10)
    assert "Fen: 10/6k3/10/10/10/10/10/10/5K4/1q8 w - - 0 4" in lines
    e.send("go depth 3")
    lines = e.expect(r"bestmove .*", 20)
    check_infos(lines)
    assert bestmove(lines)[0] in legal("grand", GRAND_END, "e10f10 g8g9a f10g9 e2f2 b2b1q".split())
    # optional promotion on rank 9, mandatory on 10 (Cute Chess test "grand endgame1": 15 moves)
    e.send("position fen 10/4k5/6P3/10/10/10/10/10/1p2K5/10 w - - 0 1", "go perft 1")
    lines = e.expect(r"Nodes searched: \d+", 20)
    assert lines[-1] == "Nodes searched: 15"
    assert lines[-2] == ""
    assert {"g8g9: 1", "g8g9c: 1", "g8g9a: 1", "g8g9q: 1", "g8g9r: 1", "g8g9b: 1", "g8g9n: 1"} <= set(lines)
    # mandatory promotion on rank 10, where only the queen mates (a marshal on g10 leaves f9 free)
    e.send("position fen 4k5/6P3/3K6/10/10/10/10/10/10/10 w - - 0 1", "go depth 4")
    assert bestmove(e.expect(r"bestmove .*", 20))[0] == "g9g10q"


def test_knightrelay_position_fen(eng):
    e = eng
    e.send("setoption name UCI_Variant value knightrelay", "ucinewgame",
           "position fen 4k3/8/3R4/1N6/8/8/8/4K3 b - - 0 1 moves e8e7", "go movetime 200")
    best, _ = bestmove(e.expect(r"bestmove .*", 10))
    assert best in legal("knightrelay", "4k3/8/3R4/1N6/8/8/8/4K3 b - - 0 1", ["e8e7"])


def test_knightrelay_cutechess_move_into_relayed_check_is_accepted(eng):
    """Cute Chess 1.5 ignores relayed checks, so its move lists can hold a king move into a
    relayed attack (variants/rules/knightrelay.md, "Reference implementation"): the move is accepted with a
    warning and the answer captures the king, rather than rejecting the whole position."""
    e = eng
    e.send("setoption name UCI_Variant value knightrelay", "ucinewgame",
           "position fen 8/4k3/3R4/1N6/8/8/8/4K3 b - - 0 1 moves e7e8", "go depth 3")
    lines = e.expect(r"bestmove .*", 30)
    assert any(ln.startswith("info string warning:") and "e7e8" in ln for ln in lines), lines
    assert bestmove(lines)[0] == "d6e8"          # the relayed rook jump takes the king
    # a move that is illegal under every reading is still rejected
    e.send("position fen 8/4k3/3R4/1N6/8/8/8/4K3 b - - 0 1 moves e7e5")
    lines = sync(e)
    assert any(ln.startswith("info string error:") for ln in lines), lines


def test_position_with_an_illegal_move_keeps_the_moves_before_it(eng):
    """As Stockfish and Fairy-Stockfish: the FEN is set up and the moves up to the illegal
    one are played; the error line names the refused move; a later go answers for it."""
    e = eng
    e.send("setoption name UCI_Variant value grand", "ucinewgame", "position startpos moves e3e5 e8e6")
    e.send("position startpos moves a3a4 a8a7 a4a5 a7a6 a5a6")
    lines = sync(e)
    err = [ln for ln in lines if ln.startswith("info string error:")]
    assert len(err) == 1 and "move 5 (a5a6)" in err[0], lines
    from engine.rules.position import Position
    pos = Position.from_fen(None, "grand")
    for m in ("a3a4", "a8a7", "a4a5", "a7a6"):
        pos.push_uci(m)
    e.send("d")
    assert f"Fen: {pos.fen()}" in e.expect(r"Legal moves: .*", 10)
    e.send("go depth 1")
    assert bestmove(e.expect(r"bestmove .*", 30))[0] in pos.legal_uci()   # white to move here
    # a bad FEN still keeps the previous position
    e.send("position fen 10/10 w - - 0 1 moves e3e5", "d")
    assert f"Fen: {pos.fen()}" in e.expect(r"Legal moves: .*", 10)


def test_go_depth_out_of_range_is_clamped_with_a_warning(eng):
    """depth 0 searches depth 1 (never forever); a huge depth is clamped to the maximum, with
    a warning each time; a go whose every limit was refused still ends by itself."""
    e = eng
    e.send("setoption name UCI_Variant value grand", "ucinewgame", "position startpos", "go depth 0")
    lines = e.expect(r"bestmove .*", 30)
    assert "info string warning: go: depth 0 out of range 1..98, using 1" in lines, lines
    depths = [int(ln.split()[2]) for ln in lines if ln.startswith("info depth")]
    assert depths == [1], lines
    e.send("go depth 99999999999999999999")
    lines = e.expect(r"info string warning: go: depth \d+ out of range 1\.\.98, using 98", 10)
    e.expect(r"info depth 2 .*", 30)          # it searches on (with the maximum depth)
    lines = e.ask("stop", r"bestmove .*", 10)
    assert bestmove(lines)[0] in legal("grand", None, [])
    e.send("go mate 0")
    lines = e.expect(r"bestmove .*", 30)
    assert "info string warning: go: mate 0 out of range, ignored" in lines, lines
    assert any(ln.startswith("info string warning: go: no valid limit left") for ln in lines), lines
    e.send("go wtime abc")                     # every limit refused: a fixed time, not forever
    lines = e.expect(r"bestmove .*", 30)
    assert any(ln.startswith("info string error: go: ignored wtime abc") for ln in lines), lines
    assert any(ln.startswith("info string warning: go: no valid limit left") for ln in lines), lines
    sync(e)


def test_ucinewgame_clears_the_hash_before_readyok():
    """The hash is cleared by ucinewgame/isready, not inside the next go (where it costs clock)."""
    import io
    from engine.protocol.loop import run
    calls = []
    out = io.StringIO()

    class Recording(FakeSearcher):   # notes each call with the number of readyok lines written so far
        def clear_hash(self):
            calls.append(("clear", out.getvalue().count("readyok")))

        def start(self, pos, limits, on_info, on_done):
            calls.append(("go", out.getvalue().count("readyok")))
            super().start(pos, limits, on_info, on_done)

    inp = io.BytesIO(b"uci\nisready\nucinewgame\nisready\nposition startpos\ngo depth 1\nquit\n")
    assert run(stdin=inp, stdout=out, searcher_factory=lambda hash_mb: Recording(hash_mb)) == 0
    assert calls == [("clear", 1), ("go", 2)], calls   # cleared before the second readyok


def test_game_longer_than_the_undo_stack(eng):
    """2,100 plies of knight shuffles (more than the 2,048-entry undo stack) stay playable."""
    e = eng
    shuffle = ["g1f3", "g8f6", "f3g1", "f6g8"]
    moves = " ".join(shuffle[i % 4] for i in range(2100))
    e.send("setoption name UCI_Variant value chess", "ucinewgame", f"position startpos moves {moves}", "go depth 2")
    best, _ = bestmove(e.expect(r"bestmove .*", 60))
    assert best in legal("chess", None, [])


@pytest.mark.parametrize("variant,fen,depth,expected", [
    ("chess", None, 2, 400),
    ("grand", None, 2, 4225),
    ("knightrelay", None, 2, 784),
    ("knightrelay", "4k3/8/3R4/8/4N3/8/8/4K3 b - - 0 1", 3, 279),
    ("chess", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 2, 2039),
])
def test_go_perft_stockfish_format(eng, variant, fen, depth, expected):
    e = eng
    e.send(f"setoption name UCI_Variant value {variant}",
           "position startpos" if fen is None else f"position fen {fen}", f"go perft {depth}")
    lines = e.expect(r"Nodes searched: \d+", 60)
    assert lines[-1] == f"Nodes searched: {expected}"
    assert lines[-2] == ""
    per_move = lines[:-2]
    assert all(re.fullmatch(MOVE_RE + r": \d+", ln) for ln in per_move), per_move
    assert sum(int(ln.split(": ")[1]) for ln in per_move) == expected
    assert sorted(ln.split(":")[0] for ln in per_move) == sorted(legal(variant, fen, []))


# ---------------------------------------------------------------- go forms, stop, ponder, isready
@pytest.mark.parametrize("go", ["go depth 2", "go nodes 3000", "go movetime 150", "go mate 1",
                                "go wtime 2000 btime 2000 movestogo 20", "go wtime 300 btime 300 winc 10 binc 10"])
def test_go_forms(eng, go):
    e = eng
    e.send("setoption name UCI_Variant value chess", "ucinewgame",
           "position fen 6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", go)
    lines = e.expect(r"bestmove .*", 15)
    check_infos(lines)
    best = bestmove(lines)[0]
    assert best in legal("chess", "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", [])
    if go in ("go mate 1", "go depth 2"):
        assert best == "a1a8"
        assert any(" score mate 1 " in ln for ln in lines)


@pytest.mark.timing
@pytest.mark.parametrize("moves,clock", [("", "wtime 1000 btime 100000"), ("e2e4", "wtime 100000 btime 1000")])
def test_clock_of_the_side_to_move_is_used(eng, moves, clock):
    e = eng
    e.send("setoption name UCI_Variant value chess", "ucinewgame",
           f"position startpos{' moves ' + moves if moves else ''}")
    sync(e)
    t0 = time.monotonic()
    e.send(f"go {clock}")
    e.expect(r"bestmove .*", 10)
    assert time.monotonic() - t0 < 2.5     # 1 s left: at most ~0.3 s; the other side's 100 s would allow ~3.3 s


@pytest.mark.timing
def test_infinite_stop_and_isready_during_search(eng):
    e = eng
    e.send("setoption name UCI_Variant value grand", "position startpos", "go infinite")
    time.sleep(0.3)
    t0 = time.monotonic()
    lines = e.ask("isready", "readyok", 5)
    assert time.monotonic() - t0 < 2.5
    assert not any(ln.startswith("bestmove") for ln in lines)
    t0 = time.monotonic()
    lines = e.ask("stop", r"bestmove .*", 5)
    assert time.monotonic() - t0 < 2.5
    assert bestmove(lines)[0] in legal("grand", None, [])
    sync(e)


@pytest.mark.timing
def test_ponder_hit_and_miss(eng):
    e = eng
    e.send("setoption name UCI_Variant value chess", "setoption name Ponder value true", "ucinewgame",
           "position startpos moves e2e4 e7e5", "go ponder wtime 1000 btime 1000")
    time.sleep(0.4)
    assert not any(ln.startswith("bestmove") for ln in e.drain(0.1))   # pondering does not end by itself
    t0 = time.monotonic()
    lines = e.ask("ponderhit", r"bestmove .*", 5)
    assert time.monotonic() - t0 < 3.0            # at most a third of the 1 s clock after ponderhit
    assert bestmove(lines)[0] in legal("chess", None, ["e2e4", "e7e5"])
    e.send("position startpos moves e2e4 e7e5 g1f3", "go ponder wtime 1000 btime 1000")
    time.sleep(0.2)
    lines = e.ask("stop", r"bestmove .*", 5)       # ponder miss: a bestmove, then a new go
    assert bestmove(lines)[0] in legal("chess", None, ["e2e4", "e7e5", "g1f3"])
    e.send("position startpos moves e2e4 e7e5 d2d4", "go movetime 100")
    assert bestmove(e.expect(r"bestmove .*", 5))[0] in legal("chess", None, ["e2e4", "e7e5", "d2d4"])
    e.send("setoption name Ponder value false")
    sync(e)


def test_go_while_searching_restarts(eng):
    e = eng
    e.send("setoption name UCI_Variant value chess", "position startpos", "go infinite")
    time.sleep(0.1)
    e.send("position startpos moves e2e4", "go depth 2")
    lines = e.expect(r"bestmove .*", 5)     # bestmove of the first search
    lines = e.expect(r"bestmove .*", 10)    # then the second
    assert bestmove(lines)[0] in legal("chess", None, ["e2e4"])


def test_multipv(eng):
    e = eng
    e.send("setoption name UCI_Variant value chess", "setoption name MultiPV value 3", "position startpos",
           "go depth 3")
    lines = e.expect(r"bestmove .*", 15)
    check_infos(lines)
    depth3 = [ln for ln in lines if ln.startswith("info depth 3 ")]
    assert {re.search(r"multipv (\d)", ln).group(1) for ln in depth3} == {"1", "2", "3"}
    e.send("setoption name MultiPV value 1")
    sync(e)


# ---------------------------------------------------------------- game ends and odd positions
@pytest.mark.parametrize("variant,fen,why", [
    ("chess", "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3", "checkmate"),
    ("chess", "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", "stalemate"),
    ("grand", "k9/2Q7/1K8/10/10/10/10/10/10/10 b - - 0 1", "stalemate"),
])
def test_no_legal_move(eng, variant, fen, why):
    e = eng
    e.send(f"setoption name UCI_Variant value {variant}", f"position fen {fen}", "go movetime 100")
    lines = e.expect(r"bestmove .*", 10)
    assert lines[-1] == "bestmove (none)"
    assert f"info string no legal move: {why}" in lines


def test_side_not_to_move_in_check_gives_king_capture(eng):
    e = eng
    e.send("setoption name UCI_Variant value chess", "position fen 4k3/8/8/8/8/8/4R3/4K3 w - - 0 1")
    lines = e.expect(r"info string warning: .*", 5)
    assert "in check" in lines[-1]
    e.send("go movetime 200")
    assert bestmove(e.expect(r"bestmove .*", 10))[0] == "e2e8"


# ---------------------------------------------------------------- errors keep the state
def test_errors_keep_last_good_state(eng):
    e = eng
    e.send("setoption name UCI_Variant value grand", "position startpos moves e3e5")
    good = "Fen: r8r/1nbqkcabn1/pppppppppp/10/10/4P5/10/PPPP1PPPPP/1NBQKCABN1/R8R b - - 0 1"
    e.send("d")
    assert good in e.expect(r"Legal moves: .*", 10)
    bad = [
        ("position startpos moves e3e5 e3e5", r"info string error: move 2 \(e3e5\).*"),
        ("position fen 10/10 w - - 0 1", r"info string error: bad FEN \(grand\): board field.*"),
        ("position fen r8r/1nbqkcabn1/pppppppppp/10/10/10/10/PPPPPPPPPP/1NBQKCABN1/R8R x - - 0 1",
         r"info string error: bad FEN.*side-to-move.*"),
        ("position fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", r"info string error: bad FEN.*"),
        ("position", r"info string error: position: .*"),
        ("position moves e3e5", r"info string error: position: .*"),
        ("position startpos moves e3e5 zz99", r"info string error: move 2 \(zz99\).*"),
        ("setoption name UCI_Variant value Grand",
         r"info string error: unsupported variant Grand \(known: " + re.escape(", ".join(variants.all_names())) + r"\)"),
        ("setoption name UCI_Variant value grnd", r"info string error: unsupported variant grnd \(known: .*grand.*\)"),
        ("setoption name Hash value 0", r"info string error: setoption Hash: value 0 out of range.*"),
        ("setoption name Hash value lots", r"info string error: setoption Hash: .*not an integer"),
        ("setoption name MultiPV value 6", r"info string error: setoption MultiPV: .*out of range.*"),
        ("setoption name Move Overhead value -5", r"info string error: .*out of range.*"),
        ("setoption name Ponder value maybe", r"info string error: setoption Ponder.*"),
        ("setoption name NoSuchOption value 1", r"info string error: unknown option 'NoSuchOption'"),
        ("setoption value 3", r"info string error: setoption: expected.*"),
        ("go perft 0", r"info string error: go perft: .*"),
        ("go perft x", r"info string error: go perft: .*"),
        ("xyzzy plugh", r"info string error: unknown command 'xyzzy'"),
    ]
    for cmd, pattern in bad:
        e.send(cmd)
        e.expect(pattern, 10)
    e.send("d")
    assert good in e.expect(r"Legal moves: .*", 10)
    sync(e)
    assert not any("Traceback" in ln for ln in e.lines)


def test_standard_resets_to_chess_and_ucinewgame(eng):
    e = eng
    e.send("setoption name UCI_Variant value grand", "setoption name UCI_Variant value standard",
           "ucinewgame", "position startpos", "d")
    lines = e.expect(r"Legal moves: .*", 10)
    assert "Fen: rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1" in lines
    assert "Variant: chess" in lines
    e.send("eval")
    lines = e.expect(r"info string eval .*", 10)
    assert re.fullmatch(r"info string eval -?\d+ cp for the side to move \(white\); [+-]\d+ cp for white", lines[-1])
    # the term table before it: material 0 at the start, the total row's tapered cp is the eval
    rows = {m[1]: int(m[2]) for m in (re.match(r"info string ([A-Za-z ]+?) +-?\d+ +-?\d+ +(-?\d+)", ln)
                                      for ln in lines[:-1]) if m}
    assert "Material" not in rows and "Tempo" in rows and "Total" in rows
    assert rows["Total"] == int(re.search(r"([+-]\d+) cp for white", lines[-1])[1])
    e.send("setoption name Hash value 8", "setoption name Clear Hash", "setoption name Move Overhead value 50",
           "go depth 2")
    assert bestmove(e.expect(r"bestmove .*", 10))[0] in legal("chess", None, [])
    sync(e)


@pytest.mark.parametrize("empty", ["setoption name UCI_Variant value", "setoption name UCI_Variant value ",
                                   "setoption name UCI_Variant"])
def test_an_empty_uci_variant_is_chess(eng, empty):
    """Cute Chess maps its 'standard' to an empty UCI_Variant value when the engine lists
    'standard': an engine reused after a grand game must switch back to chess."""
    e = eng
    e.send("setoption name UCI_Variant value grand", empty, "ucinewgame", "position startpos", "d")
    lines = e.expect(r"Legal moves: .*", 10)
    assert "Variant: chess" in lines and not any("error" in ln for ln in lines), lines
    sync(e)


# ---------------------------------------------------------------- in-process, injected searcher
class FakeSearcher:
    """The Search API contract in miniature: plays the first legal move, one info line."""

    def __init__(self, hash_mb: int = 16):
        self.multipv, self.move_overhead, self.started = 1, 30, []

    def warm_up(self):
        pass

    def resize_hash(self, mb):
        pass

    def clear_hash(self):
        pass

    def start(self, pos, limits, on_info, on_done):
        self.started.append(limits)
        legal = pos.legal_moves()
        on_info({"depth": 1, "seldepth": 1, "multipv": 1, "score": ("cp", 7), "nodes": 1, "nps": 1, "time": 0,
                 "hashfull": 0, "pv": [pos.uci(m) for m in legal[:1]], "bound": None})
        on_done(legal[0] if legal else None, None)

    def stop(self):
        pass

    def ponderhit(self):
        pass


def test_run_in_process_with_injected_searcher():
    import io
    from engine.protocol.loop import run
    made = []

    def factory(hash_mb):
        made.append(FakeSearcher(hash_mb))
        return made[-1]

    inp = io.BytesIO(b"uci\nsetoption name UCI_Variant value grand\nisready\nposition startpos moves e3e5\n"
                     b"go wtime 1000 btime 2000 movestogo 5\nquit\ngo depth 1\n")
    out = io.StringIO()
    assert run(stdin=inp, stdout=out, searcher_factory=factory) == 0
    lines = out.getvalue().splitlines()
    assert "readyok" in lines
    assert "info depth 1 seldepth 1 multipv 1 score cp 7 nodes 1 nps 1 time 0 hashfull 0 pv a8a7" in lines
    assert lines[-1] == "bestmove a8a7"          # nothing after quit
    lim = made[0].started[0]
    assert (lim.wtime, lim.btime, lim.movestogo, lim.infinite, lim.ponder) == (1000, 2000, 5, False, False)



def _slow_compile(monkeypatch, ping_wait, warm=False):
    """A searcher whose compile (``warm_up``) lasts until ``release`` is set, with the
    session's handshake wait cut to 0 and its ping wait to ``ping_wait`` seconds, on a
    cold numba cache (``warm``: a warm one, which loads instead of compiling).
    Returns ``(release, made, factory)``: ``factory(hash_mb)`` builds one and appends
    it to ``made``."""
    import threading as th
    from engine.protocol import session
    monkeypatch.setattr(session, "HANDSHAKE_WAIT", 0.0)
    monkeypatch.setattr(session, "PING_WAIT", ping_wait)
    monkeypatch.setattr(session._cache, "is_warm", lambda: warm)
    release = th.Event()

    class SlowToCompile(FakeSearcher):
        def warm_up(self):
            release.wait(30)

    made = []

    def factory(hash_mb):
        made.append(SlowToCompile(hash_mb))
        return made[-1]

    return release, made, factory


def _run_until_bestmove(factory, commands: bytes):
    """Run the protocol loop on a pipe fed ``commands``, send ``quit`` only once a ``bestmove``
    is out (or after 30 s); returns ``(exit status list, output lines)``."""
    import io
    import os
    import threading as th
    import time as _time
    from engine.protocol.loop import run
    r, w = os.pipe()
    out = io.StringIO()
    status = []
    with open(r, "rb") as inp:
        loop = th.Thread(target=lambda: status.append(run(stdin=inp, stdout=out, searcher_factory=factory)))
        loop.start()
        os.write(w, commands)
        deadline = _time.monotonic() + 30
        while "bestmove" not in out.getvalue() and _time.monotonic() < deadline:   # no quit before the move
            _time.sleep(0.02)
        os.write(w, b"quit\n")
        os.close(w)
        loop.join(30)
    return status, out.getvalue().splitlines()


@pytest.mark.parametrize("go", [b"go wtime 1000 btime 1000", b"go movetime 1000"])
def test_move_before_the_search_is_compiled(monkeypatch, go):
    """A cold start on a machine too busy to finish the compile within the ping window:
    readyok comes once the rules core is loaded, and a move needed before the search is
    compiled is a quick one-ply choice (here the mate in one), announced on an error
    line; once the search is ready it is used. (``movetime`` has no soft limit: the wait
    is a share of its hard one.)"""
    release, made, factory = _slow_compile(monkeypatch, ping_wait=0.2)
    status, lines = _run_until_bestmove(factory, b"uci\nisready\nsetoption name UCI_Variant value chess\n"
                                        b"position fen 6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1\n" + go + b"\n")
    assert status == [0]
    assert "uciok" in lines and "readyok" in lines
    assert "info string error: search still compiling (first start): playing a quick move" in lines
    assert lines[-1] == "bestmove a1a8"
    assert made and not made[0].started          # the search was not used
    release.set()


def test_stop_during_the_compile_is_a_quick_move_without_an_error(monkeypatch):
    """``go infinite`` then ``stop`` before the search is compiled: the quick move comes at
    once, and no error line, since the GUI asked for a move now."""
    import io
    from engine.protocol.loop import run
    release, made, factory = _slow_compile(monkeypatch, ping_wait=0.2)
    inp = io.BytesIO(b"uci\nisready\nsetoption name UCI_Variant value chess\n"
                     b"position fen 6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1\ngo infinite\nstop\nquit\n")
    out = io.StringIO()
    assert run(stdin=inp, stdout=out, searcher_factory=factory) == 0
    lines = out.getvalue().splitlines()
    assert lines[-1] == "bestmove a1a8"
    assert not any("error" in ln for ln in lines), lines
    assert made and not made[0].started
    release.set()


def test_go_right_after_uci_waits_for_a_warm_cache_load(monkeypatch):
    """A warm cache loads in about a second: a ``go movetime 300`` sent right after ``uci``
    (no ``isready``) waits for the load, however much longer than the move time it takes,
    and then searches with at least half its move time; no quick move, no error."""
    import threading as th
    release, made, make = _slow_compile(monkeypatch, ping_wait=10.0, warm=True)

    def factory(hash_mb):
        th.Timer(0.5, release.set).start()      # the load ends half a second later
        return make(hash_mb)

    status, lines = _run_until_bestmove(factory, b"uci\nposition startpos\ngo movetime 300\n")
    assert status == [0]
    assert not any("error" in ln for ln in lines), lines
    assert len(made[0].started) == 1
    assert made[0].started[0].movetime >= 150
    assert lines[-1].startswith("bestmove ")


def test_a_warm_cache_load_that_never_ends_still_gives_a_move(monkeypatch):
    """The wait for a warm load is bounded (by the ping wait): past it, a quick move."""
    release, made, factory = _slow_compile(monkeypatch, ping_wait=0.2, warm=True)
    status, lines = _run_until_bestmove(factory, b"uci\nposition fen 6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1\n"
                                        b"go movetime 300\n")
    assert status == [0]
    assert "info string error: search still loading from the numba cache: playing a quick move" in lines
    assert lines[-1] == "bestmove a1a8"
    assert made and not made[0].started
    release.set()


def test_go_without_isready_on_a_warm_cache_searches():
    """End to end, on a warm cache whose load is slowed down (a busy machine): ``uci`` and at
    once ``position startpos`` and ``go movetime 300``: the move comes from a real search."""
    ensure_warm_cache()
    e = EngineProcess(env={"CARDINAL_SEARCHER": "tests.engine_proc:slow_loading_searcher"})
    try:
        e.send("uci", "position startpos", "go movetime 300")
        lines = e.expect(r"bestmove .*", 60)
    finally:
        code = e.close()
    assert not any("error" in ln or "quick move" in ln for ln in lines), lines
    depths = [int(m.group(1)) for m in map(INFO_RE.fullmatch, lines) if m]
    assert depths and max(depths) > 1, lines
    assert code == 0


def test_search_waits_for_the_compile_when_the_clock_allows(monkeypatch):
    import threading as th
    release, made, make = _slow_compile(monkeypatch, ping_wait=0.1)

    def factory(hash_mb):
        th.Timer(0.5, release.set).start()      # the compile ends half a second later
        return make(hash_mb)

    status, lines = _run_until_bestmove(factory, b"uci\nisready\nposition startpos\ngo wtime 600000 btime 600000\n")
    assert status == [0]
    assert not any("quick move" in ln for ln in lines), lines
    assert len(made[0].started) == 1
    lim = made[0].started[0]
    assert lim.wtime < 600000 and lim.btime == 600000    # the wait is taken off the engine's clock
    assert lines[-1].startswith("bestmove ")


# ---------------------------------------------------------------- NNUE options
def _nnue_files(tmp_path):
    from search import nnue as N
    good = str(tmp_path / "grand.nnue")
    N.write_net(good, N.quantize(N.FloatNet.random("grand", 16, seed=5)), "grand")
    chess = str(tmp_path / "chess.nnue")
    N.write_net(chess, N.quantize(N.FloatNet.random("chess", 16, seed=5)), "chess")
    cut = str(tmp_path / "cut.nnue")
    with open(good, "rb") as fh, open(cut, "wb") as out:
        out.write(fh.read()[:5000])
    return good, chess, cut, str(tmp_path / "missing.nnue")


def test_use_nnue_and_evalfile(eng, tmp_path):
    e = eng
    e.send("uci")
    opts = e.expect("uciok", 30)
    assert "option name Use NNUE type check default false" in opts
    assert "option name EvalFile type string default <default>" in opts
    good, chess, cut, missing = _nnue_files(tmp_path)
    e.send("setoption name UCI_Variant value grand", "ucinewgame", "position startpos",
           "setoption name Use NNUE value true")
    # no shipped grand net: a note, the linear evaluation
    assert sync(e)[:-1] == ["info string no network for grand (" + f"{ROOT}/variants/weights/grand.nnue" +
                            "): the linear evaluation"]
    # each unusable file: one error line at the next isready, the linear evaluation, the engine works on
    for path, why in ((missing, "no such network file"), (cut, r"truncated network file \(5000 bytes.*\)"),
                      (chess, "a network for chess, not grand")):
        e.send(f"setoption name EvalFile value {path}")
        lines = sync(e)
        assert len(lines) == 2 and re.fullmatch(f"info string error: {re.escape(path)}: {why}; using the linear "
                                                 "evaluation", lines[0]), lines
        assert sync(e) == ["readyok"]          # said once, not at every isready
        e.send("go depth 3")
        lines = e.expect(r"bestmove .*", 30)
        assert bestmove(lines)[0] in legal("grand", None, []) and not any("error" in ln for ln in lines)
    e.send("eval")
    lines = e.expect(r"info string eval .*", 10)
    e.send("setoption name EvalFile value " + good)
    assert sync(e)[:-1] == [f"info string NNUE evaluation using {good} (grand, 1600x16 crelu)"]
    e.send("eval")
    lines = e.expect(r"info string NNUE eval .*", 10)
    from engine.rules.position import Position
    from search import nnue as N
    cp = N.evaluate_position(N.read_net(good, "grand"), Position.from_fen(None, "grand"))
    assert lines[-1] == (f"info string NNUE eval {cp} cp for the side to move (white); {cp:+d} cp for white "
                         f"(network {good}, 1600x16 crelu; the search uses it)")
    assert re.fullmatch(r"info string eval -?\d+ cp .*", lines[-2])       # the linear terms before it
    e.send("go depth 4")
    lines = e.expect(r"bestmove .*", 30)
    assert bestmove(lines)[0] in legal("grand", None, [])
    e.send("setoption name Use NNUE value false")
    assert sync(e) == ["readyok"]
    e.send("eval")
    lines = sync(e)
    assert any(ln.startswith("info string eval ") for ln in lines) and not any("NNUE" in ln for ln in lines)
    e.send("setoption name Use NNUE value maybe")
    e.expect(r"info string error: setoption Use NNUE: value must be true or false.*", 10)
    e.send("setoption name EvalFile value <default>", "setoption name UCI_Variant value chess", "ucinewgame")
    assert sync(e) == ["readyok"]


# ---------------------------------------------------------------- incremental `position`
class _Lines:
    def __init__(self):
        self.lines = []

    def send(self, line):
        self.lines.append(line)


def _uci_handler():
    """A UCIHandler in this process (a fake searcher; the rules core loads in the warm-up)."""
    from engine.protocol.session import Backend
    from engine.protocol.uci import UCIHandler
    out = _Lines()
    return UCIHandler(out, None, Backend(out, None, searcher_factory=lambda hash_mb: FakeSearcher(hash_mb))), out


def _pos_state(pos):
    """Everything of a Position a search or a later command can see (the move buffer is scratch)."""
    return (pos.variant.name, pos.fen(), pos.key, pos.ply, pos.board.tobytes(), pos.st.tobytes(),
            pos.hist.tobytes(), pos.stack.tobytes(), tuple(pos.move_stack), tuple(pos.warnings), pos.start_fen)


def _replayed(commands):
    """The position and output lines of the last command in a fresh handler (a full replay)."""
    h, out = _uci_handler()
    for c in commands[:-1]:
        h.handle(c)
    out.lines.clear()
    h.handle(commands[-1])
    return _pos_state(h._position()), out.lines


def _random_game(variant, plies, seed, fen=None):
    import random
    from engine.rules.position import Position
    rng = random.Random(seed)
    pos = Position.from_fen(fen, variant)
    moves = []
    for _ in range(plies):
        lm = pos.legal_moves()
        if not lm or pos.status() != "ongoing":
            break
        mv = rng.choice(lm)
        moves.append(pos.uci(mv))
        pos.push(mv)
    return moves


def _count_pushes(monkeypatch):
    from engine.rules.position import Position
    calls = []
    real = Position.push_gui_move

    def counting(self, text, zero_based=False):
        calls.append(text)
        return real(self, text, zero_based)

    monkeypatch.setattr(Position, "push_gui_move", counting)
    return calls


@pytest.mark.parametrize("variant", ["chess", "grand", "capablanca", "knightrelay"])
def test_position_extending_the_previous_one_plays_only_the_new_moves(monkeypatch, variant):
    """A GUI sends the whole game at every move; a command that repeats the previous one's
    start and moves and adds one or two plays only those, and ends in exactly the position
    (board, state, hash, history, undo stack, warnings) and output of a full replay."""
    moves = _random_game(variant, 90, seed=3)
    h, out = _uci_handler()
    h.handle(f"setoption name UCI_Variant value {variant}")
    calls = _count_pushes(monkeypatch)
    k, step = 0, 1
    while k < len(moves):
        prev, k = k, min(len(moves), k + step)
        step = 3 - step                       # one move, then two, ...
        cmd = "position startpos moves " + " ".join(moves[:k])
        del calls[:]
        out.lines.clear()
        h.handle(cmd)
        assert calls == moves[prev:k], "only the new moves are played"
        if k % 10 in (0, 1) or k == len(moves):
            monkeypatch.undo()
            state, lines = _replayed([f"setoption name UCI_Variant value {variant}", cmd])
            calls = _count_pushes(monkeypatch)
            assert _pos_state(h.pos) == state and out.lines == lines, k


@pytest.mark.parametrize("second", [
    "position startpos moves {m10}",                        # a take-back: shorter
    "position startpos moves {m12a} {other}",               # another move in the middle
    "position startpos",                                    # no moves
    "position fen {fen12} moves {m12b}",                    # the same game from a FEN
    "position fen {fen0} moves {m12}",                      # the start position as a FEN
    "position startpos moves {m12} {m12b}",                 # an extension (for comparison)
    "position  startpos   moves {m12} {m12b}",              # extra spaces: the same words
])
def test_position_not_extending_the_previous_one_replays(second):
    """A command that is not the previous one plus moves (a take-back, another line, another
    start or FEN) gives exactly the full replay's position and output."""
    from engine.rules.position import Position
    moves = _random_game("grand", 20, seed=11)
    p = Position.from_fen(None, "grand")
    for m in moves[:12]:
        p.push_uci(m)
    q = Position.from_fen(None, "grand")
    for m in moves[:11]:
        q.push_uci(m)
    other = [u for u in q.legal_uci() if u != moves[11]][0]
    text = second.format(m10=" ".join(moves[:10]), m12=" ".join(moves[:12]), m12a=" ".join(moves[:11]),
                         other=other, fen12=p.fen(), m12b=" ".join(moves[12:16]), fen0=p.variant.start_fen)
    first = "position startpos moves " + " ".join(moves[:12])
    h, out = _uci_handler()
    h.handle("setoption name UCI_Variant value grand")
    h.handle(first)
    out.lines.clear()
    h.handle(text)
    state, lines = _replayed(["setoption name UCI_Variant value grand", text])
    assert _pos_state(h.pos) == state and out.lines == lines


def test_position_with_an_illegal_new_move_errors_as_a_full_replay(monkeypatch):
    """An illegal move among the new ones: the same error line (numbered in the whole list) and
    the same position (the moves before it) as a full replay; the next command extends that."""
    moves = _random_game("grand", 30, seed=5)
    h, out = _uci_handler()
    h.handle("setoption name UCI_Variant value grand")
    h.handle("position startpos moves " + " ".join(moves[:20]))
    for bad in ("a1a1", "e3e5x", "zz", moves[20][2:] + moves[20][:2]):
        cmd = "position startpos moves " + " ".join(moves[:21] + [bad] + moves[22:25])
        out.lines.clear()
        h.handle(cmd)
        state, lines = _replayed(["setoption name UCI_Variant value grand", cmd])
        assert _pos_state(h.pos) == state and out.lines == lines
        assert len(lines) == 1 and lines[0].startswith("info string error: move 22 (")
    calls = _count_pushes(monkeypatch)
    cmd = "position startpos moves " + " ".join(moves[:23])
    out.lines.clear()
    h.handle(cmd)
    assert calls == moves[21:23]            # from the position the refused command left
    monkeypatch.undo()
    state, lines = _replayed(["setoption name UCI_Variant value grand", cmd])
    assert _pos_state(h.pos) == state and out.lines == lines == []
    # a bad FEN keeps the position, and the next extension still goes on from it
    h.handle("position fen 10/10 w - - 0 1 moves e3e5")
    calls = _count_pushes(monkeypatch)
    h.handle("position startpos moves " + " ".join(moves[:24]))
    assert calls == moves[23:24]


def test_position_after_a_variant_change_newgame_or_perft_replays(monkeypatch):
    """A variant change, ucinewgame and go perft (which plays on the position) each make the
    next command a full replay, with the full replay's result."""
    moves = _random_game("chess", 12, seed=2)
    h, out = _uci_handler()
    first = "position startpos moves " + " ".join(moves[:8])
    nxt = "position startpos moves " + " ".join(moves[:9])
    for between in ("setoption name UCI_Variant value standard", "ucinewgame", "go perft 2"):
        h.handle("setoption name UCI_Variant value chess")
        h.handle(first)
        h.handle(between)
        calls = _count_pushes(monkeypatch)
        out.lines.clear()
        h.handle(nxt)
        assert calls == moves[:9], between
        monkeypatch.undo()
        state, lines = _replayed(["setoption name UCI_Variant value chess", nxt])
        assert _pos_state(h.pos) == state and out.lines == lines
    # grand after chess: the same words name another start position
    h.handle("setoption name UCI_Variant value chess")
    h.handle("position startpos")
    h.handle("setoption name UCI_Variant value grand")
    h.handle("position startpos moves e3e5")
    assert h.pos.variant.name == "grand" and h.pos.move_stack and h.pos.ply == 1


def test_position_knightrelay_warnings_repeat_as_in_a_full_replay():
    """Warnings (a side not to move in check in the FEN, a Cute Chess move into a relayed
    check) are printed at every command, as a full replay prints them."""
    fen = "8/4k3/3R4/1N6/8/8/8/4K3 b - - 0 1"
    h, out = _uci_handler()
    h.handle("setoption name UCI_Variant value knightrelay")
    cmds = [f"position fen {fen} moves e7e8", f"position fen {fen} moves e7e8 d6e6"]
    for c in cmds:
        out.lines.clear()
        h.handle(c)
        state, lines = _replayed(["setoption name UCI_Variant value knightrelay", c])
        assert _pos_state(h.pos) == state and out.lines == lines
        assert any("e7e8" in ln for ln in lines)


def test_position_incremental_past_the_undo_stack():
    """Extensions one move at a time past the 2,048-entry undo stack (the history is rebased
    on the way) end where a full replay ends."""
    shuffle = ["g1f3", "g8f6", "f3g1", "f6g8"]
    moves = [shuffle[i % 4] for i in range(2100)]
    h, out = _uci_handler()
    h.handle("setoption name UCI_Variant value chess")
    for k in list(range(1700, 1760)) + list(range(1760, 2101, 7)):
        cmd = "position startpos moves " + " ".join(moves[:k])
        h.handle(cmd)
        if k in (1700, 1749, 1750, 1751, 1799, 2099):
            assert _pos_state(h.pos) == _replayed(["setoption name UCI_Variant value chess", cmd])[0], k


def test_position_stays_incremental_across_d_eval_and_go(monkeypatch):
    """`d`, `eval` and `go` between two commands leave the position as a replay made it: the
    next extension plays only its new moves and still ends where a full replay ends."""
    moves = _random_game("grand", 24, seed=8)
    h, out = _uci_handler()
    h.handle("setoption name UCI_Variant value grand")
    h.handle("position startpos moves " + " ".join(moves[:20]))
    for cmd in ("d", "eval", "go depth 1", "isready"):
        h.handle(cmd)
    h.idle.wait(10)
    calls = _count_pushes(monkeypatch)
    cmd = "position startpos moves " + " ".join(moves[:22])
    out.lines.clear()
    h.handle(cmd)
    assert calls == moves[20:22]
    monkeypatch.undo()
    state, lines = _replayed(["setoption name UCI_Variant value grand", cmd])
    assert _pos_state(h.pos) == state and out.lines == lines
