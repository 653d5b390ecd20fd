"""The move picker: the order in which :func:`search.core.search` tries the moves of a node, and
the move-ordering scores (after Stockfish's ``MovePicker``, src/movepick.cpp).

A node calls :func:`picker_init` once, then :func:`next_move` until it returns the move 0 (no
move left) or the node cuts off. The stages, as in Stockfish's main search:

* ``MP_TT``       the TT move, checked legal by :func:`picker_init` without generating
                  anything (``is_legal_move``); a node that cuts off on it never generates.
* ``MP_INIT_TT``  set once the TT move has been handed out (so "the stage is ``MP_INIT_TT``"
                  means "the move being searched is the TT move": the search's singular
                  extension tests it): generate every legal move, score them
                  (:func:`_score_moves`) and swap the TT move to the front, where the first pick
                  would put it; picking starts after it.
* ``MP_INIT``     the same without a TT move (none, or not legal here): picking starts at the front.
* ``MP_PICK``     hand out the rest by score, best first (:func:`_pick`, selection with the first
                  of equal bests).

The order is exactly the one a full generation would give: the TT move, then the others by
score. Score bands (``ORD_*``, higher first): the TT move; captures and promotions not losing
material (MVV-LVA plus the capture history); the two killers; the counter move; quiet moves by
main + continuation history; captures losing material (static exchange evaluation, below
``-SEE_MARGIN``) last. :func:`next_move` returns the move, its order score (the search reads the
band: LMR, SEE pruning) and its index in the ply's slice of the move buffer (the moves before it
were tried first: the history update on a cutoff punishes them).

Where the state lives: nothing is allocated per node. The moves and their scores are in the
ply's slices of the search's ``moves``/``scores`` buffers (``ply * MAX_MOVES`` on), the picker's
state in the ply's row of the search stack (``ss[ply]``, :data:`search.core.SS_DTYPE`): the
stage ``mp_stage``, the next index ``mp_cur`` and the end ``mp_end`` of the generated moves, the
TT move ``mp_tt_move`` and the counter move ``mp_counter_move`` (read at :func:`picker_init`:
a singular-extension search of the node, at the same ply, may change the counter-move table
before the moves are generated; it also overwrites the row, so the search saves and restores
the picker's state around it: :func:`picker_save`, :func:`picker_restore`). The killers and
histories are read when the moves are generated.

Quiescence orders its captures (all moves when in check) by :func:`_score_noisy` and picks
them with :func:`_pick`.

Speed: :func:`next_move` (once per move) and :func:`picker_init` (once per node) are inlined
into the search by numba (``inline='always'``), as the loop they replace was: a call passes
each array as several machine words, a dozen arrays per call. The generation stage
(:func:`_generate`, once per node that gets that far) stays a call.
"""
import numpy as np
from engine.rules.jit import njit, nowrap

from engine.rules.layout import MOVE_TO_SHIFT, MOVE_PROMO_SHIFT, SQ_MASK, MOVE_EP_BIT, NSQ, PAWN, EMPTY, V_SEE
from engine.rules.movegen import MAX_MOVES, GEN_ALL, gen_legal_checked, is_legal_move
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
CONT_SCALE = 32           # ordering: 2 x CONT_MAX x 32 = 2 x HIST_MAX, the weight of the main history
CAPT_DIV = 2              # capture history / 2 in the ordering: +-CONT_MAX/2 is ~5 pawns of victim
                          # value (x16), so it reorders captures of close value, not a queen after a pawn
CAPT_BASE = CONT_MAX // CAPT_DIV   # keeps every good capture's score at or above ORD_NOISY
ORD_BAD = -(1 << 22)      # losing captures (see _losing_capture) after every quiet move
SEE_MARGIN = 50           # an exchange losing less than half a pawn is an even trade (B for N), not a loss

# Stages (module docstring).
MP_TT = 0                 # hand out the TT move (legal)
MP_INIT_TT = 1            # the TT move was handed out: generate, score, TT move to the front, pick after it
MP_INIT = 2               # no TT move: generate, score, pick from the front
MP_PICK = 3               # pick by score


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
def _cont_score(cont, c1, c2, idx):
    """Continuation history of the move ``idx`` after the moves ``c1`` (one ply up) and ``c2``
    (two plies up); -1 means no such move (root, null move)."""
    v = 0
    if c1 >= 0:
        v += cont[nowrap(c1), nowrap(idx)]
    if c2 >= 0:
        v += cont[nowrap(c2), nowrap(idx)]
    return v


@njit(cache=True, nogil=True)
def _score_moves(board, st, vt, ws, moves, scores, n0, n, ttm, k1, k2, hist_h, cont, c1, c2, cm, capt):
    """The order scores of the moves ``moves[n0:n]`` of the main search (bands: module docstring):
    ``ttm`` the TT move, ``k1``/``k2`` the killers, ``cm`` the counter move, ``c1``/``c2`` the
    continuation-history rows of the moves one and two plies up (-1: none)."""
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
                                 + CONT_SCALE * _cont_score(cont, c1, c2, _cmh_index(pc, to)))


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


