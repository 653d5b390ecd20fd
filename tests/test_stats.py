"""Match statistics (bench/stats.py) against hand-computed values."""
import math

import pytest

from bench import stats as S


def test_score_and_elo():
    assert S.score(1, 2, 1) == 0.5
    assert S.elo_from_score(0.5) == 0.0
    assert S.elo_from_score(0.75) == pytest.approx(190.848, abs=1e-3)    # 400 log10(3)
    assert S.elo_from_score(0.25) == pytest.approx(-190.848, abs=1e-3)
    assert S.elo_from_score(1.0) == math.inf and S.elo_from_score(0.0) == -math.inf
    for e in (-300, -10, 0, 42.5, 500):
        assert S.elo_from_score(S.score_from_elo(e)) == pytest.approx(e)
    with pytest.raises(ValueError):
        S.score(0, 0, 0)


def test_error_margin_by_hand():
    # W=60 D=20 L=20: s = 0.7, var = (60*.09 + 20*.04 + 20*.49)/100 = 0.16, se = 0.04
    e, m = S.elo_with_error(60, 20, 20)
    assert e == pytest.approx(-400 * math.log10(1 / 0.7 - 1))
    lo, hi = 0.7 - S.Z95 * 0.04, 0.7 + S.Z95 * 0.04
    want = (S.elo_from_score(hi) - S.elo_from_score(lo)) / 2
    assert m == pytest.approx(want)
    assert 60 < m < 70
    assert S.elo_with_error(2, 0, 0)[1] == math.inf
    assert all(math.isnan(x) for x in S.elo_with_error(0, 0, 0))


def test_los():
    assert S.los(0, 0) == 0.5
    assert S.los(10, 10) == pytest.approx(0.5)
    # W-L = 10, W+L = 50: 0.5 (1 + erf(10 / 10)) = 0.92135
    assert S.los(30, 20) == pytest.approx(0.5 * (1 + math.erf(1.0)))
    assert S.los(20, 30) == pytest.approx(1 - S.los(30, 20))


def test_sprt_bounds_and_parse():
    t = S.SPRT.parse("elo0=0 elo1=5 alpha=0.05 beta=0.05")
    lo, hi = t.bounds
    assert lo == pytest.approx(math.log(0.05 / 0.95)) and hi == pytest.approx(math.log(0.95 / 0.05))
    assert S.SPRT.parse(["elo0=-3", "elo1=1"]).elo0 == -3
    for bad in ("elo0=5 elo1=0", "alpha=0", "foo=1", "elo0"):
        with pytest.raises(ValueError):
            S.SPRT.parse(bad)


def test_llr_exact_and_approximation_agree_and_decide():
    # a clearly better engine: the LLR is positive and crosses the upper bound
    w, d, l = 600, 300, 400
    exact, approx = S.llr(w, d, l, 0, 5), S.llr_approx(w, d, l, 0, 5)
    assert exact > 0 and approx > 0
    assert exact == pytest.approx(approx, rel=0.05)
    # near the hypotheses (score ~0.504) the normal approximation is very close
    exact, approx = S.llr(3100, 3800, 3000, 0, 5), S.llr_approx(3100, 3800, 3000, 0, 5)
    assert exact == pytest.approx(approx, rel=2e-3)
    t = S.SPRT(0, 5)
    assert t.status(w, d, l) == "H1"
    assert t.status(l, d, w) == "H0"                    # mirrored: clearly worse
    assert t.status(10, 10, 10) == "continue"
    # at the midpoint score between s0 and s1 both are zero, and the sign follows the score:
    # with elo0 = -elo1 the midpoint is 0.5, i.e. as many wins as losses
    assert S.llr_approx(100, 50, 100, -5, 5) == pytest.approx(0.0, abs=1e-9)
    assert S.llr(100, 50, 100, -5, 5) == pytest.approx(0.0, abs=1e-6)
    assert S.llr(101, 50, 99, -5, 5) > 0 and S.llr_approx(101, 50, 99, -5, 5) > 0
    assert S.llr(99, 50, 101, -5, 5) < 0 and S.llr_approx(99, 50, 101, -5, 5) < 0
    # no games: no evidence either way
    assert S.llr(0, 0, 0, 0, 5) == 0.0
    # equal results: the LLR favours H0 (elo 0) over H1 (elo 5)
    assert S.llr(100, 100, 100, 0, 5) < 0


def test_mle_has_requested_mean():
    n, pdf = S._pdf(30, 50, 20)
    for s in (0.45, 0.5, 0.6):
        q = S._mle_expected(pdf, s)
        assert sum(p for _, p in q) == pytest.approx(1.0, abs=1e-9)
        assert sum(a * p for a, p in q) == pytest.approx(s, abs=1e-9)


def test_summary_line():
    line = S.summary(60, 20, 20)
    assert line.startswith("Elo difference: 147.2 +/- ") and "LOS:" in line and "DrawRatio: 20.0 %" in line
