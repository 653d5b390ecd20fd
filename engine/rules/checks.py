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

Without relays (grand, chess, ...) the full attack test is not needed: a move
changes the attacks on the enemy king only through the piece arriving on its
target square (a direct check) and through the squares it empties (the origin,
and the en-passant victim's square: a discovered check along a line from the
king). :func:`_gives_check_lines` tests just those, like Stockfish's
``Position::gives_check`` (position.cpp) with its check squares and
discovered-check candidates, on the mailbox. Relayed checks depend on every
knight near the arriving piece, so Knight Relay keeps the full test.
"""
from .jit import njit, nowrap
from .layout import (STRIDE, EMPTY, KING, PAWN, KNIGHT, WHITE, F_EP, F_CASTLE, S_SIDE, S_KSQ, S_COUNT,
                     SQ_MASK, MOVE_TO_SHIFT, MOVE_PROMO_SHIFT, MOVE_FLAGS_SHIFT, V_FLAGS, VF_RELAY,
                     VF_KNIGHT_PASSIVE, V_FILE, V_RANK, V_LEAP_N, V_LEAP, V_SLIDEMASK, LINE_OFFSETS)
from .movegen import is_attacked, in_check, make_move, unmake_move


@njit(cache=True, nogil=True)
def _line_dir(vt, k, x):
    """Index ``d`` of the line direction ``LINE_OFFSETS[d]`` leading from square ``k`` to square
    ``x`` (same rank, file or diagonal), or -1 if they share no line (or ``x == k``)."""
    df = vt[nowrap(V_FILE + x)] - vt[nowrap(V_FILE + k)]
    dr = vt[nowrap(V_RANK + x)] - vt[nowrap(V_RANK + k)]
    if dr == 0:
        if df == 0:
            return -1
        return 0 if df > 0 else 1
    if df == 0:
        return 2 if dr > 0 else 3
    if df == dr:
        return 4 if dr > 0 else 7
    if df == -dr:
        return 5 if dr > 0 else 6
    return -1


@njit(cache=True, nogil=True)
def _line_attacker(board, vt, k, d, cb):
    """True if the first piece from ``k`` along ``LINE_OFFSETS[d]`` has colour bits ``cb`` and
    slides along that line towards ``k`` (``V_SLIDEMASK``, as :func:`is_attacked` reads it)."""
    off = LINE_OFFSETS[d]
    t = k + off
    while board[nowrap(t)] == EMPTY:
        t += off
    p = board[nowrap(t)]
    return (p & 0x30) == cb and ((vt[V_SLIDEMASK + (p & 15)] >> d) & 1) != 0


@njit(cache=True, nogil=True)
def _gives_check_lines(board, vt, k, to, p, frm, capsq, us):
    """``is_attacked(board, st, vt, k, us)`` for a board where the side to move ``us`` has just
    put ``p`` on ``to`` and emptied ``frm`` (and ``capsq`` if not 0), in a variant without relays,
    given that ``us`` did not attack ``k`` before the move (the position was legal)."""
    cb = us << 4
    ty = p & 15
    # direct check by the arriving piece
    if ty == PAWN:
        fwd = STRIDE if us == WHITE else -STRIDE
        if k == to + fwd - 1 or k == to + fwd + 1:
            return True
    elif not (ty == KNIGHT and (vt[V_FLAGS] & VF_KNIGHT_PASSIVE) != 0):
        delta = k - to
        base = V_LEAP + ty * 16
        for i in range(vt[V_LEAP_N + ty]):
            if vt[nowrap(base + i)] == delta:
                return True
    d = _line_dir(vt, k, to)
    if d >= 0 and (vt[V_SLIDEMASK + ty] >> d) & 1 and _line_attacker(board, vt, k, d, cb):
        return True
    # discovered checks through the emptied squares
    d = _line_dir(vt, k, frm)
    if d >= 0 and _line_attacker(board, vt, k, d, cb):
        return True
    if capsq != 0:
        d = _line_dir(vt, k, capsq)
        if d >= 0 and _line_attacker(board, vt, k, d, cb):
            return True
    return False


@njit(cache=True, nogil=True)
def gives_check(board, st, stack, hist, vt, zob, m):
    """True if the legal move ``m`` of the side to move leaves the opponent's king attacked.

    Arrays as in :mod:`engine.rules.movegen` (``board`` int8[NSQ], ``st`` int64[S_SIZE],
    ``stack``/``hist``/``zob`` only for the castling fallback); all are restored before
    returning. False if the opponent has no king (or the move captures it)."""
    us = st[S_SIDE]
    k = st[nowrap(S_KSQ + (1 - us))]
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
    p = board[nowrap(frm)]
    capt = board[nowrap(to)]
    if capt != EMPTY and (capt & 15) == KING:
        return False
    capsq = 0
    ep_pawn = EMPTY
    if (flags & F_EP) != 0:
        capsq = to - (STRIDE if us == WHITE else -STRIDE)
        ep_pawn = board[nowrap(capsq)]
        board[nowrap(capsq)] = EMPTY
    np_ = p
    relay = (vt[V_FLAGS] & VF_RELAY) != 0
    if promo != 0:
        np_ = promo | (us << 4)
        if relay:
            st[nowrap(S_COUNT + p)] -= 1      # is_attacked skips piece types the attacker has none of
            st[nowrap(S_COUNT + np_)] += 1
    board[nowrap(frm)] = EMPTY
    board[nowrap(to)] = np_
    if relay:
        c = is_attacked(board, st, vt, k, us)
    else:
        c = _gives_check_lines(board, vt, k, to, np_, frm, capsq, us)
    board[nowrap(to)] = capt
    board[nowrap(frm)] = p
    if promo != 0 and relay:
        st[nowrap(S_COUNT + np_)] -= 1
        st[nowrap(S_COUNT + p)] += 1
    if capsq != 0:
        board[nowrap(capsq)] = ep_pawn
    return c
