"""The alpha-beta search in numba: PVS negamax + quiescence, one call per iteration.

Entry point: :func:`search_root` (called by :mod:`search.driver` once per
depth and aspiration window). Nothing is allocated per node: every buffer is
passed in (see :class:`search.driver.SearchState`):

* ``moves``/``scores``  ``int32[MAX_PLY * MAX_MOVES]``   per-ply move and ordering-score slices
* ``pv``  ``int32[MAX_PLY, MAX_PLY]``, ``pvlen`` ``int32[MAX_PLY]``   triangular PV table
* ``killers`` ``int32[MAX_PLY, 2]``; ``hist_h`` ``int32[32, NSQ]`` history by piece code and target
* ``info`` ``int64[INFO_SIZE]`` counters/limits (I_* below); ``stop`` ``int64[1]`` shared stop flag
* ``excl`` ``int32[8]`` root moves excluded (MultiPV), ``ws`` ``int32[64]`` eval scratch

Scores: centipawns; ``MATE - ply`` is mate in ``ply`` plies from the root.
Stop: every 1024 nodes the search reads ``stop[0]`` and the node limit and, if
set/exceeded, raises ``info[I_ABORT]`` and unwinds; the driver discards the
unfinished iteration.
"""
import numpy as np
from numba import njit

from engine.layout import (U_MOVE, NSQ, KING, PAWN, KNIGHT, EMPTY, S_SIDE, S_HASH, S_PLY, S_HALFMOVE, S_COUNT,
                           V_FLAGS, VF_RELAY)
from engine.movegen import (MAX_MOVES, GEN_ALL, GEN_NOISY, gen_legal, make_move, unmake_move, make_null,
                            unmake_null, in_check, insufficient_material)
from .eval import evaluate, EV_PST_MG
from .tt import tt_probe, tt_store, BOUND_UPPER, BOUND_LOWER, BOUND_EXACT

MAX_PLY = 100            # deepest search ply (PV table and move buffers are sized by it)
MATE = 30000             # mate score at the root; mate scores are MATE - plies
MATE_BOUND = MATE - MAX_PLY
INF = 32000

I_NODES, I_NODELIMIT, I_SELDEPTH, I_ABORT, I_ROOTPLY, I_GEN, I_MAXPLY, I_NEXCL, I_ROOTDEPTH = range(9)
INFO_SIZE = 16

# Move-ordering score bands (higher first).
ORD_TT = 1 << 30          # the TT move before anything else
ORD_NOISY = 1 << 24       # captures (MVV-LVA) and promotions
ORD_KILLER1 = 1 << 23     # first killer: last quiet cutoff at this ply
ORD_KILLER2 = ORD_KILLER1 - 1
HIST_MAX = 1 << 20        # history values stay in [-HIST_MAX, HIST_MAX] (gravity update), below the killers

# Pruning constants (one-line reasons).
RFP_DEPTH = 6             # reverse futility only near the leaves, where the static eval is trusted
RFP_MARGIN = 90           # per ply of depth: a position this far above beta rarely falls below it
NULL_MIN_DEPTH = 3        # below this a null move search costs more than it saves
FUT_DEPTH = 2             # futility pruning of quiet moves at depth 1-2 only
FUT_MARGIN = 160          # per ply: a quiet move rarely gains more than ~1.5 pawns positionally
LMR_MIN_DEPTH = 3         # reductions need some depth left to be worth re-searching
LMR_MIN_MOVE = 3          # the first moves (TT, good captures, killers) are never reduced
DELTA_MARGIN = 200        # quiescence: a capture that cannot lift the score near alpha is skipped
LMP_DEPTH = 3             # late move pruning: at depth <= 3 quiet moves beyond LMP_BASE + d*d are skipped
LMP_BASE = 3              # (a move ordered that late almost never refutes at low depth)


def _lmr_table():
    # reduction = 0.75 + ln(depth) * ln(move number) / 2.25 (the Stockfish-family shape): later
    # moves and deeper nodes are reduced more, since ordering makes late moves rarely best
    t = np.zeros((64, 64), dtype=np.int8)
    for d in range(1, 64):
        for m in range(1, 64):
            t[d, m] = int(0.75 + np.log(d) * np.log(m) / 2.25)
    return t


LMR = _lmr_table()


