"""The numba core: attack tests, move generation, make/unmake, Zobrist keys.

Every function here is ``@njit(cache=True, nogil=True)`` and works on numpy
arrays only (layouts in :mod:`engine.rules.layout`):

* ``board``  ``int8[NSQ]``       padded mailbox, piece codes
* ``st``     ``int64[S_SIZE]``   side, e.p., castling, counters, king squares, key, piece counts
* ``stack``  ``int64[MAX_GAME_PLIES, U_SIZE]`` undo rows, one per made move
* ``hist``   ``int64[MAX_GAME_PLIES + 1]`` Zobrist key after each ply (``hist[st[S_PLY]]`` is the current key)
* ``vt``     ``int32[V_SIZE]``   the variant table (:func:`engine.rules.tables.compile_variant`)
* ``zob``    ``int64[ZOB_ROWS, NSQ]`` Zobrist keys (:func:`zobrist_table`)
* ``moves``  ``int32[...]``      caller-owned move buffer; generators write from index ``n0`` and return the new end

Nothing allocates per node. The generator reads tables and flags only; it never
names a variant. Rules: FIDE laws, ``variants/rules/grand.md`` and ``variants/rules/knightrelay.md``.
"""
import numpy as np
from .jit import njit, nowrap, trailing_zeros

from .layout import (STRIDE, NSQ, SQ_MASK, MOVE_TO_SHIFT, MOVE_PROMO_SHIFT, MOVE_FLAGS_SHIFT, MOVE_EP_BIT,
                     PAWN, KNIGHT, ROOK, KING, NTYPES, WHITE, BLACK, EMPTY, OFF,
                     F_DOUBLE, F_EP, F_CASTLE, S_SIDE, S_EP, S_CASTLE, S_HALFMOVE, S_FULLMOVE,
                     S_KSQ, S_HASH, S_PLY, S_COUNT, S_OCC, U_MOVE, U_CAPT, U_EP, U_CASTLE, U_HALF, U_HASH,
                     V_HEIGHT, V_FLAGS, V_DOUBLE_RANK, V_PROMO_START, V_NPROMO, V_PROMO,
                     V_PROMO_MAX, V_LEAP_N, V_SLIDE_N, V_LEAP, V_SLIDE, V_NSQUARES, V_SQUARES,
                     V_CMASK, V_FILE, V_RANK, V_SLIDEMASK, V_RELAYABLE, V_CK_FROM, V_CR_FROM, V_CK_TO,
                     V_CR_TO, V_CEMPTY_N, V_CSAFE_N, V_CEMPTY, V_CSAFE, CASTLE_MAXSQ, V_NNOMATE, V_NOMATE,
                     V_NOMATE_COLOUR, V_SQIDX,
                     VF_CASTLING, VF_EP, VF_RELAY, VF_KNIGHT_PASSIVE, KNIGHT_OFFSETS, LINE_OFFSETS)

MAX_MOVES = 512          # capacity of one ply's slice of a move buffer
ZOB_ROWS = 40            # rows 0..31 piece codes, ZOB_EP e.p. square, ZOB_CASTLE rights, ZOB_SIDE side
ZOB_EP = 32
ZOB_CASTLE = 33
ZOB_SIDE = 34

GEN_ALL = 0
GEN_NOISY = 1            # captures (e.p. included) and promotions only (quiescence, the picker's captures)
GEN_QUIET = 2            # the rest: neither a capture nor a promotion (castling, a pawn staying a pawn
                         # on grand's optional promotion ranks); GEN_NOISY + GEN_QUIET = GEN_ALL


def zobrist_table(seed: int = 0x5EED_CA4D) -> np.ndarray:
    """Zobrist keys, ``int64[ZOB_ROWS, NSQ]``, from a fixed seed (deterministic across runs)."""
    rng = np.random.Generator(np.random.PCG64(seed))
    z = rng.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, size=(ZOB_ROWS, NSQ),
                     dtype=np.int64, endpoint=True)
    z[ZOB_CASTLE, 0] = 0  # no rights: key 0, so a variant without castling never XORs
    return z


@njit(cache=True, nogil=True)
def defended_by_knight(board, sq, knight_code):
    """True if a piece ``knight_code`` stands a knight's move from ``sq`` (the relay test)."""
    for o in KNIGHT_OFFSETS:
        if board[nowrap(sq + o)] == knight_code:
            return True
    return False


