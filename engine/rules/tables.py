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
    for r in range(v.height):
        for f in range(v.width):
            sq = L.square(f, r)
            t[L.V_SQUARES + n] = sq
            t[L.V_FILE + sq] = f
            t[L.V_RANK + sq] = r
            n += 1
    t[L.V_NSQUARES] = n
    t[L.V_CMASK:L.V_CMASK + L.NSQ] = 15
    if v.castling:
        top = v.height - 1
        for sq, keep in ((L.square(4, 0), 15 & ~3), (L.square(7, 0), 15 & ~1), (L.square(0, 0), 15 & ~2),
                         (L.square(4, top), 15 & ~12), (L.square(7, top), 15 & ~4), (L.square(0, top), 15 & ~8)):
            t[L.V_CMASK + sq] = keep
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
    t[L.V_INSUF] = {"chess": 0, "grand": 1, "knightrelay": 2}[v.insufficient]
    t.setflags(write=False)
    return t
