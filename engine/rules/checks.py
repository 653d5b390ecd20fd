"""Does a move give check? Answered before the move is made.

The search decides to prune a quiet move (futility, late-move and SEE pruning)
only if the move does not give check. :func:`gives_check` answers exactly what
``make_move`` + ``in_check`` + ``unmake_move`` would, without the Zobrist,
undo-stack and history work: it puts the moving piece on its target square (the
promoted piece for a promotion, the captured pawn removed for en passant), asks
:func:`engine.rules.movegen.is_attacked` about the opponent's king, and puts
everything back. Direct checks, discovered checks along lines and relayed
knight checks (Knight Relay: a piece arriving a knight's move from a friendly
knight, or a knight arriving next to a friend it now relays) all come out of
the same attack test. Castling, rare, takes the full make/unmake path.
"""
from .jit import njit
from .layout import (STRIDE, EMPTY, KING, WHITE, F_EP, F_CASTLE, S_SIDE, S_KSQ, S_COUNT,
                     SQ_MASK, MOVE_TO_SHIFT, MOVE_PROMO_SHIFT, MOVE_FLAGS_SHIFT)
from .movegen import is_attacked, in_check, make_move, unmake_move


@njit(cache=True, nogil=True)
def gives_check(board, st, stack, hist, vt, zob, m):
    """True if the legal move ``m`` of the side to move leaves the opponent's king attacked.

    Arrays as in :mod:`engine.rules.movegen` (``board`` int8[NSQ], ``st`` int64[S_SIZE],
    ``stack``/``hist``/``zob`` only for the castling fallback); all are restored before
    returning. False if the opponent has no king (or the move captures it)."""
    us = st[S_SIDE]
    k = st[S_KSQ + (1 - us)]
    if k == 0:
        return False
    flags = (m >> MOVE_FLAGS_SHIFT) & 0xF
    if (flags & F_CASTLE) != 0:
        make_move(board, st, stack, hist, vt, zob, m)
        c = in_check(board, st, vt)
        unmake_move(board, st, stack, vt)
        return c
    frm = m & SQ_MASK
    to = (m >> MOVE_TO_SHIFT) & SQ_MASK
    promo = (m >> MOVE_PROMO_SHIFT) & 0xF
    p = board[frm]
    capt = board[to]
    if capt != EMPTY and (capt & 15) == KING:
        return False
    capsq = 0
    ep_pawn = EMPTY
    if (flags & F_EP) != 0:
        capsq = to - (STRIDE if us == WHITE else -STRIDE)
        ep_pawn = board[capsq]
        board[capsq] = EMPTY
    np_ = p
    if promo != 0:
        np_ = promo | (us << 4)
        st[S_COUNT + p] -= 1      # is_attacked skips piece types the attacker has none of
        st[S_COUNT + np_] += 1
    board[frm] = EMPTY
    board[to] = np_
    c = is_attacked(board, st, vt, k, us)
    board[to] = capt
    board[frm] = p
    if promo != 0:
        st[S_COUNT + np_] -= 1
        st[S_COUNT + p] += 1
    if capsq != 0:
        board[capsq] = ep_pawn
    return c
