"""Search driver and numba search: TT, stop flag, determinism, legality, special positions, limits."""
import threading
import time

import numpy as np
import pytest

from engine.rules.position import Position
from tests.conftest import read_epd
from engine.rules import layout as L
from search.driver import Searcher, Limits, score_tuple
from search.tt import tt_alloc, tt_probe, tt_store, hashfull, BOUND_EXACT, BOUND_LOWER, BOUND_UPPER, EVAL_NONE
from search.timeman import allocate, next_iteration_ok
from tests.conftest import random_positions


@pytest.fixture(scope="module", autouse=True)
def _compiled_search():
    """Compile (or load) the numba search before any test: the stop/ponder/clock tests bound
    latencies, and a first-use compile (~10 s cold) must not fall inside those bounds."""
    Searcher(1).warm_up()

from tests.conftest import VARIANTS


def run(pos, limits, searcher=None, multipv=1):
    s = searcher or Searcher(8)
    s.multipv = multipv
    infos, done = [], []
    s.start(pos, limits, infos.append, lambda b, p: done.append((b, p)))
    s.wait(60)
    assert len(done) == 1, "on_done must be called exactly once"
    return done[0][0], done[0][1], infos


# ---------------------------------------------------------------- TT
def test_tt_round_trip_and_replacement():
    tt = tt_alloc(1)
    assert len(tt) & (len(tt) - 1) == 0 and tt.nbytes <= 1 << 20
    assert tt.ctypes.data % 64 == 0, "buckets must start on a cache line"
    key = np.int64(0x123456789ABCDEF)
    assert tt_probe(tt, key) == -1
    i = tt_store(tt, key, 4242, -29990, 7, BOUND_EXACT, 3, 55)
    assert tt_probe(tt, key) == i
    e = tt[i]
    assert (e["move"], e["score"], e["eval"], e["depth"], e["flag"] & 3, e["flag"] >> 2) == \
        (4242, -29990, 55, 7, BOUND_EXACT, 3)
    # same key, move 0 and no eval: the old move and eval are kept
    tt_store(tt, key, 0, 15, 8, BOUND_LOWER, 3, EVAL_NONE)
    assert tt[i]["move"] == 4242 and tt[i]["score"] == 15 and tt[i]["eval"] == 55
    # a quiescence (draft 0) result never replaces a deeper one of the same position
    tt_store(tt, key, 0, -7, 0, BOUND_UPPER, 3, EVAL_NONE)
    assert tt[i]["score"] == 15 and tt[i]["depth"] == 8
    # keys of the same bucket live side by side: 3 more fit without evicting anything
    others = [np.int64(int(key) + k * len(tt)) for k in range(1, 5)]
    for k, o in enumerate(others[:3]):
        tt_store(tt, o, 1, 1, 2 + k, BOUND_UPPER, 3, EVAL_NONE)
    assert all(tt_probe(tt, o) >= 0 for o in others[:3]) and tt_probe(tt, key) == i
    assert len({tt_probe(tt, o) for o in others[:3]} | {i}) == 4 and max(tt_probe(tt, o) for o in others[:3]) - min(
        tt_probe(tt, o) for o in others[:3] + [key]) < 4
    # a full bucket evicts the shallowest entry of the same search ...
    tt_store(tt, others[3], 1, 1, 5, BOUND_UPPER, 3, EVAL_NONE)
    assert tt_probe(tt, others[0]) == -1 and tt_probe(tt, key) == i and tt_probe(tt, others[3]) >= 0
    # ... and an entry of an older search goes before a shallower current one
    newer = np.int64(int(key) + 9 * len(tt))
    tt_store(tt, others[2], 1, 1, 1, BOUND_UPPER, 6, EVAL_NONE)       # draft 1, from search 6
    tt_store(tt, newer, 1, 1, 1, BOUND_UPPER, 6, EVAL_NONE)           # evicts the shallowest search-3 entry
    assert tt_probe(tt, newer) >= 0 and tt_probe(tt, others[2]) >= 0
    assert tt_probe(tt, others[1]) == -1                               # draft 3 of search 3 goes
    assert tt_probe(tt, others[3]) >= 0 and tt_probe(tt, key) == i    # drafts 5 and 8 stay
    assert 0 <= hashfull(tt, 3) <= 1000


def test_hash_size_limits():
    with pytest.raises(ValueError):
        tt_alloc(0)
    with pytest.raises(ValueError):
        Searcher(5000)
    s = Searcher(1)
    with pytest.raises(ValueError):
        s.resize_hash(4097)
    s.resize_hash(2)
    assert s.state.tt.nbytes <= 2 << 20


# ---------------------------------------------------------------- stop / determinism
@pytest.mark.timing
@pytest.mark.parametrize("variant", ["grand", "knightrelay"])
def test_stop_ends_infinite_search(variant):
    s = Searcher(16)
    pos = Position.from_fen(None, variant)
    done = []
    t_done = []
    s.start(pos, Limits(infinite=True), lambda i: None, lambda b, p: (done.append(b), t_done.append(time.perf_counter())))
    time.sleep(0.3)
    assert s.running and not done   # an infinite search never ends by itself
    t0 = time.perf_counter()
    s.stop()
    s.wait(5)
    assert done and done[0] in pos.legal_moves()
    assert t_done[0] - t0 < 2.0      # stop -> on_done: ~20 ms unloaded


