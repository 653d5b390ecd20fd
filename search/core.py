"""The alpha-beta search in numba: PVS negamax + quiescence, one call per iteration.

Entry point: :func:`search_root` (called by :mod:`search.driver` once per
depth and aspiration window). The order of a node's moves is the move picker's
(:mod:`search.movepick`, Stockfish's ``MovePicker``): :func:`search` starts it and
asks it for one move at a time (step 6). Nothing is allocated per node: every
buffer is passed in (see :class:`search.driver.SearchState`):

* ``moves``/``scores``  ``int32[MAX_PLY * MAX_MOVES]``   per-ply move and ordering-score slices (the picker's)
* ``pv``  ``int32[MAX_PLY, MAX_PLY]``, ``pvlen`` ``int32[MAX_PLY]``   triangular PV table
* ``ss`` ``SS_DTYPE[SS_SIZE]`` the search stack, one record per ply (static eval, psq sums, the move played,
  the singular-extension exclusion, killers, the move picker's state, ...: the fields are documented
  at ``SS_DTYPE``)
* ``hist_h`` ``int32[32, NSQ]`` history by piece code and target
* ``cont`` ``int16[CMH_SIZE, CMH_SIZE]`` continuation history: how often a quiet move (piece, target)
  refuted after a given move one or two plies earlier (Stockfish's ``continuationHistory``); rows
  and columns are :func:`search.movepick._cmh_index` values
* ``counter`` ``int32[CMH_SIZE]`` counter move: the last quiet move that refuted a given move
* ``capt`` ``int16[CMH_SIZE, 16]`` capture history: how often a capture (piece, target; column: the
  captured type, 0 for a promotion without capture) refuted, by ``_cmh_index`` rows (Stockfish's
  ``captureHistory``); it orders captures of similar value and is updated like ``cont``
* ``info`` ``int64[INFO_SIZE]`` counters and limits (I_* below); ``stop`` ``int64[3]`` shared by
  all threads of a search: ``stop[0]`` the stop flag, ``stop[1]`` a node limit on the sum over the threads (0:
  none), ``stop[2]`` the nodes counted towards it (each thread adds 1024 per poll)
* ``excl`` ``int32[8]`` root moves excluded (MultiPV), ``ws`` ``int32[WS_SIZE]`` eval scratch
* ``prm`` ``int64[N_PARAMS]`` the tunable search constants, read as ``prm[P_<NAME>]``
  (:mod:`search.params`: the names, defaults and ranges; new values need no recompile)
* ``net`` the NNUE network (a :data:`search.nnue.NnueNet`) and ``acc`` ``int16[SS_SIZE, 2, H]`` its
  accumulator stack, one row per ply (row ``ply``: the position at ``ply``), one stack per search
  thread. Used only while ``info[I_NNUE]`` is set (:data:`NNUE_OFF` otherwise: the driver then
  passes a one-unit dummy net, :func:`search.nnue.dummy_net`, and the search is exactly the
  linear-evaluation one). One compiled search serves both: the network sits behind a runtime
  branch in :func:`_make`, :func:`_null_carry` and :func:`_static_eval`.
* ``tried`` ``int32[SS_SIZE, TRIED_SIZE]`` per ply, the quiet moves (first ``TRIED_QUIETS``) and the
  captures (next ``TRIED_CAPTS``) the node has searched without a cutoff: a cutoff punishes them in
  the histories (Stockfish's ``quietsSearched``/``capturesSearched``)

Beyond the steps in :func:`search`: losing captures (static exchange evaluation,
:func:`search.movepick._losing_capture`) are ordered after the quiet moves and skipped in quiescence;
quiescence probes and stores the TT at draft 0; the TT caches the static eval (stored with the entry:
one probe and one store per node).

Scores: centipawns; ``MATE - ply`` is mate in ``ply`` plies from the root.
Stop: every 1024 nodes the search reads ``stop[0]`` and the node limits (its own, and the shared one on
the sum over the threads) and, if set/exceeded, raises ``info[I_ABORT]`` and unwinds; the driver discards the
unfinished iteration.
"""
from collections import namedtuple

import numpy as np
from engine.rules.jit import njit, nowrap

from engine.rules.layout import (field_offsets, NTYPES, MOVE_TO_SHIFT, MOVE_PROMO_SHIFT, SQ_MASK, MOVE_PROMO_BITS,
                                 MOVE_EP_BIT, U_MOVE, NSQ, KING, PAWN, KNIGHT, BISHOP, ROOK, QUEEN, MARSHAL, CARDINAL, EMPTY, S_SIDE, S_HASH, S_PLY, S_HALFMOVE, S_COUNT,
                           V_FLAGS, VF_RELAY)
from engine.rules.movegen import (MAX_MOVES, GEN_ALL, gen_legal_checked, make_move, unmake_move, make_null,
                            unmake_null, in_check, insufficient_material, is_attacked, repetition_floor)
from engine.rules.checks import gives_check
from .eval import evaluate_inc, psq_sums, psq_delta
from .nnue import acc_push, acc_copy, acc_refresh, nnue_evaluate
from .tt import tt_probe, tt_prefetch, tt_store, BOUND_UPPER, BOUND_LOWER, BOUND_EXACT, EVAL_NONE
from .movepick import (ORD_TT, ORD_NOISY, ORD_KILLER2, HIST_MAX, CONT_MAX, SEE_MARGIN, TRIED_QUIETS,
                       TRIED_CAPTS, _piece_value, _see_ge, _losing_capture, _cmh_index, picker_init, next_move,
                       qpicker_init, next_qmove, picker_is_tt_move, picker_no_moves, picker_save, picker_restore)
from .movepick import CMH_SIZE, TRIED_SIZE  # noqa: F401  (buffer sizes, for search.driver)
from .params import (P_RFP_DEPTH, P_RFP_MARGIN, P_NULL_MIN_DEPTH, P_NULL_R_BASE, P_NULL_R_DEPTH_DIV,
                     P_NULL_EVAL_DIV, P_NULL_EVAL_MAX, P_FUT_DEPTH, P_FUT_MARGIN, P_LMP_DEPTH, P_LMP_BASE,
                     P_SEE_QUIET_BASE, P_SEE_NOISY_MARGIN, P_SE_DEPTH, P_SE_TT_SLACK, P_SE_MARGIN,
                     P_IIR_DEPTH, P_LMR_MIN_DEPTH, P_LMR_MIN_MOVE, P_DELTA_MARGIN, P_HIST_BONUS, P_CONT_BONUS_MAX,
                     P_LMR_BASE, P_LMR_DIV)

# The buffers of one search, passed to every node as one argument (numba passes a namedtuple
# of arrays like separate arguments; shapes and dtypes in the module docstring).
SearchCtx = namedtuple("SearchCtx", "board st stack hist vt zob tt ev moves scores pv pvlen ss hist_h "
                                    "info stop excl ws cont counter capt tried prm net acc")

MAX_PLY = 100            # deepest search ply (PV table and move buffers are sized by it)
MATE = 30000             # mate score at the root; mate scores are MATE - plies
MATE_BOUND = MATE - MAX_PLY
INF = 32000

