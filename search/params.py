"""The search's tunable constants, declared once (what ``cardinal tune spsa`` tunes).

Each :class:`Param` has a name, a default, a range ``[lo, hi]`` and SPSA's end-of-run step
sizes, as a fishtest parameter line (``name,default,min,max,c_end,r_end``) with Stockfish's
``TUNE()`` defaults: ``c_end = (hi - lo) / 20``, ``r_end = 0.002``. All are integers here
(factors are in percent or per mille), so each is a UCI ``spin`` option.

The constants of the numba search (``kind='search'``) reach it as an ``int64`` array in the
search context (:data:`search.core.SearchCtx` field ``prm``), read at the fixed indices
``P_<NAME>`` below (the late-move reductions are computed from ``LMR_BASE``/``LMR_DIV``). Changing a value changes the arrays, never the compiled code.
``kind='driver'`` constants are read by the Python driver (aspiration window) and
``kind='time'`` ones by time management (:mod:`search.timeman`); SPSA tunes the latter only
in a separate run at a time control.

Values for a variant: the defaults, overridden by the variant's data file
``variants/params/<variant>.json`` if it exists (``{"params": {"NAME": value, ...}}``, written
by ``cardinal tune spsa``), overridden by what was set through :meth:`Params.set` (the UCI
options that ``CARDINAL_TUNE=1`` shows). The defaults reproduce the hand-set search exactly.

This module imports nothing heavy at the top (the UCI front end lists the options before
numpy is loaded).
"""
from __future__ import annotations

import json
import math
import os
import threading
from dataclasses import dataclass

import variants as _variants


@dataclass(frozen=True)
class Param:
    """One tunable constant: ``kind`` is ``search`` (numba array), ``driver`` or ``time``."""
    name: str
    default: int
    lo: int
    hi: int
    kind: str = "search"
    doc: str = ""
    integer: bool = True
    c_end: float | None = None      # None: (hi - lo) / 20
    r_end: float = 0.002

    @property
    def c(self) -> float:
        """SPSA's final perturbation ``c_end``."""
        return (self.hi - self.lo) / 20.0 if self.c_end is None else float(self.c_end)

    def check(self, value) -> int | float:
        """``value`` as this parameter's type, or ``ValueError`` (one line) if it is not a number
        or lies outside ``[lo, hi]``."""
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"{self.name}: value {value!r} is not a number") from None
        if self.integer:
            if v != math.floor(v):
                raise ValueError(f"{self.name}: value {value!r} is not an integer")
            v = int(v)
        if not self.lo <= v <= self.hi:
            raise ValueError(f"{self.name}: value {value} out of range {self.lo}..{self.hi}")
        return v


