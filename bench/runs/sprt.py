#!/usr/bin/env python3
"""Start or continue the self-play SPRT of a manifest in this directory.

    python bench/runs/sprt.py NAME [--dry-run] [--force]

``bench/runs/NAME.json`` names the old engine (a commit), the new one (that commit plus
``NAME.patch``) and the ``cardinal match`` command. This script makes the two git worktrees
``../cardinal-NAME-old`` and ``../cardinal-NAME-new`` beside the checkout (once), checks that
each one's ``cardinal bench`` is the manifest's ``Bench``, fills each one's numba cache
(``cardinal warmup``) and runs the command with those
directories, adding ``--resume bench/runs/NAME.jsonl`` when that journal already holds games.
The journal is committed with the manifest, so a test continues in a later session on another
machine; stop it with SIGTERM or Ctrl-C (finished game pairs are kept). A test whose manifest
says it stopped or was decided is not continued without ``--force``.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def sh(*args, cwd=ROOT, capture=False):
    r = subprocess.run(list(args), cwd=cwd, text=True, capture_output=capture)
    if r.returncode != 0:
        sys.exit(f"error: {' '.join(args)} failed" + (f": {r.stderr.strip()}" if capture else ""))
    return r.stdout if capture else ""


def bench_of(d: str) -> int:
    out = sh(sys.executable, "-m", "engine", "bench", cwd=d, capture=True)
    m = re.search(r"Nodes searched: (\d+)", out)
    if not m:
        sys.exit(f"error: no 'Nodes searched' from cardinal bench in {d}")
    return int(m.group(1))


def main(argv: list[str]) -> int:
    if not argv or argv[0].startswith("-"):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    name, dry = argv[0], "--dry-run" in argv[1:]
    path = os.path.join(ROOT, "bench", "runs", f"{name}.json")
    if not os.path.exists(path):
        print(f"error: no manifest {path}", file=sys.stderr)
        return 2
    m = json.load(open(path))
    if not all(k in m for k in ("old", "new", "command")) or "commit" not in m["old"] or "patch" not in m["new"]:
        print(f"error: {path}: not an SPRT manifest (no old commit, new patch and command)", file=sys.stderr)
        return 2
    status = str(m.get("state", {}).get("status", ""))
    if status.startswith(("stopped", "sprt H")) and "--force" not in argv[1:]:
        print(f"error: {name}: the test is {status!r}; --force continues it anyway", file=sys.stderr)
        return 2
    base = m["old"]["commit"]
    dirs = {}
    for side in ("old", "new"):
        d = os.path.abspath(os.path.join(ROOT, "..", f"cardinal-{name}-{side}"))
        dirs[side] = d
        if not os.path.isdir(d):
            sh("git", "worktree", "add", "--detach", d, base)
            if side == "new":
                sh("git", "-C", d, "am", os.path.join(ROOT, m["new"]["patch"]))
        if not dry:
            got = bench_of(d)
            if got != m[side]["bench"]:
                sys.exit(f"error: {d}: Bench {got}, the manifest says {m[side]['bench']}")
            # fill the engine's own numba cache too (bench compiles only its path): a UCI engine
            # that compiles at its first isready on a busy machine misses the runner's deadline
            # and loses by "stalled connection"
            sh(sys.executable, "-m", "engine", "warmup", cwd=d, capture=True)
    cmd = shlex.split(m["command"])
    cmd = [c.replace("dir=../cardinal-new", f"dir={dirs['new']}").replace("dir=../cardinal-old", f"dir={dirs['old']}")
           .replace("cmd=python3 ", f"cmd={sys.executable} ") for c in cmd]     # the engines run with this Python
    if cmd[0] == "cardinal":
        cmd = [sys.executable, "-m", "engine"] + cmd[1:]
    journal = os.path.join(ROOT, "bench", "runs", f"{name}.jsonl")
    if os.path.exists(journal) and os.path.getsize(journal) > 0:
        cmd += ["--resume", os.path.relpath(journal, ROOT)]
    print(" ".join(shlex.quote(c) for c in cmd))
    if dry:
        return 0
    os.makedirs(os.path.join(ROOT, "tune-data", "sprt"), exist_ok=True)
    return subprocess.call(cmd, cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
