"""The move picker (search.movepick): from a fresh picker, next_move hands out every legal move
exactly once, in the order of the search's former inline loop (the TT move first if legal, then
the others by score, the first of equal bests first), and skips an illegal or absent TT move."""
import inspect

import numpy as np
import pytest

from engine.rules import layout as L
from engine.rules.movegen import MAX_MOVES, GEN_ALL, gen_legal_checked, in_check
from engine.rules.position import Position
from search import movepick as P
from search.core import ss_alloc
from search.eval import build_eval, WS_SIZE
from tests.conftest import random_positions

PLY = 2          # a ply with two rows above it: the continuation-history rows c1, c2 are used


class Node:
    """The buffers of one search node at PLY, with random histories, killers and counter moves."""

    def __init__(self, pos, seed, ev=None):
        rng = np.random.default_rng(seed)
        self.pos = pos
        self.ev = build_eval(pos.variant.name) if ev is None else ev
        self.ws = np.zeros(WS_SIZE, np.int32)
        self.moves = np.zeros((PLY + 1) * MAX_MOVES, np.int32)
        self.scores = np.zeros((PLY + 1) * MAX_MOVES, np.int32)
        self.ss = ss_alloc()
        # coarse values: many ties, so the first-best rule of the selection matters
        self.hist_h = (rng.integers(-4, 5, (32, L.NSQ)) * 1000).astype(np.int32)
        self.cont = (rng.integers(-3, 4, (P.CMH_SIZE, P.CMH_SIZE)) * 500).astype(np.int16)
        self.capt = (rng.integers(-3, 4, (P.CMH_SIZE, 16)) * 800).astype(np.int16)
        self.legal = [int(m) for m in pos.legal_moves()]
        quiet = [m for m in self.legal if not self.noisy(m)]
        pick = lambda: int(quiet[rng.integers(len(quiet))]) if quiet else 0   # noqa: E731
        self.ss[PLY - 1]["cmh"] = int(rng.integers(P.CMH_SIZE))
        self.ss[PLY - 2]["cmh"] = int(rng.integers(P.CMH_SIZE))
        self.counter = np.zeros(P.CMH_SIZE, np.int32)
        self.counter[self.ss[PLY - 1]["cmh"]] = pick()
        self.ss[PLY]["killer1"], self.ss[PLY]["killer2"] = pick(), pick()
        self.check = bool(in_check(pos.board, pos.st, pos.vt))
        self.ss[PLY]["in_check"] = self.check      # the search writes it before starting the picker

    def noisy(self, m):
        return (int(self.pos.board[(m >> L.MOVE_TO_SHIFT) & L.SQ_MASK]) != L.EMPTY
                or (m & (L.MOVE_PROMO_BITS | L.MOVE_EP_BIT)) != 0)

    def init(self, ttm):
        self.call(P.picker_init, ttm=np.int64(ttm))

    def call(self, f, **extra):
        """Call the kernel ``f`` with this node's buffers, chosen by parameter name as the
        search passes them from its context (the evaluation table ``ev`` among them)."""
        p = self.pos
        have = dict(board=p.board, st=p.st, vt=p.vt, ev=self.ev, ws=self.ws, moves=self.moves,
                    scores=self.scores, ss=self.ss, hist_h=self.hist_h, cont=self.cont, capt=self.capt,
                    counter=self.counter, ply=np.int64(PLY), check=self.check, **extra)
        return f(*[have[name] for name in inspect.signature(f.py_func).parameters])

    def next(self):
        return tuple(int(x) for x in self.call(P.next_move))

    def drain(self):
        out = []
        while True:
            m, msc, cur = self.next()
            if m == 0:
                return out
            out.append((m, msc, cur))

    def reference(self, ttm):
        """The order of the former inline loop of search(): the TT move if legal; then every
        move generated and scored, the TT move swapped to the front, and the rest picked by
        selection sort taking the first of equal bests."""
        p = self.pos
        moves = np.zeros(MAX_MOVES, np.int32)
        scores = np.zeros(MAX_MOVES, np.int32)
        n = int(gen_legal_checked(p.board, p.st, p.vt, moves, 0, np.int64(GEN_ALL), self.check))
        c1, c2 = int(self.ss[PLY - 1]["cmh"]), int(self.ss[PLY - 2]["cmh"])
        P._score_moves(p.board, p.st, p.vt, self.ws, moves, scores, 0, n, np.int64(ttm),
                       self.ss[PLY]["killer1"], self.ss[PLY]["killer2"], self.hist_h, self.cont,
                       np.int64(c1), np.int64(c2), self.counter[c1], self.capt)
        ms, ss = [int(x) for x in moves[:n]], [int(x) for x in scores[:n]]
        start = 0
        if ttm in self.legal:
            j = ms.index(ttm)
            ms[0], ms[j] = ms[j], ms[0]
            ss[0], ss[j] = ss[j], ss[0]
            ss[0] = P.ORD_TT
            start = 1
        for i in range(start, n):
            b = max(range(i, n), key=lambda k: (ss[k], -k))
            ms[i], ms[b] = ms[b], ms[i]
            ss[i], ss[b] = ss[b], ss[i]
        return list(zip(ms, ss))


def _positions():
    out = []
    for variant, n in (("chess", 6), ("grand", 6), ("knightrelay", 6)):
        out.append(Position.from_fen(None, variant))
        out += [p for p in random_positions(variant, n, seed=11, max_plies=60) if p.legal_moves()]
    return out


POSITIONS = _positions()


