"""The search's tunable constants (search/params.py): the defaults reproduce the hand-set
search node for node, a value changed through the parameters (or UCI ``setoption`` with
``CARDINAL_TUNE=1``) changes the search without recompiling it, bad values are one clear
error, and a variant's data file is read."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from search import params as P
from tests.engine_proc import EngineProcess, ensure_warm_cache

ITALIAN = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4"
# node counts of these fixed-depth searches by the search before its constants became parameters
# (then brought up to date with each change of the search's node count, as its Bench: line)
BEFORE = [("grand", None, 7, 6779), ("chess", ITALIAN, 8, 8980), ("knightrelay", None, 7, 4486)]


def nodes(searcher, variant, fen, depth):
    from engine.rules.position import Position
    from search.driver import Limits
    infos = []
    searcher.clear_hash()
    searcher.start(Position.from_fen(fen, variant), Limits(depth=depth), infos.append, lambda b, p: None)
    searcher.wait()
    return [i for i in infos if i.get("depth") == depth and i.get("multipv", 1) == 1][-1]["nodes"]


@pytest.fixture(scope="module")
def searcher():
    from search.driver import Searcher
    return Searcher(16)


def test_declarations_are_consistent():
    assert len({p.name for p in P.PARAMS}) == len(P.PARAMS)
    for p in P.PARAMS:
        assert p.lo <= p.default <= p.hi, p
        assert p.c == pytest.approx((p.hi - p.lo) / 20) and p.r_end == 0.002     # Stockfish's TUNE() defaults
        assert p.kind in ("search", "driver", "time")
    for name, i in P.INDEX.items():
        if hasattr(P, "P_" + name):
            assert getattr(P, "P_" + name) == i and P.PARAMS[i].name == name


def test_default_reductions_are_the_hand_set_table():
    from search.core import _lmr
    prm = P.search_arrays(P.defaults())
    assert prm.dtype == np.int64 and list(prm) == [p.default for p in P.PARAMS]
    for d in range(1, 64):
        for m in range(1, 64):
            assert _lmr(prm, d, m) == int(0.75 + np.log(d) * np.log(m) / 2.25), (d, m)
    assert _lmr(prm, 200, 300) == _lmr(prm, 63, 63)


@pytest.mark.parametrize("variant,fen,depth,expected", BEFORE)
def test_defaults_reproduce_the_search(searcher, variant, fen, depth, expected):
    searcher.params.reset()
    assert nodes(searcher, variant, fen, depth) == expected


def test_a_changed_value_changes_the_search_without_recompiling(searcher):
    from search import core as C
    searcher.params.reset()
    base = nodes(searcher, "grand", None, 7)
    compiled = {f: list(f.signatures) for f in (C.search_root, C.search, C.qsearch)}
    for name, value in (("RFP_MARGIN", 60), ("LMR_DIV", 180), ("FUT_MARGIN", 100), ("LMP_BASE", 6), ("NULL_R_BASE", 2)):
        searcher.params.reset()
        searcher.params.set(name, value)
        n = nodes(searcher, "grand", None, 7)
        assert n != base, name
    assert {f: list(f.signatures) for f in compiled} == compiled      # nothing was compiled again
    searcher.params.reset()
    assert nodes(searcher, "grand", None, 7) == base


@pytest.mark.parametrize("name,value,msg", [
    ("RFP_MARGIN", 181, "RFP_MARGIN: value 181 out of range 40..180"),
    ("RFP_MARGIN", 39, "out of range"),
    ("RFP_MARGIN", "abc", "not a number"),
    ("RFP_MARGIN", 90.5, "not an integer"),
    ("NO_SUCH", 1, "unknown parameter 'NO_SUCH'"),
])
def test_bad_values_are_one_clear_error(name, value, msg):
    pr = P.Params()
    with pytest.raises(ValueError, match=re.escape(msg)):
        pr.set(name, value)
    assert pr.overrides == {}


def test_variant_file_overrides_defaults_and_setoption_overrides_it(tmp_path, monkeypatch):
    f = tmp_path / "grand.json"
    f.write_text(json.dumps({"params": {"RFP_MARGIN": 100, "LMR_DIV": 200}}))
    monkeypatch.setattr(P, "params_path", lambda v: str(f) if v == "grand" else str(tmp_path / "none.json"))
    pr = P.Params()
    assert pr.values("grand")["RFP_MARGIN"] == 100 and pr.values("chess")["RFP_MARGIN"] == 90
    assert pr.arrays("grand")[P.P_RFP_MARGIN] == 100 and pr.arrays("grand")[P.P_LMR_DIV] == 200
    assert pr.arrays("chess")[P.P_LMR_DIV] == 225
    pr.set("rfp_margin", 70)         # UCI option names are case-insensitive
    assert pr.values("grand")["RFP_MARGIN"] == 70 and pr.values("chess")["RFP_MARGIN"] == 70
    f.write_text(json.dumps({"params": {"RFP_MARGIN": 1000}}))
    with pytest.raises(ValueError, match=r"grand\.json: RFP_MARGIN: value 1000 out of range"):
        P.load_file(str(f))


def test_time_factors_reach_time_management():
    from search.timeman import next_iteration_ok
    d = P.defaults()
    assert next_iteration_ok(500, 1000, 0, 0, 0, d)            # 500 < 60% of 1000
    assert not next_iteration_ok(500, 1000, 0, 0, 0, {**d, "TM_NEXT_ITER_PCT": 40})
    assert next_iteration_ok(500, 1000, 0, 0, 0) == next_iteration_ok(500, 1000, 0, 0, 0, d)


# ------------------------------------------------------------------ UCI, CARDINAL_TUNE=1

def _go_nodes(e, depth=7):
    e.send("ucinewgame", "position startpos", f"go depth {depth}")
    lines = e.expect(r"bestmove .*", 120)
    return [int(m.group(1)) for m in (re.search(r" nodes (\d+)", ln) for ln in lines) if m][-1]


def test_uci_options_only_with_cardinal_tune():
    ensure_warm_cache()
    e = EngineProcess()
    try:
        lines = e.ask("uci", "uciok", 60)
        assert not any("RFP_MARGIN" in ln for ln in lines)
        e.send("setoption name RFP_MARGIN value 60", "isready")
        assert "info string error: unknown option 'RFP_MARGIN'" in e.expect("readyok", 120)
    finally:
        e.close()


def test_uci_setoption_changes_the_search():
    ensure_warm_cache()
    e = EngineProcess(env={"CARDINAL_TUNE": "1"})
    try:
        lines = e.ask("uci", "uciok", 60)
        for p in P.PARAMS:
            assert f"option name {p.name} type spin default {p.default} min {p.lo} max {p.hi}" in lines
        e.ask("isready", "readyok", 120)
        base = _go_nodes(e)
        e.send("setoption name RFP_MARGIN value 181", "setoption name LMR_DIV value x", "isready")
        got = e.expect("readyok", 30)
        assert "info string error: setoption RFP_MARGIN: value 181 out of range 40..180" in got
        assert "info string error: setoption LMR_DIV: value 'x' is not a number" in got
        assert _go_nodes(e) == base                 # refused values changed nothing
        e.send("setoption name LMR_DIV value 180")
        changed = _go_nodes(e)
        assert changed != base
        e.send("setoption name LMR_DIV value 225")  # back to the default
        assert _go_nodes(e) == base
    finally:
        e.close()
