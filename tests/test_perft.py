"""Perft: every count of tests/data/{chess,grand,knightrelay,capablanca}.epd.

One test per (file, position, depth), so each failing count has its own id
(``grand-3-D2``: file, 1-based position line, depth). Counts up to 2,000,000
leaf nodes run by default; larger ones are marked ``slow`` (``pytest -m slow``).
The knightrelay depth-2 divides (tests/data/knightrelay_divide.txt) are checked
against ``Position.divide(2)`` move by move.

Sources of the counts: see the header comments of the data files (Chess
Programming Wiki "Perft Results"; Fairy-Stockfish / Cute Chess for grand; two
independent implementations of variants/rules/knightrelay.md for knightrelay;
pyffish and the Fairy-Stockfish binary for capablanca, written by
tests/gen_capablanca_perft.py).
"""
from __future__ import annotations

import pytest

from tests.conftest import read_epd, read_divides

DEFAULT_LIMIT = 2_000_000
FILES = {"chess.epd": "chess", "grand.epd": "grand", "knightrelay.epd": "knightrelay",
         "capablanca.epd": "capablanca"}


def _cases():
    cases = []
    for fname, variant in FILES.items():
        for i, (fen, counts) in enumerate(read_epd(fname), 1):
            for depth, count in counts:
                marks = [pytest.mark.slow] if count > DEFAULT_LIMIT else []
                cases.append(pytest.param(variant, fen, depth, count, marks=marks,
                                          id=f"{variant}-{i}-D{depth}"))
    return cases


CASES = _cases()


def test_data_files_parsed():
    """Guard against an empty or truncated data file making the suite vacuous."""
    per_variant = {v: sum(1 for c in CASES if c.values[0] == v) for v in FILES.values()}
    assert per_variant["chess"] >= 30 and per_variant["grand"] >= 60 and per_variant["knightrelay"] >= 80, per_variant
    assert per_variant["capablanca"] >= 40, per_variant
    default = sum(1 for c in CASES if not c.marks)
    assert default >= 150, default


@pytest.mark.parametrize("variant,fen,depth,count", CASES)
def test_perft(variant, fen, depth, count):
    from engine.rules.position import Position
    pos = Position.from_fen(fen, variant)
    before = pos.fen(), pos.key
    assert pos.perft(depth) == count
    assert (pos.fen(), pos.key) == before  # perft leaves the position unchanged


DIVIDES = read_divides()


@pytest.mark.parametrize("fen,expected", [pytest.param(f, d, id=f"kr-divide-{i}")
                                          for i, (f, d) in enumerate(DIVIDES, 1)])
def test_knightrelay_divide(fen, expected):
    from engine.rules.position import Position
    pos = Position.from_fen(fen, "knightrelay")
    ours = dict(pos.divide(2))
    missing = sorted(set(expected) - set(ours))
    extra = sorted(set(ours) - set(expected))
    wrong = {m: (ours[m], expected[m]) for m in expected if m in ours and ours[m] != expected[m]}
    assert not (missing or extra or wrong), f"missing {missing}, extra {extra}, (ours, expected) {wrong}"


def test_divides_cover_the_handmade_positions():
    assert len(DIVIDES) >= 10
    epd_fens = {fen for fen, _ in read_epd("knightrelay.epd")}
    for fen, d in DIVIDES:
        assert fen in epd_fens
        counts = dict(read_epd("knightrelay.epd"))[fen]
        assert sum(d.values()) == dict(counts)[2]  # the divide adds up to the D2 count


@pytest.mark.parametrize("variant", list(FILES.values()))
def test_divide_sums_to_perft(variant):
    from engine.rules.position import Position
    pos = Position.from_fen(None, variant)
    div = pos.divide(3)
    assert len(div) == len(pos.legal_moves())
    assert sum(n for _, n in div) == pos.perft(3)
