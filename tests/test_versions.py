"""The compiler stack (numba, llvmlite, numpy) is pinned from both sides in pyproject.toml, to the
ranges the test suite has run on, the installed versions are inside them, and the README states
the same ranges."""
import re
from importlib.metadata import version
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
STACK = ("numba", "llvmlite", "numpy")


def _declared() -> dict:
    """name -> Requirement, from pyproject.toml's [project] dependencies."""
    text = (ROOT / "pyproject.toml").read_text()
    deps = re.search(r"^dependencies\s*=\s*\[(.*?)\]", text, re.M | re.S).group(1)
    reqs = [Requirement(s) for s in re.findall(r'"([^"]+)"', deps)]
    return {r.name: r for r in reqs}


@pytest.mark.parametrize("name", STACK)
def test_stack_pinned_from_both_sides(name):
    req = _declared().get(name)
    assert req is not None, f"{name} is not a declared dependency"
    ops = {s.operator for s in req.specifier}
    assert ops & {">=", ">", "~=", "=="} and ops & {"<", "<=", "~=", "=="}, f"{name}: {req.specifier} is open-ended"


@pytest.mark.parametrize("name", STACK)
def test_installed_version_inside_the_tested_range(name):
    req = _declared()[name]
    assert Version(version(name)) in req.specifier, \
        f"{name} {version(name)} is outside the tested range {req.specifier} (pip install . installs one inside)"


def test_readme_states_the_ranges():
    readme = (ROOT / "README.md").read_text()
    for name in STACK:
        spec = str(_declared()[name].specifier)
        parts = sorted(spec.split(","))
        assert any(all(p in line for p in parts) and name in line for line in readme.splitlines()), \
            f"README does not state {name} {spec}"