@pytest.mark.parametrize("variant", VARIANTS)
def test_depth_search_is_deterministic(variant):
    pos = Position.from_fen(None, variant)
    b1, _, i1 = run(pos, Limits(depth=6), Searcher(16))
    b2, _, i2 = run(pos, Limits(depth=6), Searcher(16))
    assert b1 == b2
    assert i1[-1]["nodes"] == i2[-1]["nodes"]
    assert i1[-1]["depth"] == 6 and i1[-1]["pv"][0] == pos.uci(b1)   # the PV is move strings


def test_info_fields():
    pos = Position.from_fen(None, "grand")
    _, _, infos = run(pos, Limits(depth=3))
    for k in ("depth", "seldepth", "multipv", "score", "nodes", "nps", "time", "hashfull", "pv", "bound"):
        assert k in infos[-1]
    assert [i["depth"] for i in infos] == [1, 2, 3]


# ---------------------------------------------------------------- legality
def _random_positions(variant, n, seed):
    return random_positions(variant, n, seed, max_plies=100)


@pytest.mark.parametrize("variant", VARIANTS)
def test_search_returns_legal_moves(variant):
    s = Searcher(8)
    for pos in _random_positions(variant, 25, seed=11):
        legal = pos.legal_moves()
        best, ponder, infos = run(pos, Limits(nodes=3000), s)
        if not legal:
            assert best is None
            continue
        assert best in legal, pos.fen()
        if ponder is not None:
            p = pos.copy()
            p.push(best)
            assert ponder in p.legal_moves()
        for inf in infos:   # every PV is a legal line
            p = pos.copy()
            for m in inf["pv"]:
                assert m in p.legal_uci()
                p.push_uci(m)


@pytest.mark.parametrize("variant,fen", [
    ("chess", "k7/8/8/8/8/8/6q1/7K w - - 0 1"),                   # in check, one legal move (Kxg2)
    ("knightrelay", "k7/8/8/8/8/8/6q1/7K w - - 0 1"),
    ("grand", "k9/10/10/10/10/10/10/10/8q1/9K w - - 0 1"),
])
def test_single_legal_move_in_check(variant, fen):
    pos = Position.from_fen(fen, variant)
    legal = pos.legal_moves()
    assert len(legal) == 1 and pos.is_check()
    best, _, _ = run(pos, Limits(wtime=1000, btime=1000, winc=10, binc=10))
    assert best == legal[0]
    best, _, _ = run(pos, Limits(depth=5))
    assert best == legal[0]


@pytest.mark.parametrize("variant,fen", [
    ("chess", "4k3/8/8/8/8/8/4P3/4K3 w - - 100 80"),      # fifty-move rule already reached
    ("chess", "4k3/8/8/8/8/8/8/4KN2 w - - 0 1"),          # insufficient material
    ("knightrelay", "4k3/8/8/3n4/8/8/8/4KN2 w - - 0 1"),  # kings and knights only
    ("grand", "k9/10/10/10/10/10/10/10/10/8BK w - - 0 1"),  # grand: one minor piece
])
def test_draw_by_rule_still_returns_a_move(variant, fen):
    pos = Position.from_fen(fen, variant)
    assert pos.status() in ("fifty", "insufficient")
    best, _, infos = run(pos, Limits(depth=4))
    assert best in pos.legal_moves()


@pytest.mark.parametrize("variant,fen", [
    ("chess", "R5k1/5ppp/8/8/8/8/8/6K1 b - - 0 1"),          # checkmated
    ("chess", "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"),            # stalemate
    ("grand", "k9/1Q8/1K8/10/10/10/10/10/10/10 b - - 0 1"),  # checkmated
])
def test_no_legal_moves_returns_none(variant, fen):
    pos = Position.from_fen(fen, variant)
    assert pos.legal_moves() == []
    best, ponder, _ = run(pos, Limits(depth=3))
    assert best is None and ponder is None
    best, _, _ = run(pos, Limits(wtime=1000, btime=1000))
    assert best is None


@pytest.mark.parametrize("variant,fen,ksq", [
    ("chess", "4k3/8/8/8/8/8/4R3/4K3 w - - 0 1", "e8"),     # side NOT to move (black) is in check
    ("grand", "4k5/10/10/10/10/10/10/10/4R5/4K5 w - - 0 1", "e10"),
])
def test_opponent_in_check_captures_king(variant, fen, ksq):
    pos = Position.from_fen(fen, variant)
    assert pos.opponent_in_check()
    best, _, _ = run(pos, Limits(depth=5))
    assert pos.uci(best).endswith(ksq)


def test_mate_limit_and_mate_score():
    pos = Position.from_fen("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", "chess")   # Ra8#
    best, _, infos = run(pos, Limits(mate=1))
    assert pos.uci(best) == "a1a8" and infos[-1]["score"] == ("mate", 1)
    # the mated side sees a negative mate score: Kb8 is forced, then Rh8#
    pos = Position.from_fen("k7/8/1K6/8/8/8/8/7R b - - 0 1", "chess")
    best, _, infos = run(pos, Limits(depth=4))
    assert pos.uci(best) == "a8b8"
    assert infos[-1]["score"] == ("mate", -1)
    assert infos[-1]["pv"][:2] == ["a8b8", "h1h8"]
    p = pos.copy()
    for m in infos[-1]["pv"][:2]:
        p.push_uci(m)
    assert p.status() == "checkmate"


