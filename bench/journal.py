"""The results journal of ``cardinal match``: one JSON object per line, appended,
flushed and fsynced as each game pair is recorded (format in README.md, "Results
journal"). Only the match client writes it (and the PGN), so a pair is recorded
once; ``--resume`` reads it back.
"""
from __future__ import annotations

import fcntl
import errno
import json
import os
import re
import tempfile
import time

from bench.outputs import naming

FORMAT = "cardinal-match-journal"
VERSION = 1


def now_iso(t: float | None = None) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() if t is None else t))


def fsync_write(fh, text: str) -> None:
    """Write, flush and fsync (the data is on disk when this returns). A file that cannot be
    synced (a device or pipe such as ``/dev/null`` or ``/dev/stdout``: EINVAL) is only flushed."""
    fh.write(text)
    fh.flush()
    try:
        os.fsync(fh.fileno())
    except OSError as e:
        if e.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EROFS) or os.path.isfile(getattr(fh, "name", "")):
            raise


class Journal:
    """Appends JSON lines to ``path`` (created if missing), each one on disk before
    :meth:`write` returns."""

    def __init__(self, path: str):
        self.path = path
        self.fh = open(path, "a", encoding="utf-8")

    def write(self, obj: dict) -> None:
        """Append ``obj`` as one line. Raises ``OSError`` naming the journal (a full disk)."""
        obj.setdefault("time", now_iso())
        with naming(self.path):
            fsync_write(self.fh, json.dumps(obj, separators=(",", ":"), allow_nan=False) + "\n")

    def close(self) -> None:
        try:
            self.fh.close()
        except OSError:
            pass


class InUse(ValueError):
    """An output file is held by another running ``cardinal match``."""


class OutputLock:
    """The exclusive lock of one output file of a running match: ``fcntl.flock`` on
    ``PATH.lock`` beside it (the file's real path), which holds the PID of this process.
    The kernel drops the lock when the process ends, however it ends; :meth:`release`
    also removes the lock file. Raises :class:`InUse`, naming the holder's PID, when
    another process holds it."""

    def __init__(self, path: str):
        self.path = path
        self.lock_path = os.path.realpath(path) + ".lock"
        while True:
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                try:
                    pid = os.read(fd, 64).decode("ascii", "replace").strip()
                except OSError:
                    pid = ""
                os.close(fd)
                holder = f"pid {pid}" if pid.isdigit() else "pid not known"
                raise InUse(f"{path} is in use by another cardinal match ({holder}): wait for that "
                            f"run to end, or stop it first") from None
            except BaseException:
                os.close(fd)
                raise
            # the holder may have removed the file between our open and our lock: lock the new one
            try:
                st = os.stat(self.lock_path)
                same = (st.st_dev, st.st_ino) == (os.fstat(fd).st_dev, os.fstat(fd).st_ino)
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        self.fd = fd
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())

    def release(self) -> None:
        if self.fd is None:
            return
        try:
            os.unlink(self.lock_path)     # while still held: a later opener sees it gone and retries
        except OSError:
            pass
        os.close(self.fd)
        self.fd = None


def lock_outputs(paths) -> list:
    """:class:`OutputLock` of each path (None and repeats skipped), all or none: on
    :class:`InUse` (or ``OSError``) the ones taken are released before it is raised. A path
    that exists and is no regular file (``/dev/null``, ``/dev/stdout``) is not locked: any
    number of runs may write there, and no lock file is made beside it."""
    held, seen = [], set()
    try:
        for p in paths:
            if p is None or os.path.realpath(p) in seen or (os.path.exists(p) and not os.path.isfile(p)):
                continue
            seen.add(os.path.realpath(p))
            held.append(OutputLock(p))
    except BaseException:
        release_all(held)
        raise
    return held


def release_all(locks: list) -> None:
    for lk in reversed(locks):
        lk.release()


