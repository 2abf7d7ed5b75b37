"""ccbench.analysis on synthetic data whose answer is known from theory or construction."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import signal, stats

from ccbench import analysis


def normal(seed, n, mean=0.0, sd=1.0):
    return np.random.default_rng(seed).normal(mean, sd, n)


# ---- small helpers ----------------------------------------------------------------------------


def test_identical_repeats():
    assert analysis.identical_repeats([3.0, 3.0, 3.0])
    assert analysis.identical_repeats([0, 0])
    assert analysis.identical_repeats([1e9, 1e9 * (1 + 1e-14)])  # within rounding
    assert not analysis.identical_repeats([3.0, 3.0, 3.0 + 1e-9])
    assert not analysis.identical_repeats([5.0])  # one value is not "repeats"
    assert not analysis.identical_repeats([])
    assert analysis.identical_repeats([2.0, None, float("nan"), 2.0])


def test_t_wrappers_are_inverse():
    for df in (1, 3, 7.5, 40):
        for q in (0.6, 0.9, 0.975):
            assert analysis.t_cdf(analysis.t_quantile(q, df), df) == pytest.approx(q, abs=1e-12)
    with pytest.raises(ValueError):
        analysis.t_quantile(1.0, 3)


def test_mean_ci_covers_the_true_mean_at_the_nominal_rate():
    # Student's interval is exact for normal data: 95 % of intervals from n = 5 contain μ.
    rng = np.random.default_rng(11)
    hits = 0
    for _ in range(2000):
        ci = analysis.mean_ci(rng.normal(10.0, 3.0, 5))
        hits += ci.lo <= 10.0 <= ci.hi
    assert 0.935 <= hits / 2000 <= 0.965


def test_mean_ci_of_a_nonnegative_quantity_is_cut_at_zero():
    """A skewed small sample near 0: the plain t interval reaches below 0, the non-negative one
    starts at 0 and keeps the t interval's upper end; the default stays the plain t interval
    (callers that do not ask are unchanged)."""
    x = [0.1, 5.0, 0.2]
    plain = analysis.mean_ci(x)
    assert plain.lo < 0  # the problem: a goodput interval below 0
    cut = analysis.mean_ci(x, nonnegative=True)
    assert cut.lo == 0.0 and cut.lo >= 0
    assert (cut.mean, cut.hi, cut.n, cut.method) == (plain.mean, plain.hi, plain.n, "t")
    assert analysis.mean_ci(x, bounds=(0.0, None)) == cut


def test_mean_ci_cut_only_bites_near_zero():
    """A mean large against its spread: the same interval with and without the cut."""
    for x in ([50.0, 51.0, 49.5], [5.0, 4.0, 6.0, 5.5], normal(7, 10, 100.0, 10.0)):
        assert analysis.mean_ci(x, nonnegative=True) == analysis.mean_ci(x)
    # edge cases are unchanged: one value has no interval, none has no mean
    assert analysis.mean_ci([3.0], nonnegative=True) == analysis.mean_ci([3.0])
    assert analysis.mean_ci([], nonnegative=True).mean is None


def test_mean_ci_bounds_cut_both_sides():
    """Jain's index of two flows lies in [0.5, 1], a share in [0, 1]."""
    jain = analysis.mean_ci([0.9, 1.0, 0.98], bounds=(0.5, 1.0))
    assert jain.hi == 1.0 and 0.5 <= jain.lo < jain.mean < 1.0
    assert isinstance(jain.hi, float)
    share = analysis.mean_ci([0.02, 0.3, 0.05], bounds=(0.0, 1.0))
    assert share.lo == 0.0 and share.hi == analysis.mean_ci([0.02, 0.3, 0.05]).hi < 1.0
    # nonnegative and an upper bound together; nonnegative never lowers a higher low bound
    assert analysis.mean_ci([0.9, 1.0, 0.98], nonnegative=True, bounds=(None, 1.0)).hi == 1.0
    assert analysis.mean_ci([0.55, 0.99, 0.6], nonnegative=True, bounds=(0.5, None)).lo == 0.5


# ---- bootstrap --------------------------------------------------------------------------------


def test_bootstrap_is_deterministic_and_close_to_t_for_normal_data():
    x = normal(1, 60, 50.0, 5.0)
    a = analysis.bootstrap_ci(x, seed=3)
    assert a == analysis.bootstrap_ci(x, seed=3)
    assert a != analysis.bootstrap_ci(x, seed=4)
    t = analysis.mean_ci(x)
    assert a.mean == pytest.approx(t.mean)
    # for the mean of 60 normal values the bootstrap and t widths agree to ~10 %
    assert (a.hi - a.lo) == pytest.approx(t.hi - t.lo, rel=0.15)
    assert a.lo < a.mean < a.hi and a.method == "percentile"