# The order is the array's; append new ones at the end (indices are P_<NAME> below).
PARAMS = (
    # step 4: reverse futility pruning
    Param("RFP_DEPTH", 6, 2, 12, doc="reverse futility only at depth <= this (near the leaves, where the static eval is trusted)"),
    Param("RFP_MARGIN", 90, 40, 180, doc="reverse futility margin per ply of depth (cp): a position this far above beta rarely falls below it"),
    # step 5: null move
    Param("NULL_MIN_DEPTH", 3, 2, 6, doc="null move from this depth (below it the null search costs more than it saves)"),
    Param("NULL_R_BASE", 3, 1, 5, doc="null-move reduction: base"),
    Param("NULL_R_DEPTH_DIV", 4, 2, 8, doc="null-move reduction: one more ply per this many plies of depth"),
    Param("NULL_EVAL_DIV", 200, 80, 400, doc="null-move reduction: one more ply per this many cp above beta"),
    Param("NULL_EVAL_MAX", 3, 0, 6, doc="null-move reduction: at most this many plies for the eval margin (a huge margin can still hide a tactic)"),
    # step 8: futility and late move pruning of quiet moves that do not check
    Param("FUT_DEPTH", 2, 1, 5, doc="futility pruning of quiet moves only at depth <= this (near the leaves)"),
    Param("FUT_MARGIN", 160, 60, 320, doc="futility margin per ply of depth (cp): a quiet move rarely gains more than ~1.5 pawns positionally"),
    Param("LMP_DEPTH", 3, 1, 6, doc="late move pruning only at depth <= this"),
    Param("LMP_BASE", 3, 0, 10, doc="late move pruning: quiet moves beyond (LMP_BASE + d*d) (/2 when not improving) are skipped (a move ordered that late almost never refutes)"),
    # step 8b: SEE pruning
    Param("SEE_QUIET_BASE", 25, 10, 45, doc="SEE pruning of quiet moves losing more than (base - lmrDepth) * lmrDepth^2 cp (Stockfish 11: 32, 128 cp pawn)"),
    Param("SEE_NOISY_MARGIN", 150, 50, 300, doc="SEE pruning of captures and checks losing more than this many cp per ply of depth (Stockfish 11: 194, 128 cp pawn)"),
    # steps 9, 9b: extensions
    Param("SE_DEPTH", 6, 4, 10, doc="singular extension from this depth (Stockfish 11)"),
    Param("SE_TT_SLACK", 3, 1, 5, doc="singular extension: the TT move's lower bound searched at least depth - this deep"),
    Param("SE_MARGIN", 2, 1, 5, doc="singular beta = TT score - this * depth (cp)"),
    # step 3b: internal iterative reduction
    Param("IIR_DEPTH", 4, 2, 8, doc="internal iterative reduction: without a TT move a node this deep is searched 1 ply less"),
    # step 10: late move reductions (table: LMR_BASE/100 + ln(d) ln(m) / (LMR_DIV/100))
    Param("LMR_MIN_DEPTH", 3, 2, 5, doc="late move reductions from this depth"),
    Param("LMR_MIN_MOVE", 3, 1, 6, doc="late move reductions from this move number (the first moves: TT, good captures, killers)"),
    Param("LMR_BASE", 75, 0, 150, doc="LMR table: constant term (hundredths of a ply)"),
    Param("LMR_DIV", 225, 150, 350, doc="LMR table: divisor of ln(depth) ln(move) (hundredths)"),
    # quiescence
    Param("DELTA_MARGIN", 200, 50, 400, doc="quiescence: a capture that cannot lift the score within this of alpha is skipped (cp)"),
    # histories
    Param("HIST_BONUS", 32, 8, 64, doc="history bonus per depth^2 on a cutoff"),
    Param("CONT_BONUS_MAX", 4000, 1000, 8000, doc="largest continuation/capture history bonus (about 1/4 of the entries' range)"),
    # driver
    Param("ASP_DELTA", 18, 8, 40, kind="driver", doc="aspiration window half-width (cp)"),
    # time management (search.timeman)
    Param("TM_NEXT_ITER_PCT", 60, 30, 100, kind="time", doc="another iteration only before this % of the soft time"),
    Param("TM_FALLING_PERMILLE_CP", 20, 5, 50, kind="time", doc="more time per cp the score fell (per mille)"),
    Param("TM_FALLING_MAX_PCT", 200, 120, 300, kind="time", doc="at most this % of the time for a falling score"),
    Param("TM_FALLING_MIN_PCT", 85, 50, 100, kind="time", doc="at least this % of the time for a rising score"),
    Param("TM_STABLE_DEPTHS", 6, 3, 12, kind="time", doc="best move unchanged this many iterations: stable"),
    Param("TM_STABLE_PCT", 60, 30, 100, kind="time", doc="a stable best move's share of the time (%)"),
)

BY_NAME = {p.name: p for p in PARAMS}
INDEX = {p.name: i for i, p in enumerate(PARAMS)}
N_PARAMS = len(PARAMS)

# indices into the parameter array (numba reads these as compile-time constants)
P_RFP_DEPTH = INDEX["RFP_DEPTH"]
P_RFP_MARGIN = INDEX["RFP_MARGIN"]
P_NULL_MIN_DEPTH = INDEX["NULL_MIN_DEPTH"]
P_NULL_R_BASE = INDEX["NULL_R_BASE"]
P_NULL_R_DEPTH_DIV = INDEX["NULL_R_DEPTH_DIV"]
P_NULL_EVAL_DIV = INDEX["NULL_EVAL_DIV"]
P_NULL_EVAL_MAX = INDEX["NULL_EVAL_MAX"]
P_FUT_DEPTH = INDEX["FUT_DEPTH"]
P_FUT_MARGIN = INDEX["FUT_MARGIN"]
P_LMP_DEPTH = INDEX["LMP_DEPTH"]
P_LMP_BASE = INDEX["LMP_BASE"]
P_SEE_QUIET_BASE = INDEX["SEE_QUIET_BASE"]
P_SEE_NOISY_MARGIN = INDEX["SEE_NOISY_MARGIN"]
P_SE_DEPTH = INDEX["SE_DEPTH"]
P_SE_TT_SLACK = INDEX["SE_TT_SLACK"]
P_SE_MARGIN = INDEX["SE_MARGIN"]
P_IIR_DEPTH = INDEX["IIR_DEPTH"]
P_LMR_MIN_DEPTH = INDEX["LMR_MIN_DEPTH"]
P_LMR_MIN_MOVE = INDEX["LMR_MIN_MOVE"]
P_DELTA_MARGIN = INDEX["DELTA_MARGIN"]
P_HIST_BONUS = INDEX["HIST_BONUS"]
P_CONT_BONUS_MAX = INDEX["CONT_BONUS_MAX"]

