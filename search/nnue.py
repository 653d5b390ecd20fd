"""NNUE evaluation: an efficiently updatable perspective network, its numba inference and its file.

The network (the "simple" perspective network of Stockfish's and Fairy-Stockfish's first NNUE
generation, without their king buckets)::

    inputs  one per (piece type, colour relative to the perspective, square): NIN = 2 * NPT * NSQ
    acc[c]  = ftb + sum of ftw[i] over the active inputs i of perspective c     (the accumulator)
    h       = act(acc[stm]) ++ act(acc[other])                                   (2H values)
    out_cp  = scale * (ow . h + ob)

``NPT`` is the number of piece types of the variant (its record's ``pieces``, in type-code order
``P N B R Q K C A``), ``NSQ = width * height``: chess and knightrelay 2 * 6 * 64 = 768 inputs,
grand 2 * 8 * 100 = 1,600, capablanca 2 * 8 * 80 = 1,280. A new variant needs a net, not code.
Input index (:func:`feature_index`)::

    ((colour != c) * NPT + plane(type)) * NSQ + rank' * width + file

with ``rank' = rank`` for White's perspective (``c = 0``) and ``height - 1 - rank`` for Black's:
each side sees the board from its own first rank (mirrored vertically, not rotated, so a king
side stays a king side), its own pieces on the first ``NPT`` planes. ``act`` is the clipped
ReLU ``clamp(x, 0, 1)`` or its square (SCReLU). The output is White-or-Black neutral: the
side to move's accumulator comes first, so the net is evaluated from the side to move.

**Integers at play time** (:class:`NnueNet`): ``ftw`` and ``ftb`` are ``round(w * QA)`` as int16
(``QA = 255``: an accumulator of ``QA`` is the activation's 1.0), the accumulators int16, the
activation ``clamp(acc, 0, QA)`` (SCReLU: its square, in units of ``QA**2``), ``ow`` int16
``round(w * QB)`` (``QB = 1024``: output weights up to +-32), the output bias int64 in units of
``QA * QB`` (``QA**2 * QB``), the dot product in int64, and
``out_cp = round((dot + ob) * scale / (QA * QB))`` (``QA**2 * QB``). The integer accumulator is
exactly the sum of the quantized weights, so the integer forward pass equals the float forward
pass of the dequantized weights up to the final rounding (tests/test_nnue.py); the trainer clips
the feature weights so that no accumulator can leave the int16 range (:func:`quantize` and
:func:`read_net` check it with the variant's largest piece count).

**Accumulators** live in ``acc`` ``int16[rows, 2, H]`` (:func:`acc_alloc`), row = search ply,
``acc[row, c]`` perspective ``c`` (0 White, 1 Black): :func:`acc_push` writes the child's row
from its parent's and the move (copy plus the move's few added and removed inputs in one pass,
Stockfish's ``update_accumulator``), so an unmake costs nothing (the parent's row is still
there) and each search thread owns its stack. :func:`acc_move` updates one row in place (for
callers without a stack), :func:`acc_refresh` recomputes a row from the board. A move changes
at most two inputs each way: the moved piece leaves its square and arrives (promoted) on its
target, a captured piece (en passant: the pawn behind the target) leaves, a castling rook
moves; a relayed knight-jump is a normal move of the relayed piece. A null move copies the row
(:func:`acc_copy`). ``ftw`` carries one extra row of zeros (index ``NIN``): an absent change
adds it, so the update loop has no branches.

File format (:func:`write_net`, :func:`read_net`; little-endian)::

    magic     8 bytes  b"CRDLNNUE"
    version   u32      FORMAT_VERSION
    variant   u16 length + UTF-8 bytes   (canonical variant name)
    letters   u16 length + ASCII bytes   (the piece planes' letters, e.g. "PNBRQK")
    width     u16, height u16
    nin       u32      inputs (2 * len(letters) * width * height)
    hidden    u32      H
    act       u8       0 clipped ReLU, 1 squared clipped ReLU
    scale     i32      output scale (cp per unit of the float output)
    qa, qb    i32, i32 quantization scales
    ob        i64      output bias (quantized)
    ftw       int16[nin * H]   feature weights, input-major
    ftb       int16[H]         feature biases
    ow        int16[2 * H]     output weights (side to move's half first)
    crc32     u32      zlib.crc32 of every byte before it

A missing, truncated, corrupt or mismatched file raises :class:`NnueError`, a one-line message
naming the file (the engine then keeps the linear evaluation).
"""
from __future__ import annotations

