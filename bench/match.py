"""Engine-vs-engine matches: ``cardinal match`` (a small cutechess-cli).

Plays games between two engines over UCI or XBoard (CECP v2), checks every
move with Cardinal's own rules (:class:`engine.Position`), adjudicates the
end of the game, keeps the clocks, prints W-D-L with the Elo difference and
writes PGN. The way the engines are driven copies Cute Chess 1.5 (see
``PROTOCOLS.md`` sections 1.1-1.3 and 2.1-2.3 of the team notes)::

    cardinal match --variant grand --games 10 --tc 5+0.05 \\
        --engine "cmd=cardinal proto=uci name=Cardinal" \\
        --engine "cmd=/usr/games/fairy-stockfish proto=uci name=FSF option.Hash=64" \\
        --pgn games.pgn

Engines: ``--engine`` takes Cute Chess-style ``key=value`` pairs in one
argument (split like a shell line, so ``cmd='python -m engine'`` works):
``cmd`` (required; itself split like a shell line), ``proto`` (``uci`` or
``xboard``, default ``uci``), ``name``, ``dir`` (working directory),
``arg`` (extra argument, repeatable) and ``option.NAME=VALUE`` (UCI
``setoption``, XBoard ``option NAME=VALUE``). With no ``--engine`` Cardinal
plays itself (``python -m engine``, UCI).

Clock (like Cute Chess): an engine's time runs from the moment ``go`` (UCI)
or ``go``/``usermove`` (XBoard) is written until its move is read; the
increment is added after the move. A move that arrives more than
``--timemargin`` milliseconds after the clock reached zero (or after the
``--movetime`` budget) loses on time. The default margin is 20 ms, which
covers this runner's own pipe and thread-scheduling latency (it is written
in Python); Cute Chess's ``timemargin`` defaults to 0.

Game ends (the PGN ``Termination`` tag follows Cute Chess): checkmate,
stalemate, threefold repetition, the 50-move rule and insufficient material
by Cardinal's rules, and resignation (``normal``); an illegal or unparsable
move (``illegal move``), a flag fall (``time forfeit``), an engine that
exits or closes its pipe (``abandoned``), an engine that does not answer
``isready``/``ping`` or never moves in a game without clock (``stalled
connection``), and an XBoard engine calling a legal move illegal
(``adjudication``) lose. An engine that lost by one of these faults is
restarted before its next game.

The Python API is :func:`run_match` with a :class:`MatchConfig`;
:func:`main` is the command line.
"""
from __future__ import annotations

import argparse
import collections
import datetime as _dt
import math
import os
import queue
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

from bench import stats

HANDSHAKE_TIMEOUT = 35.0   # s: 'uciok' / 'feature done=1' (Cute Chess ProtocolStartTimeout)
READY_TIMEOUT = 60.0       # s: first 'readyok'/'pong' after start (numba may still be loading)
PING_TIMEOUT = 15.0        # s: later 'readyok'/'pong' (Cute Chess PingTimeout)
QUIT_TIMEOUT = 3.0         # s: after 'quit' the process group is killed
XBOARD_NODONE_WAIT = 8.0   # s: wait for 'feature done=1' from an engine that never sent done=0 (Cute Chess)

import variants as _variants

VARIANTS = _variants.all_names()
# Built-in balanced openings: each variant record's ``openings`` (short lines from the
# start position, UCI coordinates with 1-based ranks), each played with both colours.
OPENINGS = {name: list(v.openings) for name, v in _variants.VARIANTS.items()}


# ---------------------------------------------------------------------------- errors
class EngineError(Exception):
    """An engine could not be started or failed its handshake (fatal for the match)."""


class _Died(Exception):
    """The engine process ended or closed its stdout."""


class _Timeout(Exception):
    """No expected reply before the deadline."""


class _Forfeit(Exception):
    """The engine gave up the game: ``kind`` is 'resign' or 'claims-illegal'."""

    def __init__(self, kind: str, text: str):
        super().__init__(text)
        self.kind, self.text = kind, text


# ---------------------------------------------------------------------------- engine spec
@dataclass
class EngineSpec:
    """How to start one engine. ``cmd`` is the argv list; ``options`` maps option names to values."""
    cmd: list
    proto: str = "uci"
    name: str | None = None
    dir: str | None = None
    options: dict = field(default_factory=dict)
    env: dict | None = None

    @classmethod
    def parse(cls, text: str) -> "EngineSpec":
        """From ``"cmd=... proto=uci|xboard name=... dir=... arg=... option.Hash=64"``.
        Raises ``ValueError`` naming the bad item."""
        try:
            items = shlex.split(text)
        except ValueError as e:
            raise ValueError(f"--engine {text!r}: {e}") from None
        kw: dict = {"options": {}}
        args: list[str] = []
        for it in items:
            k, sep, v = it.partition("=")
            if not sep:
                raise ValueError(f"--engine {text!r}: {it!r} is not key=value")
            if k == "cmd":
                try:
                    kw["cmd"] = shlex.split(v)
                except ValueError as e:
                    raise ValueError(f"--engine {text!r}: cmd: {e}") from None
            elif k == "proto":
                if v not in ("uci", "xboard"):
                    raise ValueError(f"--engine {text!r}: proto must be uci or xboard, not {v!r}")
                kw["proto"] = v
            elif k in ("name", "dir"):
                kw[k] = v
            elif k == "arg":
                args.append(v)
            elif k.startswith("option.") and len(k) > 7:
                kw["options"][k[7:]] = v
            else:
                raise ValueError(f"--engine {text!r}: unknown key {k!r} "
                                 "(known: cmd, proto, name, dir, arg, option.NAME)")
        if not kw.get("cmd"):
            raise ValueError(f"--engine {text!r}: cmd=... is required")
        kw["cmd"] = kw["cmd"] + args
        return cls(**kw)

    @classmethod
    def cardinal(cls, name: str = "Cardinal", **options) -> "EngineSpec":
        """Cardinal itself over UCI (``python -m engine``), run from the same package as this module."""
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env = dict(os.environ)
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        return cls(cmd=[sys.executable, "-m", "engine"], proto="uci", name=name,
                   options={k: str(v) for k, v in options.items()}, env=env)

    @property
    def label(self) -> str:
        return self.name or os.path.basename(self.cmd[0])


