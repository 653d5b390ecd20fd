"""Transposition table: a numpy structured array, probed and stored from numba.

Entry layout (``TT_DTYPE``, 16 bytes, one entry per slot)::

    key    int64   full Zobrist key (verifies the slot; the index is key & mask)
    move   int32   best / refutation move (packed, engine.rules.layout), 0 if none
    score  int16   score, mate scores stored relative to this node (ply-adjusted)
    eval   int16   static eval of the position (side to move's view), EVAL_NONE if not known; the
                   search writes it after a store (``tt[i].eval = ...``) and reuses it to skip ``evaluate``
    depth  int8    draft in plies (0: a quiescence result; the search never lets one replace a
                   deeper entry of the same position)
    flag   uint8   bits 0-1 bound (1 upper, 2 lower, 3 exact), bits 2-7 generation (search counter mod 64)

Replacement (depth-preferred with ageing, single slot): a store overwrites the
slot if the key differs and the slot is from an older search, or the new draft
is at least the old draft - 2, or the new bound is exact; for the same key it
always overwrites but keeps the old move when the new one is 0 (and the cached eval). Size: the
largest power of two of entries fitting ``hash_mb`` MiB.
"""
from __future__ import annotations

import numpy as np
from engine.rules.jit import njit

TT_DTYPE = np.dtype([("key", np.int64), ("move", np.int32), ("score", np.int16), ("eval", np.int16),
                     ("depth", np.int8), ("flag", np.uint8), ("pad", np.uint8, (2,))], align=False)
BOUND_UPPER, BOUND_LOWER, BOUND_EXACT = 1, 2, 3
EVAL_NONE = -32768   # the eval field holds no static eval (int16 minimum; evaluations stay far inside)
HASH_MIN_MB, HASH_MAX_MB = 1, 4096


def tt_alloc(hash_mb: int) -> np.ndarray:
    """A zeroed table of ``2**k`` entries, the largest fitting ``hash_mb`` MiB.

    Raises ``ValueError`` unless 1 <= hash_mb <= 4096.
    """
    if not isinstance(hash_mb, (int, np.integer)) or not HASH_MIN_MB <= hash_mb <= HASH_MAX_MB:
        raise ValueError(f"hash size {hash_mb!r} MiB out of range {HASH_MIN_MB}..{HASH_MAX_MB}")
    n = (hash_mb * 1024 * 1024) // TT_DTYPE.itemsize
    n = 1 << (int(n).bit_length() - 1)
    return np.zeros(n, dtype=TT_DTYPE)


@njit(cache=True, nogil=True)
def tt_probe(tt, key):
    """Index of the entry for ``key`` or -1."""
    i = key & (tt.shape[0] - 1)
    if tt[i].key == key and tt[i].flag != 0:
        return i
    return -1


@njit(cache=True, nogil=True)
def tt_store(tt, key, move, score, depth, bound, gen):
    """Store per the replacement scheme in the module docstring."""
    i = key & (tt.shape[0] - 1)
    e = tt[i]
    if e.key == key and e.flag != 0:
        if move == 0:
            move = e.move
    elif e.flag != 0 and ((e.flag >> 2) == gen) and depth < e.depth - 2 and bound != BOUND_EXACT:
        return
    if e.key != key:
        e.eval = EVAL_NONE   # the slot changes hands: the old position's eval is not ours
    e.key = key
    e.move = move
    e.score = score
    e.depth = depth
    e.flag = bound | (gen << 2)


def hashfull(tt: np.ndarray, gen: int) -> int:
    """Permille of the first 1000 slots used by the current search."""
    head = tt["flag"][:1000]
    return int(np.count_nonzero((head != 0) & ((head >> 2) == (gen & 63)))) * 1000 // max(1, len(head))