@njit(cache=True, nogil=True)
def _piece_value(ev, code):
    """Middlegame material+PST-free value: the PST at a fixed middle square is close enough for MVV-LVA."""
    return ev[EV_PST_MG + (np.int64(code) & 15) * NSQ + 66]


@njit(cache=True, nogil=True)
def _score_moves(board, ev, moves, scores, n0, n, ttm, k1, k2, hist_h):
    for i in range(n0, n):
        m = moves[i]
        if m == ttm:
            scores[i] = ORD_TT
            continue
        to = (m >> 8) & 0xFF
        promo = (m >> 16) & 0xF
        victim = board[to]
        if (m >> 20) & 2:
            victim = PAWN
        if victim != EMPTY or promo != 0:
            v = 0
            if victim != EMPTY:
                v = _piece_value(ev, victim)
            if promo != 0:
                v += _piece_value(ev, promo) - 100
            a = board[m & 0xFF]
            scores[i] = ORD_NOISY + v * 16 - (_piece_value(ev, a) >> 4)
        elif m == k1:
            scores[i] = ORD_KILLER1
        elif m == k2:
            scores[i] = ORD_KILLER2
        else:
            scores[i] = hist_h[board[m & 0xFF], to]


@njit(cache=True, nogil=True)
def _pick(moves, scores, i, n):
    """Selection step: swap the best-scored move of [i, n) to i and return it."""
    b = i
    bs = scores[i]
    for j in range(i + 1, n):
        if scores[j] > bs:
            bs = scores[j]
            b = j
    if b != i:
        t = moves[i]
        moves[i] = moves[b]
        moves[b] = t
        scores[b] = scores[i]
        scores[i] = bs
    return moves[i]


@njit(cache=True, nogil=True)
def _history_update(hist_h, pc, to, bonus):
    # gravity: h += bonus - h*|bonus|/HIST_MAX keeps h within +-HIST_MAX
    h = hist_h[pc, to]
    ab = bonus if bonus >= 0 else -bonus
    hist_h[pc, to] = h + bonus - (h * ab) // HIST_MAX


@njit(cache=True, nogil=True)
def _is_draw(board, st, hist, vt, info, ply):
    """50-move rule, insufficient material, repetition (2-fold inside the search, 3-fold with game history)."""
    if st[S_HALFMOVE] >= 100:
        return True
    if insufficient_material(board, st, vt):
        return True
    gp = st[S_PLY]
    lo = gp - st[S_HALFMOVE]
    if lo < 0:
        lo = 0
    h = st[S_HASH]
    root = info[I_ROOTPLY]
    cnt = 0
    i = gp - 4
    while i >= lo:
        if hist[i] == h:
            if i >= root:
                return True
            cnt += 1
            if cnt >= 2:
                return True
        i -= 2
    return False


@njit(cache=True, nogil=True)
def _tick(info, stop):
    """Count a node; every 1024 nodes poll the stop flag and node limit. True if aborting."""
    info[I_NODES] += 1
    if (info[I_NODES] & 1023) == 0:
        if stop[0] != 0 or info[I_NODES] >= info[I_NODELIMIT]:
            info[I_ABORT] = 1
    return info[I_ABORT] != 0


@njit(cache=True, nogil=True)
def qsearch(board, st, stack, hist, vt, zob, ev, moves, scores, info, stop, ws, alpha, beta, ply):
    """Quiescence: stand pat, then captures and promotions (MVV-LVA); all evasions when in check."""
    if _tick(info, stop):
        return 0
    if ply > info[I_SELDEPTH]:
        info[I_SELDEPTH] = ply
    if _is_draw(board, st, hist, vt, info, ply):
        return 0
    # one call site each for evaluate and gen_legal keeps the compiled code (and compile time) small
    check = in_check(board, st, vt)
    stand = -INF
    if not check:
        stand = evaluate(board, st, vt, ev, ws)
    if ply >= info[I_MAXPLY] - 1:
        return 0 if check else stand
    if not check:
        if stand >= beta:
            return stand
        if stand > alpha:
            alpha = stand
    best = stand
    n0 = ply * MAX_MOVES
    n = gen_legal(board, st, vt, moves, n0, GEN_ALL if check else GEN_NOISY)
    if check and n == n0:
        return -MATE + ply
    _score_noisy(board, ev, moves, scores, n0, n)
    for i in range(n0, n):
        m = _pick(moves, scores, i, n)
        if not check:
            to = (m >> 8) & 0xFF
            victim = board[to]
            if ((m >> 16) & 0xF) == 0 and victim != EMPTY and \
                    stand + _piece_value(ev, victim) + DELTA_MARGIN <= alpha:
                continue
        make_move(board, st, stack, hist, vt, zob, m)
        sc = -qsearch(board, st, stack, hist, vt, zob, ev, moves, scores, info, stop, ws, -beta, -alpha, ply + 1)
        unmake_move(board, st, stack, vt)
        if info[I_ABORT] != 0:
            return 0
        if sc > best:
            best = sc
            if sc > alpha:
                alpha = sc
                if sc >= beta:
                    return sc
    return best