import os
import struct
import zlib
from collections import namedtuple
from dataclasses import dataclass

import numpy as np

from engine.rules.jit import njit, nowrap, trailing_zeros
from engine.rules.layout import (field_offsets, NTYPES, STRIDE, SQ_MASK, MOVE_TO_SHIFT, MOVE_PROMO_SHIFT,
                                 MOVE_FLAGS_SHIFT, F_EP, F_CASTLE, EMPTY, S_SIDE, S_OCC, V_SQUARES, V_FILE, V_RANK,
                                 V_CR_FROM, V_CR_TO)
from engine.rules.movegen import castle_index
from engine.rules.tables import TYPE_OF_LETTER

MAGIC = b"CRDLNNUE"
FORMAT_VERSION = 1
ACT_CRELU = 0
ACT_SCRELU = 1
ACT_NAMES = ("crelu", "screlu")
QA = 255                 # feature-transformer scale: accumulator QA = activation 1.0
QB = 1024                # output-weight scale
DEFAULT_HIDDEN = 64
DEFAULT_SCALE = 400      # cp per unit of the float output
MAX_HIDDEN = 4096
MAX_FEATURES = 128       # buffer size for one perspective's active inputs (at most one per square)

# network description vector (int64[M_SIZE]), the first field of NnueNet
(M_NIN,          # inputs (the zero row of ftw is index M_NIN)
 M_H,            # hidden width
 M_WIDTH,        # board files
 M_HEIGHT,       # board ranks
 M_NSQ,          # width * height
 M_NPT,          # piece types (planes per colour)
 M_ACT,          # ACT_CRELU or ACT_SCRELU
 M_SCALE,        # output scale
 M_QA,           # quantization scales
 M_QB,
 M_DIV,          # QA * QB (crelu) or QA * QA * QB (screlu): the output's integer unit
 M_OB,           # output bias, in units of 1 / M_DIV
 M_PLANE,        # M_PLANE + type: the type's plane (0..NPT-1), -1 if not in the variant
 M_SIZE) = field_offsets(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, NTYPES)

# The play-time network, passed to the kernels as one argument (numba passes a namedtuple of
# arrays like separate arguments): meta int64[M_SIZE], ftw int16[NIN + 1, H] (last row zero),
# ftb int16[H], ow int16[2H].
NnueNet = namedtuple("NnueNet", "meta ftw ftb ow")


class NnueError(ValueError):
    """A network file that cannot be used: missing, truncated, corrupt or made for another
    variant or input layout. ``str()`` is one line naming the file."""


# ---------------------------------------------------------------- input layout

@dataclass(frozen=True)
class InputLayout:
    """The inputs of a variant's network: piece planes ``letters`` (type-code order),
    ``width`` x ``height`` squares, ``nin`` inputs, ``max_pieces`` (pieces at the start: no
    position has more, so no more active inputs per perspective)."""
    variant: str
    letters: str
    width: int
    height: int
    max_pieces: int

    @property
    def npt(self) -> int:
        return len(self.letters)

    @property
    def nsq(self) -> int:
        return self.width * self.height

    @property
    def nin(self) -> int:
        return 2 * self.npt * self.nsq

    def describe(self) -> str:
        return f"{self.nin} = 2 x {self.npt} ({self.letters}) x {self.width}x{self.height}"