@njit(cache=True, nogil=True)
def is_attacked(board, st, vt, sq, by):
    """True if colour ``by`` attacks square ``sq``.

    Includes pawns (a grand pawn on rank 9 attacks rank 10 whether or not it
    could promote), leapers, sliders and, with ``VF_RELAY``, relayed knight
    moves (never onto the relayed pawn's own first or last rank). With
    ``VF_KNIGHT_PASSIVE`` knights attack nothing.
    """
    flags = vt[V_FLAGS]
    cb = by << 4
    pawn = PAWN | cb
    if by == WHITE:
        if board[nowrap(sq - STRIDE - 1)] == pawn or board[nowrap(sq - STRIDE + 1)] == pawn:
            return True
    else:
        if board[nowrap(sq + STRIDE - 1)] == pawn or board[nowrap(sq + STRIDE + 1)] == pawn:
            return True
    for ty in range(KNIGHT, NTYPES):   # every type but the pawn (tested above)
        n = vt[V_LEAP_N + ty]
        if n == 0 or st[nowrap(S_COUNT + (ty | cb))] == 0:
            continue
        if ty == KNIGHT and (flags & VF_KNIGHT_PASSIVE) != 0:
            continue
        pc = ty | cb
        base = V_LEAP + ty * 16
        for i in range(n):
            if board[nowrap(sq - vt[base + i])] == pc:
                return True
    for d in range(8):
        off = LINE_OFFSETS[d]
        s = sq + off
        while board[nowrap(s)] == EMPTY:
            s += off
        p = board[nowrap(s)]
        if p != OFF and (p & 0x30) == cb:
            if (vt[V_SLIDEMASK + (p & 15)] >> d) & 1:
                return True
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
            if vt[V_RELAYABLE + ty] == 0:
                continue
            if ty == PAWN and (r == 0 or r == last):
                continue
            if defended_by_knight(board, s, knight):
                return True
    return False


@njit(cache=True, nogil=True)
def in_check(board, st, vt):
    """True if the side to move's king is attacked (False if it has no king)."""
    us = st[S_SIDE]
    k = st[nowrap(S_KSQ + us)]
    if k == 0:
        return False
    return is_attacked(board, st, vt, k, 1 - us)


@njit(cache=True, nogil=True)
def _add_pawn(moves, n, st, vt, frm, to, rel, us, capture, mode):
    """Append a pawn move to relative rank ``rel``, expanding promotions."""
    last = vt[V_HEIGHT] - 1
    if rel >= vt[V_PROMO_START]:
        if mode != GEN_QUIET:
            cb = us << 4
            for i in range(vt[V_NPROMO]):
                ty = vt[V_PROMO + i]
                if st[nowrap(S_COUNT + (ty | cb))] < vt[nowrap(V_PROMO_MAX + ty)]:
                    moves[nowrap(n)] = frm | (to << MOVE_TO_SHIFT) | (ty << MOVE_PROMO_SHIFT)
                    n += 1
        if rel == last:
            return n
    if mode == GEN_ALL or (capture if mode == GEN_NOISY else not capture):
        moves[nowrap(n)] = frm | (to << MOVE_TO_SHIFT)
        n += 1
    return n


@njit(cache=True, nogil=True)
def gen_pseudo(board, st, vt, moves, n0, mode):
    """Pseudo-legal moves of the side to move into ``moves[n0:]``; returns the new end.

    ``mode`` GEN_ALL, GEN_NOISY (captures, promotions) or GEN_QUIET (the rest). Castling is
    generated only when the king is not in check and does not pass an attacked
    square (the destination is left to the legality test). The loop body is
    :func:`gen_square` written out: called per piece it made perft 3x slower.
    """
    us = st[S_SIDE]
    them = 1 - us
    cb = us << 4
    ce = them << 4
    flags = vt[V_FLAGS]
    passive = (flags & VF_KNIGHT_PASSIVE) != 0
    relay = (flags & VF_RELAY) != 0 and st[nowrap(S_COUNT + (KNIGHT | cb))] != 0
    knight = KNIGHT | cb
    eknight = KNIGHT | ce
    height = vt[V_HEIGHT]
    last = height - 1
    fwd = STRIDE if us == WHITE else -STRIDE
    ep = st[S_EP]
    n = n0
    # our pieces in board order: the set bits of our two occupancy words (S_OCC), lowest first
    for w in range(2):
        x = st[nowrap(S_OCC + 2 * us + w)]
        while x != 0:
            s = vt[V_SQUARES + 64 * w + trailing_zeros(x)]
            x &= x - 1
            p = board[nowrap(s)]
            ty = p & 15
            if ty == PAWN:
                r = vt[nowrap(V_RANK + s)]
                rel = r if us == WHITE else last - r
                to = s + fwd
                if board[nowrap(to)] == EMPTY:
                    n = _add_pawn(moves, n, st, vt, s, to, rel + 1, us, False, mode)
                    if rel == vt[V_DOUBLE_RANK] and mode != GEN_NOISY and board[nowrap(to + fwd)] == EMPTY:
                        moves[nowrap(n)] = s | ((to + fwd) << MOVE_TO_SHIFT) | (F_DOUBLE << MOVE_FLAGS_SHIFT)
                        n += 1
                for dx in (-1, 1):
                    t = to + dx
                    q = board[nowrap(t)]
                    if q != EMPTY and q != OFF and (q & 0x30) == ce and not (passive and q == eknight):
                        n = _add_pawn(moves, n, st, vt, s, t, rel + 1, us, True, mode)
                    elif t == ep and ep != 0 and mode != GEN_QUIET:
                        moves[nowrap(n)] = s | (t << MOVE_TO_SHIFT) | (F_EP << MOVE_FLAGS_SHIFT)
                        n += 1
            else:
                base = V_LEAP + ty * 16
                for j in range(vt[V_LEAP_N + ty]):
                    t = s + vt[base + j]
                    q = board[nowrap(t)]
                    if q == EMPTY:
                        if mode != GEN_NOISY:
                            moves[nowrap(n)] = s | (t << MOVE_TO_SHIFT)
                            n += 1
                    elif q != OFF and (q & 0x30) == ce and mode != GEN_QUIET:
                        if passive and (ty == KNIGHT or q == eknight):
                            continue
                        moves[nowrap(n)] = s | (t << MOVE_TO_SHIFT)
                        n += 1
                base = V_SLIDE + ty * 8
                for j in range(vt[V_SLIDE_N + ty]):
                    off = vt[base + j]
                    t = s + off
                    while board[nowrap(t)] == EMPTY:
                        if mode != GEN_NOISY:
                            moves[nowrap(n)] = s | (t << MOVE_TO_SHIFT)
                            n += 1
                        t += off
                    q = board[nowrap(t)]
                    if q != OFF and (q & 0x30) == ce and not (passive and q == eknight) and mode != GEN_QUIET:
                        moves[nowrap(n)] = s | (t << MOVE_TO_SHIFT)
                        n += 1
                if ty == KING and (flags & VF_CASTLING) != 0 and mode != GEN_NOISY:
                    n = _gen_castling(board, st, vt, moves, n, s, us)
            if relay and vt[V_RELAYABLE + ty] != 0 and defended_by_knight(board, s, knight):
                for o in KNIGHT_OFFSETS:
                    t = s + o
                    q = board[nowrap(t)]
                    if q == OFF:
                        continue
                    if ty == PAWN:
                        rt = vt[nowrap(V_RANK + t)]
                        if rt == 0 or rt == last:
                            continue
                    if q == EMPTY:
                        if mode != GEN_NOISY:
                            moves[nowrap(n)] = s | (t << MOVE_TO_SHIFT)
                            n += 1
                    elif (q & 0x30) == ce and q != eknight and mode != GEN_QUIET:
                        moves[nowrap(n)] = s | (t << MOVE_TO_SHIFT)
                        n += 1
    return n


