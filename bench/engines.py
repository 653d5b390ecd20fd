"""The one engine client (UCI and XBoard/CECP v2) of Cardinal's tools and tests.

* :class:`EngineSpec` says how to start an engine (Cute Chess-style ``--engine``
  text, or :meth:`EngineSpec.cardinal` for Cardinal itself).
* :class:`EngineProcess` is the child process: its own process group, a reader
  thread per pipe, line reads with deadlines, ``quit`` then kill of the group.
* :class:`UciEngine` and :class:`XboardEngine` do the handshake with timeouts,
  options, positions, ``go``/``bestmove`` (UCI) or ``usermove``/``move`` (XBoard),
  ``isready``/``ping`` and info parsing. The match runner drives them move by
  move (:meth:`Engine.new_game`, :meth:`Engine.go`, :meth:`Engine.wait_move`);
  the benchmarks use the plain calls (:meth:`UciEngine.position`,
  :meth:`UciEngine.search`, :meth:`UciEngine.perft`).
* :func:`find_fairy_stockfish` and :func:`find_sjaak` locate the Debian engines;
  :func:`cardinal_command` gives the command that runs the same Cardinal
  package as the running tool.

CECP counts ranks from 0 on 10-rank boards: :func:`cecp_from_uci` and
:func:`uci_from_cecp` shift move texts both ways.
"""
from __future__ import annotations

import collections
import contextlib
import importlib.util
import os
import queue
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

from bench.timecontrol import parse_tc, seconds_text

HANDSHAKE_TIMEOUT = 35.0   # s: 'uciok' / 'feature done=1' (Cute Chess ProtocolStartTimeout)
READY_TIMEOUT = 60.0       # s: first 'readyok'/'pong' after start (numba may still be loading)
PING_TIMEOUT = 15.0        # s: later 'readyok'/'pong' (Cute Chess PingTimeout)
QUIT_TIMEOUT = 3.0         # s: after 'quit' the process group is killed
XBOARD_NODONE_WAIT = 8.0   # s: wait for 'feature done=1' from an engine that never sent done=0 (Cute Chess)
DEBIAN_GAMES = "/usr/games"


# ---------------------------------------------------------------------------- finding engines
def _find(name: str, explicit: str | None = None) -> str | None:
    if explicit:
        return explicit if os.path.isfile(explicit) and os.access(explicit, os.X_OK) else None
    return shutil.which(name) or shutil.which(name, path=DEBIAN_GAMES)


def find_fairy_stockfish(explicit: str | None = None) -> str | None:
    """Path of Fairy-Stockfish: ``explicit`` if executable, else ``fairy-stockfish`` on
    ``PATH``, else in /usr/games (Debian); None if not found."""
    return _find("fairy-stockfish", explicit)


def find_sjaak(explicit: str | None = None) -> str | None:
    """Path of Sjaak II (``sjaakii``), looked up like :func:`find_fairy_stockfish`."""
    return _find("sjaakii", explicit)


def cardinal_command() -> tuple[list[str], str]:
    """``(argv, cwd)`` that starts Cardinal from the same ``engine`` package (and so the
    same sources and numba cache) as the running process: this interpreter, ``-m engine``,
    in the directory that holds that package (``-m`` looks in the working directory
    first, so a checkout in the caller's directory cannot take its place)."""
    mod = sys.modules.get("engine")
    origin = getattr(mod, "__file__", None) if mod is not None else None
    if origin is None:
        spec = importlib.util.find_spec("engine")
        origin = spec.origin if spec is not None else None
    if origin is None:
        raise RuntimeError("the Cardinal 'engine' package cannot be found")
    return [sys.executable, "-m", "engine"], os.path.dirname(os.path.dirname(os.path.abspath(origin)))


# ---------------------------------------------------------------------------- errors
class EngineError(Exception):
    """An engine could not be started or failed its handshake (fatal for a match)."""


class Died(Exception):
    """The engine process ended or closed its stdout."""


class NoReply(Exception):
    """No expected reply before the deadline."""