# info vector (int64[INFO_SIZE]): limits in, counters out (per-ply data live in the search stack, SS_DTYPE)
(I_NODES,        # nodes searched (out)
 I_NODELIMIT,    # abort when I_NODES reaches this (in)
 I_SELDEPTH,     # deepest ply reached (out)
 I_ABORT,        # 1 once the search is unwinding after a stop or the node limit (out)
 I_ROOTPLY,      # game ply of the root (set by search_root)
 I_GEN,          # TT generation of this search (in)
 I_MAXPLY,       # deepest ply allowed (in: MAX_PLY, or less when the game history is nearly full)
 I_NEXCL,        # number of excluded root moves in excl (in, MultiPV)
 I_ROOTDEPTH,    # depth of the current iteration (set by search_root)
 I_NNUE,         # the static evaluation: NNUE_OFF (linear) or NNUE_ON (the network) (in)
 INFO_SIZE) = field_offsets(1, 1, 1, 1, 1, 1, 1, 1, 1, 1)

NNUE_OFF = 0             # info[I_NNUE]: the linear evaluation (search.eval)
NNUE_ON = 1              # the network (ctx.net, accumulators in ctx.acc)
NNUE_EVAL_MAX = 20000    # the network's output is clamped to +-this: well inside the mate scores
                         # (MATE_BOUND) and the TT's int16 eval field

# The search stack (Stockfish's ``Stack``, search.h): one record per ply of the current line,
# ``ss[ply]``, written by the node at ``ply`` (search(), past its TT cutoff), except the psq sums,
# which the parent carries to its child's row as it makes the move. 128 bytes, two cache lines per
# row (the node's own data in the first, the move picker's state in the second); int64 where the
# search's arithmetic is int64. A new per-ply datum is one more field here.
#
#   static_eval   int64  static eval of the node (-INF when in check); qsearch writes none
#   psq_mg        int64  material + piece-square sums, middlegame and endgame (eval.psq_sums):
#   psq_eg        int64  row 0 set by search_root, row ply + 1 by _make (or the null move) at ply
#   cmh           int64  _cmh_index of the move played at ply, -1 for a null move (the child's
#                        continuation-history rows: ss[ply - 1].cmh, ss[ply - 2].cmh and, for
#                        ordering and cutoff updates, ss[ply - 4].cmh and ss[ply - 6].cmh)
#   stat_score    int32  not yet used (0): the history score of the move searched
#   current_move  int32  the move being searched (or last searched) at ply, 0 for a null move
#   excluded      int32  the move a singular-extension search of this node excludes (0: none)
#   killer1       int32  the last two distinct quiet moves that cut off at ply, newest first
#   killer2       int32  (kept across the iterations of a search)
#   move_count    int32  moves searched so far at ply (pruned ones not counted)
#   in_check      int8   1 if the side to move is in check at ply
#   cut_node      int8   not yet used (0): the node is expected to fail high
#   tt_pv         int8   not yet used (0): the node is or was on a PV (a TT flag)
#   mp_stage      int32  the move picker's state (search.movepick, written by picker_init and
#   mp_cur        int32  next_move): its stage, the index of the next move to hand out and the
#   mp_end        int32  end of the current stage's moves in the ply's slice of the move buffer,
#   mp_tt_move    int32  the TT move (0 if none or not legal) and the counter move it was started
#   mp_counter_move int32  with, the end of the bad captures (kept at the front of the slice),
#   mp_bad_end    int32  the number of moves handed out, the quiet stage's sort limit, the next
#   mp_count      int32  refutation (0..3) and the killers the refutation stage read; saved and
#   mp_sort_limit int32  restored around the singular-extension search, which reuses the row
#   mp_refut      int32
#   mp_killer1    int32
#   mp_killer2    int32
#   mp_pins       int64  the side to move's pieces pinned to its king (movegen.pinned_pieces), for
#                        the legality test of the pseudo-legal moves as they are handed out
#
# Rows: MAX_PLY + 2, as the info slices they replace (plies stay below MAX_PLY; a node at ply
# writes the psq sums of ply + 1). The lookbacks to earlier plies (``improving``, c1, c2, c4, c6)
# test ``ply >= k`` first (k = 2, 1, 2, 4, 6): the root has no row before it. The driver zeroes
# the whole stack when a search starts.
SS_DTYPE = np.dtype([("static_eval", np.int64), ("psq_mg", np.int64), ("psq_eg", np.int64),
                     ("cmh", np.int64), ("stat_score", np.int32), ("current_move", np.int32),
                     ("excluded", np.int32), ("killer1", np.int32), ("killer2", np.int32),
                     ("move_count", np.int32), ("in_check", np.int8), ("cut_node", np.int8),
                     ("tt_pv", np.int8), ("pad", np.uint8, (5,)),
                     ("mp_stage", np.int32), ("mp_cur", np.int32), ("mp_end", np.int32),
                     ("mp_tt_move", np.int32), ("mp_counter_move", np.int32), ("mp_bad_end", np.int32),
                     ("mp_count", np.int32), ("mp_sort_limit", np.int32), ("mp_refut", np.int32),
                     ("mp_killer1", np.int32), ("mp_killer2", np.int32), ("mp_pins", np.int64),
                     ("pad2", np.uint8, (12,))],
                    align=False)
SS_SIZE = MAX_PLY + 2


def ss_alloc():
    """A zeroed search stack (``SS_SIZE`` rows of ``SS_DTYPE``), one per search thread."""
    return np.zeros(SS_SIZE, dtype=SS_DTYPE)


def ss_clear_killers(ss):
    """Forget the killers of every ply (``ucinewgame``; a new search zeroes the whole stack)."""
    ss["killer1"] = 0
    ss["killer2"] = 0

# Constants that are not tuned (the tuned ones: search.params, read from the ctx's prm array).
R50_NO_TT_CUT = 90        # no TT cutoff from this fifty-move count on (Stockfish 12): the draw is near
LN = np.log(np.maximum(np.arange(64), 1).astype(np.float64))   # ln(i), LN[0] = 0 (a constant in the compiled code)


@njit(cache=True, nogil=True, inline='always')
def _lmr(prm, depth, moves):
    """Late-move reduction of the ``moves``-th move at ``depth`` (both capped at 63):
    ``int(LMR_BASE/100 + ln(depth) ln(moves) / (LMR_DIV/100))``, the Stockfish-family shape (later
    moves and deeper nodes are reduced more, since ordering makes late moves rarely best). Computed,
    not a table: a table built from the parameters would be one more array per node, and a
    constant table would freeze them; the float operations are those of the table the defaults
    replaced, so they give the same integers."""
    return np.int64(prm[P_LMR_BASE] / 100.0 + LN[nowrap(min(depth, 63))] * LN[nowrap(min(moves, 63))]
                    / (prm[P_LMR_DIV] / 100.0))


