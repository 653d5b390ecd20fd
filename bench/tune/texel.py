"""The Texel fit of the linear evaluation's weights (``cardinal tune fit``) and its report.

Features of every position by :func:`search.eval.eval_features`, a train/validation
split by game id, the scaling constant ``K`` fitted first (bounded scalar minimisation
of the loss with the starting weights), then ``w_mg, w_eg`` by L-BFGS-B (scipy) within
:func:`search.eval.feature_bounds`, only the features of :func:`search.eval.feature_used`.

Model and loss (Texel): for a position with feature vector ``f`` (white minus black
counts) and phase ``p`` in ``0..total``, the white score in centipawns is
``s = (w_mg.f * p + w_eg.f * (total - p)) / total`` and the predicted result
``sigmoid(s) = 1 / (1 + 10 ** (-K * s / 400))``. Loss = mean over positions of
``(target - sigmoid(s)) ** 2`` with ``target = lambda * result + (1 - lambda) *
sigmoid_K_s(search score)``, plus ``l2 * sum(((w - w_start) / 100) ** 2)`` over the
free weights. ``K_s`` is ``K`` (``score_k='same'``) or, for a teacher's scores on another
scale (``score_k='fit'``, the default when the header names a ``teacher``), the
minimiser of mean ``(result - sigmoid_K_s(score)) ** 2`` over the training positions.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field

import numpy as np

import variants as _variants
from bench.tune.datafile import read_data
from search.eval import (WS_SIZE, FEATURES, eval_features, phase_total, load_weights, write_weights,
                         feature_bounds, feature_used, build_eval)

NF = len(FEATURES)

# ---- fit defaults
DEFAULT_VAL = 0.1
DEFAULT_MAX_ITER = 400
DEFAULT_L2 = 1e-5
# Half game result, half search score: on 160 knightrelay games (3 seeded 40-game validation splits)
# the results-only validation loss fell by 0.0034 with 0.5 but rose by 0.003 with 1.0 (over-fit).
DEFAULT_LAMBDA = 0.5
SCALE = 100.0               # L-BFGS-B works on weights in pawns (better conditioned than cp)
LN10 = math.log(10.0)


def default_weights_path(variant: str) -> str:
    """``variants/weights/<variant>.json`` in this checkout (where ``write_weights`` writes by default)."""
    return os.path.join(os.path.dirname(os.path.abspath(_variants.__file__)), "weights", f"{variant}.json")


def extract_features(variant: str, fens, progress: bool = False):
    """Features of every position: ``(F, phase)``, ``F`` a scipy CSR matrix float64[n, NF]
    (white-relative counts from :func:`search.eval.eval_features`), ``phase`` float64[n] in
    ``0..phase_total(variant)``. Raises ``ValueError`` for a bad FEN (naming it)."""
    import scipy.sparse as sp
    from engine.rules.position import Position
    ev = build_eval(variant)
    ws = np.zeros(WS_SIZE, dtype=np.int32)
    f = np.zeros(NF, dtype=np.int32)
    n = len(fens)
    phase = np.zeros(n, dtype=np.float64)
    indptr = np.zeros(n + 1, dtype=np.int64)
    idx_parts, val_parts = [], []
    pos = Position(variant)
    it = fens
    if progress:
        from tqdm import tqdm
        it = tqdm(fens, desc="features", unit="pos", file=sys.stderr, dynamic_ncols=True, disable=None,
                  mininterval=0.5)
    for i, fen in enumerate(it):
        try:
            pos.set_fen(fen)
        except ValueError as e:
            raise ValueError(f"bad FEN {fen!r}: {e}") from None
        phase[i] = eval_features(pos.board, pos.st, pos.vt, ev, ws, f)
        nz = np.flatnonzero(f)
        idx_parts.append(nz.astype(np.int32))
        val_parts.append(f[nz].astype(np.float64))
        indptr[i + 1] = indptr[i] + len(nz)
    ind = np.concatenate(idx_parts) if idx_parts else np.zeros(0, np.int32)
    val = np.concatenate(val_parts) if val_parts else np.zeros(0)
    F = sp.csr_matrix((val, ind, indptr), shape=(n, NF))
    return F, phase


def split_by_game(game: np.ndarray, val: float, seed: int) -> np.ndarray:
    """Boolean mask (validation) over positions: a ``val`` fraction of the game ids, chosen
    with ``seed`` (all positions of a game on the same side)."""
    ids = np.unique(game)
    if val <= 0 or len(ids) < 2:
        return np.zeros(len(game), dtype=bool)
    rng = np.random.default_rng(seed)
    k = min(len(ids) - 1, max(1, int(round(val * len(ids)))))
    vids = rng.choice(ids, size=k, replace=False)
    return np.isin(game, vids)


def sigmoid(s, K: float):
    """Texel's win probability of a White score ``s`` (cp): ``1 / (1 + 10 ** (-K * s / 400))``."""
    return 0.5 * (1.0 + np.tanh(0.5 * K * LN10 / 400.0 * np.asarray(s, dtype=np.float64)))


