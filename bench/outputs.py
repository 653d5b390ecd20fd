"""Output files of the benchmarks, checked before a run rather than after it."""
from __future__ import annotations

import os


def check_output_path(path: str | None, option: str = "--json") -> str | None:
    """Why ``path`` cannot be written as an output file, as one line (None: it can, or no path).
    Creates nothing: a missing directory, a directory given as the file, or a place
    without write permission is found before any work is done."""
    if path is None:
        return None
    if path == "":
        return f"{option}: empty file name"
    if os.path.isdir(path):
        return f"{option} {path}: is a directory"
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        return f"{option} {path}: no such directory: {parent}"
    if os.path.exists(path):
        if not os.access(path, os.W_OK):
            return f"{option} {path}: permission denied"
    elif not os.access(parent, os.W_OK | os.X_OK):
        return f"{option} {path}: permission denied (directory {parent})"
    return None
