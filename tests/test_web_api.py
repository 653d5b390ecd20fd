"""The browser board's JSON API and WebSocket (engine/web), through Starlette's TestClient.

Legal moves, promotions and statuses must be Cardinal's own; bad input gets a
clear error and leaves the game unchanged; the engine process behind a page
is replaced when it dies and killed when the page closes.
"""
from __future__ import annotations

import os
import signal

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")
from starlette.testclient import TestClient  # noqa: E402

import variants  # noqa: E402
from engine.rules.fen import FenError  # noqa: E402
from engine.rules.position import Position  # noqa: E402
from engine.web.app import create_app  # noqa: E402
from tests.conftest import random_positions  # noqa: E402

KR_MATE = "5k2/8/4P2P/3K4/3b1N2/8/1q4QR/8 w - - 0 1"   # mates_knightrelay.epd: mate in 1 by a relay


@pytest.fixture(autouse=True)
def watchdog():
    """The test client's receive has no timeout: a missing message would hang the run.
    Dump the stacks and exit instead (a safety net far beyond any expected wait)."""
    import faulthandler
    faulthandler.dump_traceback_later(600, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


@pytest.fixture
def client():
    with TestClient(create_app(max_engines=2, idle_timeout=600)) as c:
        yield c


def new(client, **body):
    r = client.post("/api/games", json=body)
    assert r.status_code == 200, r.text
    return r.json()["id"], r.json()["state"]


def recv_until(ws, pred, limit=2000):
    seen = []
    for _ in range(limit):
        msg = ws.receive_json()
        seen.append(msg)
        if pred(msg):
            return msg, seen
    raise AssertionError(f"no matching message in {[m.get('type') for m in seen][-20:]}")


@pytest.mark.parametrize("variant", variants.names())
def test_legal_moves_are_the_generators(client, variant):
    for pos in random_positions(variant, 6, seed=13, max_plies=60):
        if pos.status() != "ongoing":
            continue
        gid, state = new(client, variant=variant, fen=pos.fen(), human="both")
        r = client.get(f"/api/games/{gid}/legal")
        assert r.status_code == 200
        got = sorted(m["uci"] for m in r.json()["legal"])
        assert got == sorted(pos.legal_uci())
        assert sorted(m["uci"] for m in state["legal"]) == got
        assert [m["san"] for m in r.json()["legal"]] == [pos.san(m) for m in pos.legal_moves()]


def test_knightrelay_marks_relayed_leaps_and_never_offers_knight_captures(client):
    seen_relay = 0
    for pos in random_positions("knightrelay", 12, seed=5, max_plies=50):
        if pos.status() != "ongoing":
            continue
        gid, state = new(client, variant="knightrelay", fen=pos.fen(), human="both")
        for m in state["legal"]:
            df = abs(ord(m["to"][0]) - ord(m["from"][0]))
            dr = abs(int(m["to"][1:]) - int(m["from"][1:]))
            assert m["relay"] == (m["piece"] != "N" and {df, dr} == {1, 2}), m
            target = Position.from_fen(pos.fen(), "knightrelay")
            if m["capture"]:
                sq = "abcdefgh".index(m["to"][0]) + (int(m["to"][1:]) + 1) * 12 + 1
                assert (target.piece_at(sq) or "").upper() != "N"
            seen_relay += m["relay"]
    assert seen_relay > 0


def test_move_plays_and_reports_mate_by_relayed_check(client):
    gid, state = new(client, variant="knightrelay", fen=KR_MATE, human="both")
    pos = Position.from_fen(KR_MATE, "knightrelay")
    mate = next(u for u in pos.legal_uci() if _mates(pos, u))
    assert mate == "g2g6"      # the queen on g6, defended by Nf4, checks f8 by a knight jump
    r = client.post(f"/api/games/{gid}/move", json={"uci": mate})
    assert r.status_code == 200, r.text
    st = r.json()
    assert st["status"] == "checkmate" and st["result"] == "1-0" and st["check"]
    assert st["legal"] == [] and st["moves"] == ["Qg6#"]


def test_mate_by_a_relayed_knight_jump_is_marked_relay(client):
    fen = "7k/5K2/8/8/2Q2Q2/3N4/2p5/8 w - - 0 1"     # mates_knightrelay.epd: Qh5# is a relayed leap
    gid, state = new(client, variant="knightrelay", fen=fen, human="both")
    move = next(m for m in state["legal"] if m["uci"] == "f4h5")
    assert move["relay"] and move["piece"] == "Q"
    assert not next(m for m in state["legal"] if m["uci"] == "f4h4")["relay"]
    st = client.post(f"/api/games/{gid}/move", json={"uci": "f4h5"}).json()
    assert st["status"] == "checkmate"


def _mates(pos, uci):
    pos.push_uci(uci)
    try:
        return pos.status() == "checkmate"
    finally:
        pos.pop()


@pytest.mark.parametrize("bad", ["e2e5", "e7e5", "z9z9", "", 42, None, "e2e4e4e4e4e4e4e4"])
def test_illegal_move_is_an_error_and_changes_nothing(client, bad):
    gid, before = new(client, variant="chess", human="both")
    r = client.post(f"/api/games/{gid}/move", json={"uci": bad})
    assert r.status_code == 400
    assert "move" in r.json()["error"]
    after = client.get(f"/api/games/{gid}").json()
    assert (after["fen"], after["moves"], after["version"]) == (before["fen"], before["moves"], before["version"])


@pytest.mark.parametrize("fen,field", [
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w KQkq - 0 1", "board field"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1", "side-to-move field"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - z 1", "move counters"),
])
def test_bad_fen_names_the_field(client, fen, field):
    with pytest.raises(FenError) as engine_error:
        Position.from_fen(fen, "chess")
    r = client.post("/api/games", json={"variant": "chess", "fen": fen})
    assert r.status_code == 400 and field in r.json()["error"]
    assert r.json()["error"] == f"bad FEN: {engine_error.value}"     # the engine's own message
    gid, before = new(client, variant="chess", human="both")
    r = client.post(f"/api/games/{gid}/fen", json={"fen": fen})
    assert r.status_code == 400 and field in r.json()["error"]
    assert client.get(f"/api/games/{gid}").json()["fen"] == before["fen"]


def test_grand_promotion_choices_are_the_captured_types(client):
    # White has lost a rook and a cardinal: a pawn on e9 may promote to R or A only.
    fen = "k9/4P5/10/10/10/10/10/10/1NBQKCB1N1/9R w - - 0 1"
    gid, state = new(client, variant="grand", fen=fen, human="both")
    r = client.get(f"/api/games/{gid}/promotions", params={"from": "e9", "to": "e10"})
    assert r.status_code == 200, r.text
    pos = Position.from_fen(fen, "grand")
    want = sorted(u[-1] for u in pos.legal_uci() if u.startswith("e9e10") and len(u) == 6)
    assert sorted(r.json()["choices"]) == want == ["a", "r"]
    assert r.json()["optional"] is False
    r = client.get(f"/api/games/{gid}/promotions", params={"from": "e9", "to": "e8"})
    assert r.status_code == 400 and "no legal move" in r.json()["error"]


def test_grand_promotion_is_optional_on_rank_8():
    fen = "k9/10/4P5/10/10/10/10/10/1NBQKCB1N1/9R w - - 0 1"
    with TestClient(create_app()) as c:
        gid, _ = new(c, variant="grand", fen=fen, human="both")
        r = c.get(f"/api/games/{gid}/promotions", params={"from": "e8", "to": "e9"}).json()
        assert r["optional"] is True and sorted(r["choices"]) == ["a", "r"]


def test_takeback_resign_and_status(client):
    gid, _ = new(client, variant="chess", human="both")
    for u in ("f2f3", "e7e5", "g2g4", "d8h4"):
        st = client.post(f"/api/games/{gid}/move", json={"uci": u}).json()
    assert st["status"] == "checkmate" and st["result"] == "0-1"
    assert client.post(f"/api/games/{gid}/resign", json={}).status_code == 400   # already over
    st = client.post(f"/api/games/{gid}/takeback", json={"plies": 2}).json()
    assert st["moves"] == ["f3", "e5"] and st["result"] is None
    assert client.post(f"/api/games/{gid}/takeback", json={"plies": 5}).status_code == 400
    st = client.post(f"/api/games/{gid}/resign", json={"side": "white"}).json()
    assert st["result"] == "0-1" and "resigns" in st["reason"]


def test_pgn_export_import_round_trip(client):
    gid, _ = new(client, variant="grand", human="both")
    for u in ("e3e5", "e8e6", "i2h4"):
        client.post(f"/api/games/{gid}/move", json={"uci": u})
    pgn = client.get(f"/api/games/{gid}/pgn").text
    assert '[Variant "grand"]' in pgn and "1. e5 e6 2. Nh4" in pgn
    gid2, _ = new(client, variant="chess", human="both")
    st = client.post(f"/api/games/{gid2}/pgn", json={"pgn": pgn}).json()
    assert st["variant"] == "grand" and st["moves"] == ["e5", "e6", "Nh4"]
    bad = pgn.replace("Nh4", "Nh5")
    r = client.post(f"/api/games/{gid2}/pgn", json={"pgn": bad})
    assert r.status_code == 400 and "move 3 (Nh5)" in r.json()["error"]


def test_websocket_rejects_bad_messages_and_keeps_the_game(client):
    gid, _ = new(client, variant="chess", human="both")
    with client.websocket_connect(f"/ws/game/{gid}") as ws:
        first = ws.receive_json()
        assert first["type"] == "state"
        for raw in ("not json", "[1, 2]", '{"type": "fly"}', '{"type": "move", "uci": "e2e5"}',
                    '{"type": "move"}', '{"type": "fen", "fen": "8/8 w"}', '{"type": "new", "variant": "xiangqi"}',
                    '{"type": "analyse", "multipv": 9}', '{"type": "new", "limits": {"kind": "depth", "depth": -1}}'):
            ws.send_text(raw)
            msg, _ = recv_until(ws, lambda m: m["type"] == "error")
            assert msg["message"] and "Traceback" not in msg["message"]
        ws.send_json({"type": "move", "uci": "e2e4"})
        msg, _ = recv_until(ws, lambda m: m["type"] == "state")
        assert msg["state"]["moves"] == ["e4"]


def test_engine_replies_over_the_websocket(client):
    gid, _ = new(client, variant="knightrelay", human="white", limits={"kind": "depth", "depth": 2})
    with client.websocket_connect(f"/ws/game/{gid}") as ws:
        ws.send_json({"type": "move", "uci": "e2e4"})
        msg, _ = recv_until(ws, lambda m: m["type"] == "state" and m.get("engine_move"))
        st = msg["state"]
        assert len(st["moves"]) == 2 and st["turn"] == "w" and isinstance(msg["engine_ms"], int)
        pos = Position.from_fen(None, "knightrelay")
        pos.push_uci("e2e4")
        assert msg["engine_move"]["uci"] in pos.legal_uci()


def test_engine_killed_mid_search_is_reported_and_replaced(client):
    gid, _ = new(client, variant="grand", human="both")
    with client.websocket_connect(f"/ws/game/{gid}") as ws:
        ws.send_json({"type": "analyse", "on": True, "multipv": 2})
        recv_until(ws, lambda m: m["type"] == "info" and m.get("pv_san"))
        old = client.get(f"/api/games/{gid}/engine").json()
        assert old["alive"] and old["analysing"]
        os.kill(old["pid"], signal.SIGKILL)
        died, _ = recv_until(ws, lambda m: m["type"] == "engine_died")
        assert "starting a new one" in died["message"]
        ready, _ = recv_until(ws, lambda m: m["type"] == "engine_ready")
        assert ready["pid"] != old["pid"] and ready["restarts"] == 1
        info, _ = recv_until(ws, lambda m: m["type"] == "info" and m.get("pv_san"))
        assert info["kind"] == "analyse"
        new_pid = ready["pid"]
    # the page closed: its engine is gone
    with pytest.raises(ProcessLookupError):
        os.kill(new_pid, 0)
    assert client.get(f"/api/games/{gid}/engine").json()["pid"] is None


def test_engine_limit(client):
    ids = [new(client, variant="chess", human="both")[0] for _ in range(3)]
    socks = [client.websocket_connect(f"/ws/game/{i}") for i in ids]
    try:
        entered = [s.__enter__() for s in socks]
        for ws in entered[:2]:
            ws.receive_json()
            ws.send_json({"type": "analyse", "on": True})
            recv_until(ws, lambda m: m["type"] == "engine_ready")
        ws = entered[2]
        ws.receive_json()
        ws.send_json({"type": "analyse", "on": True})
        msg, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert "engines are busy" in msg["message"]
        socks[0].__exit__(None, None, None)         # a page closes: the waiting game gets its engine
        socks.pop(0)
        msg, _ = recv_until(ws, lambda m: m["type"] == "engine_ready")
        assert msg["analysing"]
        recv_until(ws, lambda m: m["type"] == "info")
    finally:
        for s in socks:
            s.__exit__(None, None, None)


def test_cross_site_requests_are_refused(client):
    gid, _ = new(client, variant="chess", human="both")
    r = client.post(f"/api/games/{gid}/move", json={"uci": "e2e4"}, headers={"Origin": "http://evil.example"})
    assert r.status_code == 403
    assert client.get(f"/api/games/{gid}").json()["moves"] == []
    from starlette.websockets import WebSocketDisconnect
    with pytest.raises(WebSocketDisconnect):
        with client.websocket_connect(f"/ws/game/{gid}", headers={"Origin": "http://evil.example"}) as ws:
            ws.receive_json()
    with client.websocket_connect(f"/ws/game/{gid}", headers={"Origin": "http://testserver"}) as ws:
        assert ws.receive_json()["type"] == "state"


def test_watch_follows_a_pgn_and_its_journal(client, tmp_path):
    pgn = tmp_path / "m.pgn"
    game = ('[Event "m"]\n[Round "{r}"]\n[White "{w}"]\n[Black "{b}"]\n[Result "{res}"]\n\n'
            '1. f3 e5 2. g4 Qh4# {{mate}} {res}\n\n')
    pgn.write_text(game.format(r=1, w="A", b="B", res="0-1"))
    with client.websocket_connect(f"/ws/watch?path={tmp_path / 'notes.txt'}") as ws:
        assert "Watch follows a .pgn file" in ws.receive_json()["message"]
    with client.websocket_connect(f"/ws/watch?path={pgn}") as ws:
        m = ws.receive_json()
        assert (m["games"], m["first"], m["wins"], m["draws"], m["losses"]) == (1, "A", 0, 0, 1)
        assert m["current"]["moves"] == ["f3", "e5", "g4", "Qh4#"] and m["current"]["result"] == "0-1"
        assert m["current"]["start_fen"] == variants.get("chess").start_fen     # for the move numbers
        assert m["series"][0]["elo_plot"] == -800.0 and m["error_infinite"]
        with open(pgn, "a") as fh:
            fh.write(game.format(r=2, w="B", b="A", res="0-1"))
        m = ws.receive_json()
        assert (m["games"], m["wins"], m["losses"]) == (2, 1, 1) and m["elo"] == 0.0
        (tmp_path / "m.jsonl").write_text(
            '{"type": "match", "format": "cardinal-match-journal"}\n'
            '{"type": "pair", "pair": 0, "totals": {"games": 2, "llr": -0.2}}\n{"type": "pa')
        m = ws.receive_json()
        assert [p["llr"] for p in m["series"]] == [None, -0.2] and m["journal"] == 2


def test_clock_flag_ends_the_game():
    from engine.web.game import Game
    g = Game("chess", human="both", limits={"kind": "clock", "base": 60, "inc": 1})
    g.play("e2e4")
    assert g.clock[0] == pytest.approx(61, abs=0.5) and g.result is None
    g.clock_started -= 120              # Black has used two minutes of a one-minute clock
    assert g.check_flag()
    assert g.result == "1-0" and g.reason == "Black loses on time"
    with pytest.raises(ValueError, match="game is over"):
        g.play("e7e5")


def test_idle_engine_is_stopped(client):
    gid, _ = new(client, variant="chess", human="both")
    hub = client.app.state.hub
    with client.websocket_connect(f"/ws/game/{gid}") as ws:
        ws.receive_json()
        ws.send_json({"type": "analyse", "on": True})
        recv_until(ws, lambda m: m["type"] == "engine_ready")
        ws.send_json({"type": "stop"})
        recv_until(ws, lambda m: m["type"] == "analysis" and not m["on"])
        session = hub.sessions[gid]
        pid = session.engine.pid
        session.last_active -= 10_000
        hub.reap()
        assert session.engine is None
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
        ws.send_json({"type": "move", "uci": "e2e4"})       # the game itself is still there
        msg, _ = recv_until(ws, lambda m: m["type"] == "state")
        assert msg["state"]["moves"] == ["e4"]


def test_random_junk_never_breaks_the_server(client):
    import random
    rng = random.Random(7)
    gid, _ = new(client, variant="grand", human="both")
    pieces = ["{", "}", "[", "]", '"type"', '"move"', '"fen"', '"new"', '"uci"', ":", ",", "null", "1e999",
              '"e3e5"', '"\\u0000"', "-1", "true", '"limits"', '"variant"', '"plies"', "3.5", '"x"' * 50]
    with client.websocket_connect(f"/ws/game/{gid}") as ws:
        ws.receive_json()
        for _ in range(300):
            if rng.random() < 0.5:
                raw = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 12)))
            else:
                msg = {"type": rng.choice(["move", "fen", "new", "takeback", "resign", "pgn", "settings",
                                           "analyse", "promotions", "engine", "ping", "zzz", 7, None])}
                for key in rng.sample(["uci", "fen", "variant", "human", "limits", "plies", "pgn", "on",
                                       "multipv", "from", "to", "skill", "side"], rng.randint(0, 4)):
                    msg[key] = rng.choice([None, 0, -5, 10 ** 30, "", "e3e5", "x" * 300, [], {}, True,
                                           {"kind": "depth", "depth": 0}, "grand", "both"])
                raw = __import__("json").dumps(msg)
            ws.send_text(raw)
            ws.send_json({"type": "ping", "t": 1})
            msg, seen = recv_until(ws, lambda m: m["type"] == "pong")
            assert all("Traceback" not in str(m) for m in seen)
            assert not [m for m in seen if m["type"] == "error" and "internal error" in m["message"]], raw
        ws.send_json({"type": "new", "variant": "chess", "human": "both"})
        ws.send_json({"type": "move", "uci": "e2e4"})
        msg, _ = recv_until(ws, lambda m: m["type"] == "state" and m["state"]["moves"] == ["e4"])