class Forfeit(Exception):
    """The engine gave up the game: ``kind`` is 'resign' or 'claims-illegal'."""

    def __init__(self, kind: str, text: str):
        super().__init__(text)
        self.kind, self.text = kind, text


# ---------------------------------------------------------------------------- engine spec
@dataclass
class EngineSpec:
    """How to start one engine. ``cmd`` is the argv list; ``options`` maps option names to
    values. ``own`` marks the runner's own Cardinal (its options may be tuned to the limits).
    ``limits`` holds this engine's own search limits, over the match's (cutechess-cli
    ``tc=``, ``st=``, ``depth=``, ``nodes=``): ``{"tc": (base_s, inc_s), "st": seconds,
    "depth": plies, "nodes": n}``, any subset."""
    cmd: list
    proto: str = "uci"
    name: str | None = None
    dir: str | None = None
    options: dict = field(default_factory=dict)
    env: dict | None = None
    own: bool = False
    limits: dict = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str) -> "EngineSpec":
        """From ``"cmd=... proto=uci|xboard name=... dir=... arg=... option.Hash=64"``, split
        like a shell line (so ``'option.Move Overhead=20'`` or ``option.Move\\ Overhead=20``
        keeps the space). Raises ``ValueError`` naming the bad item."""
        try:
            items = shlex.split(text)
        except ValueError as e:
            raise ValueError(f"--engine {text!r}: {e}") from None
        kw: dict = {"options": {}, "limits": {}}
        args: list[str] = []
        for it in items:
            k, sep, v = it.partition("=")
            if not sep:
                hint = ""
                if k.startswith("option."):
                    hint = " (quote an option name with spaces: 'option.Move Overhead=20')"
                raise ValueError(f"--engine {text!r}: {it!r} is not key=value{hint}")
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
            elif k in ("tc", "st", "depth", "nodes"):
                kw["limits"][k] = _parse_limit(text, k, v)
            else:
                raise ValueError(f"--engine {text!r}: unknown key {k!r} "
                                 "(known: cmd, proto, name, dir, arg, option.NAME, tc, st, depth, nodes)")
        if not kw.get("cmd"):
            raise ValueError(f"--engine {text!r}: cmd=... is required")
        if "tc" in kw["limits"] and "st" in kw["limits"]:
            raise ValueError(f"--engine {text!r}: give tc= or st=, not both")
        if "nodes" in kw["limits"] and kw.get("proto") == "xboard":
            raise ValueError(f"--engine {text!r}: nodes= needs a UCI engine (XBoard has no node limit)")
        kw["cmd"] = kw["cmd"] + args
        return cls(**kw)

    @classmethod
    def cardinal(cls, name: str = "Cardinal", proto: str = "uci", **options) -> "EngineSpec":
        """Cardinal itself, run from the same package as the running tool (:func:`cardinal_command`)."""
        cmd, cwd = cardinal_command()
        return cls(cmd=cmd, proto=proto, name=name, dir=cwd,
                   options={k: str(v) for k, v in options.items()}, own=True)

    @property
    def label(self) -> str:
        return self.name or os.path.basename(self.cmd[0])

    def has_option(self, name: str) -> bool:
        return name.lower() in (k.lower() for k in self.options)


def _parse_limit(text: str, key: str, value: str):
    """One per-engine limit of an ``--engine`` spec (raises ``ValueError`` naming it)."""
    try:
        if key == "tc":
            return parse_tc(value)
        if key == "st":
            v = float(value)
            if not (v > 0 and v < 1e6):
                raise ValueError
            return v
        v = int(value)
        if v < 1:
            raise ValueError
        return v
    except ValueError as e:
        what = {"tc": str(e) if str(e) else "base+inc in seconds", "st": "seconds per move (> 0)",
                "depth": "plies (an integer >= 1)", "nodes": "nodes (an integer >= 1)"}[key]
        raise ValueError(f"--engine {text!r}: bad {key}={value!r}: {what}") from None