def test_bootstrap_edge_cases_and_other_statistics():
    assert analysis.bootstrap_ci([]).mean is None
    one = analysis.bootstrap_ci([4.0])
    assert one.mean == 4.0 and one.lo is None and one.hi is None
    const = analysis.bootstrap_ci([2.0] * 6, method="bca")
    assert (const.lo, const.mean, const.hi) == (2.0, 2.0, 2.0)
    # a statistic without an axis argument falls back to a loop; the median of resamples is
    # always one of the sample values, so the interval ends must be sample values too
    x = normal(2, 21)
    med = analysis.bootstrap_ci(x, stat=lambda v: float(np.median(v)), n_boot=500)
    assert med.mean == pytest.approx(np.median(x))
    assert np.isclose(x, med.lo).any() and np.isclose(x, med.hi).any()
    with pytest.raises(ValueError):
        analysis.bootstrap_ci(x, method="basic")


def test_bca_corrects_toward_the_skew_of_exponential_data():
    # mean of exponential data: the sampling distribution is right-skewed, so the BCa
    # interval (positive acceleration) lies to the right of the percentile interval and
    # covers the true mean (1.0) at least as often.
    rng = np.random.default_rng(5)
    cover = {"percentile": 0, "bca": 0}
    shifts = []
    for i in range(300):
        x = rng.exponential(1.0, 12)
        p = analysis.bootstrap_ci(x, n_boot=1000, seed=i)
        b = analysis.bootstrap_ci(x, n_boot=1000, seed=i, method="bca")
        cover["percentile"] += p.lo <= 1.0 <= p.hi
        cover["bca"] += b.lo <= 1.0 <= b.hi
        shifts.append(b.hi - p.hi)
    assert np.median(shifts) > 0
    assert cover["bca"] >= cover["percentile"]


def test_bca_agrees_with_scipy():
    # independent implementation (scipy.stats.bootstrap, BCa); Monte Carlo error at 20000
    # resamples is ~1 % of the interval ends
    x = np.random.default_rng(7).exponential(1.0, 15)
    ours = analysis.bootstrap_ci(x, n_boot=20000, method="bca")
    ref = stats.bootstrap((x,), np.mean, n_resamples=20000, method="BCa", random_state=1).confidence_interval
    assert ours.lo == pytest.approx(ref.low, rel=0.03)
    assert ours.hi == pytest.approx(ref.high, rel=0.03)


# ---- ratio ------------------------------------------------------------------------------------


def test_fieller_coverage_of_a_known_ratio():
    rng = np.random.default_rng(21)
    hits = 0
    for _ in range(1500):
        r = analysis.ratio_ci(rng.normal(10.0, 2.0, 8), rng.normal(5.0, 1.0, 8))
        assert r.bounded
        hits += r.lo <= 2.0 <= r.hi
    assert 0.93 <= hits / 1500 <= 0.97


def test_fieller_matches_delta_method_when_noise_is_small():
    a, b = normal(1, 10, 200.0, 0.2), normal(2, 10, 100.0, 0.1)
    r = analysis.ratio_ci(a, b)
    # delta method: var(ā/b̄) ≈ (va + ρ² vb) / b̄², t with the Welch-Satterthwaite df
    va, vb = np.var(a, ddof=1) / 10, r.ratio**2 * np.var(b, ddof=1) / 10
    t = stats.t.ppf(0.975, (va + vb) ** 2 / (va**2 / 9 + vb**2 / 9))
    se = math.sqrt(va + vb) / b.mean()
    assert r.lo == pytest.approx(r.ratio - t * se, rel=2e-3)
    assert r.hi == pytest.approx(r.ratio + t * se, rel=2e-3)
    assert r.ratio == pytest.approx(a.mean() / b.mean())


