"""The Starlette application behind ``cardinal serve``.

HTTP JSON API (``/api/...``) for games, and one WebSocket per open page
(``/ws/game/{id}``) that carries moves in and game states and engine output
out. A game gets a Cardinal engine process only while a page has it open; the
process is killed when the last page closes, after ``idle_timeout`` seconds
without activity, and at shutdown. At most ``max_engines`` run at once.
Every message from the browser is validated; bad input gets an error message
and leaves the game as it was.
"""
from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
import os
import secrets
import time
from importlib import resources

from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

import variants
from bench.engines import EngineError
from .engines import EngineAdapter, parse_info
from .game import Game, GameError, parse_limits, variant_info
from . import watch as W

log = logging.getLogger("cardinal.web")
STATIC_DIR = str(resources.files("engine.web") / "static")
MAX_MESSAGE = 200_000     # bytes of one browser message (a PGN fits)
MAX_PV = 16               # plies of a PV converted to SAN
MAX_GAMES = 1000


class Search:
    """A `go` sent to the engine; bestmoves arrive in the order the gos were sent."""

    def __init__(self, kind: str, version: int, fen: str):
        self.kind, self.version, self.fen = kind, version, fen
        self.cancelled = False
        self.started = time.monotonic()


class Session:
    """A game, the pages showing it, and its engine process."""

    def __init__(self, hub: "Hub", game: Game):
        self.hub, self.game = hub, game
        self.id = secrets.token_urlsafe(8)
        self.sockets: set[WebSocket] = set()
        self.engine: EngineAdapter | None = None
        self.engine_variant = None
        self.engine_skill = None
        self.engine_options: set = set()
        self.ready = False
        self.searches: collections.deque = collections.deque()
        self.analysing = False
        self.multipv = 1
        self.last_active = time.monotonic()
        self.queue: asyncio.Queue | None = None
        self.pump_task = None
        self.restarts = 0

    # ------------------------------------------------------------------ pages
    async def send(self, msg: dict) -> None:
        for ws in list(self.sockets):
            try:
                await ws.send_json(msg)
            except Exception:   # the page went away; its handler cleans up
                self.sockets.discard(ws)

    async def send_state(self, **extra) -> None:
        await self.send({"type": "state", "id": self.id, "state": self.game.state(), **extra})

    # ------------------------------------------------------------------ engine
    def engine_info(self) -> dict:
        e = self.engine
        return {"pid": e.pid if e else None, "alive": bool(e and e.alive()), "ready": self.ready,
                "restarts": self.restarts, "analysing": self.analysing}

    async def ensure_engine(self) -> bool:
        if self.engine is not None:
            return True
        if not self.sockets:
            return False
        if self.hub.live_engines() >= self.hub.max_engines:
            if self not in self.hub.waiting:
                self.hub.waiting.append(self)
                await self.send({"type": "error", "message":
                                 f"all {self.hub.max_engines} engines are busy (--max-engines); this game "
                                 f"gets one as soon as another game closes"})
            return False
        if self in self.hub.waiting:
            self.hub.waiting.remove(self)
        loop = asyncio.get_running_loop()
        q: asyncio.Queue = asyncio.Queue()
        self.queue = q

        def on_line(line, q=q):
            loop.call_soon_threadsafe(q.put_nowait, line)

        try:
            eng = EngineAdapter(on_line)
        except EngineError as e:
            await self.send({"type": "error", "message": f"cannot start the engine: {e}"})
            return False
        self.engine, self.ready, self.engine_variant, self.engine_skill = eng, False, None, None
        self.engine_options = set()
        self.searches.clear()
        eng.send("uci")
        self._set_variant()
        eng.send("isready")
        self.pump_task = asyncio.create_task(self._pump(eng, q))
        return True

    def _set_variant(self):
        if self.engine_variant != self.game.variant:
            self.engine.send(f"setoption name UCI_Variant value {self.game.variant}")
            self.engine.send("ucinewgame")
            self.engine_variant = self.game.variant

    async def _set_skill(self, want: str) -> None:
        """Skill Level for play (the game's setting; analysis always at full strength)."""
        skill = self.game.skill if (want == "play" and self.game.skill is not None) else 20
        if skill == self.engine_skill:
            return
        if "Skill Level" not in self.engine_options:
            if skill != 20:
                await self.send({"type": "error", "message": "this engine has no Skill Level option; "
                                 "it plays at full strength"})
            self.engine_skill = skill
            return
        self.engine.send(f"setoption name Skill Level value {skill}")
        self.engine_skill = skill

    def kill_engine(self) -> None:
        eng, self.engine = self.engine, None
        self.searches.clear()
        self.ready = False
        if eng is not None:
            eng.kill()
            self.hub.slot_freed()

    async def _pump(self, eng: EngineAdapter, q: asyncio.Queue):
        while True:
            line = await q.get()
            if eng is not self.engine:      # killed by us: drain silently
                if line is None:
                    return
                continue
            try:
                if line is None:
                    await self._engine_died(eng)
                    return
                await self._engine_line(line)
            except Exception:
                log.exception("engine line %r", line)

    async def _engine_died(self, eng):
        code = eng.returncode()
        self.kill_engine()
        self.restarts += 1
        await self.send({"type": "engine_died", "message":
                         f"the engine stopped unexpectedly (exit status {code}){eng.stderr_text()}; "
                         f"starting a new one"})
        if await self.ensure_engine():
            await self.think()

    async def _engine_line(self, line: str):
        tok = line.split()
        if not tok:
            return
        if tok[0] == "option" and "name" in tok:
            name = " ".join(tok[tok.index("name") + 1: tok.index("type") if "type" in tok else len(tok)])
            self.engine_options.add(name)
        elif tok[0] == "readyok" and not self.ready:
            self.ready = True
            await self.send({"type": "engine_ready", **self.engine_info()})
            await self.think()
        elif tok[0] == "info":
            head = self.searches[0] if self.searches else None
            if head is None or head.cancelled or head.version != self.game.version:
                return
            info = parse_info(tok)
            if "pv" not in info and "score" not in info:
                return
            await self.send({"type": "info", "kind": head.kind, **self._info_json(info)})
        elif tok[0] == "bestmove":
            head = self.searches.popleft() if self.searches else None
            if head is None or head.cancelled or head.kind != "play" or head.version != self.game.version:
                return
            elapsed = int((time.monotonic() - head.started) * 1000)
            if len(tok) < 2 or tok[1] in ("(none)", "0000"):
                return
            try:
                info = self.game.play(tok[1])
            except GameError as e:
                await self.send({"type": "error", "message": f"engine move rejected: {e}"})
                return
            self.last_active = time.monotonic()
            await self.send_state(engine_move=info, engine_ms=elapsed)
            await self.think()

    def _info_json(self, info: dict) -> dict:
        g = self.game
        out = {k: info[k] for k in ("depth", "seldepth", "nodes", "nps", "time", "bound") if k in info}
        out["multipv"] = info.get("multipv", 1)
        sign = 1 if g.pos.turn == 0 else -1
        if "score" in info:
            kind, v = info["score"]
            out["score"] = {"kind": kind, "value": v, "white": v * sign}
        pv_uci, pv_san, pv_fens = [], [], []
        pos = g.pos
        for u in info.get("pv", [])[:MAX_PV]:
            try:
                mv = pos.parse_uci(u)
            except ValueError:
                break
            pv_san.append(pos.san(mv))
            pv_uci.append(u)
            pos._push(mv)
            pv_fens.append(pos.fen())
        for _ in pv_uci:
            pos.pop()
        out.update(pv=pv_uci, pv_san=pv_san, pv_fens=pv_fens, fen=pos.fen(), ply=g.ply)
        return out

    def stop(self) -> None:
        live = [s for s in self.searches if not s.cancelled]
        for s in live:
            s.cancelled = True
        if live and self.engine is not None:
            self.engine.send("stop")

    async def think(self) -> None:
        """Start what the engine should do now: play its move, analyse, or nothing."""
        g = self.game
        self.stop()
        want = "play" if g.engine_to_move() else "analyse" if (self.analysing and g.result is None) else None
        if want is None:
            if g.human != "both" and g.result is None:
                await self.ensure_engine()      # start it now, so the first reply does not wait for it
            return
        if not await self.ensure_engine():
            return
        if not self.ready:      # the engine is starting: readyok calls think() again
            return
        eng = self.engine
        self._set_variant()
        await self._set_skill(want)
        if want == "analyse":
            eng.send(f"setoption name MultiPV value {self.multipv}")
        elif self.multipv != 1:
            eng.send("setoption name MultiPV value 1")
        moves = " ".join(g.ucis)
        eng.send(f"position fen {g.fens[0]}" + (f" moves {moves}" if moves else ""))
        lim = g.limits
        if want == "analyse":
            go = "go infinite"
        elif lim["kind"] == "depth":
            go = f"go depth {lim['depth']}"
        elif lim["kind"] == "movetime":
            go = f"go movetime {lim['movetime']}"
        else:
            c = g.clocks()
            inc = int(lim["inc"] * 1000)
            go = f"go wtime {int(c[0] * 1000)} btime {int(c[1] * 1000)} winc {inc} binc {inc}"
        self.searches.append(Search(want, g.version, g.pos.fen()))
        eng.send(go)
        await self.send({"type": "thinking", "kind": want, "go": go})

    # ------------------------------------------------------------------ commands
    async def handle(self, msg: dict) -> None:
        """One message from a page (already a dict)."""
        kind = msg.get("type")
        g = self.game
        self.last_active = time.monotonic()
        if kind == "move":
            g.play(msg.get("uci"))
        elif kind == "new":
            self.game = Game(msg.get("variant", "chess"), msg.get("fen") or None, msg.get("human", "white"),
                             msg.get("limits"), msg.get("skill"))
        elif kind == "takeback":
            plies = msg.get("plies", 1)
            self.stop()
            g.takeback(plies)
        elif kind == "resign":
            g.resign(msg.get("side"))
        elif kind == "fen":
            g.set_fen(msg.get("fen"))
        elif kind == "pgn":
            self.game = Game.from_pgn(msg.get("pgn"), human=msg.get("human", "both"), limits=g.limits)
        elif kind == "settings":
            human = msg.get("human", g.human)
            if human not in ("white", "black", "both", "none"):
                raise GameError("side must be one of white, black, both, none")
            limits = parse_limits(msg.get("limits", g.limits))
            g.human, g.limits = human, limits
            g._bump()
        elif kind == "analyse":
            on = msg.get("on", True)
            mpv = msg.get("multipv", self.multipv)
            if not isinstance(on, bool):
                raise GameError("on must be true or false")
            if isinstance(mpv, bool) or not isinstance(mpv, int) or not 1 <= mpv <= 5:
                raise GameError("multipv must be an integer from 1 to 5")
            self.analysing, self.multipv = on, mpv
            await self.send({"type": "analysis", "on": on, "multipv": mpv})
            await self.think()
            return
        elif kind == "stop":
            self.analysing = False
            self.stop()
            await self.send({"type": "analysis", "on": False, "multipv": self.multipv})
            return
        elif kind == "promotions":
            await self.send({"type": "promotions", "from": msg.get("from"), "to": msg.get("to"),
                             **g.promotions(msg.get("from"), msg.get("to"))})
            return
        elif kind == "engine":
            await self.send({"type": "engine", **self.engine_info()})
            return
        elif kind == "ping":
            await self.send({"type": "pong", "t": msg.get("t")})
            return
        else:
            raise GameError(f"unknown message type {kind!r}")
        await self.send_state()
        await self.think()


