"""Training a network for the NNUE evaluation (:mod:`search.nnue`) with numba kernels, from tuning data files.

Data: the positions of data files written by ``cardinal tune datagen`` (or ``teacher``/``pgn``;
format :mod:`bench.tune.datafile`): FEN, game result and search score, both from White's view.
Every FEN becomes its active inputs for both perspectives (:func:`encode`); a validation set of
whole games (:func:`bench.tune.texel.split_by_game`) is held out.

Model: :class:`search.nnue.FloatNet` (float64 here: the weights, Adam's moments, checkpoints). Loss (the field's, as the Texel fit's):
the mean over positions of ``(sigmoid(out_white) - target) ** 2`` with
``target = lam * result + (1 - lam) * sigmoid(score)`` (``lam`` weighs the game result, as the
Texel fit's ``--lambda``; nnue-pytorch writes the blend the other way round) and ``sigmoid``
Texel's ``1 / (1 + 10 ** (-K * s / 400))`` on centipawns (:func:`bench.tune.texel.sigmoid`); ``K`` is
fitted to the training scores and results (:func:`bench.tune.texel.fit_scale`) unless given,
and the same ``K`` maps the net's output, so the net is trained in the search score's
centipawns. Gradients by hand in numba kernels (:mod:`bench.tune.nnue_kernels`: per position the
sum of the active inputs' weight rows of both perspectives, and back the hidden gradients added
to those rows only), Adam over all the weights (dense, every step), minibatches shuffled with
the seed. After each step the feature weights and biases are clipped so that no
accumulator of the integer net can leave int16 (:func:`ft_clip`: 32767 over ``QA`` times the
variant's piece count plus one), the output weights to the int16 range of their scale.

**Speed.** Per position the kernels fetch one row of White's inputs (int16; Black's are
:func:`flip_table` of them), add about 2 x 26 rows of ``ftw`` (grand midgame) and, training, add
the hidden gradients back to the same rows; Adam then runs over every weight once per batch.
The rows are read from a float32 copy of ``ftw`` (kept by Adam) and the gradient of ``ftw`` is
summed in float32 (:data:`HOT_DTYPE`): half the bytes, so that ``ftw`` and its gradient stay in
a core's L2 cache; the accumulators, dot product, loss and Adam are float64 as before. That
changes the results by float32 rounding only (on 33k grand positions, 20 epochs: the
validation losses of the float64 path, which are the numpy trainer's to 1e-9, within 3e-4
relative); ``float64=True`` (``--float64``) keeps everything float64, about 1.5 times slower.
Measured (CPU time, grand, H = 64, batch 1024, a 2-core machine busy with a match): the numpy
trainer ~0.1-0.2 M positions/s per epoch, these kernels ~0.7-1.0 M (float32), encode ~1.5 M
FENs/s against ~10 k.

Each epoch ends with the validation loss and a checkpoint (``.npz``: weights, Adam moments,
epoch, loss history, settings); ``resume`` continues from it. The exported net is the epoch
with the lowest validation loss, quantized (:func:`search.nnue.quantize`) and written in the
network file format (:func:`search.nnue.write_net`).
"""
from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from search import nnue as N
from bench.tune import nnue_kernels as K_
from bench.tune.datafile import read_data
from bench.tune.texel import LN10, fit_scale, sigmoid, split_by_game

DEFAULT_HIDDEN = N.DEFAULT_HIDDEN
DEFAULT_EPOCHS = 30
DEFAULT_BATCH = 1024
DEFAULT_LR = 1e-3
DEFAULT_LAMBDA = 0.5         # the weight of the game result in the target, as the Texel fit's
DEFAULT_VAL = 0.1
BETAS = (0.9, 0.999)
ADAM_EPS = 1e-8
CHECKPOINT_VERSION = 1


def ft_clip(variant: str) -> float:
    """The largest feature weight and bias (float) with which no accumulator of the integer net
    overflows int16: every piece of the start position and the bias at the limit (5% spare)."""
    lay = N.input_layout(variant)
    return 0.95 * 32767 / (N.QA * (lay.max_pieces + 1))


OW_CLIP = 0.99 * 32767 / N.QB
HOT_DTYPE = np.float32     # the feature weights and their gradient as the kernels read and add them (Trainer)