def test_multipv_lines_distinct():
    pos = Position.from_fen(None, "grand")
    _, _, infos = run(pos, Limits(depth=3), multipv=3)
    last = [i for i in infos if i["depth"] == 3]
    assert [i["multipv"] for i in last] == [1, 2, 3]
    firsts = [i["pv"][0] for i in last]
    assert len(set(firsts)) == 3
    scores = [i["score"][1] for i in last]
    assert scores == sorted(scores, reverse=True)


@pytest.mark.timing
def test_ponder_then_ponderhit():
    s = Searcher(8)
    pos = Position.from_fen(None, "knightrelay")
    done = []
    s.start(pos, Limits(ponder=True, wtime=2000, btime=2000), lambda i: None, lambda b, p: done.append(b))
    time.sleep(0.4)
    assert s.running and not done
    t0 = time.perf_counter()
    s.ponderhit()
    s.wait(5)
    assert done and done[0] in pos.legal_moves()
    assert time.perf_counter() - t0 < 2.0   # at most a third of the 2 s clock, far less in practice


# ---------------------------------------------------------------- time
def test_allocate_bounds():
    soft, hard = allocate(Limits(wtime=1000, winc=10), 0, 30)
    assert 0 < soft <= hard < 1000 - 30
    soft, hard = allocate(Limits(movetime=500), 1, 30)
    assert soft is None and hard == 470     # movetime: no iteration rule, the whole time
    assert allocate(Limits(depth=5), 0, 30) == (None, None)
    soft, hard = allocate(Limits(wtime=5, winc=0), 0, 30)
    assert soft >= 1 and hard >= 1


def test_movetime_thinks_for_the_whole_time(monkeypatch):
    """``go movetime`` is not a clock: the search runs until the time is up (less the Move
    Overhead) instead of asking the between-iterations rule, as a clocked search does. The
    rule is replaced by one that always says stop, so only a clocked search stops early.
    (A lower bound on the elapsed time: a busy machine only makes it longer.)"""
    import search.driver as D
    asked = []
    monkeypatch.setattr(D, "next_iteration_ok", lambda *a: asked.append(a) and False)
    s = Searcher(8)
    s.move_overhead = 0
    pos = Position.from_fen(None, "grand")
    t0 = time.perf_counter()
    best, _, _ = run(pos, Limits(movetime=700), s)
    assert (time.perf_counter() - t0) * 1000 >= 690 and not asked
    assert best in pos.legal_moves()
    best, _, infos = run(pos, Limits(wtime=60000, btime=60000), s)     # the control: a clock asks
    assert asked and best in pos.legal_moves() and max(i["depth"] for i in infos) == 1


def test_next_iteration_spends_more_on_a_falling_score_or_a_changing_move():
    """The between-iterations rule: a steady search stops at 0.6 of ``soft``; a falling score
    or best-move changes allow more; a best move stable for many iterations, less."""
    soft = 1000.0
    assert next_iteration_ok(590, soft, 0, 0.0, 1)
    assert not next_iteration_ok(610, soft, 0, 0.0, 1)
    assert next_iteration_ok(800, soft, 40, 0.0, 1)          # score fell 40 cp: more time
    assert not next_iteration_ok(1300, soft, 500, 0.0, 1)    # ... at most twice the base
    assert next_iteration_ok(800, soft, 0, 1.0, 1)           # the best move just changed
    assert not next_iteration_ok(500, soft, 0, 0.0, 10)      # stable for 10 iterations: less
    assert not next_iteration_ok(590, soft, -50, 0.0, 1)     # a rising score saves a little


def test_last_move_score_kept_for_time_management_until_new_game():
    """The root score of the last search is remembered (the next move compares against it)
    and forgotten on ``ucinewgame`` (``clear_hash``)."""
    s = Searcher(1)
    assert s._last_score is None
    run(Position.from_fen(None, "grand"), Limits(depth=3), searcher=s)
    assert isinstance(s._last_score, int)
    s.clear_hash()
    assert s._last_score is None


@pytest.mark.timing
@pytest.mark.parametrize("variant", ["grand", "knightrelay"])
def test_fast_clock_moves_in_time(variant):
    """1 s + 10 ms: every move comes well inside the remaining clock."""
    s = Searcher(16)
    pos = Position.from_fen(None, variant)
    clock = [1000.0, 1000.0]
    for _ in range(12):
        if not pos.legal_moves():
            break
        side = pos.turn
        lim = Limits(wtime=int(clock[0]), btime=int(clock[1]), winc=10, binc=10)
        t0 = time.perf_counter()
        best, _, _ = run(pos, lim, s)
        used = (time.perf_counter() - t0) * 1000
        assert used < clock[side] - 30, (used, clock[side])
        clock[side] += 10 - used
        pos.push(best)