@njit(cache=True, nogil=True)
def gen_square(board, st, vt, moves, n, s, mode):
    """Pseudo-legal moves (``mode`` as :func:`gen_pseudo`) of the side to move's piece on
    ``s`` appended at ``moves[n:]``; returns the new end. For :func:`is_legal_move`.
    Its twin is :func:`gen_pseudo`'s loop body, written out there for speed: a change
    to one must be made to both (tests/test_legal_filter.py compares them on every move)."""
    us = st[S_SIDE]
    them = 1 - us
    cb = us << 4
    ce = them << 4
    flags = vt[V_FLAGS]
    passive = (flags & VF_KNIGHT_PASSIVE) != 0
    relay = (flags & VF_RELAY) != 0 and st[nowrap(S_COUNT + (KNIGHT | cb))] != 0
    knight = KNIGHT | cb
    eknight = KNIGHT | ce
    height = vt[V_HEIGHT]
    last = height - 1
    fwd = STRIDE if us == WHITE else -STRIDE
    ep = st[S_EP]
    p = board[nowrap(s)]
    ty = p & 15
    if ty == PAWN:
        r = vt[nowrap(V_RANK + s)]
        rel = r if us == WHITE else last - r
        to = s + fwd
        if board[nowrap(to)] == EMPTY:
            n = _add_pawn(moves, n, st, vt, s, to, rel + 1, us, False, mode)
            if rel == vt[V_DOUBLE_RANK] and mode != GEN_NOISY and board[nowrap(to + fwd)] == EMPTY:
                moves[nowrap(n)] = s | ((to + fwd) << MOVE_TO_SHIFT) | (F_DOUBLE << MOVE_FLAGS_SHIFT)
                n += 1
        for dx in (-1, 1):
            t = to + dx
            q = board[nowrap(t)]
            if q != EMPTY and q != OFF and (q & 0x30) == ce and not (passive and q == eknight):
                n = _add_pawn(moves, n, st, vt, s, t, rel + 1, us, True, mode)
            elif t == ep and ep != 0 and mode != GEN_QUIET:
                moves[nowrap(n)] = s | (t << MOVE_TO_SHIFT) | (F_EP << MOVE_FLAGS_SHIFT)
                n += 1
    else:
        base = V_LEAP + ty * 16
        for j in range(vt[V_LEAP_N + ty]):
            t = s + vt[base + j]
            q = board[nowrap(t)]
            if q == EMPTY:
                if mode != GEN_NOISY:
                    moves[nowrap(n)] = s | (t << MOVE_TO_SHIFT)
                    n += 1
            elif q != OFF and (q & 0x30) == ce and mode != GEN_QUIET:
                if passive and (ty == KNIGHT or q == eknight):
                    continue
                moves[nowrap(n)] = s | (t << MOVE_TO_SHIFT)
                n += 1
        base = V_SLIDE + ty * 8
        for j in range(vt[V_SLIDE_N + ty]):
            off = vt[base + j]
            t = s + off
            while board[nowrap(t)] == EMPTY:
                if mode != GEN_NOISY:
                    moves[nowrap(n)] = s | (t << MOVE_TO_SHIFT)
                    n += 1
                t += off
            q = board[nowrap(t)]
            if q != OFF and (q & 0x30) == ce and not (passive and q == eknight) and mode != GEN_QUIET:
                moves[nowrap(n)] = s | (t << MOVE_TO_SHIFT)
                n += 1
        if ty == KING and (flags & VF_CASTLING) != 0 and mode != GEN_NOISY:
            n = _gen_castling(board, st, vt, moves, n, s, us)
    if relay and vt[V_RELAYABLE + ty] != 0 and defended_by_knight(board, s, knight):
        for o in KNIGHT_OFFSETS:
            t = s + o
            q = board[nowrap(t)]
            if q == OFF:
                continue
            if ty == PAWN:
                rt = vt[nowrap(V_RANK + t)]
                if rt == 0 or rt == last:
                    continue
            if q == EMPTY:
                if mode != GEN_NOISY:
                    moves[nowrap(n)] = s | (t << MOVE_TO_SHIFT)
                    n += 1
            elif (q & 0x30) == ce and q != eknight and mode != GEN_QUIET:
                moves[nowrap(n)] = s | (t << MOVE_TO_SHIFT)
                n += 1
    return n