def input_layout(variant: str) -> InputLayout:
    """The input layout of ``variant`` (name or alias) from its record. ``KeyError`` if unknown."""
    import variants
    v = variants.get(variant)
    letters = "".join(sorted((p.letter for p in v.pieces), key=lambda c: TYPE_OF_LETTER[c]))
    pieces = sum(1 for ch in v.start_fen.split()[0] if ch.isalpha())
    return InputLayout(v.name, letters, v.width, v.height, pieces)


def make_meta(layout: InputLayout, hidden: int, act: int = ACT_CRELU, scale: int = DEFAULT_SCALE,
              qa: int = QA, qb: int = QB, ob: int = 0) -> np.ndarray:
    """The description vector ``int64[M_SIZE]`` of a network (:data:`M_SIZE` layout)."""
    m = np.zeros(M_SIZE, dtype=np.int64)
    m[M_NIN] = layout.nin
    m[M_H] = hidden
    m[M_WIDTH] = layout.width
    m[M_HEIGHT] = layout.height
    m[M_NSQ] = layout.nsq
    m[M_NPT] = layout.npt
    m[M_ACT] = act
    m[M_SCALE] = scale
    m[M_QA] = qa
    m[M_QB] = qb
    m[M_DIV] = qa * qb * (qa if act == ACT_SCRELU else 1)
    m[M_OB] = ob
    m[M_PLANE:M_PLANE + NTYPES] = -1
    for i, c in enumerate(layout.letters):
        m[M_PLANE + TYPE_OF_LETTER[c]] = i
    return m


# ---------------------------------------------------------------- numba kernels

@njit(cache=True, nogil=True)
def feature_index(meta, vt, persp, p, sq):
    """The input of piece code ``p`` (not EMPTY) on mailbox square ``sq`` seen from perspective
    ``persp`` (0 White, 1 Black): module docstring."""
    f = vt[nowrap(V_FILE + sq)]
    r = vt[nowrap(V_RANK + sq)]
    if persp != 0:
        r = meta[M_HEIGHT] - 1 - r
    rel = ((p >> 4) ^ persp) & 1
    return (rel * meta[M_NPT] + meta[nowrap(M_PLANE + (p & 15))]) * meta[M_NSQ] + r * meta[M_WIDTH] + f


@njit(cache=True, nogil=True)
def active_features(meta, vt, board, st, persp, out):
    """The active inputs of perspective ``persp`` written to ``out[0:n]`` (pieces in board
    order); returns ``n``. ``out``: int32 or int64, at least the number of pieces long."""
    n = 0
    for wi in range(4):
        x = st[S_OCC + wi]
        while x != 0:
            s = vt[V_SQUARES + 64 * (wi & 1) + trailing_zeros(x)]
            x &= x - 1
            out[nowrap(n)] = feature_index(meta, vt, persp, board[nowrap(s)], s)
            n += 1
    return n


@njit(cache=True, nogil=True)
def move_changes(board, st, vt, m):
    """The pieces the move ``m`` (pseudo-legal, of the side to move, not yet made) puts and
    takes: ``(add1, add1_sq, add2, add2_sq, sub1, sub1_sq, sub2, sub2_sq)``, piece codes with
    their squares, EMPTY where there is none. The moved piece arrives (promoted) on its target
    and leaves its square; a captured piece (en passant: the pawn behind the target) leaves; a
    castling rook arrives and leaves."""
    frm = m & SQ_MASK
    to = (m >> MOVE_TO_SHIFT) & SQ_MASK
    promo = (m >> MOVE_PROMO_SHIFT) & 0xF
    flags = (m >> MOVE_FLAGS_SHIFT) & 0xF
    us = st[S_SIDE]
    p = np.int64(board[nowrap(frm)])
    np_ = p if promo == 0 else promo | (us << 4)
    capsq = to
    if (flags & F_EP) != 0:
        capsq = to - (STRIDE if us == 0 else -STRIDE)
    a2 = np.int64(EMPTY)
    a2s = np.int64(0)
    s2s = capsq
    s2 = np.int64(board[nowrap(capsq)])
    if (flags & F_CASTLE) != 0:
        c = castle_index(vt, us, to)
        rf = vt[nowrap(V_CR_FROM + c)]
        rt = vt[nowrap(V_CR_TO + c)]
        a2 = np.int64(board[nowrap(rf)])
        a2s = np.int64(rt)
        s2 = a2
        s2s = np.int64(rf)
    return np_, np.int64(to), a2, a2s, p, np.int64(frm), s2, s2s