def test_restart_from_on_done_and_bad_callbacks():
    """on_done may start the next search (match loops do); a raising on_info costs nothing."""
    s = Searcher(8)
    pos = Position.from_fen(None, "knightrelay")
    results = []
    finished = threading.Event()

    def bad_info(info):
        raise RuntimeError("broken GUI callback")

    def done2(b, p):
        results.append(b)
        finished.set()

    def done1(b, p):
        results.append(b)
        s.start(pos, Limits(depth=2), bad_info, done2)

    s.start(pos, Limits(depth=3), bad_info, done1)
    assert finished.wait(10)
    s.wait(5)
    assert len(results) == 2 and all(b in pos.legal_moves() for b in results)
    assert not s.running


# ---------------------------------------------------------------- SEE sign, TT eval cache
def test_tt_eval_slot_reset_when_slot_changes_hands():
    from search.tt import EVAL_NONE
    tt = tt_alloc(1)
    key = np.int64(0x2468ACE)
    i = tt_store(tt, key, 1, 0, 3, BOUND_EXACT, 1, 123)
    tt_store(tt, key, 1, 5, 4, BOUND_EXACT, 1, EVAL_NONE)       # same position: its eval stays valid
    assert tt_probe(tt, key) == i and tt[i]["eval"] == 123
    # three more positions of a later search fill the bucket; a fourth takes the oldest entry
    for k in range(1, 5):
        tt_store(tt, np.int64(int(key) + k * len(tt)), 1, 0, 9, BOUND_EXACT, 2, EVAL_NONE)
    other = np.int64(int(key) + 4 * len(tt))
    assert tt_probe(tt, key) == -1 and tt_probe(tt, other) == i and tt[i]["eval"] == EVAL_NONE


@pytest.mark.parametrize("variant,fen,uci,losing", [
    # queen takes a pawn defended by a pawn: losing; pawn takes the queen: winning
    ("chess", "4k3/8/2p5/3p4/4Q3/8/8/4K3 w - - 0 1", "e4d5", True),
    ("chess", "4k3/8/8/3q4/4P3/8/8/4K3 w - - 0 1", "e4d5", False),
    # undefended pawn: not losing
    ("chess", "4k3/8/8/3p4/4Q3/8/8/4K3 w - - 0 1", "e4d5", False),
    # knightrelay: knights never capture, so a pawn "defended" by a knight alone is free ...
    ("knightrelay", "4k3/8/2n5/4p3/8/8/4Q3/4K3 w - - 0 1", "e2e5", False),
    # ... but a bishop relayed by its knight (a5) defends e5 by a knight's move from c6
    ("knightrelay", "4k3/8/2b5/n3p3/8/8/4Q3/4K3 w - - 0 1", "e2e5", True),
])
def test_losing_capture_sign(variant, fen, uci, losing):
    from search.movepick import _losing_capture
    from search.eval import WS_SIZE
    pos = Position.from_fen(fen, variant)
    m = pos.parse_uci(uci)
    ws = np.zeros(WS_SIZE, dtype=np.int32)
    assert _losing_capture(pos.board, pos.st, pos.vt, ws, np.int64(m)) == losing


def test_info_time_after_ponderhit_counts_the_whole_search():
    """After ponderhit the clock restarts, but info `time` (and so `nps`) covers the whole
    search, pondering included: nodes / time must stay a real speed. Event-based: the
    test waits for infos, not for fixed sleeps."""
    s = Searcher(8)
    pos = Position.from_fen(None, "grand")
    infos = []
    got = threading.Event()

    def on_info(i):
        infos.append(i)
        got.set()

    s.start(pos, Limits(ponder=True, wtime=600000, btime=600000), on_info, lambda b, p: None)
    t_started = time.perf_counter()          # the search clock started before this
    assert got.wait(30)                      # pondering has produced an iteration
    time.sleep(0.2)
    n_before = len(infos)
    t_hit = time.perf_counter()
    s.ponderhit()
    ponder_ms = (t_hit - t_started) * 1000
    deadline = time.monotonic() + 60
    while len(infos) == n_before and time.monotonic() < deadline:   # an info after ponderhit
        time.sleep(0.01)
    s.stop()
    s.wait(10)
    after = infos[n_before:]
    assert after, "no info after ponderhit"
    for i in after:
        assert i["time"] >= int(ponder_ms)   # counted from the search start, not from ponderhit
        assert i["nps"] <= i["nodes"] * 1000 / max(int(ponder_ms), 1) + 1


def test_aspiration_fail_infos_carry_bounds():
    """A failed aspiration window gives an info with bound 'lower' (fail high) or 'upper'
    (fail low) in long searches, as Stockfish does; short searches print none. Tactical
    positions are searched until one fails a window (deterministic at fixed depth; the
    list is long so that a change of search still leaves some that fail)."""
    fens = ["rnb3nr/1p2k1p1/2pp3p/p3p3/1P2Nb2/5N2/P2PKP1P/R1BQ3R b - - 0 20"] + \
        [fen for fen, _ in read_epd("chess.epd")][:40]
    for fen in fens:
        pos = Position.from_fen(fen, "chess")
        s = Searcher(8)
        s.bound_info_after_ms = 0                  # as if the search had run long
        _, _, infos = run(pos, Limits(depth=7), s)
        bounded = [i for i in infos if i["bound"]]
        if bounded:
            break
    assert bounded and {i["bound"] for i in bounded} <= {"lower", "upper"}
    for i in bounded:
        p = pos.copy()
        for m in i["pv"]:
            p.push_uci(m)
    assert infos[-1]["bound"] is None and infos[-1]["depth"] == 7
    _, _, infos = run(pos, Limits(depth=7))    # default: only after 3 s
    assert not [i for i in infos if i["bound"]]
    from engine.protocol.uci import format_info
    line = format_info(bounded[0], pos)
    assert f"score cp {bounded[0]['score'][1]} {bounded[0]['bound']}bound nodes" in line or \
        f"score mate {bounded[0]['score'][1]} {bounded[0]['bound']}bound nodes" in line