class Model:
    """The tapered linear evaluation on a fixed set of positions.

    ``F`` CSR float64[n, NF] features, ``phase`` float64[n] in ``0..total``;
    :meth:`scores` of weights ``w_mg, w_eg`` float[NF] are White scores in cp (float64[n]).
    """

    def __init__(self, F, phase, total: int):
        self.F = F
        self.p = np.asarray(phase, dtype=np.float64) / float(total)
        self.q = 1.0 - self.p

    def scores(self, w_mg, w_eg) -> np.ndarray:
        M = self.F @ np.stack([np.asarray(w_mg, np.float64), np.asarray(w_eg, np.float64)], axis=1)
        return M[:, 0] * self.p + M[:, 1] * self.q

    def loss(self, w_mg, w_eg, K: float, target) -> float:
        """Mean squared error of ``target`` float64[n] vs :func:`sigmoid` (no penalty)."""
        if self.F.shape[0] == 0:
            return float("nan")
        d = sigmoid(self.scores(w_mg, w_eg), K) - target
        return float(np.mean(d * d))

    def loss_grad(self, w_mg, w_eg, K: float, target):
        """``(loss, d loss / d w_mg, d loss / d w_eg)``, gradients float64[NF] (analytic)."""
        n = self.F.shape[0]
        s = self.scores(w_mg, w_eg)
        sg = sigmoid(s, K)
        d = sg - target
        c = K * LN10 / 400.0
        g = (2.0 / n) * d * sg * (1.0 - sg) * c          # d loss / d s_i
        G = self.F.T @ np.stack([g * self.p, g * self.q], axis=1)
        return float(np.mean(d * d)), np.asarray(G[:, 0]).ravel(), np.asarray(G[:, 1]).ravel()


def fit_k(model: Model, w_mg, w_eg, result, lo: float = 0.05, hi: float = 10.0) -> float:
    """Texel's ``K``: the minimiser of the loss of ``result`` with fixed weights (bounded scalar search)."""
    return fit_scale(model.scores(w_mg, w_eg), result, lo, hi)


def fit_scale(s, result, lo: float = 0.05, hi: float = 10.0) -> float:
    """The ``K`` in ``[lo, hi]`` minimising mean ``(result - sigmoid_K(s)) ** 2`` for White
    scores ``s`` (cp; bounded scalar search). :func:`fit_k` on the model's scores; ``K_s``
    on the data file's score column."""
    from scipy.optimize import minimize_scalar
    s = np.asarray(s, dtype=np.float64)
    result = np.asarray(result, dtype=np.float64)

    def f(K):
        d = sigmoid(s, K) - result
        return float(np.mean(d * d))
    r = minimize_scalar(f, bounds=(lo, hi), method="bounded", options={"xatol": 1e-6})
    return float(r.x)


def _bounds_pair(bounds, nf):
    """``feature_bounds`` as (mg bounds, eg bounds), each a list of nf (lo, hi)."""
    b = list(bounds)
    if len(b) == nf:
        return b, b
    if len(b) == 2 * nf:
        return b[:nf], b[nf:]
    raise ValueError(f"feature_bounds has {len(b)} entries, expected {nf} or {2 * nf}")


@dataclass
class FitResult:
    """Fitted weights ``w_mg, w_eg`` float64[NF] (not rounded) and the optimiser's report."""
    w_mg: np.ndarray
    w_eg: np.ndarray
    iterations: int
    evaluations: int
    converged: bool
    message: str