@njit(cache=True, nogil=True, inline='always')
def picker_init(board, st, vt, moves, ss, counter, ply, ttm, check):
    """Start the picker of the node at ``ply`` (side to move in check: ``check``) with the TT move
    ``ttm`` (0: none; any value: a stale or torn TT move that is not legal here is skipped).
    Reads the counter move of the opponent's last move now (module docstring)."""
    n0 = ply * MAX_MOVES
    c1 = ss[nowrap(ply - 1)].cmh if ply >= 1 else -1     # the opponent's last move
    ss[nowrap(ply)].mp_counter_move = counter[nowrap(c1)] if c1 >= 0 else 0
    ss[nowrap(ply)].mp_tt_move = ttm
    tt_first = ttm != 0 and is_legal_move(board, st, vt, ttm, check, moves, n0)
    ss[nowrap(ply)].mp_stage = MP_TT if tt_first else MP_INIT
    ss[nowrap(ply)].mp_cur = n0
    ss[nowrap(ply)].mp_end = n0


@njit(cache=True, nogil=True)
def _generate(board, st, vt, ws, moves, scores, ss, hist_h, cont, capt, ply):
    """Stages ``MP_INIT_TT``/``MP_INIT``: generate and score the node's legal moves, the TT move
    (if handed out already) to the front; on to ``MP_PICK``."""
    n0 = ply * MAX_MOVES
    check = ss[nowrap(ply)].in_check != 0
    n = gen_legal_checked(board, st, vt, moves, n0, np.int64(GEN_ALL), check)   # not a literal: one compiled copy
    cur = n0
    if n > n0:
        ttm = ss[nowrap(ply)].mp_tt_move
        c1 = ss[nowrap(ply - 1)].cmh if ply >= 1 else -1     # the opponent's last move
        c2 = ss[nowrap(ply - 2)].cmh if ply >= 2 else -1     # our own previous move
        _score_moves(board, st, vt, ws, moves, scores, n0, n, ttm, ss[nowrap(ply)].killer1,
                     ss[nowrap(ply)].killer2, hist_h, cont, c1, c2, ss[nowrap(ply)].mp_counter_move, capt)
        if ss[nowrap(ply)].mp_stage == MP_INIT_TT:
            # the TT move (already searched) goes to the front, where the first pick would put it
            for j in range(n0, n):
                if moves[nowrap(j)] == ttm:
                    moves[nowrap(j)] = moves[nowrap(n0)]
                    scores[nowrap(j)] = scores[nowrap(n0)]
                    moves[nowrap(n0)] = ttm
                    scores[nowrap(n0)] = ORD_TT
                    break
            cur = n0 + 1
    ss[nowrap(ply)].mp_stage = MP_PICK
    ss[nowrap(ply)].mp_cur = cur
    ss[nowrap(ply)].mp_end = n


@njit(cache=True, nogil=True, inline='always')
def next_move(board, st, vt, ws, moves, scores, ss, hist_h, cont, capt, ply):
    """The next move of the node at ``ply`` (after :func:`picker_init`): ``(move, order score,
    index)``, the index being its position in ``moves`` (the TT move: the slice's first);
    ``move`` 0 when every move has been handed out (:func:`picker_no_moves`: there was none)."""
    stage = ss[nowrap(ply)].mp_stage
    if stage == MP_TT:
        ss[nowrap(ply)].mp_stage = MP_INIT_TT
        return np.int64(ss[nowrap(ply)].mp_tt_move), np.int64(ORD_TT), ply * MAX_MOVES
    if stage != MP_PICK:
        _generate(board, st, vt, ws, moves, scores, ss, hist_h, cont, capt, ply)
    i = np.int64(ss[nowrap(ply)].mp_cur)
    if i >= ss[nowrap(ply)].mp_end:
        return np.int64(0), np.int64(0), i
    m = _pick(moves, scores, i, np.int64(ss[nowrap(ply)].mp_end))
    ss[nowrap(ply)].mp_cur = i + 1
    return np.int64(m), np.int64(scores[nowrap(i)]), i


@njit(cache=True, nogil=True, inline='always')
def picker_is_tt_move(ss, ply):
    """True while the move last handed out at ``ply`` is the TT move (stage ``MP_INIT_TT``)."""
    return ss[nowrap(ply)].mp_stage == MP_INIT_TT


@njit(cache=True, nogil=True, inline='always')
def picker_no_moves(ss, ply):
    """True if the picker at ``ply`` generated its moves and found none (mate or stalemate)."""
    return ss[nowrap(ply)].mp_stage == MP_PICK and ss[nowrap(ply)].mp_end == ply * MAX_MOVES


@njit(cache=True, nogil=True, inline='always')
def picker_save(ss, ply):
    """The picker state of ``ply`` (for :func:`picker_restore` after a search that reuses the row)."""
    r = ss[nowrap(ply)]
    return (np.int64(r.mp_stage), np.int64(r.mp_cur), np.int64(r.mp_end), np.int64(r.mp_tt_move),
            np.int64(r.mp_counter_move))


@njit(cache=True, nogil=True, inline='always')
def picker_restore(ss, ply, state):
    """Put back the picker state :func:`picker_save` returned."""
    stage, cur, end, ttm, cm = state
    ss[nowrap(ply)].mp_stage = stage
    ss[nowrap(ply)].mp_cur = cur
    ss[nowrap(ply)].mp_end = end
    ss[nowrap(ply)].mp_tt_move = ttm
    ss[nowrap(ply)].mp_counter_move = cm
