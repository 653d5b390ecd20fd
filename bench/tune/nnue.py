"""Training a network for the NNUE evaluation (:mod:`search.nnue`) in numpy, from tuning data files.

Data: the positions of data files written by ``cardinal tune datagen`` (or ``teacher``/``pgn``;
format :mod:`bench.tune.datafile`): FEN, game result and search score, both from White's view.
Every FEN becomes its active inputs for both perspectives (:func:`encode`); a validation set of
whole games (:func:`bench.tune.texel.split_by_game`) is held out.

Model: :class:`search.nnue.FloatNet` (float64 here). Loss (the field's, as the Texel fit's):
the mean over positions of ``(sigmoid(out_white) - target) ** 2`` with
``target = lam * result + (1 - lam) * sigmoid(score)`` (``lam`` weighs the game result, as the
Texel fit's ``--lambda``; nnue-pytorch writes the blend the other way round) and ``sigmoid``
Texel's ``1 / (1 + 10 ** (-K * s / 400))`` on centipawns (:func:`bench.tune.texel.sigmoid`); ``K`` is
fitted to the training scores and results (:func:`bench.tune.texel.fit_scale`) unless given,
and the same ``K`` maps the net's output, so the net is trained in the search score's
centipawns. Gradients by hand (the inputs as a sparse 0/1 matrix, scipy), Adam, minibatches
shuffled with the seed. After each step the feature weights and biases are clipped so that no
accumulator of the integer net can leave int16 (:func:`ft_clip`: 32767 over ``QA`` times the
variant's piece count plus one), the output weights to the int16 range of their scale.

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


def encode(variant: str, fens, progress: bool = False):
    """``(white, black, stm)``: the active inputs of every FEN for both perspectives, int32[n, k]
    padded with ``NIN`` (no input), and the side to move int8[n]. ``ValueError`` for a bad FEN."""
    from engine.rules.position import Position
    lay = N.input_layout(variant)
    meta = N.make_meta(lay, 1)
    k = lay.max_pieces
    n = len(fens)
    W = np.full((n, k), lay.nin, dtype=np.int32)
    B = np.full((n, k), lay.nin, dtype=np.int32)
    stm = np.zeros(n, dtype=np.int8)
    buf = np.zeros(N.MAX_FEATURES, dtype=np.int32)
    pos = Position(variant)
    it = fens
    if progress:
        from tqdm import tqdm
        it = tqdm(fens, desc="inputs", unit="pos", file=sys.stderr, dynamic_ncols=True, disable=None, mininterval=0.5)
    for i, fen in enumerate(it):
        try:
            pos.set_fen(fen)
        except ValueError as e:
            raise ValueError(f"bad FEN {fen!r}: {e}") from None
        for persp, out in ((0, W), (1, B)):
            m = N.active_features(meta, pos.vt, pos.board, pos.st, persp, buf)
            if m > k:
                raise ValueError(f"{fen!r}: {m} pieces, more than the {k} of {variant}'s start position")
            out[i, :m] = buf[:m]
        stm[i] = pos.turn
    return W, B, stm


def _sparse(idx: np.ndarray, nin: int):
    """The 0/1 input matrix float64[n, nin + 1] of padded inputs (the pad column ``nin`` unused)."""
    import scipy.sparse as sp
    n, k = idx.shape
    return sp.csr_matrix((np.ones(n * k), idx.ravel(), np.arange(0, n * k + 1, k)), shape=(n, nin + 1))


class Trainer:
    """The float network, its Adam state and the loss of one batch with its gradient."""

    NAMES = ("ftw", "ftb", "ow", "ob")

    def __init__(self, variant: str, hidden: int, act: int, scale: int, K: float, lam: float, seed: int):
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
        self.t = 0
        self.clip = ft_clip(variant)

    def float_net(self) -> N.FloatNet:
        p = self.p
        return N.FloatNet(self.variant, p["ftw"][:self.nin].copy(), p["ftb"].copy(), p["ow"].copy(),
                          float(p["ob"][0]), self.act, self.scale)

    def target(self, score, result):
        return self.lam * result + (1.0 - self.lam) * sigmoid(score, self.K)

    def loss_grad(self, W, B, stm, target, grad: bool = True):
        """Mean loss of the positions (padded inputs ``W``/``B``, ``stm``) and, with ``grad``,
        the gradient of every parameter."""
        p, H = self.p, self.hidden
        Aw, Ab = _sparse(W, self.nin), _sparse(B, self.nin)
        aw = Aw @ p["ftw"] + p["ftb"]
        ab = Ab @ p["ftw"] + p["ftb"]
        black = (stm == 1)[:, None]
        a_s = np.where(black, ab, aw)
        a_o = np.where(black, aw, ab)
        h_s, h_o = N.activate(a_s, self.act), N.activate(a_o, self.act)
        out = self.scale * (h_s @ p["ow"][:H] + h_o @ p["ow"][H:] + p["ob"][0])
        sign = 1.0 - 2.0 * stm
        pred = sigmoid(out * sign, self.K)
        d = pred - target
        loss = float(np.mean(d * d))
        if not grad:
            return loss, None
        n = len(stm)
        g = (2.0 / n) * d * pred * (1.0 - pred) * (self.K * LN10 / 400.0) * sign * self.scale   # d loss / d (out / scale)
        gr = {"ow": np.concatenate([h_s.T @ g, h_o.T @ g]), "ob": np.array([g.sum()])}
        da_s = g[:, None] * p["ow"][:H] * self._dact(a_s)
        da_o = g[:, None] * p["ow"][H:] * self._dact(a_o)
        da_w = np.where(black, da_o, da_s)
        da_b = np.where(black, da_s, da_o)
        gr["ftb"] = da_w.sum(axis=0) + da_b.sum(axis=0)
        gr["ftw"] = np.asarray(Aw.T @ da_w + Ab.T @ da_b)
        gr["ftw"][self.nin] = 0.0
        return loss, gr

    def _dact(self, a):
        inside = (a > 0.0) & (a < 1.0)
        return 2.0 * a * inside if self.act == N.ACT_SCRELU else inside.astype(np.float64)

    def step(self, gr, lr: float):
        """One Adam step, then the clips that keep the integer net in range."""
        self.t += 1
        b1, b2 = BETAS
        for k in self.NAMES:
            self.m[k] = b1 * self.m[k] + (1 - b1) * gr[k]
            self.v[k] = b2 * self.v[k] + (1 - b2) * gr[k] * gr[k]
            mh = self.m[k] / (1 - b1 ** self.t)
            vh = self.v[k] / (1 - b2 ** self.t)
            self.p[k] -= lr * mh / (np.sqrt(vh) + ADAM_EPS)
        np.clip(self.p["ftw"], -self.clip, self.clip, out=self.p["ftw"])
        np.clip(self.p["ftb"], -self.clip, self.clip, out=self.p["ftb"])
        np.clip(self.p["ow"], -OW_CLIP, OW_CLIP, out=self.p["ow"])

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
          progress: bool = False, log=None) -> TrainResult:
    """Train a network on data file(s) ``data`` and write the best epoch's integer net to ``out``
    (None: not written). ``checkpoint``: an ``.npz`` written after every epoch; ``resume``
    continues it (its settings must match). Ctrl-C stops after the current batch with
    ``interrupted=True`` (the best epoch so far is still exported). Raises ``ValueError`` for bad
    data or settings, ``OSError`` for files."""
    t0 = time.perf_counter()
    variant = N.input_layout(variant).variant
    if hidden < 1 or hidden > N.MAX_HIDDEN or epochs < 0 or batch < 1 or lr <= 0 or not 0 <= lam <= 1:
        raise ValueError("hidden 1..4096, epochs >= 0, batch >= 1, lr > 0 and lambda in [0, 1] are required")
    ds = read_data(data, variant)
    if len(ds.fens) == 0:
        raise ValueError("no positions in the data")
    W, B, stm = encode(variant, ds.fens, progress)
    vmask = split_by_game(ds.game, val, seed)
    tr = ~vmask
    if K is None:
        K = fit_scale(ds.score[tr], ds.result[tr])
    settings = _settings(variant, hidden, act, scale, K, lam, lr, batch, val, seed)
    T = Trainer(variant, hidden, act, scale, K, lam, seed)
    target = T.target(ds.score, ds.result)
    idx_tr, idx_val = np.flatnonzero(tr), np.flatnonzero(vmask)
    res = TrainResult(out, variant, K, len(idx_tr), len(idx_val), int(len(np.unique(ds.game[vmask]))))

    def losses(ix):
        if len(ix) == 0:
            return float("nan")
        tot = 0.0
        for s in range(0, len(ix), 8192):
            j = ix[s:s + 8192]
            tot += T.loss_grad(W[j], B[j], stm[j], target[j], grad=False)[0] * len(j)
        return tot / len(ix)

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
                loss, gr = T.loss_grad(W[j], B[j], stm[j], target[j])
                T.step(gr, lr)
                tot += loss * len(j)
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
