"""Helpers shared by the protocol modules: stderr diagnostics and safe echoing of input."""
from __future__ import annotations

import sys
import traceback


def log(msg: str) -> None:
    """One diagnostic line on stderr (never stdout: that is the protocol channel)."""
    try:
        sys.stderr.write(f"cardinal: {msg}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def log_exception(where: str) -> None:
    """The current exception's traceback on stderr."""
    try:
        sys.stderr.write(f"cardinal: exception in {where}:\n{traceback.format_exc()}")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def clean(text: str, limit: int = 200) -> str:
    """``text`` made safe to echo in one protocol line: control characters become
    spaces, and it is cut to ``limit`` characters."""
    t = "".join(ch if ch >= " " and ch != "\x7f" else " " for ch in str(text))
    return t if len(t) <= limit else t[:limit] + "..."
