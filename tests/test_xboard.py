"""XBoard / CECP v2 transcripts against the real ``cardinal`` process over pipes.

Transcripts follow the CECP v2 specification and what Cute Chess, XBoard and
Sjaak II send on the wire. On 10-rank boards CECP counts ranks from 0: UCI ``e3e5``
is CECP ``e2e4``; :func:`legal_cecp` converts with the engine's own Position.
"""
from __future__ import annotations

import re
import time

import pytest

from engine import __version__
from tests.engine_proc import EngineProcess, ensure_warm_cache

READY_TIMEOUT = 180.0
THINK_RE = re.compile(r"(\d+) (-?\d+) (\d+) (\d+)( \S+)*")
GRAND_END_B = "4k5/10/6P3/10/10/10/10/10/1p2K5/10 b - - 0 1"
FEATURES = ('feature myname="Cardinal {v}" ping=1 setboard=1 usermove=1 time=1 draw=0 reuse=1 sigint=0 '
            'sigterm=0 colors=0 san=0 nps=0 memory=1 smp=1 analyze=1 variants="normal,grand,knightrelay,capablanca"')


def start_engine() -> EngineProcess:
    e = EngineProcess()
    e.send("xboard", "protover 2")
    e.expect("feature done=1", READY_TIMEOUT)
    e.send("ping 1")
    e.expect("pong 1", READY_TIMEOUT)
    return e


@pytest.fixture(scope="module")
def eng():
    e = start_engine()
    yield e
    assert e.close() == 0


_ping = [100]


def sync(e: EngineProcess, timeout: float = 30) -> list[str]:
    _ping[0] += 1
    e.send(f"ping {_ping[0]}")
    return e.expect(f"pong {_ping[0]}", timeout)


def position(variant: str, fen: str | None, cecp_moves: list[str]):
    from engine.rules.position import Position
    pos = Position.from_fen(fen, variant)
    zb = pos.variant.height == 10
    for m in cecp_moves:
        pos.push_uci(m, zero_based=zb)
    return pos


def legal_cecp(variant: str, fen: str | None, cecp_moves: list[str]) -> list[str]:
    pos = position(variant, fen, cecp_moves)
    return pos.legal_uci(zero_based=pos.variant.height == 10)


def move_of(lines: list[str]) -> str:
    m = re.fullmatch(r"move (\S+)", lines[-1])
    assert m, lines[-1]
    return m.group(1)


def check_thinking(lines: list[str]) -> None:
    think = [ln for ln in lines if ln[:1].isdigit()]
    for ln in think:
        assert THINK_RE.fullmatch(ln), ln


# ---------------------------------------------------------------- start-up
@pytest.mark.timing
def test_features():
    e = EngineProcess()
    t0 = time.monotonic()
    e.send("xboard", "protover 2")
    assert e.expect("feature done=0", 30) == ["feature done=0"]
    assert time.monotonic() - t0 < 5.0          # at once (target 0.5 s warm); done=1 follows the warm-up
    lines = ["feature done=0"] + e.expect("feature done=1", READY_TIMEOUT)
    assert lines[1] == FEATURES.format(v=__version__)
    assert all(ln.startswith('feature option="') for ln in lines[2:-1])
    assert any("Move Overhead -spin" in ln for ln in lines)
    assert any("MultiPV -spin 1 1 5" in ln for ln in lines)
    assert 'feature option="Use NNUE -check 0"' in lines and 'feature option="EvalFile -file <default>"' in lines
    e.send("accepted done", "accepted ping", "rejected analyze", "ping 5")
    assert e.expect("pong 5", READY_TIMEOUT) == ["pong 5"]
    e.send("quit")
    assert e.proc.wait(10) == 0
    e.close()


# ---------------------------------------------------------------- Cute Chess game sequences
def test_cutechess_grand_black_to_move_dummy_b2b3(eng):
    """What Cute Chess sends: new / variant grand / force / b2b3 / setboard ... b / level / post / easy / ping."""
    e = eng
    e.send("new", "variant grand", "force", "b2b3", f"setboard {GRAND_END_B}", "level 0 0:03 0.05",
           "post", "easy", "ping 8")
    lines = e.expect("pong 8", 20)
    assert lines == ["Error (unknown command): b2b3", "pong 8"]
    e.send("time 305", "otim 305", "go")
    lines = e.expect(r"move .*", 10)
    check_thinking(lines)
    assert any(ln[:1].isdigit() for ln in lines)         # post is on
    mv = move_of(lines)
    assert mv in legal_cecp("grand", GRAND_END_B, [])
    # then the opponent's optional promotion g8g9a (CECP g7g8a) arrives as usermove
    e.send("time 290", "otim 300", "usermove g7g8a")
    lines = e.expect(r"move .*", 10)
    mv2 = move_of(lines)
    assert mv2 in legal_cecp("grand", GRAND_END_B, [mv, "g7g8a"])
    sync(e)


