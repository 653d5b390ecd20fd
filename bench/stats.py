"""Match statistics: Elo difference, error bars, LOS and SPRT.

All functions take game counts from the first engine's point of view:
``wins``, ``draws``, ``losses`` (ints >= 0). Scores are in [0, 1] (win 1,
draw 1/2, loss 0); Elo differences are logistic Elo points.

Formulas (the same ones Cute Chess prints at the end of a match):

* Score ``s = (W + D/2) / N``; Elo difference ``-400 * log10(1/s - 1)``
  (the logistic model of Arpad Elo's rating system, as in Cute Chess
  ``projects/lib/src/elo.cpp`` ``Elo::diff``).
* 95 % error bars: the per-game score variance
  ``var = (W (1-s)^2 + D (1/2-s)^2 + L s^2) / N`` gives the standard error
  ``sqrt(var / N)`` of the mean score (normal approximation, central limit
  theorem); the score interval ``s -/+ 1.959964 * se`` is mapped through the
  Elo formula and the margin is half its width (Cute Chess
  ``Elo::errorMargin``).
* LOS (likelihood of superiority) ``0.5 * (1 + erf((W - L) / sqrt(2 (W + L))))``
  (normal approximation of the binomial W vs L, draws ignored; Cute Chess
  ``Elo::LOS``, see also the chessprogramming wiki "Match Statistics").
* SPRT: Wald's sequential probability ratio test with the generalized
  log-likelihood ratio (GSPRT) for a trinomial (W/D/L) distribution whose
  expected score is ``s0 = L(elo0)`` versus ``s1 = L(elo1)``,
  ``L(x) = 1 / (1 + 10^(-x/400))`` (logistic Elo). The LLR is the exact
  maximum-likelihood GSPRT of fishtest (``server/fishtest/stats/LLRcalc.py``,
  ``LLR_logistic``; theory: M. Van den Bergh, "Support of the MLE for a
  multinomial distribution", cantate.be/Fishtest/support_MLE_multinomial.pdf).
  The normal approximation ``N (s1-s0)(2s - s0 - s1) / (2 var)`` (fishtest
  ``LLR_alt2``; Van den Bergh, "GSPRT approximation") is :func:`llr_approx`.
  Bounds: ``log(beta / (1 - alpha))`` and ``log((1 - beta) / alpha)`` (Wald 1945).
  Cute Chess uses a BayesElo draw model instead, so its LLR differs slightly.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

Z95 = 1.959963984540054  # two-sided 95 % quantile of the standard normal


def score(wins: int, draws: int, losses: int) -> float:
    """Mean score per game in [0, 1]. Raises ``ValueError`` with no games."""
    n = wins + draws + losses
    if n <= 0:
        raise ValueError("no games")
    return (wins + 0.5 * draws) / n


def elo_from_score(s: float) -> float:
    """Logistic Elo difference for a mean score ``s``; +/-inf at 1 and 0."""
    if s <= 0.0:
        return -math.inf
    if s >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / s - 1.0)


def score_from_elo(elo: float) -> float:
    """Expected score for an Elo difference (inverse of :func:`elo_from_score`)."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def score_variance(wins: int, draws: int, losses: int) -> float:
    """Variance of one game's score (population variance of the W/D/L sample)."""
    n = wins + draws + losses
    s = score(wins, draws, losses)
    return (wins * (1.0 - s) ** 2 + draws * (0.5 - s) ** 2 + losses * s ** 2) / n


def elo_with_error(wins: int, draws: int, losses: int, z: float = Z95) -> tuple[float, float]:
    """``(elo, margin)``: Elo difference and the half-width of its ``z`` interval
    (default 95 %). The margin is ``inf`` when the interval touches score 0 or 1,
    ``nan`` elo/margin with no games."""
    n = wins + draws + losses
    if n == 0:
        return math.nan, math.nan
    s = score(wins, draws, losses)
    se = math.sqrt(score_variance(wins, draws, losses) / n)
    lo, hi = elo_from_score(s - z * se), elo_from_score(s + z * se)
    if math.isinf(lo) or math.isinf(hi):
        return elo_from_score(s), math.inf
    return elo_from_score(s), (hi - lo) / 2.0


def los(wins: int, losses: int) -> float:
    """Likelihood of superiority in [0, 1]; 0.5 when W = L = 0."""
    if wins + losses == 0:
        return 0.5
    return 0.5 * (1.0 + math.erf((wins - losses) / math.sqrt(2.0 * (wins + losses))))


def _regularize(counts):
    # fishtest regularisation: an empty cell gets a tiny count, so the LLR stays finite
    return [c if c > 0 else 1e-3 for c in counts]


def _pdf_of(counts):
    """``(N, [(score, probability), ...])`` for counts of equally spaced scores 0..1
    (3 cells: L, D, W per game; 5 cells: pentanomial per pair), regularised."""
    counts = _regularize(counts)
    n = sum(counts)
    k = len(counts) - 1
    return n, [(i / k, c / n) for i, c in enumerate(counts)]


def _pdf(wins: int, draws: int, losses: int):
    return _pdf_of([losses, draws, wins])


