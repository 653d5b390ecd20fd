#!/usr/bin/env python3
"""Start or continue the SPSA tuning run of a manifest in this directory.

    python bench/runs/spsa.py NAME [--dry-run] [--force]

``bench/runs/NAME.json`` (``"kind": "spsa"``) names the engine (a commit and its ``Bench``)
and the ``cardinal tune spsa`` command. This script makes the git worktree
``../cardinal-NAME`` beside the checkout at that commit (once), checks its ``cardinal bench``
against the manifest and runs the command there, so the games are played by the pinned
engine whatever ``main`` holds by then. The journal (``bench/runs/NAME.jsonl``) is written in
this checkout and committed with the manifest; when it already holds pairs the run continues
with ``--resume`` (the journal's own settings). The games go to ``tune-data/spsa/NAME.pgn``
(ignored; an xz copy is committed when a session stops: network training data) and the
values to ``tune-data/spsa/NAME-params.json``: nothing under ``variants/`` changes until
the tuned values have won their verification SPRT. Stop it with SIGTERM or Ctrl-C (finished
pairs are kept). A run whose manifest says it finished is not continued without ``--force``.
"""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sprt import ROOT, bench_of, sh  # noqa: E402  (this directory's SPRT runner)


def command(m: dict, name: str) -> list[str]:
    """The tuner's command line for manifest ``m``: a new run, or ``--resume`` of its journal."""
    journal = os.path.join(ROOT, "bench", "runs", f"{name}.jsonl")
    pgn = os.path.join(ROOT, "tune-data", "spsa", f"{name}.pgn")
    out = os.path.join(ROOT, "tune-data", "spsa", f"{name}-params.json")
    plot = os.path.join(ROOT, "bench", "runs", f"{name}.svg")
    files = ["--pgn", pgn, "--out", out, "--plot", plot]
    if os.path.exists(journal) and os.path.getsize(journal) > 0:
        args = ["--resume", journal] + files
        if "concurrency" in m:
            args += ["--concurrency", str(m["concurrency"])]
    else:
        args = shlex.split(m["command"])
        if args[:3] != ["cardinal", "tune", "spsa"]:
            raise ValueError(f"{name}: the command is not 'cardinal tune spsa ...'")
        args = args[3:] + ["--journal", journal] + files
    return [sys.executable, "-m", "engine", "tune", "spsa"] + args


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
    if m.get("kind") != "spsa" or "command" not in m or "commit" not in m.get("engine", {}):
        print(f"error: {path}: not an SPSA manifest (kind spsa, engine commit, command)", file=sys.stderr)
        return 2
    status = str(m.get("state", {}).get("status", ""))
    if status.startswith(("finished", "stopped")) and "--force" not in argv[1:]:
        print(f"error: {name}: the run is {status!r}; --force continues it anyway", file=sys.stderr)
        return 2
    try:
        cmd = command(m, name)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    d = os.path.abspath(os.path.join(ROOT, "..", f"cardinal-{name}"))
    if not os.path.isdir(d):
        sh("git", "worktree", "add", "--detach", d, m["engine"]["commit"])
    if not dry:
        got = bench_of(d)
        if got != m["engine"]["bench"]:
            sys.exit(f"error: {d}: Bench {got}, the manifest says {m['engine']['bench']}")
        sh(sys.executable, "-m", "engine", "warmup", cwd=d, capture=True)    # the engines' cache, before any game
    print(f"(in {d}) " + " ".join(shlex.quote(c) for c in cmd))
    if dry:
        return 0
    os.makedirs(os.path.join(ROOT, "tune-data", "spsa"), exist_ok=True)
    return subprocess.call(cmd, cwd=d)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
