"""XBoard / CECP v2 front end (WinBoard, XBoard, Cute Chess).

Reference: the Chess Engine Communication Protocol v2 (Tim Mann, H.G. Muller)
and what Cute Chess, XBoard and Sjaak II send. Implemented:

* ``protover 2`` -> ``feature done=0``, the feature line (ping setboard usermove
  time memory smp analyze, variants normal/grand/knightrelay), option features, and
  ``feature done=1`` once the warm-up has finished (the engine can search);
  ``pong`` also waits for the warm-up.
* ``new``, ``variant V`` (``knightrelay`` also sends ``setup``/``piece`` lines
  so XBoard can show it), ``force``, ``go``, ``usermove M``, ``setboard FEN``
  (holdings brackets and short forms accepted), ``level MPS BASE INC`` (BASE in
  minutes or ``m:ss``, fractional INC), ``st``, ``sd``, ``time``/``otim``
  (centiseconds), ``ping``/``pong``, ``?``, ``undo``, ``remove``, ``result``,
  ``post``/``nopost``, ``hard``/``easy`` (pondering), ``memory``, ``cores N``
  (search threads, announced by ``smp=1``; above 64 uses 64; like ``memory``,
  applied from the next search on), ``option`` (``Move Overhead``, ``MultiPV``, ``Clear Hash``,
  ``Use NNUE``, ``EvalFile``: as the UCI options), ``analyze``/``exit``/``.``,
  ``quit``; ``accepted rejected computer name rating random egtpath hint bk
  draw nps ics white black`` are accepted and ignored.
* Moves in coordinate notation; **on 10-rank boards ranks count from 0**
  (CECP: UCI ``e3e5`` is ``e2e4``), on 8x8 from 1.
* A bare move without ``usermove`` (Cute Chess's dummy ``b2b3``) is an unknown
  command (``Error (unknown command): b2b3``); only a real illegal ``usermove``
  gets ``Illegal move: M``.
* Thinking output ``ply score time(cs) nodes pv`` (mate = +-(100000 + N)) when
  ``post`` is on and always in analysis; result claims (``1-0 {White mates}``,
  ``1/2-1/2 {Stalemate}``, ...) after the engine's move or the opponent's move
  that ends the game.

While the engine thinks on move, ``ping`` is answered after the move; ``?``
moves now; commands that change the game (``force``, ``new``, ``result``,
``usermove``, ``setboard``, ``undo`` ...) stop the search and drop its move
first. While pondering, ``ping`` is answered at once and the predicted
``usermove`` turns the ponder search into the real one (``ponderhit``).
"""
from __future__ import annotations

import re

from engine import __version__
import variants as _variants
from .session import (Backend, canonical_variant, HASH_MIN, HASH_MAX, THREADS_MIN, THREADS_MAX, OVERHEAD_MIN,
                      OVERHEAD_MAX, OVERHEAD_DEFAULT, MULTIPV_MIN, MULTIPV_MAX, STOP_TIMEOUT, USE_NNUE_DEFAULT,
                      EVALFILE_DEFAULT, sane_move, king_capture)
from .common import clean, log, log_exception

MATE_BASE = 100000
DEFAULT_MOVETIME = 5000   # ms per move when the GUI gave neither level, st, time nor sd

FEATURES = (f'feature myname="Cardinal {__version__}" ping=1 setboard=1 usermove=1 time=1 draw=0 reuse=1 '
            'sigint=0 sigterm=0 colors=0 san=0 nps=0 memory=1 smp=1 analyze=1 variants="' + ",".join(v.xboard for v in _variants.VARIANTS.values()) + '"')
OPTION_FEATURES = (
    f'feature option="Move Overhead -spin {OVERHEAD_DEFAULT} {OVERHEAD_MIN} {OVERHEAD_MAX}"',
    f'feature option="MultiPV -spin 1 {MULTIPV_MIN} {MULTIPV_MAX}"',
    'feature option="Clear Hash -button"',
    f'feature option="Use NNUE -check {int(USE_NNUE_DEFAULT)}"',
    f'feature option="EvalFile -file {EVALFILE_DEFAULT}"',
)

