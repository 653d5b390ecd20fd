"""Static exchange evaluation (SEE) on the mailbox, relay-aware.

:func:`see_ge` answers "does the exchange that move ``m`` starts on its target
square win at least ``threshold``?" by playing out the captures on that square,
each side always recapturing with its least valuable attacker and free to stop
when recapturing would lose. It is Stockfish 11's ``Position::see_ge``
(position.cpp), a negamax on one running balance without a gain list, on a
mailbox: instead of occupancy bitboards, each capturer is lifted off the board
(so a slider behind it, an x-ray attacker, is found by the next scan) and every
lifted piece is put back before returning.

Attackers are the pieces :func:`engine.rules.movegen.is_attacked` counts:
pawns, leapers, sliders and, with ``VF_RELAY`` (``variants/rules/knightrelay.md``),
relayed pieces (a friendly knight a knight's move away lends its leap; a
relayed pawn never lands on the first or last rank). With
``VF_KNIGHT_PASSIVE`` knights neither capture nor can be captured, so they
never join an exchange, but they keep relaying: lifting a capturer never
changes who is relayed, since only knights relay and knights never move here.

Simplifications (as Stockfish 11): castling, en-passant and promotion moves
count as an even exchange (``0 >= threshold``); a pinned piece may recapture;
grand's capture-promotions are valued as plain pawn captures.

Arrays: ``board``/``st``/``vt`` as :mod:`engine.rules.movegen`; the exchange
value of each piece type is the variant table's ``V_SEE`` row (centipawns, the
fixed ``Piece.see`` values of the variant record, not the tuned evaluation's; the
king's entry is ignored: it recaptures last, and only onto an unattacked square);
``scratch`` ``int32[>= 2 * SEE_MAX_LIFT]`` for the lifted pieces (nothing is
allocated).
"""
from .jit import njit, nowrap

from .layout import (SQ_MASK, MOVE_TO_SHIFT, MOVE_PROMO_BITS, MOVE_EP_BIT, MOVE_FLAGS_SHIFT, F_CASTLE,
                     PAWN, KNIGHT, KING, NTYPES, WHITE, EMPTY, OFF, STRIDE, S_SIDE, S_COUNT,
                     V_FLAGS, V_HEIGHT, V_SEE, V_RANK, V_LEAP_N, V_LEAP, V_SLIDEMASK, V_RELAYABLE,
                     VF_RELAY, VF_KNIGHT_PASSIVE, KNIGHT_OFFSETS, LINE_OFFSETS)
from .movegen import defended_by_knight

SEE_MAX_LIFT = 30      # pieces lifted in one exchange at most (a square has far fewer attackers)
_NONE_VALUE = 1 << 30