def _tt_moves(node, rng):
    """TT moves: none, legal ones (a killer, a random move, a capture) and illegal ones (a
    stale or torn packed value, a negative one, a piece sent where it cannot go)."""
    legal = node.legal
    caps = [m for m in legal if node.noisy(m)]
    out = [0, int(node.ss[PLY]["killer1"]), int(legal[rng.integers(len(legal))]), 123456789, -5]
    if caps:
        out.append(caps[0])
    # a piece moved to a square it cannot reach: the from-square of a legal move, the target
    # of another piece's move
    m0 = legal[0]
    for m in legal:
        if (m & L.SQ_MASK) != (m0 & L.SQ_MASK):
            fake = (m0 & L.SQ_MASK) | (m & ~L.SQ_MASK & ((L.SQ_MASK << L.MOVE_TO_SHIFT)))
            if fake not in legal:
                out.append(int(fake))
            break
    return out


@pytest.mark.parametrize("k", range(len(POSITIONS)))
def test_next_move_yields_the_former_order(k):
    pos = POSITIONS[k]
    node = Node(pos, seed=k)
    rng = np.random.default_rng(100 + k)
    n0 = PLY * MAX_MOVES
    for ttm in _tt_moves(node, rng):
        node.init(ttm)
        got = node.drain()
        want = node.reference(ttm)
        assert [(m, s) for m, s, _ in got] == want, (pos.fen(), ttm)
        assert sorted(m for m, _, _ in got) == sorted(node.legal)        # each legal move once
        assert [cur for _, _, cur in got] == list(range(n0, n0 + len(got)))
        # the moves tried before the one at index cur are moves[n0:cur] (the cutoff's history update)
        assert [int(x) for x in node.moves[n0:n0 + len(got)]] == [m for m, _, _ in got]
        if ttm in node.legal:
            assert got[0] == (ttm, P.ORD_TT, n0)
        else:
            assert ttm not in [m for m, _, _ in got]
        assert node.next()[0] == 0                                       # stays exhausted
        assert not P.picker_no_moves(node.ss, np.int64(PLY))


@pytest.mark.parametrize("k", range(0, len(POSITIONS), 3))
def test_stage_marks_the_tt_move_and_survives_a_search_at_the_same_ply(k):
    """``picker_is_tt_move`` holds exactly while the TT move is being searched (the singular
    extension's test), and a picker of the same ply run to the end in between (the singular
    search) changes nothing once the state is restored."""
    pos = POSITIONS[k]
    node = Node(pos, seed=k)
    ttm = node.legal[len(node.legal) // 2]
    node.init(ttm)
    want = node.drain()
    node.init(ttm)
    first = node.next()
    assert first == want[0] and P.picker_is_tt_move(node.ss, np.int64(PLY))
    saved = P.picker_save(node.ss, np.int64(PLY))
    node.init(0)                      # the singular search: the same row and move slice
    node.drain()
    P.picker_restore(node.ss, np.int64(PLY), saved)
    rest = node.drain()
    assert [first] + rest == want
    node.init(0)
    node.next()
    assert not P.picker_is_tt_move(node.ss, np.int64(PLY))


@pytest.mark.parametrize("variant,fen,check", [
    ("chess", "6rk/6pp/8/8/8/8/8/6RK w - - 0 1", False),              # not mate: moves exist
    ("chess", "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", False),              # stalemate
    ("chess", "R5k1/5ppp/8/8/8/8/8/6K1 b - - 0 1", True),            # checkmate
])
def test_no_legal_move_is_reported(variant, fen, check):
    pos = Position.from_fen(fen, variant)
    node = Node(pos, seed=1)
    assert node.check == check
    node.init(0)
    moves = node.drain()
    assert len(moves) == len(pos.legal_moves())
    assert P.picker_no_moves(node.ss, np.int64(PLY)) == (not moves)


def _refit(variant, seed):
    """The evaluation as a refit might leave it: every weight (material, piece-square terms,
    the rest) moved by up to half its value."""
    from search.eval import load_weights, make_eval
    rng = np.random.default_rng(seed)
    w_mg, w_eg = (np.asarray(w, np.int64) for w in load_weights(variant))
    f = rng.uniform(0.5, 1.5, (2, len(w_mg)))
    return make_eval(variant, (w_mg * f[0]).astype(np.int64), (w_eg * f[1]).astype(np.int64))


@pytest.mark.parametrize("variant", ["chess", "grand", "knightrelay", "capablanca"])
def test_a_refit_of_the_evaluation_changes_no_exchange_value_or_move_order(variant):
    """SEE and the move order use the fixed exchange values declared with the variant
    (``Piece.see``, the table's ``V_SEE``), never the evaluation's weights: with refitted
    weights every static exchange value, the capture scores of quiescence and the main
    search's order (captures, killers, quiets, losing captures) stay the same."""
    refit = _refit(variant, 7)
    positions = [p for p in random_positions(variant, 10, seed=21, max_plies=80) if p.legal_moves()]
    positions.append(Position.from_fen(None, variant))
    ncapt = 0
    for k, pos in enumerate(positions):
        a, b = Node(pos, seed=k), Node(pos, seed=k, ev=refit)
        for ttm in (0, a.legal[0]):
            a.init(ttm)
            b.init(ttm)
            assert a.drain() == b.drain(), pos.fen()
        caps = [m for m in a.legal if a.noisy(m)]
        ncapt += len(caps)
        for m in caps:
            for thr in (-900, -300, -100, 0, 1, 100, 300, 900):
                extra = dict(m=np.int64(m), threshold=np.int64(thr))
                assert bool(a.call(P._see_ge, **extra)) == bool(b.call(P._see_ge, **extra)), (pos.fen(), m, thr)
        if caps:
            got = []
            for node in (a, b):
                node.moves[:len(caps)] = caps
                node.call(P._score_noisy, n0=np.int64(0), n=np.int64(len(caps)))
                got.append([int(x) for x in node.scores[:len(caps)]])
            assert got[0] == got[1], pos.fen()
    assert ncapt >= 10