class Hub:
    """Every session of the server, the engine limit and the idle reaper."""

    def __init__(self, max_engines: int | None = None, idle_timeout: float = 900.0):
        self.max_engines = max_engines or os.cpu_count() or 1
        self.idle_timeout = idle_timeout
        self.sessions: dict[str, Session] = {}
        self.waiting: list[Session] = []     # sessions that want an engine, first come first served
        self.closing = False

    def slot_freed(self) -> None:
        """An engine stopped: give its slot to the longest-waiting open game."""
        while self.waiting and not self.closing:
            s = self.waiting.pop(0)
            if s.sockets and s.engine is None and s.id in self.sessions:
                asyncio.get_running_loop().create_task(s.think())
                return

    def live_engines(self) -> int:
        return sum(1 for s in self.sessions.values() if s.engine is not None)

    def new_session(self, game: Game) -> Session:
        if len(self.sessions) >= MAX_GAMES:
            self.reap(force=True)
        s = Session(self, game)
        self.sessions[s.id] = s
        return s

    def reap(self, force: bool = False) -> None:
        now = time.monotonic()
        for sid, s in list(self.sessions.items()):
            idle = now - s.last_active
            if s.engine is not None and idle > self.idle_timeout and not s.analysing:
                s.kill_engine()
            if not s.sockets and (idle > self.idle_timeout or force):
                s.kill_engine()
                del self.sessions[sid]

    async def reaper(self):
        while True:
            await asyncio.sleep(min(1.0, self.idle_timeout / 2))
            self.reap()
            for s in list(self.sessions.values()):
                if s.game.check_flag():
                    s.stop()
                    await s.send_state()

    def shutdown(self):
        self.closing = True
        for s in self.sessions.values():
            s.kill_engine()