def fit_weights(model: Model, target, K: float, w0_mg, w0_eg, free_mg, free_eg, bounds_mg=None,
                bounds_eg=None, l2: float = DEFAULT_L2, max_iter: int = DEFAULT_MAX_ITER) -> FitResult:
    """L-BFGS-B on the Texel loss plus ``l2 * sum(((w - w0) / 100) ** 2)`` over the free weights.

    ``free_mg, free_eg`` bool[NF] choose the weights to fit (the rest keep ``w0``);
    ``bounds_*`` lists of NF ``(lo, hi)`` in cp (None: free). Deterministic.
    """
    from scipy.optimize import minimize
    w0_mg = np.asarray(w0_mg, dtype=np.float64)
    w0_eg = np.asarray(w0_eg, dtype=np.float64)
    nf = len(w0_mg)
    im = np.flatnonzero(free_mg)
    ie = np.flatnonzero(free_eg)
    nm = len(im)
    bm = bounds_mg or [(None, None)] * nf
    be = bounds_eg or [(None, None)] * nf

    def sb(lohi):
        lo, hi = lohi
        return (None if lo is None else lo / SCALE, None if hi is None else hi / SCALE)
    bnds = [sb(bm[i]) for i in im] + [sb(be[i]) for i in ie]
    x0 = np.concatenate([w0_mg[im], w0_eg[ie]]) / SCALE
    for j, (lo, hi) in enumerate(bnds):   # a start outside the bounds is moved onto them
        if lo is not None and x0[j] < lo:
            x0[j] = lo
        if hi is not None and x0[j] > hi:
            x0[j] = hi
    xs0 = np.concatenate([w0_mg[im], w0_eg[ie]]) / SCALE

    def unpack(x):
        wm = w0_mg.copy()
        we = w0_eg.copy()
        wm[im] = x[:nm] * SCALE
        we[ie] = x[nm:] * SCALE
        return wm, we

    def fg(x):
        wm, we = unpack(x)
        loss, gm, ge = model.loss_grad(wm, we, K, target)
        dx = x - xs0
        loss += l2 * float(dx @ dx)
        grad = np.concatenate([gm[im], ge[ie]]) * SCALE + 2.0 * l2 * dx
        return loss, grad
    if len(x0) == 0:
        return FitResult(w0_mg.copy(), w0_eg.copy(), 0, 0, True, "nothing to fit")
    r = minimize(fg, x0, jac=True, method="L-BFGS-B", bounds=bnds,
                 options={"maxiter": int(max_iter), "ftol": 1e-13, "gtol": 1e-9, "maxcor": 20})
    wm, we = unpack(r.x)
    return FitResult(wm, we, int(r.nit), int(r.nfev), bool(r.success), str(r.message))


def git_commit() -> str | None:
    """The checkout's HEAD commit (None outside git)."""
    try:
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        r = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10)
        return r.stdout.strip() or None if r.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


@dataclass
class TuneReport:
    """What :func:`fit` did (printed by :func:`print_report`)."""
    variant: str
    data: str
    n_positions: int
    n_games: int
    duplicates: int
    n_train: int
    n_val: int
    g_train: int
    g_val: int
    K: float
    loss_before: tuple     # (train, val)
    loss_after: tuple      # (train, val), rounded weights
    fit: FitResult | None
    old_mg: np.ndarray
    old_eg: np.ndarray
    new_mg: np.ndarray     # int32[NF], rounded
    new_eg: np.ndarray
    free: int
    seconds_features: float
    seconds_fit: float
    path: str | None = None
    meta: dict = field(default_factory=dict)
    score_k: str = "same"  # 'same': the score column scaled with K; 'fit': with its own K_s
    K_s: float | None = None


def default_score_k(header: dict | None) -> str:
    """``fit`` for a data file whose scores are not Cardinal's own: its header records a teacher
    (:func:`teacher`) or a PGN source (:func:`pgn_data`); else ``same``."""
    return "fit" if header and (header.get("teacher") or header.get("source") == "pgn") else "same"


def _path_list(x) -> list:
    """One path (``str`` or path-like) as a one-item list; any other iterable of paths as a list."""
    return [x] if isinstance(x, (str, os.PathLike)) else list(x)


