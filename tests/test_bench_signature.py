"""The `Bench: N` line of the newest commit that carries one equals what `cardinal bench`
prints now, so a functional change cannot land with a stale signature (and a refactor
that claims "no functional change" really keeps the node count)."""
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _last_signature():
    if not shutil.which("git"):
        pytest.skip("git is not installed: no history to read the Bench: line from")
    r = subprocess.run(["git", "log", "-200", "--format=%H%n%B%x00"], cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip("not a git checkout: no history to read the Bench: line from")
    for entry in r.stdout.split("\x00"):
        m = re.findall(r"^Bench: (\d+)\s*$", entry, re.M)
        if m:
            return entry.split("\n", 1)[0].strip()[:12], int(m[-1])
    pytest.skip("no commit in the last 200 carries a Bench: line (shallow clone?)")


def test_bench_matches_last_commit_signature():
    commit, want = _last_signature()
    r = subprocess.run([sys.executable, "-m", "engine", "bench"], cwd=ROOT, capture_output=True,
                       text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-2000:]
    m = re.search(r"^Nodes searched: (\d+)$", r.stdout, re.M)
    assert m, r.stdout
    assert int(m.group(1)) == want, f"cardinal bench prints {m.group(1)}, commit {commit} says Bench: {want}"
