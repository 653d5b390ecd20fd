"""Temporary stand-in for the linear-evaluation interface of :mod:`search.eval`
(FEATURES, eval_features, phase_total, hand_weights, load_weights, write_weights,
feature_bounds, feature_used), used by :mod:`bench.tune` until search/eval.py has it.
Features: material per piece type (white minus black) and the tempo."""
from __future__ import annotations

import json
import os

import numpy as np
from engine.rules.jit import njit

from engine.rules import layout as L
from engine.rules.layout import NSQ, EMPTY, S_SIDE, V_NSQUARES, V_SQUARES
from search.eval import build_eval, EV_PHASE, EV_W, W_PHASE_TOTAL, LETTER_TYPE

_TYPES = "PNBRQKCA"
FEATURES = tuple(f"material_{c}" for c in _TYPES) + ("tempo",)
NF = len(FEATURES)
_TY = np.array([LETTER_TYPE[c] for c in _TYPES], dtype=np.int32)
WEIGHTS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "variants", "weights")


@njit(cache=True)
def eval_features(board, st, vt, ev, ws, f):
    for i in range(f.shape[0]):
        f[i] = 0
    phase = 0
    for i in range(vt[V_NSQUARES]):
        p = board[vt[V_SQUARES + i]]
        if p == EMPTY:
            continue
        ty = p & 15
        for k in range(8):
            if _TY[k] == ty:
                f[k] += 1 - 2 * (p >> 4)
        phase += ev[EV_PHASE + ty]
    f[8] = 1 if st[S_SIDE] == 0 else -1
    total = ev[EV_W + W_PHASE_TOTAL]
    return min(phase, total)


def phase_total(variant):
    return int(build_eval(variant)[EV_W + W_PHASE_TOTAL])


def hand_weights(variant):
    from variants import get
    v = get(variant)
    mg = np.zeros(NF, np.int32)
    eg = np.zeros(NF, np.int32)
    for p in v.pieces:
        k = _TYPES.index(p.letter)
        if p.letter != "K":
            mg[k], eg[k] = p.value
    mg[8] = eg[8] = 10
    return mg, eg


def _path(variant, path=None):
    return path or os.path.join(WEIGHTS_DIR, f"{variant}.json")


def load_weights(variant, path=None):
    p = _path(variant, path)
    if not os.path.exists(p):
        return hand_weights(variant)
    with open(p) as fh:
        d = json.load(fh)
    mg, eg = hand_weights(variant)
    for i, n in enumerate(FEATURES):
        mg[i] = d["mg"].get(n, mg[i])
        eg[i] = d["eg"].get(n, eg[i])
    return mg, eg


def write_weights(variant, w_mg, w_eg, meta, path=None):
    p = _path(variant, path)
    os.makedirs(os.path.dirname(os.path.abspath(p)), exist_ok=True)
    d = {"version": 1, "variant": variant, "meta": meta,
         "mg": {n: int(w_mg[i]) for i, n in enumerate(FEATURES)},
         "eg": {n: int(w_eg[i]) for i, n in enumerate(FEATURES)}}
    with open(p, "w") as fh:
        json.dump(d, fh, indent=1)
        fh.write("\n")
    return p


def feature_bounds(variant):
    return [(0, None)] * 8 + [(None, None)]


def feature_used(variant):
    from variants import get
    letters = {p.letter for p in get(variant).pieces}
    return np.array([c in letters and c != "K" for c in _TYPES] + [True])
