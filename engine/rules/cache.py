"""Where numba's on-disk cache lives, keyed by the package's own sources.

numba keys a cached function by its own source file only, but a cached caller
embeds the compiled code of every callee it inlined (the search embeds the move
generator, evaluation and TT code) and freezes the module-level constants it
reads (layout offsets, tables). A change to a callee's file or to a constant would
leave the caller's cache stale. So Cardinal gives numba one cache directory per
*compiled-source hash*: the SHA-1 of every module that numba compiles or reads
constants from, and of the numba, llvmlite and numpy versions. Any change to any
of them selects a new, empty directory; nothing can go stale.

Which modules count is derived from the sources, not kept by hand
(:func:`find_compiled_modules`): every module of the packages with an ``@njit``
or ``@intrinsic`` function, and every package module whose names those use in
compiled code or at module level, transitively (where frozen constants come
from). Pure-Python modules that only *call* the kernels (the search driver,
time management, limits, ``Position``, FEN, SAN) are not in the key: editing
them keeps the compiled cache. The list is remembered (``compiled-modules.json``
beside the cache directories) while no source file changes.

The directory (chosen by :func:`configure`, which must run before numba is
imported; :mod:`engine.rules.jit` does that):

1. ``$NUMBA_CACHE_DIR/cardinal-<hash>`` when the user set ``NUMBA_CACHE_DIR``;
2. else ``<package>/engine/__pycache__/numba-<hash>`` next to the sources, when
   that is writable (a virtualenv or user install);
3. else the per-user ``${XDG_CACHE_HOME:-~/.cache}/numba/cardinal-<hash>`` (a
   read-only, system-wide install);
4. else numba compiles in memory at every start (nothing writable).

Older sibling directories of another hash are removed (best effort) when a new
one is made. A directory inherited from a Cardinal process of *other* sources (the
runner of a match between two versions) is neither nested in nor pruned: each version
keeps its own cache, and the match runner starts its engines with the user's
``NUMBA_CACHE_DIR`` (:func:`foreign_env`), not its own choice. The module is plain Python (no numpy, no numba) so the protocol
layer can ask :func:`is_warm` before its first answer.

Also here: :func:`is_warm`/:func:`mark_warm` (a marker written after a complete
warm-up, so a front end can tell a cold start from a warm one) and
:func:`compile_lock` (an exclusive file lock in the cache directory: a second
cold process waits for the first one's compile and then loads its cache instead
of compiling the same code again).
"""
from __future__ import annotations

import ast
import contextlib
import hashlib
import json
import os
import re
import shutil
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]      # the directory holding engine/, search/, variants/
PACKAGES = ("engine", "search", "variants", "bench")   # where compiled code and its constants may live
WARM_MARKER = "warm"
LOCK_FILE = "compile.lock"
_USER_PREFIX = "cardinal-"
_LOCAL_PREFIX = "numba-"
_state: dict = {}
_lock = threading.Lock()   # configure() may be called from the warm-up thread and the main thread


def _version(dist: str) -> str:
    try:
        from importlib.metadata import version
        return version(dist)
    except Exception:   # metadata missing (unusual install): the sources still key the cache
        return "?"


def _module_path(name: str) -> Path | None:
    """``engine.rules.layout`` -> its ``.py`` file under :data:`ROOT` (module or package), or None."""
    if name.split(".")[0] not in PACKAGES:
        return None
    base = ROOT.joinpath(*name.split("."))
    for cand in (base.with_suffix(".py"), base / "__init__.py"):
        if cand.is_file():
            return cand
    return None


def _package_of(path: Path) -> list[str]:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return parts[:-1]        # a package's __init__ is its own package; a module's is its folder


def _is_compiled(fn: ast.AST) -> bool:
    """A function numba compiles: decorated ``@njit``, ``@njit(...)``, ``@intrinsic`` (or numba.*)."""
    for d in getattr(fn, "decorator_list", ()):
        d = d.func if isinstance(d, ast.Call) else d
        name = d.attr if isinstance(d, ast.Attribute) else getattr(d, "id", "")
        if name in ("njit", "jit", "intrinsic"):
            return True
    return False