@njit(cache=True, nogil=True)
def least_attacker(board, st, vt, sq, by):
    """Square of the least valuable piece of colour ``by`` that attacks ``sq`` on the
    board as it stands (0 if none; the king only when nothing else attacks)."""
    flags = vt[V_FLAGS]
    cb = by << 4
    pawn = PAWN | cb
    if by == WHITE:
        if board[nowrap(sq - STRIDE - 1)] == pawn:
            return sq - STRIDE - 1
        if board[nowrap(sq - STRIDE + 1)] == pawn:
            return sq - STRIDE + 1
    else:
        if board[nowrap(sq + STRIDE - 1)] == pawn:
            return sq + STRIDE - 1
        if board[nowrap(sq + STRIDE + 1)] == pawn:
            return sq + STRIDE + 1
    best = 0
    bv = _NONE_VALUE
    king = 0
    for ty in range(KNIGHT, NTYPES):
        n = vt[V_LEAP_N + ty]
        if n == 0 or st[nowrap(S_COUNT + (ty | cb))] == 0:
            continue
        if ty == KNIGHT and (flags & VF_KNIGHT_PASSIVE) != 0:
            continue
        if ty != KING and vt[V_SEE + ty] >= bv:
            continue
        pc = ty | cb
        base = V_LEAP + ty * 16
        for i in range(n):
            s = sq - vt[base + i]
            if board[nowrap(s)] == pc:
                if ty == KING:
                    king = s
                else:
                    best = s
                    bv = vt[V_SEE + ty]
                break
    for d in range(8):
        off = LINE_OFFSETS[d]
        s = sq + off
        while board[nowrap(s)] == EMPTY:
            s += off
        p = board[nowrap(s)]
        if p != OFF and (p & 0x30) == cb and (vt[V_SLIDEMASK + (p & 15)] >> d) & 1:
            ty = p & 15
            if ty == KING:
                king = s
            elif vt[V_SEE + ty] < bv:
                best = s
                bv = vt[V_SEE + ty]
    if (flags & VF_RELAY) != 0 and st[nowrap(S_COUNT + (KNIGHT | cb))] != 0:
        knight = KNIGHT | cb
        r = vt[nowrap(V_RANK + sq)]
        last = vt[V_HEIGHT] - 1
        for o in KNIGHT_OFFSETS:
            s = sq + o
            p = board[nowrap(s)]
            if p == EMPTY or p == OFF or (p & 0x30) != cb:
                continue
            ty = p & 15
            if vt[V_RELAYABLE + ty] == 0 or (ty != KING and vt[V_SEE + ty] >= bv):
                continue
            if ty == PAWN and (r == 0 or r == last):
                continue
            if defended_by_knight(board, s, knight):
                if ty == KING:
                    king = s
                else:
                    best = s
                    bv = vt[V_SEE + ty]
    return best if best != 0 else king


@njit(cache=True, nogil=True)
def see_ge(board, st, vt, m, threshold, scratch):
    """True if the side to move's move ``m`` (legal, packed) wins at least ``threshold``
    centipawns in the exchange on its target square (module docstring)."""
    if (m & (MOVE_PROMO_BITS | MOVE_EP_BIT)) != 0 or ((m >> MOVE_FLAGS_SHIFT) & F_CASTLE) != 0:
        return 0 >= threshold
    frm = m & SQ_MASK
    to = (m >> MOVE_TO_SHIFT) & SQ_MASK
    victim = board[nowrap(to)]
    balance = (vt[V_SEE + (victim & 15)] if victim != EMPTY else 0) - threshold
    if balance < 0:
        return False       # even if nothing recaptures, the capture does not reach the threshold
    mover = board[nowrap(frm)] & 15
    if mover == KING:
        return True        # a legal king move is never recaptured
    balance -= vt[V_SEE + mover]
    if balance >= 0:
        return True        # even if the mover is lost, the threshold is reached
    us = st[S_SIDE]
    # lift the mover: pieces behind it (x-rays) now see the target
    scratch[0] = frm
    scratch[1] = board[nowrap(frm)]
    board[nowrap(frm)] = EMPTY
    lifted = 1
    stm = us ^ 1          # the opponent recaptures first
    while True:
        s = least_attacker(board, st, vt, to, stm)
        if s == 0 or lifted >= SEE_MAX_LIFT:
            break         # stm cannot (or, past the cap, does not) recapture: stm loses
        pt = board[nowrap(s)] & 15
        scratch[nowrap(2 * lifted)] = s
        scratch[nowrap(2 * lifted + 1)] = board[nowrap(s)]
        board[nowrap(s)] = EMPTY
        lifted += 1
        stm ^= 1
        # negamax with the null window (balance, balance + 1) -> (-balance - 1, -balance),
        # giving away the capturer (the king counts 0: it is never captured)
        balance = -balance - 1 - (0 if pt == KING else vt[V_SEE + pt])
        if balance >= 0:
            # the capturer's side has won, stm lost; unless the capturer was a king stepping
            # onto a square stm still attacks: that capture is illegal and its side loses
            if pt == KING and least_attacker(board, st, vt, to, stm) != 0:
                stm ^= 1
            break
    for i in range(lifted - 1, -1, -1):
        board[nowrap(scratch[nowrap(2 * i)])] = scratch[nowrap(2 * i + 1)]
    return us != stm      # stm is the side that lost the exchange
