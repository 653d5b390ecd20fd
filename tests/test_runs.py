"""The long-run scripts of ``bench/runs/``: ``spsa.py`` builds the tuner's command from a
committed manifest (a new run, or ``--resume`` of the committed journal) and refuses what
is not an SPSA manifest; the committed manifests are well formed."""
from __future__ import annotations

import glob
import importlib.util
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNS = os.path.join(ROOT, "bench", "runs")


def _load(name):
    sys.path.insert(0, RUNS)
    try:
        spec = importlib.util.spec_from_file_location(f"runs_{name}", os.path.join(RUNS, f"{name}.py"))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    finally:
        sys.path.remove(RUNS)


def test_spsa_command_new_run_then_resume(tmp_path, monkeypatch):
    spsa = _load("spsa")
    monkeypatch.setattr(spsa, "ROOT", str(tmp_path))
    m = {"kind": "spsa", "engine": {"commit": "abc", "bench": 1}, "concurrency": 2,
         "command": "cardinal tune spsa --variant grand --iterations 10 --seed 7"}
    cmd = spsa.command(m, "t")
    journal = str(tmp_path / "bench" / "runs" / "t.jsonl")
    assert cmd[1:5] == ["-m", "engine", "tune", "spsa"]
    assert cmd[5:11] == ["--variant", "grand", "--iterations", "10", "--seed", "7"]
    assert cmd[cmd.index("--journal") + 1] == journal and "--resume" not in cmd
    assert cmd[cmd.index("--pgn") + 1] == str(tmp_path / "tune-data" / "spsa" / "t.pgn")
    assert cmd[cmd.index("--out") + 1].startswith(str(tmp_path / "tune-data"))    # never variants/ mid-run
    os.makedirs(os.path.dirname(journal))
    with open(journal, "w") as fh:
        fh.write('{"format": "cardinal-spsa-journal"}\n')
    cmd = spsa.command(m, "t")
    assert cmd[cmd.index("--resume") + 1] == journal and "--journal" not in cmd and "--iterations" not in cmd
    assert cmd[cmd.index("--concurrency") + 1] == "2"


def test_spsa_refuses_other_manifests():
    r = subprocess.run([sys.executable, os.path.join(RUNS, "spsa.py"), "conthist-grand"], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "not an SPSA manifest" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run([sys.executable, os.path.join(RUNS, "spsa.py"), "no-such-run"], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "no manifest" in r.stderr


def test_committed_manifests_are_well_formed():
    for path in glob.glob(os.path.join(RUNS, "*.json")):
        m = json.load(open(path))
        if m.get("kind") == "spsa":
            assert {"engine", "command", "state"} <= set(m) and m["command"].startswith("cardinal tune spsa ")
            assert isinstance(m["engine"]["bench"], int)
        elif "old" in m:
            assert {"new", "command", "sprt", "state"} <= set(m), path
            assert os.path.exists(os.path.join(ROOT, m["new"]["patch"])), path
            assert m["command"].startswith("cardinal match "), path