# ---------------------------------------------------------------------------- HTTP
def _err(msg: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": msg}, status_code=status)


async def _json_body(request) -> dict:
    body = await request.body()
    if len(body) > MAX_MESSAGE:
        raise GameError("request too large")
    if not body:
        return {}
    try:
        d = json.loads(body)
    except ValueError:
        raise GameError("request body is not valid JSON") from None
    if not isinstance(d, dict):
        raise GameError("request body must be a JSON object")
    return d


def _same_origin(headers) -> bool:
    """False for a request a page from another site sent (browsers always send Origin on
    WebSockets and POSTs; tools such as curl send none). WebSockets ignore the
    same-origin policy, so without this any web page could drive the board."""
    origin = headers.get("origin")
    if not origin or origin == "null":
        return origin is None
    return urlsplit(origin).netloc == headers.get("host", "")


def create_app(max_engines: int | None = None, idle_timeout: float = 900.0, watch_path: str | None = None,
               allowed_hosts: list[str] | None = None) -> Starlette:
    """The application. ``allowed_hosts`` (e.g. the loopback names) rejects other Host
    headers, which stops DNS-rebinding pages from reaching a local server."""
    hub = Hub(max_engines, idle_timeout)

    def session(request) -> Session:
        s = hub.sessions.get(request.path_params["gid"])
        if s is None:
            raise KeyError("no such game (it may have expired; start a new one)")
        return s

    def api(fn):
        async def wrapped(request):
            if request.method == "POST" and not _same_origin(request.headers):
                return _err("cross-site request refused", 403)
            try:
                return await fn(request)
            except KeyError as e:
                return _err(e.args[0] if e.args else "not found", 404)
            except GameError as e:
                return _err(str(e))
            except Exception:
                log.exception("API error")
                return _err("internal error (see the server log)", 500)
        return wrapped

    async def index(request):
        return FileResponse(os.path.join(STATIC_DIR, "index.html"), headers={"Cache-Control": "no-cache"})

    @api
    async def list_variants(request):
        return JSONResponse({"variants": [variant_info(n) for n in variants.names()],
                             "watch": watch_path})

    @api
    async def server_status(request):
        return JSONResponse({"games": len(hub.sessions), "open_games": sum(1 for x in hub.sessions.values() if x.sockets),
                             "engines": hub.live_engines(), "max_engines": hub.max_engines,
                             "waiting": len(hub.waiting),
                             "sessions": [{"sockets": len(x.sockets), "engine": x.engine is not None,
                                           "human": x.game.human, "analysing": x.analysing}
                                          for x in hub.sessions.values() if x.sockets or x.engine]})

    @api
    async def new_game(request):
        d = await _json_body(request)
        g = Game(d.get("variant", "chess"), d.get("fen") or None, d.get("human", "white"), d.get("limits"),
                 d.get("skill"))
        s = hub.new_session(g)
        return JSONResponse({"id": s.id, "state": g.state()})

    @api
    async def get_game(request):
        return JSONResponse(session(request).game.state())

    @api
    async def legal(request):
        return JSONResponse({"legal": session(request).game.legal()})

    @api
    async def promotions(request):
        q = request.query_params
        return JSONResponse(session(request).game.promotions(q.get("from"), q.get("to")))

    @api
    async def engine_state(request):
        return JSONResponse(session(request).engine_info())

    def action(name):
        @api
        async def run(request):
            s = session(request)
            d = await _json_body(request)
            d["type"] = name
            await s.handle(d)
            return JSONResponse(s.game.state())
        return run

    @api
    async def export_pgn(request):
        return PlainTextResponse(session(request).game.pgn(), media_type="application/x-chess-pgn")

    async def game_ws(ws: WebSocket):
        if not _same_origin(ws.headers):
            await ws.close(code=1008)
            return
        await ws.accept()
        s = hub.sessions.get(ws.path_params["gid"])
        if s is None:
            await ws.send_json({"type": "error", "fatal": True,
                                "message": "no such game (it may have expired; start a new one)"})
            await ws.close()
            return
        s.sockets.add(ws)
        s.last_active = time.monotonic()
        try:
            await ws.send_json({"type": "state", "id": s.id, "state": s.game.state()})
            await s.think()
            while True:
                raw = await ws.receive_text()
                try:
                    if len(raw) > MAX_MESSAGE:
                        raise GameError("message too large")
                    try:
                        msg = json.loads(raw)
                    except ValueError:
                        raise GameError("message is not valid JSON") from None
                    if not isinstance(msg, dict):
                        raise GameError("message must be a JSON object")
                    await s.handle(msg)
                except GameError as e:
                    await ws.send_json({"type": "error", "message": str(e), "state": s.game.state()})
                except (WebSocketDisconnect, RuntimeError):
                    raise
                except Exception:
                    log.exception("message %r", raw[:200])
                    await ws.send_json({"type": "error", "message": "internal error (see the server log)"})
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            s.sockets.discard(ws)
            if not s.sockets:
                s.analysing = False
                if s in hub.waiting:
                    hub.waiting.remove(s)
                s.kill_engine()

    async def watch_ws(ws: WebSocket):
        if not _same_origin(ws.headers):
            await ws.close(code=1008)
            return
        await ws.accept()
        path = ws.query_params.get("path") or watch_path
        journal = ws.query_params.get("journal") or None
        try:
            await W.follow(ws, path, journal)
        except (WebSocketDisconnect, RuntimeError):
            pass

    @contextlib.asynccontextmanager
    async def lifespan(app):
        task = asyncio.create_task(hub.reaper())
        try:
            yield
        finally:
            task.cancel()
            hub.shutdown()

    routes = [
        Route("/", index),
        Route("/api/variants", list_variants),
        Route("/api/status", server_status),
        Route("/api/games", new_game, methods=["POST"]),
        Route("/api/games/{gid}", get_game),
        Route("/api/games/{gid}/legal", legal),
        Route("/api/games/{gid}/promotions", promotions),
        Route("/api/games/{gid}/engine", engine_state),
        Route("/api/games/{gid}/pgn", export_pgn, methods=["GET"]),
        *[Route(f"/api/games/{{gid}}/{n}", action(n), methods=["POST"])
          for n in ("move", "takeback", "resign", "fen", "pgn", "settings", "analyse", "stop")],
        WebSocketRoute("/ws/game/{gid}", game_ws),
        WebSocketRoute("/ws/watch", watch_ws),
        Mount("/static", StaticFiles(directory=STATIC_DIR), name="static"),
    ]
    middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts)] if allowed_hosts else []
    app = Starlette(routes=routes, lifespan=lifespan, middleware=middleware)
    app.state.hub = hub
    return app