@njit(cache=True, nogil=True)
def _score_from_tt(raw, ply, r50):
    """A TT score made relative to the root: mate scores are stored relative to their node.

    ``r50`` is the node's fifty-move counter (half-moves). A stored mate that needs more plies
    than the fifty-move rule leaves (``r50`` + plies to mate > 100) may be a draw by then: it is
    downgraded to ``MATE_BOUND`` (winning, but no proven mate), as Fairy-Stockfish 11.1's
    ``value_from_tt(v, ply, r50c)``. Its bound there is ``99 - r50c``; here a mate on the
    hundredth half-move still counts (checkmate takes precedence over the fifty-move draw), so
    the bound is ``100 - r50``."""
    s = np.int64(raw)
    if s > MATE_BOUND:
        if MATE - s > 100 - r50:
            return np.int64(MATE_BOUND)
        s -= ply
    elif s < -MATE_BOUND:
        if MATE + s > 100 - r50:
            return np.int64(-MATE_BOUND)
        s += ply
    return s


@njit(cache=True, nogil=True)
def _score_to_tt(s, ply):
    """A score made relative to this node for the TT (the inverse of :func:`_score_from_tt`)."""
    if s > MATE_BOUND:
        return s + ply
    if s < -MATE_BOUND:
        return s - ply
    return s


@njit(cache=True, nogil=True)
def _bound(best, orig_alpha, beta):
    """The TT bound of a node's result ``best`` searched with window (orig_alpha, beta)."""
    if best >= beta:
        return BOUND_LOWER
    if best > orig_alpha:
        return BOUND_EXACT
    return BOUND_UPPER


@njit(cache=True, nogil=True)
def _static_eval(board, st, vt, ev, ws, tt, ti, ss, ply, info, net, acc):
    """Static evaluation (centipawns, side to move), from the TT slot ``ti`` when it caches one;
    else the network's output from accumulator row ``ply`` (``info[I_NNUE]`` set; clamped to
    +-NNUE_EVAL_MAX) or the linear evaluation with the material + piece-square sums kept in the
    search stack ``ss`` (:func:`_make`). The single call site of the evaluation keeps the
    compiled code (and compile time) small."""
    nn = info[I_NNUE]
    if ti >= 0 and tt[nowrap(ti)].eval != EVAL_NONE:
        return np.int64(tt[nowrap(ti)].eval)
    if nn != NNUE_OFF:
        v = nnue_evaluate(net, acc, ply, st[S_SIDE])
        return max(-NNUE_EVAL_MAX, min(NNUE_EVAL_MAX, v))
    return evaluate_inc(board, st, vt, ev, ws, ss[nowrap(ply)].psq_mg, ss[nowrap(ply)].psq_eg)


@njit(cache=True, nogil=True)
def _tt_refined(tt, ti, static, ply, r50):
    """The static eval ``static`` refined by the TT slot ``ti``'s score where its bound allows: a
    lower bound above the eval or an upper bound below it is a better guess of the position's
    value (Stockfish 11, search step 6 and qsearch). Used for pruning and stand pat; ``improving``
    and the TT's cached eval keep the plain static eval."""
    if ti < 0:
        return static
    s = _score_from_tt(tt[nowrap(ti)].score, ply, r50)
    bnd = tt[nowrap(ti)].flag & 3
    if (s > static and (bnd & BOUND_LOWER) != 0) or (s < static and (bnd & BOUND_UPPER) != 0):
        return s
    return static


@njit(cache=True, nogil=True)
def _make(board, st, stack, hist, vt, zob, ev, ss, ply, m, nn, net, acc):
    """make_move, carrying the evaluation's incremental state from ``ply`` to ``ply + 1``, from the
    move before it is made: with the network (``nn``, info[I_NNUE] != NNUE_OFF) the accumulator
    row (:func:`search.nnue.acc_push`), else the material + piece-square sums
    (:func:`search.eval.psq_delta`)."""
    if nn != NNUE_OFF:
        acc_push(net, vt, board, st, acc, ply, m)
    else:
        dmg, deg = psq_delta(board, st, vt, ev, m)
        ss[nowrap(ply + 1)].psq_mg = ss[nowrap(ply)].psq_mg + dmg
        ss[nowrap(ply + 1)].psq_eg = ss[nowrap(ply)].psq_eg + deg
    make_move(board, st, stack, hist, vt, zob, m)


@njit(cache=True, nogil=True)
def _null_carry(ss, ply, nn, net, acc):
    """The null move's :func:`_make` part: the evaluation's incremental state of ``ply`` carried
    to ``ply + 1`` unchanged (the accumulator row, or the material + piece-square sums)."""
    if nn != NNUE_OFF:
        acc_copy(net, acc, ply, ply + 1)
    else:
        ss[nowrap(ply + 1)].psq_mg = ss[nowrap(ply)].psq_mg
        ss[nowrap(ply + 1)].psq_eg = ss[nowrap(ply)].psq_eg


@njit(cache=True, nogil=True)
def _gravity(h, bonus, limit):
    """A history entry ``h`` moved by ``bonus`` with gravity: ``h + bonus - h*|bonus|/limit``
    keeps it within +-``limit`` (the update of every history table here)."""
    h = np.int64(h)
    ab = bonus if bonus >= 0 else -bonus
    return h + bonus - (h * ab) // limit


@njit(cache=True, nogil=True)
def _cont_update(cont, c1, c2, c4, c6, idx, bonus):
    for c in (c1, c2, c4, c6):
        if c >= 0:
            cont[nowrap(c), nowrap(idx)] = _gravity(cont[nowrap(c), nowrap(idx)], bonus, CONT_MAX)


@njit(cache=True, nogil=True)
def _victim_type(board, m):
    """Type captured by ``m`` (en passant: PAWN), 0 for a move that captures nothing."""
    if m & MOVE_EP_BIT:
        return np.int64(PAWN)
    return np.int64(board[(m >> MOVE_TO_SHIFT) & SQ_MASK] & 15)


@njit(cache=True, nogil=True)
def _capt_update(capt, pc, to, victim, bonus):
    i = _cmh_index(pc, to)
    capt[nowrap(i), nowrap(victim)] = _gravity(capt[nowrap(i), nowrap(victim)], bonus, CONT_MAX)


@njit(cache=True, nogil=True)
def _history_update(hist_h, pc, to, bonus):
    hist_h[nowrap(pc), nowrap(to)] = _gravity(hist_h[nowrap(pc), nowrap(to)], bonus, HIST_MAX)