def test_limits_reject_impossible_values():
    for kw in (dict(depth=-3), dict(depth=0), dict(mate=0), dict(movestogo=0), dict(nodes=-1),
               dict(wtime=-5), dict(movetime=-1), dict(depth=2.5), dict(depth="3"), dict(movetime=float("nan"))):
        with pytest.raises(ValueError):
            Limits(**kw)
    assert Limits(depth=1, wtime=0, movetime=10.5).depth == 1


def test_max_depth_matches_the_search_tables():
    from search import core as C
    from search.limits import MAX_DEPTH
    assert MAX_DEPTH == C.MAX_PLY - 2


def test_one_move_overhead_default():
    from search.timeman import MOVE_OVERHEAD_DEFAULT
    from engine.protocol.session import OVERHEAD_DEFAULT
    assert Searcher(1).move_overhead == OVERHEAD_DEFAULT == MOVE_OVERHEAD_DEFAULT
    assert allocate(Limits(movetime=1000), 0) == (None, 1000 - MOVE_OVERHEAD_DEFAULT)


def test_quiet_ordering_uses_counter_move_and_continuation_history():
    """Quiet moves are ordered killers, then the counter move of the opponent's last move,
    then by main + continuation history (one, two, four and six plies back)."""
    from search import movepick as P
    from search.eval import build_eval, WS_SIZE
    pos = Position.from_fen(None, "grand")
    ev = build_eval("grand")
    ws = np.zeros(WS_SIZE, dtype=np.int32)
    moves = np.zeros(512, dtype=np.int32)
    scores = np.zeros(512, dtype=np.int32)
    legal = pos.legal_moves()
    n = len(legal)
    moves[:n] = legal
    quiet = [m for m in legal if pos.board[(m >> L.MOVE_TO_SHIFT) & L.SQ_MASK] == 0]
    hist_h = np.zeros((32, L.NSQ), dtype=np.int32)
    cont = np.zeros((P.CMH_SIZE, P.CMH_SIZE), dtype=np.int16)
    k1, cm, liked = quiet[0], quiet[1], quiet[2]
    c1, c2 = 5, 7                                      # any two earlier moves' indices
    pc = int(pos.board[liked & L.SQ_MASK])
    idx = P._cmh_index(pc, (liked >> L.MOVE_TO_SHIFT) & L.SQ_MASK)
    cont[c2, idx] = 1000                               # our previous move made `liked` good
    capt = np.zeros((P.CMH_SIZE, 16), dtype=np.int16)
    P._score_moves(pos.board, pos.st, pos.vt, ws, moves, scores, 0, n, 0, k1, 0, hist_h, cont,
                   np.int64(c1), np.int64(c2), np.int64(-1), np.int64(-1), cm, capt)
    sc = {int(moves[i]): int(scores[i]) for i in range(n)}
    assert sc[k1] == P.ORD_KILLER1 and sc[cm] == P.ORD_COUNTER
    assert sc[liked] == P.CONT_SCALE * 1000
    others = [m for m in quiet[3:] if P._cmh_index(int(pos.board[m & L.SQ_MASK]),
                                                   (m >> L.MOVE_TO_SHIFT) & L.SQ_MASK) != idx]
    assert sc[k1] > sc[cm] > sc[liked] > max(sc[m] for m in others)   # (piece, target) pairs share a score
    # with no previous moves (root, null move: -1) continuation history counts nothing
    P._score_moves(pos.board, pos.st, pos.vt, ws, moves, scores, 0, n, 0, 0, 0, hist_h, cont,
                   np.int64(-1), np.int64(-1), np.int64(-1), np.int64(-1), 0, capt)
    assert all(int(scores[i]) == 0 for i in range(n) if int(moves[i]) in quiet)
    # our moves four and six plies back count too (rows c4, c6), each like the others
    cont[c2, idx] = 0
    cont[11, idx] = 300
    cont[13, idx] = 200
    P._score_moves(pos.board, pos.st, pos.vt, ws, moves, scores, 0, n, 0, 0, 0, hist_h, cont,
                   np.int64(c1), np.int64(c2), np.int64(11), np.int64(13), 0, capt)
    sc = {int(moves[i]): int(scores[i]) for i in range(n)}
    assert sc[liked] == P.CONT_SCALE * 500
    # the quiet band, at its extremes (every row and the main history at their bounds), stays
    # below the counter move and above the losing captures
    top = P.HIST_MAX + 4 * P.CONT_SCALE * P.CONT_MAX
    assert top < P.ORD_COUNTER and -top > P.ORD_BAD + (1 << 16)


