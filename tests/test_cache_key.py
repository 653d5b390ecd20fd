"""The numba cache directory is keyed by a hash of the package sources
(engine/rules/cache.py): any source change selects a new directory, old ones are
pruned, NUMBA_CACHE_DIR is honoured, and a child process inherits the choice."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBE = ("import json; from engine.rules import cache; "
         "print(json.dumps([cache.source_hash(), cache.configure(), cache.is_warm()]))")


def _tree(tmp_path):
    src = tmp_path / "src"
    for pkg in ("engine", "variants", "search"):
        shutil.copytree(ROOT / pkg, src / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    return src


def _probe(src, **env_extra):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(PYTHONPATH=str(src), **env_extra)
    r = subprocess.run([sys.executable, "-c", PROBE], cwd=str(src), env=env, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_source_change_selects_new_directory_and_prunes_old(tmp_path):
    src = _tree(tmp_path)
    h1, d1, warm1 = _probe(src)
    assert d1 == str(src / "engine" / "__pycache__" / f"numba-{h1}") and not warm1
    assert Path(d1).is_dir()
    assert _probe(src)[:2] == [h1, d1]                      # stable while nothing changes
    with open(src / "search" / "eval.py", "a") as f:        # a callee of the cached search
        f.write("\n# changed\n")
    h2, d2, _ = _probe(src)
    assert h2 != h1 and d2 != d1 and Path(d2).is_dir()
    assert not Path(d1).exists(), "the cache of the old sources was not pruned"


def test_user_cache_dir_and_warm_marker(tmp_path):
    src = _tree(tmp_path)
    user = tmp_path / "nc"
    h, d, warm = _probe(src, NUMBA_CACHE_DIR=str(user))
    assert d == str(user / f"cardinal-{h}") and not warm
    (Path(d) / "warm").write_text(h)
    assert _probe(src, NUMBA_CACHE_DIR=str(user))[2] is True
    # a child of a Cardinal process inherits the exact directory (no nested hash directory)
    assert _probe(src, NUMBA_CACHE_DIR=d)[1] == d
    assert not (src / "engine" / "__pycache__").exists()


def test_compile_lock_excludes_a_second_process(tmp_path):
    src = _tree(tmp_path)
    user = tmp_path / "nc"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from engine.rules import cache\n"
         "with cache.compile_lock():\n    print('locked', flush=True); sys.stdin.readline()"],
        cwd=str(src), env=dict(os.environ, PYTHONPATH=str(src), NUMBA_CACHE_DIR=str(user)),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        waiter = subprocess.Popen(
            [sys.executable, "-c", "from engine.rules import cache\n"
             "with cache.compile_lock():\n    print('got it', flush=True)"],
            cwd=str(src), env=dict(os.environ, PYTHONPATH=str(src), NUMBA_CACHE_DIR=str(user)),
            stdout=subprocess.PIPE, text=True)
        try:
            waiter.wait(timeout=2)
            raise AssertionError("the second process took the lock while the first held it")
        except subprocess.TimeoutExpired:
            pass
        holder.stdin.write("\n")
        holder.stdin.flush()
        out, _ = waiter.communicate(timeout=60)
        assert out.strip() == "got it"
    finally:
        holder.kill()


def test_numba_reads_the_keyed_directory_whichever_module_comes_first(tmp_path):
    """numba reads NUMBA_CACHE_DIR once, when it is first imported: whatever Cardinal module a
    command imports first (the rules core, the evaluation, the search, a benchmark), numba
    must see the source-keyed directory that configure() chose, not the raw variable (an
    unkeyed cache could load compiled code of older sources)."""
    import pytest
    for first in ("engine.rules.movegen", "search.eval", "search.driver", "bench.search_bench",
                  "engine.rules.position"):
        # the module first, then the search (what a command uses next), then ask numba
        code = (f"import importlib, json; importlib.import_module({first!r}); import search.driver; import numba; "
                "from engine.rules import cache; print(json.dumps([numba.config.CACHE_DIR, cache.configure()]))")
        env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
        env.update(PYTHONPATH=str(ROOT), NUMBA_CACHE_DIR=str(tmp_path / "numba"))
        r = subprocess.run([sys.executable, "-c", code], cwd=str(tmp_path), env=env, capture_output=True,
                           text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        seen, chosen = json.loads(r.stdout)
        if chosen is None:
            pytest.skip("no writable cache directory")
        assert seen == chosen and Path(chosen).name.startswith("cardinal-"), (first, seen, chosen)


def test_only_the_jit_module_imports_numba():
    """The guard for the test above, over every package module: numba is imported (at any
    level) only by engine/rules/jit.py, which runs configure() first."""
    import ast
    offenders = []
    for pkg in ("engine", "search", "bench", "variants"):
        for path in (ROOT / pkg).rglob("*.py"):
            if path == ROOT / "engine" / "rules" / "jit.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                    [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
                if any(n == "numba" or n.startswith("numba.") for n in names):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offenders, offenders


PURE_PYTHON = ("search/driver.py", "search/timeman.py", "search/limits.py", "engine/rules/position.py",
               "engine/rules/fen.py", "engine/rules/notation.py")
COMPILED = ("search/eval.py", "search/core.py", "search/tt.py", "engine/rules/movegen.py",
            "engine/rules/layout.py")   # layout: the constants the kernels freeze


def _edit(path, line="\n# edited\n"):
    with open(path, "a") as f:
        f.write(line)


def test_the_key_covers_compiled_code_and_its_constants_only(tmp_path):
    """Editing a module that only calls the kernels keeps the key (and the compiled cache); editing
    a module with compiled code or the constants it freezes selects a new one."""
    src = _tree(tmp_path)
    h0 = _probe(src)[0]
    for rel in PURE_PYTHON:
        _edit(src / rel)
        assert _probe(src)[0] == h0, f"editing {rel} (pure Python) changed the cache key"
    for rel in COMPILED:
        _edit(src / rel)
        h1 = _probe(src)[0]
        assert h1 != h0, f"editing {rel} did not change the cache key"
        h0 = h1


def test_the_key_is_derived_not_listed(tmp_path):
    """A new module counts when compiled code uses one of its names (a frozen constant), and not
    when only pure-Python code imports it: the key follows the sources, not a list."""
    src = _tree(tmp_path)
    (src / "engine" / "rules" / "extra_const.py").write_text("EXTRA = 5\n")
    (src / "search" / "extra_helper.py").write_text("def helper():\n    return 1\n")
    _edit(src / "engine" / "rules" / "see.py",
          "\nfrom .extra_const import EXTRA\n\n\n@njit(cache=True)\ndef _extra():\n    return EXTRA\n")
    _edit(src / "search" / "driver.py", "\nfrom .extra_helper import helper  # noqa\n")
    h0 = _probe(src)[0]
    _edit(src / "search" / "extra_helper.py")
    assert _probe(src)[0] == h0
    (src / "engine" / "rules" / "extra_const.py").write_text("EXTRA = 6\n")
    assert _probe(src)[0] != h0


def test_a_cache_inherited_from_other_sources_is_neither_nested_nor_pruned(tmp_path):
    """A match runner of one version starts engines of another (an SPRT between two checkouts):
    the engine must not nest its cache in the runner's directory or prune that directory's
    siblings, or the two versions delete each other's caches and recompile at every start."""
    src = _tree(tmp_path)
    other = tmp_path / "main" / "engine" / "__pycache__" / ("numba-" + "0" * 16)   # another checkout's
    other.mkdir(parents=True)
    (other / "keep").write_text("x")
    h, d, _ = _probe(src, NUMBA_CACHE_DIR=str(other))
    assert d == str(src / "engine" / "__pycache__" / f"numba-{h}")          # its own tree's, as if unset
    assert sorted(p.name for p in other.iterdir()) == ["keep"]
    user = tmp_path / "nc"
    sibling = user / ("cardinal-" + "1" * 16)                                 # a per-user cache of another version
    sibling.mkdir(parents=True)
    h, d, _ = _probe(src, NUMBA_CACHE_DIR=str(sibling))
    assert d == str(user / f"cardinal-{h}") and sibling.is_dir()             # shared parent, nothing pruned


