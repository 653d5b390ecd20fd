"""The engine process behind a browser game: a thin adapter over a UCI child process.

The web layer needs only: start Cardinal (``[sys.executable, "-m", "engine"]``
with the working directory that holds the imported ``engine`` package, so the
page plays against this very source tree), send a line, receive every output
line on a callback (``None`` at end of file), kill. Keeping the interface this
small lets the process layer be swapped for the bench engine client.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

import engine as _engine_pkg

ENGINE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(_engine_pkg.__file__)))


def engine_command() -> tuple[list[str], str]:
    """``(argv, cwd)`` that starts this Cardinal speaking UCI."""
    return [sys.executable, "-m", "engine"], ENGINE_ROOT


class EngineAdapter:
    """One UCI engine process; ``on_line(text | None)`` is called from a reader thread."""

    def __init__(self, on_line):
        cmd, cwd = engine_command()
        self.proc = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, bufsize=1, errors="replace",
                                     start_new_session=True)
        self.pid = self.proc.pid
        self._on_line = on_line
        threading.Thread(target=self._read, daemon=True, name=f"engine-{self.pid}").start()

    def _read(self):
        try:
            for line in self.proc.stdout:
                self._on_line(line.rstrip("\r\n"))
        except (OSError, ValueError):
            pass
        self._on_line(None)

    def send(self, line: str) -> bool:
        """Write one line; False if the pipe is closed (the engine died)."""
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
            return True
        except (OSError, ValueError):
            return False

    def alive(self) -> bool:
        return self.proc.poll() is None

    def returncode(self):
        return self.proc.poll()

    def kill(self) -> None:
        """Kill the process group; idempotent."""
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        try:
            self.proc.stdin.close()
        except (OSError, ValueError):
            pass


def parse_info(tok: list[str]) -> dict:
    """Fields of a UCI ``info`` line: depth, seldepth, multipv, nodes, time, nps (ints),
    score ``(kind, value)``, bound, pv (moves). Unparsable fields are skipped."""
    out: dict = {}
    i = 1
    while i < len(tok):
        k = tok[i]
        try:
            if k in ("depth", "seldepth", "multipv", "nodes", "time", "nps", "hashfull"):
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