@njit(cache=True, nogil=True)
def _score_noisy(board, ev, moves, scores, n0, n):
    for i in range(n0, n):
        m = moves[i]
        victim = board[(m >> 8) & 0xFF]
        promo = (m >> 16) & 0xF
        v = 0
        if victim != EMPTY:
            v = _piece_value(ev, victim)
        elif (m >> 20) & 2:
            v = _piece_value(ev, np.int64(PAWN))
        if promo != 0:
            v += _piece_value(ev, promo)
        scores[i] = v * 16 - (_piece_value(ev, board[m & 0xFF]) >> 4)


@njit(cache=True, nogil=True)
def _has_null_material(st, vt, us):
    """Null-move guard: the side owns a piece beyond king and pawns (and, in knightrelay, beyond knights,
    since knights-only material is zugzwang-prone: knights cannot capture)."""
    c = us << 4
    s = st[S_COUNT + (3 | c)] + st[S_COUNT + (4 | c)] + st[S_COUNT + (5 | c)] \
        + st[S_COUNT + (7 | c)] + st[S_COUNT + (8 | c)]
    if (vt[V_FLAGS] & VF_RELAY) == 0:
        s += st[S_COUNT + (KNIGHT | c)]
    return s > 0


@njit(cache=True, nogil=True)
def search(board, st, stack, hist, vt, zob, tt, ev, moves, scores, pv, pvlen, killers, hist_h,
           info, stop, excl, ws, alpha, beta, depth, ply):
    """Negamax PVS node. Returns the score (meaningless if ``info[I_ABORT]``).

    All integer arguments are int64 and never compile-time literals (callers pass
    variables): a literal would make numba compile, and cache, extra recursive
    specialisations, which crashed on reload from the cache."""
    pvlen[ply] = ply
    if depth <= 0:
        return qsearch(board, st, stack, hist, vt, zob, ev, moves, scores, info, stop, ws, alpha, beta, ply)
    if _tick(info, stop):
        return 0
    if ply > info[I_SELDEPTH]:
        info[I_SELDEPTH] = ply
    pv_node = beta - alpha > 1
    root = ply == 0
    key = st[S_HASH]
    # Step 1. Draws by rule and mate-distance pruning (not at the root: the root must return a move)
    if not root:
        if _is_draw(board, st, hist, vt, info, ply):
            return 0
        if ply >= info[I_MAXPLY] - 1:
            return qsearch(board, st, stack, hist, vt, zob, ev, moves, scores, info, stop, ws, alpha, beta, ply)
        a = -MATE + ply
        if a > alpha:
            alpha = a
        b = MATE - ply - 1
        if b < beta:
            beta = b
        if alpha >= beta:
            return alpha
    # Step 2. Transposition table probe (cutoff in non-PV nodes)
    ttm = 0
    ti = tt_probe(tt, key)
    if ti >= 0:
        ttm = tt[ti].move
        if not pv_node and tt[ti].depth >= depth:
            s = np.int64(tt[ti].score)
            if s > MATE_BOUND:
                s -= ply
            elif s < -MATE_BOUND:
                s += ply
            bnd = tt[ti].flag & 3
            if bnd == BOUND_EXACT or (bnd == BOUND_LOWER and s >= beta) or (bnd == BOUND_UPPER and s <= alpha):
                return s
    check = in_check(board, st, vt)
    us = st[S_SIDE]
    # Step 3. Static evaluation
    static = -INF
    if not check:
        static = evaluate(board, st, vt, ev, ws)
    # Step 4. Reverse futility pruning: far above beta near the leaves
    if not pv_node and not check and depth <= RFP_DEPTH and static - RFP_MARGIN * depth >= beta \
            and beta > -MATE_BOUND and beta < MATE_BOUND:
        return static
    # Step 5. Null move search: give the opponent a free move; if we still beat beta, cut
    null_ok = stack[st[S_PLY] - 1, U_MOVE] != 0 if st[S_PLY] > 0 else True   # no two null moves in a row
    if not pv_node and not check and null_ok and depth >= NULL_MIN_DEPTH and static >= beta \
            and beta < MATE_BOUND and _has_null_material(st, vt, us):
        r = 3 + depth // 4
        make_null(st, stack, hist, zob)
        sc = -search(board, st, stack, hist, vt, zob, tt, ev, moves, scores, pv, pvlen, killers, hist_h,
                     info, stop, excl, ws, -beta, -beta + 1, depth - 1 - r, ply + 1)
        unmake_null(st, stack)
        if info[I_ABORT] != 0:
            return 0
        if sc >= beta:
            return beta
    # Step 6. Generate and order moves
    n0 = ply * MAX_MOVES
    n = gen_legal(board, st, vt, moves, n0, GEN_ALL)
    if n == n0:
        return -MATE + ply if check else 0
    _score_moves(board, ev, moves, scores, n0, n, ttm, killers[ply, 0], killers[ply, 1], hist_h)
    futile = (not pv_node and not check and depth <= FUT_DEPTH and alpha > -MATE_BOUND
              and static + FUT_MARGIN * depth <= alpha)
    best = -INF
    bestm = 0
    orig_alpha = alpha
    searched = 0
    # Step 7. Loop over moves
    for i in range(n0, n):
        m = _pick(moves, scores, i, n)
        if root:
            skip = False
            for j in range(info[I_NEXCL]):
                if excl[j] == m:
                    skip = True
            if skip:
                continue
        to = (m >> 8) & 0xFF
        noisy = board[to] != EMPTY or ((m >> 16) & 0xF) != 0 or ((m >> 20) & 2) != 0
        pc = board[m & 0xFF]
        make_move(board, st, stack, hist, vt, zob, m)
        gives = in_check(board, st, vt)
        # Step 8. Futility pruning and late move pruning of quiet moves that do not check
        if searched > 0 and not noisy and not gives and not check and not pv_node and (
                futile or (depth <= LMP_DEPTH and searched >= LMP_BASE + depth * depth
                           and best > -MATE_BOUND)):
            unmake_move(board, st, stack, vt)
            continue
        # Step 9. Check extension (only within twice the root depth: endless checking lines stay bounded)
        ext = 1 if gives and ply < 2 * info[I_ROOTDEPTH] else 0
        nd = depth - 1 + ext
        if searched == 0:
            sc = -search(board, st, stack, hist, vt, zob, tt, ev, moves, scores, pv, pvlen, killers, hist_h,
                         info, stop, excl, ws, -beta, -alpha, nd, ply + 1)
        else:
            # Step 10. Late move reductions for quiet moves
            r = 0
            if depth >= LMR_MIN_DEPTH and searched >= LMR_MIN_MOVE and not noisy and not gives and not check:
                r = np.int64(LMR[min(depth, 63), min(searched, 63)])
                if pv_node:
                    r -= 1      # PV nodes are searched more carefully
                if scores[i] > HIST_MAX // 4:
                    r -= 1      # a quiet move with good history is likely to matter
                if r < 0:
                    r = 0
                if r > nd - 1:
                    r = nd - 1  # never reduce straight into quiescence from here
            sc = -search(board, st, stack, hist, vt, zob, tt, ev, moves, scores, pv, pvlen, killers, hist_h,
                         info, stop, excl, ws, -alpha - 1, -alpha, nd - r, ply + 1)
            if sc > alpha and r > 0:
                sc = -search(board, st, stack, hist, vt, zob, tt, ev, moves, scores, pv, pvlen, killers, hist_h,
                             info, stop, excl, ws, -alpha - 1, -alpha, nd, ply + 1)
            # Step 11. PVS re-search with the full window
            if sc > alpha and sc < beta:
                sc = -search(board, st, stack, hist, vt, zob, tt, ev, moves, scores, pv, pvlen, killers, hist_h,
                             info, stop, excl, ws, -beta, -alpha, nd, ply + 1)
        unmake_move(board, st, stack, vt)
        if info[I_ABORT] != 0:
            return 0
        searched += 1
        if sc > best:
            best = sc
            bestm = m
            if sc > alpha:
                alpha = sc
                # update the PV
                pv[ply, ply] = m
                for j in range(ply + 1, pvlen[ply + 1]):
                    pv[ply, j] = pv[ply + 1, j]
                pvlen[ply] = pvlen[ply + 1] if pvlen[ply + 1] > ply + 1 else ply + 1
                if sc >= beta:
                    # Step 12. Killers and history on a quiet cutoff
                    if not noisy:
                        if killers[ply, 0] != m:
                            killers[ply, 1] = killers[ply, 0]
                            killers[ply, 0] = m
                        bonus = depth * depth * 32
                        _history_update(hist_h, pc, to, bonus)
                        for j in range(n0, i):
                            q = moves[j]
                            qto = (q >> 8) & 0xFF
                            if board[qto] == EMPTY and ((q >> 16) & 0xF) == 0 and ((q >> 20) & 2) == 0:
                                _history_update(hist_h, board[q & 0xFF], qto, -bonus)
                    break
    if searched == 0:
        # every move was excluded (root) or futility-pruned: fail low with the static bound
        if root:
            return -INF
        return alpha
    # Step 13. Store in the transposition table
    if not (root and info[I_NEXCL] > 0):
        if best >= beta:
            bnd = BOUND_LOWER
        elif best > orig_alpha:
            bnd = BOUND_EXACT
        else:
            bnd = BOUND_UPPER
            bestm = ttm   # after a fail low the best move is noise; keep the old TT move
        s = best
        if s > MATE_BOUND:
            s += ply
        elif s < -MATE_BOUND:
            s -= ply
        tt_store(tt, key, bestm, s, depth, bnd, info[I_GEN])
    return best