def read(path: str) -> tuple[dict, dict, list]:
    """``(header, pairs, lines)`` of a journal: the ``match`` header, the ``pair`` lines
    by pair id (the first one of an id; later ones are ignored) and every parsed line.
    A last line cut short by a crash is dropped from the file. Raises ``ValueError``
    (not a journal) and ``OSError``."""
    with open(path, "rb") as fh:
        data = fh.read()
    end = data.rfind(b"\n") + 1
    if end < len(data):                  # a partial last line (crash while writing): cut it
        with open(path, "r+b") as fh:
            fh.truncate(end)
            os.fsync(fh.fileno())
    lines = []
    for n, raw in enumerate(data[:end].splitlines(), 1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            raise ValueError(f"{path}:{n}: not a JSON line") from None
        if not isinstance(obj, dict):
            raise ValueError(f"{path}:{n}: not a JSON object")
        lines.append(obj)
    if not lines or lines[0].get("type") != "match" or lines[0].get("format") != FORMAT:
        raise ValueError(f"{path}: not a cardinal match journal (no 'match' header line)")
    pairs: dict = {}
    for n, obj in enumerate(lines, 1):
        if obj.get("type") != "pair":
            continue
        games = obj.get("games")
        if not isinstance(obj.get("pair"), int) or not isinstance(games, list) or not games or \
                not all(isinstance(g, dict) and isinstance(g.get("round"), int) and g.get("score") in (0, 0.5, 1)
                        for g in games):
            raise ValueError(f"{path}: record {n} is not a valid 'pair' line")
        pairs.setdefault(obj["pair"], obj)
    return lines[0], pairs, lines


_ROUND = re.compile(r'^\[Round "(\d+)"\]$', re.M)


def keep_rounds(pgn_path: str, rounds: set, offset: int = 0) -> int:
    """Rewrite the PGN file (atomically: a temporary file renamed over it) keeping only
    the games after byte ``offset`` (where this match started writing; what was there
    before is kept as it is) whose Round is in ``rounds``, each once; returns how many games were
    dropped (0: the file is left untouched). Games of pairs the journal does not hold
    (written just before a crash) are dropped so that ``--resume`` plays them again."""
    if not os.path.exists(pgn_path):
        return 0
    with open(pgn_path, "rb") as fh:
        head = fh.read(offset)
        text = fh.read().decode("utf-8")
    blocks = [b for b in re.split(r"(?m)^(?=\[Event )", text) if b.strip()]
    kept, seen, dropped = [], set(), 0
    for b in blocks:
        m = _ROUND.search(b)
        r = int(m.group(1)) if m else None
        if r is None or r not in rounds or r in seen:
            dropped += 1
            continue
        seen.add(r)
        kept.append(b if b.endswith("\n\n") else b.rstrip("\n") + "\n\n")
    if not dropped:
        return 0
    d = os.path.dirname(os.path.abspath(pgn_path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".resume-", suffix=".pgn", dir=d)
    except OSError as e:          # named by the PGN, not by a temporary name the user never gave
        raise OSError(e.errno, e.strerror, pgn_path) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fsync_write(fh, head + "".join(kept).encode("utf-8"))
        os.replace(tmp, pgn_path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise OSError(e.errno, e.strerror, pgn_path) from None
        raise
    return dropped


def open_outputs(pgn_path: str | None, journal_path: str | None, keep: set | None = None,
                 offset: int = 0) -> tuple:
    """Open a run's outputs: ``(pgn_fh, pgn_offset, journal)``. With ``keep`` (a resumed
    run: the rounds its journal holds) the PGN is first cut to those games after byte
    ``offset`` (:func:`keep_rounds`); it is then opened for appending (``None`` without a
    path; ``pgn_offset`` is where this run starts writing) and the :class:`Journal` opened
    (``None`` without a path). Raises ``OSError``, with the PGN closed again if the journal
    cannot be opened."""
    if pgn_path and keep is not None:
        keep_rounds(pgn_path, keep, offset)
    pgn_fh = open(pgn_path, "a", encoding="utf-8") if pgn_path else None
    pgn_offset = pgn_fh.tell() if pgn_fh else 0
    try:
        jr = Journal(journal_path) if journal_path else None
    except OSError:
        if pgn_fh:
            pgn_fh.close()
        raise
    return pgn_fh, pgn_offset, jr
