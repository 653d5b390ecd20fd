"""The numba kernels of the network trainer (:mod:`bench.tune.nnue`): FENs to active inputs,
the loss and gradient of a batch, and the Adam step.

A module of its own so that editing the trainer's Python (:mod:`bench.tune.nnue`) keeps numba's
compiled cache (:mod:`engine.rules.cache` keys it by the modules with compiled code).

Inputs are padded int arrays ``W``/``B`` ``[n, k]`` (White's and Black's perspective), every
row's active inputs first and then the pad value ``nin`` (as :func:`parse_fens` writes them):
the kernels stop a row at its first pad. The training kernel reads ``W`` only: Black's input of
a piece is White's of the colour-swapped, vertically mirrored piece (:func:`bench.tune.nnue.flip_table`). The network is the float model of :mod:`search.nnue`
(module docstring of :mod:`bench.tune.nnue` for the loss); every array is float64 and
C-contiguous, ``ftw`` ``[nin + 1, H]`` with its zero row ``nin``.
"""
from __future__ import annotations

import math

import numpy as np

from engine.rules.jit import njit, nowrap, prefetch

# batch_loss may reassociate sums (vectorized dot products; float noise only) and contract to FMA
FAST = {"reassoc", "contract"}

# parse_fens error codes (0: good)
FEN_OK = 0
FEN_RANKS = 1          # not as many ranks as the board has
FEN_FILES = 2          # a rank with more or fewer files than the board
FEN_LETTER = 3         # a character that is no piece of the variant
FEN_KINGS = 4          # not exactly one king a side
FEN_PAWN = 5           # a pawn on the first or last rank
FEN_HOLDINGS = 6       # an unclosed holdings block [...]
FEN_SIDE = 7           # no side-to-move field 'w' or 'b'
FEN_PIECES = 8         # more pieces than the input arrays hold (the start position's count)


@njit(cache=True, nogil=True)
def _space(c):
    return c == 32 or c == 9 or c == 10 or c == 13


@njit(cache=True, nogil=True)
def parse_fens(buf, starts, ends, plane_of, king_plane, pawn_plane, npt, width, height, W, B, stm, out):
    """The active inputs of FENs ``buf[starts[i]:ends[i]]`` (ASCII bytes, uint8) for both
    perspectives (:func:`search.nnue.feature_index`), written to ``W[i, :m]``/``B[i, :m]`` in
    board order (the rest of the row is left as it is: the caller fills it with the pad value),
    and the side to move to ``stm[i]`` (``B`` with no rows: White's only). ``plane_of[c]``: the plane of the piece letter ``c``
    (either case; -1: none). Reads the board field (with an optional holdings block, which is
    ignored) and the side to move, checked as :func:`engine.rules.fen.parse_board` and
    ``Position.set_fen`` check them (shape, letters, one king a side, no pawn on a back rank);
    the later fields are not read. Returns ``-1`` when every FEN is good, else the index of the
    first bad one, with its error code (``FEN_*``) in ``out[0]``."""
    n = starts.shape[0]
    kmax = W.shape[1]
    black = B.shape[0] > 0
    nsq = width * height
    for i in range(n):
        p = starts[i]
        e = ends[i]
        while p < e and _space(buf[p]):
            p += 1
        rank = height - 1
        f = 0
        cnt = 0
        kw = 0
        kb = 0
        code = FEN_OK
        while p < e:
            c = buf[p]
            if _space(c) or c == 91:            # '['
                break
            if c == 47:                         # '/'
                if f != width:
                    code = FEN_FILES
                    break
                rank -= 1
                if rank < 0:
                    code = FEN_RANKS
                    break
                f = 0
                p += 1
                continue
            if 48 <= c <= 57:                   # an empty run, perhaps of two digits
                k = 0
                while p < e and 48 <= buf[p] <= 57:
                    k = 10 * k + (buf[p] - 48)
                    p += 1
                    if k > width:
                        break
                if k == 0 or f + k > width:
                    code = FEN_FILES
                    break
                f += k
                continue
            pl = plane_of[c] if c < 128 else -1
            if pl < 0:
                code = FEN_LETTER
                break
            if f >= width:
                code = FEN_FILES
                break
            col = 1 if c >= 97 else 0
            if pl == king_plane:
                if col == 0:
                    kw += 1
                else:
                    kb += 1
            if pl == pawn_plane and (rank == 0 or rank == height - 1):
                code = FEN_PAWN
                break
            if cnt >= kmax:
                code = FEN_PIECES
                break
            W[i, cnt] = (col * npt + pl) * nsq + rank * width + f
            if black:
                B[i, cnt] = ((1 - col) * npt + pl) * nsq + (height - 1 - rank) * width + f
            cnt += 1
            f += 1
            p += 1
        if code == FEN_OK and rank != 0:
            code = FEN_RANKS
        if code == FEN_OK and f != width:
            code = FEN_FILES
        if code == FEN_OK and (kw != 1 or kb != 1):
            code = FEN_KINGS
        if code == FEN_OK:
            # a holdings block, attached to the board or the next field: skipped
            while p < e and _space(buf[p]):
                p += 1
            if p < e and buf[p] == 91:
                while p < e and buf[p] != 93:   # ']'
                    p += 1
                if p == e:
                    code = FEN_HOLDINGS
                p += 1
                while p < e and _space(buf[p]):
                    p += 1
        if code == FEN_OK:
            if p < e and (buf[p] == 119 or buf[p] == 98) and (p + 1 == e or _space(buf[p + 1])):
                stm[i] = 0 if buf[p] == 119 else 1
            else:
                code = FEN_SIDE
        if code != FEN_OK:
            out[0] = code
            return i
    return -1