def fit(variant: str, data, out: str | None = None, seed: int = 1, val: float = DEFAULT_VAL,
        max_iter: int = DEFAULT_MAX_ITER, lam: float = DEFAULT_LAMBDA, l2: float = DEFAULT_L2,
        write: bool = True, progress: bool = False, score_k: str | None = None,
        free: list[str] | None = None, val_data=None) -> TuneReport:
    """Texel-tune ``variant``'s weights on data file ``data`` (or a list of files, read as one
    data set: :func:`read_data`); write them (``out``, default
    ``variants/weights/<variant>.json``) unless ``write`` is False. ``score_k``: ``same`` (the
    score column's sigmoid uses K), ``fit`` (its own ``K_s``, fitted to the training results),
    None: :func:`default_score_k` of the file's header. ``free``: fit only the features whose
    names start with one of these prefixes (``["hanging_", "tempo"]``); the others keep their
    weights (None: all the variant's features). ``val_data``: data file(s) whose positions are
    the validation set, instead of a ``val`` fraction of ``data``'s games; positions of ``data``
    with a FEN found there are dropped from training. Give games no fit has seen: a split of
    ``data`` also holds out games that the starting weights may have been fitted on, which
    flatters them. Raises ``ValueError`` for a malformed or empty
    data file, a bad ``score_k`` or ``free`` prefixes that match no feature of the variant,
    ``OSError``."""
    variant = _variants.get(variant).name
    used = np.asarray(feature_used(variant), dtype=bool)
    if free is not None:
        prefixes = tuple(free)
        used &= np.array([name.startswith(prefixes) for name in FEATURES], dtype=bool)
        if not used.any():
            raise ValueError(f"--free {' '.join(prefixes)}: no feature of {variant} starts with that")
    paths = _path_list(data)
    vpaths = [] if val_data is None else _path_list(val_data)
    label = " + ".join(str(p) for p in paths)
    # validation files first: read as one data set, the duplicates dropped are training positions
    ds = read_data(vpaths + paths, variant)
    n_vpos = sum(ds.file_positions[:len(vpaths)])
    if vpaths and n_vpos == 0:
        raise ValueError(f"{' + '.join(str(p) for p in vpaths)}: no positions of finished games")
    if len(ds.fens) == n_vpos:
        raise ValueError(f"{label}: no positions of finished games")
    if vpaths:
        label += f" (validation: {' + '.join(str(p) for p in vpaths)})"
    t0 = time.perf_counter()
    F, phase = extract_features(variant, ds.fens, progress=progress)
    t_feat = time.perf_counter() - t0
    total = phase_total(variant)
    vmask = (np.arange(len(ds.fens)) < n_vpos) if vpaths else split_by_game(ds.game, val, seed)
    tmask = ~vmask
    mt = Model(F[tmask], phase[tmask], total)
    mv = Model(F[vmask], phase[vmask], total)
    w0_mg, w0_eg = (np.asarray(w, dtype=np.int64) for w in load_weights(variant))
    t1 = time.perf_counter()
    K = fit_k(mt, w0_mg, w0_eg, ds.result[tmask])
    if score_k is None:
        score_k = default_score_k(ds.header)
    if score_k not in ("same", "fit"):
        raise ValueError(f"score_k must be 'same' or 'fit', not {score_k!r}")
    K_s = fit_scale(ds.score[tmask], ds.result[tmask]) if score_k == "fit" else K

    def target(mask):
        y = ds.result[mask]
        if lam >= 1.0:
            return y
        return lam * y + (1.0 - lam) * sigmoid(ds.score[mask], K_s)
    yt, yv = target(tmask), target(vmask)
    before = (mt.loss(w0_mg, w0_eg, K, yt), mv.loss(w0_mg, w0_eg, K, yv))
    bm, be = _bounds_pair(feature_bounds(variant), NF)
    fr = fit_weights(mt, yt, K, w0_mg, w0_eg, used, used, bm, be, l2=l2, max_iter=max_iter)
    new_mg = np.rint(fr.w_mg).astype(np.int32)
    new_eg = np.rint(fr.w_eg).astype(np.int32)
    after = (mt.loss(new_mg, new_eg, K, yt), mv.loss(new_mg, new_eg, K, yv))
    t_fit = time.perf_counter() - t1
    rep = TuneReport(variant, label, len(ds.fens), ds.games, ds.duplicates, int(tmask.sum()), int(vmask.sum()),
                     len(np.unique(ds.game[tmask])), len(np.unique(ds.game[vmask])), K, before, after, fr,
                     w0_mg, w0_eg, new_mg, new_eg, 2 * int(used.sum()), t_feat, t_fit,
                     score_k=score_k, K_s=K_s)

    def r6(x):
        return None if x != x else round(float(x), 6)
    rep.meta = {"method": "Texel tuning, L-BFGS-B", "data": "+".join(os.path.basename(p) for p in paths),
                "data_headers": [h or {} for h in ds.headers[len(vpaths):]], "positions": rep.n_positions,
                "games": ds.games,
                "train_positions": rep.n_train, "val_positions": rep.n_val, "K": round(K, 6),
                "score_k": score_k, "K_s": round(K_s, 6),
                "loss_before": {"train": r6(before[0]), "val": r6(before[1])},
                "loss_after": {"train": r6(after[0]), "val": r6(after[1])},
                "free": list(free) if free is not None else "all",
                "lambda": lam, "l2": l2, "val_fraction": None if vpaths else val, "seed": seed,
                "max_iter": max_iter,
                "iterations": fr.iterations, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "commit": git_commit()}
    if vpaths:
        rep.meta["val_data"] = "+".join(os.path.basename(p) for p in vpaths)
        rep.meta["val_data_headers"] = [h or {} for h in ds.headers[:len(vpaths)]]
    # the history of the fits goes on: the starting weights' entries, then this fit's
    note, history = previous_history(variant)
    rep.meta["history_note"] = note
    rep.meta["history"] = history + [{
        "fit": len(history) + 1, "date": rep.meta["date"][:10], "commit": rep.meta["commit"],
        "data": rep.meta["data"] + (f" (validation {rep.meta['val_data']})" if vpaths else ""),
        "free": rep.meta["free"], "lambda": lam, "l2": l2,
        "val_loss": [r6(before[1]), r6(after[1])]}]
    if write:
        write_weights(variant, new_mg, new_eg, rep.meta, path=out)
        rep.path = out or default_weights_path(variant)
    return rep


