"""The protocol loop behind ``cardinal`` (no arguments): UCI or XBoard/CECP v2 on stdin/stdout.

:func:`run` picks the protocol from the first command: ``uci`` -> UCI
(:mod:`engine.protocol.uci`), ``xboard`` or ``protover`` -> XBoard (:mod:`engine.protocol.xboard`).
A UCI-only command as the first line (``isready``, ``position``, ``go``, ...)
also selects UCI, like Stockfish; ``new`` selects XBoard.

Threads (the layer is plain Python; nothing here imports numpy or numba, so
``uciok`` goes out before numba loads):

* a reader thread turns stdin lines into ``("line", text)`` items on a queue
  (bytes decoded as UTF-8 with replacement, so no input can kill it) and puts
  ``("eof", None)`` at end of input;
* the command loop (the caller's thread) takes queue items one at a time;
* the warm-up thread (:class:`engine.protocol.session.Backend`) imports the numba core
  and builds and warms the :class:`search.driver.Searcher`;
* the search runs in the Searcher's worker thread; its callbacks write lines
  through :class:`Output` (one lock, every line flushed) or post
  ``("event", ...)`` items to the queue.

Bad input never ends the loop: an exception in a command is logged to stderr
(traceback included) and answered with one protocol error line; only ``quit``
or end of input returns (status 0).
"""
from __future__ import annotations

import io
import queue
import sys
import threading
import time

from .common import clean, log, log_exception
from .session import Backend
from .uci import UCIHandler
from .xboard import XBoardHandler

_UCI_FIRST = {"isready", "position", "go", "setoption", "ucinewgame", "d", "eval", "stop",
              "ponderhit", "debug", "register"}
_XBOARD_FIRST = {"xboard", "protover", "new"}
STDIN_THREAD = "cardinal-stdin"   # the reader thread's name: it only ever waits for input


class Output:
    """Line writer shared by the command loop and the search worker.

    ``send(line)`` writes one line and flushes, under a lock, so lines from two
    threads never interleave. A closed pipe (the GUI went away) is remembered
    in :attr:`broken` instead of raising.
    """

    def __init__(self, stream=None):
        stream = sys.stdout if stream is None else stream
        if isinstance(stream, (io.RawIOBase, io.BufferedIOBase)):
            self._buf = stream                       # a binary stream (BytesIO, a pipe opened 'wb')
        else:
            self._buf = getattr(stream, "buffer", None)
        self._text = stream
        self._lock = threading.Lock()
        self.broken = False

    def send(self, line: str) -> None:
        with self._lock:
            if self.broken:
                return
            try:
                if self._buf is not None:
                    self._buf.write((line + "\n").encode("utf-8", "replace"))
                    self._buf.flush()
                else:
                    self._text.write(line + "\n")
                    self._text.flush()
            except (OSError, ValueError):
                self.broken = True


class Input:
    """Reads stdin in a daemon thread; :meth:`get` returns ``(kind, payload)`` items.

    Kinds: ``"line"`` (stripped text), ``"eof"``, and ``"event"`` items posted by
    :meth:`post` (search results for the XBoard state machine).
    """

    def __init__(self, stream=None):
        self.stream = sys.stdin if stream is None else stream
        self.q: queue.Queue = queue.Queue()
        self.stash: list = []   # items taken off the queue early (see take_until)
        self._thread = threading.Thread(target=self._read, name=STDIN_THREAD, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        src = getattr(self.stream, "buffer", self.stream)
        try:
            while True:
                raw = src.readline()
                if not raw:
                    break
                if isinstance(raw, bytes):
                    raw = raw.decode("utf-8", "replace")
                self.q.put(("line", raw.strip()))
        except Exception:   # a broken stdin is end of input
            log_exception("stdin reader")
        self.q.put(("eof", None))

    def post(self, payload) -> None:
        """Queue an internal event (thread-safe)."""
        self.q.put(("event", payload))

    def get(self, timeout: float | None = None):
        """Next item (stashed ones first); ``None`` on timeout."""
        if self.stash:
            return self.stash.pop(0)
        try:
            return self.q.get(timeout=timeout)
        except queue.Empty:
            return None

    def take_until(self, match, timeout: float) -> object | None:
        """Wait for the first queued event whose payload satisfies ``match``; items
        read meanwhile are kept (in order) for later :meth:`get` calls. Returns the
        payload, or ``None`` after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        for i, item in enumerate(self.stash):
            if item[0] == "event" and match(item[1]):
                del self.stash[i]
                return item[1]
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                item = self.q.get(timeout=left)
            except queue.Empty:
                return None
            if item[0] == "event" and match(item[1]):
                return item[1]
            self.stash.append(item)


def run(stdin=None, stdout=None, searcher_factory=None) -> int:
    """Serve one protocol session until ``quit`` or end of input; returns 0.

    ``stdin``/``stdout`` default to the process streams (binary or text streams
    both work). ``searcher_factory(hash_mb=...)`` builds the search object
    (default: :class:`search.driver.Searcher`; tests may inject a fake, and the
    environment variable ``CARDINAL_SEARCHER=module:callable`` does the same for
    a whole process).
    """
    out = Output(stdout)
    inp = Input(stdin)
    backend = Backend(out, inp, searcher_factory)
    handler = None
    try:
        while True:
            item = inp.get()
            kind, payload = item
            if kind == "eof":
                break
            if handler is None:
                if kind != "line":
                    continue
                words = payload.split()
                if not words:
                    continue
                cmd = words[0]
                if cmd == "quit":
                    break
                if cmd == "uci" or cmd in _UCI_FIRST:
                    handler = UCIHandler(out, inp, backend)
                elif cmd in _XBOARD_FIRST:
                    handler = XBoardHandler(out, inp, backend)
                else:
                    out.send(f"info string error: unknown command '{clean(cmd, 60)}' (send uci or xboard first)")
                    continue
            try:
                if kind == "line":
                    keep = handler.handle(payload)
                else:
                    keep = handler.event(payload)
            except Exception:
                log_exception(f"command {clean(payload)!r}")
                keep = True
                try:
                    handler.report_error(payload)
                except Exception:
                    log_exception("error report")
            if keep is False:
                break
            if out.broken:
                break
    finally:
        if handler is not None:
            try:
                handler.shutdown()
            except Exception:
                log_exception("shutdown")
    return 0


__all__ = ["run", "Output", "Input", "log", "log_exception", "clean"]