@njit(cache=True, nogil=True)
def _gen_castling(board, st, vt, moves, n, ksq, us):
    """Castling moves of the king on ``ksq`` (king side first), from the variant table:
    right held, king and rook on their start squares, the squares between empty, the
    king's start and crossed squares not attacked (its destination: legality test)."""
    rights = st[S_CASTLE] >> (2 * us)
    if (rights & 3) == 0 or ksq != vt[nowrap(V_CK_FROM + us)]:
        return n
    them = 1 - us
    rook = ROOK | (us << 4)
    for side in range(2):
        if ((rights >> side) & 1) == 0:
            continue
        c = 2 * us + side
        if board[nowrap(vt[nowrap(V_CR_FROM + c)])] != rook:
            continue
        ok = True
        base = V_CEMPTY + c * CASTLE_MAXSQ
        for j in range(vt[nowrap(V_CEMPTY_N + c)]):
            if board[nowrap(vt[nowrap(base + j)])] != EMPTY:
                ok = False
                break
        if not ok:
            continue
        base = V_CSAFE + c * CASTLE_MAXSQ
        for j in range(vt[nowrap(V_CSAFE_N + c)]):
            if is_attacked(board, st, vt, vt[nowrap(base + j)], them):
                ok = False
                break
        if ok:
            moves[nowrap(n)] = ksq | (vt[nowrap(V_CK_TO + c)] << MOVE_TO_SHIFT) | (F_CASTLE << MOVE_FLAGS_SHIFT)
            n += 1
    return n


@njit(cache=True, nogil=True)
def castle_index(vt, us, to):
    """Index ``2 * colour + side`` of a castling move by colour ``us`` with the king landing on ``to``."""
    c = 2 * us
    if to != vt[nowrap(V_CK_TO + c)]:
        c += 1
    return c


@njit(cache=True, nogil=True)
def _ep_capture_legal(board, st, vt, epsq, them):
    """True if side ``them`` has a legal en-passant capture onto ``epsq``."""
    fwd = STRIDE if them == WHITE else -STRIDE
    pushed = epsq - fwd
    ppawn = board[nowrap(pushed)]
    mine = PAWN | (them << 4)
    k = st[nowrap(S_KSQ + them)]
    for dx in (-1, 1):
        s = pushed + dx
        if board[nowrap(s)] != mine:
            continue
        if k == 0:
            return True
        board[nowrap(s)] = EMPTY
        board[nowrap(pushed)] = EMPTY
        board[nowrap(epsq)] = mine
        ok = not is_attacked(board, st, vt, k, 1 - them)
        board[nowrap(epsq)] = EMPTY
        board[nowrap(pushed)] = ppawn
        board[nowrap(s)] = mine
        if ok:
            return True
    return False


@njit(cache=True, nogil=True)
def _occ_flip(st, vt, col, sq):
    """Toggle square ``sq``'s bit in colour ``col``'s occupancy bitset (``S_OCC``)."""
    i = vt[nowrap(V_SQIDX + sq)]
    st[nowrap(S_OCC + 2 * col + (i >> 6))] ^= np.int64(1) << (i & 63)