ENCODE_CHUNK = 1 << 16      # FENs per parse_fens call (progress bar steps)


def encode(variant: str, fens, progress: bool = False, black: bool = True):
    """``(white, black, stm)``: the active inputs of every FEN for both perspectives (``black``
    False: ``black`` is None; it is :func:`flip_table` of ``white``), int16[n, k]
    (``k`` the pieces of the start position; int32 if the inputs do not fit int16) padded with
    ``NIN`` (no input) after each row's inputs, and the side to move int8[n]. Parsed by a numba
    kernel (:func:`bench.tune.nnue_kernels.parse_fens`: the board field, checked as
    ``Position.set_fen`` checks it, and the side to move; the castling, e.p. and counter fields
    are not read). ``ValueError`` for a bad FEN (the message ``Position.set_fen``'s)."""
    lay = N.input_layout(variant)
    k = lay.max_pieces
    n = len(fens)
    dt = np.int16 if lay.nin < 32767 else np.int32
    W = np.full((n, k), lay.nin, dtype=dt)
    B = np.full((n if black else 0, k), lay.nin, dtype=dt)
    stm = np.zeros(n, dtype=np.int8)
    plane_of = np.full(128, -1, dtype=np.int64)
    for i, c in enumerate(lay.letters):
        plane_of[ord(c)] = plane_of[ord(c.lower())] = i
    kp, pp = lay.letters.find("K"), lay.letters.find("P")
    code = np.zeros(1, dtype=np.int64)
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=n, desc="inputs", unit="pos", file=sys.stderr, dynamic_ncols=True, disable=None, mininterval=0.5)
    for s in range(0, n, ENCODE_CHUNK):
        part = fens[s:s + ENCODE_CHUNK]
        text = "".join(part).encode("utf-8")
        lens = np.fromiter(map(len, part), dtype=np.int64, count=len(part))
        if len(text) != int(lens.sum()):        # not ASCII: byte lengths
            lens = np.fromiter((len(f.encode("utf-8")) for f in part), dtype=np.int64, count=len(part))
        ends = np.cumsum(lens)
        bad = K_.parse_fens(np.frombuffer(text, dtype=np.uint8), ends - lens, ends, plane_of, kp, pp, lay.npt,
                            lay.width, lay.height, W[s:], B[s:] if black else B, stm[s:], code)
        if bad >= 0:
            _fen_error(variant, part[bad], int(code[0]), k)
        if bar is not None:
            bar.update(len(part))
    if bar is not None:
        bar.close()
    return W, (B if black else None), stm


def flip_table(variant: str) -> np.ndarray:
    """``flip[x]``: Black's input of the piece whose input for White is ``x`` (the colour swapped,
    the rank mirrored; ``flip[NIN] = NIN``), int64[NIN + 1]: ``black = flip[white]``."""
    lay = N.input_layout(variant)
    x = np.arange(lay.nin)
    rel, rest = np.divmod(x, lay.npt * lay.nsq)
    plane, sq = np.divmod(rest, lay.nsq)
    r, f = np.divmod(sq, lay.width)
    return np.append(((1 - rel) * lay.npt + plane) * lay.nsq + (lay.height - 1 - r) * lay.width + f, lay.nin)


_FEN_REASONS = {K_.FEN_RANKS: "board field: wrong number of ranks", K_.FEN_FILES: "board field: wrong number of files",
                K_.FEN_LETTER: "board field: unknown piece letter", K_.FEN_KINGS: "board field: not one king a side",
                K_.FEN_PAWN: "board field: pawn on the first or last rank", K_.FEN_HOLDINGS: "unclosed holdings",
                K_.FEN_SIDE: "side-to-move field is not 'w' or 'b'"}


def _fen_error(variant: str, fen: str, code: int, k: int):
    """Raise the ``ValueError`` for a FEN that :func:`bench.tune.nnue_kernels.parse_fens` refused."""
    if code == K_.FEN_PIECES:
        m = sum(ch.isalpha() for ch in fen.split()[0].split("[")[0])
        raise ValueError(f"{fen!r}: {m} pieces, more than the {k} of {variant}'s start position")
    from engine.rules.position import Position
    try:
        Position(variant).set_fen(fen)
    except ValueError as e:
        raise ValueError(f"bad FEN {fen!r}: {e}") from None
    raise ValueError(f"bad FEN {fen!r}: {_FEN_REASONS.get(code, code)}")