HISTORY_NOTE = ("history: one entry per fit, oldest first (the fields above describe the last one); "
                "val_loss is [before, after] the fit on its validation set")


def previous_history(variant: str) -> tuple[str, list]:
    """``(history_note, history)`` of the shipped weights file of ``variant`` (the weights a fit
    starts from): its ``meta.history`` list, empty when it has none or cannot be read."""
    from search.eval import weights_path
    try:
        with open(weights_path(variant), encoding="utf-8") as fh:
            meta = json.load(fh).get("meta") or {}
        hist = meta.get("history")
        return str(meta.get("history_note") or HISTORY_NOTE), list(hist) if isinstance(hist, list) else []
    except (OSError, ValueError, AttributeError):
        return HISTORY_NOTE, []


def moved_most(rep: TuneReport, k: int = 15) -> list[tuple[str, str, int, int]]:
    """The ``k`` weights that changed most: ``[(feature, 'mg'|'eg', old, new)]``."""
    rows = []
    for i, name in enumerate(FEATURES):
        rows.append((abs(int(rep.new_mg[i]) - int(rep.old_mg[i])), name, "mg", int(rep.old_mg[i]), int(rep.new_mg[i])))
        rows.append((abs(int(rep.new_eg[i]) - int(rep.old_eg[i])), name, "eg", int(rep.old_eg[i]), int(rep.new_eg[i])))
    rows.sort(key=lambda r: (-r[0], r[1], r[2]))
    return [r[1:] for r in rows[:k] if r[0] > 0]


def print_report(rep: TuneReport, file=None) -> None:
    file = file or sys.stdout

    def p(*a):
        print(*a, file=file)

    def fl(x):
        return "   n/a  " if x != x else f"{x:.6f}"
    p(f"data: {rep.data}: {rep.n_positions} positions from {rep.n_games} games "
      f"({rep.duplicates} duplicate FENs dropped)")
    p(f"train: {rep.n_train} positions ({rep.g_train} games), validation: {rep.n_val} positions ({rep.g_val} games)")
    p(f"features: {len(FEATURES)} x (mg, eg), {rep.free} weights free; "
      f"feature extraction {rep.seconds_features:.1f} s")
    p(f"K = {rep.K:.4f}")
    if rep.K_s is not None:
        how = "fitted to the score column" if rep.score_k == "fit" else "the same as K"
        p(f"K_s = {rep.K_s:.4f} (score scale, {how})")
    p(f"loss     train      validation")
    p(f"before   {fl(rep.loss_before[0])}   {fl(rep.loss_before[1])}")
    p(f"after    {fl(rep.loss_after[0])}   {fl(rep.loss_after[1])}   (rounded weights)")
    if rep.fit is not None:
        p(f"L-BFGS-B: {rep.fit.iterations} iterations, {rep.fit.evaluations} evaluations, "
          f"{rep.seconds_fit:.1f} s ({rep.fit.message})")
    rows = moved_most(rep)
    p(f"{len(rows)} weights that moved most:")
    w = max([len(r[0]) for r in rows] + [8])
    for name, ph, old, new in rows:
        p(f"  {name:<{w}s} {ph}  {old:6d} -> {new:6d}  ({new - old:+d})")
    if rep.path:
        p(f"wrote {rep.path}")