# Commands processed at once even while a search runs (they change nothing the search uses now).
HARMLESS = {"time", "otim", "post", "nopost", "hard", "level", "st", "sd", "memory", "option", "cores",
            "egtpath", "computer", "name", "rating", "random", "accepted", "rejected", "xboard", "hint",
            "bk", "draw", "nps", "ics", "white", "black", "protover", "."}
IGNORED = {"accepted", "rejected", "computer", "name", "rating", "random", "egtpath", "hint",
           "bk", "draw", "nps", "ics", "white", "black", "xboard"}
CLAIMS = {
    "stalemate": "1/2-1/2 {Stalemate}",
    "repetition": "1/2-1/2 {Draw by repetition}",
    "fifty": "1/2-1/2 {Draw by 50-move rule}",
    "insufficient": "1/2-1/2 {Insufficient material}",
}


class XBError(ValueError):
    """``Error (<reason>): <command>``; ``args[0]`` is the reason."""


def format_thinking(info: dict, pos, zero_based: bool) -> str:
    """CECP thinking output ``ply score time(cs) nodes pv`` from an ``on_info`` dict."""
    kind, val = info.get("score") or ("cp", 0)
    if kind == "mate":
        score = MATE_BASE + int(val) if val > 0 else -MATE_BASE + int(val)
    else:
        score = int(val)
    pv = " ".join(cecp_move(str(m), zero_based) for m in (info.get("pv") or []))
    return (f"{int(info.get('depth') or 0)} {score} {int(info.get('time') or 0) // 10} "
            f"{int(info.get('nodes') or 0)} {pv}").rstrip()


def cecp_move(uci: str, zero_based: bool) -> str:
    """A UCI move string in CECP form: on 10-rank boards ranks count from 0 (``e3e5`` -> ``e2e4``)."""
    if not zero_based:
        return uci
    return re.sub(r"[0-9]+", lambda m: str(int(m.group()) - 1), uci)


def parse_base(text: str) -> int:
    """``level`` BASE (minutes, or ``m:ss``) in ms; ValueError if malformed."""
    if ":" in text:
        m, _, s = text.partition(":")
        if not re.fullmatch(r"[0-9]+", m) or not re.fullmatch(r"[0-9]+(\.[0-9]*)?", s):
            raise ValueError(text)
        ms = int(m) * 60000 + float(s) * 1000
    else:
        if not re.fullmatch(r"[0-9]+(\.[0-9]*)?|\.[0-9]+", text):
            raise ValueError(text)
        ms = float(text) * 60000
    return int(round(ms))


