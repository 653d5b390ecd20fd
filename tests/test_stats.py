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


# ------------------------------------------------------------------ pentanomial (pairs)
# Reference values: fishtest's own self-test samples (server/fishtest/stats/stat_util.py),
# evaluated with fishtest's LLRcalc.LLR_logistic and stat_util.get_elo.
FT1 = [10789, 19328, 33806, 19402, 10543]
FT2 = [39, 2226, 31451, 2412, 40]


def test_pentanomial_llr_matches_fishtest():
    assert S.llr_pentanomial(FT1, -3, 1) == pytest.approx(2.1310678117855, abs=1e-8)
    assert S.llr_pentanomial(FT2, 0.2, 0.9) == pytest.approx(2.16254258004836, abs=1e-8)
    assert S.SPRT(-3, 1).llr_pentanomial(FT1) == S.llr_pentanomial(FT1, -3, 1)
    assert S.llr_pentanomial([0] * 5, 0, 5) == 0.0


def test_pentanomial_elo_matches_fishtest():
    for counts, (elo, e95, los, nelo) in (
            (FT1, (-0.7735773359165423, 1.2775798957280218, 0.1176588580327751, -0.9516290044726476)),
            (FT2, (0.902981048809024, 0.6625314859816553, 0.9962220973354207, 3.450799606946096)),
            ([0, 3, 10, 5, 2], (52.49112967044888, 66.49054926047955, 0.9442410565319299, 87.42081659113526))):
        got = S.pentanomial_elo(counts)
        assert got == pytest.approx((elo, e95, los), rel=1e-9), counts
        assert S.pentanomial_nelo(counts) == pytest.approx(nelo, rel=1e-9)
    assert all(math.isnan(x) for x in S.pentanomial_elo([0] * 5))


def test_pair_interval_nelo_and_los_need_enough_pairs():
    """fishtest's get_elo answers for any counts (empty cells count 1e-3); on a short match
    that is far too confident: n/a (None) below 10 pairs or 2 non-empty cells."""
    for counts in ([0, 0, 0, 1, 1],          # 4 games: +/- 27.8, nElo 2833.7 by fishtest's formula
                   [0, 0, 1, 0, 0],          # one drawn pair: +/- 34.0
                   [0, 2, 3, 2, 2],          # 9 pairs, 4 cells
                   [0, 0, 25, 0, 0]):        # 25 pairs, all in one cell
        elo, margin, nelo, los = S.pair_stats(counts)
        assert (margin, nelo, los) == (None, None, None), counts
        assert elo == S.pentanomial_elo(counts)[0] and not S.pentanomial_enough(counts)
    for counts in ([0, 0, 5, 0, 5], FT1, [0, 3, 10, 5, 2]):
        assert S.pentanomial_enough(counts)
        e, m, los = S.pentanomial_elo(counts)
        assert S.pair_stats(counts) == (e, m, S.pentanomial_nelo(counts), los)
    assert S._fmt(None) == "n/a"


def test_pentanomial_by_hand():
    # 4 pairs: LD, DD, WD, WW -> pair means 0.25, 0.5, 0.75, 1 (the empty LL cell gets 1e-3)
    counts = [0, 1, 1, 1, 1]
    n = 4.001
    pdf = [(0.0, 1e-3 / n)] + [(a, 1 / n) for a in (0.25, 0.5, 0.75, 1.0)]
    mu = sum(a * p for a, p in pdf)
    var = sum(p * (a - mu) ** 2 for a, p in pdf)
    se = math.sqrt(2 * var / (2 * n))
    elo, e95, los = S.pentanomial_elo(counts)
    assert elo == pytest.approx(S.elo_from_score(mu))
    assert e95 == pytest.approx((S.elo_from_score(mu + S.Z95 * se) - S.elo_from_score(mu - S.Z95 * se)) / 2)
    assert S.pentanomial_nelo(counts) == pytest.approx((mu - 0.5) / math.sqrt(2 * var) * 800 / math.log(10))
    # the exact GSPRT is close to its normal approximation N (s1-s0)(2mu-s0-s1) / (2 var)
    big = [100, 400, 900, 450, 150]
    n, pdf = S._pdf_of(big)
    mu = sum(a * p for a, p in pdf)
    var = sum(p * (a - mu) ** 2 for a, p in pdf)
    s0, s1 = S.score_from_elo(0), S.score_from_elo(5)
    assert S.llr_pentanomial(big, 0, 5) == pytest.approx(n * (s1 - s0) * (2 * mu - s0 - s1) / var / 2, rel=0.02)


def test_pair_cells():
    assert [S.pair_cell(a, b) for a, b in ((0, 0), (0, 0.5), (0.5, 0), (1, 0), (0.5, 0.5), (1, 0.5), (1, 1))] == \
        [0, 1, 1, 2, 2, 3, 4]
    assert S.PENTANOMIAL_LABELS == ("LL", "LD", "DD+WL", "WD", "WW")
