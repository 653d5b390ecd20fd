"""Transposition table: a numpy structured array of 4-entry buckets, probed and stored from numba.

Entry layout (``TT_DTYPE``, 16 bytes)::

    key    int64   full Zobrist key (verifies the entry; the bucket is chosen by key & mask)
    move   int32   best / refutation move (packed, engine.rules.layout), 0 if none
    score  int16   score, mate scores stored relative to this node (ply-adjusted)
    eval   int16   static eval of the position (side to move's view), EVAL_NONE if not known;
                   stored with the entry so a revisit skips ``evaluate``
    depth  int8    draft in plies (0: a quiescence result)
    flag   uint8   bits 0-1 bound (1 upper, 2 lower, 3 exact), bits 2-7 generation (search counter mod 64)

Buckets (Stockfish's ``TTEntry`` clusters, tt.h/tt.cpp): ``BUCKET`` = 4 entries =
64 bytes, one cache line. :func:`tt_alloc` aligns the array so a bucket never
straddles two lines: a probe touches one line, and a node does one probe and one
store (:func:`tt_store` finds its entry again inside the same line). The search
prefetches that line (:func:`tt_prefetch`) as soon as it has made a move, so the
load overlaps the child's first steps (draw tests) instead of stalling its probe.
The key is checked on every entry, so a probe is exact up to 64-bit key collisions.

Replacement (:func:`tt_store`): the entry of the same key if the bucket holds one
(a draft-0 quiescence store never overwrites a deeper result of the same
position; a zero move keeps the old move; an unknown eval keeps the old eval);
else an empty entry; else the entry worth least, ``depth - 8 * age`` with ``age``
the number of searches since it was written (Stockfish's ``depth8 - 8 *
relative_age``): old and shallow results go first, and a store is never refused.

Size: the largest power of two of entries fitting ``hash_mb`` MiB.
Written without locks: with several search threads a store can interleave with
another thread's, so a move read from the TT is a hint that the search checks
for legality before playing it.
"""
from __future__ import annotations

import numpy as np
from engine.rules.jit import njit, nowrap, prefetch

TT_DTYPE = np.dtype([("key", np.int64), ("move", np.int32), ("score", np.int16), ("eval", np.int16),
                     ("depth", np.int8), ("flag", np.uint8), ("pad", np.uint8, (2,))], align=False)
BOUND_UPPER, BOUND_LOWER, BOUND_EXACT = 1, 2, 3
EVAL_NONE = -32768   # the eval field holds no static eval (int16 minimum; evaluations stay far inside)
HASH_MIN_MB, HASH_MAX_MB = 1, 4096
BUCKET = 4           # entries per bucket: 4 x 16 bytes = one 64-byte cache line
AGE_WEIGHT = 8       # replacement: one search of age outweighs 8 plies of draft (Stockfish's weight)
CACHE_LINE = 64


def tt_alloc(hash_mb: int) -> np.ndarray:
    """A zeroed table of ``2**k`` entries (``2**k / BUCKET`` buckets), the largest fitting
    ``hash_mb`` MiB, its data aligned to a 64-byte cache line.

    Raises ``ValueError`` unless 1 <= hash_mb <= 4096.
    """
    if not isinstance(hash_mb, (int, np.integer)) or not HASH_MIN_MB <= hash_mb <= HASH_MAX_MB:
        raise ValueError(f"hash size {hash_mb!r} MiB out of range {HASH_MIN_MB}..{HASH_MAX_MB}")
    n = (hash_mb * 1024 * 1024) // TT_DTYPE.itemsize
    n = 1 << (int(n).bit_length() - 1)
    raw = np.zeros(n * TT_DTYPE.itemsize + CACHE_LINE, dtype=np.uint8)   # spare bytes to align within
    skip = -raw.ctypes.data % CACHE_LINE
    return raw[skip:skip + n * TT_DTYPE.itemsize].view(TT_DTYPE)


@njit(cache=True, nogil=True)
def _bucket(tt, key):
    """Index of the first entry of ``key``'s bucket (its low bits, rounded down to a bucket)."""
    return key & ((tt.shape[0] - 1) & ~(BUCKET - 1))


@njit(cache=True, nogil=True)
def tt_probe(tt, key):
    """Index of the entry for ``key`` in its bucket, or -1."""
    b = _bucket(tt, key)
    for i in range(b, b + BUCKET):
        if tt[nowrap(i)].key == key and tt[nowrap(i)].flag != 0:
            return i
    return -1


@njit(cache=True, nogil=True)
def tt_prefetch(tt, key):
    """Start loading the bucket of ``key`` into the cache (Stockfish's ``TranspositionTable::first_entry``
    prefetch): called as soon as a move is made, so the child's probe finds its line loaded."""
    prefetch(tt, _bucket(tt, key))


@njit(cache=True, nogil=True)
def tt_store(tt, key, move, score, depth, bound, gen, static):
    """Store per the replacement scheme in the module docstring; ``static`` is the position's
    static eval or ``EVAL_NONE``. Returns the entry's index."""
    b = _bucket(tt, key)
    r = -1
    worst = 1 << 30
    for i in range(b, b + BUCKET):
        f = tt[nowrap(i)].flag
        if f == 0:
            if r < 0 or tt[nowrap(r)].flag != 0:
                r = i
                worst = -(1 << 30)
            continue
        if tt[nowrap(i)].key == key:
            r = i
            break
        v = np.int64(tt[nowrap(i)].depth) - AGE_WEIGHT * ((gen - (f >> 2)) & 63)
        if v < worst:
            worst = v
            r = i
    e = tt[nowrap(r)]
    if e.key == key and e.flag != 0:
        if move != 0:
            e.move = move
        if static != EVAL_NONE:
            e.eval = static
        if depth <= 0 < e.depth:
            return r      # a quiescence result never replaces a deeper one of the same position
    else:
        e.key = key
        e.move = move
        e.eval = static
    e.score = score
    e.depth = depth
    e.flag = bound | (gen << 2)
    return r


def hashfull(tt: np.ndarray, gen: int) -> int:
    """Permille of the first 1000 entries used by the current search."""
    head = tt["flag"][:1000]
    return int(np.count_nonzero((head != 0) & ((head >> 2) == (gen & 63)))) * 1000 // max(1, len(head))