FOREIGN = ("import json, os; from engine.rules import cache; cache.configure(); "
           "print(json.dumps([os.environ.get('NUMBA_CACHE_DIR'), cache.foreign_env().get('NUMBA_CACHE_DIR')]))")


def test_engines_are_started_without_this_processs_cache_choice(tmp_path):
    """The match runner's engines get NUMBA_CACHE_DIR as the user set it, not the directory
    this process chose for its own sources (bench.engines.EngineProcess uses foreign_env)."""
    src = _tree(tmp_path)
    for extra, want in (({}, None), ({"NUMBA_CACHE_DIR": str(tmp_path / "nc")}, str(tmp_path / "nc"))):
        env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
        env.update(PYTHONPATH=str(src), **extra)
        r = subprocess.run([sys.executable, "-c", FOREIGN], cwd=str(src), env=env, capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        own, foreign = json.loads(r.stdout)
        assert own and own != want and foreign == want
    from bench.engines import EngineProcess
    p = EngineProcess([sys.executable, "-c", "import os; print(os.environ.get('NUMBA_CACHE_DIR'))"])
    try:
        from engine.rules import cache
        line = p.readline(__import__("time").monotonic() + 30)[1].strip()
        assert line == str(cache.foreign_env().get("NUMBA_CACHE_DIR"))
        assert line != cache.configure() or os.environ.get("NUMBA_CACHE_DIR") is None
    finally:
        p.kill()
