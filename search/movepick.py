"""The move picker: the order in which :func:`search.core.search` and :func:`search.core.qsearch`
try the moves of a node, and the move-ordering scores (Stockfish's ``MovePicker``,
src/movepick.cpp, with its stages).

A main-search node calls :func:`picker_init` once, then :func:`next_move` until it returns the
move 0 (no move left) or the node cuts off. The stages, out of check:

* ``MP_TT``          the TT move, checked legal by :func:`picker_init` without generating anything
                     (``is_legal_move``); a node that cuts off on it never generates.
* ``MP_CAPT_INIT``   generate the pseudo-legal captures and promotions (``GEN_NOISY``; each is tested
                     legal as it is handed out, ``movegen.legal``, with the node's pins computed
                     here), the TT move left
                     out, and score them: MVV-LVA plus the capture history (:func:`_capture_score`).
                     (While the TT move is being searched the stage is still this one: the search's
                     singular extension tests it, :func:`picker_is_tt_move`.)
* ``MP_GOOD_CAPT``   hand them out best first (:func:`_pick_stable`, the first generated of equal bests);
                     the static exchange evaluation is computed when a capture is picked, once: one
                     losing more than ``SEE_MARGIN`` is put aside with the bad captures.
* ``MP_REFUT``       the two killers and the counter move, each if it is a legal quiet move here
                     (``is_legal_move``, no generation) other than the TT move, duplicates once.
* ``MP_QUIET_INIT``  generate the pseudo-legal quiet moves (``GEN_QUIET``) only now, the TT move and the
                     refutations left out; score them by main + continuation history and sort those
                     above a depth-dependent limit (:func:`_partial_sort`, Stockfish's
                     ``partial_insertion_sort(-3000 * depth)``). Skipped with ``skip_quiets``.
* ``MP_QUIET``       hand them out in that order (until ``skip_quiets``, if the caller sets it).
* ``MP_BAD_CAPT``    the losing captures, in the order they were put aside (best score first).

In check (``MP_EV_TT``, ``MP_EV_INIT``, ``MP_EVASION``): the TT move, then every legal evasion
generated and scored at once (:func:`_score_moves`, with the same bands) and picked best first.
Quiescence (:func:`qpicker_init`, :func:`next_qmove`: ``MP_QS_INIT``, ``MP_QS``): its captures and
promotions (every evasion in check) generated at the first call, scored by :func:`_score_noisy`
and picked best first; quiescence skips the losing ones itself, after its cheaper delta test.

:func:`next_move` returns the move and its order score; the score's band tells the search the
stage (LMR, move-count and SEE pruning; higher first): ``ORD_TT`` the TT move; ``ORD_NOISY <= s
< ORD_TT`` a good capture or promotion; ``ORD_KILLER1``, ``ORD_KILLER2``, ``ORD_COUNTER`` the
refutations; a quiet move's history score (within +-3 ``HIST_MAX``); ``ORD_BAD + ...`` a losing
capture. The search remembers the moves it has searched itself (``search.core``'s ``tried``):
with stages they are no longer a prefix of the move list.

Where the state lives: nothing is allocated per node. The moves and their scores are in the
ply's slices of the search's ``moves``/``scores`` buffers (``ply * MAX_MOVES`` on: the captures
first, the losing ones moved to the front as they are found, then the quiets; ``is_legal_move``
uses the space after the captures as scratch before the quiets are generated), the picker's
state in the ply's row of the search stack (``ss[ply]``, :data:`search.core.SS_DTYPE`: ``mp_*``
fields). The counter move is read at :func:`picker_init` (a singular-extension search of the
node, at the same ply, may change the counter-move table; it also overwrites the row, so the
search saves and restores the picker's state around it: :func:`picker_save`,
:func:`picker_restore`); the killers when the refutation stage starts, the histories when the
moves are scored.

Speed: :func:`next_move` (once per move) and :func:`picker_init` (once per node) are inlined into
the search by numba (``inline='always'``); the stage machine (:func:`_next_stage`) and the
generation stages are calls.
"""
import numpy as np
from engine.rules.jit import njit, nowrap

