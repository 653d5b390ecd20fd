"""Source hygiene: comments and docstrings cite files that exist in the repository, never
the team's notes outside it (a user's clone has no ../shared) or tracker issue numbers."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BAD = re.compile(r"\.\./shared|\bshared/(rules|perft|PROTOCOLS|DESIGN)|\b[Ii]ssue #?\d+\b|\bPROTOCOLS\.md\b|\bDESIGN\.md\b")


def test_no_citations_outside_the_repository():
    offenders = []
    for d in ("engine", "search", "variants", "bench", "tests", ".ci"):
        for p in sorted((ROOT / d).rglob("*")):
            if p.suffix not in (".py", ".md", ".toml", "") or not p.is_file() or "__pycache__" in p.parts:
                continue
            if p.name == "test_sources.py":
                continue
            for i, line in enumerate(p.read_text(errors="replace").splitlines(), 1):
                if BAD.search(line):
                    offenders.append(f"{p.relative_to(ROOT)}:{i}: {line.strip()[:100]}")
    for p in (ROOT / "pyproject.toml", ROOT / "README.md"):
        for i, line in enumerate(p.read_text().splitlines(), 1):
            if BAD.search(line):
                offenders.append(f"{p.name}:{i}: {line.strip()[:100]}")
    assert not offenders, "\n".join(offenders)