@njit(cache=True, nogil=True)
def make_move(board, st, stack, hist, vt, zob, m):
    """Play move ``m`` (assumed pseudo-legal), pushing an undo row; updates the Zobrist key incrementally."""
    ply = st[S_PLY]
    stack[nowrap(ply), U_MOVE] = m
    stack[nowrap(ply), U_EP] = st[S_EP]
    stack[nowrap(ply), U_CASTLE] = st[S_CASTLE]
    stack[nowrap(ply), U_HALF] = st[S_HALFMOVE]
    stack[nowrap(ply), U_HASH] = st[S_HASH]
    frm = m & SQ_MASK
    to = (m >> MOVE_TO_SHIFT) & SQ_MASK
    promo = (m >> MOVE_PROMO_SHIFT) & 0xF
    flags = (m >> MOVE_FLAGS_SHIFT) & 0xF
    us = st[S_SIDE]
    them = 1 - us
    fwd = STRIDE if us == WHITE else -STRIDE
    h = st[S_HASH]
    p = board[nowrap(frm)]
    capt = board[nowrap(to)]
    if (flags & F_EP) != 0:
        capsq = to - fwd
        capt = board[nowrap(capsq)]
        board[nowrap(capsq)] = EMPTY
        h ^= zob[nowrap(capt), nowrap(capsq)]
        _occ_flip(st, vt, them, capsq)
    elif capt != EMPTY:
        h ^= zob[nowrap(capt), nowrap(to)]
        _occ_flip(st, vt, them, to)
    if capt != EMPTY:
        st[nowrap(S_COUNT + capt)] -= 1
        if (capt & 15) == KING:
            st[nowrap(S_KSQ + them)] = 0
    stack[nowrap(ply), U_CAPT] = capt
    h ^= zob[nowrap(p), nowrap(frm)]
    board[nowrap(frm)] = EMPTY
    _occ_flip(st, vt, us, frm)
    _occ_flip(st, vt, us, to)
    np_ = p
    if promo != 0:
        np_ = promo | (us << 4)
        st[nowrap(S_COUNT + p)] -= 1
        st[nowrap(S_COUNT + np_)] += 1
    board[nowrap(to)] = np_
    h ^= zob[nowrap(np_), nowrap(to)]
    if (p & 15) == KING:
        st[nowrap(S_KSQ + us)] = to
        if (flags & F_CASTLE) != 0:
            c = castle_index(vt, us, to)
            rf = vt[nowrap(V_CR_FROM + c)]
            rt = vt[nowrap(V_CR_TO + c)]
            r = board[nowrap(rf)]
            board[nowrap(rf)] = EMPTY
            board[nowrap(rt)] = r
            h ^= zob[nowrap(r), nowrap(rf)] ^ zob[nowrap(r), nowrap(rt)]
            _occ_flip(st, vt, us, rf)
            _occ_flip(st, vt, us, rt)
    if st[S_EP] != 0:
        h ^= zob[ZOB_EP, nowrap(st[S_EP])]
        st[S_EP] = 0
    oc = st[S_CASTLE]
    if oc != 0:
        nc = oc & vt[nowrap(V_CMASK + frm)] & vt[nowrap(V_CMASK + to)]
        if nc != oc:
            h ^= zob[ZOB_CASTLE, nowrap(oc)] ^ zob[ZOB_CASTLE, nowrap(nc)]
            st[S_CASTLE] = nc
    if (p & 15) == PAWN or capt != EMPTY:
        st[S_HALFMOVE] = 0
    else:
        st[S_HALFMOVE] += 1
    if us == BLACK:
        st[S_FULLMOVE] += 1
    st[S_SIDE] = them
    h ^= zob[ZOB_SIDE, 0]
    if (flags & F_DOUBLE) != 0 and (vt[V_FLAGS] & VF_EP) != 0:
        epsq = frm + fwd
        if _ep_capture_legal(board, st, vt, epsq, them):
            st[S_EP] = epsq
            h ^= zob[ZOB_EP, nowrap(epsq)]
    st[S_HASH] = h
    st[S_PLY] = ply + 1
    hist[nowrap(ply + 1)] = h


@njit(cache=True, nogil=True)
def unmake_move(board, st, stack, vt):
    """Take back the last move made with :func:`make_move`."""
    ply = st[S_PLY] - 1
    m = stack[nowrap(ply), U_MOVE]
    capt = stack[nowrap(ply), U_CAPT]
    frm = m & SQ_MASK
    to = (m >> MOVE_TO_SHIFT) & SQ_MASK
    promo = (m >> MOVE_PROMO_SHIFT) & 0xF
    flags = (m >> MOVE_FLAGS_SHIFT) & 0xF
    them = st[S_SIDE]
    us = 1 - them
    p = board[nowrap(to)]
    if promo != 0:
        st[nowrap(S_COUNT + p)] -= 1
        p = PAWN | (us << 4)
        st[nowrap(S_COUNT + p)] += 1
    board[nowrap(frm)] = p
    board[nowrap(to)] = EMPTY
    _occ_flip(st, vt, us, to)
    _occ_flip(st, vt, us, frm)
    if capt != EMPTY:
        st[nowrap(S_COUNT + capt)] += 1
        if (flags & F_EP) != 0:
            fwd = STRIDE if us == WHITE else -STRIDE
            board[nowrap(to - fwd)] = capt
            _occ_flip(st, vt, them, to - fwd)
        else:
            board[nowrap(to)] = capt
            _occ_flip(st, vt, them, to)
            if (capt & 15) == KING:
                st[nowrap(S_KSQ + them)] = to
    if (p & 15) == KING:
        st[nowrap(S_KSQ + us)] = frm
        if (flags & F_CASTLE) != 0:
            c = castle_index(vt, us, to)
            rf = vt[nowrap(V_CR_FROM + c)]
            rt = vt[nowrap(V_CR_TO + c)]
            board[nowrap(rf)] = board[nowrap(rt)]
            board[nowrap(rt)] = EMPTY
            _occ_flip(st, vt, us, rt)
            _occ_flip(st, vt, us, rf)
    if us == BLACK:
        st[S_FULLMOVE] -= 1
    st[S_SIDE] = us
    st[S_EP] = stack[nowrap(ply), U_EP]
    st[S_CASTLE] = stack[nowrap(ply), U_CASTLE]
    st[S_HALFMOVE] = stack[nowrap(ply), U_HALF]
    st[S_HASH] = stack[nowrap(ply), U_HASH]
    st[S_PLY] = ply