from engine.rules.layout import (MOVE_TO_SHIFT, MOVE_PROMO_SHIFT, MOVE_PROMO_BITS, SQ_MASK, MOVE_EP_BIT, NSQ, PAWN,
                                 EMPTY, V_SEE, S_SIDE, S_KSQ)
from engine.rules.movegen import (MAX_MOVES, GEN_ALL, GEN_NOISY, GEN_QUIET, gen_pseudo, filter_legal, legal,
                                  pinned_pieces, is_legal_move)
from engine.rules.see import see_ge

# Move-ordering score bands (higher first).
ORD_TT = 1 << 30          # the TT move before anything else
ORD_NOISY = 1 << 24       # captures (MVV-LVA) and promotions
ORD_KILLER1 = 1 << 23     # first killer: last quiet cutoff at this ply
ORD_KILLER2 = ORD_KILLER1 - 1
ORD_COUNTER = ORD_KILLER1 - 2  # the counter move of the opponent's last move, after the killers
HIST_MAX = 1 << 20        # history values stay in [-HIST_MAX, HIST_MAX] (gravity update), below the killers
CMH_SIZE = 16 * NSQ       # continuation history rows/columns: 16 piece codes x NSQ squares
CONT_MAX = 1 << 14        # continuation history stays in [-CONT_MAX, CONT_MAX] (int16, gravity update)
CONT_SCALE = 32           # ordering: 4 rows x CONT_MAX x 32 = 2 x HIST_MAX; with the main history below the killers
CAPT_DIV = 2              # capture history / 2 in the ordering: +-CONT_MAX/2 is ~5 pawns of victim
                          # value (x16), so it reorders captures of close value, not a queen after a pawn
CAPT_BASE = CONT_MAX // CAPT_DIV   # keeps every good capture's score at or above ORD_NOISY
ORD_BAD = -(1 << 22)      # losing captures (see _losing_capture) after every quiet move
SEE_MARGIN = 50           # an exchange losing less than half a pawn is an even trade (B for N), not a loss

QUIET_SORT_DEPTH = HIST_MAX // 4   # quiets are sorted down to -depth x this; the rest stay in generation
                          # order (Stockfish's partial_insertion_sort limit -3000 * depth, scaled from its
                          # 10692 main-history bound to HIST_MAX: about a quarter of the range per ply)
TRIED_QUIETS = 64         # the quiet moves and captures a node remembers having searched (Stockfish's
TRIED_CAPTS = 32          # quietsSearched[64] / capturesSearched[32]): the cutoff's history update punishes them
TRIED_SIZE = TRIED_QUIETS + TRIED_CAPTS

# Stages (module docstring). The main search out of check: MP_TT, MP_CAPT_INIT, MP_GOOD_CAPT,
# MP_REFUT, MP_QUIET_INIT, MP_QUIET, MP_BAD_CAPT; in check: MP_EV_TT, MP_EV_INIT, MP_EVASION;
# quiescence: MP_QS_INIT, MP_QS. MP_DONE: every move handed out.
(MP_TT, MP_CAPT_INIT, MP_GOOD_CAPT, MP_REFUT, MP_QUIET_INIT, MP_QUIET, MP_BAD_CAPT,
 MP_EV_TT, MP_EV_INIT, MP_EVASION, MP_QS_INIT, MP_QS, MP_DONE) = range(13)


@njit(cache=True, nogil=True)
def _piece_value(vt, code):
    """The fixed exchange value of piece ``code``'s type (the variant table's ``V_SEE``, declared
    with the variant record: a refit of the evaluation never reorders the captures)."""
    return vt[V_SEE + (np.int64(code) & 15)]


@njit(cache=True, nogil=True)
def _see_ge(board, st, vt, ws, m, threshold):
    """Static exchange evaluation of ``m`` (side to move, before the move) at least ``threshold``
    centipawns (:func:`engine.rules.see.see_ge`, relay-aware, on the fixed ``V_SEE`` values;
    ``ws`` is its scratch)."""
    return see_ge(board, st, vt, m, threshold, ws)


@njit(cache=True, nogil=True)
def _losing_capture(board, st, vt, ws, m):
    """True if the capture ``m`` loses more than ``SEE_MARGIN`` in the exchange on its target."""
    return not _see_ge(board, st, vt, ws, m, np.int64(-SEE_MARGIN))


