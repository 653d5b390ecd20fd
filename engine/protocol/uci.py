"""UCI front end (the protocol Cute Chess, lichess-bot and most GUIs speak).

Reference: the UCI specification (Stefan Meyer-Kahlen, 2004) and what Cute
Chess and Fairy-Stockfish send. Implemented:

* ``uci`` -> ``id name Cardinal <version>``, ``id author``, options, ``uciok``.
  With a warm numba cache ``uciok`` goes out at once, before numpy/numba are
  imported, and the warm-up (about a second) runs behind it; with a cold cache
  ``uciok`` follows the compile, or at most 28 s after the start (GUIs allow far
  longer for ``uciok`` than for ``readyok``: Cute Chess 35 s against 15 s).
* ``isready`` -> ``readyok`` once the engine can search (blocks on the
  warm-up; during a search it answers at once).
* ``setoption name N [value V]``: ``UCI_Variant`` (chess, standard, normal and an empty value = chess,
  grand, knightrelay, capablanca; anything else -> ``info string error: unsupported variant X
  (known: ...)``), ``Hash`` (MiB), ``Threads`` (Lazy SMP search threads, 1..64), ``Move Overhead``
  (ms), ``Clear Hash``, ``Ponder``, ``MultiPV``, ``Skill Level``, ``Use NNUE`` (check: evaluate with
  the NNUE network) and ``EvalFile`` (its file; ``<default>``: ``variants/weights/<variant>.nnue``), read
  at the next ``isready`` or ``go`` (``info string NNUE evaluation using ...``, or one ``info string
  error`` line and the linear evaluation). Hash and Threads set during a search apply from the next
  search on. With the environment variable ``CARDINAL_TUNE=1``, also the search's tunable constants
  (:mod:`search.params`, spin options named as there, for SPSA): a value set applies from the next
  search on, without recompiling.
* ``ucinewgame``, ``position startpos|fen F [moves ...]`` (a bad FEN keeps the
  previous position; an illegal move keeps the moves before it, as Stockfish
  does; a command that repeats the previous one and adds moves, as GUIs send
  them during a game, plays only the added moves), ``go`` with ``wtime btime winc binc movestogo movetime depth nodes mate
  infinite ponder`` (depth and mate clamped to their range with a warning; if
  every limit was refused, a fixed move time instead of an endless search),
  ``go perft N`` (Stockfish format), ``stop``, ``ponderhit``, ``quit``; debug ``d`` and ``eval`` (with a
  network loaded, its output too).
* Output: ``info depth D seldepth S multipv K score cp X|mate N [lowerbound|upperbound]
  nodes N nps N time T hashfull H pv ...`` (the bound on an aspiration fail-high/low
  in long searches), ``bestmove X [ponder Y]``;
  ``bestmove (none)`` with an ``info string`` reason when there is no legal move.

Errors are ``info string error: ...`` lines; the state stays as it was.
"""
from __future__ import annotations

import re
import threading

from engine import __version__
import variants as _variants
from .session import (Backend, canonical_variant, HASH_MIN, HASH_MAX, HASH_DEFAULT, OVERHEAD_MIN,
                      OVERHEAD_MAX, OVERHEAD_DEFAULT, MULTIPV_MIN, MULTIPV_MAX, SKILL_MIN, SKILL_MAX, STOP_TIMEOUT,
                      THREADS_MIN, THREADS_MAX, THREADS_DEFAULT, USE_NNUE_DEFAULT, EVALFILE_DEFAULT,
                      board_lines, static_eval, eval_table, nnue_eval, sane_move)
from .common import clean, log, log_exception
from search.limits import MAX_DEPTH
from search import params as _params

AUTHOR = "the Cardinal developers"
PERFT_MAX = 12
INT_CAP = 1 << 53     # largest go parameter passed on (ms, nodes, plies)