@njit(cache=True, nogil=True)
def _row(meta, vt, persp, p, sq):
    """``feature_index`` of a change, or the zero row ``NIN`` for none (EMPTY)."""
    if p == EMPTY:
        return meta[M_NIN]
    return feature_index(meta, vt, persp, p, sq)


@njit(cache=True, nogil=True)
def _apply(net, vt, acc, src, dst, a1, a1s, a2, a2s, s1, s1s, s2, s2s):
    """``acc[dst] = acc[src]`` plus the inputs of pieces ``a1``, ``a2`` minus those of ``s1``,
    ``s2`` (each with its square; EMPTY for none), both perspectives, one pass per row."""
    meta = net.meta
    ftw = net.ftw
    H = meta[M_H]
    for c in range(2):
        i1 = _row(meta, vt, c, a1, a1s)
        i2 = _row(meta, vt, c, a2, a2s)
        j1 = _row(meta, vt, c, s1, s1s)
        j2 = _row(meta, vt, c, s2, s2s)
        for h in range(H):
            acc[nowrap(dst), c, h] = (acc[nowrap(src), c, h] + ftw[nowrap(i1), h] + ftw[nowrap(i2), h]
                                      - ftw[nowrap(j1), h] - ftw[nowrap(j2), h])


@njit(cache=True, nogil=True)
def acc_push(net, vt, board, st, acc, ply, m):
    """Write row ``ply + 1`` of the accumulator stack ``acc`` from row ``ply`` and the move
    ``m`` about to be made on ``board``/``st`` (call before make_move). Unmaking the move
    needs nothing: row ``ply`` is unchanged."""
    a1, a1s, a2, a2s, s1, s1s, s2, s2s = move_changes(board, st, vt, m)
    _apply(net, vt, acc, ply, ply + 1, a1, a1s, a2, a2s, s1, s1s, s2, s2s)


@njit(cache=True, nogil=True)
def acc_move(net, vt, board, st, acc, row, m, undo):
    """Update row ``row`` in place for the move ``m``: ``undo`` False before make_move (the
    move's changes added), True after unmake_move (taken back); the board is the position
    before the move both times."""
    a1, a1s, a2, a2s, s1, s1s, s2, s2s = move_changes(board, st, vt, m)
    if undo:
        _apply(net, vt, acc, row, row, s1, s1s, s2, s2s, a1, a1s, a2, a2s)
    else:
        _apply(net, vt, acc, row, row, a1, a1s, a2, a2s, s1, s1s, s2, s2s)


@njit(cache=True, nogil=True)
def acc_copy(net, acc, src, dst):
    """Row ``dst`` = row ``src`` (a null move changes no input)."""
    H = net.meta[M_H]
    for c in range(2):
        for h in range(H):
            acc[nowrap(dst), c, h] = acc[nowrap(src), c, h]


@njit(cache=True, nogil=True)
def acc_refresh(net, vt, board, st, acc, row):
    """Recompute row ``row`` of ``acc`` from the board: biases plus every piece's input."""
    meta = net.meta
    ftw = net.ftw
    ftb = net.ftb
    H = meta[M_H]
    for c in range(2):
        for h in range(H):
            acc[nowrap(row), c, h] = ftb[h]
    for wi in range(4):
        x = st[S_OCC + wi]
        while x != 0:
            s = vt[V_SQUARES + 64 * (wi & 1) + trailing_zeros(x)]
            x &= x - 1
            p = board[nowrap(s)]
            for c in range(2):
                i = feature_index(meta, vt, c, p, s)
                for h in range(H):
                    acc[nowrap(row), c, h] += ftw[nowrap(i), h]