@njit(cache=True, nogil=True)
def make_null(st, stack, hist, zob):
    """Pass the move (null move, for null-move pruning)."""
    ply = st[S_PLY]
    stack[nowrap(ply), U_MOVE] = 0
    stack[nowrap(ply), U_CAPT] = 0
    stack[nowrap(ply), U_EP] = st[S_EP]
    stack[nowrap(ply), U_CASTLE] = st[S_CASTLE]
    stack[nowrap(ply), U_HALF] = st[S_HALFMOVE]
    stack[nowrap(ply), U_HASH] = st[S_HASH]
    h = st[S_HASH] ^ zob[ZOB_SIDE, 0]
    if st[S_EP] != 0:
        h ^= zob[ZOB_EP, nowrap(st[S_EP])]
        st[S_EP] = 0
    st[S_HALFMOVE] += 1
    st[S_SIDE] = 1 - st[S_SIDE]
    st[S_HASH] = h
    st[S_PLY] = ply + 1
    hist[nowrap(ply + 1)] = h


@njit(cache=True, nogil=True)
def unmake_null(st, stack):
    """Take back :func:`make_null`."""
    ply = st[S_PLY] - 1
    st[S_SIDE] = 1 - st[S_SIDE]
    st[S_EP] = stack[nowrap(ply), U_EP]
    st[S_HALFMOVE] = stack[nowrap(ply), U_HALF]
    st[S_HASH] = stack[nowrap(ply), U_HASH]
    st[S_PLY] = ply


@njit(cache=True, nogil=True)
def _legal_slow(board, st, vt, m):
    """Play ``m`` on the board only and test the mover's king; restores the board."""
    frm = m & SQ_MASK
    to = (m >> MOVE_TO_SHIFT) & SQ_MASK
    flags = (m >> MOVE_FLAGS_SHIFT) & 0xF
    us = st[S_SIDE]
    them = 1 - us
    p = board[nowrap(frm)]
    capt = board[nowrap(to)]
    k = st[nowrap(S_KSQ + us)]
    if (p & 15) == KING:
        k = to
    capsq = 0
    ecap = EMPTY
    if (flags & F_EP) != 0:
        capsq = to - (STRIDE if us == WHITE else -STRIDE)
        ecap = board[nowrap(capsq)]
        board[nowrap(capsq)] = EMPTY
    if capt != EMPTY:
        st[nowrap(S_COUNT + capt)] -= 1
    board[nowrap(frm)] = EMPTY
    board[nowrap(to)] = p
    rf = 0
    rt = 0
    if (flags & F_CASTLE) != 0:
        c = castle_index(vt, us, to)
        rf = vt[nowrap(V_CR_FROM + c)]
        rt = vt[nowrap(V_CR_TO + c)]
        board[nowrap(rt)] = board[nowrap(rf)]
        board[nowrap(rf)] = EMPTY
    ok = not is_attacked(board, st, vt, k, them)
    if rf != 0:
        board[nowrap(rf)] = board[nowrap(rt)]
        board[nowrap(rt)] = EMPTY
    board[nowrap(to)] = capt
    board[nowrap(frm)] = p
    if capt != EMPTY:
        st[nowrap(S_COUNT + capt)] += 1
    if capsq != 0:
        board[nowrap(capsq)] = ecap
    return ok


@njit(cache=True, nogil=True)
def pinned_pieces(board, vt, k, us):
    """The pieces of colour ``us`` pinned to its king on ``k``, packed one square per
    byte (byte ``d`` for line direction ``LINE_OFFSETS[d]``, 0 = none).

    Stockfish's ``Position::blockers_for_king`` (position.cpp) on a mailbox: from
    the king along each of the 8 lines, the first piece is ours and the next one
    an enemy that slides along this line towards the king (``V_SLIDEMASK``, the
    same bits :func:`is_attacked` reads). Leaps (knights, the knight part of
    compound pieces, relayed knight moves) are never blocked, so they pin nothing.
    """
    cb = us << 4
    ce = cb ^ 0x10
    pins = 0
    for d in range(8):
        off = LINE_OFFSETS[d]
        s = k + off
        while board[nowrap(s)] == EMPTY:
            s += off
        if (board[nowrap(s)] & 0x30) != cb:     # enemy piece, or OFF (0x30 matches neither colour)
            continue
        t = s + off
        while board[nowrap(t)] == EMPTY:
            t += off
        q = board[nowrap(t)]
        if (q & 0x30) == ce and (vt[V_SLIDEMASK + (q & 15)] >> d) & 1:
            pins |= s << (8 * d)
    return pins


@njit(cache=True, nogil=True)
def _pin_direction(pins, sq):
    """``d + 1`` if ``sq`` is the pinned square of line direction ``d`` in ``pins``
    (:func:`pinned_pieces`), else 0."""
    for d in range(8):      # a fixed count: a square >= 128 in byte 7 makes ``pins`` negative
        if ((pins >> (8 * d)) & 0xFF) == sq:
            return d + 1
    return 0


@njit(cache=True, nogil=True)
def _on_pin_line(board, k, off, to):
    """True if ``to`` lies between the king on ``k`` and the first enemy piece along
    ``off`` (that piece included): a pinned piece moving there still shields its king."""
    s = k + off
    while True:
        if s == to:
            return True
        q = board[nowrap(s)]
        if q == OFF or (q != EMPTY and (q & 0x30) != (board[nowrap(k)] & 0x30)):
            return False
        s += off