OPTION_LINES = (
    f"option name Hash type spin default {HASH_DEFAULT} min {HASH_MIN} max {HASH_MAX}",
    "option name Clear Hash type button",
    f"option name Threads type spin default {THREADS_DEFAULT} min {THREADS_MIN} max {THREADS_MAX}",
    "option name Ponder type check default false",
    f"option name MultiPV type spin default 1 min {MULTIPV_MIN} max {MULTIPV_MAX}",
    f"option name Move Overhead type spin default {OVERHEAD_DEFAULT} min {OVERHEAD_MIN} max {OVERHEAD_MAX}",
    f"option name Skill Level type spin default {SKILL_MAX} min {SKILL_MIN} max {SKILL_MAX}",
    f"option name Use NNUE type check default {str(USE_NNUE_DEFAULT).lower()}",
    f"option name EvalFile type string default {EVALFILE_DEFAULT}",
    # Cute Chess switches a reused engine back to orthodox chess with 'standard' only if it is listed.
    "option name UCI_Variant type combo default chess " + " ".join(f"var {n}" for n in _variants.all_names()),
)

_GO_INT = {"wtime", "btime", "winc", "binc", "movestogo", "movetime", "depth", "nodes", "mate"}
_LIMITING = {"wtime", "btime", "movetime", "depth", "nodes"}   # any of these ends a search
FALLBACK_MOVETIME = 2000   # ms, when every limit of a `go` was refused


class UCIError(ValueError):
    """A command the engine cannot carry out; the message goes to ``info string error:``."""


def format_info(info: dict, pos) -> str:
    """One UCI ``info`` line from a Searcher ``on_info`` dict."""
    parts = ["info"]
    for key in ("depth", "seldepth", "multipv"):
        if info.get(key) is not None:
            parts += [key, str(int(info[key]))]
    sc = info.get("score")
    if sc is not None:
        parts += ["score", "mate" if sc[0] == "mate" else "cp", str(int(sc[1]))]
        if info.get("bound") == "lower":
            parts.append("lowerbound")
        elif info.get("bound") == "upper":
            parts.append("upperbound")
    for key in ("nodes", "nps", "time", "hashfull"):
        if info.get(key) is not None:
            parts += [key, str(int(info[key]))]
    pv = info.get("pv")
    if pv:
        parts += ["pv"] + [str(m) for m in pv]
    return " ".join(parts)