@njit(cache=True, nogil=True)
def nnue_evaluate(net, acc, row, stm):
    """The network's output in centipawns for the side to move ``stm`` from accumulator row
    ``row`` (integer forward pass; module docstring)."""
    meta = net.meta
    ow = net.ow
    H = meta[M_H]
    qa = meta[M_QA]
    o = 1 - stm
    s = np.int64(0)
    if meta[M_ACT] == ACT_SCRELU:
        for h in range(H):
            a = min(max(np.int64(acc[nowrap(row), nowrap(stm), h]), 0), qa)
            b = min(max(np.int64(acc[nowrap(row), nowrap(o), h]), 0), qa)
            s += a * a * ow[h] + b * b * ow[nowrap(H + h)]
    else:
        for h in range(H):
            a = min(max(np.int64(acc[nowrap(row), nowrap(stm), h]), 0), qa)
            b = min(max(np.int64(acc[nowrap(row), nowrap(o), h]), 0), qa)
            s += a * ow[h] + b * ow[nowrap(H + h)]
    d = meta[M_DIV]
    return ((s + meta[M_OB]) * meta[M_SCALE] + d // 2) // d


# ---------------------------------------------------------------- Python side

def dummy_net() -> NnueNet:
    """A one-unit network of zeros: what the search is given while it evaluates without a
    network (the same numba types as a real net's, so one compiled search serves both)."""
    meta = np.zeros(M_SIZE, dtype=np.int64)
    meta[M_H] = 1
    meta[M_DIV] = 1
    return NnueNet(meta, np.zeros((1, 1), np.int16), np.zeros(1, np.int16), np.zeros(2, np.int16))


def play_net(net: NnueNet) -> NnueNet:
    """``net`` with every array C-contiguous and writeable, as the compiled search takes them
    (a read-only or strided array would be another numba type: another compile)."""
    return NnueNet(*(np.require(a, dtype=d, requirements=("C", "W"))
                     for a, d in zip(net, (np.int64, np.int16, np.int16, np.int16))))


def net_summary(net: NnueNet) -> str:
    """``1600x64 crelu``: inputs, hidden width and activation of ``net`` (for messages)."""
    m = net.meta
    return f"{int(m[M_NIN])}x{int(m[M_H])} {ACT_NAMES[int(m[M_ACT])]}"


def acc_alloc(net: NnueNet, rows: int) -> np.ndarray:
    """A zeroed accumulator stack ``int16[rows, 2, H]`` (one per search thread)."""
    return np.zeros((rows, 2, int(net.meta[M_H])), dtype=np.int16)


def evaluate_position(net: NnueNet, pos) -> int:
    """The network's integer output (cp, side to move) for an ``engine.Position``, from a fresh
    accumulator."""
    acc = acc_alloc(net, 1)
    acc_refresh(net, pos.vt, pos.board, pos.st, acc, 0)
    return int(nnue_evaluate(net, acc, 0, int(pos.st[S_SIDE])))


def position_features(meta: np.ndarray, pos):
    """``(white, black, stm)``: the active inputs (int64 arrays) of both perspectives and the
    side to move of an ``engine.Position``."""
    out = np.zeros(MAX_FEATURES, dtype=np.int64)
    n = active_features(meta, pos.vt, pos.board, pos.st, 0, out)
    w = out[:n].copy()
    n = active_features(meta, pos.vt, pos.board, pos.st, 1, out)
    return w, out[:n].copy(), int(pos.st[S_SIDE])


@dataclass
class FloatNet:
    """The float network (training, and the reference of the integer one): ``ftw``
    float[NIN, H], ``ftb`` float[H], ``ow`` float[2H] (side to move first), ``ob`` float;
    ``act`` ACT_CRELU/ACT_SCRELU; ``scale`` cp per output unit."""
    variant: str
    ftw: np.ndarray
    ftb: np.ndarray
    ow: np.ndarray
    ob: float
    act: int = ACT_CRELU
    scale: int = DEFAULT_SCALE

    @property
    def hidden(self) -> int:
        return int(self.ftb.shape[0])

    @classmethod
    def random(cls, variant: str, hidden: int = DEFAULT_HIDDEN, act: int = ACT_CRELU, seed: int = 0,
               ft_std: float = 0.1, scale: int = DEFAULT_SCALE) -> "FloatNet":
        """Random weights (tests, and the trainer's start): feature weights N(0, ft_std),
        biases around the middle of the activation, output weights N(0, 1/sqrt(2H))."""
        lay = input_layout(variant)
        rng = np.random.default_rng(seed)
        return cls(lay.variant, rng.normal(0.0, ft_std, (lay.nin, hidden)),
                   rng.uniform(0.2, 0.6, hidden), rng.normal(0.0, 1.0 / np.sqrt(2 * hidden), 2 * hidden),
                   0.0, act, scale)

    def forward(self, white, black, stm) -> np.ndarray:
        """Outputs in cp (side to move), float64[n], for positions given as padded input
        arrays ``white``/``black`` int[n, k] (pad value NIN: no input) and ``stm`` int[n]."""
        w = np.vstack([np.asarray(self.ftw, np.float64), np.zeros((1, self.hidden))])
        aw = self.ftb + w[np.asarray(white)].sum(axis=1)
        ab = self.ftb + w[np.asarray(black)].sum(axis=1)
        stm = np.asarray(stm)[:, None]
        a_s = np.where(stm == 0, aw, ab)
        a_o = np.where(stm == 0, ab, aw)
        h_s, h_o = activate(a_s, self.act), activate(a_o, self.act)
        H = self.hidden
        return self.scale * (h_s @ self.ow[:H] + h_o @ self.ow[H:] + self.ob)


def activate(x, act: int):
    """The float activation: ``clamp(x, 0, 1)``, squared for SCReLU."""
    c = np.clip(x, 0.0, 1.0)
    return c * c if act == ACT_SCRELU else c


def pad_features(lists, nin: int) -> np.ndarray:
    """Input lists (one int array per position) as one int64[n, k] array padded with ``nin``."""
    k = max((len(x) for x in lists), default=0)
    out = np.full((len(lists), max(k, 1)), nin, dtype=np.int64)
    for i, x in enumerate(lists):
        out[i, :len(x)] = x
    return out


def _check_ranges(ftw, ftb, ow, layout: InputLayout) -> str | None:
    """Why the integer weights cannot run (None if they can): an accumulator could leave int16."""
    top = np.sort(np.abs(ftw.astype(np.int64)), axis=0)[-layout.max_pieces:].sum(axis=0) if len(ftw) else 0
    worst = int(np.max(np.abs(ftb.astype(np.int64)) + top, initial=0))
    if worst > 32767:
        return f"its feature weights can overflow the int16 accumulator ({worst} > 32767 with {layout.max_pieces} pieces)"
    return None


def quantize(fnet: FloatNet, qa: int = QA, qb: int = QB) -> NnueNet:
    """The integer network of ``fnet`` (module docstring). Raises ``ValueError`` if a weight
    does not fit its integer type or an accumulator could overflow."""
    lay = input_layout(fnet.variant)
    H = fnet.hidden
    if fnet.ftw.shape != (lay.nin, H) or fnet.ow.shape != (2 * H,):
        raise ValueError(f"weights of shape {fnet.ftw.shape}/{fnet.ow.shape} do not fit {lay.describe()}, H={H}")
    ftw = np.round(np.asarray(fnet.ftw, np.float64) * qa)
    ftb = np.round(np.asarray(fnet.ftb, np.float64) * qa)
    ow = np.round(np.asarray(fnet.ow, np.float64) * qb)
    for name, a in (("feature", ftw), ("feature bias", ftb), ("output", ow)):
        if a.size and np.max(np.abs(a)) > 32767:
            raise ValueError(f"{name} weights beyond the int16 range after quantization (max |w| {np.max(np.abs(a)) / (qb if name == 'output' else qa):.3g})")
    div = qa * qb * (qa if fnet.act == ACT_SCRELU else 1)
    ob = int(round(float(fnet.ob) * div))
    ftw16 = np.zeros((lay.nin + 1, H), dtype=np.int16)
    ftw16[:lay.nin] = ftw.astype(np.int16)
    why = _check_ranges(ftw16[:lay.nin], ftb.astype(np.int16), ow, lay)
    if why:
        raise ValueError(why)
    meta = make_meta(lay, H, fnet.act, int(fnet.scale), qa, qb, ob)
    return NnueNet(meta, ftw16, ftb.astype(np.int16), ow.astype(np.int16))


def dequantize(net: NnueNet, variant: str) -> FloatNet:
    """The float network whose weights are exactly the integer ones' values (:func:`quantize`'s
    inverse up to rounding)."""
    m = net.meta
    qa, qb, nin = int(m[M_QA]), int(m[M_QB]), int(m[M_NIN])
    return FloatNet(input_layout(variant).variant, net.ftw[:nin].astype(np.float64) / qa,
                    net.ftb.astype(np.float64) / qa, net.ow.astype(np.float64) / qb,
                    float(m[M_OB]) / float(m[M_DIV]), int(m[M_ACT]), int(m[M_SCALE]))


# ---------------------------------------------------------------- file format

_FIXED = struct.Struct("<HHIIBiiiq")    # width height nin hidden act scale qa qb ob


def net_bytes(net: NnueNet, variant: str) -> bytes:
    """The file contents of ``net`` for ``variant`` (module docstring)."""
    lay = input_layout(variant)
    m = net.meta
    if int(m[M_NIN]) != lay.nin:
        raise ValueError(f"a net of {int(m[M_NIN])} inputs is not one for {lay.variant} ({lay.describe()})")
    H = int(m[M_H])
    name = lay.variant.encode("utf-8")
    parts = [MAGIC, struct.pack("<I", FORMAT_VERSION),
             struct.pack("<H", len(name)), name,
             struct.pack("<H", len(lay.letters)), lay.letters.encode("ascii"),
             _FIXED.pack(lay.width, lay.height, lay.nin, H, int(m[M_ACT]), int(m[M_SCALE]), int(m[M_QA]),
                         int(m[M_QB]), int(m[M_OB])),
             np.ascontiguousarray(net.ftw[:lay.nin], dtype="<i2").tobytes(),
             np.ascontiguousarray(net.ftb, dtype="<i2").tobytes(),
             np.ascontiguousarray(net.ow, dtype="<i2").tobytes()]
    body = b"".join(parts)
    return body + struct.pack("<I", zlib.crc32(body))


def write_net(path: str, net: NnueNet, variant: str) -> None:
    """Write ``net`` to ``path`` (atomically: a temporary file renamed over it)."""
    data = net_bytes(net, variant)
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)