def test_cutoff_updates_continuation_history_four_and_six_plies_back():
    """A quiet cutoff rewards the move in the continuation-history rows of the moves one, two,
    four and six plies up (Stockfish 12's update_continuation_histories) and punishes the quiet
    moves searched before it in the same four rows."""
    from search import core as C
    from search import movepick as P
    from search.params import defaults, search_arrays
    pos = Position.from_fen(None, "grand")
    legal = pos.legal_moves()
    quiet = [m for m in legal if pos.board[(m >> L.MOVE_TO_SHIFT) & L.SQ_MASK] == 0]

    def cidx(m):
        return P._cmh_index(int(pos.board[m & L.SQ_MASK]), (m >> L.MOVE_TO_SHIFT) & L.SQ_MASK)

    m = quiet[0]
    bad = next(q for q in quiet[1:] if cidx(q) != cidx(m))
    ss = C.ss_alloc()
    ply = 6
    rows = {1: 21, 2: 22, 3: 23, 4: 24, 5: 25, 6: 26}
    for back, r in rows.items():
        ss[ply - back]["cmh"] = r
    hist_h = np.zeros((32, L.NSQ), dtype=np.int32)
    cont = np.zeros((P.CMH_SIZE, P.CMH_SIZE), dtype=np.int16)
    counter = np.zeros(P.CMH_SIZE, dtype=np.int32)
    capt = np.zeros((P.CMH_SIZE, 16), dtype=np.int16)
    tried = np.zeros((C.SS_SIZE, C.TRIED_SIZE), dtype=np.int32)
    tried[ply, 0] = bad                                # a quiet move searched before the cutoff
    C._update_on_cutoff(pos.board, ss, hist_h, cont, counter, capt, tried, np.int64(ply), np.int64(1),
                        np.int64(0), np.int64(m), False, np.int64(4), np.int64(21), np.int64(22),
                        search_arrays(defaults()))
    got = {back: int(cont[r, cidx(m)]) for back, r in rows.items()}
    assert got[1] > 0 and got[1] == got[2] == got[4] == got[6]
    assert got[3] == 0 and got[5] == 0
    got = {back: int(cont[r, cidx(bad)]) for back, r in rows.items()}
    assert got[1] < 0 and got[1] == got[2] == got[4] == got[6]
    assert got[3] == 0 and got[5] == 0


def test_cutoffs_fill_counter_moves_and_continuation_history():
    pos = Position.from_fen(None, "grand")
    s = Searcher(8)
    run(pos, Limits(depth=6), s)
    assert np.count_nonzero(s.state.counter) > 0
    assert (s.state.cont > 0).any() and (s.state.cont < 0).any()   # rewarded and penalised quiets
    s.clear_hash()
    assert not s.state.cont.any() and not s.state.counter.any()


def test_capture_history_orders_captures_of_equal_value():
    """Two equal captures (a knight takes either of two loose pawns) are ordered by the capture
    history, in the main search and in quiescence; every good capture stays above the killers."""
    from search import movepick as P
    from search.eval import WS_SIZE
    pos = Position.from_fen("4k3/8/8/2p1p3/8/3N4/8/4K3 w - - 0 1", "chess")
    ws = np.zeros(WS_SIZE, dtype=np.int32)
    legal = pos.legal_moves()
    n = len(legal)
    moves = np.zeros(512, dtype=np.int32)
    scores = np.zeros(512, dtype=np.int32)
    caps = [m for m in legal if pos.board[(m >> L.MOVE_TO_SHIFT) & L.SQ_MASK] != 0]
    assert len(caps) == 2
    hist_h = np.zeros((32, L.NSQ), dtype=np.int32)
    cont = np.zeros((P.CMH_SIZE, P.CMH_SIZE), dtype=np.int16)
    capt = np.zeros((P.CMH_SIZE, 16), dtype=np.int16)

    def order(liked, sign):
        to = (liked >> L.MOVE_TO_SHIFT) & L.SQ_MASK
        capt[:] = 0
        capt[P._cmh_index(int(pos.board[liked & L.SQ_MASK]), to), L.PAWN] = sign * 4000
        moves[:n] = legal
        P._score_moves(pos.board, pos.st, pos.vt, ws, moves, scores, 0, n, 0, 0, 0, hist_h, cont,
                       np.int64(-1), np.int64(-1), np.int64(-1), np.int64(-1), 0, capt)
        main = {int(moves[i]): int(scores[i]) for i in range(n)}
        assert min(main[m] for m in caps) >= P.ORD_NOISY > P.ORD_KILLER1
        moves[:2] = caps
        P._score_noisy(pos.board, pos.vt, moves, scores, 0, 2, capt)
        q = {int(moves[i]): int(scores[i]) for i in range(2)}
        return main, q

    for liked in caps:
        other = caps[1] if liked == caps[0] else caps[0]
        for main, q in (order(liked, 1), order(other, -1)):
            assert main[liked] > main[other] and q[liked] > q[other]