@njit(cache=True, nogil=True, inline='always')
def _update_on_cutoff(board, ss, hist_h, cont, counter, capt, tried, ply, nq, nc, m, noisy, depth, c1, c2, prm):
    """Search step 12, the move ``m`` cut off at ``ply``: a quiet cutoff makes it the first killer
    and the counter move of the opponent's last move, rewards it in the quiet histories and
    punishes the quiet moves searched before it (``tried[ply, :nq]``); a capture cutoff rewards it
    in the capture history; either punishes the captures searched before it
    (``tried[ply, TRIED_QUIETS:TRIED_QUIETS + nc]``). Moves pruned unsearched are not punished
    (Stockfish). ``c1``/``c2``: the continuation-history rows of the moves one and two plies up
    (-1: none); the rows of the moves four and six plies up are updated too (Stockfish 12's
    update_continuation_histories); ``prm`` the tuned constants."""
    to = (m >> MOVE_TO_SHIFT) & SQ_MASK
    pc = board[m & SQ_MASK]
    c4 = ss[nowrap(ply - 4)].cmh if ply >= 4 else -1     # our moves two and three moves ago
    c6 = ss[nowrap(ply - 6)].cmh if ply >= 6 else -1
    bonus = depth * depth * prm[P_HIST_BONUS]
    cbonus = min(bonus, prm[P_CONT_BONUS_MAX])
    if not noisy:
        if ss[nowrap(ply)].killer1 != m:
            ss[nowrap(ply)].killer2 = ss[nowrap(ply)].killer1
            ss[nowrap(ply)].killer1 = m
        if c1 >= 0:
            counter[nowrap(c1)] = m
        _history_update(hist_h, pc, to, bonus)
        _cont_update(cont, c1, c2, c4, c6, _cmh_index(pc, to), cbonus)
        for j in range(nq):      # the quiet moves searched before this one
            q = tried[nowrap(ply), nowrap(j)]
            qto = (q >> MOVE_TO_SHIFT) & SQ_MASK
            qpc = board[q & SQ_MASK]
            _history_update(hist_h, qpc, qto, -bonus)
            _cont_update(cont, c1, c2, c4, c6, _cmh_index(qpc, qto), -cbonus)
    else:
        _capt_update(capt, pc, to, _victim_type(board, m), cbonus)
    for j in range(TRIED_QUIETS, TRIED_QUIETS + nc):     # the captures searched before it
        q = tried[nowrap(ply), nowrap(j)]
        qto = (q >> MOVE_TO_SHIFT) & SQ_MASK
        _capt_update(capt, board[q & SQ_MASK], qto, _victim_type(board, q), -cbonus)


@njit(cache=True, nogil=True)
def _is_draw(board, st, hist, vt, info, ply, moves):
    """50-move rule, insufficient material, repetition (2-fold inside the search, 3-fold with game history).

    Checkmate takes precedence over the fifty-move rule (FIDE Laws 9.3 and 5.1.1; Stockfish's
    ``Position::is_draw``): at a counter of 100 or more the draw holds only if the side to move
    is not in check or has a legal move; a mated side is left to the caller, which scores the
    mate. The test generates this ply's moves into ``moves`` (only then: it is rare)."""
    if st[S_HALFMOVE] >= 100:
        if not in_check(board, st, vt):
            return True
        n0 = ply * MAX_MOVES
        return gen_legal_checked(board, st, vt, moves, n0, np.int64(GEN_ALL), True) > n0
    if insufficient_material(board, st, vt):
        return True
    gp = st[S_PLY]
    lo = repetition_floor(st, vt)
    h = st[S_HASH]
    root = info[I_ROOTPLY]
    cnt = 0
    i = gp - 4
    while i >= lo:
        if hist[nowrap(i)] == h:
            if i >= root:
                return True
            cnt += 1
            if cnt >= 2:
                return True
        i -= 2
    return False


@njit(cache=True, nogil=True)
def _tick(info, stop):
    """Count a node; every 1024 nodes poll the stop flag and node limits. True if aborting.

    The shared limit (Lazy SMP, ``go nodes``) is counted in the search, not by a watcher thread, so
    a busy machine cannot delay it: the sum stops within one poll per thread (an increment lost to
    two threads adding at once only lets the search run one poll longer)."""
    info[I_NODES] += 1
    if (info[I_NODES] & 1023) == 0:
        if stop[1] > 0:
            stop[2] += 1024
            if stop[2] >= stop[1]:
                stop[0] = 1
        if stop[0] != 0 or info[I_NODES] >= info[I_NODELIMIT]:
            info[I_ABORT] = 1
    return info[I_ABORT] != 0


@njit(cache=True, nogil=True)
def qsearch(c, alpha, beta, ply, incheck):
    """Quiescence: stand pat, then captures and promotions (MVV-LVA, losing captures skipped); all
    evasions when in check. Results are stored in the TT at draft 0 and probed for cutoffs.

    ``incheck``: 1/0 if the caller knows whether the side to move is in check (the parent's
    ``gives_check`` of the move just made), -1 to have it computed here."""
    board, st, stack, hist, vt, zob, tt, ev, moves, scores, pv, pvlen, ss, hist_h, info, stop, excl, ws, \
        cont, counter, capt, tried, prm, net, acc = c
    relay = (vt[V_FLAGS] & VF_RELAY) != 0
    if _tick(info, stop):
        return 0
    if ply > info[I_SELDEPTH]:
        info[I_SELDEPTH] = ply
    if _is_draw(board, st, hist, vt, info, ply, moves):
        return 0
    # Step 1. TT probe: any stored draft (>= 0) answers a quiescence node (non-PV windows only)
    key = st[S_HASH]
    ti = tt_probe(tt, key)
    if ti >= 0 and beta - alpha == 1:
        s = _score_from_tt(tt[nowrap(ti)].score, ply, st[S_HALFMOVE])
        bnd = tt[nowrap(ti)].flag & 3
        if bnd == BOUND_EXACT or (bnd == BOUND_LOWER and s >= beta) or (bnd == BOUND_UPPER and s <= alpha):
            return s
    # one call site for _static_eval keeps the compiled code (and compile time) small
    check = in_check(board, st, vt) if incheck < 0 else incheck != 0
    static = -INF if check else _static_eval(board, st, vt, ev, ws, tt, ti, ss, ply, info, net, acc)
    if ply >= info[I_MAXPLY] - 1:
        return 0 if check else static
    stand = static
    if not check:
        stand = _tt_refined(tt, ti, static, ply, st[S_HALFMOVE])
        if stand >= beta:
            if ti < 0:
                # remember the stand-pat bound and the eval (revisits skip evaluate)
                tt_store(tt, key, np.int64(0), stand, np.int64(0), np.int64(BOUND_LOWER), info[I_GEN], static)
            return stand
        if stand > alpha:
            alpha = stand
    orig_alpha = alpha
    best = stand
    bestm = 0
    # the quiescence picker (search.movepick): captures and promotions by MVV-LVA and capture
    # history, every evasion when in check
    qpicker_init(ss, ply)
    while True:
        m, _ = next_qmove(board, st, vt, ws, moves, scores, ss, hist_h, cont, capt, ply, check)
        if m == 0:
            break
        if not check:
            to = (m >> MOVE_TO_SHIFT) & SQ_MASK
            victim = board[nowrap(to)]
            # Step 2. Delta pruning, then skip losing captures (they rarely rescue a quiet position)
            if (m & MOVE_PROMO_BITS) == 0 and victim != EMPTY and \
                    stand + _piece_value(vt, victim) + prm[P_DELTA_MARGIN] <= alpha:
                continue
            if victim != EMPTY and _losing_capture(board, st, vt, ws, m):
                continue
        # the child's "in check", known before the move without relays (cheaper than in_check there)
        gchk = np.int64(-1) if relay else np.int64(1 if gives_check(board, st, stack, hist, vt, zob, m) else 0)
        _make(board, st, stack, hist, vt, zob, ev, ss, ply, m, info[I_NNUE], net, acc)
        tt_prefetch(tt, st[S_HASH])   # the child probes this bucket first
        sc = -qsearch(c, -beta, -alpha, ply + 1, gchk)
        unmake_move(board, st, stack, vt)
        if info[I_ABORT] != 0:
            return 0
        if sc > best:
            best = sc
            if sc > alpha:
                alpha = sc
                bestm = m
                if sc >= beta:
                    break
    if check and picker_no_moves(ss, ply):
        return -MATE + ply
    # Step 3. Store at draft 0 (tt_store never lets it replace a deeper entry of the same position)
    tt_store(tt, key, bestm, _score_to_tt(best, ply), np.int64(0), _bound(best, orig_alpha, beta), info[I_GEN],
             np.int64(EVAL_NONE) if check else static)
    return best


