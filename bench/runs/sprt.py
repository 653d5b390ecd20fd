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


def read_manifest(argv: list[str], usage: str, is_kind, kind: str, done: tuple) -> tuple[str, bool, dict] | int:
    """``(name, dry_run, manifest)`` from ``NAME [--dry-run] [--force]``, or an exit status 2
    after one error line: no name, no manifest ``bench/runs/NAME.json``, ``is_kind(manifest)``
    false (not a ``kind`` manifest), or a state status starting with one of ``done`` without
    ``--force``."""
    if not argv or argv[0].startswith("-"):
        print(usage, file=sys.stderr)
        return 2
    name, dry = argv[0], "--dry-run" in argv[1:]
    path = os.path.join(ROOT, "bench", "runs", f"{name}.json")
    if not os.path.exists(path):
        print(f"error: no manifest {path}", file=sys.stderr)
        return 2
    m = json.load(open(path))
    if not is_kind(m):
        print(f"error: {path}: not an {kind}", file=sys.stderr)
        return 2
    status = str(m.get("state", {}).get("status", ""))
    if status.startswith(done) and "--force" not in argv[1:]:
        print(f"error: {name}: the run is {status!r}; --force continues it anyway", file=sys.stderr)
        return 2
    return name, dry, m


def main(argv: list[str]) -> int:
    got = read_manifest(argv, __doc__.strip().splitlines()[2].strip(),
                        lambda m: (all(k in m for k in ("old", "new", "command")) and "commit" in m["old"]
                                   and "patch" in m["new"]),
                        "SPRT manifest (no old commit, new patch and command)", ("stopped", "sprt H"))
    if isinstance(got, int):
        return got
    name, dry, m = got
    dirs = {side: worktree(f"cardinal-{name}-{side}", m["old"]["commit"], m[side]["bench"], dry,
                           m["new"]["patch"] if side == "new" else None) for side in ("old", "new")}
    cmd = shlex.split(m["command"])
    cmd = [c.replace("dir=../cardinal-new", f"dir={dirs['new']}").replace("dir=../cardinal-old", f"dir={dirs['old']}")
           .replace("cmd=python3 ", f"cmd={sys.executable} ") for c in cmd]     # the engines run with this Python
    if cmd[0] == "cardinal":
        cmd = [sys.executable, "-m", "engine"] + cmd[1:]
    journal = os.path.join(ROOT, "bench", "runs", f"{name}.jsonl")
    if os.path.exists(journal) and os.path.getsize(journal) > 0:
        cmd += ["--resume", os.path.relpath(journal, ROOT)]
    return launch(cmd, ROOT, dry, "sprt")


def worktree(dirname: str, commit: str, bench: int, dry: bool, patch: str | None = None) -> str:
    """The git worktree ``../dirname`` at ``commit`` (plus ``patch``, a ``git am`` mbox), made
    once; unless ``dry``, its ``cardinal bench`` checked against ``bench`` (exit on a mismatch)
    and its engine's own numba cache filled (``cardinal warmup``: bench compiles only its own
    path, and a UCI engine compiling at its first ``isready`` on a busy machine misses the
    runner's deadline and loses by "stalled connection"). Returns its absolute path."""
    d = os.path.abspath(os.path.join(ROOT, "..", dirname))
    if not os.path.isdir(d):
        sh("git", "worktree", "add", "--detach", d, commit)
        if patch:
            sh("git", "-C", d, "am", os.path.join(ROOT, patch))
    if not dry:
        got = bench_of(d)
        if got != bench:
            sys.exit(f"error: {d}: Bench {got}, the manifest says {bench}")
        sh(sys.executable, "-m", "engine", "warmup", cwd=d, capture=True)
    return d


def launch(cmd: list[str], cwd: str, dry: bool, data: str) -> int:
    """Print ``cmd``; unless ``dry``, make ``tune-data/<data>/`` and run it in ``cwd`` (its exit status)."""
    print(f"(in {cwd}) " + " ".join(shlex.quote(c) for c in cmd))
    if dry:
        return 0
    os.makedirs(os.path.join(ROOT, "tune-data", data), exist_ok=True)
    return subprocess.call(cmd, cwd=cwd)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