# ---------------------------------------------------------------------------- process
_LIVE: set = set()          # every EngineProcess not yet killed (for Ctrl-C / errors)
_LIVE_LOCK = threading.Lock()


class EngineProcess:
    """A child process in its own process group with a reader thread per pipe.

    Lines from stdout are queued with the ``time.monotonic()`` at which they were
    read; end of file is remembered. The last ``stderr_lines`` lines of stderr are
    kept for error messages. ``kill()`` kills the whole process group.
    """

    def __init__(self, cmd: list, label: str = "engine", cwd: str | None = None, env: dict | None = None,
                 debug=None, stderr_lines: int = 20):
        self.label, self.debug, self.cmd = label, debug, list(cmd)
        self._q: queue.Queue = queue.Queue()
        self.stderr_tail: collections.deque = collections.deque(maxlen=stderr_lines)
        if env is None:       # not this process's numba cache: the engine may be another Cardinal
            from engine.rules.cache import foreign_env
            env = foreign_env()
        try:
            self.proc = subprocess.Popen(self.cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, cwd=cwd or None, env=env,
                                         start_new_session=True)
        except (OSError, ValueError) as e:
            raise EngineError(f"engine {label!r}: cannot start {shlex.join(self.cmd)!r}: "
                              f"{e.strerror if isinstance(e, OSError) and e.strerror else e}") from None
        self.pid = self.proc.pid
        self._lock = threading.Lock()
        with _LIVE_LOCK:
            _LIVE.add(self)
        if debug:
            debug(f"{label}: started pid {self.pid}: {shlex.join(self.cmd)}")
        threading.Thread(target=self._read, daemon=True, name=f"{label}-out").start()
        threading.Thread(target=self._read_err, daemon=True, name=f"{label}-err").start()

    def _read(self):
        try:
            for raw in iter(self.proc.stdout.readline, b""):
                t = time.monotonic()
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                if self.debug:
                    self.debug(f"{self.label} < {line}")
                self._q.put((t, line))
        except (OSError, ValueError):
            pass
        self._q.put((time.monotonic(), None))

    def _read_err(self):
        try:
            for raw in iter(self.proc.stderr.readline, b""):
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                self.stderr_tail.append(line)
                if self.debug:
                    self.debug(f"{self.label} ! {line}")
        except (OSError, ValueError):
            pass

    def write(self, data: bytes) -> None:
        """Write raw bytes (raises :class:`Died` if the pipe is closed)."""
        try:
            with self._lock:
                self.proc.stdin.write(data)
                self.proc.stdin.flush()
        except (OSError, ValueError):
            raise Died(f"{self.label}: pipe closed") from None

    def send(self, line: str) -> None:
        """Write one line (raises :class:`Died` if the pipe is closed)."""
        if self.debug:
            self.debug(f"{self.label} > {line}")
        self.write(line.encode("utf-8") + b"\n")

    def send_lines(self, lines: list[str]) -> None:
        """Write several lines in one write (raises :class:`Died` if the pipe is closed)."""
        if self.debug:
            for line in lines:
                self.debug(f"{self.label} > {line}")
        self.write("".join(line + "\n" for line in lines).encode("utf-8"))

    def readline(self, deadline: float) -> tuple[float, str]:
        """Next ``(time, line)``; raises :class:`NoReply` at ``deadline`` (monotonic s),
        :class:`Died` at end of file."""
        left = deadline - time.monotonic()
        try:
            t, line = self._q.get(timeout=left) if left > 0 else self._q.get_nowait()
        except queue.Empty:
            raise NoReply() from None
        if line is None:
            self._q.put((t, None))  # stay at EOF
            raise Died(f"{self.label}: process ended")
        return t, line

    def expect(self, match, timeout: float) -> tuple[str, list[str]]:
        """Read until ``match(line)`` is true; returns (that line, all lines read).
        Raises :class:`NoReply` / :class:`Died`."""
        deadline = time.monotonic() + timeout
        seen = []
        while True:
            _, line = self.readline(deadline)
            seen.append(line)
            if match(line):
                return line, seen

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

    def quit(self, command: str = "quit", timeout: float = QUIT_TIMEOUT) -> int | None:
        """Ask the engine to quit, wait up to ``timeout`` s, then kill its process group.
        Returns the exit status (negative: killed by that signal)."""
        if self.alive():
            try:
                self.send(command)
            except Died:
                pass
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                pass
        self.kill()
        return self.proc.returncode