def test_cutoffs_fill_the_capture_history():
    # a middlegame with captures for both sides (from the start position a depth-7 search meets
    # few captures, and whether one of them is ever penalised depends on the evaluation's weights)
    pos = Position.from_fen("r2q5r/2b1kc2n1/1ppppp1ppp/p1n2b4/6p3/3P3P2/N1P3PN2/PP2PPB1Pa/2BQKCA3/R2R6 b - - 1 5",
                            "grand")
    s = Searcher(8)
    run(pos, Limits(depth=7), s)
    assert (s.state.capt > 0).any() and (s.state.capt < 0).any()   # rewarded and penalised captures
    s.clear_hash()
    assert not s.state.capt.any()


def test_tt_score_refines_the_static_eval_by_its_bound():
    """Pruning judges by the TT score where its bound says it is a better guess than the static
    eval: a lower bound above it, an upper bound below it, an exact score either way."""
    from search.core import _tt_refined
    tt = tt_alloc(1)
    key = np.int64(0x1234567)
    assert _tt_refined(tt, np.int64(-1), np.int64(40), np.int64(3), np.int64(0)) == 40      # no TT slot
    cases = [(BOUND_LOWER, 90, 90), (BOUND_LOWER, -10, 40),                     # lower: only raises
             (BOUND_UPPER, -10, -10), (BOUND_UPPER, 90, 40),                    # upper: only lowers
             (BOUND_EXACT, 90, 90), (BOUND_EXACT, -10, -10)]
    for bound, score, want in cases:
        i = tt_store(tt, key, 0, score, 5, bound, 1, 40)
        assert _tt_refined(tt, np.int64(i), np.int64(40), np.int64(3), np.int64(0)) == want, (bound, score)


def test_singular_search_excludes_its_move_and_stores_nothing():
    """The singular-extension search of a node (step 9b) searches it without the TT move
    (``ss[ply].excluded``) and leaves no TT entry: its result is a bound on the other moves
    only, not the node's value."""
    from search import core as C
    from search.driver import SearchState
    from search.eval import build_eval
    pos = Position.from_fen("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", "chess")   # Rd8 mates
    mate = pos.parse_uci("d1d8")
    st = SearchState(1)
    ev = build_eval("chess")

    def iterate(skip):
        st.clear()
        st.info[:] = 0
        st.info[C.I_NODELIMIT] = 1 << 62
        st.info[C.I_MAXPLY] = C.MAX_PLY
        st.ss[:] = 0
        st.ss[0]["excluded"] = skip
        sc = st.iterate(pos, ev, -C.INF, C.INF, 4)
        return sc, int(st.pv[0, 0]), tt_probe(st.tt, pos.st[L.S_HASH])

    sc, best, ti = iterate(0)
    assert best == mate and sc > C.MATE_BOUND and ti >= 0
    sc, best, ti = iterate(mate)
    assert best != mate and sc < C.MATE_BOUND and ti < 0
    assert st.ss[0]["excluded"] == mate   # the caller restores it (search step 9b)


def test_search_stack_fields_are_filled_as_documented():
    """The per-ply search stack (search.core.SS_DTYPE) has the named fields, and an iteration
    fills them as its layout comment says: the root row holds the root's static eval, psq sums,
    check flag, move count and last move (with its continuation-history index); the killers of
    some ply are set after a search with quiet cutoffs; the fields for later work stay zero."""
    from search import core as C
    from search.driver import SearchState
    from search.eval import build_eval, evaluate, psq_sums, WS_SIZE
    names = {"static_eval", "current_move", "cmh", "psq_mg", "psq_eg", "excluded", "killer1", "killer2",
             "move_count", "in_check", "cut_node", "tt_pv", "stat_score"}
    assert names <= set(C.SS_DTYPE.names)
    for f in ("static_eval", "cmh", "psq_mg", "psq_eg"):
        assert C.SS_DTYPE[f] == np.int64, f      # the search's int64 arithmetic, unchanged
    assert C.SS_DTYPE.itemsize == 128            # two cache lines per ply
    assert C.SS_DTYPE.fields["mp_stage"][1] == 64    # the move picker's state in the second
    st = SearchState(1)
    assert len(st.ss) == C.SS_SIZE >= C.MAX_PLY + 2

    def iterate(pos, depth):
        ev = build_eval(pos.variant.name)
        st.clear()
        st.info[:] = 0
        st.ss[:] = 0
        st.info[C.I_NODELIMIT] = 1 << 62
        st.info[C.I_MAXPLY] = C.MAX_PLY
        st.iterate(pos, ev, -C.INF, C.INF, depth)
        return ev

    pos = Position.from_fen(None, "chess")
    ev = iterate(pos, 4)
    root = st.ss[0]
    want = int(evaluate(pos.board, pos.st, pos.vt, ev, np.zeros(WS_SIZE, np.int32)))
    assert int(root["static_eval"]) == want
    assert (int(root["psq_mg"]), int(root["psq_eg"])) == tuple(int(x) for x in psq_sums(pos.board, pos.st, pos.vt, ev))
    assert root["in_check"] == 0 and root["excluded"] == 0
    legal = pos.legal_moves()
    assert root["move_count"] == len(legal)      # full window at the root: every move is searched
    m = int(root["current_move"])
    assert m in legal
    to = (m >> L.MOVE_TO_SHIFT) & L.SQ_MASK
    assert root["cmh"] == C._cmh_index(int(pos.board[m & L.SQ_MASK]), to)
    assert (st.ss["killer1"][1:5] != 0).any()    # quiet cutoffs below the root
    k1, k2 = st.ss["killer1"], st.ss["killer2"]
    assert not ((k2 != 0) & (k1 == k2)).any()    # the second killer is the previous first
    for f in ("stat_score", "cut_node", "tt_pv"):
        assert not st.ss[f].any(), f             # declared, not yet used

    pos = Position.from_fen("4k3/8/8/8/8/8/4R3/4K3 b - - 0 1", "chess")   # Black in check
    iterate(pos, 2)
    assert st.ss[0]["in_check"] == 1 and st.ss[0]["static_eval"] == -C.INF


