"""The move picker (search.movepick): from a fresh picker, next_move hands out every legal move
exactly once, in Stockfish's stage order: the TT move if legal; the captures and promotions not
losing material (SEE computed when picked) by MVV-LVA + capture history; the killers and the
counter move if legal quiet moves; the quiet moves by history, sorted down to the depth's limit;
the losing captures. In check every evasion is scored and picked best first; quiescence hands out
its captures (evasions in check) best first. The quiet moves are generated only when reached."""
import inspect

import numpy as np
import pytest

from engine.rules import layout as L
from engine.rules.movegen import MAX_MOVES, GEN_ALL, GEN_NOISY, gen_legal_checked, gen_pseudo, in_check
from engine.rules.position import Position
from search import movepick as P
from search.core import ss_alloc
from search.eval import build_eval, WS_SIZE
from tests.conftest import random_positions
from tests.test_legal_filter import PIN_POSITIONS

PLY = 6          # a ply with six rows above it: the continuation-history rows c1, c2, c4, c6 are used
                 # (the moves one, two, four and six plies up; not c3, c5)
DEPTH = 2        # the quiet stage's sort limit: -2 x QUIET_SORT_DEPTH, within the random histories' range


class Node:
    """The buffers of one search node at PLY, with random histories, killers and counter moves."""

    def __init__(self, pos, seed, ev=None, depth=DEPTH):
        rng = np.random.default_rng(seed)
        self.pos = pos
        self.depth = depth
        self.ev = build_eval(pos.variant.name) if ev is None else ev
        self.ws = np.zeros(WS_SIZE, np.int32)
        self.moves = np.zeros((PLY + 1) * MAX_MOVES, np.int32)
        self.scores = np.zeros((PLY + 1) * MAX_MOVES, np.int32)
        self.ss = ss_alloc()
        # coarse values: many ties, so the first-best rule of the selection matters; wide enough
        # that some quiet moves score below the partial sort's limit
        self.hist_h = (rng.integers(-4, 5, (32, L.NSQ)) * 100000).astype(np.int32)
        self.cont = (rng.integers(-3, 4, (P.CMH_SIZE, P.CMH_SIZE)) * 2000).astype(np.int16)
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
        for back in range(3, PLY + 1):             # the moves further up (rows c3..c6)
            self.ss[PLY - back]["cmh"] = int(rng.integers(P.CMH_SIZE))

    def noisy(self, m):
        return (int(self.pos.board[(m >> L.MOVE_TO_SHIFT) & L.SQ_MASK]) != L.EMPTY
                or (m & (L.MOVE_PROMO_BITS | L.MOVE_EP_BIT)) != 0)

    def call(self, f, **extra):
        """Call the kernel ``f`` with this node's buffers, chosen by parameter name as the
        search passes them from its context (the evaluation table ``ev`` among them)."""
        p = self.pos
        have = dict(board=p.board, st=p.st, vt=p.vt, ev=self.ev, ws=self.ws, moves=self.moves,
                    scores=self.scores, ss=self.ss, hist_h=self.hist_h, cont=self.cont, capt=self.capt,
                    counter=self.counter, ply=np.int64(PLY), check=self.check, depth=np.int64(self.depth),
                    skip_quiets=False)
        have.update(extra)
        return f(*[have[name] for name in inspect.signature(f.py_func).parameters])

    def init(self, ttm):
        self.call(P.picker_init, ttm=np.int64(ttm))

    def next(self, skip_quiets=False):
        return tuple(int(x) for x in self.call(P.next_move, skip_quiets=skip_quiets))

    def drain(self, skip_quiets=False):
        out = []
        while True:
            m, msc = self.next(skip_quiets)
            if m == 0:
                return out
            out.append((m, msc))

    # the reference: the stages in Python

    def losing(self, m):
        return self.noisy(m) and int(self.pos.board[(m >> L.MOVE_TO_SHIFT) & L.SQ_MASK]) != L.EMPTY and \
            bool(self.call(P._losing_capture, m=np.int64(m)))

    def capture_score(self, m):
        return int(self.call(P._capture_score, m=np.int64(m)))

    def quiet_score(self, m):
        p = self.pos
        to = (m >> L.MOVE_TO_SHIFT) & L.SQ_MASK
        pc = int(p.board[m & L.SQ_MASK])
        idx = int(P._cmh_index(pc, to))
        rows = [int(self.ss[PLY - back]["cmh"]) for back in (1, 2, 4, 6)]
        return int(self.hist_h[pc, to]) + P.CONT_SCALE * sum(int(self.cont[c, idx]) for c in rows)

    def refutations(self, ttm):
        """The killers and the counter move in stage order: legal quiet moves other than the TT
        move, each once."""
        k1, k2 = int(self.ss[PLY]["killer1"]), int(self.ss[PLY]["killer2"])
        cm = int(self.counter[int(self.ss[PLY - 1]["cmh"])])
        out = []
        for m, band in ((k1, P.ORD_KILLER1), (k2, P.ORD_KILLER2), (cm, P.ORD_COUNTER)):
            if m in self.legal and m != ttm and not self.noisy(m) and m not in [x for x, _ in out]:
                out.append((m, band))
        return out

    def evasion_reference(self, ttm):
        """In check: the TT move if legal, then every other evasion scored by _score_moves and
        picked by selection (the first of equal bests)."""
        p = self.pos
        moves = np.zeros(MAX_MOVES, np.int32)
        scores = np.zeros(MAX_MOVES, np.int32)
        ms = [m for m in self.legal if m != ttm]
        moves[:len(ms)] = ms
        c1, c2, c4, c6 = (int(self.ss[PLY - back]["cmh"]) for back in (1, 2, 4, 6))
        P._score_moves(p.board, p.st, p.vt, self.ws, moves, scores, 0, len(ms), np.int64(0),
                       self.ss[PLY]["killer1"], self.ss[PLY]["killer2"], self.hist_h, self.cont,
                       np.int64(c1), np.int64(c2), np.int64(c4), np.int64(c6), self.counter[c1], self.capt)
        ms, ss = [int(x) for x in moves[:len(ms)]], [int(x) for x in scores[:len(ms)]]
        for i in range(len(ms)):
            b = max(range(i, len(ms)), key=lambda k: (ss[k], -k))
            ms[i], ms[b] = ms[b], ms[i]
            ss[i], ss[b] = ss[b], ss[i]
        return ([(ttm, P.ORD_TT)] if ttm in self.legal else []) + list(zip(ms, ss))