def test_sjaak_style_force_moves_then_go(eng):
    """What Sjaak II sends (with usermove): 0-based grand moves e2e4 = UCI e3e5."""
    e = eng
    e.send("new", "variant grand", "force", "usermove e2e4", "usermove e7e5", "sd 4", "post",
           "time 6000", "otim 6000", "go")
    lines = e.expect(r"move .*", 20)
    check_thinking(lines)
    mv = move_of(lines)
    assert mv in legal_cecp("grand", None, ["e2e4", "e7e5"])
    pos = position("grand", None, ["e2e4", "e7e5"])
    assert pos.fen().startswith("r8r/1nbqkcabn1/pppp1ppppp/10/4p5/4P5/10/PPPP1PPPPP/")
    sync(e)
    # setboard then optional promotion on rank 9 (CECP rank 8): g7g8c is UCI g8g9c
    e.send("force", "setboard 4k5/10/6P3/10/10/10/10/10/1p2K5/10 w - - 0 1", "sd 3", "go")
    mv = move_of(e.expect(r"move .*", 20))
    assert mv in legal_cecp("grand", "4k5/10/6P3/10/10/10/10/10/1p2K5/10 w - - 0 1", [])
    # mandatory promotion on rank 10 (CECP 9), where only the queen mates (a marshal leaves f9 free)
    e.send("force", "setboard 4k5/6P3/3K6/10/10/10/10/10/10/10 w - - 0 1", "sd 4", "go")
    assert move_of(e.expect(r"move .*", 20)) == "g8g9q"      # UCI g9g10q
    sync(e)


def test_engine_black_answers_white_first_move(eng):
    e = eng
    e.send("new", "variant grand", "level 0 0:05 0.05", "post", "time 505", "otim 505", "usermove e2e4")
    lines = e.expect(r"move .*", 10)
    check_thinking(lines)
    assert move_of(lines) in legal_cecp("grand", None, ["e2e4"])
    # illegal usermove and the dummy move get the right replies and change nothing
    e.send("usermove e2e4", "b2b3")
    assert e.expect(r"Illegal move: e2e4", 5)
    assert e.expect(r"Error \(unknown command\): b2b3", 5)
    sync(e)