@njit(cache=True, nogil=True)
def search_root(board, st, stack, hist, vt, zob, tt, ev, moves, scores, pv, pvlen, killers, hist_h,
                info, stop, excl, ws, alpha, beta, depth):
    """One iteration at ``depth`` with window (alpha, beta); PV in ``pv[0, :pvlen[0]]``."""
    info[I_ABORT] = 0
    info[I_ROOTPLY] = st[S_PLY]
    info[I_ROOTDEPTH] = depth
    return search(board, st, stack, hist, vt, zob, tt, ev, moves, scores, pv, pvlen, killers, hist_h,
                  info, stop, excl, ws, alpha, beta, depth, np.int64(0))


# ---------------------------------------------------------------- numba cache hygiene
def _flush_stale_cache():
    """Numba's cache keys a function by its own source file only, but a cached caller embeds
    the compiled code of its callees (movegen, eval, tt). So when any of those sources
    changes, every cached search function is flushed and recompiled once. The digest of
    the sources is kept in ``<cache dir>/search_deps.stamp``."""
    import hashlib
    import os
    import engine.layout as _layout
    import engine.movegen as _movegen
    from . import eval as _eval, tt as _tt
    h = hashlib.sha1()
    for mod in (_layout, _movegen, _eval, _tt):
        with open(mod.__file__, "rb") as f:
            h.update(f.read())
    with open(__file__, "rb") as f:
        h.update(f.read())
    digest = h.hexdigest()
    funcs = [search_root, search, qsearch, _score_moves, _score_noisy, _pick, _history_update, _is_draw,
             _tick, _has_null_material, _piece_value, evaluate, tt_probe, tt_store]
    try:
        path = search_root._cache._cache_path
        stamp = os.path.join(path, "search_deps.stamp")
        old = None
        if os.path.exists(stamp):
            with open(stamp) as f:
                old = f.read().strip()
        if old != digest:
            for fn in funcs:
                fn._cache.flush()
            os.makedirs(path, exist_ok=True)
            with open(stamp, "w") as f:
                f.write(digest)
    except (AttributeError, OSError):
        pass  # caching unavailable (read-only install): numba compiles in memory


_flush_stale_cache()