def _statements(body):
    """Every statement of ``body`` and of the blocks nested in it, except the bodies of compiled
    functions (they import nothing); not expressions: cheap."""
    for node in body:
        yield node
        if not _is_compiled(node):
            for f in ("body", "orelse", "finalbody", "handlers"):
                yield from _statements(getattr(node, f, ()))


def _bindings(tree: ast.Module, path: Path) -> dict[str, str]:
    """Local name -> the package module it denotes or comes from (``from X import a`` binds ``a``
    to ``X.a`` if that is a module, else to ``X``), for imports at any level of ``tree``."""
    out: dict[str, str] = {}
    for node in _statements(tree.body):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = _package_of(path)
                pkg = pkg[:len(pkg) - node.level + 1]
                base = ".".join(pkg + ([base] if base else []))
            for a in node.names:
                sub = f"{base}.{a.name}"
                out[a.asname or a.name] = sub if _module_path(sub) is not None else base
        elif isinstance(node, ast.Import):
            for a in node.names:
                out[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
    return out


_NAME = re.compile(r"[A-Za-z_]\w*")
_COMMENT = re.compile(r"#[^'\"]*$")                    # a trailing comment without quotes
_DECORATED = re.compile(r"^\s*@(?:numba\.)?(?:njit|jit|intrinsic)\b", re.M)   # cheap test before parsing


def _fingerprint() -> str:
    """SHA-1 of every package ``.py`` file's path, size and modification time (a stat each: ~1 ms)."""
    h = hashlib.sha1()
    stack = [str(ROOT / pkg) for pkg in PACKAGES]
    while stack:
        d = stack.pop()
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError:
            continue
        for e in entries:
            if e.name == "__pycache__":
                continue
            if e.is_dir(follow_symlinks=False):
                stack.append(e.path)
            elif e.name.endswith(".py"):
                st = e.stat()
                h.update(f"{e.path}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def _memo_path() -> Path:
    """Where :func:`compiled_modules` remembers its answer: beside the cache directories (the
    user's ``NUMBA_CACHE_DIR``, or ``engine/__pycache__``), never in the sources otherwise."""
    user = os.environ.get("NUMBA_CACHE_DIR", "")
    if user:
        base = Path(user)
        if base.name.startswith((_USER_PREFIX, _LOCAL_PREFIX)):     # inherited from a parent process
            base = base.parent
        return base / "compiled-modules.json"
    return ROOT / "engine" / "__pycache__" / "compiled-modules.json"



def compiled_modules() -> list[Path]:
    """:func:`find_compiled_modules`, remembered across processes in ``engine/__pycache__`` while
    no package file changes size or modification time (parsing the sources takes ~40 ms, a
    start-up cost; the check ~1 ms). The memo lives beside the cache directories
    (:func:`_memo_path`); where it cannot be written, the sources are parsed at every start."""
    fp = _fingerprint()
    memo_path = _memo_path()
    try:
        memo = json.loads(memo_path.read_text())
        if memo.get("fingerprint") == fp:
            return [ROOT / p for p in memo["modules"]]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    mods = find_compiled_modules()
    with contextlib.suppress(OSError):
        memo_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = memo_path.with_name(f".{memo_path.name}.{os.getpid()}")
        tmp.write_text(json.dumps({"fingerprint": fp, "modules": [str(p.relative_to(ROOT)) for p in mods]}))
        os.replace(tmp, memo_path)
    return mods


def find_compiled_modules() -> list[Path]:
    """The ``.py`` files the numba cache depends on (sorted by path), derived from the sources:

    * every module of :data:`PACKAGES` with a compiled function (``@njit``, ``@intrinsic``);
    * every package module whose names those modules use in a compiled function or at module
      level (frozen constants and the code that computes them), and transitively the modules
      *their* module-level code uses.

    Functions that numba does not compile (and what only they import) do not count, so editing
    the search driver, time management, ``Position``, FEN or SAN keeps the cache. A name counts
    as used if it occurs in the statement's source text (a superset of the real uses: safe).
    Raises nothing: an unreadable or unparsable file counts through its bytes only."""
    parsed: dict[Path, tuple] = {}

    def parse(p: Path):
        if p not in parsed:
            try:
                text = p.read_text(encoding="utf-8")
                parsed[p] = (ast.parse(text, str(p)), text.splitlines())
            except (OSError, SyntaxError, ValueError):
                parsed[p] = (None, [])
        return parsed[p]

    seeds = []
    for pkg in PACKAGES:
        for p in sorted((ROOT / pkg).rglob("*.py")) if (ROOT / pkg).is_dir() else ():
            try:
                text = p.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if "__pycache__" not in p.parts and _DECORATED.search(text):
                tree = parse(p)[0]
                if tree is not None and any(_is_compiled(n) for n in tree.body):   # (kernels are top-level)
                    seeds.append(p)
    seen: set[Path] = set()
    todo = list(seeds)
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        tree, lines = parse(p)
        if tree is None:
            continue
        # module-level statements (not plain functions, classes, imports or docstrings) and compiled functions
        nodes = [n for n in tree.body if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                                               ast.Import, ast.ImportFrom, ast.Expr))]
        nodes += [n for n in tree.body if isinstance(n, ast.FunctionDef) and _is_compiled(n)]
        used = set()
        for n in nodes:
            skip = range(0)
            doc = n.body[0] if isinstance(n, ast.FunctionDef) and n.body else None
            if isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant) and isinstance(doc.value.value, str):
                skip = range(doc.lineno, doc.end_lineno + 1)      # the docstring's lines
            for i in range(n.lineno, n.end_lineno + 1):
                if i not in skip:
                    used.update(_NAME.findall(_COMMENT.sub("", lines[i - 1])))
        binds = _bindings(tree, p)
        for name in used & binds.keys():
            q = _module_path(binds[name])
            if q is not None and q not in seen:
                todo.append(q)
    return sorted(seen)