@pytest.mark.parametrize("variant", ["normal", "knightrelay", "grand"])
def test_short_game_both_sides(eng, variant):
    """The engine plays a few moves against a scripted opponent that always plays its first legal move."""
    e = eng
    name = "chess" if variant == "normal" else variant
    e.send("new", f"variant {variant}" if variant != "normal" else "variant normal", "level 0 0:05 0.05", "post")
    if variant == "knightrelay":
        lines = e.expect(r"piece K& KisO2", 5)
        assert lines[-4:] == ["setup (PNBRQKpnbrqk) 8x8+0_fairy rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                              "piece N& mN", "piece P& fmWfcFifmW2", "piece K& KisO2"]
    e.send("force")
    sync(e)
    moves: list[str] = []
    e.send("time 500", "otim 500", "go")          # engine plays white
    for _ in range(4):
        lines = e.expect(r"move .*", 10)
        check_thinking(lines)
        mv = move_of(lines)
        assert mv in legal_cecp(name, None, moves), (moves, mv)
        moves.append(mv)
        reply = legal_cecp(name, None, moves)[0]
        moves.append(reply)
        sync(e)
        e.send("time 450", "otim 450", f"usermove {reply}")
    e.expect(r"move .*", 10)
    e.send("force", "result * {stopped}")
    sync(e)


# ---------------------------------------------------------------- ping / ? / ponder / analyze
@pytest.mark.timing
def test_ping_waits_for_move_and_question_mark_moves_now(eng):
    e = eng
    e.send("new", "variant grand", "force", "st 30", "post", "go")
    time.sleep(0.3)
    e.send("ping 71")
    time.sleep(0.3)
    early = e.drain(0.1)
    assert "pong 71" not in early                   # on move: pong only after the move
    t0 = time.monotonic()
    e.send("?")
    lines = e.expect("pong 71", 5)
    assert time.monotonic() - t0 < 3.0              # '?' answered at once (st 30 would take 30 s)
    moves = [ln for ln in early + lines if ln.startswith("move ")]
    assert len(moves) == 1 and lines.index("pong 71") > lines.index(moves[0])
    assert move_of(moves) in legal_cecp("grand", None, [])


def test_force_during_thinking_drops_the_move(eng):
    e = eng
    # `force` while thinking on move stops the search and drops its move. (A `ping` sent
    # before the `force` would be a barrier: CECP answers it only after the move, see
    # test_ping_while_on_move_is_a_barrier.)
    e.send("new", "force", "st 30", "go")
    time.sleep(0.3)
    e.send("force", "ping 72")
    lines = e.expect("pong 72", 5)
    assert not any(ln.startswith("move ") for ln in lines)
    lines = sync(e)
    assert not any(ln.startswith("move ") for ln in lines)


@pytest.mark.timing
def test_pondering_ping_answers_at_once_and_ponder_hit(eng):
    e = eng
    e.send("new", "hard", "force", "level 0 0:10 0", "time 1000", "otim 1000", "go")
    mv = move_of(e.expect(r"move .*", 10))
    time.sleep(0.2)
    t0 = time.monotonic()
    lines = sync(e, 5)                              # pondering: pong at once
    assert time.monotonic() - t0 < 2.5
    assert not any(ln.startswith("move ") for ln in lines)
    # opponent reply: any legal move (a ponder hit or a miss; both must give a legal move)
    reply = legal_cecp("chess", None, [mv])[0]
    e.send("time 990", "otim 990", f"usermove {reply}")
    mv2 = move_of(e.expect(r"move .*", 10))
    assert mv2 in legal_cecp("chess", None, [mv, reply])
    e.send("easy", "force")
    sync(e)


def test_ponder_hit_continues_the_search(eng):
    e = eng
    e.send("new", "hard", "post", "force", "usermove e2e4", "level 0 0:10 0", "time 1000", "otim 1000", "go")
    lines = e.expect(r"move .*", 10)
    mv = move_of(lines)
    pv = [ln.split()[4:] for ln in lines if THINK_RE.fullmatch(ln)][-1]
    assert pv[0] == mv and len(pv) >= 2, pv
    time.sleep(0.3)
    pondering = e.drain(0.1)
    assert any(re.match(r"1 ", ln) for ln in pondering)              # post: the ponder search shows its lines
    e.send("time 990", "otim 990", f"usermove {pv[1]}")     # the predicted move: ponder hit
    after = e.expect(r"move .*", 10)
    assert move_of(after) in legal_cecp("chess", None, ["e2e4", mv, pv[1]])
    assert not any(re.match(r"1 ", ln) for ln in after), after      # no restart at depth 1
    e.send("usermove " + legal_cecp("chess", None, ["e2e4", mv, pv[1], move_of(after)])[-1])
    after = e.expect(r"move .*", 10)                                  # a miss (most likely): new search
    e.send("easy", "force")
    sync(e)


def test_analyze_mode(eng):
    e = eng
    sync(e)
    start = len(e.lines)
    e.send("new", "variant grand", "force", "usermove e2e4", "analyze")
    lines = e.expect(r"\d+ -?\d+ \d+ \d+ .*", 10)
    check_thinking(lines)
    e.send(".", "usermove e7e5")
    time.sleep(0.3)
    sync(e, 5)
    e.send("undo", "undo")
    time.sleep(0.2)
    sync(e, 5)
    e.send("exit")
    sync(e, 5)
    time.sleep(0.3)
    assert not any(ln[:1].isdigit() for ln in e.drain(0.3))     # analysis stopped
    assert not any(ln.startswith("move ") for ln in e.lines[start:])


# ---------------------------------------------------------------- claims
def test_claims_mate_after_own_move(eng):
    e = eng
    e.send("new", "force", "usermove f2f3", "usermove e7e5", "usermove g2g4", "sd 3", "go")
    lines = e.expect(r"0-1 \{Black mates\}", 10)
    assert move_of(lines[:-1]) == "d8h4"


def test_claims_mate_after_opponent_move(eng):
    e = eng
    e.send("new", "force", "setboard 1r6/8/8/8/8/8/5k2/7K w - - 0 1", "sd 3", "go")
    assert move_of(e.expect(r"move .*", 10)) == "h1h2"     # the only legal move
    e.send("usermove b8h8")
    lines = e.expect(r"0-1 \{Black mates\}", 5)
    assert not any(ln.startswith("move ") for ln in lines)
    sync(e)


def test_claims_insufficient_material(eng):
    e = eng
    e.send("new", "force", "setboard 7K/8/8/8/3R4/2k5/8/8 b - - 0 1", "sd 4", "go")
    lines = e.expect(r"1/2-1/2 \{Insufficient material\}", 10)
    assert move_of(lines[:-1]) == "c3d4"


def test_claims_stalemate_after_opponent_move(eng):
    e = eng
    e.send("new", "force", "setboard 7k/8/8/8/8/8/8/K4Q2 w - - 0 1", "usermove f1f7", "ping 9001")
    lines = e.expect("pong 9001", 5)                  # force mode: no claim
    assert not any("Stalemate" in ln for ln in lines)
    e.send("new", "force", "setboard 8/8/8/6PQ/7p/7K/8/7k b - - 0 1", "sd 2", "go")
    assert move_of(e.expect(r"move .*", 10)) == "h1g1"     # the only legal move
    e.send("usermove h5f3")
    lines = e.expect(r"1/2-1/2 \{Stalemate\}", 5)
    assert not any(ln.startswith("move ") for ln in lines)
    sync(e)


# ---------------------------------------------------------------- errors and misc
def test_errors_and_state(eng):
    e = eng
    e.send("new", "variant grand", "force")
    bad = [
        ("variant shogi", r"Error \(unsupported variant\): variant shogi"),
        ("setboard 10/10 w - - 0 1", r"Error \(illegal position\): setboard 10/10 w - - 0 1"),
        ("setboard", r"Error \(missing FEN\): setboard"),
        ("level 40 x 0", r"Error \(bad time control\): level 40 x 0"),
        ("level 40", r"Error \(expected level MPS BASE INC\): level 40"),
        ("st -1", r"Error \(expected st SECONDS\): st -1"),
        ("sd zero", r"Error \(expected sd DEPTH \(1..255\)\): sd zero"),
        ("time abc", r"Error \(expected centiseconds\): time abc"),
        ("memory lots", r"Error \(expected memory MB\): memory lots"),
        ("option NoSuch=3", r"Error \(unknown option\): option NoSuch=3"),
        ("option MultiPV=9", r"Error \(option value out of range\): option MultiPV=9"),
        ("undo", r"Error \(no move to undo\): undo"),
        ("remove", r"Error \(no move to undo\): remove"),
        ("usermove", r"Error \(expected one move\): usermove"),
        ("usermove e2e5", r"Illegal move: e2e5"),
        ("usermove e3e5", r"Illegal move: e3e5"),        # 1-based rank numbers are wrong over CECP
        ("e2e4", r"Error \(unknown command\): e2e4"),
        ("frobnicate 1 2", r"Error \(unknown command\): frobnicate 1 2"),
    ]
    for cmd, pattern in bad:
        e.send(cmd)
        e.expect(pattern, 5)
    # accepted and ignored, no output
    e.send("accepted ping", "rejected sigint", "computer", "name Someone", "rating 2000 2100", "random",
           "cores 2", "egtpath syzygy /tmp", "memory 8", "option Move Overhead=50", "option Clear Hash",
           "level 40 5 0", "level 0 2:30 1.5", "st 2", "sd 5", "nopost", "post", "otim 100", "time 100")
    assert sync(e)[:-1] == []
    # the state survived: usermove e2e4 (UCI e3e5) is legal, then undo / remove work
    e.send("usermove e2e4", "usermove e7e5", "remove", "usermove e2e4", "undo", "undo", "usermove e2e4")
    lines = e.expect(r"Error \(no move to undo\): undo", 5)
    assert not any(ln.startswith("Illegal") for ln in lines)
    sync(e)


def test_setboard_grand_holdings_short_forms_and_ep_either_way(eng):
    e = eng
    e.send("new", "variant grand", "force",
           "setboard r8r/1nbqkcabn1/pppppppppp/10/10/10/10/PPPPPPPPPP/1NBQKCABN1/R8R[-] w - - 0 1",
           "usermove e2e4", "setboard 4k5/10/6P3/10/10/10/10/10/1p2K5/10 w 0 1", "usermove g7g8a",
           # white pawn just double-stepped e3-e5 (1-based); black pawn on d5 can take e.p. on e4 (1-based)
           "setboard 4k5/10/10/10/10/3pP5/10/10/10/4K5 b - e4 0 1", "usermove d4e3",
           "setboard 4k5/10/10/10/10/3pP5/10/10/10/4K5 b - e3 0 1", "usermove d4e3")
    lines = sync(e)
    assert not any(ln.startswith(("Error", "Illegal")) for ln in lines), lines


@pytest.mark.timing
@pytest.mark.parametrize("first", [None, "e2e4"])
def test_time_is_the_engines_own_clock(eng, first):
    """``time`` is the engine's clock whichever colour it plays; ``otim`` the opponent's."""
    e = eng
    e.send("new", "force", "level 0 10 0")
    if first:
        e.send(f"usermove {first}")
    e.send("time 100", "otim 10000")
    sync(e)
    t0 = time.monotonic()
    e.send("go")
    move_of(e.expect(r"move .*", 10))
    assert time.monotonic() - t0 < 2.5      # 1 s left (at most ~0.3 s); the opponent's 100 s would allow ~3.3 s


@pytest.mark.timing
def test_level_time_maps_to_clock(eng):
    e = eng
    e.send("new", "force", "level 40 0:02 0", "time 200", "otim 200", "post")
    sync(e)
    t0 = time.monotonic()
    e.send("go")
    move_of(e.expect(r"move .*", 5))
    assert time.monotonic() - t0 < 1.5          # 2 s for 40 moves: well under a second per move


def test_go_before_a_warm_cache_has_loaded_searches():
    """A warm cache whose load is slowed down (a busy machine), and ``go`` at once, with no
    ``protover 2`` (whose ``feature done=1`` would wait for the load) and no ``ping``: the
    engine waits for the load and searches (thinking output past depth 1), no quick move."""
    ensure_warm_cache()
    e = EngineProcess(env={"CARDINAL_SEARCHER": "tests.engine_proc:slow_loading_searcher"})
    try:
        e.send("xboard", "new", "post", "st 1", "go")
        lines = e.expect(r"move \S+", 60)
    finally:
        code = e.close()
    assert not any("error" in ln.lower() or "quick move" in ln for ln in lines), lines
    depths = [int(ln.split()[0]) for ln in lines if THINK_RE.fullmatch(ln)]
    assert depths and max(depths) > 1, lines
    assert code == 0


def test_ping_while_on_move_is_a_barrier():
    """A ping while the engine thinks on move is answered after the move, and commands sent
    after the ping (here ``force``) wait behind it: the move is not dropped."""
    with EngineProcess() as e:
        e.send("xboard", "protover 2")
        e.expect("feature done=1", READY_TIMEOUT)
        e.send("new", "st 0.3", "go", "ping 7", "force", "ping 8")
        lines = e.expect("pong 8", 30)
        moves = [ln for ln in lines if ln.startswith("move ")]
        assert len(moves) == 1, lines
        assert lines.index(moves[0]) < lines.index("pong 7") < lines.index("pong 8")


def test_knightrelay_usermove_into_relayed_check_from_cutechess(eng):
    """Cute Chess 1.5 sends king moves into relayed attacks: accepted with a '#' warning (never
    'Illegal move', which forfeits the game), and the engine captures the king."""
    e = eng
    e.send("new", "variant knightrelay", "force", "setboard 8/4k3/3R4/1N6/8/8/8/4K3 b - - 0 1",
           "usermove e7e8", "go")
    lines = e.expect(r"move \S+", 30)
    assert not any(ln.startswith("Illegal move") for ln in lines), lines
    assert any(ln.startswith("# warning") for ln in lines), lines
    assert lines[-1] == "move d6e8"
    e.send("force")
    sync(e)


def test_nnue_options(eng, tmp_path):
    from search import nnue as N
    e = eng
    good = str(tmp_path / "grand.nnue")
    N.write_net(good, N.quantize(N.FloatNet.random("grand", 16, seed=5)), "grand")
    e.send("new", "variant grand", "force", "option Use NNUE=1", f"option EvalFile={tmp_path}/none.nnue")
    lines = sync(e)
    assert lines[:-1] == [f"# error: {tmp_path}/none.nnue: no such network file; using the linear evaluation"]
    e.send(f"option EvalFile={good}")
    assert sync(e)[:-1] == [f"# NNUE evaluation using {good} (grand, 1600x16 crelu)"]
    e.send("sd 3", "go")
    lines = e.expect(r"move .*", 30)
    assert move_of(lines) in legal_cecp("grand", None, [])
    e.send("option Use NNUE=2")
    e.expect(r"Error \(bad option value\): option Use NNUE=2", 5)
    e.send("option Use NNUE=0", "option EvalFile=<default>", "new")
    assert sync(e)[:-1] == []