def test_ratio_unbounded_when_denominator_may_be_zero():
    a = [10.0, 11.0, 9.0, 10.5]
    b = [1.0, -1.0, 2.0, -1.5]  # mean 0.125, its t interval includes 0
    r = analysis.ratio_ci(a, b)
    assert r.ratio == pytest.approx(10.125 / 0.125)
    assert not r.bounded and r.lo is None and r.hi is None
    assert not analysis.ratio_ci(a, b, method="bootstrap").bounded
    assert analysis.ratio_ci(a, [1.0, -1.0]).ratio is None  # mean(b) == 0
    assert analysis.ratio_ci(a, [2.0]).lo is None  # one value: no interval
    const = analysis.ratio_ci([6.0, 6.0], [3.0, 3.0, 3.0])
    assert (const.lo, const.ratio, const.hi, const.bounded) == (2.0, 2.0, 2.0, True)


def test_bootstrap_ratio_agrees_with_fieller_for_large_samples():
    a, b = normal(3, 200, 900.0, 50.0), normal(4, 200, 300.0, 30.0)
    f = analysis.ratio_ci(a, b)
    bt = analysis.ratio_ci(a, b, method="bootstrap")
    assert bt.method == "bootstrap" and bt == analysis.ratio_ci(a, b, method="bootstrap")
    assert bt.lo == pytest.approx(f.lo, rel=0.01) and bt.hi == pytest.approx(f.hi, rel=0.01)


# ---- tests of two samples ---------------------------------------------------------------------


def test_welch_matches_scipy_and_its_interval_is_dual_to_the_test():
    for seed in range(20):
        a, b = normal(seed, 7, 0.0, 1.0), normal(seed + 100, 12, 0.8, 3.0)
        w = analysis.welch_test(a, b)
        ref = stats.ttest_ind(a, b, equal_var=False)
        assert w.statistic == pytest.approx(ref.statistic, rel=1e-10)
        assert w.p_value == pytest.approx(ref.pvalue, rel=1e-9)
        assert w.df == pytest.approx(ref.df, rel=1e-10)
        # the 95 % interval of the difference excludes 0 exactly when p < 0.05
        assert (w.diff_lo > 0 or w.diff_hi < 0) == (w.p_value < 0.05)
        assert w.mean_diff == pytest.approx(a.mean() - b.mean())


def test_welch_p_values_are_uniform_under_the_null():
    rng = np.random.default_rng(8)
    p = np.array([analysis.welch_test(rng.normal(0, 1, 6), rng.normal(0, 4, 9)).p_value for _ in range(2000)])
    assert 0.04 <= np.mean(p < 0.05) <= 0.06


def test_welch_degenerate_samples():
    same = analysis.welch_test([5.0, 5.0, 5.0], [5.0, 5.0])
    assert (same.statistic, same.p_value, same.diff_lo, same.diff_hi) == (0.0, 1.0, 0.0, 0.0)
    diff = analysis.welch_test([5.0, 5.0, 5.0], [7.0, 7.0])
    assert diff.p_value == 0.0 and diff.statistic == -math.inf and diff.mean_diff == -2.0
    short = analysis.welch_test([1.0], [2.0, 3.0])
    assert short.p_value is None and short.significant() is None and short.mean_diff == -1.5


def test_mann_whitney_exact_small_case():
    # all of a below all of b: U_a = 0; under H0 each of the C(6,3) = 20 orderings of ranks is
    # equally likely, and U = 0 or U = 9 happen once each: two-sided p = 2/20.
    r = analysis.mann_whitney([1, 2, 3], [4, 5, 6])
    assert r.statistic == 0 and r.effect == 0.0
    assert r.p_value == pytest.approx(0.1)
    r2 = analysis.mann_whitney([4, 5, 6], [1, 2, 3])
    assert r2.statistic == 9 and r2.effect == 1.0
    assert analysis.mann_whitney([2, 2, 2], [2, 2]).p_value == 1.0
    assert analysis.mann_whitney([], [1, 2]).p_value is None
    sep = analysis.mann_whitney(np.arange(10.0), np.arange(10.0) + 100)
    assert sep.significant(0.001)


# ---- bimodality -------------------------------------------------------------------------------


def test_two_clusters_are_bimodal():
    # ten repeats: five where the group got ~900 Mbit/s, five where it got ~100
    x = np.concatenate([normal(1, 5, 900.0, 20.0), normal(2, 5, 100.0, 20.0)])
    b = analysis.bimodality(x)
    assert b.bimodal is True and b.n == 10
    assert b.means[0] == pytest.approx(100.0, abs=30) and b.means[1] == pytest.approx(900, abs=30)
    assert b.weights == pytest.approx((0.5, 0.5), abs=0.01)
    assert b.ashman_d > 10 and b.delta_bic > 6