@njit(cache=True, nogil=True)
def _has_null_material(st, vt, us):
    """Null-move guard: the side owns a piece beyond king and pawns (and, in knightrelay, beyond knights,
    since knights-only material is zugzwang-prone: knights cannot capture)."""
    c = us << 4
    s = st[nowrap(S_COUNT + (BISHOP | c))] + st[nowrap(S_COUNT + (ROOK | c))] + st[nowrap(S_COUNT + (QUEEN | c))] \
        + st[nowrap(S_COUNT + (MARSHAL | c))] + st[nowrap(S_COUNT + (CARDINAL | c))]
    if (vt[V_FLAGS] & VF_RELAY) == 0:
        s += st[nowrap(S_COUNT + (KNIGHT | c))]
    return s > 0


NO_VALUE = 1 << 20        # "no cutoff" from the step helpers below: outside every score (and the TT's int16)


@njit(cache=True, nogil=True, inline='always')
def _draw_or_mate_distance(c, alpha, beta, ply, incheck):
    """Search step 1, not at the root (Stockfish's search.cpp steps 2 and 3): a draw by rule
    (:func:`_is_draw`) scores 0, the deepest ply allowed (``info[I_MAXPLY]``) hands the node to
    :func:`qsearch`, and mate-distance pruning narrows ``(alpha, beta)`` to the scores still
    possible at ``ply``. Returns ``(value, alpha, beta)``: the node's score when one of these
    ends it (also when the window closes: then ``alpha``), else ``NO_VALUE`` and the narrowed
    window. ``c``: a :data:`SearchCtx`."""
    if _is_draw(c.board, c.st, c.hist, c.vt, c.info, ply, c.moves):
        return np.int64(0), alpha, beta
    if ply >= c.info[I_MAXPLY] - 1:
        return qsearch(c, alpha, beta, ply, incheck), alpha, beta
    a = -MATE + ply
    if a > alpha:
        alpha = a
    b = MATE - ply - 1
    if b < beta:
        beta = b
    if alpha >= beta:
        return alpha, alpha, beta
    return np.int64(NO_VALUE), alpha, beta


@njit(cache=True, nogil=True, inline='always')
def _tt_lookup(tt, st, key, skipm, pv_node, depth, ply, alpha, beta):
    """Search step 2 (Stockfish's search.cpp step 4): probe the TT (``TT_DTYPE`` array) for
    ``key``. Returns ``(ti, ttm, cut)``: the slot (-1: none), its move (0 if none or if it is
    ``skipm``, the move a singular-extension search excludes) and the score that cuts the
    node off, or ``NO_VALUE``: a non-PV node, not a singular search, a draft of at least
    ``depth``, a bound that holds against ``(alpha, beta)``, and a fifty-move counter (``st``,
    the state vector) below ``R50_NO_TT_CUT`` (Stockfish 12)."""
    ttm = 0
    cut = NO_VALUE
    ti = tt_probe(tt, key)
    if ti >= 0:
        ttm = tt[nowrap(ti)].move
        if ttm == skipm:
            ttm = 0
        if not pv_node and skipm == 0 and tt[nowrap(ti)].depth >= depth and st[S_HALFMOVE] < R50_NO_TT_CUT:
            s = _score_from_tt(tt[nowrap(ti)].score, ply, st[S_HALFMOVE])
            bnd = tt[nowrap(ti)].flag & 3
            if bnd == BOUND_EXACT or (bnd == BOUND_LOWER and s >= beta) or (bnd == BOUND_UPPER and s <= alpha):
                cut = s
    return ti, ttm, cut


@njit(cache=True, nogil=True, inline='always')
def _rfp_cut(prm, pv_node, check, skipm, depth, pe, beta, improving):
    """Search step 4, reverse futility pruning (Stockfish 11's search.cpp step 8, "futility pruning:
    child node"): True if the non-PV node's refined eval ``pe`` beats ``beta`` by
    ``RFP_MARGIN`` per ply of ``depth`` (one ply less when not ``improving``), at
    ``depth <= RFP_DEPTH`` and with ``beta`` no mate score. ``prm``: the tuned constants."""
    return (not pv_node and not check and skipm == 0 and depth <= prm[P_RFP_DEPTH]
            and pe - prm[P_RFP_MARGIN] * (depth - (1 if improving else 0)) >= beta
            and beta > -MATE_BOUND and beta < MATE_BOUND)


