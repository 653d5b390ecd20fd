"""Drive the real ``cardinal`` process (``python -m engine``) over pipes, with timeouts.

A thin test wrapper over the engine client's process class
(:class:`bench.engines.EngineProcess`). Every wait has a timeout, so a hung
engine fails a test instead of hanging it::

    with EngineProcess() as e:
        e.send("uci")
        e.expect("uciok", timeout=5)
"""
from __future__ import annotations

import os
import re
import subprocess
import time

from bench import engines

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class EngineTimeout(AssertionError):
    pass


_warm: list = []


def ensure_warm_cache(timeout: float = 600.0) -> None:
    """Fill this tree's numba cache (``cardinal warmup``) once per test run, so tests that
    time a warm start do not time a compile after a source change."""
    if _warm:
        return
    cmd, cwd = engines.cardinal_command()
    r = subprocess.run(cmd + ["warmup"], cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, r.stdout + r.stderr
    _warm.append(True)


SLOW_LOAD_S = 2.0   # how long slow_loading_searcher's warm-up sleeps first


def slow_loading_searcher(hash_mb: int):
    """The real Searcher, whose warm-up first sleeps :data:`SLOW_LOAD_S` seconds: a warm numba
    cache loading on a busy machine. For ``CARDINAL_SEARCHER=tests.engine_proc:slow_loading_searcher``."""
    from search.driver import Searcher   # in the engine's warm-up thread

    class SlowLoading(Searcher):
        def warm_up(self):
            time.sleep(SLOW_LOAD_S)
            return super().warm_up()

    return SlowLoading(hash_mb=hash_mb)


class EngineProcess:
    """A running engine (the checkout's sources); ``lines`` keeps every stdout line read, in order."""

    def __init__(self, env: dict | None = None, args: tuple = ()):
        e = dict(os.environ)
        e["PYTHONUNBUFFERED"] = "1"
        if env:
            e.update(env)
        cmd, cwd = engines.cardinal_command()
        assert os.path.samefile(cwd, ROOT), f"tests import the engine from {cwd}, not the checkout {ROOT}"
        self.t0 = time.monotonic()
        self.p = engines.EngineProcess(cmd + list(args), "cardinal", cwd, e, stderr_lines=5000)
        self.proc = self.p.proc
        self.lines: list[str] = []

    @property
    def stderr(self) -> list[str]:
        return list(self.p.stderr_tail)

    # ------------------------------------------------------------ I/O
    def send(self, *lines: str | bytes) -> None:
        self.p.write(b"".join((ln if isinstance(ln, bytes) else ln.encode()) + b"\n" for ln in lines))

    def read_line(self, timeout: float) -> str:
        try:
            _, line = self.p.readline(time.monotonic() + timeout)
        except engines.NoReply:
            raise EngineTimeout(f"no output within {timeout} s; last lines: {self.lines[-8:]}\n"
                                f"stderr: {self.stderr[-20:]}") from None
        except engines.Died:
            raise EngineTimeout(f"engine closed stdout; last lines: {self.lines[-8:]}\n"
                                f"stderr: {self.stderr[-30:]}") from None
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
                _, line = self.p.readline(time.monotonic() + quiet)
            except (engines.NoReply, engines.Died):
                return got
            self.lines.append(line)
            got.append(line)

    def ask(self, line: str, pattern: str, timeout: float = 10.0) -> list[str]:
        self.send(line)
        return self.expect(pattern, timeout)

    # ------------------------------------------------------------ life cycle
    def close(self, timeout: float = 5.0) -> int | None:
        """``quit``, wait up to ``timeout`` s, then kill the process group; the exit status."""
        return self.p.quit(timeout=timeout)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close(timeout=3.0)