class Trainer:
    """The float network, its Adam state and gradient buffers, and the loss of batches (numba
    kernels, :mod:`bench.tune.nnue_kernels`)."""

    NAMES = ("ftw", "ftb", "ow", "ob")

    def __init__(self, variant: str, hidden: int, act: int, scale: int, K: float, lam: float, seed: int,
                 dtype=None):
        self.variant = N.input_layout(variant).variant
        self.nin = N.input_layout(variant).nin
        self.hidden, self.act, self.scale, self.K, self.lam = hidden, act, scale, K, lam
        rng = np.random.default_rng(seed)
        self.p = {"ftw": rng.normal(0.0, 0.05, (self.nin + 1, hidden)),
                  "ftb": rng.uniform(0.2, 0.5, hidden),
                  "ow": rng.normal(0.0, 0.1 / np.sqrt(2 * hidden), 2 * hidden),
                  "ob": np.zeros(1)}
        self.p["ftw"][self.nin] = 0.0
        self.m = {k: np.zeros_like(v) for k, v in self.p.items()}
        self.v = {k: np.zeros_like(v) for k, v in self.p.items()}
        self.dtype = np.dtype(HOT_DTYPE if dtype is None else dtype)
        self.g = {k: np.zeros_like(v) for k, v in self.p.items()}
        self.g["ftw"] = np.zeros(self.p["ftw"].shape, dtype=self.dtype)
        self._acc = np.zeros((4, hidden), dtype=self.dtype)
        self.flip = flip_table(variant)
        self._sync()
        self.t = 0
        self.clip = ft_clip(variant)

    def _sync(self) -> None:
        """The feature weights the kernels read: ``p["ftw"]`` itself, or its float32 copy."""
        self.w = self.p["ftw"] if self.dtype == np.float64 else self.p["ftw"].astype(self.dtype)

    def float_net(self) -> N.FloatNet:
        p = self.p
        return N.FloatNet(self.variant, p["ftw"][:self.nin].copy(), p["ftb"].copy(), p["ow"].copy(),
                          float(p["ob"][0]), self.act, self.scale)

    def target(self, score, result):
        return self.lam * result + (1.0 - self.lam) * sigmoid(score, self.K)

    def _run(self, ix, W, stm, target, grad: bool, exact: bool = False, g=None) -> float:
        """The summed squared error of the positions ``ix`` (int64) of ``W``/``stm``/``target``
        (White's inputs: Black's are ``self.flip[W]``);
        with ``grad`` the gradient of their mean loss is added to ``g`` (default ``self.g``).
        ``exact``: in float64 throughout (else the feature weights in ``self.dtype``)."""
        p, g = self.p, (self.g if g is None else g)
        w, acc = (p["ftw"], np.zeros((4, self.hidden))) if exact else (self.w, self._acc)
        k = W.shape[1]
        return K_.batch_loss(ix, W.reshape(-1), k, self.flip, stm, target, w, p["ftb"], p["ow"], p["ob"],
                             int(self.act), float(self.scale), 0.5 * self.K * LN10 / 400.0, self.K * LN10 / 400.0,
                             grad, acc, g["ftw"], g["ftb"], g["ow"], g["ob"])

    def loss_sum(self, ix, W, stm, target) -> float:
        """The summed loss of the positions ``ix`` (no gradient)."""
        return self._run(np.ascontiguousarray(ix, dtype=np.int64), W, stm, target, False)

    def train_batch(self, ix, W, stm, target, lr: float) -> float:
        """One step on the positions ``ix``: their gradient, then :meth:`step`. Returns their mean loss."""
        ix = np.ascontiguousarray(ix, dtype=np.int64)
        loss = self._run(ix, W, stm, target, True) / len(ix)
        self.step(None, lr)
        return loss

    def loss_grad(self, W, B, stm, target, grad: bool = True):
        """Mean loss of the positions (padded inputs ``W``/``B``, ``stm``) and, with ``grad``,
        the gradient of every parameter (a dict of new arrays), both computed in float64. ``B``
        must be ``flip_table`` of ``W`` (as :func:`encode` gives them)."""
        W = np.ascontiguousarray(W)
        if B is not None and not np.array_equal(self.flip[W], B):
            raise ValueError("B is not the black view of W")
        stm = np.ascontiguousarray(stm, dtype=np.int8)
        target = np.ascontiguousarray(target, dtype=np.float64)
        ix = np.arange(len(stm), dtype=np.int64)
        gr = {k: np.zeros_like(v) for k, v in self.p.items()}
        loss = self._run(ix, W, stm, target, grad, exact=True, g=gr) / len(ix)
        return loss, (gr if grad else None)

    def step(self, gr, lr: float):
        """One Adam step with the gradient ``gr`` (None: the one summed in ``self.g`` by
        :meth:`train_batch`, which is then zeroed), then the clips that keep the integer net in
        range. Adam is dense: every weight moves by its moments, also one whose input was in
        no position of the batch (as the numpy trainer did); in float64."""
        self.t += 1
        b1, b2 = BETAS
        c1, c2 = 1 - b1 ** self.t, 1 - b2 ** self.t
        lims = {"ftw": self.clip, "ftb": self.clip, "ow": OW_CLIP, "ob": np.inf}
        none = np.zeros(0, dtype=self.dtype)
        for k in self.NAMES:
            g = self.g[k] if gr is None else np.array(gr[k], dtype=np.float64)
            q = self.w.reshape(-1) if k == "ftw" and self.w is not self.p["ftw"] else none
            K_.adam(self.p[k].reshape(-1), g.reshape(-1), self.m[k].reshape(-1), self.v[k].reshape(-1),
                    lr, b1, b2, c1, c2, ADAM_EPS, lims[k], q)

    def state(self) -> dict:
        out = {f"p_{k}": v for k, v in self.p.items()}
        out.update({f"m_{k}": v for k, v in self.m.items()})
        out.update({f"v_{k}": v for k, v in self.v.items()})
        out["t"] = np.array([self.t])
        return out

    def load_state(self, z) -> None:
        for k in self.NAMES:
            self.p[k] = np.array(z[f"p_{k}"], dtype=np.float64)
            self.m[k] = np.array(z[f"m_{k}"], dtype=np.float64)
            self.v[k] = np.array(z[f"v_{k}"], dtype=np.float64)
        self._sync()
        self.t = int(z["t"][0])