@njit(cache=True, nogil=True, inline='always')
def _null_reduction(st, stack, vt, prm, pv_node, check, skipm, depth, pe, beta):
    """Search step 5, null move (Stockfish 11's search.cpp step 9): the null-move search's depth
    reduction ``R``, or -1 when the node tries no null move: a PV node, in check, a singular
    search, two null moves in a row (``stack``, the undo stack's ``U_MOVE``), ``depth`` below
    ``NULL_MIN_DEPTH``, the refined eval ``pe`` below ``beta``, ``beta`` a mate score, or no
    piece beyond king and pawns (:func:`_has_null_material`: zugzwang). ``R`` grows with depth
    and with the margin over beta (a big margin needs less proof)."""
    null_ok = stack[nowrap(st[S_PLY] - 1), U_MOVE] != 0 if st[S_PLY] > 0 else True   # no two null moves in a row
    if not pv_node and not check and skipm == 0 and null_ok and depth >= prm[P_NULL_MIN_DEPTH] and pe >= beta \
            and beta < MATE_BOUND and _has_null_material(st, vt, st[S_SIDE]):
        # the reduction grows with depth and with the margin over beta (a big margin needs less proof)
        return prm[P_NULL_R_BASE] + depth // prm[P_NULL_R_DEPTH_DIV] \
            + min(prm[P_NULL_EVAL_MAX], (pe - beta) // prm[P_NULL_EVAL_DIV])
    return -1


@njit(cache=True, nogil=True, inline='always')
def _null_enter(c, ply):
    """Make the null move at ``ply`` on the buffers ``c`` (a :data:`SearchCtx`): the position,
    the child's TT bucket prefetched, the search stack's move fields (no move, no continuation
    row) and the evaluation's incremental state carried to ``ply + 1``."""
    make_null(c.st, c.stack, c.hist, c.zob)
    tt_prefetch(c.tt, c.st[S_HASH])   # the child probes this bucket first
    c.ss[nowrap(ply)].current_move = 0
    c.ss[nowrap(ply)].cmh = -1
    _null_carry(c.ss, ply, c.info[I_NNUE], c.net, c.acc)


@njit(cache=True, nogil=True, inline='always')
def _root_excluded(excl, nexcl, m):
    """True if ``m`` is one of the root moves ``excl[:nexcl]`` (``int32[8]``) that MultiPV has
    already reported."""
    skip = False
    for j in range(nexcl):
        if excl[nowrap(j)] == m:
            skip = True
    return skip


@njit(cache=True, nogil=True, inline='always')
def _futility_prune(prm, searched, noisy, gives, check, pv_node, futile, depth, improving, best):
    """Search step 8 (Stockfish's search.cpp step 13, "pruning at shallow depth"): True to skip a
    quiet move that does not check, once a move has been searched, in a non-PV node not in
    check: when the node is ``futile`` (eval plus ``FUT_MARGIN`` per ply cannot reach alpha),
    or, at ``depth <= LMP_DEPTH``, late move pruning: ``searched`` reached
    ``(LMP_BASE + depth^2) / (1 if improving else 2) + 1`` and a non-mated score is in hand."""
    return searched > 0 and not noisy and not gives and not check and not pv_node and (
        futile or (depth <= prm[P_LMP_DEPTH]
                   and searched >= (prm[P_LMP_BASE] + depth * depth) // (1 if improving else 2) + 1
                   and best > -MATE_BOUND))


@njit(cache=True, nogil=True, inline='always')
def _see_prune(board, st, vt, ws, prm, m, msc, noisy, gives, depth, searched):
    """Search step 8b, SEE pruning (Stockfish 11's step 13): True to skip move ``m`` (order
    score ``msc``) when a capture or check loses more than ``SEE_NOISY_MARGIN`` per ply of
    ``depth`` (a capture :func:`search.movepick._score_moves` found not losing passes at any
    depth), or a quiet move more than ``(SEE_QUIET_BASE - lmr_depth) * lmr_depth^2``, with
    ``lmr_depth`` the depth late move reductions would leave it. The caller checks the
    preconditions (not the root, a non-mated score in hand, pieces beyond pawns).
    ``board``/``st``/``vt``: the position; ``ws``: ``int32[WS_SIZE]`` scratch."""
    if noisy or gives:
        # a capture _score_moves found not losing (SEE >= -SEE_MARGIN) passes at any depth
        return not (noisy and ORD_NOISY <= msc < ORD_TT) and \
            not _see_ge(board, st, vt, ws, m, -prm[P_SEE_NOISY_MARGIN] * depth)
    lmr_depth = depth - 1 - _lmr(prm, depth, searched + 1)
    if lmr_depth < 0:
        lmr_depth = 0
    return not _see_ge(board, st, vt, ws, m, -(prm[P_SEE_QUIET_BASE] - min(lmr_depth, 18)) * lmr_depth * lmr_depth)


@njit(cache=True, nogil=True, inline='always')
def _singular_beta(tt, ti, key, st, ss, prm, ply, depth, root, skipm, rootdepth):
    """Search step 9b, singular extension (Stockfish 11's search.cpp step 14, extensions): the bound
    ``sbeta`` below the TT score that every other move must fail low against for the TT move
    to be extended, or ``NO_VALUE`` when the move picker's current move (``ss[ply]``) is not a
    candidate: not the TT move, ``depth`` below ``SE_DEPTH``, the root, a singular search
    already, beyond twice the root depth, or the TT slot ``ti`` (``TT_DTYPE``) holds no lower
    bound of ``key`` from within ``SE_TT_SLACK`` plies of ``depth`` with a non-mate score."""
    if picker_is_tt_move(ss, ply) and depth >= prm[P_SE_DEPTH] and not root and skipm == 0 and ply < 2 * rootdepth \
            and ti >= 0 and tt[nowrap(ti)].key == key and (tt[nowrap(ti)].flag & BOUND_LOWER) != 0 \
            and tt[nowrap(ti)].depth >= depth - prm[P_SE_TT_SLACK]:
        tts = _score_from_tt(tt[nowrap(ti)].score, ply, st[S_HALFMOVE])
        if -MATE_BOUND < tts < MATE_BOUND:
            return tts - prm[P_SE_MARGIN] * depth
    return NO_VALUE


@njit(cache=True, nogil=True, inline='always')
def _reduction(prm, depth, searched, nd, noisy, gives, check, pv_node, improving, msc):
    """Search step 10, late move reductions (Stockfish's search.cpp step 16): the plies taken
    off the ``searched + 1``-th move's zero-window search, 0 for captures, checks, evasions,
    ``depth < LMR_MIN_DEPTH`` and the first ``LMR_MIN_MOVE`` moves; else :func:`_lmr` adjusted
    by the node and the move's order score ``msc``, within ``0 .. nd - 1`` (``nd``: the
    child's unreduced depth; never straight into quiescence)."""
    r = 0
    if depth >= prm[P_LMR_MIN_DEPTH] and searched >= prm[P_LMR_MIN_MOVE] and not noisy and not gives and not check:
        r = _lmr(prm, depth, searched)
        if pv_node:
            r -= 1      # PV nodes are searched more carefully
        if not improving:
            r += 1      # a drifting position's late quiet moves are even less likely to matter
        if msc >= ORD_KILLER2:
            r -= 1      # a killer refuted a sibling: likely to matter here too
        elif msc > HIST_MAX // 4:
            r -= 1      # a quiet move with good history is likely to matter
        elif msc < -HIST_MAX // 4:
            r += 1      # a quiet move that keeps failing elsewhere rarely matters here
        if r < 0:
            r = 0
        if r > nd - 1:
            r = nd - 1  # never reduce straight into quiescence from here
    return r


@njit(cache=True, nogil=True, inline='always')
def _update_pv(pv, pvlen, ply, m):
    """The PV of ``ply``: ``m`` followed by the child's (``pv`` ``int32[MAX_PLY, MAX_PLY]``,
    ``pvlen`` ``int32[MAX_PLY]``, the triangular PV table)."""
    pv[nowrap(ply), nowrap(ply)] = m
    for j in range(ply + 1, pvlen[nowrap(ply + 1)]):
        pv[nowrap(ply), nowrap(j)] = pv[nowrap(ply + 1), nowrap(j)]
    pvlen[nowrap(ply)] = pvlen[nowrap(ply + 1)] if pvlen[nowrap(ply + 1)] > ply + 1 else ply + 1


@njit(cache=True, nogil=True, inline='always')
def _remember_tried(tried, ply, m, noisy, nq, nc):
    """Record ``m``, searched without a cutoff, in ``tried[ply]`` (``int32[SS_SIZE, TRIED_SIZE]``):
    the quiet moves first, the captures from ``TRIED_QUIETS`` on, as long as there is room (a
    later cutoff punishes them: Stockfish's ``quietsSearched``/``capturesSearched``). Returns
    the new counts ``(nq, nc)``."""
    if noisy:
        if nc < TRIED_CAPTS:
            tried[nowrap(ply), nowrap(TRIED_QUIETS + nc)] = m
            nc += 1
    elif nq < TRIED_QUIETS:
        tried[nowrap(ply), nowrap(nq)] = m
        nq += 1
    return nq, nc


@njit(cache=True, nogil=True, inline='always')
def _node_eval(c, ti, ply, check):
    """Search step 3 (Stockfish's search.cpp step 6): the node's static eval (``-INF`` in
    check; :func:`_static_eval`, from the TT slot ``ti`` when it caches one), written to
    ``ss[ply].static_eval``; ``improving``, the static eval rose since our previous move (two
    plies up); and the eval the pruning steps judge by, the static eval refined by the TT score
    (:func:`_tt_refined`). Returns ``(static, improving, pe)``. ``c``: a :data:`SearchCtx`."""
    ss = c.ss
    static = -INF if check else _static_eval(c.board, c.st, c.vt, c.ev, c.ws, c.tt, ti, ss, ply, c.info, c.net,
                                             c.acc)
    ss[nowrap(ply)].static_eval = static
    improving = ply < 2 or static > ss[nowrap(ply - 2)].static_eval
    pe = static if check else _tt_refined(c.tt, ti, static, ply, c.st[S_HALFMOVE])
    return static, improving, pe


@njit(cache=True, nogil=True, inline='always')
def _node_futile(prm, pv_node, check, depth, alpha, pe):
    """Search step 8's futility test, made once per node (Stockfish's search.cpp step 13,
    futility pruning of quiet moves): a non-PV node not in check, ``depth <= FUT_DEPTH``, whose
    refined eval ``pe`` plus ``FUT_MARGIN`` per ply cannot reach a non-mated ``alpha``."""
    return (not pv_node and not check and depth <= prm[P_FUT_DEPTH] and alpha > -MATE_BOUND
            and pe + prm[P_FUT_MARGIN] * depth <= alpha)


@njit(cache=True, nogil=True, inline='always')
def _check_extension(board, st, vt, ws, m, pc, gives, ply, rootdepth):
    """Search step 9 (Stockfish 11's search.cpp step 14, check extension): 1 for a move ``m``
    (of the piece ``pc``) that ``gives`` check, within twice the root depth (endless checking
    lines stay bounded) and not losing the exchange (a pawn's check, or SEE >= -SEE_MARGIN: a
    sacrificial check is not forcing); else 0. ``ws``: ``int32[WS_SIZE]`` scratch."""
    ext = 0
    if gives and ply < 2 * rootdepth:
        if (pc & 15) == PAWN or _see_ge(board, st, vt, ws, m, np.int64(-SEE_MARGIN)):
            ext = 1
    return ext


@njit(cache=True, nogil=True, inline='always')
def _enter_child(c, ply, m, pc, to, gives):
    """Make move ``m`` (the piece ``pc`` to ``to``) at ``ply`` on the buffers ``c`` (a
    :data:`SearchCtx`; Stockfish's search.cpp step 15): the position and the evaluation's
    incremental state (:func:`_make`), the child's TT bucket prefetched (it probes it first),
    the search stack's move and continuation-history row. Returns the child's "in check" (1/0
    from ``gives``, as an int64 variable)."""
    gchk = np.int64(1 if gives else 0)
    _make(c.board, c.st, c.stack, c.hist, c.vt, c.zob, c.ev, c.ss, ply, m, c.info[I_NNUE], c.net, c.acc)
    tt_prefetch(c.tt, c.st[S_HASH])   # the child probes this bucket first
    c.ss[nowrap(ply)].current_move = m
    c.ss[nowrap(ply)].cmh = _cmh_index(pc, to)
    return gchk


@njit(cache=True, nogil=True, inline='always')
def _no_move_score(ss, ply, check, root, alpha):
    """The score of a node that searched no move (Stockfish's search.cpp step 20): checkmate
    (``-MATE + ply``) or stalemate (0) if the move picker (its state in ``ss[ply]``) found no
    legal move; else every move was excluded (the root: ``-INF``) or pruned (fail low with
    ``alpha``)."""
    if picker_no_moves(ss, ply):
        return np.int64(-MATE + ply) if check else np.int64(0)
    if root:
        return np.int64(-INF)
    return alpha


@njit(cache=True, nogil=True, inline='always')
def _store_node(tt, key, best, bestm, ttm, orig_alpha, beta, depth, ply, gen, check, static):
    """Search step 13 (Stockfish's search.cpp, the TT save at the end of search()): the node's
    result ``best`` with its bound for the window ``(orig_alpha, beta)``, ``depth``, the
    generation ``gen`` and the static eval (none in check). After a fail low the best move is
    noise: the old TT move ``ttm`` is kept. ``tt``: the ``TT_DTYPE`` array."""
    bnd = _bound(best, orig_alpha, beta)
    if bnd == BOUND_UPPER:
        bestm = ttm   # after a fail low the best move is noise; keep the old TT move
    tt_store(tt, key, bestm, _score_to_tt(best, ply), depth, bnd, gen, np.int64(EVAL_NONE) if check else static)


@njit(cache=True, nogil=True)
def search(c, alpha, beta, depth, ply, incheck):
    """Negamax PVS node on the buffers ``c`` (a :data:`SearchCtx`). Returns the score
    (meaningless if ``info[I_ABORT]``). ``incheck`` as in :func:`qsearch` (-1: unknown).

    The steps are Stockfish's (search.cpp; the numbers here are Cardinal's), each decided by
    a helper above and carried out here, where the recursive calls stay.

    All integer arguments are int64 and never compile-time literals (callers pass
    variables): a literal would make numba compile, and cache, extra recursive
    specialisations, which crashed on reload from the cache."""
    board, st, stack, hist, vt, zob, tt, ev, moves, scores, pv, pvlen, ss, hist_h, info, stop, excl, ws, \
        cont, counter, capt, tried, prm, net, acc = c
    pvlen[nowrap(ply)] = ply
    if depth <= 0:
        return qsearch(c, alpha, beta, ply, incheck)
    if _tick(info, stop):
        return 0
    if ply > info[I_SELDEPTH]:
        info[I_SELDEPTH] = ply
    pv_node = beta - alpha > 1
    root = ply == 0
    key = st[S_HASH]
    # Step 1. Draws by rule and mate-distance pruning (not at the root: the root must return a move)
    if not root:
        v, alpha, beta = _draw_or_mate_distance(c, alpha, beta, ply, incheck)
        if v != NO_VALUE:
            return v
    # Step 2. Transposition table probe (cutoff in non-PV nodes; none once the fifty-move counter
    # reaches R50_NO_TT_CUT, as Stockfish 12: the stored result may not hold this close to the draw)
    skipm = ss[nowrap(ply)].excluded    # a singular-extension search of this node without that move
    ti, ttm, cut = _tt_lookup(tt, st, key, skipm, pv_node, depth, ply, alpha, beta)
    if cut != NO_VALUE:
        return cut
    check = in_check(board, st, vt) if incheck < 0 else incheck != 0
    ss[nowrap(ply)].in_check = check
    # Step 3. Static evaluation, "improving" (the eval rose since our previous move: if not, pruning and
    # reductions can be bolder) and the eval the pruning steps judge by (refined by the TT score)
    static, improving, pe = _node_eval(c, ti, ply, check)
    # Step 3b. Internal iterative reduction: no TT move means this node was never searched (or failed
    # low); a shallower search here is cheap and fills the TT with a move for the next iteration
    if ttm == 0 and depth >= prm[P_IIR_DEPTH] and not check and skipm == 0:
        depth -= 1
    # Step 4. Reverse futility pruning: far above beta near the leaves
    if _rfp_cut(prm, pv_node, check, skipm, depth, pe, beta, improving):
        return pe
    # Step 5. Null move search: give the opponent a free move; if we still beat beta, cut
    r = _null_reduction(st, stack, vt, prm, pv_node, check, skipm, depth, pe, beta)
    if r >= 0:
        _null_enter(c, ply)
        sc = -search(c, -beta, -beta + 1, depth - 1 - r, ply + 1, np.int64(0))
        unmake_null(st, stack)
        if info[I_ABORT] != 0:
            return 0
        if sc >= beta:
            return beta
    # Step 6. Staged move ordering (search.movepick, Stockfish's MovePicker): the TT move, checked
    # legal without generating anything; then good captures, killers and counter move, quiet
    # moves (generated only when reached) and losing captures; in check, every evasion scored
    c1 = ss[nowrap(ply - 1)].cmh if ply >= 1 else -1     # the opponent's last move
    c2 = ss[nowrap(ply - 2)].cmh if ply >= 2 else -1     # our own previous move
    picker_init(ss, counter, ply, np.int64(ttm), check, depth)
    npm = _has_null_material(st, vt, st[S_SIDE])    # pieces beyond king and pawns: SEE pruning is safe
    futile = _node_futile(prm, pv_node, check, depth, alpha, pe)   # Step 8's futility, once per node
    best = -INF
    bestm = 0
    orig_alpha = alpha
    searched = 0
    nq = 0                  # quiet moves and captures searched without a cutoff (tried[ply])
    nc = 0
    # the picker's skip_quiets stays off: Step 8's late move pruning spares quiet checks, so the
    # quiet moves must still be handed out (a variable, not a literal: one compiled picker)
    skip_quiets = False
    ss[nowrap(ply)].move_count = 0
    # Step 7. Loop over moves (msc: the move's order score, its band tells the picker's stage)
    while True:
        m, msc = next_move(board, st, vt, ws, moves, scores, ss, hist_h, cont, capt, ply, skip_quiets)
        if m == 0:
            break
        if m == skipm or (root and _root_excluded(excl, info[I_NEXCL], m)):
            continue
        to = (m >> MOVE_TO_SHIFT) & SQ_MASK
        noisy = board[nowrap(to)] != EMPTY or (m & (MOVE_PROMO_BITS | MOVE_EP_BIT)) != 0
        pc = board[m & SQ_MASK]
        # decided before the move is made: pruned moves cost no make/unmake
        gives = gives_check(board, st, stack, hist, vt, zob, m)
        # Step 8. Futility pruning and late move pruning of quiet moves that do not check
        if _futility_prune(prm, searched, noisy, gives, check, pv_node, futile, depth, improving, best):
            continue
        # Step 8b. SEE pruning at shallow depth (Stockfish 11's step 13), once a move has been
        # searched and with pieces beyond pawns on the board: a capture or check losing more than
        # SEE_NOISY_MARGIN per ply, a quiet move losing more than its LMR-depth allowance
        if not root and best > -MATE_BOUND and npm and _see_prune(board, st, vt, ws, prm, m, msc, noisy, gives,
                                                                   depth, searched):
            continue
        # Step 9. Check extension (only within twice the root depth: endless checking lines stay bounded),
        # and only for checks that do not lose the exchange (a sacrificial check is not forcing)
        ext = _check_extension(board, st, vt, ws, m, pc, gives, ply, info[I_ROOTDEPTH])
        # Step 9b. Singular extension (Stockfish 11): the TT move, a lower bound from nearly this
        # depth, is extended when every other move fails low against a margin below its score
        # (a half-depth search without it); when even that search beats beta, several moves
        # refute this node and it is cut at once (multi-cut)
        sbeta = _singular_beta(tt, ti, key, st, ss, prm, ply, depth, root, skipm, info[I_ROOTDEPTH])
        if sbeta != NO_VALUE:
            ss[nowrap(ply)].excluded = m
            mp = picker_save(ss, ply)    # the search of this node at the same ply reuses the row
            v = search(c, sbeta - 1, sbeta, depth // 2, ply, np.int64(1 if check else 0))
            picker_restore(ss, ply, mp)
            ss[nowrap(ply)].excluded = 0
            if info[I_ABORT] != 0:
                return 0
            if v < sbeta:
                ext = 1
            elif sbeta >= beta:
                return sbeta
        gchk = _enter_child(c, ply, m, pc, to, gives)     # the child's "in check"
        nd = depth - 1 + ext
        if searched == 0:
            sc = -search(c, -beta, -alpha, nd, ply + 1, gchk)
        else:
            # Step 10. Late move reductions for quiet moves
            r = _reduction(prm, depth, searched, nd, noisy, gives, check, pv_node, improving, msc)
            sc = -search(c, -alpha - 1, -alpha, nd - r, ply + 1, gchk)
            if sc > alpha and r > 0:
                sc = -search(c, -alpha - 1, -alpha, nd, ply + 1, gchk)
            # Step 11. PVS re-search with the full window
            if sc > alpha and sc < beta:
                sc = -search(c, -beta, -alpha, nd, ply + 1, gchk)
        unmake_move(board, st, stack, vt)
        if info[I_ABORT] != 0:
            return 0
        searched += 1
        ss[nowrap(ply)].move_count = searched
        if sc > best:
            best = sc
            bestm = m
            if sc > alpha:
                alpha = sc
                _update_pv(pv, pvlen, ply, m)
                if sc >= beta:
                    # Step 12. Killers and histories on a cutoff (_update_on_cutoff)
                    _update_on_cutoff(board, ss, hist_h, cont, counter, capt, tried, ply, nq, nc, m, noisy,
                                      depth, c1, c2, prm)
                    break
        nq, nc = _remember_tried(tried, ply, m, noisy, nq, nc)
    if searched == 0:     # checkmate, stalemate, or every move excluded (root) or pruned
        return _no_move_score(ss, ply, check, root, alpha)
    # Step 13. Store in the transposition table (not for a MultiPV root or a singular search)
    if not (root and info[I_NEXCL] > 0) and skipm == 0:
        _store_node(tt, key, best, bestm, ttm, orig_alpha, beta, depth, ply, info[I_GEN], check, static)
    return best


@njit(cache=True, nogil=True)
def search_root(c, alpha, beta, depth):
    """One iteration at ``depth`` with window (alpha, beta) on the buffers ``c`` (a
    :data:`SearchCtx`); PV in ``c.pv[0, :c.pvlen[0]]``."""
    info = c.info
    info[I_ABORT] = 0
    info[I_ROOTPLY] = c.st[S_PLY]
    info[I_ROOTDEPTH] = depth
    if info[I_NNUE] != NNUE_OFF:
        acc_refresh(c.net, c.vt, c.board, c.st, c.acc, 0)
    else:
        mg, eg = psq_sums(c.board, c.st, c.vt, c.ev)
        c.ss[0].psq_mg = mg
        c.ss[0].psq_eg = eg
    return search(c, alpha, beta, depth, np.int64(0), np.int64(-1))
