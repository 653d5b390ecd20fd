"""The NNUE network inside the search (search.core, search.driver): the accumulator stack the
search's make and null move keep per ply equals a full refresh at every node of search-like walks
(one stack per thread), the network's output is the static evaluation (clamped), the search with
a net is deterministic, without one it is exactly the linear search, a change of network clears
the hash table, and ``cardinal bench --evalfile``."""
import random

import numpy as np
import pytest

from engine.rules import layout as L
from engine.rules import movegen as G
from engine.rules.position import Position
from search import core as C
from search import nnue as N
from search.driver import Limits, Searcher, SearchState
from search.eval import build_eval
import variants
from tests.conftest import VARIANTS
from tests.test_nnue import _kind, _pick


def _net(variant, hidden=32, seed=3):
    return N.quantize(N.FloatNet.random(variant, hidden, seed=seed))


def _const_net(variant, cp):
    """A net whose output is ``cp`` for every position (zero weights, the bias alone)."""
    lay = N.input_layout(variant)
    meta = N.make_meta(lay, 8)
    meta[N.M_OB] = (cp * int(meta[N.M_DIV])) // int(meta[N.M_SCALE])
    return N.NnueNet(meta, np.zeros((lay.nin + 1, 8), np.int16), np.zeros(8, np.int16), np.zeros(16, np.int16))


def _search(variant, fen=None, depth=5, net=None, threads=1, searcher=None):
    s = searcher or Searcher(16)
    s.threads = threads
    if net is not None or searcher is None:
        s.set_net(net)
    pos = Position.from_fen(fen, variant)
    out = {}
    s.start(pos, Limits(depth=depth), out.update, lambda best, ponder: out.update(best=best))
    s.wait()
    return out, s


def _bench_fens(variant, k=3):
    return list(variants.get(variant).bench_positions)[:k]


def _refreshed(net, pos):
    fresh = N.acc_alloc(net, 1)
    N.acc_refresh(N.play_net(net), pos.vt, pos.board, pos.st, fresh, 0)
    return fresh[0]


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_searchs_make_and_null_move_keep_the_accumulator_equal_to_a_refresh(variant):
    """A search-like walk (moves and null moves made with the search's own ``_make`` and
    ``_null_carry`` on a search thread's buffers, taken back, made again, down to deep plies):
    every node's accumulator row equals a full refresh, and so does the network's output."""
    rng = random.Random(f"nnue-search-{variant}")
    net = _net(variant)
    st = SearchState(1)
    st.use_net(net)
    acc, ss, ev = st.acc, st.ss, build_eval(variant)
    assert acc.shape == (C.SS_SIZE, 2, 32)
    fresh = N.acc_alloc(net, 1)
    kinds, deepest, nulls = set(), 0, 0
    for game in range(4):
        pos = Position.from_fen(None, variant)
        b, s_, stack, hist, vt, zob = pos.board, pos.st, pos.stack, pos.hist, pos.vt, pos.zob
        N.acc_refresh(st.net, vt, b, s_, acc, 0)          # as search_root
        path = []
        for step in range(500):
            ply = len(path)
            N.acc_refresh(st.net, vt, b, s_, fresh, 0)
            assert np.array_equal(acc[ply], fresh[0]), (pos.fen(), path[-3:])
            stm = int(s_[L.S_SIDE])
            assert N.nnue_evaluate(st.net, acc, ply, stm) == N.nnue_evaluate(st.net, fresh, 0, stm)
            legal = pos.legal_moves()
            if ply and (not legal or ply >= C.MAX_PLY - 1 or rng.random() < 0.3):
                if path.pop() == "null":                   # back up: the parent's row is untouched
                    G.unmake_null(s_, stack)
                else:
                    G.unmake_move(b, s_, stack, vt)
                continue
            if not legal:
                break
            if path[-1:] != ["null"] and not pos.is_check() and rng.random() < 0.15:
                G.make_null(s_, stack, hist, zob)
                C._null_carry(ss, np.int64(ply), np.int64(C.NNUE_ON), st.net, acc)
                path.append("null")
                nulls += 1
                continue
            m = _pick(rng, pos, legal)
            kinds.add(_kind(pos, m, variant))
            C._make(b, s_, stack, hist, vt, zob, ev, ss, np.int64(ply), np.int32(m), np.int64(C.NNUE_ON),
                    st.net, acc)
            path.append("move")
            deepest = max(deepest, ply + 1)
    assert nulls > 20 and deepest > 8
    assert {"capture", "quiet"} <= kinds, kinds


@pytest.mark.parametrize("variant", ["grand", "chess"])
def test_a_search_with_a_net_leaves_its_accumulator_rows_right(variant):
    """After a real search, row 0 (refreshed at the root) and row 1 (the last root move searched,
    written by ``_make``) equal a refresh: the search evaluates on the stack it is given."""
    net = _net(variant)
    fen = _bench_fens(variant)[1]
    out, s = _search(variant, fen, 6, net)
    pos = Position.from_fen(fen, variant)
    acc = s.state.acc
    assert np.array_equal(acc[0], _refreshed(net, pos))
    last = int(s.state.ss[0]["current_move"])
    assert last in pos.legal_moves()
    pos.push(last)
    assert np.array_equal(acc[1], _refreshed(net, pos))


