"""Mate-in-N positions (tests/data/mates_<variant>.epd, made and independently verified by
tests/gen_mates.py): the search must report exactly ``mate N`` and its PV must mate."""
import os

import pytest

from engine.rules.position import Position
from search.driver import Searcher, Limits

DATA = os.path.join(os.path.dirname(__file__), "data")


def load(variant):
    out = []
    with open(os.path.join(DATA, f"mates_{variant}.epd")) as f:
        for ln in f:
            ln = ln.strip()
            if not ln or ln.startswith("#"):
                continue
            parts = [p.strip() for p in ln.split(";")]
            n = int(parts[1].split()[1])
            tags = parts[2].split() if len(parts) > 2 else []
            out.append((parts[0], n, tags))
    return out


CASES = [(v, fen, n, tags) for v in ("grand", "knightrelay", "chess") for fen, n, tags in load(v)]


def test_enough_positions():
    for v in ("grand", "knightrelay", "chess"):
        cases = load(v)
        assert len(cases) >= 10
        assert {n for _, n, _ in cases} == {1, 2, 3}
    assert any("relay" in t for _, _, t in load("knightrelay"))
    assert any("pawn9" in t for _, _, t in load("grand"))


@pytest.mark.parametrize("variant,fen,n,tags", CASES, ids=[f"{c[0]}-dm{c[2]}-{i}" for i, c in enumerate(CASES)])
def test_mate_found(variant, fen, n, tags):
    pos = Position.from_fen(fen, variant)
    s = Searcher(8)
    infos, done = [], []
    s.start(pos, Limits(depth=2 * n + 2), infos.append, lambda b, p: done.append(b))
    s.wait(60)
    assert infos[-1]["score"] == ("mate", n), (fen, infos[-1]["score"])
    pv = infos[-1]["pv"]
    assert pos.uci(done[0]) == pv[0]
    p = pos.copy()
    for m in pv:
        assert m in p.legal_uci()
        p.push_uci(m)
    assert len(pv) == 2 * n - 1 and p.status() == "checkmate"