def _positions():
    out = []
    for variant, n in (("chess", 6), ("grand", 6), ("knightrelay", 6), ("capablanca", 3)):
        out.append(Position.from_fen(None, variant))
        out += [p for p in random_positions(variant, n, seed=11, max_plies=60) if p.legal_moves()]
    out += [Position.from_fen(f, v) for v, f in (
        # e.p., castling both ways, a promotion with and without capture
        ("chess", "r3k2r/1P6/8/3pP3/8/8/8/R3K2R w KQkq d6 0 1"),
        # grand: optional promotions on ranks 8 and 9, captures by the marshal and cardinal
        ("grand", "r4k3r/1P8/2P7/10/3c1a4/4C5/4A5/10/10/R4K3R w - - 0 1"),
        # knightrelay: relayed captures and jumps
        ("knightrelay", "4k3/8/2p1p3/8/3B4/1N6/8/4K3 w - - 0 1"),
        # in check, a capture, a block and king moves answer it
        ("chess", "4k3/8/8/8/8/2n5/3PPb2/R3K2R w KQ - 0 1"),
        # pseudo-legal captures that are illegal: a pinned knight, a king taking a defended pawn
        ("chess", "4r1k1/8/8/5p2/3p4/4N3/4K3/8 w - - 0 1"))]
    out += [Position.from_fen(f, v) for v, f in PIN_POSITIONS]     # pins, e.p. along the king's rank
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