def read_net(path: str, variant: str | None = None) -> NnueNet:
    """Read a network file; with ``variant``, check that it is a net for that variant (name and
    input layout). Raises :class:`NnueError` (one line, naming ``path``) for a missing,
    unreadable, truncated, corrupt or mismatched file."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        raise NnueError(f"{path}: no such network file") from None
    except OSError as e:
        raise NnueError(f"{path}: cannot read the network file ({e.strerror or e})") from None
    return parse_net(data, variant, path)


def parse_net(data: bytes, variant: str | None = None, path: str = "<bytes>") -> NnueNet:
    """:func:`read_net` on the file's contents."""
    def fail(why):
        return NnueError(f"{path}: {why}")

    if len(data) < len(MAGIC) or data[:len(MAGIC)] != MAGIC:
        if MAGIC.startswith(data):
            raise fail(f"truncated network file ({len(data)} bytes)")
        raise fail("not a Cardinal NNUE network file (bad magic)")
    off = len(MAGIC)

    def take(n):
        nonlocal off
        if off + n > len(data):
            raise fail(f"truncated network file ({len(data)} bytes, header incomplete)")
        b = data[off:off + n]
        off += n
        return b

    (version,) = struct.unpack("<I", take(4))
    if version != FORMAT_VERSION:
        raise fail(f"network format version {version}, this engine reads version {FORMAT_VERSION}")
    try:
        (n,) = struct.unpack("<H", take(2))
        name = take(n).decode("utf-8")
        (n,) = struct.unpack("<H", take(2))
        letters = take(n).decode("ascii")
    except UnicodeDecodeError:
        raise fail("corrupt network file (bad variant or piece names)") from None
    width, height, nin, H, act, scale, qa, qb, ob = _FIXED.unpack(take(_FIXED.size))
    if not 1 <= H <= MAX_HIDDEN or act not in (ACT_CRELU, ACT_SCRELU) or scale <= 0 or qa <= 0 or qb <= 0:
        raise fail(f"corrupt network header (hidden {H}, activation {act}, scale {scale}, qa {qa}, qb {qb})")
    if nin != 2 * len(letters) * width * height:
        raise fail(f"corrupt network header ({nin} inputs for pieces {letters!r} on {width}x{height})")
    total = off + 2 * (nin * H + H + 2 * H) + 4
    if len(data) < total:
        raise fail(f"truncated network file ({len(data)} bytes, {total} expected)")
    if len(data) > total:
        raise fail(f"trailing data in the network file ({len(data)} bytes, {total} expected)")
    (crc,) = struct.unpack("<I", data[total - 4:total])
    if zlib.crc32(data[:total - 4]) != crc:
        raise fail("corrupt network file (checksum mismatch)")
    try:
        lay = input_layout(variant if variant is not None else name)
    except KeyError:
        raise fail(f"unknown variant {variant if variant is not None else name!r}") from None
    if name != lay.variant:
        raise fail(f"a network for {name}, not {lay.variant}")
    if (letters, width, height) != (lay.letters, lay.width, lay.height):
        raise fail(f"inputs {nin} = 2 x {len(letters)} ({letters}) x {width}x{height} do not match "
                   f"{lay.variant}'s {lay.describe()}")
    a = np.frombuffer(data, dtype="<i2", count=nin * H + 3 * H, offset=off).astype(np.int16)
    ftw = np.zeros((nin + 1, H), dtype=np.int16)
    ftw[:nin] = a[:nin * H].reshape(nin, H)
    ftb = a[nin * H:nin * H + H].copy()
    ow = a[nin * H + H:].copy()
    why = _check_ranges(ftw[:nin], ftb, ow, lay)
    if why:
        raise fail(why)
    return NnueNet(make_meta(lay, H, act, scale, qa, qb, ob), ftw, ftb, ow)


def read_variant(path: str) -> str:
    """The canonical name of the variant a network file (that :func:`read_net` accepts) is for."""
    with open(path, "rb") as fh:
        head = fh.read(len(MAGIC) + 6 + 0xFFFF)
    off = len(MAGIC) + 4
    (n,) = struct.unpack("<H", head[off:off + 2])
    return input_layout(head[off + 2:off + 2 + n].decode("utf-8")).variant


def net_path(variant: str) -> str:
    """``variants/weights/<variant>.nnue``: where a variant's shipped network lives."""
    from search.eval import WEIGHTS_DIR
    return os.path.join(WEIGHTS_DIR, f"{input_layout(variant).variant}.nnue")