@njit(cache=True, nogil=True)
def _cmh_index(pc, to):
    """Row/column of the continuation history for piece code ``pc`` (white 1..8, black 17..24)
    moving to ``to``: ``(colour * 8 + type - 1) * NSQ + to``."""
    return ((((pc >> 4) << 3) | ((pc & 15) - 1)) * NSQ) + to


@njit(cache=True, nogil=True)
def _cont_score(cont, c1, c2, c4, c6, idx):
    """Continuation history of the move ``idx`` after the moves ``c1``, ``c2``, ``c4``, ``c6``
    (one, two, four and six plies up: Stockfish 13's quiet-move score); -1 means no such move
    (root, null move)."""
    v = 0
    for c in (c1, c2, c4, c6):
        if c >= 0:
            v += cont[nowrap(c), nowrap(idx)]
    return v


@njit(cache=True, nogil=True)
def _score_moves(board, st, vt, ws, moves, scores, n0, n, ttm, k1, k2, hist_h, cont, c1, c2, c4, c6, cm, capt):
    """The order scores of the moves ``moves[n0:n]`` of the main search (bands: module docstring):
    ``ttm`` the TT move, ``k1``/``k2`` the killers, ``cm`` the counter move, ``c1``, ``c2``,
    ``c4``, ``c6`` the continuation-history rows of the moves one, two, four and six plies up
    (-1: none)."""
    for i in range(n0, n):
        m = moves[nowrap(i)]
        if m == ttm:
            scores[nowrap(i)] = ORD_TT
            continue
        to = (m >> MOVE_TO_SHIFT) & SQ_MASK
        promo = (m >> MOVE_PROMO_SHIFT) & 0xF
        victim = board[nowrap(to)]
        if m & MOVE_EP_BIT:
            victim = PAWN
        if victim != EMPTY or promo != 0:
            v = 0
            if victim != EMPTY:
                v = _piece_value(vt, victim)
            if promo != 0:
                v += _piece_value(vt, promo) - _piece_value(vt, PAWN)
            a = board[m & SQ_MASK]
            ch = capt[nowrap(_cmh_index(a, to)), victim & 15] // CAPT_DIV
            if victim != EMPTY and _losing_capture(board, st, vt, ws, m):
                scores[nowrap(i)] = ORD_BAD + v * 16 - (_piece_value(vt, a) >> 4) + ch
            else:
                scores[nowrap(i)] = ORD_NOISY + CAPT_BASE + v * 16 - (_piece_value(vt, a) >> 4) + ch
        elif m == k1:
            scores[nowrap(i)] = ORD_KILLER1
        elif m == k2:
            scores[nowrap(i)] = ORD_KILLER2
        elif m == cm:
            scores[nowrap(i)] = ORD_COUNTER
        else:
            pc = board[m & SQ_MASK]
            scores[nowrap(i)] = (hist_h[nowrap(pc), nowrap(to)]
                                 + CONT_SCALE * _cont_score(cont, c1, c2, c4, c6, _cmh_index(pc, to)))