def kill_all() -> None:
    """Kill every engine process group this module started and has not yet killed."""
    with _LIVE_LOCK:
        procs = list(_LIVE)
    for p in procs:
        p.kill()


@contextlib.contextmanager
def sigterm_as_interrupt():
    """Within the block, SIGTERM (``kill PID``, a job scheduler, a service manager) raises
    ``KeyboardInterrupt`` in the main thread, so a long tool run stops as it does on Ctrl-C:
    finished games kept, worker processes and engines ended, one line and exit 130.

    Without it Python dies at once on SIGTERM and leaves its children running (pool
    workers then fail writing a finished game to the dead parent). Off the main thread,
    where a handler cannot be set, it does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def _term(signum, frame):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGTERM, _term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def live_processes() -> int:
    """How many started engine processes are not yet killed."""
    with _LIVE_LOCK:
        return len(_LIVE)


# ---------------------------------------------------------------------------- notation helpers
_RANK = re.compile(r"(?<=[a-j])(\d+)")


def uci_from_cecp(text: str) -> str:
    """CECP move text on a 10-rank board (ranks from 0) -> 1-based ranks (Cute Chess
    XboardEngine::transformMove)."""
    return _RANK.sub(lambda m: str(int(m.group(1)) + 1), text)


def cecp_from_uci(text: str) -> str:
    """1-based ranks -> CECP's 0-based ranks on a 10-rank board (moves, SAN, squares)."""
    return _RANK.sub(lambda m: str(int(m.group(1)) - 1), text)


def parse_uci_info(tok: list[str]) -> dict:
    """The fields of a UCI ``info`` line (tokens): depth, seldepth, multipv, nodes, time,
    nps (ints), score ``(kind, value)`` with kind 'cp' or 'mate', bound ('lower'/'upper'
    when given) and pv (move list). Unparsable fields are left out."""
    out: dict = {}
    i = 1
    while i < len(tok):
        k = tok[i]
        try:
            if k in ("depth", "seldepth", "multipv", "nodes", "time", "nps", "hashfull", "tbhits"):
                out[k] = int(tok[i + 1])
                i += 2
                continue
            if k == "score":
                out["score"] = (tok[i + 1], int(tok[i + 2]))
                i += 3
                continue
        except (IndexError, ValueError):
            i += 1
            continue
        if k in ("lowerbound", "upperbound"):
            out["bound"] = k[:5]
        elif k == "pv":
            out["pv"] = tok[i + 1:]
            break
        elif k == "string":
            out["string"] = " ".join(tok[i + 1:])
            break
        i += 1
    return out


def _fmt_score(kind: str, v: int) -> str:
    if kind == "mate":
        return f"{'+' if v > 0 else '-'}M{abs(v)}"
    return f"{v / 100:+.2f}"


# ---------------------------------------------------------------------------- drivers
@dataclass
class SearchResult:
    """A finished UCI search: the best move text, ponder move (or None) and every info line."""
    bestmove: str
    ponder: str | None
    infos: list

    @property
    def last(self) -> dict:
        """The last info with a score of the main line (not a bound)."""
        for i in reversed(self.infos):
            if "score" in i and "bound" not in i and i.get("multipv", 1) == 1:
                return i
        return {}


