"""Where numba's on-disk cache lives, keyed by the package's own sources.

numba keys a cached function by its own source file only, but a cached caller
embeds the compiled code of every callee it inlined (the search embeds the move
generator, evaluation and TT code). A change to a callee's file would leave the
caller's cache stale. So Cardinal gives numba one cache directory per *source
hash*: the SHA-1 of every ``.py`` file of the packages numba compiles or reads
constants from (``engine/rules``, ``search``, ``variants``) and of numba's
version. Any change to any of them selects a new, empty directory; nothing can
go stale, and no list of functions has to be kept by hand.

The directory (chosen by :func:`configure`, which must run before numba is
imported; :mod:`engine.rules.jit` does that):

1. ``$NUMBA_CACHE_DIR/cardinal-<hash>`` when the user set ``NUMBA_CACHE_DIR``;
2. else ``<package>/engine/__pycache__/numba-<hash>`` next to the sources, when
   that is writable (a virtualenv or user install);
3. else the per-user ``${XDG_CACHE_HOME:-~/.cache}/numba/cardinal-<hash>`` (a
   read-only, system-wide install);
4. else numba compiles in memory at every start (nothing writable).

Older sibling directories of another hash are removed (best effort) when a new
one is made. The module is plain Python (no numpy, no numba) so the protocol
layer can ask :func:`is_warm` before its first answer.

Also here: :func:`is_warm`/:func:`mark_warm` (a marker written after a complete
warm-up, so a front end can tell a cold start from a warm one) and
:func:`compile_lock` (an exclusive file lock in the cache directory: a second
cold process waits for the first one's compile and then loads its cache instead
of compiling the same code again).
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]      # the directory holding engine/, search/, variants/
HASHED_DIRS = ("engine/rules", "search", "variants")
WARM_MARKER = "warm"
LOCK_FILE = "compile.lock"
_USER_PREFIX = "cardinal-"
_LOCAL_PREFIX = "numba-"

_state: dict = {}
_lock = threading.Lock()   # configure() may be called from the warm-up thread and the main thread


def _numba_version() -> str:
    try:
        from importlib.metadata import version
        return version("numba")
    except Exception:   # metadata missing (unusual install): the sources still key the cache
        return "?"


def source_hash() -> str:
    """First 16 hex digits of the SHA-1 over the hashed packages' ``.py`` files (path and
    bytes, sorted by path) and numba's version. Raises nothing; ~1 ms."""
    if "hash" not in _state:
        h = hashlib.sha1(_numba_version().encode())
        for d in HASHED_DIRS:
            for p in sorted((ROOT / d).glob("*.py")):
                h.update(str(p.relative_to(ROOT)).encode())
                try:
                    h.update(p.read_bytes())
                except OSError:
                    pass
        _state["hash"] = h.hexdigest()[:16]
    return _state["hash"]


def _writable_dir(path: Path) -> bool:
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".probe-{os.getpid()}-{threading.get_ident()}"
        probe.write_text("x")
        probe.unlink()
        return True
    except OSError:
        return False


def _prune(parent: Path, prefix: str, keep: str) -> None:
    """Remove ``parent/<prefix>*`` directories other than ``keep`` (caches of older sources)."""
    try:
        for d in parent.iterdir():
            if d.name.startswith(prefix) and d.name != keep and d.is_dir():
                shutil.rmtree(d, ignore_errors=True)
    except OSError:
        pass


def configure() -> str | None:
    """Choose the cache directory (see the module doc), export it as ``NUMBA_CACHE_DIR``
    and return it (``None``: no writable place, numba compiles in memory). Idempotent;
    child processes inherit the choice through the environment."""
    with _lock:
        if "dir" not in _state:
            _state["dir"] = _choose()
            if _state["dir"]:
                os.environ["NUMBA_CACHE_DIR"] = _state["dir"]
        return _state["dir"]


def _choose() -> str | None:
    hx = source_hash()
    user = os.environ.get("NUMBA_CACHE_DIR", "")
    chosen = None
    if user and Path(user).name in (_USER_PREFIX + hx, _LOCAL_PREFIX + hx):
        chosen = Path(user)                       # inherited from a parent Cardinal process
    elif user:
        chosen = Path(user) / (_USER_PREFIX + hx)
        if _writable_dir(chosen):
            _prune(Path(user), _USER_PREFIX, chosen.name)
        else:
            chosen = None
    else:
        local = ROOT / "engine" / "__pycache__" / (_LOCAL_PREFIX + hx)
        cache_home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        per_user = cache_home / "numba" / (_USER_PREFIX + hx)
        for cand, prefix in ((local, _LOCAL_PREFIX), (per_user, _USER_PREFIX)):
            if cand.is_dir() and os.access(cand, os.W_OK) or _writable_dir(cand):
                chosen = cand
                _prune(cand.parent, prefix, cand.name)
                break
    return str(chosen) if chosen else None


def cache_dir() -> str | None:
    """The chosen cache directory (configures on first call)."""
    return configure()


def is_warm() -> bool:
    """True if a complete warm-up has filled the current cache directory."""
    d = configure()
    return bool(d) and os.path.exists(os.path.join(d, WARM_MARKER))


def mark_warm() -> None:
    """Record that the current cache directory holds every compiled function (after a
    complete warm-up). Best effort: an unwritable directory is ignored."""
    d = configure()
    if d:
        with contextlib.suppress(OSError):
            with open(os.path.join(d, WARM_MARKER), "w") as f:
                f.write(source_hash() + "\n")


CORE_LOCK = "core.lock"     # held while the rules core compiles (first warm-up stage)


@contextlib.contextmanager
def compile_lock(name: str = LOCK_FILE):
    """Hold an exclusive lock on ``<cache dir>/<name>`` while compiling (blocks while another
    process holds it): a second cold process waits, then loads what the first one wrote.
    Warm-ups use two, one per stage (:data:`CORE_LOCK` for the rules core, the default for
    the search), so a second process gets the rules core while the first still compiles the
    search. A no-op where file locks or the directory are unavailable."""
    d = configure()
    fh = None
    try:
        import fcntl   # POSIX only
        if d:
            fh = open(os.path.join(d, name), "a")
            fcntl.flock(fh, fcntl.LOCK_EX)
    except (ImportError, OSError):
        if fh is not None:
            fh.close()
        fh = None
    try:
        yield
    finally:
        if fh is not None:
            fh.close()   # closing the file releases the lock