def _mle_expected(pdf, s: float):
    """Maximum-likelihood distribution on the same outcomes with mean ``s``
    (Van den Bergh, Proposition 1.1): p_i / (1 + x (a_i - s)), x solving the
    secular equation sum p_i (a_i - s) / (1 + x (a_i - s)) = 0 (bisection)."""
    a = [ai - s for ai, _ in pdf]
    lo, hi = -1.0 / max(a) + 1e-12, -1.0 / min(a) - 1e-12

    def f(x):
        return sum(p * ai / (1.0 + x * ai) for ai, (_, p) in zip(a, pdf))

    for _ in range(200):  # f is decreasing in x on (lo, hi)
        mid = 0.5 * (lo + hi)
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
    x = 0.5 * (lo + hi)
    return [(ai, p / (1.0 + x * (ai - s))) for ai, p in pdf]


def llr(wins: int, draws: int, losses: int, elo0: float, elo1: float) -> float:
    """Generalized log-likelihood ratio of H1 (Elo = elo1) against H0 (Elo = elo0)."""
    return _llr_counts([losses, draws, wins], elo0, elo1)


def _llr_counts(counts, elo0: float, elo1: float) -> float:
    if sum(counts) == 0:
        return 0.0
    s0, s1 = score_from_elo(elo0), score_from_elo(elo1)
    n, pdf = _pdf_of(counts)
    p0, p1 = _mle_expected(pdf, s0), _mle_expected(pdf, s1)
    return n * sum(p * (math.log(q1) - math.log(q0))
                   for (_, p), (_, q0), (_, q1) in zip(pdf, p0, p1))


def llr_approx(wins: int, draws: int, losses: int, elo0: float, elo1: float) -> float:
    """Normal approximation of :func:`llr`: ``N (s1 - s0)(2 s - s0 - s1) / (2 var)``."""
    if wins + draws + losses == 0:
        return 0.0
    s0, s1 = score_from_elo(elo0), score_from_elo(elo1)
    n, pdf = _pdf(wins, draws, losses)
    s = sum(a * p for a, p in pdf)
    var = sum(p * (a - s) ** 2 for a, p in pdf)
    return n * (s1 - s0) * (2.0 * s - s0 - s1) / var / 2.0


@dataclass(frozen=True)
class SPRT:
    """Test H0: Elo = elo0 against H1: Elo = elo1 with error rates alpha, beta."""
    elo0: float = 0.0
    elo1: float = 5.0
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self):
        if not (0 < self.alpha < 1 and 0 < self.beta < 1):
            raise ValueError("alpha and beta must be in (0, 1)")
        if self.elo1 <= self.elo0:
            raise ValueError("elo1 must be greater than elo0")

    @property
    def bounds(self) -> tuple[float, float]:
        """``(lower, upper)`` LLR bounds (Wald)."""
        return math.log(self.beta / (1 - self.alpha)), math.log((1 - self.beta) / self.alpha)

    def llr(self, wins: int, draws: int, losses: int) -> float:
        return llr(wins, draws, losses, self.elo0, self.elo1)

    def llr_pentanomial(self, counts) -> float:
        """The LLR from pentanomial pair counts ``[LL, LD, DD+WL, WD, WW]`` (fishtest's)."""
        return llr_pentanomial(counts, self.elo0, self.elo1)

    def decide(self, v: float) -> str:
        """'H1', 'H0' or 'continue' for an LLR value."""
        lo, hi = self.bounds
        if v >= hi:
            return "H1"
        if v <= lo:
            return "H0"
        return "continue"

    def status(self, wins: int, draws: int, losses: int) -> str:
        """'H1' (accept elo1: the change gains), 'H0' (accept elo0), or 'continue'."""
        lo, hi = self.bounds
        v = self.llr(wins, draws, losses)
        if v >= hi:
            return "H1"
        if v <= lo:
            return "H0"
        return "continue"

    @classmethod
    def parse(cls, text: str | list[str]) -> "SPRT":
        """From ``"elo0=0 elo1=5 alpha=0.05 beta=0.05"`` (any subset). Raises ``ValueError``."""
        items = text.split() if isinstance(text, str) else [t for x in text for t in x.split()]
        kw = {}
        for it in items:
            k, sep, v = it.partition("=")
            if not sep or k not in ("elo0", "elo1", "alpha", "beta"):
                raise ValueError(f"bad SPRT parameter {it!r} (expected elo0=, elo1=, alpha=, beta=)")
            kw[k] = float(v)
        return cls(**kw)


# ---------------------------------------------------------------------------- pentanomial
PENTANOMIAL_LABELS = ("LL", "LD", "DD+WL", "WD", "WW")
NELO_PER_T = 800.0 / math.log(10.0)      # normalized Elo per unit of t = (mu - 1/2) / sigma per game


def pair_cell(score_a: float, score_b: float) -> int:
    """Index in ``[LL, LD, DD+WL, WD, WW]`` of a game pair with the first engine's scores
    ``score_a`` and ``score_b`` (each 0, 1/2 or 1): twice the pair's points."""
    return int(round(2.0 * (score_a + score_b)))