@njit(cache=True, nogil=True)
def gen_legal(board, st, vt, moves, n0, mode):
    """Legal moves into ``moves[n0:]``, in :func:`gen_pseudo`'s order; returns the new end.

    Legality test only where it can fail (Stockfish's ``Position::legal``,
    position.cpp; python-chess's ``_slider_blockers``): once per node the side's
    check status and its pieces pinned to the king (:func:`pinned_pieces`). When
    not in check, a move is legal without playing it unless it is a king move
    (castling included: destination), an en-passant capture (two pieces leave a
    line); those, and every move while in check, are played on the board and the
    king tested (:func:`_legal_slow`). A pinned piece's move is legal if it stays
    between the king and the pinner, the pinner included (:func:`_on_pin_line`). In check, a
    non-king quiet move (not e.p.) to a square off the king's 8 lines is dropped
    untested: it can neither capture the checker nor block a line, and a move
    cannot take away a leaper's or a relayed piece's attack without capturing it.

    Why line pins are the whole story for the other moves: a non-king move can
    only expose the king along a line it vacates (leaper and relayed knight
    attacks cannot be blocked, so they cannot be uncovered). With Knight Relay
    (``variants/rules/knightrelay.md``), a relayed attack on our king is a knight
    jump of an enemy piece defended by an enemy knight; our move cannot create
    one (knights cannot be captured, and the relay depends only on the enemy's
    own pieces), it can only remove one by capturing the relayed piece.
    """
    us = st[S_SIDE]
    k = st[nowrap(S_KSQ + us)]
    if k == 0:
        return gen_pseudo(board, st, vt, moves, n0, mode)
    return gen_legal_checked(board, st, vt, moves, n0, mode, is_attacked(board, st, vt, k, 1 - us))


@njit(cache=True, nogil=True)
def gen_legal_checked(board, st, vt, moves, n0, mode, check):
    """:func:`gen_legal` for a caller that already knows whether the side to move is in
    check (``check``: bool, exactly ``in_check(board, st, vt)``); the search passes its own
    test instead of repeating it."""
    return filter_legal(board, st, vt, moves, n0, gen_pseudo(board, st, vt, moves, n0, mode), check)


@njit(cache=True, nogil=True)
def filter_legal(board, st, vt, moves, n0, n, check):
    """The legal ones of the pseudo-legal moves ``moves[n0:n]`` (of the side to move, in check
    iff ``check``), kept in order from ``n0`` on; returns their end. :func:`gen_legal`'s test."""
    us = st[S_SIDE]
    k = st[nowrap(S_KSQ + us)]
    if k == 0:
        return n
    pins = 0 if check else pinned_pieces(board, vt, k, us)
    kf = vt[nowrap(V_FILE + k)]
    kr = vt[nowrap(V_RANK + k)]
    j = n0
    # the per-move test is _legal written out: a call per move made perft 3x slower
    for i in range(n0, n):
        m = moves[nowrap(i)]
        frm = m & SQ_MASK
        if check and frm != k and (m & MOVE_EP_BIT) == 0:
            to = (m >> MOVE_TO_SHIFT) & SQ_MASK
            if board[nowrap(to)] == EMPTY:
                df = vt[nowrap(V_FILE + to)] - kf
                dr = vt[nowrap(V_RANK + to)] - kr
                if df != 0 and dr != 0 and df != dr and df != -dr:
                    continue        # a quiet move off the king's lines neither captures nor blocks
        if check or frm == k or (m & MOVE_EP_BIT) != 0:
            if not _legal_slow(board, st, vt, m):
                continue
        elif pins != 0:
            d = _pin_direction(pins, frm)
            if d != 0 and not _on_pin_line(board, k, LINE_OFFSETS[d - 1], (m >> MOVE_TO_SHIFT) & SQ_MASK):
                continue
        moves[nowrap(j)] = m
        j += 1
    return j


@njit(cache=True, nogil=True)
def _legal(board, st, vt, m, k, check, pins):
    """The legality test of :func:`gen_legal` for one pseudo-legal move ``m`` of the side
    to move, its king on ``k`` (not 0), ``check`` and ``pins`` (:func:`pinned_pieces`, 0
    when in check) computed once per node. For :func:`is_legal_move`; its twin is
    written out in :func:`gen_legal_checked`'s loop for speed (change both)."""
    frm = m & SQ_MASK
    if check and frm != k and (m & MOVE_EP_BIT) == 0:
        to = (m >> MOVE_TO_SHIFT) & SQ_MASK
        if board[nowrap(to)] == EMPTY:
            df = vt[nowrap(V_FILE + to)] - vt[nowrap(V_FILE + k)]
            dr = vt[nowrap(V_RANK + to)] - vt[nowrap(V_RANK + k)]
            if df != 0 and dr != 0 and df != dr and df != -dr:
                return False        # a quiet move off the king's lines neither captures nor blocks
    if check or frm == k or (m & MOVE_EP_BIT) != 0:
        return _legal_slow(board, st, vt, m)
    if pins != 0:
        d = _pin_direction(pins, frm)
        if d != 0 and not _on_pin_line(board, k, LINE_OFFSETS[d - 1], (m >> MOVE_TO_SHIFT) & SQ_MASK):
            return False
    return True