def test_normal_repeats_are_rarely_bimodal():
    flagged = [analysis.bimodality(normal(seed, 10, 500.0, 40.0)).bimodal for seed in range(20)]
    assert all(f is not None for f in flagged)
    assert sum(flagged) <= 1


def test_em_recovers_a_known_mixture():
    rng = np.random.default_rng(4)
    x = np.concatenate([rng.normal(0.0, 1.0, 120), rng.normal(6.0, 1.0, 280)])
    b = analysis.bimodality(x)
    assert b.bimodal
    assert b.means[0] == pytest.approx(0.0, abs=0.25) and b.means[1] == pytest.approx(6.0, abs=0.25)
    assert b.weights[0] == pytest.approx(0.3, abs=0.05)
    assert b.sd == pytest.approx(1.0, abs=0.15)
    assert b.ashman_d == pytest.approx(6.0, abs=0.8)


def test_bimodality_edge_cases():
    assert analysis.bimodality([1, 2, 3, 4, 5]).bimodal is None  # below min_n
    assert analysis.bimodality([3.0] * 8).bimodal is False
    # one odd value is an outlier, not a second mode; three and three is two modes
    assert analysis.bimodality([1, 1, 1, 1, 1, 5]).bimodal is False
    assert analysis.bimodality([1, 1, 1, 5, 5, 5]).bimodal is True


# ---- periodicity ------------------------------------------------------------------------------

T10HZ = np.arange(2000) * 0.1  # 200 s at 10 Hz


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sine_plus_noise_period(seed):
    x = np.sin(2 * np.pi * T10HZ / 20.0) + normal(seed, T10HZ.size)
    p = analysis.dominant_period(T10HZ, x)
    assert p.significant and p.period_s == pytest.approx(20.0, abs=1.0)
    # signal variance 1/2 of a total 3/2: a third of the variance is in the peak
    assert p.strength == pytest.approx(1 / 3, abs=0.05)
    assert p.p_value < 1e-10 and p.acf_at_period > 0.2


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_on_off_square_wave_gives_the_fundamental(seed):
    # a group gets ~900 Mbit/s for 10 s, then ~0 for 10 s; harmonics at 6.7 s, 4 s, ...
    x = np.where(T10HZ % 20.0 < 10.0, 900e6, 0.0) + normal(seed, T10HZ.size, 0, 50e6)
    p = analysis.dominant_period(T10HZ, x)
    assert p.significant and p.period_s == pytest.approx(20.0, abs=1.0)
    # a square wave holds 8/π² of its variance in the fundamental
    assert p.strength == pytest.approx(8 / np.pi**2, abs=0.05)


def test_period_between_fourier_bins_and_short_duty_cycle():
    # 17.3 s is not k/100 s; 6 s on of every 17.3 s
    t = np.arange(1000) * 0.1
    x = np.where(t % 17.3 < 6.0, 900.0, 0.0) + normal(5, t.size, 0, 30)
    assert analysis.dominant_period(t, x).period_s == pytest.approx(17.3, abs=1.0)


def test_stronger_second_harmonic_still_gives_the_true_period():
    # the 10 s component has 4x the power of the 20 s one, but the signal repeats every 20 s
    x = 0.5 * np.sin(2 * np.pi * T10HZ / 20) + np.sin(2 * np.pi * T10HZ / 10 + 1.0)
    p = analysis.dominant_period(T10HZ, x + normal(9, T10HZ.size, 0, 0.2))
    assert p.period_s == pytest.approx(20.0, abs=1.0)


@pytest.mark.parametrize("seed", range(8))
def test_white_and_red_noise_have_no_period(seed):
    e = normal(seed, T10HZ.size)
    assert analysis.dominant_period(T10HZ, e).period_s is None
    red = signal.lfilter([1.0], [1.0, -0.9], e)  # AR(1): correlated, but nothing repeats
    r = analysis.dominant_period(T10HZ, red)
    assert r.period_s is None and not r.significant


def test_fisher_g_against_its_exact_law():
    # m = 2: g = max(U, 1-U) with U uniform, so P(G > x) = 2(1 - x) for x in [1/2, 1]
    for g in (0.5, 0.6, 0.9):
        assert analysis._fisher_g_pvalue(g, 2) == pytest.approx(2 * (1 - g))
    # m = 50: compare with simulation of max/sum of 50 exponential ordinates
    e = np.random.default_rng(0).exponential(size=(20000, 50))
    g = e.max(axis=1) / e.sum(axis=1)
    for x in (0.12, 0.15, 0.2):
        assert analysis._fisher_g_pvalue(x, 50) == pytest.approx(np.mean(g > x), abs=0.01)


