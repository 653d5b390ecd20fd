"""The numba cache works when the package directory is read-only.

numba's cache locator tries ``__pycache__`` next to the sources first and falls
back to a per-user directory (``~/.cache/numba``) when that is not writable.
The test copies the packages into a temporary tree, bind-mounts it read-only
(needs root and ``mount``; skipped otherwise), and runs ``perft`` twice: both
runs must succeed, the cache must land in the user directory, and nothing may
be written into the read-only tree.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _try(cmd):
    return subprocess.run(cmd, capture_output=True, text=True).returncode == 0


@pytest.fixture
def readonly_tree(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for pkg in ("engine", "variants", "search", "bench"):
        shutil.copytree(ROOT / pkg, src / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    mnt = tmp_path / "ro"
    mnt.mkdir()
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("needs root and mount(8) for a read-only bind mount")
    if not _try(["mount", "--bind", str(src), str(mnt)]):
        pytest.skip("bind mounts are not allowed here")
    try:
        if not _try(["mount", "-o", "remount,bind,ro", str(mnt)]):
            pytest.skip("read-only remount is not allowed here")
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


def test_perft_with_read_only_package_uses_user_cache(readonly_tree, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(HOME=str(home), PYTHONPATH=str(readonly_tree), XDG_CACHE_HOME=str(home / ".cache"))
    with pytest.raises(OSError):
        (readonly_tree / "probe").write_text("x")
    for _ in range(2):
        r = subprocess.run([sys.executable, "-m", "engine", "perft", "2", "--variant", "knightrelay"],
                           cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        assert "Nodes searched: 784" in r.stdout
    cached = list((home / ".cache" / "numba").rglob("*.nbi"))
    assert cached, "no numba cache index in the per-user cache directory"
    assert not list(readonly_tree.rglob("*.nbi"))
