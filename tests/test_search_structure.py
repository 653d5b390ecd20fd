"""The search reads as Stockfish's steps: no function in ``search/`` is longer than about
150 lines (a longer one is split into named helpers, as ``search()`` into its step helpers
and ``_eval_core`` into its term groups), and ``search()`` keeps its numbered "Step N."
comments, each with its one-line reason, in the order the node runs them (search.cpp).

Read from the sources with ``ast`` (nothing is compiled)."""
import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 160          # "about 150": a little slack for a docstring line or two
STEP = re.compile(r"#\s*Step (\d+)([a-z]?)\.\s*(.*)")
# the steps search() must keep (Cardinal's numbering; the letters are sub-steps)
REQUIRED_STEPS = [(n, "") for n in range(1, 14)] + [(3, "b"), (8, "b"), (9, "b")]


def _functions(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def test_no_function_in_search_is_longer_than_about_150_lines():
    long = []
    for p in sorted((ROOT / "search").glob("*.py")):
        for fn in _functions(p):
            n = fn.end_lineno - fn.lineno + 1
            if n > MAX_LINES:
                long.append(f"search/{p.name}::{fn.name}: {n} lines")
    assert not long, "split into named helpers:\n" + "\n".join(long)


def _search_steps():
    path = ROOT / "search" / "core.py"
    fn = next(f for f in _functions(path) if f.name == "search")
    lines = path.read_text().splitlines()[fn.lineno - 1:fn.end_lineno]
    return [m.groups() for m in (STEP.search(line) for line in lines) if m]


def test_search_keeps_its_steps_in_order_each_with_its_reason():
    steps = _search_steps()
    keys = [(int(n), sub) for n, sub, _ in steps]
    assert keys == sorted(keys) and len(set(keys)) == len(keys), keys
    missing = [k for k in REQUIRED_STEPS if k not in keys]
    assert not missing, f"search() lost its Step comments {missing}"
    no_reason = [f"{n}{sub}" for n, sub, reason in steps if len(reason.strip()) < 10]
    assert not no_reason, f"Step comments without their reason: {no_reason}"
