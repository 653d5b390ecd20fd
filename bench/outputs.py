"""Output files of the benchmarks, the match runner and the tuner: checked before a run
rather than after it, and a write that fails later reported with the path the user gave.

:func:`check_output_path` tries for real what the run will do: it opens an existing file
for appending (writing nothing), or creates and removes a file in the directory the output
goes to. Permission bits alone say little: root passes every ``os.access`` test, and
``/proc`` or ``/sys`` refuse new files whatever the bits say. A device such as
``/dev/full`` opens fine and fails only on the first write: :func:`naming` and
:func:`write_text` turn that failure into an ``OSError`` that names the output file, for a
one-line ``error: PATH: REASON`` (:func:`error_line`).
"""
from __future__ import annotations

import contextlib
import os
import stat
import tempfile


def check_output_path(path: str | None, option: str = "--json", *, replace: bool = False,
                      mkdir: bool = False) -> str | None:
    """Why ``path`` cannot be written as an output file, as one line (None: it can, or no path).

    An existing file is opened for appending and closed (its contents and times stay as
    they are; a FIFO is not opened); a new file is probed by creating and removing a
    temporary file beside it. ``replace``: the output is written to a new file in the same
    directory and renamed over ``path`` (an existing ``path`` must be a regular file, and
    the directory must take new files). ``mkdir``: missing directories are created by the
    run, so the nearest existing one is probed. Leaves nothing behind.
    """
    if path is None:
        return None
    if path == "":
        return f"{option}: empty file name"
    if os.path.isdir(path):
        return f"{option} {path}: is a directory"
    try:
        st = os.stat(path)
    except OSError:
        st = None
    if st is not None and replace and not stat.S_ISREG(st.st_mode):
        return f"{option} {path}: not a regular file (the output is written to a new file, then renamed)"
    if st is not None and not replace:
        if stat.S_ISFIFO(st.st_mode):
            return None
        try:
            with open(path, "ab"):
                pass
        except OSError as e:
            return f"{option} {path}: cannot write it ({e.strerror or e})"
        return None
    parent = os.path.dirname(os.path.abspath(path))
    where = parent
    if mkdir:
        while not os.path.lexists(where) and os.path.dirname(where) != where:
            where = os.path.dirname(where)
    if not os.path.isdir(where):
        return f"{option} {path}: no such directory: {parent}"
    try:
        fd, probe = tempfile.mkstemp(prefix=".cardinal-probe-", dir=where)
    except OSError as e:
        return f"{option} {path}: cannot create a file in {where} ({e.strerror or e})"
    os.close(fd)
    try:
        os.unlink(probe)
    except OSError:
        pass
    return None


@contextlib.contextmanager
def naming(path: str):
    """Inside, an ``OSError`` that names no file (a failed write, flush, fsync or close:
    ``/dev/full``, a full disk) is raised again naming ``path``."""
    try:
        yield
    except OSError as e:
        if e.filename is None:
            raise OSError(e.errno, e.strerror or str(e), path) from e
        raise


def write_text(path: str, text: str) -> None:
    """Write ``text`` to ``path`` (created or truncated). Raises ``OSError`` naming ``path``."""
    with naming(path):
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)


def error_line(e: OSError) -> str:
    """``PATH: REASON`` of an ``OSError`` (just the reason when it names no file)."""
    why = e.strerror or str(e)
    return f"{e.filename}: {why}" if e.filename else why
