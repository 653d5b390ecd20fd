"""Drive the real ``cardinal`` process (``python -m engine``) over pipes, with timeouts.

Every wait has a timeout, so a hung engine fails a test instead of hanging it::

    with EngineProcess() as e:
        e.send("uci")
        e.expect("uciok", timeout=5)
"""
from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class EngineTimeout(AssertionError):
    pass


_warm: list = []


def ensure_warm_cache(timeout: float = 600.0) -> None:
    """Fill this tree's numba cache (``cardinal warmup``) once per test run, so tests that
    time a warm start do not time a compile after a source change."""
    if _warm:
        return
    e = dict(os.environ)
    e["PYTHONPATH"] = ROOT + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    r = subprocess.run([sys.executable, "-m", "engine", "warmup"], cwd=ROOT, env=e, capture_output=True,
                       text=True, timeout=timeout)
    assert r.returncode == 0, r.stdout + r.stderr
    _warm.append(True)


class EngineProcess:
    """A running engine; ``lines`` keeps every stdout line in order."""

    def __init__(self, env: dict | None = None, args: tuple = ()):
        e = dict(os.environ)
        e["PYTHONPATH"] = ROOT + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
        e["PYTHONUNBUFFERED"] = "1"
        if env:
            e.update(env)
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen([sys.executable, "-m", "engine", *args], cwd=ROOT, env=e,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.q: queue.Queue = queue.Queue()
        self.lines: list[str] = []
        self.stderr: list[str] = []
        threading.Thread(target=self._pump, args=(self.proc.stdout, self.q), daemon=True).start()
        threading.Thread(target=self._pump_err, daemon=True).start()

    @staticmethod
    def _pump(stream, q):
        for raw in iter(stream.readline, b""):
            q.put(raw.decode("utf-8", "replace").rstrip("\r\n"))
        q.put(None)

    def _pump_err(self):
        for raw in iter(self.proc.stderr.readline, b""):
            self.stderr.append(raw.decode("utf-8", "replace").rstrip("\n"))

    # ------------------------------------------------------------ I/O
    def send(self, *lines: str | bytes) -> None:
        data = b"".join((ln if isinstance(ln, bytes) else ln.encode()) + b"\n" for ln in lines)
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def read_line(self, timeout: float) -> str:
        try:
            line = self.q.get(timeout=timeout)
        except queue.Empty:
            raise EngineTimeout(f"no output within {timeout} s; last lines: {self.lines[-8:]}\n"
                                f"stderr: {self.stderr[-20:]}") from None
        if line is None:
            self.q.put(None)
            raise EngineTimeout(f"engine closed stdout; last lines: {self.lines[-8:]}\nstderr: {self.stderr[-30:]}")
        self.lines.append(line)
        return line

    def expect(self, pattern: str, timeout: float = 10.0) -> list[str]:
        """Read until a line matching the regex ``pattern`` (full match); returns the lines
        read, the matching one last. Raises :class:`EngineTimeout`."""
        rx = re.compile(pattern)
        got = []
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise EngineTimeout(f"no line matching {pattern!r} within {timeout} s; got {got[-10:]}\n"
                                    f"stderr: {self.stderr[-20:]}")
            line = self.read_line(left)
            got.append(line)
            if rx.fullmatch(line):
                return got

    def drain(self, quiet: float = 0.2) -> list[str]:
        """Lines that arrive until ``quiet`` seconds pass without output."""
        got = []
        while True:
            try:
                line = self.q.get(timeout=quiet)
            except queue.Empty:
                return got
            if line is None:
                self.q.put(None)
                return got
            self.lines.append(line)
            got.append(line)

    def ask(self, line: str, pattern: str, timeout: float = 10.0) -> list[str]:
        self.send(line)
        return self.expect(pattern, timeout)

    # ------------------------------------------------------------ life cycle
    def close(self, timeout: float = 5.0) -> int | None:
        if self.proc.poll() is None:
            try:
                self.send("quit")
            except (BrokenPipeError, OSError):
                pass
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        for s in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                s.close()
            except OSError:
                pass
        return self.proc.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close(timeout=3.0)
