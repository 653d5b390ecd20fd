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

import os
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sprt import ROOT, launch, read_manifest, worktree  # noqa: E402  (this directory's SPRT runner)


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
    got = read_manifest(argv, __doc__.strip().splitlines()[2].strip(),
                        lambda m: m.get("kind") == "spsa" and "command" in m and "commit" in m.get("engine", {}),
                        "SPSA manifest (kind spsa, engine commit, command)", ("finished", "stopped"))
    if isinstance(got, int):
        return got
    name, dry, m = got
    try:
        cmd = command(m, name)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    d = worktree(f"cardinal-{name}", m["engine"]["commit"], m["engine"]["bench"], dry)
    return launch(cmd, d, dry, "spsa")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