@dataclass
class TrainResult:
    """What :func:`train` did: ``history`` ``[(epoch, train_loss, val_loss)]`` (epoch 0: the
    start weights), the epoch exported, ``K``, the position and game counts, the output file."""
    path: str | None
    variant: str
    K: float
    n_train: int
    n_val: int
    games_val: int
    history: list = field(default_factory=list)
    best_epoch: int = 0
    net: N.FloatNet | None = None
    seconds: float = 0.0
    interrupted: bool = False

    @property
    def best_val(self) -> float:
        return min((h[2] for h in self.history if h[0] == self.best_epoch), default=float("nan"))


def _settings(variant, hidden, act, scale, K, lam, lr, batch, val, seed) -> dict:
    return {"variant": variant, "hidden": int(hidden), "act": int(act), "scale": int(scale), "K": float(K),
            "lam": float(lam), "lr": float(lr), "batch": int(batch), "val": float(val), "seed": int(seed)}


def train(variant: str, data, out: str | None = None, hidden: int = DEFAULT_HIDDEN, act: int = N.ACT_CRELU,
          epochs: int = DEFAULT_EPOCHS, batch: int = DEFAULT_BATCH, lr: float = DEFAULT_LR,
          lam: float = DEFAULT_LAMBDA, K: float | None = None, val: float = DEFAULT_VAL, seed: int = 1,
          scale: int = N.DEFAULT_SCALE, checkpoint: str | None = None, resume: bool = False,
          progress: bool = False, log=None, float64: bool = False) -> TrainResult:
    """Train a network on data file(s) ``data`` and write the best epoch's integer net to ``out``
    (None: not written). ``checkpoint``: an ``.npz`` written after every epoch; ``resume``
    continues it (its settings must match). Ctrl-C stops after the current batch with
    ``interrupted=True`` (the best epoch so far is still exported). ``float64``: the kernels read and
    add the feature weights in float64 (default :data:`HOT_DTYPE`, float32: module docstring). Raises ``ValueError`` for bad
    data or settings, ``OSError`` for files."""
    t0 = time.perf_counter()
    variant = N.input_layout(variant).variant
    if hidden < 1 or hidden > N.MAX_HIDDEN or epochs < 0 or batch < 1 or lr <= 0 or not 0 <= lam <= 1:
        raise ValueError("hidden 1..4096, epochs >= 0, batch >= 1, lr > 0 and lambda in [0, 1] are required")
    ds = read_data(data, variant)
    if len(ds.fens) == 0:
        raise ValueError("no positions in the data")
    W, _, stm = encode(variant, ds.fens, progress, black=False)
    vmask = split_by_game(ds.game, val, seed)
    tr = ~vmask
    if K is None:
        K = fit_scale(ds.score[tr], ds.result[tr])
    settings = _settings(variant, hidden, act, scale, K, lam, lr, batch, val, seed)
    T = Trainer(variant, hidden, act, scale, K, lam, seed, dtype=np.float64 if float64 else None)
    target = T.target(ds.score, ds.result)
    idx_tr, idx_val = np.flatnonzero(tr), np.flatnonzero(vmask)
    res = TrainResult(out, variant, K, len(idx_tr), len(idx_val), int(len(np.unique(ds.game[vmask]))))

    def losses(ix):
        return T.loss_sum(ix, W, stm, target) / len(ix) if len(ix) else float("nan")

    start = 1
    best = None
    if resume and checkpoint and os.path.exists(checkpoint):
        with np.load(checkpoint, allow_pickle=False) as z:
            saved = json.loads(str(z["settings"]))
            if int(z["version"][0]) != CHECKPOINT_VERSION or saved != settings:
                diff = sorted(k for k in settings if saved.get(k) != settings[k])
                raise ValueError(f"{checkpoint}: made with other settings ({', '.join(diff) or 'version'}); "
                                 "use the same settings or another --checkpoint")
            T.load_state(z)
            res.history = [tuple(h) for h in z["history"].tolist()]
            res.best_epoch = int(z["best_epoch"][0])
            best = {k[6:]: np.array(z[k]) for k in z.files if k.startswith("bestp_")}
            start = len(res.history)
    else:
        res.history.append((0, losses(idx_tr), losses(idx_val)))
        best = {k: v.copy() for k, v in T.p.items()}
    try:
        for epoch in range(start, epochs + 1):
            order = np.random.default_rng([seed, epoch]).permutation(idx_tr)   # a resumed run shuffles alike
            tot = 0.0
            for s in range(0, len(order), batch):
                j = order[s:s + batch]
                tot += T.train_batch(j, W, stm, target, lr) * len(j)
            vl = losses(idx_val)
            res.history.append((epoch, tot / max(1, len(order)), vl))
            crit = vl if len(idx_val) else res.history[-1][1]
            prev = [h[2] if len(idx_val) else h[1] for h in res.history if h[0] == res.best_epoch]
            if not prev or crit < prev[0]:
                res.best_epoch = epoch
                best = {k: v.copy() for k, v in T.p.items()}
            if log is not None:
                log(res.history[-1])
            if checkpoint:
                _save_checkpoint(checkpoint, T, settings, res, best)
    except KeyboardInterrupt:
        res.interrupted = True
    cur = {k: v.copy() for k, v in T.p.items()}
    T.p = best
    res.net = T.float_net()
    T.p = cur
    if out:
        N.write_net(out, N.quantize(res.net), variant)
    res.seconds = time.perf_counter() - t0
    return res


def _save_checkpoint(path: str, T: Trainer, settings: dict, res: TrainResult, best: dict) -> None:
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    tmp = path + ".tmp.npz"
    np.savez(tmp, version=np.array([CHECKPOINT_VERSION]), settings=np.array(json.dumps(settings, sort_keys=True)),
             history=np.array(res.history, dtype=np.float64).reshape(-1, 3), best_epoch=np.array([res.best_epoch]),
             **T.state(), **{f"bestp_{k}": v for k, v in best.items()})
    os.replace(tmp, path)