def test_pick_is_selection_with_the_first_best():
    """The move picker's order on scores with many ties equals plain selection sort that takes the
    first best and swaps it forward (the order the search, and so Bench, depends on)."""
    from search.movepick import _pick
    rng = np.random.default_rng(7)
    for trial in range(200):
        n = int(rng.integers(1, 90))
        scores = rng.integers(-3, 4, n).astype(np.int32) * (1 << int(rng.integers(0, 28)))
        moves = np.arange(100, 100 + n, dtype=np.int32)
        want_m, want_s = list(moves), list(scores)
        for i in range(n):
            b = max(range(i, n), key=lambda j: (want_s[j], -j))
            want_m[i], want_m[b] = want_m[b], want_m[i]
            want_s[i], want_s[b] = want_s[b], want_s[i]
        got = [int(_pick(moves, scores, i, n)) for i in range(n)]
        assert got == [int(x) for x in want_m], trial
        assert list(scores) == [int(x) for x in want_s], trial


@pytest.mark.parametrize("variant", ["grand", "knightrelay"])
def test_search_sync_is_the_threaded_search_in_the_calling_thread(variant, monkeypatch):
    """``search_sync`` (self-play data, tuning) gives the move and the info lines of ``start``/``wait``
    for node and depth limits, starting no thread; a clock limit still goes through the threads."""
    pos = Position.from_fen(None, variant)
    for i, m in enumerate(pos.legal_moves()[:3]):
        p = pos.copy()
        p.push(m)
        for lim in (Limits(nodes=3000 + 500 * i), Limits(depth=4)):
            a = Searcher(8)
            infos_a, done = [], []
            a.start(p, lim, infos_a.append, lambda b, pd: done.append((b, pd)))
            a.wait()
            b = Searcher(8)
            infos_b = []
            started = []
            real_start = threading.Thread.start
            monkeypatch.setattr(threading.Thread, "start", lambda self: (started.append(self.name), real_start(self)))
            got = b.search_sync(p, lim, infos_b.append)
            monkeypatch.setattr(threading.Thread, "start", real_start)
            assert started == []
            assert got == done[0]
            strip = lambda infos: [{k: v for k, v in d.items() if k not in ("time", "nps")} for d in infos]
            assert strip(infos_b) == strip(infos_a)
    s = Searcher(8)
    started = []
    real_start = threading.Thread.start
    monkeypatch.setattr(threading.Thread, "start", lambda self: (started.append(self.name), real_start(self)))
    best, _ = s.search_sync(pos, Limits(movetime=50))
    assert best in pos.legal_moves() and "cardinal-search" in started


def _clean_pv_reference(pos, pv):
    """The PV truncation as it was written first: a legal_moves() list per move, push() on a copy."""
    out = []
    p = pos.copy()
    for m in pv:
        if m == 0 or m not in p.legal_moves():
            break
        p.push(m)
        out.append(m)
    return out


@pytest.mark.parametrize("variant", VARIANTS)
def test_clean_pv_truncates_at_the_first_illegal_move(variant):
    """Searcher._clean_pv (one move generation per PV move into the position's buffer) keeps
    exactly the moves the legal_moves()-list version kept, and leaves the position untouched."""
    import random
    rng = random.Random(17)
    for pos in random_positions(variant, 12, seed=5):
        before = (pos.board.copy(), pos.st.copy(), pos.hist.copy(), pos.stack.copy(), list(pos.move_stack))
        line, p = [], pos.copy()
        for _ in range(rng.randint(0, 10)):
            lm = p.legal_moves()
            if not lm:
                break
            line.append(rng.choice(lm))
            p.push(line[-1])
        legal_here = pos.legal_moves()
        other = random_positions(variant, 1, seed=rng.randint(0, 10 ** 6))[0].legal_moves()
        cases = [line, line + [0], [0] + line, []]
        for k in range(len(line) + 1):   # a foreign move (often illegal here) at every place, and a junk int
            cases.append(line[:k] + [rng.choice(other)] + line[k:])
            cases.append(line[:k] + [123456789] + line[k:])
        if line:
            cases.append(line[:1] + line)   # the first move twice: illegal for the other side
        cases.append(legal_here[:1] * 3)
        for pv in cases:
            assert Searcher._clean_pv(pos, pv) == _clean_pv_reference(pos, pv), pv
        assert np.array_equal(pos.board, before[0]) and np.array_equal(pos.st, before[1])
        assert np.array_equal(pos.hist, before[2]) and np.array_equal(pos.stack, before[3])
        assert pos.move_stack == before[4]
