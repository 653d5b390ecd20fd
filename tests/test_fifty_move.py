"""The fifty-move rule in the search: checkmate on the hundredth half-move takes precedence over
the draw (FIDE Laws 9.3 and 5.1.1; Stockfish's ``Position::is_draw``), in the search and in
quiescence, and the two guards of the models against the fifty-move horizon: a stored mate that
cannot be delivered before the rule draws is downgraded when read from the TT (Fairy-Stockfish
11.1's ``value_from_tt``), and no TT cutoff is taken from a fifty-move count of 90 on
(Stockfish 12)."""
import numpy as np
import pytest

from engine.rules import layout as L
from engine.rules.position import Position
from search import core as C
from search.driver import Limits, Searcher, SearchState
from search.eval import build_eval, psq_sums
from search.tt import BOUND_EXACT, EVAL_NONE, tt_store

# White mates in one with the rook on the hundredth half-move; every other move draws by the rule
# (or, in grand, gives the pawn move that resets the counter).
MATE_ON_100 = [
    ("chess", "8/8/2p5/3b1K1k/4p3/4PpR1/5P2/8 w - - 99 113", "g3h3"),
    ("knightrelay", "8/8/2p5/3b1K1k/4p3/4PpR1/5P2/8 w - - 99 113", "g3h3"),
    ("grand", "10/10/10/2p7/3b6/7K1k/10/4P3R1/10/10 w - - 99 113", "i3j3"),
]


@pytest.fixture(scope="module", autouse=True)
def _compiled_search():
    Searcher(1).warm_up()


def _search(pos, limits):
    s = Searcher(8)
    infos, done = [], []
    s.start(pos, limits, infos.append, lambda b, p: done.append(b))
    s.wait(60)
    assert len(done) == 1
    return done[0], [i for i in infos if "score" in i]


@pytest.mark.parametrize("variant,fen,mate", MATE_ON_100)
@pytest.mark.parametrize("depth", [1, 6])   # depth 1: the mated child is a quiescence node
def test_mate_on_the_hundredth_half_move_is_mate(variant, fen, mate, depth):
    pos = Position.from_fen(fen, variant)
    after = Position.from_fen(fen, variant)
    after.push_uci(mate)
    assert after.status() == "checkmate"           # the rules core agrees
    best, infos = _search(pos, Limits(depth=depth))
    assert pos.uci(best) == mate
    assert infos[-1]["score"] == ("mate", 1), infos[-1]


def _ctx(st, pos, ev, ply):
    """The search buffers on ``pos``, with the piece-square sums set for ``ply``."""
    st.clear()
    st.info[:] = 0
    st.ss[:] = 0
    st.info[C.I_NODELIMIT] = 1 << 62
    st.info[C.I_MAXPLY] = C.MAX_PLY
    st.info[C.I_ROOTPLY] = pos.st[L.S_PLY]
    st.info[C.I_ROOTDEPTH] = 4
    mg, eg = psq_sums(pos.board, pos.st, pos.vt, ev)
    st.ss[ply]["psq_mg"] = mg
    st.ss[ply]["psq_eg"] = eg
    return st.ctx(pos, ev)


@pytest.mark.parametrize("variant,fen,mate", MATE_ON_100)
def test_quiescence_scores_a_mated_node_at_counter_100_as_mate(variant, fen, mate):
    pos = Position.from_fen(fen, variant)
    pos.push_uci(mate)                              # Black is mated, fifty-move counter 100
    assert int(pos.st[L.S_HALFMOVE]) == 100
    st, ev = SearchState(1), build_eval(variant)
    c = _ctx(st, pos, ev, 1)
    for incheck in (-1, 1):                         # unknown, or told by the parent
        sc = int(C.qsearch(c, np.int64(-C.INF), np.int64(C.INF), np.int64(1), np.int64(incheck)))
        assert sc == -C.MATE + 1
        sc = int(C.search(c, np.int64(-C.INF), np.int64(C.INF), np.int64(3), np.int64(1), np.int64(incheck)))
        assert sc == -C.MATE + 1


def test_a_draw_at_counter_100_stays_a_draw_when_not_mated():
    # in check with a legal move, or not in check: the fifty-move rule draws
    for fen in ("8/8/2p5/3b1K1k/4p3/4PpR1/5P2/8 b - - 100 113",            # not in check
                "8/8/2p5/5K2/7k/4Ppb1/5P2/7R b - - 100 113"):                # in check, ...Bh2 blocks
        pos = Position.from_fen(fen, "chess")
        assert pos.status() != "checkmate" and pos.legal_moves()
        st, ev = SearchState(1), build_eval("chess")
        c = _ctx(st, pos, ev, 1)
        assert int(C.qsearch(c, np.int64(-C.INF), np.int64(C.INF), np.int64(1), np.int64(-1))) == 0, fen
        assert int(C.search(c, np.int64(-C.INF), np.int64(C.INF), np.int64(3), np.int64(1), np.int64(-1))) == 0, fen


def test_tt_mate_scores_beyond_the_fifty_move_horizon_are_downgraded():
    """``_score_from_tt(raw, ply, r50)``: a mate ``k`` plies from the node is kept (made relative
    to the root) while r50 + k <= 100, else it becomes MATE_BOUND, a win that is no proven mate."""
    f = C._score_from_tt
    win = C.MATE - 10                              # stored relative to the node: mate in 10 plies
    assert f(np.int64(win), np.int64(3), np.int64(0)) == win - 3
    assert f(np.int64(win), np.int64(3), np.int64(90)) == win - 3       # mated on the 100th half-move
    assert f(np.int64(win), np.int64(3), np.int64(91)) == C.MATE_BOUND
    assert f(np.int64(-win), np.int64(3), np.int64(90)) == -win + 3
    assert f(np.int64(-win), np.int64(3), np.int64(91)) == -C.MATE_BOUND
    assert f(np.int64(123), np.int64(3), np.int64(99)) == 123              # not a mate: unchanged
    assert not C.MATE_BOUND > C.MATE_BOUND                                  # (read as no mate)


@pytest.mark.parametrize("r50,cut", [(10, True), (89, True), (90, False), (99, False)])
def test_no_tt_cutoff_from_a_fifty_move_count_of_90(r50, cut):
    """A deep exact TT entry answers a non-PV node below a fifty-move count of 90; from 90 on the
    node is searched (its value may be a draw by then). The entry's score is impossible for the
    position, so a returned 777 can only come from a cutoff."""
    pos = Position.from_fen(f"6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - {r50} 40", "chess")
    st, ev = SearchState(1), build_eval("chess")
    c = _ctx(st, pos, ev, 1)
    tt_store(st.tt, pos.st[L.S_HASH], 0, 777, 60, BOUND_EXACT, 0, EVAL_NONE)
    sc = int(C.search(c, np.int64(700), np.int64(701), np.int64(3), np.int64(1), np.int64(-1)))
    assert (sc == 777) == cut, sc