class XBoardHandler:
    """State of one CECP session; :meth:`handle` takes one input line, :meth:`event` a search result."""

    def __init__(self, out, inp, backend: Backend):
        self.out = out
        self.inp = inp
        self.backend = backend
        backend.out_error = lambda msg: out.send(f"# error: {clean(msg)}")
        backend.out_note = lambda msg: out.send(f"# {clean(msg)}")
        self.variant = "chess"
        self.pos = None
        self.force = False
        self.engine_side = 1
        self.post = False
        self.ponder = False
        self.analyzing = False
        self.mps = 0
        self.base_ms = None
        self.inc_ms = 0
        self.st_ms = None
        self.sd = None
        self.my_time = None
        self.opp_time = None
        self.search = None          # dict(kind='move'|'ponder'|'analyze', id, pos, ponder_move)
        self.search_id = 0
        self.deferred: list[str] = []
        self.commands = {
            "protover": self.cmd_protover, "new": self.cmd_new, "variant": self.cmd_variant,
            "force": self.cmd_force, "go": self.cmd_go, "usermove": self.cmd_usermove,
            "setboard": self.cmd_setboard, "level": self.cmd_level, "st": self.cmd_st, "sd": self.cmd_sd,
            "time": self.cmd_time, "otim": self.cmd_otim, "ping": self.cmd_ping, "?": self.cmd_movenow,
            "undo": self.cmd_undo, "remove": self.cmd_remove, "result": self.cmd_result,
            "post": self.cmd_post, "nopost": self.cmd_nopost, "hard": self.cmd_hard, "easy": self.cmd_easy,
            "memory": self.cmd_memory, "cores": self.cmd_cores, "option": self.cmd_option, "analyze": self.cmd_analyze,
            "exit": self.cmd_exit, ".": self.cmd_dot,
        }

    # ------------------------------------------------------------ plumbing
    def handle(self, line: str):
        words = line.split()
        if not words:
            return True
        cmd = words[0]
        s = self.search
        if s is not None:
            kind = s["kind"]
            if kind == "move":
                if cmd == "ping" or (self.deferred and cmd not in ("?", "quit")):
                    # pong after the move (CECP: ping while on move); a ping is a barrier, so
                    # later commands (except '?' and quit) wait behind it, in order
                    self.deferred.append(line)
                    return True
                if cmd == "go":
                    return True                       # already thinking
                if cmd in self.commands and cmd not in HARMLESS and cmd != "?" or cmd == "quit":
                    self.abort()
            elif kind == "ponder":
                if cmd == "usermove" and self._ponder_hit(words):
                    return True
                if cmd == "?":
                    return True
                if cmd in self.commands and cmd not in HARMLESS and cmd != "ping" or cmd == "quit":
                    self.abort()
            else:   # analyze
                if cmd in self.commands and cmd not in HARMLESS and cmd not in ("ping", ".", "?") \
                        or cmd == "quit":
                    self.abort()
        if cmd == "quit":
            return False
        self.dispatch(line, words)
        if cmd != "xboard":
            self.backend.start_warmup()   # after `protover`'s features are out (nothing heavy before)
        if self.analyzing and self.search is None:
            self.start_analysis()
        return True

    def dispatch(self, line: str, words: list[str]) -> None:
        cmd = words[0]
        fn = self.commands.get(cmd)
        if fn is None:
            if cmd in IGNORED:
                return
            self.out.send(f"Error (unknown command): {clean(line)}")
            return
        try:
            fn(words[1:])
        except XBError as e:
            self.out.send(f"Error ({clean(e.args[0], 120)}): {clean(line)}")

    def report_error(self, payload) -> None:
        if isinstance(payload, str):
            self.out.send(f"Error (internal error): {clean(payload)}")

    def shutdown(self) -> None:
        s = self.search
        if s is not None and s["kind"] == "move" and not s["discard"]:
            self.cmd_movenow([])       # end of input while on move: the move still goes out (as UCI's bestmove)
            s = self.search
        if s is not None:
            s["discard"] = True
            self.backend.stop()

    def _position(self):
        if self.pos is None:
            if not self.backend.wait_core():
                raise XBError(self.backend.core_error or "engine not ready")
            from engine.rules.position import Position   # lazy, for start-up speed: numba
            self.pos = Position.from_fen(None, self.variant)
        return self.pos

    @property
    def zero_based(self) -> bool:
        return _variants.get(self.variant).height == 10

    # ------------------------------------------------------------ searches
    def _start(self, kind: str, pos, limits, ponder_move=None) -> None:
        if not self.backend.wait_core():
            return
        self.search_id += 1
        sid = self.search_id
        p = pos.copy()
        zb = self.zero_based
        out = self.out

        def on_info(info, p=p):
            try:
                if (self.post or kind == "analyze") and (info.get("multipv") or 1) == 1 and not info.get("bound"):
                    out.send(format_thinking(info, p, zb))
            except Exception:
                log_exception("thinking output")

        def on_done(best, ponder, sid=sid):
            self.inp.post(("done", sid, best, ponder))

        self.search = {"kind": kind, "id": sid, "pos": p, "ponder_move": ponder_move, "discard": False}
        try:
            self.backend.start_search(p.copy(), limits, on_info, on_done)
        except Exception:
            self.search = None
            raise

    def abort(self) -> None:
        """Stop the running search and drop its result; answer pings deferred meanwhile."""
        s = self.search
        if s is None:
            return
        s["discard"] = True
        self.backend.stop()
        got = self.inp.take_until(lambda ev: ev[0] == "done" and ev[1] == s["id"], STOP_TIMEOUT)
        if got is None:
            log("search did not stop in time; dropping it")
        self.search = None
        self._flush_deferred()

    def _flush_deferred(self) -> None:
        pending, self.deferred = self.deferred, []
        for line in pending:
            self.handle(line)   # the same rules as when read (a new search may defer again)

    def event(self, payload):
        if not (isinstance(payload, tuple) and payload and payload[0] == "done"):
            return True
        _, sid, best, ponder = payload
        s = self.search
        if s is None or s["id"] != sid:
            return True
        self.search = None
        if s["discard"] or s["kind"] != "move":
            self._flush_deferred()
            return True
        pos = self._position()
        best = sane_move(pos, best)
        if best is None:
            self.claim_if_over(pos)
        else:
            self.out.send(f"move {pos.uci(best, self.zero_based)}")
            if king_capture(pos, best):
                self.force = True     # the game is over (the GUI sent a position with the mover's enemy in check)
            else:
                pos.push(best)
                if not self.claim_if_over(pos):
                    self._flush_deferred()
                    self.start_pondering(ponder)
                    return True
        self._flush_deferred()
        return True

    def time_limits(self, pos, ponder: bool = False):
        """Limits for the side to move in ``pos`` (the engine's side) from level/st/sd/time/otim."""
        kw = {}
        if self.st_ms is not None:
            kw["movetime"] = self.st_ms
        else:
            mine = self.my_time if self.my_time is not None else self.base_ms
            theirs = self.opp_time if self.opp_time is not None else self.base_ms
            if mine is not None:
                theirs = mine if theirs is None else theirs
                if pos.turn == 0:
                    kw["wtime"], kw["btime"] = mine, theirs
                else:
                    kw["wtime"], kw["btime"] = theirs, mine
                kw["winc"] = kw["binc"] = self.inc_ms
                if self.mps > 0:
                    done = len(pos.move_stack) // 2
                    kw["movestogo"] = self.mps - done % self.mps
            elif self.sd is None:
                kw["movetime"] = DEFAULT_MOVETIME
        if self.sd is not None:
            kw["depth"] = self.sd
        return self.backend.make_limits(**kw, ponder=ponder)

    def think(self) -> None:
        pos = self._position()
        if self.claim_if_over(pos):
            return
        self.engine_side = pos.turn
        self._start("move", pos, self.time_limits(pos))

    def start_pondering(self, ponder) -> None:
        if not self.ponder or self.force or self.analyzing or ponder is None:
            return
        pos = self._position()
        if ponder not in pos.legal_moves():
            return
        pp = pos.copy()
        pp.push(ponder)
        if pp.status() != "ongoing":
            return
        self._start("ponder", pp, self.time_limits(pp, ponder=True), ponder_move=ponder)

    def _ponder_hit(self, words) -> bool:
        s = self.search
        if len(words) != 2:
            return False
        pos = self._position()
        try:
            mv = pos.parse_uci(words[1], self.zero_based)
        except ValueError:
            return False
        if mv != s["ponder_move"]:
            return False
        pos.push(mv)
        s["kind"] = "move"
        self.backend.ponderhit()
        return True

    def start_analysis(self) -> None:
        pos = self._position()
        if pos.status() in ("checkmate", "stalemate") or not pos.legal_moves():
            return
        self._start("analyze", pos, self.backend.make_limits(infinite=True))

    def claim_if_over(self, pos) -> bool:
        """Send the result claim if the game in ``pos`` is over by rule; True if it is."""
        st = pos.status()
        if st == "ongoing":
            return False
        if st == "checkmate":
            self.out.send("0-1 {Black mates}" if pos.turn == 0 else "1-0 {White mates}")
        else:
            self.out.send(CLAIMS.get(st, "1/2-1/2 {Draw}"))
        return True

    # ------------------------------------------------------------ commands
    def cmd_protover(self, args) -> None:
        self.out.send("feature done=0")
        self.out.send(FEATURES)
        for f in OPTION_FEATURES:
            self.out.send(f)
        # done=1 once the engine can search, at most 28 s after the start on a cold cache:
        # done=0 holds the GUI's start-up timer (Cute Chess: up to 35 s); `ping` waits for the rest.
        self.backend.hold_handshake()
        if not self.backend.cold:
            self.backend.wait_ready()
        self.out.send("feature done=1")

    def cmd_new(self, args) -> None:
        self.variant = "chess"
        self.pos = None
        self.force = False
        self.engine_side = 1
        self.sd = None
        self.st_ms = None
        self.my_time = self.opp_time = None
        self.backend.request_clear()
        self.backend.apply_pending()

    def cmd_variant(self, args) -> None:
        if len(args) != 1:
            raise XBError("expected one variant name")
        v = canonical_variant(args[0])
        if v is None:
            raise XBError("unsupported variant")
        self.variant = v
        self.pos = None
        rec = _variants.get(v)
        if rec.xboard_pieces:   # a variant XBoard does not know: define it (engine-defined variant)
            letters = rec.letters + rec.letters.lower()
            self.out.send(f"setup ({letters}) {rec.width}x{rec.height}+0_fairy {rec.start_fen}")
            for line in rec.xboard_pieces:
                self.out.send(line)

    def cmd_force(self, args) -> None:
        self.force = True

    def cmd_go(self, args) -> None:
        self.force = False
        if self.analyzing:
            return
        self.think()

    def cmd_usermove(self, args) -> None:
        if len(args) != 1:
            raise XBError("expected one move")
        pos = self._position()
        try:
            mv, warning = pos.push_gui_move(args[0], self.zero_based)
        except ValueError:
            self.out.send(f"Illegal move: {clean(args[0], 40)}")
            return
        if warning:
            self.out.send(f"# warning: {clean(warning)}")
        if self.analyzing or self.force:
            return
        if self.claim_if_over(pos):
            return
        self.think()

    def cmd_setboard(self, args) -> None:
        if not args:
            raise XBError("missing FEN")
        if not self.backend.wait_core():
            raise XBError(self.backend.core_error or "engine not ready")
        from engine.rules.position import Position   # lazy, for start-up speed: numba
        try:
            pos = Position.from_fen(" ".join(args), self.variant)
        except ValueError as e:
            self.out.send(f"# setboard: {clean(str(e))}")
            raise XBError("illegal position") from None
        for w in pos.warnings:
            self.out.send(f"# warning: {clean(w)}")
        self.pos = pos

    def cmd_level(self, args) -> None:
        if len(args) != 3:
            raise XBError("expected level MPS BASE INC")
        try:
            mps = int(args[0])
            base = parse_base(args[1])
            inc = float(args[2])
        except ValueError:
            raise XBError("bad time control") from None
        if mps < 0 or not 0 <= inc < 1e6 or base > 10 ** 10:
            raise XBError("bad time control")
        self.mps, self.base_ms, self.inc_ms = mps, base, int(round(inc * 1000))
        self.st_ms = None

    def cmd_st(self, args) -> None:
        try:
            sec = float(args[0]) if len(args) == 1 else -1
        except ValueError:
            sec = -1
        if not 0 < sec < 1e7:
            raise XBError("expected st SECONDS")
        self.st_ms = int(round(sec * 1000))

    def cmd_sd(self, args) -> None:
        if len(args) != 1 or not re.fullmatch(r"[0-9]{1,9}", args[0]) or not 1 <= int(args[0]) <= 255:
            raise XBError("expected sd DEPTH (1..255)")
        self.sd = int(args[0])

    def _centiseconds(self, args) -> int:
        if len(args) != 1 or not re.fullmatch(r"-?[0-9]{1,15}", args[0]):
            raise XBError("expected centiseconds")
        return min(max(0, int(args[0])), 1 << 40) * 10

    def cmd_time(self, args) -> None:
        self.my_time = self._centiseconds(args)

    def cmd_otim(self, args) -> None:
        self.opp_time = self._centiseconds(args)

    def cmd_ping(self, args) -> None:
        if len(args) != 1:
            raise XBError("expected ping N")
        self.backend.wait_ping()      # pong means "ready to play": not before the warm-up is done
        if self.search is None:
            # hash resize/clear, and reading a network, now: not charged to the next move
            self.backend.apply_pending(self.variant)
        self.out.send(f"pong {clean(args[0], 40)}")

    def cmd_movenow(self, args) -> None:
        """``?``: move now; the move goes out before any later command is processed."""
        s = self.search
        if s is not None and s["kind"] == "move":
            self.backend.stop()
            got = self.inp.take_until(lambda ev: ev[0] == "done" and ev[1] == s["id"], STOP_TIMEOUT)
            if got is None:
                log("search did not stop in time after '?'")
                return
            self.event(got)

    def cmd_undo(self, args) -> None:
        self._take_back(1)

    def cmd_remove(self, args) -> None:
        self._take_back(2)

    def _take_back(self, n: int) -> None:
        pos = self._position()
        if len(pos.move_stack) < n:
            raise XBError("no move to undo")
        for _ in range(n):
            pos.pop()

    def cmd_result(self, args) -> None:
        self.force = True

    def cmd_post(self, args) -> None:
        self.post = True

    def cmd_nopost(self, args) -> None:
        self.post = False

    def cmd_hard(self, args) -> None:
        self.ponder = True

    def cmd_easy(self, args) -> None:
        self.ponder = False

    def cmd_memory(self, args) -> None:
        if len(args) != 1 or not re.fullmatch(r"[0-9]{1,9}", args[0]) or int(args[0]) < HASH_MIN:
            raise XBError("expected memory MB")
        self.backend.hash_mb = min(int(args[0]), HASH_MAX)

    def cmd_cores(self, args) -> None:
        if len(args) != 1 or not re.fullmatch(r"[0-9]{1,9}", args[0]) or int(args[0]) < THREADS_MIN:
            raise XBError("expected cores N")
        self.backend.threads = min(int(args[0]), THREADS_MAX)

    def cmd_option(self, args) -> None:
        text = " ".join(args)
        name, eq, value = text.partition("=")
        name = name.strip().lower()
        if name == "clear hash":
            self.backend.request_clear()
            return
        if name == "evalfile" and eq:
            self.backend.set_eval_file(value)
            return
        if name == "use nnue" and eq:
            if value.strip() not in ("0", "1"):
                raise XBError("bad option value")
            self.backend.use_nnue = value.strip() == "1"
            return
        if name not in ("move overhead", "multipv") or not eq:
            raise XBError("unknown option")
        try:
            v = int(value.strip())
        except ValueError:
            raise XBError("bad option value") from None
        if name == "move overhead":
            if not OVERHEAD_MIN <= v <= OVERHEAD_MAX:
                raise XBError("option value out of range")
            self.backend.move_overhead = v
        else:
            if not MULTIPV_MIN <= v <= MULTIPV_MAX:
                raise XBError("option value out of range")
            self.backend.multipv = v

    def cmd_analyze(self, args) -> None:
        self.analyzing = True     # the loop starts the analysis search

    def cmd_exit(self, args) -> None:
        self.analyzing = False

    def cmd_dot(self, args) -> None:
        pass
