"""README.md promises: two one-line set-up commands, CI runs exactly the test command,
the user-facing sections exist, the Python example runs, every `cardinal` command names a
real sub-command and real flags, and the links to its sections resolve."""
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
    return _code_lines(section)


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


# ---------------------------------------------------------------------------- README commands
# Every `cardinal ...` command in a README code block must name a sub-command (and a
# sub-benchmark or tuning step) that exists and only flags its --help lists. Cheap: only
# `python -m engine <sub> [<step>] --help` runs, never the command itself.

def _code_lines(text):
    """The lines of the README's code blocks: fenced (except python) and indented by 4+ spaces."""
    out, fence = [], None
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("```"):
            fence = None if fence is not None else (s[3:].strip() or "text")
            continue
        if fence is not None:
            if fence != "python":
                out.append(s)
        elif line.startswith("    ") and s:
            out.append(s)
    return out


def _cardinal_commands(text):
    """Each `cardinal <sub> ...` command of the code blocks as a token list: continuation lines
    joined, commands chained with `&&`, `;` or `|` split apart, `# comments` dropped, and
    `[--opt X]` brackets and `...` placeholders removed."""
    import shlex
    cmds, buf = [], ""
    for s in _code_lines(text):
        buf += s
        if buf.endswith("\\"):
            buf = buf[:-1] + " "
            continue
        line, buf = buf, ""
        if not re.search(r"(^|[\s;&|])cardinal ", line):
            continue
        seg = []
        for t in shlex.split(line, comments=True) + ["&&"]:
            if t in ("&&", "||", ";", "|"):
                if seg and seg[0] == "cardinal":
                    cmds.append(seg)
                seg = []
            elif t.strip("[]") not in ("", "..."):
                seg.append(t.strip("[]"))
    return cmds


_HELP = {}


def _help(args):
    """(exit status, stdout + stderr) of `python -m engine <args> --help`, cached."""
    import subprocess
    import sys
    key = tuple(args)
    if key not in _HELP:
        r = subprocess.run([sys.executable, "-m", "engine", *args, "--help"], cwd=ROOT,
                           capture_output=True, text=True, timeout=120)
        _HELP[key] = (r.returncode, r.stdout + r.stderr)
    return _HELP[key]


def _command_problems(text):
    """What is wrong with the README's `cardinal` commands: an empty list when all is well."""
    problems = []
    for toks in _cardinal_commands(text):
        shown = " ".join(toks)
        sub = toks[1] if len(toks) > 1 else None
        if sub is None or sub.startswith("-"):
            continue                         # `cardinal`, `cardinal --version`: the top level
        rc, out = _help([sub])
        if rc != 0:
            problems.append(f"{shown}: `cardinal {sub}` is no sub-command ({out.strip()[:80]})")
            continue
        args = [sub]
        word = toks[2] if len(toks) > 2 and not toks[2].startswith("-") else None
        if word is not None:
            # a sub-benchmark / tuning step prints its own usage line, else the word must
            # be a positional argument of the sub-command
            rc2, out2 = _help([sub, word])
            if rc2 == 0 and re.search(rf"usage: cardinal {re.escape(sub)} {re.escape(word)}\b", out2):
                args, out = [sub, word], out2
            elif "positional arguments:" not in out:
                problems.append(f"{shown}: `cardinal {sub} {word}` names no sub-command of {sub}")
                continue
        for t in toks[2:]:
            if t.startswith("--"):
                flag = t.split("=", 1)[0]
                if not re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", out):
                    problems.append(f"{shown}: `cardinal {' '.join(args)} --help` lists no {flag}")
    return problems


def test_readme_commands_name_real_subcommands_and_flags():
    cmds = _cardinal_commands(_readme())
    assert len(cmds) >= 10, cmds                    # the parser found the README's commands
    subs = {c[1] for c in cmds if len(c) > 1}
    assert {"match", "bench", "tune", "serve", "warmup"} <= subs, subs
    assert _command_problems(_readme()) == []


def test_readme_command_check_catches_mistakes():
    """The check above fails for a sub-command, sub-benchmark or flag that does not exist."""
    bad = "\n".join([
        "```sh",
        "cardinal nosuchcommand --variant grand",
        "cardinal bench nosuchbench",
        "cardinal bench perft --no-such-flag",
        "cardinal tune fit --variant grand \\",
        "    --data x.txt [--no-such-option 3]   # a comment --not-a-flag",
        "cardinal match --variant grand --games 2",
        "```",
    ])
    problems = _command_problems(bad)
    assert len(problems) == 4, problems
    assert "nosuchcommand" in problems[0]
    assert "nosuchbench" in problems[1]
    assert "--no-such-flag" in problems[2]
    assert "--no-such-option" in problems[3]


def test_readme_links_to_its_sections_resolve():
    """Every `(#anchor)` link (the contents line, the commands table) names a heading,
    slugged as GitHub does (lower case, punctuation dropped, spaces to hyphens)."""
    text = _readme()
    prose = re.sub(r"^\s*```.*?^\s*```", "", text, flags=re.S | re.M)   # not the code blocks' `# ...`
    slugs = {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
             for h in re.findall(r"^#{1,6} (.+)$", prose, re.M)}
    links = set(re.findall(r"\]\(#([^)]+)\)", text))
    assert links and links <= slugs, sorted(links - slugs)


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
