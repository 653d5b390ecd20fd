"""The engine process behind a browser game: a thin adapter over :mod:`bench.engines`.

The web layer needs only: start Cardinal (``bench.engines.cardinal_command()``:
this interpreter, ``-m engine``, in the directory that holds the imported
``engine`` package, so the page plays against this very source tree), send a
line, receive every output line on a callback (``None`` at end of file), kill.
The process (own process group, reader threads, stderr tail) is
:class:`bench.engines.EngineProcess`; info lines are read with
:func:`bench.engines.parse_uci_info`.
"""
from __future__ import annotations

import threading
import time

from bench.engines import Died, EngineProcess, NoReply, cardinal_command, parse_uci_info

parse_info = parse_uci_info
POLL_S = 3600.0      # the pump blocks on the line queue; it ends at end of file


class EngineAdapter:
    """One UCI engine process; ``on_line(text | None)`` is called from a pump thread."""

    def __init__(self, on_line):
        cmd, cwd = cardinal_command()
        self.process = EngineProcess(cmd, label="cardinal", cwd=cwd)
        self.pid = self.process.pid
        self._on_line = on_line
        threading.Thread(target=self._pump, daemon=True, name=f"engine-{self.pid}").start()

    def _pump(self):
        while True:
            try:
                _, line = self.process.readline(time.monotonic() + POLL_S)
            except NoReply:
                continue
            except Died:
                break
            self._on_line(line)
        self._on_line(None)

    def send(self, line: str) -> bool:
        """Write one line; False if the pipe is closed (the engine died)."""
        try:
            self.process.send(line)
            return True
        except Died:
            return False

    def alive(self) -> bool:
        return self.process.alive()

    def returncode(self):
        return self.process.proc.poll()

    def stderr_text(self) -> str:
        return self.process.stderr_text()

    def kill(self) -> None:
        """Kill the process group; idempotent."""
        self.process.kill()