class Engine:
    """Common part of the UCI and XBoard drivers: start and handshake (raising
    :class:`EngineError` naming the engine), option checks, quit.

    ``variant`` (a Cardinal variant name) is checked against what the engine says it
    supports; None skips the check. ``warn`` receives one-line warnings (bad options).
    """
    proto = ""

    def __init__(self, spec: EngineSpec, label: str | None = None, variant: str | None = None, debug=None,
                 handshake_timeout: float = HANDSHAKE_TIMEOUT, ready_timeout: float = READY_TIMEOUT,
                 warn=None):
        self.spec, self.variant, self.debug = spec, variant, debug
        self.handshake_timeout, self.ready_timeout = handshake_timeout, ready_timeout
        self.label = label or spec.label
        self.warn = warn
        self.id_name: str | None = None
        self.info: dict = {}
        self.proc = EngineProcess(spec.cmd, self.label, spec.dir, spec.env, debug)
        try:
            self._handshake()
        except EngineError:
            self.proc.kill()
            raise
        except Died:
            self.proc.kill()
            raise EngineError(f"engine {self.label!r} ({shlex.join(spec.cmd)}) exited during the "
                              f"{self.proto} handshake{self.proc.stderr_text()}") from None

    def _fail(self, what: str):
        self.proc.kill()
        raise EngineError(f"engine {self.label!r} ({shlex.join(self.spec.cmd)}): {what}{self.proc.stderr_text()}")

    def _warn(self, what: str) -> None:
        if self.warn is not None:
            self.warn(f"engine {self.label!r}: {what}")

    def move_comment(self, elapsed: float) -> str:
        """Cute Chess-style move comment: ``+0.35/12 0.52s`` (score from the mover's side)."""
        i = self.info
        head = ""
        if "score" in i:
            head = _fmt_score(*i["score"]) + (f"/{i['depth']}" if "depth" in i else "")
        return (head + " " if head else "") + f"{elapsed:.3f}s"

    def option_default(self, name: str) -> str | None:
        """The default value the engine declares for option ``name`` (None: not declared)."""
        return None

    def quit(self) -> int | None:
        return self.proc.quit()

    def kill(self) -> None:
        self.proc.kill()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.quit()


def _is_readyok(line: str) -> bool:
    return line.strip() == "readyok"


def _check_uci_value(decl: dict, value: str) -> str | None:
    """Why ``value`` does not fit a UCI option declaration, or None."""
    kind = decl.get("type")
    if kind == "spin":
        try:
            v = int(value)
        except ValueError:
            return f"value {value!r} is not an integer"
        lo, hi = decl.get("min"), decl.get("max")
        if lo is not None and hi is not None and not lo <= v <= hi:
            return f"value {v} is out of range {lo}..{hi}"
    elif kind == "check" and value.lower() not in ("true", "false"):
        return f"value {value!r} is not true or false"
    elif kind == "combo" and decl.get("vars") and value.lower() not in (x.lower() for x in decl["vars"]):
        return f"value {value!r} is not one of {', '.join(decl['vars'])}"
    return None


def _parse_uci_option(tok: list[str]) -> tuple[str, dict]:
    """``option name N type T default D min A max B var V...`` -> (name, {type, default, min, max, vars})."""
    keys = ("type", "default", "min", "max", "var")
    i = tok.index("name") + 1
    j = i
    while j < len(tok) and tok[j] not in keys:
        j += 1
    name = " ".join(tok[i:j])
    decl: dict = {"vars": []}
    while j < len(tok):
        k = tok[j]
        j += 1
        s = j
        while j < len(tok) and tok[j] not in keys:
            j += 1
        val = " ".join(tok[s:j])
        if k == "var":
            decl["vars"].append(val)
        elif k in ("min", "max"):
            try:
                decl[k] = int(val)
            except ValueError:
                pass
        else:
            decl[k] = val
    return name, decl