@njit(cache=True, nogil=True)
def _score_noisy(board, vt, moves, scores, n0, n, capt):
    """Quiescence order: MVV-LVA plus the capture history (as :func:`_score_moves`)."""
    for i in range(n0, n):
        m = moves[nowrap(i)]
        to = (m >> MOVE_TO_SHIFT) & SQ_MASK
        victim = board[nowrap(to)]
        promo = (m >> MOVE_PROMO_SHIFT) & 0xF
        v = 0
        if victim != EMPTY:
            v = _piece_value(vt, victim)
        elif m & MOVE_EP_BIT:
            v = _piece_value(vt, np.int64(PAWN))
            victim = PAWN
        if promo != 0:
            v += _piece_value(vt, promo)
        a = board[m & SQ_MASK]
        scores[nowrap(i)] = (v * 16 - (_piece_value(vt, a) >> 4)
                             + capt[nowrap(_cmh_index(a, to)), victim & 15] // CAPT_DIV)


@njit(cache=True, nogil=True)
def _pick(moves, scores, i, n):
    """Selection step: swap the best-scored move of [i, n) to i and return it (the first of
    equal bests: the order depends on it). Two passes, the maximum (a reduction the compiler
    vectorises) and then its first position, cost less than one pass tracking both."""
    bs = scores[nowrap(i)]
    for j in range(i + 1, n):
        bs = max(bs, scores[nowrap(j)])
    b = i
    while scores[nowrap(b)] != bs:
        b += 1
    if b != i:
        t = moves[nowrap(i)]
        moves[nowrap(i)] = moves[nowrap(b)]
        moves[nowrap(b)] = t
        scores[nowrap(b)] = scores[nowrap(i)]
        scores[nowrap(i)] = bs
    return moves[nowrap(i)]


@njit(cache=True, nogil=True)
def _pick_stable(moves, scores, i, n):
    """:func:`_pick`, but the moves it passes over keep their order (the best one is rotated to
    ``i``, not swapped): the order it hands out, best score first and the first generated of
    equal bests, depends only on the moves themselves, so the legal moves of a pseudo-legal
    list come out as from the legal list (the captures stages and quiescence)."""
    bs = scores[nowrap(i)]
    for j in range(i + 1, n):
        bs = max(bs, scores[nowrap(j)])
    b = i
    while scores[nowrap(b)] != bs:
        b += 1
    if b != i:
        m = moves[nowrap(b)]
        for j in range(b, i, -1):
            moves[nowrap(j)] = moves[nowrap(j - 1)]
            scores[nowrap(j)] = scores[nowrap(j - 1)]
        moves[nowrap(i)] = m
        scores[nowrap(i)] = bs
    return moves[nowrap(i)]


@njit(cache=True, nogil=True)
def _is_noisy(board, m):
    """True if ``m`` captures (e.p. included) or promotes: a move of the captures stages."""
    return board[nowrap((m >> MOVE_TO_SHIFT) & SQ_MASK)] != EMPTY or (m & (MOVE_PROMO_BITS | MOVE_EP_BIT)) != 0


@njit(cache=True, nogil=True)
def _capture_score(board, vt, capt, m):
    """The order score of a capture or promotion within its band (MVV-LVA plus the capture
    history, as :func:`_score_moves`): victim value x 16 (a promotion adds the new piece's gain
    over the pawn), minus the capturer's value / 16, plus capture history / ``CAPT_DIV``."""
    to = (m >> MOVE_TO_SHIFT) & SQ_MASK
    promo = (m >> MOVE_PROMO_SHIFT) & 0xF
    victim = board[nowrap(to)]
    if m & MOVE_EP_BIT:
        victim = PAWN
    v = 0
    if victim != EMPTY:
        v = _piece_value(vt, victim)
    if promo != 0:
        v += _piece_value(vt, promo) - _piece_value(vt, PAWN)
    a = board[m & SQ_MASK]
    return v * 16 - (_piece_value(vt, a) >> 4) + capt[nowrap(_cmh_index(a, to)), victim & 15] // CAPT_DIV


@njit(cache=True, nogil=True)
def _partial_sort(moves, scores, b, e, limit):
    """Stockfish's ``partial_insertion_sort``: the moves of ``[b, e)`` scored at least ``limit``
    to the front, sorted by score (stable, best first); the rest after them unsorted (they are
    rarely reached). The first move counts as sorted whatever its score, as there. Unlike
    Stockfish's (which swaps a move of the rest out of the way), the rest keep their generation
    order: the order of any subset of the moves is then the same with or without the others in
    the list (the legal moves of a pseudo-legal list come out as from the legal list)."""
    se = b + 1              # the end of the sorted front
    for p in range(b + 1, e):
        s = scores[nowrap(p)]
        if s >= limit:
            m = moves[nowrap(p)]
            q = p
            # shift the unsorted moves [se, p) up by one, then the sorted ones scored below s
            while q > b and (q > se or scores[nowrap(q - 1)] < s):
                moves[nowrap(q)] = moves[nowrap(q - 1)]
                scores[nowrap(q)] = scores[nowrap(q - 1)]
                q -= 1
            moves[nowrap(q)] = m
            scores[nowrap(q)] = s
            se += 1


@njit(cache=True, nogil=True, inline='always')
def picker_init(ss, counter, ply, ttm, check, depth):
    """Start the picker of the main-search node at ``ply`` (side to move in check: ``check``,
    remaining ``depth``) with the TT move ``ttm`` (0: none; any value: a stale or torn TT move
    that is not legal here is dropped when its stage comes, before anything is handed out).
    Reads the counter move of the opponent's last move now (module docstring)."""
    n0 = ply * MAX_MOVES
    c1 = ss[nowrap(ply - 1)].cmh if ply >= 1 else -1     # the opponent's last move
    ss[nowrap(ply)].mp_counter_move = counter[nowrap(c1)] if c1 >= 0 else 0
    ss[nowrap(ply)].mp_tt_move = ttm if ttm > 0 else 0
    if check:
        ss[nowrap(ply)].mp_stage = MP_EV_TT if ttm > 0 else MP_EV_INIT
    else:
        ss[nowrap(ply)].mp_stage = MP_TT if ttm > 0 else MP_CAPT_INIT
    ss[nowrap(ply)].mp_cur = n0
    ss[nowrap(ply)].mp_end = n0
    ss[nowrap(ply)].mp_bad_end = n0
    ss[nowrap(ply)].mp_count = 0
    ss[nowrap(ply)].mp_sort_limit = -QUIET_SORT_DEPTH * min(depth, 64)


@njit(cache=True, nogil=True)
def _init_stage(board, st, vt, ws, moves, scores, ss, hist_h, cont, capt, ply, stage, check):
    """The generation stages, one function so that the generator has one call site here (numba
    compiles a callee into each caller). Generates the stage's moves, pseudo-legal out of check
    (their legality is tested as they are handed out, :func:`engine.rules.movegen.legal`, with the
    node's pins computed here once), legal in check; leaves out the moves handed out already,
    scores them and sets up the next stage:

    * ``MP_CAPT_INIT``: captures and promotions, scored by :func:`_capture_score` (no SEE yet:
      it is computed when a capture is picked); on to ``MP_GOOD_CAPT``.
    * ``MP_QUIET_INIT``: the quiet moves, after the captures, without the TT move and the
      refutations; scored by main + continuation history and sorted down to the depth's
      limit (:func:`_partial_sort`); on to ``MP_QUIET``.
    * ``MP_EV_INIT``: every legal evasion, scored by :func:`_score_moves`; on to ``MP_EVASION``.
    * ``MP_QS_INIT``: quiescence's captures and promotions (every legal move when ``check``),
      scored by :func:`_score_noisy`; on to ``MP_QS``."""
    n0 = ply * MAX_MOVES
    b = n0
    mode = GEN_NOISY
    if stage == MP_QUIET_INIT:
        b = np.int64(ss[nowrap(ply)].mp_end)
        mode = GEN_QUIET
    elif stage == MP_EV_INIT or (stage == MP_QS_INIT and check):
        mode = GEN_ALL
    n = gen_pseudo(board, st, vt, moves, b, np.int64(mode))
    if check:
        n = filter_legal(board, st, vt, moves, b, n, True)
    elif stage != MP_QUIET_INIT:        # the first generation of the node: its pins, once
        us = st[S_SIDE]
        k = st[nowrap(S_KSQ + us)]
        ss[nowrap(ply)].mp_pins = pinned_pieces(board, vt, k, us) if k != 0 else 0
    if stage == MP_QS_INIT:
        _score_noisy(board, vt, moves, scores, n0, n, capt)
        ss[nowrap(ply)].mp_cur = n0
        ss[nowrap(ply)].mp_end = n
        ss[nowrap(ply)].mp_stage = MP_QS
        return
    ttm = ss[nowrap(ply)].mp_tt_move
    k1 = ss[nowrap(ply)].mp_killer1
    k2 = ss[nowrap(ply)].mp_killer2
    cm = ss[nowrap(ply)].mp_counter_move
    c1 = ss[nowrap(ply - 1)].cmh if ply >= 1 else -1     # the opponent's last move
    c2 = ss[nowrap(ply - 2)].cmh if ply >= 2 else -1     # our own previous move
    c4 = ss[nowrap(ply - 4)].cmh if ply >= 4 else -1     # our moves two and three moves ago
    c6 = ss[nowrap(ply - 6)].cmh if ply >= 6 else -1
    quiet = stage == MP_QUIET_INIT
    j = b
    for i in range(b, n):
        m = moves[nowrap(i)]
        if m == ttm or (quiet and (m == k1 or m == k2 or m == cm)):
            continue
        if quiet and j == b and not legal(board, st, vt, m, ss[nowrap(ply)].mp_pins):
            continue            # the sort's first move (sorted whatever its score) is a legal one
        moves[nowrap(j)] = m
        if quiet:
            to = (m >> MOVE_TO_SHIFT) & SQ_MASK
            pc = board[m & SQ_MASK]
            scores[nowrap(j)] = hist_h[nowrap(pc), nowrap(to)] + CONT_SCALE * _cont_score(cont, c1, c2, c4, c6,
                                                                                          _cmh_index(pc, to))
        elif stage == MP_CAPT_INIT:
            scores[nowrap(j)] = _capture_score(board, vt, capt, m)
        j += 1
    if stage == MP_EV_INIT:
        _score_moves(board, st, vt, ws, moves, scores, n0, j, np.int64(0), ss[nowrap(ply)].killer1,
                     ss[nowrap(ply)].killer2, hist_h, cont, c1, c2, c4, c6, cm, capt)
    elif quiet:
        _partial_sort(moves, scores, b, j, np.int64(ss[nowrap(ply)].mp_sort_limit))
    ss[nowrap(ply)].mp_cur = b
    ss[nowrap(ply)].mp_end = j
    ss[nowrap(ply)].mp_stage = MP_GOOD_CAPT if stage == MP_CAPT_INIT else (MP_QUIET if quiet else MP_EVASION)


@njit(cache=True, nogil=True)
def _next_good_capture(board, st, vt, ws, moves, scores, ss, ply):
    """Stage ``MP_GOOD_CAPT``: the best-scored legal capture left that does not lose more than
    ``SEE_MARGIN`` (legality and SEE tested here, once per capture); the losing ones picked on
    the way go to the bad captures, kept in pick order at the front of the slice (Stockfish's
    ``endBadCaptures``). Returns ``(move, score)``, move 0 when none is left."""
    cur = np.int64(ss[nowrap(ply)].mp_cur)
    end = np.int64(ss[nowrap(ply)].mp_end)
    pins = ss[nowrap(ply)].mp_pins
    while cur < end:
        m = _pick_stable(moves, scores, cur, end)
        sc = scores[nowrap(cur)]
        cur += 1
        if not legal(board, st, vt, m, pins):
            continue                            # pseudo-legal only: dropped
        if board[nowrap((m >> MOVE_TO_SHIFT) & SQ_MASK)] != EMPTY and _losing_capture(board, st, vt, ws, m):
            b = ss[nowrap(ply)].mp_bad_end      # b < cur: over a move already picked
            moves[nowrap(b)] = m
            scores[nowrap(b)] = sc
            ss[nowrap(ply)].mp_bad_end = b + 1
            continue
        ss[nowrap(ply)].mp_cur = cur
        return np.int64(m), np.int64(sc)
    ss[nowrap(ply)].mp_cur = cur
    return np.int64(0), np.int64(0)


@njit(cache=True, nogil=True)
def _next_refutation(board, ss, ply):
    """Stage ``MP_REFUT``: the next candidate of the first killer, the second, then the counter
    move, each once, if it is a quiet move other than the TT move (its legality is tested by
    the caller). Returns ``(move, order score)``, move 0 when none is left."""
    i = ss[nowrap(ply)].mp_refut
    if i == 0:      # the killers the quiet stage will leave out, read once
        ss[nowrap(ply)].mp_killer1 = ss[nowrap(ply)].killer1
        ss[nowrap(ply)].mp_killer2 = ss[nowrap(ply)].killer2
    k1 = ss[nowrap(ply)].mp_killer1
    k2 = ss[nowrap(ply)].mp_killer2
    cm = ss[nowrap(ply)].mp_counter_move
    ttm = ss[nowrap(ply)].mp_tt_move
    while i < 3:
        i += 1
        if i == 1:
            m, band = k1, ORD_KILLER1
        elif i == 2:
            m, band = k2, ORD_KILLER2
            if m == k1:
                continue
        else:
            m, band = cm, ORD_COUNTER
            if m == k1 or m == k2:
                continue
        if m > 0 and m != ttm and not _is_noisy(board, m):
            ss[nowrap(ply)].mp_refut = i
            return np.int64(m), np.int64(band)
    ss[nowrap(ply)].mp_refut = i
    return np.int64(0), np.int64(0)


@njit(cache=True, nogil=True)
def _next_stage(board, st, vt, ws, moves, scores, ss, hist_h, cont, capt, ply, skip_quiets):
    """The stage machine of :func:`next_move`: runs the stages in order until one hands out a
    move. Returns ``(move, order score)``, move 0 once every stage is done. The TT move and the
    refutations are tested legal here, at one call site of ``is_legal_move``."""
    n0 = ply * MAX_MOVES
    while True:
        stage = ss[nowrap(ply)].mp_stage
        if stage == MP_TT or stage == MP_EV_TT or stage == MP_REFUT:
            if stage == MP_REFUT:
                m, band = _next_refutation(board, ss, ply)
                if m == 0:
                    ss[nowrap(ply)].mp_stage = MP_QUIET_INIT
                    continue
                scratch = np.int64(ss[nowrap(ply)].mp_end)      # after the captures: free until the quiets
            else:
                m, band = np.int64(ss[nowrap(ply)].mp_tt_move), np.int64(ORD_TT)
                ss[nowrap(ply)].mp_stage = stage + 1            # MP_CAPT_INIT / MP_EV_INIT
                scratch = n0
            if is_legal_move(board, st, vt, m, stage == MP_EV_TT, moves, scratch):
                return m, band
            if stage != MP_REFUT:
                ss[nowrap(ply)].mp_tt_move = 0                  # stale or torn: no TT move here
        elif stage == MP_CAPT_INIT or stage == MP_EV_INIT or (stage == MP_QUIET_INIT and not skip_quiets):
            _init_stage(board, st, vt, ws, moves, scores, ss, hist_h, cont, capt, ply, np.int64(stage),
                        stage == MP_EV_INIT)
        elif stage == MP_GOOD_CAPT:
            m, sc = _next_good_capture(board, st, vt, ws, moves, scores, ss, ply)
            if m != 0:
                return m, np.int64(ORD_NOISY + CAPT_BASE) + sc
            ss[nowrap(ply)].mp_refut = 0
            ss[nowrap(ply)].mp_stage = MP_REFUT
        elif stage == MP_QUIET_INIT or stage == MP_QUIET:
            i = ss[nowrap(ply)].mp_cur
            if stage == MP_QUIET and not skip_quiets and i < ss[nowrap(ply)].mp_end:
                ss[nowrap(ply)].mp_cur = i + 1
                m = np.int64(moves[nowrap(i)])
                if legal(board, st, vt, m, ss[nowrap(ply)].mp_pins):
                    return m, np.int64(scores[nowrap(i)])
                continue
            ss[nowrap(ply)].mp_stage = MP_BAD_CAPT
            ss[nowrap(ply)].mp_cur = n0
        elif stage == MP_BAD_CAPT:
            i = ss[nowrap(ply)].mp_cur
            if i < ss[nowrap(ply)].mp_bad_end:
                ss[nowrap(ply)].mp_cur = i + 1
                return np.int64(moves[nowrap(i)]), np.int64(ORD_BAD + scores[nowrap(i)])
            ss[nowrap(ply)].mp_stage = MP_DONE
        elif stage == MP_EVASION:
            i = np.int64(ss[nowrap(ply)].mp_cur)
            if i < ss[nowrap(ply)].mp_end:
                m = _pick(moves, scores, i, np.int64(ss[nowrap(ply)].mp_end))
                ss[nowrap(ply)].mp_cur = i + 1
                return np.int64(m), np.int64(scores[nowrap(i)])
            ss[nowrap(ply)].mp_stage = MP_DONE
        else:
            return np.int64(0), np.int64(0)


@njit(cache=True, nogil=True, inline='always')
def next_move(board, st, vt, ws, moves, scores, ss, hist_h, cont, capt, ply, skip_quiets):
    """The next move of the main-search node at ``ply`` (after :func:`picker_init`): ``(move,
    order score)``, move 0 when every move has been handed out (:func:`picker_no_moves`: there
    was none). ``skip_quiets`` (move-count pruning holds): the quiet moves not handed out yet
    are skipped, and not even generated if not yet reached."""
    m, sc = _next_stage(board, st, vt, ws, moves, scores, ss, hist_h, cont, capt, ply, skip_quiets)
    if m != 0:
        ss[nowrap(ply)].mp_count += 1
    return m, sc


@njit(cache=True, nogil=True, inline='always')
def qpicker_init(ss, ply):
    """Start the picker of the quiescence node at ``ply``."""
    ss[nowrap(ply)].mp_stage = MP_QS_INIT
    ss[nowrap(ply)].mp_count = 0


@njit(cache=True, nogil=True, inline='always')
def next_qmove(board, st, vt, ws, moves, scores, ss, hist_h, cont, capt, ply, check):
    """The next move of the quiescence node at ``ply`` (after :func:`qpicker_init`; side to move
    in check: ``check``): captures and promotions, every evasion when in check, generated at
    the first call, scored by :func:`_score_noisy` and picked best first. ``(move, score)``,
    move 0 when none is left."""
    if ss[nowrap(ply)].mp_stage == MP_QS_INIT:
        _init_stage(board, st, vt, ws, moves, scores, ss, hist_h, cont, capt, ply, np.int64(MP_QS_INIT), check)
    while True:
        i = np.int64(ss[nowrap(ply)].mp_cur)
        if i >= ss[nowrap(ply)].mp_end:
            ss[nowrap(ply)].mp_stage = MP_DONE
            return np.int64(0), np.int64(0)
        m = _pick_stable(moves, scores, i, np.int64(ss[nowrap(ply)].mp_end))
        ss[nowrap(ply)].mp_cur = i + 1
        if check or legal(board, st, vt, m, ss[nowrap(ply)].mp_pins):
            ss[nowrap(ply)].mp_count += 1
            return np.int64(m), np.int64(scores[nowrap(i)])


@njit(cache=True, nogil=True, inline='always')
def picker_is_tt_move(ss, ply):
    """True while the move last handed out at ``ply`` is the TT move: the stage after it (its
    successor has not run, as it would have before handing out any other move)."""
    stage = ss[nowrap(ply)].mp_stage
    return stage == MP_CAPT_INIT or stage == MP_EV_INIT


@njit(cache=True, nogil=True, inline='always')
def picker_no_moves(ss, ply):
    """True if the picker at ``ply`` ran through every stage and handed out no move: no legal
    move (mate or stalemate; quiescence: out of check, no capture either)."""
    return ss[nowrap(ply)].mp_stage == MP_DONE and ss[nowrap(ply)].mp_count == 0


@njit(cache=True, nogil=True, inline='always')
def picker_save(ss, ply):
    """The picker state of ``ply`` (for :func:`picker_restore` after a search that reuses the
    row: the singular-extension search, run right after the TT move, before any generation)."""
    r = ss[nowrap(ply)]
    return (np.int64(r.mp_stage), np.int64(r.mp_cur), np.int64(r.mp_end), np.int64(r.mp_tt_move),
            np.int64(r.mp_counter_move), np.int64(r.mp_bad_end), np.int64(r.mp_count),
            np.int64(r.mp_sort_limit), np.int64(r.mp_refut), np.int64(r.mp_killer1), np.int64(r.mp_killer2),
            np.int64(r.mp_pins))


@njit(cache=True, nogil=True, inline='always')
def picker_restore(ss, ply, state):
    """Put back the picker state :func:`picker_save` returned."""
    stage, cur, end, ttm, cm, bad_end, count, limit, refut, k1, k2, pins = state
    ss[nowrap(ply)].mp_stage = stage
    ss[nowrap(ply)].mp_cur = cur
    ss[nowrap(ply)].mp_end = end
    ss[nowrap(ply)].mp_tt_move = ttm
    ss[nowrap(ply)].mp_counter_move = cm
    ss[nowrap(ply)].mp_bad_end = bad_end
    ss[nowrap(ply)].mp_count = count
    ss[nowrap(ply)].mp_sort_limit = limit
    ss[nowrap(ply)].mp_refut = refut
    ss[nowrap(ply)].mp_killer1 = k1
    ss[nowrap(ply)].mp_killer2 = k2
    ss[nowrap(ply)].mp_pins = pins