def test_periodicity_edge_cases_and_uneven_sampling():
    assert analysis.dominant_period([0, 1, 2], [1, 2, 3]).period_s is None
    assert analysis.dominant_period(T10HZ, np.full(T10HZ.size, 7.0)).period_s is None
    rng = np.random.default_rng(3)
    t = np.sort(rng.uniform(0, 200, 1500))  # jittered sample times: resampled
    x = np.sin(2 * np.pi * t / 20) + rng.normal(0, 0.5, t.size)
    assert analysis.dominant_period(t, x).period_s == pytest.approx(20.0, abs=1.0)
    # the range limits are obeyed: a 20 s sine searched only below 15 s has no period
    assert analysis.dominant_period(T10HZ, np.sin(2 * np.pi * T10HZ / 20), max_period_s=15).period_s is None


def test_periodogram_peak_and_parseval():
    periods, power = analysis.periodogram(T10HZ, np.sin(2 * np.pi * T10HZ / 25.0))
    assert np.all(np.diff(periods) > 0)
    assert periods[np.argmax(power)] == pytest.approx(25.0)
    e = normal(1, T10HZ.size)
    _, pw = analysis.periodogram(T10HZ, e)
    # "spectrum" scaling: the one-sided ordinates add up to the (detrended) variance
    assert pw.sum() == pytest.approx(np.var(signal.detrend(e)), rel=1e-6)
    fine, _ = analysis.periodogram(T10HZ, e, oversample=4)
    assert fine.size > 3 * periods.size


# ---- steps at events --------------------------------------------------------------------------


def test_entries_into_a_state_are_its_first_samples_only():
    t = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    st = ["probe_rtt", "probe_bw", "probe_rtt", "probe_rtt", "probe_bw", "probe_rtt", "probe_bw"]
    assert analysis.entries_into(t, st, "probe_rtt") == [0.2, 0.5]  # t = 0 was not an entry


def test_event_rounds_group_events_of_many_flows():
    flows = [[10.0, 20.1], [10.3, 20.0], [10.9, 35.0], [11.2]]
    rounds = analysis.event_rounds(flows, window_s=1.0)
    assert [(r.start_s, r.n) for r in rounds] == [(10.0, 3), (11.2, 1), (20.0, 2), (35.0, 1)]
    assert [r.start_s for r in analysis.event_rounds(flows, min_events=2)] == [10.0, 20.0]