def _check_stages(node, ttm, got):
    """``got`` (the picker's (move, score) list) is the stage order of the module docstring."""
    legal = node.legal
    assert sorted(m for m, _ in got) == sorted(legal)                  # each legal move once
    if node.check:
        assert got == node.evasion_reference(ttm)
        return
    rest = list(got)
    if ttm in legal:
        assert rest.pop(0) == (ttm, P.ORD_TT)
    assert ttm not in [m for m, _ in rest]
    # good captures: every noisy move but the losing captures, best score first
    good = [x for x in rest if P.ORD_NOISY <= x[1] < P.ORD_TT]
    assert rest[:len(good)] == good
    want_good = {m for m in legal if node.noisy(m) and m != ttm and not node.losing(m)}
    assert {m for m, _ in good} == want_good
    for m, s in good:
        assert s == P.ORD_NOISY + P.CAPT_BASE + node.capture_score(m)
    assert [s for _, s in good] == sorted((s for _, s in good), reverse=True)
    rest = rest[len(good):]
    # the killers and the counter move
    refut = node.refutations(ttm)
    assert rest[:len(refut)] == refut
    rest = rest[len(refut):]
    # the quiet moves: sorted by history down to the limit, the rest after them
    quiets = [x for x in rest if P.ORD_BAD // 2 < x[1] < P.ORD_COUNTER]
    assert rest[:len(quiets)] == quiets
    excluded = {ttm} | {m for m, _ in refut}
    assert {m for m, _ in quiets} == {m for m in legal if not node.noisy(m) and m not in excluded}
    for m, s in quiets:
        assert s == node.quiet_score(m)
    limit = -P.QUIET_SORT_DEPTH * node.depth
    nsorted = 1 + sum(1 for _, s in quiets[1:] if s >= limit) if quiets else 0
    head = [s for _, s in quiets[:nsorted]]
    assert head == sorted(head, reverse=True)
    assert all(s < limit for _, s in quiets[nsorted:])
    rest = rest[len(quiets):]
    # the losing captures, in the order they were picked (best score first)
    assert {m for m, _ in rest} == {m for m in legal if node.noisy(m) and m != ttm and node.losing(m)}
    for m, s in rest:
        assert s == P.ORD_BAD + node.capture_score(m)
    assert [s for _, s in rest] == sorted((s for _, s in rest), reverse=True)


@pytest.mark.parametrize("k", range(len(POSITIONS)))
def test_next_move_yields_the_stage_order(k):
    pos = POSITIONS[k]
    node = Node(pos, seed=k)
    rng = np.random.default_rng(100 + k)
    for ttm in _tt_moves(node, rng):
        node.init(ttm)
        got = node.drain()
        _check_stages(node, ttm, got)
        assert node.next()[0] == 0                                       # stays exhausted
        assert not P.picker_no_moves(node.ss, np.int64(PLY))


def test_the_positions_reach_every_stage():
    """The positions above exercise every stage: losing captures, refutations, quiets below
    the sort limit, in-check nodes."""
    seen = set()
    for k, pos in enumerate(POSITIONS):
        node = Node(pos, seed=k)
        node.init(0)
        for m, s in node.drain():
            if node.check:
                seen.add("evasion")
            elif P.ORD_COUNTER <= s < P.ORD_NOISY:
                seen.add("refutation")
            elif s < P.ORD_BAD // 2:
                seen.add("bad capture")
            elif s < -P.QUIET_SORT_DEPTH * DEPTH:
                seen.add("unsorted quiet")
    assert seen == {"evasion", "refutation", "bad capture", "unsorted quiet"}


@pytest.mark.parametrize("k", range(0, len(POSITIONS), 2))
def test_skip_quiets_hands_out_no_quiet_move_and_generates_none(k):
    """With ``skip_quiets`` (move-count pruning) from the start, the picker hands out the TT
    move, the good captures, the refutations and the losing captures, and no other quiet move;
    set when the quiets are reached, it skips the quiets not handed out yet."""
    pos = POSITIONS[k]
    node = Node(pos, seed=k)
    if node.check:
        return
    node.init(0)
    full = node.drain()
    node.init(0)
    skipped = node.drain(skip_quiets=True)
    assert skipped == [x for x in full if not (P.ORD_BAD // 2 < x[1] < P.ORD_COUNTER)]
    # the quiet moves were never generated: the move list ends where the (pseudo-legal) captures end
    n0 = PLY * MAX_MOVES
    buf = np.zeros(MAX_MOVES, np.int32)
    ncapt = int(gen_pseudo(pos.board, pos.st, pos.vt, buf, 0, np.int64(GEN_NOISY)))
    assert node.ss[PLY]["mp_end"] == n0 + ncapt
    node.init(0)
    node.drain()
    nquiet = len([x for x in full if P.ORD_BAD // 2 < x[1] < P.ORD_COUNTER])
    assert node.ss[PLY]["mp_end"] >= n0 + ncapt + nquiet
    # skipping from the middle of the quiet stage: the quiets handed out so far, then the bad captures
    quiets = [x for x in full if P.ORD_BAD // 2 < x[1] < P.ORD_COUNTER]
    if len(quiets) >= 2:
        node.init(0)
        head = []
        while len([x for x in head if P.ORD_BAD // 2 < x[1] < P.ORD_COUNTER]) < 2:
            head.append(node.next())
        tail = node.drain(skip_quiets=True)
        assert head + tail == [x for x in full if not (P.ORD_BAD // 2 < x[1] < P.ORD_COUNTER)
                               or x in quiets[:2]]


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


@pytest.mark.parametrize("k", range(len(POSITIONS)))
def test_quiescence_picker_hands_out_the_captures_best_first(k):
    """Quiescence: the legal captures and promotions (every evasion in check), each once, by
    ``_score_noisy`` best first; no move at all reported only for a mated side."""
    pos = POSITIONS[k]
    node = Node(pos, seed=k)
    node.call(P.qpicker_init)
    got = []
    while True:
        m, s = (int(x) for x in node.call(P.next_qmove))
        if m == 0:
            break
        got.append((m, s))
    p = pos
    ref = np.zeros(MAX_MOVES, np.int32)
    n = int(gen_legal_checked(p.board, p.st, p.vt, ref, 0, np.int64(GEN_ALL if node.check else GEN_NOISY),
                              node.check))
    assert sorted(m for m, _ in got) == sorted(int(x) for x in ref[:n])
    scores = np.zeros(MAX_MOVES, np.int32)
    P._score_noisy(p.board, p.vt, ref, scores, 0, n, node.capt)
    want = {int(ref[i]): int(scores[i]) for i in range(n)}
    assert all(s == want[m] for m, s in got)
    assert [s for _, s in got] == sorted((s for _, s in got), reverse=True)
    assert P.picker_no_moves(node.ss, np.int64(PLY)) == (not got)


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