AHEAD = 8      # positions ahead whose inputs batch_loss prefetches (a shuffled batch reads rows all over W)


@njit(cache=True, nogil=True, fastmath=FAST)
def batch_loss(ix, W, k, flip, stm, target, ftw, ftb, ow, ob, act, scale, ks, kc, grad, acc, gftw, gftb, gow, gob):
    """The sum over the positions ``ix`` of ``(sigmoid(out_white) - target) ** 2``; with
    ``grad``, the gradient of its mean over the positions (the batch's loss) is *added* to
    ``gftw``/``gftb``/``gow``/``gob`` (only the rows of ``gftw`` of active inputs are touched).
    ``W``: White's padded inputs flattened (position ``i``'s at ``i * k``); Black's are
    ``flip[W]`` (:func:`bench.tune.nnue.flip_table`: half the bytes to fetch per position). ``ks = 0.5 * K *
    ln 10 / 400`` and ``kc = K * ln 10 / 400`` (the sigmoid is ``0.5 * (1 + tanh(ks * s))``, its
    derivative ``kc * p * (1 - p)``), ``acc`` ``[4, H]`` scratch. ``ftw``, ``gftw`` and ``acc``
    share a dtype, float64 or float32 (the hot data: float32 halves the bytes moved per input);
    the other arrays are float64 and so are the dot product, loss and gradient of the output."""
    n = ix.shape[0]
    H = ftb.shape[0]
    nin = ftw.shape[0] - 1
    inv = 2.0 / n
    sse = 0.0
    for t in range(n):
        if t + AHEAD < n:
            q = ix[t + AHEAD] * k
            prefetch(W, q)
            prefetch(W, q + k - 1)
            prefetch(stm, ix[t + AHEAD])
            prefetch(target, ix[t + AHEAD])
        i = ix[t]
        base = i * k
        for h in range(H):
            acc[0, h] = ftb[h]
            acc[1, h] = ftb[h]
        for j in range(k):
            fi = W[nowrap(base + j)]
            if fi >= nin:
                break
            for h in range(H):
                acc[0, h] += ftw[nowrap(fi), h]
        for j in range(k):
            fi = W[nowrap(base + j)]
            if fi >= nin:
                break
            fi = flip[nowrap(fi)]
            for h in range(H):
                acc[1, h] += ftw[nowrap(fi), h]
        us = 1 if stm[nowrap(i)] != 0 else 0
        them = 1 - us
        dot = 0.0
        for h in range(H):
            x = min(max(acc[us, h], 0.0), 1.0)
            y = min(max(acc[them, h], 0.0), 1.0)
            if act == 1:
                x = x * x
                y = y * y
            dot += x * ow[h] + y * ow[H + h]
        out = scale * (dot + ob[0])
        sign = 1.0 - 2.0 * us
        pred = 0.5 * (1.0 + math.tanh(ks * (out * sign)))
        d = pred - target[nowrap(i)]
        sse += d * d
        if not grad:
            continue
        g = inv * d * pred * (1.0 - pred) * kc * sign * scale      # d loss / d (out / scale)
        gob[0] += g
        for h in range(H):
            x = min(max(acc[us, h], 0.0), 1.0)
            y = min(max(acc[them, h], 0.0), 1.0)
            if act == 1:
                x = x * x
                y = y * y
            gow[h] += x * g
            gow[H + h] += y * g
        for half in range(2):
            c = us if half == 0 else them
            o = half * H
            for h in range(H):
                a = acc[c, h]
                da = g * ow[o + h] if (a > 0.0) & (a < 1.0) else 0.0
                if act == 1:
                    da *= 2.0 * a
                acc[2 + c, h] = da
        for h in range(H):
            gftb[h] += acc[2, h] + acc[3, h]
        for j in range(k):
            fi = W[nowrap(base + j)]
            if fi >= nin:
                break
            for h in range(H):
                gftw[nowrap(fi), h] += acc[2, h]
        for j in range(k):
            fi = W[nowrap(base + j)]
            if fi >= nin:
                break
            fi = flip[nowrap(fi)]
            for h in range(H):
                gftw[nowrap(fi), h] += acc[3, h]
    return sse


@njit(cache=True, nogil=True)
def adam(p, g, m, v, lr, b1, b2, c1, c2, eps, lim, q):
    """One Adam step of the flat parameters ``p`` with gradient ``g`` and moments ``m``, ``v``
    (``c1``, ``c2``: the bias corrections ``1 - beta ** t``), then ``p`` clipped to
    ``[-lim, lim]``; ``g`` is zeroed (ready for the next batch's sum). ``q`` (if not empty): a
    copy of ``p`` in another dtype (float32) to write the new values to."""
    a1 = 1.0 - b1
    a2 = 1.0 - b2
    mirror = q.shape[0] == p.shape[0]
    for i in range(p.shape[0]):
        gi = np.float64(g[i])
        mi = b1 * m[i] + a1 * gi
        vi = b2 * v[i] + a2 * gi * gi
        m[i] = mi
        v[i] = vi
        x = p[i] - lr * (mi / c1) / (math.sqrt(vi / c2) + eps)
        x = min(max(x, -lim), lim)
        p[i] = x
        if mirror:
            q[i] = x
        g[i] = 0.0