def test_serve_cli_checks_arguments_and_warns_off_loopback():
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run([sys.executable, "-m", "engine", "serve", "--max-engines", "0"], cwd=root,
                       capture_output=True, text=True)
    assert r.returncode == 2 and "--max-engines" in r.stderr and "Traceback" not in r.stderr
    p = subprocess.Popen([sys.executable, "-m", "engine", "serve", "--host", "0.0.0.0", "--port", "0"], cwd=root,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = p.stderr.readline()
        assert line.startswith("warning: bound to 0.0.0.0")
        assert "browser board at http://0.0.0.0:" in p.stdout.readline()
    finally:
        p.kill()
        p.wait()


def test_serve_on_a_busy_port_is_a_one_line_error():
    import socket
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        r = subprocess.run([sys.executable, "-m", "engine", "serve", "--port", str(port)], cwd=root,
                           capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert r.stderr == f"error: cannot listen on 127.0.0.1:{port}: address already in use\n"
    assert r.stdout == ""


def test_serve_reports_a_failed_uvicorn_start_in_one_line(monkeypatch, capsys):
    """Should uvicorn still fail to start on the bound sockets, its error log line and its
    exit become one ``error:`` line and status 2."""
    import logging
    import sys
    import uvicorn
    from engine.web import server

    async def failing_startup(self, sockets=None):
        logging.getLogger("uvicorn.error").error("[Errno 24] Too many open files")
        sys.exit(3)

    monkeypatch.setattr(uvicorn.Server, "startup", failing_startup)
    assert server.main(["--port", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: cannot start the browser board on 127.0.0.1:")
    assert err.endswith(": [Errno 24] Too many open files\n") and err.count("\n") == 1, err


def test_engine_moves_first_when_the_human_plays_black(client):
    gid, _ = new(client, variant="grand", human="black", limits={"kind": "depth", "depth": 1})
    with client.websocket_connect(f"/ws/game/{gid}") as ws:
        msg, _ = recv_until(ws, lambda m: m["type"] == "state" and m.get("engine_move"))
        assert msg["state"]["turn"] == "b" and len(msg["state"]["moves"]) == 1
        # taking over: the human now plays both sides, the engine stays quiet
        ws.send_json({"type": "settings", "human": "both"})
        msg, _ = recv_until(ws, lambda m: m["type"] == "state")
        assert msg["state"]["human"] == "both"
        ws.send_json({"type": "settings", "limits": {"kind": "movetime", "movetime": 50}})
        msg, _ = recv_until(ws, lambda m: m["type"] == "state")
        assert msg["state"]["limits"] == {"kind": "movetime", "movetime": 50}
        ws.send_json({"type": "settings", "limits": {"kind": "movetime", "movetime": 1}})
        msg, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert "movetime must be a number from 10" in msg["message"]


def test_pgn_of_a_set_up_position_carries_fen_and_setup(client):
    fen = "7k/5K2/8/8/2Q2Q2/3N4/2p5/8 w - - 0 1"
    gid, _ = new(client, variant="knightrelay", fen=fen, human="both")
    client.post(f"/api/games/{gid}/move", json={"uci": "f4h5"})
    pgn = client.get(f"/api/games/{gid}/pgn").text
    assert f'[FEN "{fen}"]' in pgn and '[SetUp "1"]' in pgn and '[Variant "knightrelay"]' in pgn
    assert '[Result "1-0"]' in pgn and "1. Qh5# 1-0" in pgn.replace("{White mates} ", "")
    gid2, _ = new(client, variant="chess", human="both")
    st = client.post(f"/api/games/{gid2}/pgn", json={"pgn": pgn}).json()
    assert st["start_fen"] == fen and st["status"] == "checkmate" and st["result"] == "1-0"


def test_strength_reaches_the_engine_as_skill_level(client):
    gid, _ = new(client, variant="chess", human="white", limits={"kind": "depth", "depth": 8}, skill=0)
    hub = client.app.state.hub
    with client.websocket_connect(f"/ws/game/{gid}") as ws:
        recv_until(ws, lambda m: m["type"] == "engine_ready")
        ws.send_json({"type": "move", "uci": "e2e4"})
        msg, seen = recv_until(ws, lambda m: m["type"] == "state" and m.get("engine_move"))
        assert not [m for m in seen if m["type"] == "error"]
        assert "Skill Level" in hub.sessions[gid].engine_options and hub.sessions[gid].engine_skill == 0
        assert max(m["depth"] for m in seen if m["type"] == "info") == 1     # level 0 searches depth 1
    r = client.post("/api/games", json={"variant": "chess", "skill": 21})
    assert r.status_code == 400 and "skill" in r.json()["error"]