# ---------------------------------------------------------------------------- process
_LIVE: set = set()          # every EngineProcess not yet killed (for Ctrl-C / errors)
_LIVE_LOCK = threading.Lock()


class EngineProcess:
    """A child process in its own process group with a reader thread.

    Lines from stdout are queued with the ``time.monotonic()`` at which they
    were read; ``None`` marks end of file. stderr is kept (last 20 lines) for
    error messages. ``kill()`` kills the whole process group.
    """

    def __init__(self, spec: EngineSpec, label: str, debug=None):
        self.spec, self.label, self.debug = spec, label, debug
        self.lines: queue.Queue = queue.Queue()
        self.stderr_tail: collections.deque = collections.deque(maxlen=20)
        try:
            self.proc = subprocess.Popen(
                spec.cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                cwd=spec.dir or None, env=spec.env, text=True, bufsize=1, errors="replace",
                start_new_session=True)
        except (OSError, ValueError) as e:
            raise EngineError(f"engine {label!r}: cannot start {shlex.join(spec.cmd)!r}: "
                              f"{e.strerror if isinstance(e, OSError) and e.strerror else e}") from None
        self.pid = self.proc.pid
        with _LIVE_LOCK:
            _LIVE.add(self)
        if debug:
            debug(f"{label}: started pid {self.pid}: {shlex.join(spec.cmd)}")
        threading.Thread(target=self._read, daemon=True, name=f"{label}-out").start()
        threading.Thread(target=self._read_err, daemon=True, name=f"{label}-err").start()

    def _read(self):
        try:
            for line in self.proc.stdout:
                t = time.monotonic()
                line = line.rstrip("\r\n")
                if self.debug:
                    self.debug(f"{self.label} < {line}")
                self.lines.put((t, line))
        except (OSError, ValueError):
            pass
        self.lines.put((time.monotonic(), None))

    def _read_err(self):
        try:
            for line in self.proc.stderr:
                self.stderr_tail.append(line.rstrip("\r\n"))
                if self.debug:
                    self.debug(f"{self.label} ! {line.rstrip()}")
        except (OSError, ValueError):
            pass

    def send(self, line: str) -> None:
        """Write one line (raises :class:`_Died` if the pipe is closed)."""
        if self.debug:
            self.debug(f"{self.label} > {line}")
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except (OSError, ValueError):
            raise _Died(f"{self.label}: pipe closed") from None

    def readline(self, deadline: float) -> tuple[float, str]:
        """Next ``(time, line)``; raises :class:`_Timeout` at ``deadline`` (monotonic s), :class:`_Died` at EOF."""
        while True:
            left = deadline - time.monotonic()
            try:
                t, line = self.lines.get(timeout=max(0.0, left)) if left > 0 else self.lines.get_nowait()
            except queue.Empty:
                raise _Timeout() from None
            if line is None:
                self.lines.put((t, None))  # stay at EOF
                raise _Died(f"{self.label}: process ended")
            return t, line

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stderr_text(self) -> str:
        time.sleep(0.05)
        tail = [s for s in self.stderr_tail if s.strip()]
        return (" (stderr: " + " | ".join(tail[-3:]) + ")") if tail else ""

    def kill(self) -> None:
        """SIGKILL the process group (the engine and anything it started); idempotent."""
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError, OSError):
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        for s in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                s.close()
            except Exception:
                pass
        with _LIVE_LOCK:
            _LIVE.discard(self)

    def quit(self, command: str = "quit") -> None:
        """Ask the engine to quit, wait briefly, then kill its process group."""
        try:
            self.send(command)
        except _Died:
            pass
        try:
            self.proc.wait(timeout=QUIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            pass
        self.kill()


def kill_all() -> None:
    """Kill every engine process group this module started and has not yet killed."""
    with _LIVE_LOCK:
        procs = list(_LIVE)
    for p in procs:
        p.kill()


# ---------------------------------------------------------------------------- limits
@dataclass
class Limits:
    """Time control: ``base``/``inc`` in seconds (clock), or ``movetime`` in ms, and/or ``depth`` plies."""
    base: float | None = 5.0
    inc: float = 0.05
    movetime: int | None = None
    depth: int | None = None

    @property
    def clock(self) -> bool:
        return self.base is not None

    def pgn(self) -> str:
        """PGN ``TimeControl`` value as Cute Chess writes it: ``5+0.05``, ``0.5/move``, ``inf``."""
        if self.clock:
            return f"{_num(self.base)}+{_num(self.inc)}" if self.inc else _num(self.base)
        if self.movetime:
            return f"{_num(self.movetime / 1000)}/move"
        return "inf"


def _num(x: float) -> str:
    s = f"{x:.3f}".rstrip("0").rstrip(".")
    return s or "0"


def parse_tc(text: str) -> tuple[float, float]:
    """``"5+0.05"`` -> (5.0, 0.05) seconds; ``"40"`` -> (40.0, 0.0). Raises ``ValueError``."""
    base, _, inc = text.partition("+")
    if "/" in base:
        raise ValueError(f"time control {text!r}: moves/time controls are not supported (use base+inc)")
    try:
        b, i = float(base), float(inc) if inc else 0.0
    except ValueError:
        raise ValueError(f"time control {text!r} is not base+inc in seconds") from None
    if not (b > 0 and i >= 0 and math.isfinite(b) and math.isfinite(i)):
        raise ValueError(f"time control {text!r}: base must be > 0 and increment >= 0")
    return b, i


# ---------------------------------------------------------------------------- game state
class GameState:
    """The game as the runner sees it: Cardinal position, start FEN and the moves in each notation."""

    def __init__(self, variant: str, start_fen: str | None):
        from engine.rules.position import Position
        self.variant = variant
        self.pos = Position.from_fen(start_fen, variant)
        self.height = self.pos.variant.height
        self.standard_start = start_fen is None or _same_fen(self.pos.fen(), self.pos.variant.start_fen)
        self.start_fen = self.pos.fen()
        self.first_fullmove = int(self.start_fen.split()[5])
        self.first_turn = self.pos.turn
        self.moves: list[int] = []
        self.uci: list[str] = []       # 1-based coordinates
        self.uci0: list[str] = []      # CECP coordinates (0-based ranks on 10-rank boards)
        self.san: list[str] = []
        self.comments: list[str] = []

    def push(self, mv: int, comment: str = "") -> None:
        self.uci.append(self.pos.uci(mv))
        self.uci0.append(self.pos.uci(mv, zero_based=self.height == 10))
        self.san.append(self.pos.san(mv))
        self.comments.append(comment)
        self.moves.append(mv)
        self.pos.push(mv)

    def parse(self, text: str, zero_based: bool) -> int:
        """Legal move from engine text: coordinates (``zero_based`` ranks on 10-rank boards) or SAN.
        Raises ``ValueError``."""
        t = text.strip()
        if zero_based and self.height == 10:
            # CECP counts ranks from 0 on 10-rank boards: shift every rank number up by one
            # (Cute Chess XboardEngine::transformMove), then read it like UCI/SAN text.
            t = re.sub(r"(?<=[a-j])(\d+)", lambda m: str(int(m.group(1)) + 1), t)
        try:
            return self.pos.parse_uci(t)
        except ValueError:
            pass
        if t in ("", "(none)", "0000", "none", "null"):
            raise ValueError(f"no move ({text!r})")
        return self.pos.parse_san(t)

    def fen_for_xboard(self) -> str:
        """Start FEN for ``setboard``: e.p. square in 0-based ranks on 10-rank boards (XBoard's own form)."""
        f = self.start_fen.split()
        if self.height == 10 and f[3] != "-":
            f[3] = f[3][0] + str(int(f[3][1:]) - 1)
        return " ".join(f)


def _same_fen(a: str, b: str) -> bool:
    return a.split()[:4] == b.split()[:4]


# ---------------------------------------------------------------------------- protocols
def _fmt_score(kind: str, v: int) -> str:
    if kind == "mate":
        return f"{'+' if v > 0 else '-'}M{abs(v)}"
    return f"{v / 100:+.2f}"


class Engine:
    """Common part of the UCI and XBoard drivers."""
    proto = ""

    def __init__(self, spec: EngineSpec, label: str, variant: str, debug=None,
                 handshake_timeout: float = HANDSHAKE_TIMEOUT, ready_timeout: float = READY_TIMEOUT):
        self.spec, self.variant, self.debug = spec, variant, debug
        self.handshake_timeout, self.ready_timeout = handshake_timeout, ready_timeout
        self.label = label
        self.id_name: str | None = None
        self.proc = EngineProcess(spec, label, debug)
        self.info: dict = {}
        try:
            self._handshake()
        except EngineError:
            self.proc.kill()
            raise
        except _Died:
            self.proc.kill()
            raise EngineError(f"engine {label!r} ({shlex.join(spec.cmd)}) exited during the "
                              f"{self.proto} handshake{self.proc.stderr_text()}") from None

    def _fail(self, what: str):
        self.proc.kill()
        raise EngineError(f"engine {self.label!r} ({shlex.join(self.spec.cmd)}): {what}{self.proc.stderr_text()}")

    def move_comment(self, elapsed: float) -> str:
        """Cute Chess-style move comment: ``+0.35/12 0.52s`` (score from the mover's side)."""
        i = self.info
        head = ""
        if "score" in i:
            head = _fmt_score(*i["score"]) + (f"/{i['depth']}" if "depth" in i else "")
        return (head + " " if head else "") + f"{elapsed:.3f}s"

    def quit(self):
        self.proc.quit()


class UciEngine(Engine):
    """Drives a UCI engine the way Cute Chess does (``uci``, ``setoption``, ``ucinewgame``,
    ``position ... moves ...``, ``isready``, ``go ...``, ``bestmove``)."""
    proto = "uci"

    def _handshake(self):
        p = self.proc
        p.send("uci")
        deadline = time.monotonic() + self.handshake_timeout
        self.options: dict = {}
        self.variants: list[str] | None = None
        while True:
            try:
                _, line = p.readline(deadline)
            except _Timeout:
                self._fail(f"no 'uciok' within {self.handshake_timeout:g} s after 'uci'")
            tok = line.split()
            if not tok:
                continue
            if tok[0] == "uciok":
                break
            if tok[:2] == ["id", "name"]:
                self.id_name = line.split(None, 2)[2].strip() if len(tok) > 2 else None
            elif tok[0] == "option" and "name" in tok and "type" in tok:
                name = " ".join(tok[tok.index("name") + 1: tok.index("type")])
                self.options[name.lower()] = name
                if name == "UCI_Variant":
                    self.variants = [tok[i + 1] for i in range(len(tok) - 1) if tok[i] == "var"]
        # variant name to send (Cute Chess sends 'standard' only if listed; we prefer 'chess')
        if self.variant == "chess":
            vs = self.variants or []
            self.uci_variant = "chess" if "chess" in vs else ("standard" if "standard" in vs else None)
        else:
            if self.variants is None or self.variant not in self.variants:
                self._fail(f"does not support variant {self.variant!r} (no 'var {self.variant}' in its "
                           "UCI_Variant option)")
            self.uci_variant = self.variant
        for k, v in self.spec.options.items():
            p.send(f"setoption name {self.options.get(k.lower(), k)} value {v}")
        self._sync(self.ready_timeout, first=True)

    def _sync(self, timeout: float, first: bool = False):
        """isready -> readyok (drains stale output). Raises _Timeout/_Died (or EngineError at start)."""
        self.proc.send("isready")
        deadline = time.monotonic() + timeout
        while True:
            try:
                _, line = self.proc.readline(deadline)
            except _Timeout:
                if first:
                    self._fail(f"no 'readyok' within {timeout:g} s after 'isready'")
                raise
            if line.strip() == "readyok":
                return

    def new_game(self, game: GameState, limits: Limits):
        if self.uci_variant:
            self.proc.send(f"setoption name UCI_Variant value {self.uci_variant}")
        self.proc.send("ucinewgame")
        self._sync(PING_TIMEOUT)

    def go(self, game: GameState, limits: Limits, clocks: list) -> float:
        """Send the position and ``go``; returns the monotonic time ``go`` was written."""
        pos = "position startpos" if game.standard_start else f"position fen {game.start_fen}"
        if game.uci:
            pos += " moves " + " ".join(game.uci)
        self.proc.send(pos)
        self._sync(PING_TIMEOUT)
        parts = ["go"]
        if limits.clock:
            parts += [f"wtime {max(1, int(clocks[0]))}", f"btime {max(1, int(clocks[1]))}"]
            if limits.inc > 0:
                inc = int(round(limits.inc * 1000))
                parts += [f"winc {inc}", f"binc {inc}"]
        elif limits.movetime:
            parts.append(f"movetime {limits.movetime}")
        if limits.depth:
            parts.append(f"depth {limits.depth}")
        self.info = {}
        t = time.monotonic()
        self.proc.send(" ".join(parts))
        return t

    def wait_move(self, deadline: float) -> tuple[float, str]:
        while True:
            t, line = self.proc.readline(deadline)
            tok = line.split()
            if not tok:
                continue
            if tok[0] == "bestmove":
                return t, tok[1] if len(tok) > 1 else ""
            if tok[0] == "info" and "string" not in tok[:2]:
                self._parse_info(tok)

    def _parse_info(self, tok):
        if "lowerbound" in tok or "upperbound" in tok:
            return
        if "multipv" in tok:
            i = tok.index("multipv")
            if i + 1 < len(tok) and tok[i + 1] != "1":
                return
        try:
            if "score" in tok:
                i = tok.index("score")
                if tok[i + 1] in ("cp", "mate"):
                    self.info["score"] = (tok[i + 1], int(tok[i + 2]))
            if "depth" in tok:
                self.info["depth"] = int(tok[tok.index("depth") + 1])
        except (IndexError, ValueError):
            pass

    def end_game(self, result: str, comment: str):
        pass

    def abort_search(self):
        pass


_FEATURE_RE = re.compile(r'(\w+)\s*=\s*("[^"]+"|\w+)')
_XB_ACCEPT = {"ping", "setboard", "san", "usermove", "time", "reuse", "myname", "variants", "name",
              "memory", "smp", "egt", "option", "done", "sigint", "sigterm"}


class XboardEngine(Engine):
    """Drives a CECP v2 engine the way Cute Chess does (``xboard``, ``protover 2``,
    features, ``new``/``variant``/``force``/``setboard``/``level``, ``time``/``otim``,
    ``usermove``/``go``, ``ping``). Ranks count from 0 on 10-rank boards, both ways."""
    proto = "xboard"

    def _handshake(self):
        p = self.proc
        p.send("xboard")
        p.send("protover 2")
        self.features: dict = {}
        t0 = time.monotonic()
        hard = t0 + self.handshake_timeout
        saw_done0 = False
        while True:
            deadline = hard if saw_done0 else min(hard, t0 + XBOARD_NODONE_WAIT)
            try:
                _, line = p.readline(deadline)
            except _Timeout:
                if saw_done0:
                    self._fail(f"no 'feature done=1' within {self.handshake_timeout:g} s after 'protover 2'")
                if not self.features:
                    self._fail(f"no 'feature' reply within {deadline - t0:g} s after 'protover 2' "
                               "(only CECP v2 engines are supported)")
                break
            s = line.strip()
            if not s.startswith("feature"):
                continue
            done = None
            for k, v in _FEATURE_RE.findall(s[7:]):
                v = v[1:-1] if v.startswith('"') else v
                self.features[k] = v
                p.send(("accepted " if k in _XB_ACCEPT else "rejected ") + k)
                if k == "done":
                    done = v
            if done == "0":
                saw_done0 = True
            elif done == "1":
                break
        f = self.features
        self.id_name = f.get("myname")
        self.ping = f.get("ping") == "1"
        self.usermove = f.get("usermove") == "1"
        self.setboard = f.get("setboard") == "1"
        self.use_san = f.get("san") == "1"
        self.use_time = f.get("time", "1") == "1"
        variants = [v.strip() for v in f["variants"].split(",")] if "variants" in f else ["normal"]
        need = "normal" if self.variant == "chess" else self.variant
        if need not in variants:
            self._fail(f"does not support variant {self.variant!r} (not in its 'variants' feature)")
        for k, v in self.spec.options.items():
            p.send(f"option {k}={v}")
        self.ping_no = 0
        if self.ping:
            try:
                self._sync(self.ready_timeout)
            except _Timeout:
                self._fail(f"no 'pong' within {self.ready_timeout:g} s")
        self.force = True
        self.known = 0

    def _sync(self, timeout: float):
        if not self.ping:
            return
        self.ping_no += 1
        n = self.ping_no
        self.proc.send(f"ping {n}")
        deadline = time.monotonic() + timeout
        while True:
            _, line = self.proc.readline(deadline)
            if line.split()[:2] == ["pong", str(n)]:
                return

    def _move_text(self, game: GameState, i: int) -> str:
        if self.use_san:
            s = game.san[i]
            if game.height == 10:
                s = re.sub(r"(?<=[a-j])(\d+)", lambda m: str(int(m.group(1)) - 1), s)
            return s
        return game.uci0[i]

    def new_game(self, game: GameState, limits: Limits):
        p = self.proc
        p.send("new")
        if self.variant != "chess":
            p.send(f"variant {self.variant}")
        p.send("force")
        if not game.standard_start:
            if not self.setboard:
                raise EngineError(f"engine {self.label!r} has no setboard feature; cannot start from a FEN")
            p.send(f"setboard {game.fen_for_xboard()}")
        if limits.clock:
            b = limits.base
            mins, secs = int(b // 60), b - 60 * int(b // 60)
            p.send(f"level 0 {mins}:{_num(secs).zfill(2) if secs == int(secs) else _num(secs)} {_num(limits.inc)}")
        elif limits.movetime:
            p.send(f"st {_num(limits.movetime / 1000)}")
        else:
            p.send("st 86400")
        if limits.depth:
            p.send(f"sd {limits.depth}")
        p.send("post")
        p.send("easy")
        self.force = True
        self.known = 0
        self._sync(PING_TIMEOUT)

    def go(self, game: GameState, limits: Limits, clocks: list) -> float:
        p = self.proc
        pending = list(range(self.known, len(game.moves)))
        self._sync(PING_TIMEOUT)
        mv = "usermove " if self.usermove else ""
        if not self.force and len(pending) != 1:
            p.send("force")
            self.force = True
        if self.force:
            for i in pending:
                p.send(mv + self._move_text(game, i))
            pending = []
        if limits.clock and self.use_time:
            me = game.pos.turn
            p.send(f"time {max(1, int(clocks[me] / 10))}")
            p.send(f"otim {max(1, int(clocks[1 - me] / 10))}")
        self.info = {}
        t = time.monotonic()
        if self.force:
            p.send("go")
            self.force = False
        else:
            p.send(mv + self._move_text(game, pending[0]))
        self.known = len(game.moves)
        return t

    def wait_move(self, deadline: float) -> tuple[float, str]:
        while True:
            t, line = self.proc.readline(deadline)
            tok = line.split()
            if not tok:
                continue
            if tok[0] == "move" and len(tok) > 1:
                self.known += 1
                return t, tok[1]
            if tok[0] == "resign":
                raise _Forfeit("resign", line)
            if line.startswith("Illegal move"):
                raise _Forfeit("claims-illegal", line)
            if tok[0] in ("1-0", "0-1", "1/2-1/2"):
                self.info["claim"] = tok[0]
                continue
            if tok[0][0].isdigit():
                self._parse_thinking(tok)

    def _parse_thinking(self, tok):
        try:
            depth = int(re.match(r"\d+", tok[0]).group())
            sc = int(tok[1])
        except (ValueError, AttributeError, IndexError):
            return
        if abs(sc) >= 100000:      # new convention: +/-(100000 + N) = mate in N moves
            self.info["score"] = ("mate", (abs(sc) - 100000) * (1 if sc > 0 else -1))
        else:
            self.info["score"] = ("cp", sc)
        self.info["depth"] = depth

    def end_game(self, result: str, comment: str):
        self.proc.send("force")
        self.proc.send(f"result {result} {{{comment}}}")
        self.force = True
        self._sync(PING_TIMEOUT)


def start_engine(spec: EngineSpec, label: str, variant: str, debug=None,
                 handshake_timeout: float = HANDSHAKE_TIMEOUT, ready_timeout: float = READY_TIMEOUT) -> Engine:
    """Start and handshake one engine. Raises :class:`EngineError` with a message naming it."""
    cls = UciEngine if spec.proto == "uci" else XboardEngine
    return cls(spec, label, variant, debug, handshake_timeout, ready_timeout)


# ---------------------------------------------------------------------------- one game
@dataclass
class GameRecord:
    """A finished game. ``result`` is '1-0', '0-1' or '1/2-1/2'; ``termination`` is the PGN
    Termination value; ``loser_fault`` is the engine index (0/1 in the match) that forfeited, or None."""
    round: int
    white: str
    black: str
    white_index: int
    variant: str
    start_fen: str
    standard_start: bool
    first_fullmove: int
    first_turn: int
    san: list
    uci: list
    comments: list
    result: str
    termination: str
    reason: str
    fault: int | None = None
    date: str = ""

    @property
    def plies(self) -> int:
        return len(self.san)

    def score_for(self, engine_index: int) -> float:
        """1, 0.5 or 0 for match engine ``engine_index`` (0 = first --engine)."""
        if self.result == "1/2-1/2":
            return 0.5
        white_won = self.result == "1-0"
        return 1.0 if white_won == (engine_index == self.white_index) else 0.0


_SIDE = ("White", "Black")
_RULE_REASON = {"stalemate": "Draw by stalemate", "fifty": "Draw by fifty moves rule",
                "repetition": "Draw by 3-fold repetition",
                "insufficient": "Draw by insufficient mating material"}


def play_game(engines: list, white_index: int, variant: str, opening: "Opening", limits: Limits,
              round_no: int, timemargin_ms: float = 20.0, move_timeout: float = 60.0,
              stop: threading.Event | None = None) -> GameRecord | None:
    """Play one game between ``engines[white_index]`` (White) and the other one.

    ``opening`` gives the start FEN (None: the variant's start) and moves played
    first. Returns the record, or None if ``stop`` was set (game abandoned by the user).
    """
    game = GameState(variant, opening.fen)
    for u in opening.moves:
        game.push(game.pos.parse_uci(u), "book")
    side_eng = [engines[white_index], engines[1 - white_index]]
    margin = timemargin_ms / 1000.0
    clocks = [limits.base * 1000.0, limits.base * 1000.0] if limits.clock else [0.0, 0.0]
    result = termination = reason = None
    fault = None

    def lose(side: int, term: str, why: str):
        nonlocal result, termination, reason, fault
        result = "0-1" if side == 0 else "1-0"
        termination, reason = term, why
        fault = white_index if side == 0 else 1 - white_index

    for side in (0, 1):
        try:
            side_eng[side].new_game(game, limits)
        except _Died:
            lose(side, "abandoned", f"{_SIDE[side]} disconnects")
            break
        except _Timeout:
            lose(side, "stalled connection", f"{_SIDE[side]}'s connection stalls")
            break
    while result is None:
        if stop is not None and stop.is_set():
            return None
        status = game.pos.status()
        if status != "ongoing":
            if status == "checkmate":
                winner = 1 - game.pos.turn
                result = "1-0" if winner == 0 else "0-1"
                reason = f"{_SIDE[winner]} mates"
            else:
                result, reason = "1/2-1/2", _RULE_REASON[status]
            termination = "normal"
            break
        side = game.pos.turn
        eng = side_eng[side]
        try:
            t_go = eng.go(game, limits, clocks)
        except _Died:
            lose(side, "abandoned", f"{_SIDE[side]} disconnects")
            break
        except _Timeout:
            lose(side, "stalled connection", f"{_SIDE[side]}'s connection stalls")
            break
        if limits.clock:
            deadline = t_go + clocks[side] / 1000.0 + margin
        elif limits.movetime:
            deadline = t_go + limits.movetime / 1000.0 + margin
        else:
            deadline = t_go + move_timeout
        try:
            t_move, text = eng.wait_move(deadline)
        except _Died:
            lose(side, "abandoned", f"{_SIDE[side]} disconnects")
            break
        except _Timeout:
            if limits.clock or limits.movetime:
                lose(side, "time forfeit", f"{_SIDE[side]} loses on time")
            else:
                lose(side, "stalled connection", f"{_SIDE[side]}'s connection stalls")
            break
        except _Forfeit as f:
            if f.kind == "resign":
                result = "0-1" if side == 0 else "1-0"
                termination, reason = "normal", f"{_SIDE[side]} resigns"
            else:
                lose(side, "adjudication", f"{_SIDE[side]} claims a legal move is illegal ({f.text})")
            break
        elapsed = t_move - t_go
        if limits.clock:
            clocks[side] -= elapsed * 1000.0
            if clocks[side] < -timemargin_ms:
                lose(side, "time forfeit", f"{_SIDE[side]} loses on time")
                break
            clocks[side] += limits.inc * 1000.0
        elif limits.movetime and elapsed * 1000.0 > limits.movetime + timemargin_ms:
            lose(side, "time forfeit", f"{_SIDE[side]} loses on time")
            break
        try:
            mv = game.parse(text, zero_based=eng.proto == "xboard")
        except ValueError:
            lose(side, "illegal move", f"{_SIDE[side]} makes an illegal move: {text or '(none)'}")
            break
        game.push(mv, eng.move_comment(elapsed))
    # tell the engines the game is over (XBoard: force/result/ping); a failure here changes nothing
    for s in (0, 1):
        e = side_eng[s]
        if fault is not None and e is engines[fault]:
            continue
        try:
            e.end_game(result, reason)
        except (_Died, _Timeout):
            pass
    return GameRecord(round=round_no, white=side_eng[0].label, black=side_eng[1].label,
                      white_index=white_index, variant=variant, start_fen=game.start_fen,
                      standard_start=game.standard_start, first_fullmove=game.first_fullmove,
                      first_turn=game.first_turn, san=list(game.san), uci=list(game.uci),
                      comments=list(game.comments), result=result, termination=termination,
                      reason=reason, fault=fault, date=_dt.date.today().strftime("%Y.%m.%d"))


# ---------------------------------------------------------------------------- PGN
def pgn_text(g: GameRecord, event: str = "Cardinal match", site: str = "?", tc: str = "") -> str:
    """PGN of one game: the seven-tag roster, then FEN/SetUp, Variant (omitted for chess,
    as Cute Chess does), TimeControl, Termination, PlyCount; SAN moves with
    ``{score/depth time}`` comments; the last comment ends with the reason."""
    tags = [("Event", event), ("Site", site), ("Date", g.date), ("Round", str(g.round)),
            ("White", g.white), ("Black", g.black), ("Result", g.result)]
    if not g.standard_start:
        tags += [("FEN", g.start_fen), ("SetUp", "1")]
    if g.variant != "chess":
        tags.append(("Variant", g.variant))
    if tc:
        tags.append(("TimeControl", tc))
    tags += [("Termination", g.termination), ("PlyCount", str(g.plies))]
    out = [f'[{k} "{_pgn_escape(v)}"]' for k, v in tags]
    words = []
    num, turn = g.first_fullmove, g.first_turn
    for i, s in enumerate(g.san):
        if turn == 0:
            words.append(f"{num}.")
        elif i == 0:
            words.append(f"{num}...")
        words.append(s)
        c = g.comments[i]
        if i == len(g.san) - 1:
            c = f"{c}, {g.reason}" if c else g.reason
        if c:
            words.append("{" + c.replace("}", ")") + "}")
        if turn == 1:
            num += 1
        turn ^= 1
    if not g.san:
        words.append("{" + g.reason + "}")
    words.append(g.result)
    lines, cur = [], ""
    for w in words:
        if cur and len(cur) + 1 + len(w) > 79:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    lines.append(cur)
    return "\n".join(out) + "\n\n" + "\n".join(lines) + "\n\n"


def _pgn_escape(v: str) -> str:
    return v.replace("\\", "\\\\").replace('"', '\\"')


# ---------------------------------------------------------------------------- openings
@dataclass
class Opening:
    fen: str | None = None
    moves: tuple = ()
    label: str = ""


def builtin_openings(variant: str) -> list[Opening]:
    return [Opening(None, tuple(line.split()), line) for line in OPENINGS[variant]]


def load_openings(path: str, variant: str) -> list[Opening]:
    """EPD/FEN lines (blank lines and ``#`` comments skipped; EPD operations after the
    four FEN fields are ignored). Raises ``ValueError`` naming the line."""
    from engine.rules.position import Position
    out = []
    with open(path, encoding="utf-8") as fh:
        for n, raw in enumerate(fh, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            f = line.split()
            if len(f) < 4:
                raise ValueError(f"{path}:{n}: not a FEN/EPD line")
            counters = f[4:6] if len(f) >= 6 and f[4].isdigit() and f[5].isdigit() else ["0", "1"]
            fen = " ".join(f[:4] + counters)
            try:
                pos = Position.from_fen(fen, variant)
            except ValueError as e:
                raise ValueError(f"{path}:{n}: {e}") from None
            if pos.status() != "ongoing":
                raise ValueError(f"{path}:{n}: the game is already over ({pos.status()})")
            out.append(Opening(pos.fen(), (), f"{path}:{n}"))
    if not out:
        raise ValueError(f"{path}: no positions")
    return out


# ---------------------------------------------------------------------------- match
@dataclass
class MatchConfig:
    """Everything :func:`run_match` needs. ``engines`` holds two :class:`EngineSpec`."""
    engines: list
    variant: str = "chess"
    games: int = 2
    limits: Limits = field(default_factory=Limits)
    concurrency: int = 1
    openings: list | None = None          # list of Opening; None = built-in set
    pgn_path: str | None = None           # append each game as it finishes
    sprt: stats.SPRT | None = None
    timemargin_ms: float = 20.0
    move_timeout: float = 60.0
    handshake_timeout: float = HANDSHAKE_TIMEOUT
    ready_timeout: float = READY_TIMEOUT
    event: str = "Cardinal match"
    progress: bool = True
    debug: bool = False


@dataclass
class MatchResult:
    games: list                      # GameRecord, in finishing order
    wins: int = 0                    # from the first engine's point of view
    draws: int = 0
    losses: int = 0
    names: tuple = ("", "")
    interrupted: bool = False
    sprt_status: str | None = None
    error: str | None = None

    def score_line(self) -> str:
        n = self.wins + self.draws + self.losses
        pct = (self.wins + 0.5 * self.draws) / n if n else 0.0
        return (f"Score of {self.names[0]} vs {self.names[1]}: {self.wins} - {self.losses} - {self.draws} "
                f"[{pct:.3f}] {n}")


def _labels(specs: list, engines0: list | None = None) -> list[str]:
    names = [s.name or (engines0[i].id_name if engines0 else None) or s.label for i, s in enumerate(specs)]
    if names[0] == names[1]:
        names[1] = names[1] + " (2)"
    return names


def run_match(cfg: MatchConfig) -> MatchResult:
    """Play the match; returns the result (also on Ctrl-C: ``interrupted`` is set).

    Raises :class:`EngineError` if an engine cannot be started (no child left running)
    and ``ValueError`` for bad configuration.
    """
    if cfg.variant not in VARIANTS:
        raise ValueError(f"unknown variant {cfg.variant!r} (choose from {', '.join(VARIANTS)})")
    cfg.variant = _variants.canonical(cfg.variant)
    if len(cfg.engines) != 2:
        raise ValueError("a match needs exactly two engines")
    openings = cfg.openings or builtin_openings(cfg.variant)
    for op in openings:      # validate the built-in lines too
        g = GameState(cfg.variant, op.fen)
        for u in op.moves:
            g.pos.push_uci(u)
    conc = max(1, min(cfg.concurrency, cfg.games))
    lock = threading.Lock()
    dbg = None
    if cfg.debug:
        def dbg(msg):
            with lock:
                sys.stderr.write(f"{time.monotonic():.3f} {msg}\n")
                sys.stderr.flush()

    kw = dict(debug=dbg, handshake_timeout=cfg.handshake_timeout, ready_timeout=cfg.ready_timeout)
    pgn_fh = open(cfg.pgn_path, "a", encoding="utf-8") if cfg.pgn_path else None   # fail before any engine runs
    pairs: list[list] = []
    try:
        for w in range(conc):
            pair = []
            for i, spec in enumerate(cfg.engines):
                pair.append(start_engine(spec, spec.name or spec.label, cfg.variant, **kw))
            pairs.append(pair)
    except BaseException:
        for pair in pairs:
            for e in pair:
                e.proc.kill()
        kill_all()
        if pgn_fh:
            pgn_fh.close()
        raise
    names = _labels(cfg.engines, pairs[0])
    for pair in pairs:
        for i, e in enumerate(pair):
            e.label = names[i]
            e.proc.label = names[i]

    jobs: queue.Queue = queue.Queue()
    for i in range(cfg.games):
        jobs.put((i + 1, openings[(i // 2) % len(openings)], i % 2))
    results: queue.Queue = queue.Queue()
    stop = threading.Event()

    def worker(pair):
        while not stop.is_set():
            try:
                rnd, op, white_index = jobs.get_nowait()
            except queue.Empty:
                return
            try:
                rec = play_game(pair, white_index, cfg.variant, op, cfg.limits, rnd,
                                cfg.timemargin_ms, cfg.move_timeout, stop)
            except EngineError as e:
                results.put(("error", str(e)))
                return
            except Exception as e:  # a bug or an unexpected engine failure: report, do not hang
                if stop.is_set():
                    return
                results.put(("error", f"game {rnd}: {type(e).__name__}: {e}"))
                return
            if rec is None or stop.is_set():
                return
            if rec.fault is not None:       # restart the engine that failed
                i = rec.fault
                pair[i].proc.kill()
                try:
                    pair[i] = start_engine(cfg.engines[i], names[i], cfg.variant, **kw)
                    pair[i].label = names[i]
                except EngineError as e:
                    results.put(("game", rec))
                    results.put(("error", f"restarting after a forfeit: {e}"))
                    return
            results.put(("game", rec))

    threads = [threading.Thread(target=worker, args=(p,), daemon=True, name=f"match-{k}")
               for k, p in enumerate(pairs)]
    res = MatchResult(games=[], names=tuple(names))
    bar = None
    if cfg.progress:
        from tqdm import tqdm
        bar = tqdm(total=cfg.games, desc=f"{names[0]} vs {names[1]}", unit="game", file=sys.stderr,
                   dynamic_ncols=True)
    tc = cfg.limits.pgn()
    try:
        for t in threads:
            t.start()
        finished = 0
        while finished < cfg.games:
            try:
                kind, item = results.get(timeout=0.2)
            except queue.Empty:
                if not any(t.is_alive() for t in threads) and results.empty():
                    break
                continue
            if kind == "error":
                res.error = item
                break
            rec: GameRecord = item
            finished += 1
            res.games.append(rec)
            sc = rec.score_for(0)
            if sc == 1.0:
                res.wins += 1
            elif sc == 0.0:
                res.losses += 1
            else:
                res.draws += 1
            if pgn_fh:
                pgn_fh.write(pgn_text(rec, cfg.event, tc=tc))
                pgn_fh.flush()
            if bar is not None:
                e, m = stats.elo_with_error(res.wins, res.draws, res.losses)
                bar.set_postfix_str(f"W-D-L {res.wins}-{res.draws}-{res.losses}  Elo {stats._fmt(e)} "
                                    f"+/- {stats._fmt(m)}", refresh=False)
                bar.update(1)
            if cfg.sprt is not None:
                st = cfg.sprt.status(res.wins, res.draws, res.losses)
                if st != "continue":
                    res.sprt_status = st
                    break
    except KeyboardInterrupt:
        res.interrupted = True
    finally:
        stop.set()
        if bar is not None:
            bar.close()
        if pgn_fh:
            pgn_fh.close()
        if res.interrupted or res.error:
            kill_all()              # running games are abandoned (not written)
        else:
            for t in threads:       # after an SPRT decision running games stop at their next move
                t.join()
            for pair in pairs:
                for e in pair:
                    e.quit()
        for t in threads:
            t.join(timeout=5)
        kill_all()                  # also an engine a worker was restarting meanwhile
    return res


# ---------------------------------------------------------------------------- CLI
def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="cardinal match",
        description="Play engine-vs-engine games (UCI or XBoard) with Cardinal's rules as referee. "
                    "Default: Cardinal against itself.",
        epilog='Example: cardinal match --variant grand --games 4 --engine "cmd=cardinal proto=uci" '
               '--engine "cmd=/usr/games/sjaakii proto=xboard name=Sjaak"')
    ap.add_argument("--engine", action="append", default=[], metavar="SPEC",
                    help='"cmd=CMD proto=uci|xboard name=NAME dir=DIR arg=ARG option.NAME=VALUE"; give it twice '
                         "(once: that engine against Cardinal; none: Cardinal against itself)")
    ap.add_argument("--variant", default="chess", choices=VARIANTS)
    ap.add_argument("--games", type=int, default=2, help="number of games (default 2)")
    ap.add_argument("--tc", default=None, help="time control base+inc in seconds (default 5+0.05)")
    ap.add_argument("--movetime", type=int, default=None, metavar="MS", help="fixed time per move in ms")
    ap.add_argument("--depth", type=int, default=None, help="fixed search depth in plies (alone or with --tc)")
    ap.add_argument("--concurrency", type=int, default=1, help="games played at once (default 1)")
    ap.add_argument("--openings", default=None, metavar="FILE",
                    help="EPD/FEN file of start positions (default: built-in balanced openings); "
                         "each is played with both colours")
    ap.add_argument("--pgn", default=None, metavar="FILE",
                    help="append each game to FILE as it ends (default: print all PGN to stdout at the end)")
    ap.add_argument("--sprt", nargs="+", default=None, metavar="K=V",
                    help="stop early by SPRT: elo0=0 elo1=5 alpha=0.05 beta=0.05 (fishtest GSPRT, logistic Elo)")
    ap.add_argument("--timemargin", type=float, default=20.0, metavar="MS",
                    help="grace time in ms before a late move loses on time (default 20; Cute Chess uses 0)")
    ap.add_argument("--move-timeout", type=float, default=60.0, metavar="S",
                    help="seconds an engine may think without a clock (--depth only) before it forfeits")
    ap.add_argument("--handshake-timeout", type=float, default=HANDSHAKE_TIMEOUT, metavar="S",
                    help="seconds to wait for uciok / feature done=1 (default 35)")
    ap.add_argument("--ready-timeout", type=float, default=READY_TIMEOUT, metavar="S",
                    help="seconds to wait for the first readyok/pong after start (default 60)")
    ap.add_argument("--event", default="Cardinal match", help="PGN Event tag")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    ap.add_argument("--debug", action="store_true", help="log all engine traffic to stderr")
    return ap


def config_from_args(argv: list[str]) -> MatchConfig:
    """Parse the command line into a :class:`MatchConfig`; raises ``ValueError`` for bad input."""
    ap = _parser()
    a = ap.parse_args(argv)
    specs = [EngineSpec.parse(s) for s in a.engine]
    if len(specs) > 2:
        raise ValueError("give --engine at most twice")
    while len(specs) < 2:
        specs.insert(0, EngineSpec.cardinal())
    if a.games < 1:
        raise ValueError("--games must be at least 1")
    if a.concurrency < 1:
        raise ValueError("--concurrency must be at least 1")
    if a.movetime is not None and a.tc is not None:
        raise ValueError("give either --tc or --movetime, not both")
    if a.movetime is not None and a.movetime <= 0:
        raise ValueError("--movetime must be positive")
    if a.depth is not None and a.depth < 1:
        raise ValueError("--depth must be at least 1")
    if a.movetime is not None:
        limits = Limits(base=None, inc=0.0, movetime=a.movetime, depth=a.depth)
    elif a.tc is None and a.depth is not None:
        limits = Limits(base=None, inc=0.0, depth=a.depth)
    else:
        b, i = parse_tc(a.tc or "5+0.05")
        limits = Limits(base=b, inc=i, depth=a.depth)
    openings = load_openings(a.openings, a.variant) if a.openings else None
    sprt = stats.SPRT.parse(a.sprt) if a.sprt else None
    return MatchConfig(engines=specs, variant=a.variant, games=a.games, limits=limits,
                       concurrency=a.concurrency, openings=openings, pgn_path=a.pgn, sprt=sprt,
                       timemargin_ms=a.timemargin, move_timeout=a.move_timeout,
                       handshake_timeout=a.handshake_timeout, ready_timeout=a.ready_timeout,
                       event=a.event, progress=not a.no_progress, debug=a.debug)


def main(argv: list[str] | None = None) -> int:
    """``cardinal match``: 0 on success, 1 if the match stopped on an engine error,
    2 for bad input or an engine that cannot start, 130 on Ctrl-C."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        cfg = config_from_args(argv)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"error: {e.filename}: {e.strerror}", file=sys.stderr)
        return 2
    ncpu = os.cpu_count() or 1
    if 2 * cfg.concurrency > ncpu:
        print(f"warning: {2 * cfg.concurrency} engine processes on {ncpu} CPU cores; engines will "
              "compete for time (lower --concurrency for fair clocks)", file=sys.stderr)
    cfg_stdout = not cfg.pgn_path
    old = None
    if threading.current_thread() is threading.main_thread():
        def _term(signum, frame):
            raise KeyboardInterrupt
        old = signal.signal(signal.SIGTERM, _term)
    try:
        res = run_match(cfg)
    except EngineError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"error: {e.filename or ''}: {e.strerror or e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        kill_all()
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)
    if cfg_stdout:
        tc = cfg.limits.pgn()
        for g in sorted(res.games, key=lambda g: g.round):
            sys.stdout.write(pgn_text(g, cfg.event, tc=tc))
    print(res.score_line())
    print(stats.summary(res.wins, res.draws, res.losses))
    if cfg.sprt is not None:
        lo, hi = cfg.sprt.bounds
        v = cfg.sprt.llr(res.wins, res.draws, res.losses)
        verdict = {"H1": "H1 accepted", "H0": "H0 accepted", None: "no decision"}[res.sprt_status]
        print(f"SPRT: llr {v:.2f} ({lo:.2f}, {hi:.2f}) [{cfg.sprt.elo0:g}, {cfg.sprt.elo1:g}]: {verdict}")
    faults = collections.Counter(g.termination for g in res.games if g.fault is not None)
    if faults:
        print("Forfeits: " + ", ".join(f"{k} {v}" for k, v in sorted(faults.items())))
    sys.stdout.flush()
    if res.interrupted:
        print(f"interrupted after {len(res.games)} games", file=sys.stderr)
        return 130
    if res.error:
        print(f"error: {res.error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
