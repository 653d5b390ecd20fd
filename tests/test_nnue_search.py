"""The NNUE network inside the search (search.core, search.driver): the accumulator stack kept
per ply and per thread equals a full refresh at every evaluated node, the network's output is the
static evaluation (clamped), the search with a net is deterministic, without one it is exactly the
linear search, a change of network clears the hash table, and ``cardinal bench --evalfile``."""
import numpy as np
import pytest

from engine.rules.position import Position
from search import core as C
from search import nnue as N
from search.driver import Limits, Searcher
from search.eval import build_eval
import variants
from tests.conftest import VARIANTS


def _net(variant, hidden=32, seed=3):
    return N.quantize(N.FloatNet.random(variant, hidden, seed=seed))


def _const_net(variant, cp):
    """A net whose output is ``cp`` for every position (zero weights, the bias alone)."""
    lay = N.input_layout(variant)
    meta = N.make_meta(lay, 8)
    meta[N.M_OB] = (cp * int(meta[N.M_DIV])) // int(meta[N.M_SCALE])
    return N.NnueNet(meta, np.zeros((lay.nin + 1, 8), np.int16), np.zeros(8, np.int16), np.zeros(16, np.int16))


def _search(variant, fen=None, depth=5, net=None, verify=False, threads=1, searcher=None):
    s = searcher or Searcher(16)
    s.threads = threads
    if net is not None or searcher is None:
        s.set_net(net, verify)
    pos = Position.from_fen(fen, variant)
    out = {}
    s.start(pos, Limits(depth=depth), out.update, lambda best, ponder: out.update(best=best))
    s.wait()
    return out, s


def _bench_fens(variant, k=3):
    return list(variants.get(variant).bench_positions)[:k]


@pytest.mark.parametrize("variant", VARIANTS)
def test_search_accumulator_equals_a_refresh_at_every_evaluated_node(variant):
    net = _net(variant)
    for fen in _bench_fens(variant):
        out, s = _search(variant, fen, 6, net, verify=True)
        assert out["nodes"] > 300 and out.get("best")
        assert s.state.info[C.I_NNUE] == C.NNUE_VERIFY
        assert s.state.info[C.I_NNUE_BAD] == 0, fen


def test_the_verify_check_sees_a_wrong_accumulator_row():
    pos = Position.from_fen(None, "grand")
    net = N.play_net(_net("grand"))
    acc = np.zeros((C.ACC_ROWS, 2, 32), np.int16)
    info = np.zeros(C.INFO_SIZE, np.int64)
    N.acc_refresh(net, pos.vt, pos.board, pos.st, acc, 3)
    C._nnue_verify(pos.board, pos.st, pos.vt, net, acc, info, np.int64(3))
    assert info[C.I_NNUE_BAD] == 0
    acc[3, 1, 17] += 1
    C._nnue_verify(pos.board, pos.st, pos.vt, net, acc, info, np.int64(3))
    assert info[C.I_NNUE_BAD] == 1


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
    out, s = _search(variant, pos.fen(), 8, _net(variant), verify=True, threads=2)
    assert out["best"] in pos.legal_moves()
    assert len(out["thread_nodes"]) == 2 and min(out["thread_nodes"]) > 0
    helper = s._helper_states[0]
    assert helper.acc is not s.state.acc and helper.acc.shape == s.state.acc.shape
    assert helper.info[C.I_NNUE] == C.NNUE_VERIFY
    assert s.state.info[C.I_NNUE_BAD] == 0 and helper.info[C.I_NNUE_BAD] == 0
    # the same search again: consistent (a legal move, every node's accumulator right)
    out2, s = _search(variant, pos.fen(), 8, searcher=s, threads=2)
    assert out2["best"] in pos.legal_moves() and helper.info[C.I_NNUE_BAD] == 0


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