def _penta_mean_var(counts):
    """Mean score per game and the variance of the pair's mean score (regularised counts)."""
    n, pdf = _pdf_of(counts)
    mu = sum(a * p for a, p in pdf)
    var = sum(p * (a - mu) ** 2 for a, p in pdf)
    return n, mu, var


def _elo_clamped(x: float) -> float:
    x = min(max(x, 1e-3), 1 - 1e-3)
    return -400.0 * math.log10(1.0 / x - 1.0)


def pentanomial_elo(counts) -> tuple[float, float, float]:
    """``(elo, margin95, los)`` from pentanomial pair counts ``[LL, LD, DD+WL, WD, WW]``.

    fishtest ``stat_util.get_elo``: empty cells get 1e-3 pairs; ``mu`` is the mean score
    per game, the per-game variance is half the variance of a pair's total points
    (pairs are the independent samples, so correlated games of a pair count right);
    the 95 % interval of ``mu`` (``mu +/- 1.96 sqrt(var / games)``) is mapped to Elo
    (scores clamped to [0.001, 0.999]) and the margin is half its width; LOS is
    ``Phi((mu - 1/2) / sqrt(var / games))``. ``nan`` values with no pairs. This is
    fishtest's formula for any counts; the match runner prints :func:`pair_stats`.
    """
    if sum(counts) == 0:
        return math.nan, math.nan, math.nan
    n, mu, var_pair = _penta_mean_var(counts)
    games = 2.0 * n
    var_game = 2.0 * var_pair            # = Var(pair points) / 2
    se = math.sqrt(var_game / games)
    elo = _elo_clamped(mu)
    margin = (_elo_clamped(mu + Z95 * se) - _elo_clamped(mu - Z95 * se)) / 2.0
    los_ = 0.5 * (1.0 + math.erf((mu - 0.5) / se / math.sqrt(2.0)))
    return elo, margin, los_


def pentanomial_nelo(counts) -> float:
    """Normalized Elo from pentanomial counts: ``(mu - 1/2) / sqrt(2 var) * 800 / ln 10``
    with ``var`` the variance of a pair's mean score (fishtest ``LLRcalc``:
    ``sigma_pg = sqrt(2 var)`` is the per-game standard deviation). ``nan`` with no pairs."""
    if sum(counts) == 0:
        return math.nan
    _, mu, var = _penta_mean_var(counts)
    return (mu - 0.5) / math.sqrt(2.0 * var) * NELO_PER_T


MIN_PAIRS = 10          # fewer pairs: no pair-based error bar, nElo or LOS (n/a)
MIN_CELLS = 2           # fewer non-empty pentanomial cells: the same


def pentanomial_enough(counts) -> bool:
    """Whether pentanomial counts can carry a pair-based error bar, nElo and LOS: at least
    :data:`MIN_PAIRS` pairs in at least :data:`MIN_CELLS` non-empty cells. fishtest's
    ``get_elo`` gives an empty cell 1e-3 pairs and always answers, which on a few pairs is
    far too confident (four games gave +/- 28 Elo and nElo 2834 beside +/- 458 by games),
    and with one cell the variance is that of the regularisation alone (one drawn pair:
    +/- 34)."""
    return sum(counts) >= MIN_PAIRS and sum(1 for c in counts if c > 0) >= MIN_CELLS


def pair_stats(counts) -> tuple[float, float | None, float | None, float | None]:
    """``(elo, margin95, nelo, los)`` from pentanomial counts as the match runner prints
    and records them: :func:`pentanomial_elo` and :func:`pentanomial_nelo`, with None
    (printed ``n/a``) for the margin, nElo and LOS unless :func:`pentanomial_enough`."""
    elo, margin, los_ = pentanomial_elo(counts)
    if not pentanomial_enough(counts):
        return elo, None, None, None
    return elo, margin, pentanomial_nelo(counts), los_


def llr_pentanomial(counts, elo0: float, elo1: float) -> float:
    """Generalized LLR of H1 (logistic Elo = elo1) against H0 (elo0) from pentanomial
    counts: fishtest ``LLRcalc.LLR_logistic`` on the 5-cell distribution of a pair's mean
    score (0, 1/4, 1/2, 3/4, 1), each hypothesis the maximum-likelihood distribution with
    that expected score."""
    return _llr_counts(list(counts), elo0, elo1)


def summary(wins: int, draws: int, losses: int) -> str:
    """One line: ``Elo difference: 12.3 +/- 45.6, LOS: 70.1 %, DrawRatio: 30.0 %``."""
    n = wins + draws + losses
    if n == 0:
        return "Elo difference: n/a (no games)"
    e, m = elo_with_error(wins, draws, losses)
    return (f"Elo difference: {_fmt(e)} +/- {_fmt(m)}, LOS: {100 * los(wins, losses):.1f} %, "
            f"DrawRatio: {100 * draws / n:.1f} %")


def _fmt(x: float | None) -> str:
    if x is None:
        return "n/a"
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x + 0.0:.1f}" if abs(x) >= 0.05 else "0.0"
