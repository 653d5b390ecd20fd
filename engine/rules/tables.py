"""Compile a :class:`~variants.base.Variant` record into the flat ``int32``
table read by the numba generator (layout: :mod:`engine.rules.layout`, ``V_*``)."""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from . import layout as L
from variants import get
from variants.base import KNIGHT

TYPE_OF_LETTER = {c: i for i, c in enumerate(L.TYPE_LETTERS) if c != "."}


def _offset(dx: int, dy: int) -> int:
    return dy * L.STRIDE + dx


@lru_cache(maxsize=None)
def compile_variant(name: str) -> np.ndarray:
    """Return the variant table, ``int32[V_SIZE]`` (read-only), for ``name``.

    Raises ``KeyError`` for an unknown variant.
    """
    v = get(name)
    t = np.zeros(L.V_SIZE, dtype=np.int32)
    t[L.V_WIDTH] = v.width
    t[L.V_HEIGHT] = v.height
    flags = 0
    if v.castling:
        flags |= L.VF_CASTLING
    if v.en_passant:
        flags |= L.VF_EP
    if v.relay:
        flags |= L.VF_RELAY
    if v.knights_passive:
        flags |= L.VF_KNIGHT_PASSIVE
    t[L.V_FLAGS] = flags
    t[L.V_DOUBLE_RANK] = v.double_step_rank
    t[L.V_PROMO_START] = v.promotion_start
    t[L.V_NPROMO] = len(v.promotion_types)
    for i, c in enumerate(v.promotion_types):
        t[L.V_PROMO + i] = TYPE_OF_LETTER[c]
    for ty in range(1, L.NTYPES):
        t[L.V_PROMO_MAX + ty] = 127
    for c, lim in v.promotion_limits.items():
        t[L.V_PROMO_MAX + TYPE_OF_LETTER[c]] = lim
    for p in v.pieces:
        ty = TYPE_OF_LETTER[p.letter]
        t[L.V_LEAP_N + ty] = len(p.leaps)
        for i, (dx, dy) in enumerate(p.leaps):
            t[L.V_LEAP + ty * 16 + i] = _offset(dx, dy)
        t[L.V_SLIDE_N + ty] = len(p.slides)
        for i, (dx, dy) in enumerate(p.slides):
            t[L.V_SLIDE + ty * 8 + i] = _offset(dx, dy)
    n = 0
    t[L.V_FILE:L.V_FILE + L.NSQ] = -1
    t[L.V_RANK:L.V_RANK + L.NSQ] = -1
    t[L.V_SQIDX:L.V_SQIDX + L.NSQ] = -1
    for r in range(v.height):
        for f in range(v.width):
            sq = L.square(f, r)
            t[L.V_SQUARES + n] = sq
            t[L.V_SQIDX + sq] = n
            t[L.V_FILE + sq] = f
            t[L.V_RANK + sq] = r
            n += 1
    t[L.V_NSQUARES] = n
    t[L.V_CMASK:L.V_CMASK + L.NSQ] = 15
    if v.castling:
        _compile_castling(v, t)
    for p in v.pieces:
        ty = TYPE_OF_LETTER[p.letter]
        mask = 0
        for d, off in enumerate(L.LINE_OFFSETS):
            # an attacker of this type reaches the target moving along -off
            if any(-_offset(dx, dy) == off for dx, dy in p.slides):
                mask |= 1 << d
        t[L.V_SLIDEMASK + ty] = mask
        knight_leaper = set(p.leaps) >= set(KNIGHT)
        t[L.V_RELAYABLE + ty] = int(v.relay and p.letter not in "KN" and not knight_leaper)
        if p.letter != "K" and p.see <= 0:
            raise ValueError(f"{v.name}: piece {p.letter} needs a positive exchange value (Piece.see)")
        t[L.V_SEE + ty] = 0 if p.letter == "K" else p.see
    _compile_no_mate(v, t)
    t.setflags(write=False)
    return t


def _compile_castling(v, t: np.ndarray) -> None:
    """Castling squares and rights masks from the record's ``castling_*`` files (see
    :class:`variants.base.Variant`). Raises ``ValueError`` for a geometry the generator
    cannot play (pieces not on the back rank in the orthodox order, overlapping paths)."""
    kf = v.castling_king_file
    for side in range(2):
        rf, kt, rt = v.castling_rook_files[side], v.castling_king_to[side], v.castling_rook_to[side]
        files = (kf, rf, kt, rt)
        if not all(0 <= f < v.width for f in files):
            raise ValueError(f"{v.name}: castling files {files} off the board")
        if (rf > kf) != (side == 0) or rf == kf:
            raise ValueError(f"{v.name}: the king-side rook must stand right of the king, the queen-side one left")
        if len(set(files)) != 4:   # make/unmake move the king first, then the rook
            raise ValueError(f"{v.name}: castling needs four distinct files (king, rook and their destinations)")
    for colour in range(2):
        home = 0 if colour == L.WHITE else v.height - 1
        ksq = L.square(kf, home)
        t[L.V_CK_FROM + colour] = ksq
        t[L.V_CMASK + ksq] = 15 & ~(3 << (2 * colour))
        for side in range(2):
            c = 2 * colour + side
            rf, kt, rt = v.castling_rook_files[side], v.castling_king_to[side], v.castling_rook_to[side]
            t[L.V_CR_FROM + c] = L.square(rf, home)
            t[L.V_CK_TO + c] = L.square(kt, home)
            t[L.V_CR_TO + c] = L.square(rt, home)
            t[L.V_CMASK + L.square(rf, home)] = 15 & ~(1 << c)
            # every square either piece crosses or lands on, except where the two stand now
            span = set(_between(kf, kt)) | {kt} | set(_between(rf, rt)) | {rt}
            empty = sorted(span - {kf, rf})
            # the king may not stand in, cross or (legality test) land in check
            safe = [kf] + _between(kf, kt)
            assert len(empty) <= L.CASTLE_MAXSQ and len(safe) <= L.CASTLE_MAXSQ
            t[L.V_CEMPTY_N + c] = len(empty)
            for j, f in enumerate(empty):
                t[L.V_CEMPTY + c * L.CASTLE_MAXSQ + j] = L.square(f, home)
            t[L.V_CSAFE_N + c] = len(safe)
            for j, f in enumerate(safe):
                t[L.V_CSAFE + c * L.CASTLE_MAXSQ + j] = L.square(f, home)


def _between(a: int, b: int) -> list:
    """Files strictly between ``a`` and ``b``, walking from ``a``."""
    step = 1 if b > a else -1
    return list(range(a + step, b, step))


def _compile_no_mate(v, t: np.ndarray) -> None:
    """The record's insufficient-material sets (:class:`variants.base.NoMate`)."""
    sets = v.insufficient_material
    if len(sets) > L.MAX_NOMATE:
        raise ValueError(f"{v.name}: at most {L.MAX_NOMATE} insufficient-material sets")
    t[L.V_NNOMATE] = len(sets)
    for e, nm in enumerate(sets):
        for c, most in nm.pieces.items():
            if c == "K":
                raise ValueError(f"{v.name}: insufficient-material sets do not count kings")
            t[L.V_NOMATE + e * L.NTYPES + TYPE_OF_LETTER[c]] = 1000 if most is None else most
        mask = 0
        for c in nm.one_colour:
            mask |= 1 << TYPE_OF_LETTER[c]
        t[L.V_NOMATE_COLOUR + e] = mask