def source_hash() -> str:
    """First 16 hex digits of the SHA-1 over the compiled modules' files (path and bytes,
    sorted by path, :func:`compiled_modules`) and the numba, llvmlite and numpy versions.
    Raises nothing; about 20 ms."""
    if "hash" not in _state:
        h = hashlib.sha1(" ".join(_version(d) for d in ("numba", "llvmlite", "numpy")).encode())
        for p in compiled_modules():
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
            _state["user_env"] = os.environ.get("NUMBA_CACHE_DIR")
            _state["dir"] = _choose()
            if _state["dir"]:
                os.environ["NUMBA_CACHE_DIR"] = _state["dir"]
        return _state["dir"]


def foreign_env() -> dict:
    """The environment for a process that may be another program or another Cardinal (an
    engine of a match): this one's, with ``NUMBA_CACHE_DIR`` as the user had it (unset if
    they had not set it), not the directory :func:`configure` chose for these sources; a
    Cardinal of the same sources chooses that directory again by itself."""
    env = dict(os.environ)
    if "dir" in _state:
        if _state.get("user_env") is None:
            env.pop("NUMBA_CACHE_DIR", None)
        else:
            env["NUMBA_CACHE_DIR"] = _state["user_env"]
    return env


_KEYED = re.compile(r"^(cardinal|numba)-[0-9a-f]{16}$")     # a directory named by this module


def _choose() -> str | None:
    hx = source_hash()
    user = os.environ.get("NUMBA_CACHE_DIR", "")
    chosen = None
    if user and _KEYED.match(Path(user).name) and Path(user).name not in (_USER_PREFIX + hx, _LOCAL_PREFIX + hx):
        # inherited from a parent Cardinal of other sources (a match or SPRT between two
        # versions): nesting there and pruning its siblings would delete the other version's
        # cache while it runs, and each would recompile at every start. A per-user cache
        # directory's parent is shared without pruning; a checkout's own is not ours at all.
        if Path(user).name.startswith(_USER_PREFIX):
            cand = Path(user).parent / (_USER_PREFIX + hx)
            if _writable_dir(cand):
                return str(cand)
        user = ""
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