@njit(cache=True, nogil=True)
def legal(board, st, vt, m, pins):
    """True if the pseudo-legal move ``m`` of the side to move, which is not in check, is legal
    (Stockfish's ``Position::legal``: tested just before the move is searched); ``pins`` is
    :func:`pinned_pieces` of its king, computed once per node. The test of :func:`gen_legal`:
    only king moves, e.p. captures and pinned pieces' moves can fail it."""
    k = st[nowrap(S_KSQ + st[S_SIDE])]
    if k == 0:
        return True
    return _legal(board, st, vt, m, k, False, pins)


@njit(cache=True, nogil=True)
def is_legal_move(board, st, vt, m, check, moves, n0):
    """True if the packed move ``m`` (any int: a TT hint may be stale or torn) is a legal
    move of the side to move; ``check`` as :func:`gen_legal_checked`. Exact: it is
    generated by :func:`gen_square` for its from-square (``moves[n0:]`` is scratch) and
    passes the test of :func:`gen_legal`. Lets the search play a TT move before any
    generation (Stockfish's ``Position::pseudo_legal`` + ``legal``)."""
    if m <= 0:
        return False
    frm = m & SQ_MASK
    p = board[nowrap(frm)]
    if p == EMPTY or p == OFF or (p & 0x30) != (st[S_SIDE] << 4):
        return False
    n = gen_square(board, st, vt, moves, n0, frm, np.int64(GEN_ALL))   # not a literal: one compiled copy
    found = False
    for i in range(n0, n):
        if moves[nowrap(i)] == m:
            found = True
            break
    if not found:
        return False
    us = st[S_SIDE]
    k = st[nowrap(S_KSQ + us)]
    if k == 0:
        return True
    return _legal(board, st, vt, m, k, check, 0 if check else pinned_pieces(board, vt, k, us))


@njit(cache=True, nogil=True)
def compute_hash(board, st, vt, zob):
    """Zobrist key of the position from scratch (for tests and FEN set-up)."""
    h = 0
    for i in range(vt[V_NSQUARES]):
        s = vt[V_SQUARES + i]
        p = board[s]
        if p != EMPTY:
            h ^= zob[p, s]
    if st[S_SIDE] == BLACK:
        h ^= zob[ZOB_SIDE, 0]
    if st[S_EP] != 0:
        h ^= zob[ZOB_EP, st[S_EP]]
    h ^= zob[ZOB_CASTLE, st[S_CASTLE]]
    return h


@njit(cache=True, nogil=True)
def perft(board, st, stack, hist, vt, zob, depth, moves, ply):
    """Leaf-node count to ``depth`` (bulk counting: at depth 1 the legal-move count is returned).

    ``moves`` needs ``MAX_MOVES`` entries per remaining ply.
    """
    n0 = ply * MAX_MOVES
    n = gen_legal(board, st, vt, moves, n0, np.int64(GEN_ALL))   # not a literal: no second compile
    if depth <= 1:
        return n - n0
    total = 0
    for i in range(n0, n):
        make_move(board, st, stack, hist, vt, zob, moves[nowrap(i)])
        total += perft(board, st, stack, hist, vt, zob, depth - 1, moves, ply + 1)
        unmake_move(board, st, stack, vt)
    return total


@njit(cache=True, nogil=True)
def insufficient_material(board, st, vt):
    """True if neither side can ever mate: the material on the board (both sides,
    kings aside) fits one of the variant's no-mate sets (``V_NOMATE``: most pieces
    per type; ``V_NOMATE_COLOUR``: types that must all stand on one square colour)."""
    for e in range(vt[V_NNOMATE]):
        base = V_NOMATE + e * NTYPES
        fits = True
        for ty in range(PAWN, NTYPES):
            if ty != KING and st[S_COUNT + ty] + st[S_COUNT + (ty | (BLACK << 4))] > vt[base + ty]:
                fits = False
                break
        if not fits:
            continue
        mask = vt[V_NOMATE_COLOUR + e]
        if mask == 0:
            return True
        seen = 0
        for i in range(vt[V_NSQUARES]):
            s = vt[V_SQUARES + i]
            p = board[nowrap(s)]
            if p != EMPTY and ((mask >> (p & 15)) & 1) != 0:
                seen |= 1 << ((vt[nowrap(V_FILE + s)] + vt[nowrap(V_RANK + s)]) & 1)
        if seen != 3:
            return True
    return False


@njit(cache=True, nogil=True)
def repetition_floor(st, vt):
    """The oldest ply whose position can recur now: the last reset of the 50-move
    counter (a pawn move or capture cannot be undone), except with ``VF_RELAY``: a
    relayed pawn jump resets the counter but can be undone by jumping back
    (``variants/rules/knightrelay.md``: repetition is orthodox, the same position three
    times), so there the whole stored game counts."""
    if (vt[V_FLAGS] & VF_RELAY) != 0:
        return 0
    lo = st[S_PLY] - st[S_HALFMOVE]
    return lo if lo > 0 else 0


@njit(cache=True, nogil=True)
def repetitions(st, hist, vt):
    """How many earlier positions in the game equal the current one (same key, same side to move)."""
    ply = st[S_PLY]
    h = hist[nowrap(ply)]
    count = 0
    lo = repetition_floor(st, vt)
    i = ply - 2
    while i >= lo:
        if hist[nowrap(i)] == h:
            count += 1
        i -= 2
    return count