class UCIHandler:
    """State of one UCI session; :meth:`handle` takes one input line."""

    def __init__(self, out, inp, backend: Backend):
        self.out = out
        self.inp = inp
        self.backend = backend
        backend.out_error = lambda msg: out.send(f"info string error: {clean(msg)}")
        backend.out_note = lambda msg: out.send(f"info string {clean(msg)}")
        self.variant = "chess"
        self.pos = None               # None = start position of self.variant (built on first use)
        # (variant, head words, moves played, Position) of the last `position` command: the next
        # one that repeats its head and extends its moves plays only the new moves on a copy
        self._last_position = None
        self.ponder_option = False
        self.searching = False
        self.idle = threading.Event()
        self.idle.set()
        self.search_id = 0
        self.pending_none = None      # "bestmove (none)" held back until stop/ponderhit (go infinite/ponder)
        self.commands = {
            "uci": self.cmd_uci, "isready": self.cmd_isready, "setoption": self.cmd_setoption,
            "ucinewgame": self.cmd_ucinewgame, "position": self.cmd_position, "go": self.cmd_go,
            "stop": self.cmd_stop, "ponderhit": self.cmd_ponderhit, "d": self.cmd_d, "eval": self.cmd_eval,
            "debug": self.cmd_ignore, "register": self.cmd_ignore,
        }

    # ------------------------------------------------------------ plumbing
    def handle(self, line: str):
        words = line.split()
        if not words:
            return True
        cmd = words[0]
        if cmd == "quit":
            return False
        fn = self.commands.get(cmd)
        if fn is None:
            self.error(f"unknown command '{clean(cmd, 60)}'")
            return True
        try:
            fn(words[1:])
        except UCIError as e:
            self.error(str(e))
        return True

    def event(self, payload):
        return True

    def report_error(self, payload) -> None:
        self.error(f"internal error on '{clean(payload, 80)}' (details on stderr)")

    def error(self, msg: str) -> None:
        self.out.send(f"info string error: {clean(msg, 300)}")

    def warning(self, msg: str) -> None:
        self.out.send(f"info string warning: {clean(msg, 300)}")

    def shutdown(self) -> None:
        if self.searching:
            self.backend.stop()
            self.idle.wait(2.0)

    def _position(self):
        if self.pos is None:
            if not self.backend.wait_core():
                raise UCIError(self.backend.core_error or "engine not ready")
            from engine.rules.position import Position   # lazy, for start-up speed: numba
            self.pos = Position.from_fen(None, self.variant)
        return self.pos

    def _wait_idle(self) -> None:
        if self.pending_none:        # a held-back "bestmove (none)" belongs to the previous go
            self.out.send(self.pending_none)
            self.pending_none = None
        if self.searching:
            self.backend.stop()
            if not self.idle.wait(STOP_TIMEOUT):
                log("search did not stop in time; continuing without it")
                self.searching = False
                self.idle.set()

    # ------------------------------------------------------------ commands
    def cmd_ignore(self, args) -> None:
        pass

    def cmd_uci(self, args) -> None:
        self.out.send(f"id name Cardinal {__version__}")
        self.out.send(f"id author {AUTHOR}")
        for line in OPTION_LINES:
            self.out.send(line)
        if _params.tuning_enabled():     # the search's tunable constants, for SPSA (CARDINAL_TUNE=1)
            for line in _params.uci_option_lines():
                self.out.send(line)
        # A cold numba cache means 15-35 s of compiling. GUIs allow far more for `uciok`
        # (Cute Chess: 35 s) than for `readyok` (15 s), so the compile happens here first.
        self.backend.hold_handshake()
        self.out.send("uciok")

    def cmd_isready(self, args) -> None:
        if not self.backend.wait_ping():
            return
        if self.backend.core_error:
            self.error(self.backend.core_error)
        # a pending hash resize/clear, and reading a network, happen now, not inside the next go
        self.backend.apply_pending(self.variant)
        self.out.send("readyok")

    def cmd_setoption(self, args) -> None:
        # setoption name <id with spaces> [value <x with spaces>]
        if not args or args[0] != "name":
            raise UCIError("setoption: expected 'setoption name <id> [value <x>]'")
        if "value" in args[1:]:
            i = args.index("value", 1)
            name, value = " ".join(args[1:i]), " ".join(args[i + 1:])
        else:
            name, value = " ".join(args[1:]), None
        key = name.lower()
        if not key:
            raise UCIError("setoption: missing option name")
        if key == "uci_variant":
            # An empty value is orthodox chess: Cute Chess sends "UCI_Variant" with an empty value
            # for a 'standard' game when the engine lists 'standard' (its variantToUci maps
            # 'standard' to ""), also to an engine that played grand in its previous game.
            v = canonical_variant(value) if value else "chess"
            if v is None:
                raise UCIError(f"unsupported variant {clean(value, 60)} (known: {', '.join(_variants.all_names())})")
            self.variant = v
            self.pos = None
        elif key == "hash":
            self.backend.hash_mb = _int_option(name, value, HASH_MIN, HASH_MAX)
        elif key == "threads":
            self.backend.threads = _int_option(name, value, THREADS_MIN, THREADS_MAX)
        elif key == "move overhead":
            self.backend.move_overhead = _int_option(name, value, OVERHEAD_MIN, OVERHEAD_MAX)
        elif key == "multipv":
            self.backend.multipv = _int_option(name, value, MULTIPV_MIN, MULTIPV_MAX)
        elif key == "skill level":
            self.backend.skill_level = _int_option(name, value, SKILL_MIN, SKILL_MAX)
        elif key == "clear hash":
            self.backend.request_clear()
        elif key == "ponder":
            self.ponder_option = _bool_option(name, value)
        elif key == "use nnue":
            self.backend.use_nnue = _bool_option(name, value)
        elif key == "evalfile":
            self.backend.set_eval_file(value)
        elif _params.tuning_enabled() and name.upper() in _params.BY_NAME:
            try:
                self.backend.set_param(name.upper(), _params.BY_NAME[name.upper()].check(value))
            except ValueError as e:
                raise UCIError(f"setoption {e}") from None
        else:
            raise UCIError(f"unknown option '{clean(name, 60)}'")

    def cmd_ucinewgame(self, args) -> None:
        self.backend.request_clear()
        self.backend.apply_pending()
        self.pos = None

    def cmd_position(self, args) -> None:
        if not args:
            raise UCIError("position: expected 'startpos' or 'fen <FEN>'")
        if "moves" in args:
            i = args.index("moves")
            head, moves = args[:i], args[i + 1:]
        else:
            head, moves = args, []
        if not head:
            raise UCIError("position: expected 'startpos' or 'fen <FEN>' before 'moves'")
        if not self.backend.wait_core():
            raise UCIError(self.backend.core_error or "engine not ready")
        head, moves = tuple(head), tuple(moves)
        last = self._last_position
        if (last is not None and last[3] is self.pos and last[0] == self.variant and last[1] == head
                and moves[:len(last[2])] == last[2]):
            # The GUI's usual command: the previous one with the moves since. Its position (kept
            # unchanged: searches and `d` use copies, perft is told to drop it) is the full
            # replay of its moves, so playing the rest on a copy gives the full replay of all.
            pos = self.pos.copy()
            done = len(last[2])
        else:
            pos = self._start_position(head)
            done = 0
        # Like Stockfish and Fairy-Stockfish: the moves up to an illegal one are played and
        # the rest dropped, so a later `go` answers for the position the GUI was building.
        refused = None
        played = len(moves)
        for k in range(done, len(moves)):
            mv = moves[k]
            try:
                _, warning = pos.push_gui_move(mv)
            except ValueError as e:
                refused = f"move {k + 1} ({clean(mv, 20)}): {e}; playing from the position before it"
                played = k
                break
            if warning:
                pos.warnings.append(warning)
        for w in pos.warnings:
            self.out.send(f"info string warning: {w}")
        self.pos = pos
        self._last_position = (self.variant, head, moves[:played], pos)
        if refused:
            raise UCIError(refused)

    def _start_position(self, head):
        """The position a ``position`` command's words before ``moves`` name (``UCIError`` if none)."""
        from engine.rules.position import Position   # lazy, for start-up speed: numba
        if head[0] == "startpos" and len(head) == 1:
            return Position.from_fen(None, self.variant)
        if head[0] == "fen" and len(head) > 1:
            fen = " ".join(head[1:])
            try:
                return Position.from_fen(fen, self.variant)
            except ValueError as e:
                raise UCIError(f"bad FEN ({self.variant}): {e}") from None
        raise UCIError("position: expected 'startpos' or 'fen <FEN>' before 'moves'")

    def cmd_go(self, args) -> None:
        if args and args[0] == "perft":
            self._wait_idle()
            return self.perft(args[1:])
        from_limits = {}
        flags = set()
        i = 0
        bad = []
        while i < len(args):
            tok = args[i]
            if tok in _GO_INT:
                if i + 1 >= len(args):
                    bad.append(tok)
                    break
                try:
                    # clamped: a GUI's absurd value must not overflow the int64 search counters
                    from_limits[tok] = max(-INT_CAP, min(INT_CAP, int(float(args[i + 1]))))
                except (ValueError, OverflowError):
                    bad.append(f"{tok} {args[i + 1]}")
                i += 2
            elif tok in ("infinite", "ponder"):
                flags.add(tok)
                i += 1
            elif tok == "searchmoves":
                i += 1
                while i < len(args) and args[i] not in _GO_INT and args[i] not in ("infinite", "ponder"):
                    i += 1
                bad.append("searchmoves (not supported, searching all moves)")
            else:
                bad.append(tok)
                i += 1
        if bad:
            self.error(f"go: ignored {clean(' '.join(bad), 120)}")
        for k in ("wtime", "btime", "winc", "binc", "movetime", "nodes"):
            if k in from_limits and from_limits[k] < 0:
                from_limits[k] = 0
        v = from_limits.get("depth")
        if v is not None and not 1 <= v <= MAX_DEPTH:
            from_limits["depth"] = min(max(v, 1), MAX_DEPTH)
            self.warning(f"go: depth {v} out of range 1..{MAX_DEPTH}, using {from_limits['depth']}")
        refused = bool(bad)
        for k in ("movestogo", "mate"):
            if from_limits.get(k, 1) < 1:
                self.warning(f"go: {k} {from_limits.pop(k)} out of range, ignored")
                refused = True
        if refused and not (set(from_limits) & _LIMITING or flags):
            # a limit was refused and none is left: never search forever on a broken command
            from_limits["movetime"] = FALLBACK_MOVETIME
            self.warning(f"go: no valid limit left, searching {FALLBACK_MOVETIME} ms")
        self._wait_idle()
        pos = self._position()
        limits = self.backend.make_limits(**from_limits, infinite="infinite" in flags, ponder="ponder" in flags)
        self.start(pos, limits)

    def start(self, pos, limits) -> None:
        """Start searching ``pos`` (no search may be running)."""
        if not pos.opponent_in_check():
            legal = pos.legal_moves()
            if not legal:
                status = pos.status()
                why = status if status in ("checkmate", "stalemate") else f"no legal move ({status})"
                self.out.send(f"info string no legal move: {why}")
                if limits.infinite or limits.ponder:
                    self.pending_none = "bestmove (none)"
                else:
                    self.out.send("bestmove (none)")
                return
        self.search_id += 1
        sid = self.search_id
        p = pos.copy()
        out = self.out

        def on_info(info, p=p, sid=sid):
            try:
                out.send(format_info(info, p))
            except Exception:
                log_exception("info formatting")

        def on_done(best, ponder, p=p, sid=sid):
            try:
                best = sane_move(p, best)
                if best is None:
                    out.send("bestmove (none)")
                else:
                    line = f"bestmove {p.uci(best)}"
                    if ponder is not None:
                        line += f" ponder {p.uci(ponder)}"
                    out.send(line)
            except Exception:
                log_exception("bestmove")
                out.send("bestmove (none)")
            finally:
                if sid == self.search_id:
                    self.searching = False
                    self.idle.set()

        self.searching = True
        self.idle.clear()
        try:
            self.backend.start_search(p.copy(), limits, on_info, on_done)
        except Exception:
            self.searching = False
            self.idle.set()
            raise

    def cmd_stop(self, args) -> None:
        if self.pending_none:
            self.out.send(self.pending_none)
            self.pending_none = None
        if self.searching:
            self.backend.stop()

    def cmd_ponderhit(self, args) -> None:
        if self.pending_none:
            self.out.send(self.pending_none)
            self.pending_none = None
        if self.searching:
            self.backend.ponderhit()

    def perft(self, args) -> None:
        if len(args) != 1 or not re.fullmatch(r"[0-9]{1,9}", args[0]) or not 1 <= int(args[0]) <= PERFT_MAX:
            raise UCIError(f"go perft: expected a depth 1..{PERFT_MAX}")
        pos = self._position()
        self._last_position = None   # (perft plays and takes back moves on it: no longer a plain replay)
        total = 0
        for mv, n in pos.divide(int(args[0])):
            self.out.send(f"{mv}: {n}")
            total += n
        self.out.send("")
        self.out.send(f"Nodes searched: {total}")

    def cmd_d(self, args) -> None:
        pos = self._position()
        for line in board_lines(pos):
            self.out.send(line)
        self.out.send("")
        self.out.send(f"Variant: {pos.variant.name}")
        self.out.send(f"Fen: {pos.fen()}")
        self.out.send(f"Key: {pos.key & 0xFFFFFFFFFFFFFFFF:016X}")
        self.out.send(f"Side to move: {'white' if pos.turn == 0 else 'black'}"
                      f"{' (in check)' if pos.is_check() else ''}")
        self.out.send(f"Legal moves: {len(pos.legal_moves())}, status: {pos.status()}")

    def cmd_eval(self, args) -> None:
        """Stockfish's ``eval``: the static evaluation split by term (middle game, end game and
        tapered centipawns, White's view), then the total for the side to move."""
        pos = self._position()
        for line in eval_table(pos):
            self.out.send(f"info string {line}")
        cp = static_eval(pos)
        white = cp if pos.turn == 0 else -cp
        side = 'white' if pos.turn == 0 else 'black'
        self.out.send(f"info string eval {cp} cp for the side to move ({side}); {white:+d} cp for white")
        self.backend.select_net(pos.variant.name)
        net = self.backend.net
        if net is not None:
            from search.nnue import net_summary   # lazy, for start-up speed: numba
            cp = nnue_eval(net, pos)
            white = cp if pos.turn == 0 else -cp
            self.out.send(f"info string NNUE eval {cp} cp for the side to move ({side}); {white:+d} cp for white "
                          f"(network {self.backend.net_path}, {net_summary(net)}; the search uses it)")


def _bool_option(name: str, value) -> bool:
    if value is None or value.lower() not in ("true", "false"):
        raise UCIError(f"setoption {name}: value must be true or false, not {clean(value, 40)!r}")
    return value.lower() == "true"


def _int_option(name: str, value, lo: int, hi: int) -> int:
    try:
        v = int(value)
    except (TypeError, ValueError):
        raise UCIError(f"setoption {name}: value {clean(value, 40)!r} is not an integer") from None
    if not lo <= v <= hi:
        raise UCIError(f"setoption {name}: value {v} out of range {lo}..{hi}")
    return v