def test_the_static_eval_is_the_networks_output_clamped():
    net = _const_net("grand", 37)
    assert N.evaluate_position(net, Position.from_fen(None, "grand")) == 37
    # no capture in the start position: every leaf stands pat on the net's constant eval for
    # its side to move, so the root score is +-37 by the parity of the depth
    assert _search("grand", None, 1, net)[0]["score"] == ("cp", -37)
    assert _search("grand", None, 2, net)[0]["score"] == ("cp", 37)
    huge = _const_net("grand", 50000)
    assert N.evaluate_position(huge, Position.from_fen(None, "grand")) == 50000
    assert _search("grand", None, 1, huge)[0]["score"] == ("cp", -C.NNUE_EVAL_MAX)


@pytest.mark.parametrize("variant", ["grand", "knightrelay"])
def test_search_with_a_net_is_deterministic_and_differs_from_the_linear_one(variant):
    fen = _bench_fens(variant)[1]
    a, _ = _search(variant, fen, 7, _net(variant))
    b, _ = _search(variant, fen, 7, _net(variant))
    lin, _ = _search(variant, fen, 7)
    assert (a["nodes"], a["score"], a["best"], a["pv"]) == (b["nodes"], b["score"], b["best"], b["pv"])
    assert (a["nodes"], a["score"]) != (lin["nodes"], lin["score"])


def test_use_nnue_off_reproduces_the_linear_search_exactly():
    for variant in ("grand", "chess"):
        fen = _bench_fens(variant)[2]
        lin, _ = _search(variant, fen, 7)
        s = Searcher(16)
        _search(variant, fen, 3, _net(variant), searcher=s)      # a net first, then none again
        s.set_net(None)
        off, _ = _search(variant, fen, 7, None, searcher=s)
        assert s.state.info[C.I_NNUE] == C.NNUE_OFF
        assert (off["nodes"], off["score"], off["best"], off["pv"]) == \
            (lin["nodes"], lin["score"], lin["best"], lin["pv"])


def test_lazy_smp_with_a_net_keeps_one_accumulator_stack_per_thread():
    variant = "grand"
    pos = Position.from_fen(_bench_fens(variant)[1], variant)
    net = _net(variant)
    out, s = _search(variant, pos.fen(), 8, net, threads=2)
    assert out["best"] in pos.legal_moves()
    assert len(out["thread_nodes"]) == 2 and min(out["thread_nodes"]) > 0
    helper = s._helper_states[0]
    assert helper.acc is not s.state.acc and helper.acc.shape == s.state.acc.shape
    assert helper.info[C.I_NNUE] == C.NNUE_ON
    for stack in (s.state.acc, helper.acc):          # each thread refreshed its own root row
        assert np.array_equal(stack[0], _refreshed(net, pos))
    # the same search again: consistent (a legal move from a real search)
    out2, s = _search(variant, pos.fen(), 8, searcher=s, threads=2)
    assert out2["best"] in pos.legal_moves() and out2["depth"] == 8


def test_changing_the_net_clears_the_hash_table():
    s = Searcher(4)

    def used():
        return int(np.count_nonzero(s.state.tt["flag"]))

    _search("grand", None, 5, searcher=s)
    assert used() > 100
    net = _net("grand")
    s.set_net(net)
    assert used() == 0 and s.net is net
    _search("grand", None, 5, searcher=s)
    n = used()
    s.set_net(net)              # the same net: nothing to clear
    assert used() == n > 100
    s.set_net(_net("grand", seed=4))
    assert used() == 0
    _search("grand", None, 4, searcher=s)
    s.set_net(None)             # back to the linear evaluation
    assert used() == 0 and s.net is None


def test_warm_up_and_direct_iterations_default_to_the_linear_evaluation():
    pos = Position.from_fen(None, "chess")
    s = Searcher(1)
    st = s.state
    st.info[:] = 0
    st.info[C.I_NODELIMIT] = 1 << 40
    st.info[C.I_MAXPLY] = 64
    sc = st.iterate(pos, build_eval("chess"), -C.INF, C.INF, 2)
    assert st.info[C.I_NNUE] == C.NNUE_OFF and abs(sc) < 100
    st.use_net(_const_net("chess", 250))
    st.clear()                  # the TT caches the linear evaluations (Searcher.set_net clears it)
    st.info[C.I_NODELIMIT] = 1 << 40
    assert st.iterate(pos, build_eval("chess"), -C.INF, C.INF, 2) == 250


def test_bench_evalfile(tmp_path, capsys):
    from bench.search_bench import main
    path = str(tmp_path / "chess.nnue")
    N.write_net(path, _net("chess"), "chess")
    assert main(["--evalfile", path, "--depth", "3"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("chess ") and "not the Bench signature" in out
    assert main(["--evalfile", path, "--variant", "grand", "--depth", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "a network for chess, not grand" in err[0]
    (tmp_path / "bad.nnue").write_bytes(open(path, "rb").read()[:100])
    assert main(["--evalfile", str(tmp_path / "bad.nnue"), "--depth", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "truncated" in err[0]
