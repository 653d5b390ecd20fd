"""README.md promises: two one-line set-up commands, CI runs exactly the test command,
the user-facing sections exist, and the Python example runs."""
import contextlib
import io
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _readme():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
        return fh.read()


def _quick_start_commands():
    text = _readme()
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return [line.strip() for line in section.splitlines() if line.startswith("    ") and line.strip()]


def test_exactly_two_single_line_setup_commands():
    cmds = _quick_start_commands()
    assert len(cmds) == 2, cmds
    main_job, tests = cmds
    assert main_job.startswith("pip install . ") and "cardinal match" in main_job
    assert "--variant grand" in main_job
    assert tests.startswith('pip install ".[test]"') and "python -m pytest" in tests
    for c in cmds:
        assert "\\" not in c and "\n" not in c


def test_ci_runs_exactly_the_readme_test_command():
    test_cmd = _quick_start_commands()[1]
    with open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8") as fh:
        lines = [ln.strip() for ln in fh if ln.strip() and not ln.strip().startswith("#")]
    assert lines[-1] == test_cmd
    assert os.access(os.path.join(ROOT, ".ci", "run"), os.X_OK)
    body = "\n".join(lines)
    assert "apt-get update" in body and "fairy-stockfish" in body and "sjaakii" in body
    assert "/usr/games" in body


def test_user_sections_present():
    text = _readme()
    for needle in ("Grand Chess", "Knight Relay", "marshal", "cardinal", "promot",
                   "cutechess-cli -variant grand", "cutechess-cli -variant knightrelay",
                   "xboard -fcp cardinal -fd", "-variant grand", "testLegality",
                   "NUMBA_CACHE_DIR", "bulk", "Cute Chess 1.5", "## Features"):
        assert needle in text, needle
    # (files outside the repository are never cited: tests/test_sources.py checks README.md too)


def test_python_example_runs():
    text = _readme()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    printed = out.getvalue().splitlines()
    assert printed[0] == "Nc7 b9c7"
    assert re.match(r"^[a-j]\d{1,2}[a-j]\d{1,2}[a-z]?$", printed[-1]), printed[-1]


def test_readme_variant_list_matches_the_uci_variant_option():
    """The README's "Cardinal lists ..." sentence names exactly the UCI_Variant choices that
    ``uci`` prints (a GUI such as Cute Chess offers only what the engine lists)."""
    from tests.engine_proc import EngineProcess
    text = " ".join(_readme().split())
    m = re.search(r"Cardinal lists ((?:`[^`]+`(?:, | and ))+`[^`]+`)", text)
    assert m, "README.md: no 'Cardinal lists `...`' sentence"
    readme = re.findall(r"`([^`]+)`", m.group(1))
    e = EngineProcess()
    try:
        e.send("uci")
        line = e.expect(r"option name UCI_Variant type combo .*", 60)[-1]   # printed before uciok
    finally:
        e.close()
    listed = re.findall(r" var (\S+)", line)
    assert len(readme) == len(set(readme)) and set(readme) == set(listed), (readme, listed)