P_LMR_BASE = INDEX["LMR_BASE"]
P_LMR_DIV = INDEX["LMR_DIV"]


def defaults() -> dict:
    """``{name: default}`` of every parameter."""
    return {p.name: p.default for p in PARAMS}


def lookup(name: str) -> Param:
    """The parameter called ``name`` (case-insensitive, as UCI option names), or ``ValueError``."""
    p = BY_NAME.get(name) or BY_NAME.get(str(name).upper())
    if p is None:
        raise ValueError(f"unknown parameter {name!r}")
    return p


def check_values(values: dict) -> dict:
    """``values`` (names to values) checked against the declarations: ``ValueError`` for an
    unknown name or a value outside its range; returns them with canonical names and types."""
    return {lookup(k).name: lookup(k).check(v) for k, v in values.items()}


def params_path(variant: str) -> str:
    """``variants/params/<variant>.json`` in this checkout (the variant's tuned values)."""
    return os.path.join(os.path.dirname(os.path.abspath(_variants.__file__)), "params", f"{variant}.json")


def load_file(path: str) -> dict:
    """The checked values of a parameter file (``{"params": {...}}``); ``ValueError`` names the
    file for bad JSON, an unknown parameter or a value out of range; ``OSError`` if unreadable."""
    with open(path, encoding="utf-8") as fh:
        try:
            data = json.load(fh)
        except ValueError as e:
            raise ValueError(f"{path}: not JSON ({e})") from None
    if not isinstance(data, dict) or not isinstance(data.get("params"), dict):
        raise ValueError(f"{path}: expected an object with a 'params' object")
    try:
        return check_values(data["params"])
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None


def variant_values(variant: str) -> dict:
    """The variant's values: defaults overridden by its data file (absent: the defaults)."""
    vals = defaults()
    p = params_path(variant)
    if os.path.exists(p):
        vals.update(load_file(p))
    return vals


def search_arrays(values: dict):
    """``prm int64[N_PARAMS]`` for the numba search from ``{name: value}`` (missing names:
    defaults), in declaration order."""
    import numpy as np
    v = {**defaults(), **values}
    return np.array([int(v[p.name]) for p in PARAMS], dtype=np.int64)


class Params:
    """The values a :class:`search.driver.Searcher` searches with: per variant, the defaults and
    the variant's file, then the values :meth:`set` since (they apply to every variant).
    :meth:`arrays` is cached; :meth:`set` changes the arrays of the next search."""

    def __init__(self):
        self.overrides: dict = {}
        self._cache: dict = {}
        self._lock = threading.Lock()

    def set(self, name: str, value) -> None:
        """Set one parameter (``ValueError``: unknown name, not a number, out of range)."""
        p = lookup(name)
        v = p.check(value)
        with self._lock:
            self.overrides[p.name] = v
            self._cache.clear()

    def reset(self) -> None:
        """Forget the values set (back to the defaults and the variants' files)."""
        with self._lock:
            self.overrides.clear()
            self._cache.clear()

    def values(self, variant: str | None) -> dict:
        """``{name: value}`` for ``variant`` (None: without any variant's file)."""
        return self._entry(variant)[0]

    def arrays(self, variant: str | None):
        """``prm`` of :func:`search_arrays` for ``variant``."""
        return self._entry(variant)[1]

    def _entry(self, variant: str | None):
        with self._lock:
            e = self._cache.get(variant)
            if e is None:
                vals = {**(defaults() if variant is None else variant_values(variant)), **self.overrides}
                e = self._cache[variant] = (vals, search_arrays(vals))
            return e


def uci_option_lines() -> list[str]:
    """``option name <NAME> type spin default D min LO max HI`` for every parameter."""
    return [f"option name {p.name} type spin default {p.default} min {p.lo} max {p.hi}" for p in PARAMS]


def tuning_enabled() -> bool:
    """True if the environment asks for the parameters as UCI options (``CARDINAL_TUNE=1``)."""
    return os.environ.get("CARDINAL_TUNE", "") not in ("", "0")