class UciEngine(Engine):
    """Drives a UCI engine the way Cute Chess does (``uci``, ``setoption``, ``ucinewgame``,
    ``position ... moves ...``, ``isready``, ``go ...``, ``bestmove``)."""
    proto = "uci"

    def _handshake(self):
        p = self.proc
        p.send("uci")
        deadline = time.monotonic() + self.handshake_timeout
        self.options: dict = {}          # lower-case name -> (name, declaration)
        self.variants: list[str] | None = None
        while True:
            try:
                _, line = p.readline(deadline)
            except NoReply:
                self._fail(f"no 'uciok' within {self.handshake_timeout:g} s after 'uci'")
            tok = line.split()
            if not tok:
                continue
            if tok[0] == "uciok":
                break
            if tok[:2] == ["id", "name"]:
                self.id_name = line.split(None, 2)[2].strip() if len(tok) > 2 else None
            elif tok[0] == "option" and "name" in tok and "type" in tok:
                name, decl = _parse_uci_option(tok)
                self.options[name.lower()] = (name, decl)
                if name == "UCI_Variant":
                    self.variants = decl["vars"]
        self.uci_variant = None
        if self.variant is not None:
            self.uci_variant = self._variant_name(self.variant)
        sent = []
        for k, v in self.spec.options.items():
            known = self.options.get(k.lower())
            if known is None:
                self._warn(f"unknown option {k!r} (ignored; it lists: "
                           f"{', '.join(n for n, _ in self.options.values()) or 'none'})")
                continue
            why = _check_uci_value(known[1], v)
            if why:       # not sent: some engines crash on such a value
                self._warn(f"option {known[0]!r}: {why} (not sent)")
                continue
            p.send(f"setoption name {known[0]} value {v}")
            sent.append(known[0])
        try:
            lines = self.sync(self.ready_timeout)
        except NoReply:
            self._fail(f"no 'readyok' within {self.ready_timeout:g} s after 'isready'")
        self._report_option_errors(lines, sent)

    def _report_option_errors(self, lines: list[str], names: list[str]) -> None:
        """Warn about engine lines (answers to ``setoption``) that name an option and complain."""
        for line in lines:
            low = line.lower()
            if not any(w in low for w in ("error", "no such option", "invalid", "unknown", "illegal")):
                continue
            for n in names:
                if n.lower() in low:
                    self._warn(f"option {n!r} refused: {line.strip()}")
                    break

    def _variant_name(self, variant: str) -> str | None:
        """The UCI_Variant value for ``variant`` (None: chess on an engine without the option)."""
        vs = self.variants or []
        if variant == "chess":
            # Cute Chess sends 'standard' only if listed; 'chess' is preferred
            return "chess" if "chess" in vs else ("standard" if "standard" in vs else None)
        if self.variants is None or variant not in self.variants:
            self._fail(f"does not support variant {variant!r} (no 'var {variant}' in its UCI_Variant option)")
        return variant

    def option_default(self, name: str) -> str | None:
        known = self.options.get(name.lower())
        return known[1].get("default") if known else None

    # ------------------------------------------------------------------ plain calls
    def set_option(self, name: str, value) -> None:
        known = self.options.get(name.lower())
        self.proc.send(f"setoption name {known[0] if known else name} value {value}")

    def set_variant(self, variant: str) -> None:
        """Switch to ``variant`` (raises :class:`EngineError` if the engine lacks it)."""
        self.variant = variant
        self.uci_variant = self._variant_name(variant)
        if self.uci_variant:
            self.proc.send(f"setoption name UCI_Variant value {self.uci_variant}")

    def sync(self, timeout: float = PING_TIMEOUT) -> list[str]:
        """``isready`` -> ``readyok``; returns the lines read before it.
        Raises :class:`NoReply` / :class:`Died`."""
        self.proc.send("isready")
        return self.proc.expect(_is_readyok, timeout)[1][:-1]

    @staticmethod
    def _position_command(fen: str | None, moves) -> str:
        cmd = "position startpos" if fen is None else f"position fen {fen}"
        if moves:
            cmd += " moves " + " ".join(moves)
        return cmd

    def position(self, fen: str | None = None, moves=()) -> None:
        """``position startpos|fen FEN [moves ...]``."""
        self.proc.send(self._position_command(fen, moves))

    def search(self, go: str, timeout: float) -> SearchResult:
        """Send ``go`` + ``go`` arguments (e.g. ``"depth 9"``) and read up to ``bestmove``."""
        self.proc.send(f"go {go}".rstrip())
        infos = []
        deadline = time.monotonic() + timeout
        while True:
            _, line = self.proc.readline(deadline)
            tok = line.split()
            if not tok:
                continue
            if tok[0] == "bestmove":
                ponder = tok[3] if len(tok) > 3 and tok[2] == "ponder" else None
                return SearchResult(tok[1] if len(tok) > 1 else "", ponder, infos)
            if tok[0] == "info":
                infos.append(parse_uci_info(tok))

    def perft(self, depth: int, timeout: float) -> int:
        """``go perft DEPTH`` (Stockfish's extension): the count of ``Nodes searched: N``."""
        self.proc.send(f"go perft {depth}")
        line, _ = self.proc.expect(lambda s: s.startswith("Nodes searched"), timeout)
        return int(line.split(":")[1])

    # ------------------------------------------------------------------ game driving
    def new_game(self, game=None, tc=None):
        if self.uci_variant:
            self.proc.send(f"setoption name UCI_Variant value {self.uci_variant}")
        self.proc.send("ucinewgame")
        self.sync(PING_TIMEOUT)

    def go(self, game, tc, clocks: list, incs: list | None = None) -> float:
        """Send the game's position, ``isready`` and ``go`` for time control ``tc``; returns
        the monotonic time ``go`` was written. ``incs``: White's and Black's increments in
        seconds when they differ (time odds); default ``tc.inc`` for both.

        With a clock or a move time, ``go`` waits for ``readyok`` (the engine has the
        position before its clock starts). Without either (depth or node limits only) no
        clock is charged, so ``go`` follows ``isready`` at once, in the same write, and
        ``readyok`` is read after it: the same commands in the same order, without a
        round trip per move. Raises :class:`NoReply` / :class:`Died` as :meth:`sync`."""
        timed = bool(tc.clock or tc.movetime)
        if timed:
            self.position(None if game.standard_start else game.start_fen, game.uci)
            self.sync(PING_TIMEOUT)
        parts = ["go"]
        if tc.clock:
            parts += [f"wtime {max(1, int(clocks[0]))}", f"btime {max(1, int(clocks[1]))}"]
            wi, bi = incs if incs is not None else (tc.inc, tc.inc)
            if wi > 0 or bi > 0:
                parts += [f"winc {int(round(wi * 1000))}", f"binc {int(round(bi * 1000))}"]
        elif tc.movetime:
            parts.append(f"movetime {tc.movetime}")
        if tc.depth:
            parts.append(f"depth {tc.depth}")
        if getattr(tc, "nodes", None):
            parts.append(f"nodes {tc.nodes}")
        self.info = {}
        if timed:
            t = time.monotonic()
            self.proc.send(" ".join(parts))
            return t
        fen = None if game.standard_start else game.start_fen
        t = time.monotonic()
        self.proc.send_lines([self._position_command(fen, game.uci), "isready", " ".join(parts)])
        self.proc.expect(_is_readyok, PING_TIMEOUT)
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
                i = parse_uci_info(tok)
                if "bound" in i or i.get("multipv", 1) != 1:
                    continue
                for k in ("score", "depth"):
                    if k in i:
                        self.info[k] = i[k]

    def end_game(self, result: str, comment: str):
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
        self.option_names: list[str] = []
        self.option_decls: dict = {}     # lower-case name -> ['spin', default, min, max] etc.
        t0 = time.monotonic()
        hard = t0 + self.handshake_timeout
        saw_done0 = False
        while True:
            deadline = hard if saw_done0 else min(hard, t0 + XBOARD_NODONE_WAIT)
            try:
                _, line = p.readline(deadline)
            except NoReply:
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
                if k == "option":
                    name, _, decl = v.partition(" -")
                    self.option_names.append(name.strip())
                    self.option_decls[name.strip().lower()] = decl.split()
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
        self.xb_variants = [v.strip() for v in f["variants"].split(",")] if "variants" in f else ["normal"]
        if self.variant is not None:
            need = "normal" if self.variant == "chess" else self.variant
            if need not in self.xb_variants:
                self._fail(f"does not support variant {self.variant!r} (not in its 'variants' feature)")
        known = {n.lower(): n for n in self.option_names}
        sent = []
        for k, v in self.spec.options.items():
            if k.lower() not in known:
                self._warn(f"unknown option {k!r} (ignored; its option features: "
                           f"{', '.join(self.option_names) or 'none'})")
                continue
            p.send(f"option {known[k.lower()]}={v}")
            sent.append(known[k.lower()])
        self.ping_no = 0
        if self.ping:
            try:
                lines = self.sync(self.ready_timeout)
            except NoReply:
                self._fail(f"no 'pong' within {self.ready_timeout:g} s")
            for line in lines:
                low = line.lower()
                if any(w in low for w in ("error", "unknown", "invalid", "illegal")) and \
                        any(n.lower() in low for n in sent):
                    self._warn(f"option refused: {line.strip()}")
        self.force = True
        self.known = 0

    def option_default(self, name: str) -> str | None:
        decl = self.option_decls.get(name.lower())
        return decl[1] if decl and len(decl) > 1 and decl[0] in ("spin", "check", "string") else None

    def sync(self, timeout: float = PING_TIMEOUT) -> list[str]:
        """``ping N`` -> ``pong N`` (if the engine has the ping feature); returns the lines before it."""
        if not self.ping:
            return []
        self.ping_no += 1
        want = ["pong", str(self.ping_no)]
        self.proc.send(f"ping {self.ping_no}")
        return self.proc.expect(lambda s: s.split()[:2] == want, timeout)[1][:-1]

    def _move_text(self, game, i: int) -> str:
        if self.use_san:
            return cecp_from_uci(game.san[i]) if game.height == 10 else game.san[i]
        return game.uci0[i]

    def new_game(self, game, tc):
        p = self.proc
        p.send("new")
        if game.variant != "chess":
            p.send(f"variant {game.variant}")
        p.send("force")
        if not game.standard_start:
            if not self.setboard:
                raise EngineError(f"engine {self.label!r} has no setboard feature; cannot start from a FEN")
            p.send(f"setboard {game.fen_for_xboard()}")
        if tc.clock:
            b = tc.base
            mins, secs = int(b // 60), b - 60 * int(b // 60)
            sec = seconds_text(secs).zfill(2) if secs == int(secs) else seconds_text(secs)
            p.send(f"level 0 {mins}:{sec} {seconds_text(tc.inc)}")
        elif tc.movetime:
            p.send(f"st {seconds_text(tc.movetime / 1000)}")
        else:
            p.send("st 86400")
        if tc.depth:
            p.send(f"sd {tc.depth}")
        p.send("post")
        p.send("easy")
        self.force = True
        self.known = 0
        self.sync(PING_TIMEOUT)

    def go(self, game, tc, clocks: list, incs: list | None = None) -> float:
        p = self.proc
        pending = list(range(self.known, len(game.uci)))
        self.sync(PING_TIMEOUT)
        mv = "usermove " if self.usermove else ""
        if not self.force and len(pending) != 1:
            p.send("force")
            self.force = True
        if self.force:
            for i in pending:
                p.send(mv + self._move_text(game, i))
            pending = []
        if tc.clock and self.use_time:
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
        self.known = len(game.uci)
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
                raise Forfeit("resign", line)
            if line.startswith("Illegal move"):
                raise Forfeit("claims-illegal", line)
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
        self.sync(PING_TIMEOUT)



def start_engine(spec: EngineSpec, label: str | None = None, variant: str | None = None, debug=None,
                 handshake_timeout: float = HANDSHAKE_TIMEOUT, ready_timeout: float = READY_TIMEOUT,
                 warn=None) -> Engine:
    """Start and handshake one engine. Raises :class:`EngineError` with a message naming it."""
    cls = UciEngine if spec.proto == "uci" else XboardEngine
    return cls(spec, label, variant, debug, handshake_timeout, ready_timeout, warn)