def test_level_change_at_events_that_set_the_rhythm_against_midway():
    # a level that doubles or halves at every event, 10 s apart, plus noise: ln 2 at the events,
    # only noise midway; a level that moves midway instead gives the reverse
    events = np.arange(15.0, 190.0, 10.0)
    level = np.where(((T10HZ - 15.0) // 10.0) % 2 == 0, 200.0, 100.0)
    x = level * np.exp(normal(3, T10HZ.size, 0, 0.05))
    ch = analysis.level_change_at(T10HZ, x, events)
    assert ch.at_events == pytest.approx(math.log(2), abs=0.05)
    assert ch.midway < 0.05
    assert ch.n_events == len(events) and ch.n_midway == len(events) - 1
    late = analysis.level_change_at(T10HZ, x, [*events, 197.0])  # its after-window leaves the series
    assert late.n_events == len(events)
    off = analysis.level_change_at(T10HZ, x, events + 5.0)
    assert off.at_events < 0.05 and off.midway == pytest.approx(math.log(2), abs=0.05)
    assert analysis.level_change_at([], [], events).at_events is None


# ---- steady state -----------------------------------------------------------------------------

T100 = np.arange(1000) * 0.1  # 100 s at 10 Hz


@pytest.mark.parametrize("seed", range(4))
def test_mser_drops_an_exponential_ramp(seed):
    # slow-start-like: doubling every second until it reaches 100 at t = 10 s, then flat
    x = np.where(T100 < 10.0, 100.0 * 2.0 ** (T100 - 10.0), 100.0) + normal(seed, T100.size, 0, 5)
    start = analysis.steady_state_start(T100, x)
    assert 8.0 <= start <= 12.0


@pytest.mark.parametrize("seed", range(6))
def test_mser_keeps_a_stationary_series(seed):
    x = normal(seed, T100.size, 100.0, 5.0)
    assert analysis.steady_state_start(T100, x) <= 5.0


def test_steady_state_details_and_table():
    x = np.where(T100 < 10.0, 0.0, 50.0)
    ss = analysis.steady_state(T100, x)
    assert ss.start_s == pytest.approx(10.0) and ss.mean == 50.0 and not ss.at_limit
    assert ss.n_kept == 900 and ss.start_index == 100
    ramp = analysis.steady_state(T100, T100)  # never settles: truncation at the half limit
    assert ramp.at_limit
    assert analysis.steady_state([], []).start_s is None
    df = pd.DataFrame(
        {
            "run_id": ["a"] * 1000 + ["b"] * 1000,
            "flow_id": 0,
            "t_s": np.concatenate([T100, T100]),
            "goodput_bps": np.concatenate([x, np.full(1000, 9.0)]),
        }
    )
    tab = analysis.steady_state_table(df)
    assert list(tab.run_id) == ["a", "b"]
    assert list(tab.start_s) == [pytest.approx(10.0), 0.0]
    assert list(tab.steady_mean) == [50.0, 9.0]


# ---- tables -----------------------------------------------------------------------------------


def test_summarise_with_bootstrap_columns():
    df = pd.DataFrame({"cc": ["a"] * 30 + ["b"] * 30, "v": np.concatenate([normal(1, 30, 10.0), normal(2, 30, 20.0)])})
    plain = analysis.summarise(df, "cc", "v")
    assert list(plain.columns) == ["cc", "n", "mean", "ci_lo", "ci_hi", "cv"]
    s = analysis.summarise(df, "cc", "v", bootstrap=True)
    assert list(s.columns) == list(plain.columns) + ["boot_lo", "boot_hi"]
    pd.testing.assert_frame_equal(s[plain.columns], plain)
    assert (s.boot_lo < s["mean"]).all() and (s["mean"] < s.boot_hi).all()
    assert s.equals(analysis.summarise(df, "cc", "v", bootstrap=True))  # seeded


def test_bbr_cwnd_beyond_bdp_is_cwnd_minus_twice_the_bdp_estimate_in_probe_bw():
    # bw 80 Mbit/s and min_rtt 10 ms: 2 x BDP = 2 x 80e6 x 0.010 / 8 / 1448 = 138.1 packets
    bdp2 = 2 * 80e6 * 0.010 / 8 / 1448
    t = np.arange(0.1, 20.0, 0.1)
    rows = pd.DataFrame(
        {
            "t_s": t,
            "cc": "bbr",
            "cc_state": ["probe_rtt" if 10 <= x < 10.3 else "probe_bw" for x in t],
            "cwnd_pkts": [4 if 10 <= x < 10.3 else (500 if x <= 5 else round(bdp2) + 25) for x in t],
            "bw_est_bps": 80e6,
            "min_rtt_ms": 10.0,
        }
    )
    cubic = rows.assign(cc="cubic", cc_state="open", cwnd_pkts=900)
    got = analysis.bbr_cwnd_beyond_bdp_pkts(pd.concat([rows, cubic]))
    # ProbeRTT rows, the first 5 s (startup's cwnd of 500) and the CUBIC flow are left out
    assert got == pytest.approx(round(bdp2) + 25 - bdp2)
    assert analysis.bbr_cwnd_beyond_bdp_pkts(cubic) is None
    assert analysis.bbr_cwnd_beyond_bdp_pkts(rows.drop(columns="bw_est_bps")) is None


def test_correlation_is_pearsons_r_with_its_t_test():
    x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    c = analysis.correlation(x, [10 - 2 * v for v in x])
    assert c.r == pytest.approx(-1.0) and c.p_value < 1e-6 and c.n == 6 and c.significant()
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal(40), rng.standard_normal(40)
    c = analysis.correlation(a, 0.5 * a + b)
    assert c.r == pytest.approx(np.corrcoef(a, 0.5 * a + b)[0, 1])
    # the t test of r = 0: t = r sqrt((n-2)/(1-r^2)) on n-2 degrees of freedom
    t = c.r * math.sqrt(38 / (1 - c.r**2))
    assert c.p_value == pytest.approx(2 * stats.t.sf(abs(t), 38))
    # pairs with a missing side are dropped; too few pairs, or a constant side, give no r
    assert analysis.correlation([1, 2, None, 4, 5, 6], [1, 2, 3, None, 5, 6]).n == 4
    assert analysis.correlation([1, 2, 3, 4], [4, 3, 2, 1]).r is None
    none = analysis.correlation([1, 2, 3, 4, 5], [7, 7, 7, 7, 7])
    assert none.r is None and none.p_value is None and not none.significant()
