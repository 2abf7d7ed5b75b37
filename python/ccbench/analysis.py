"""Statistics that never need to know which backend produced the numbers.

Everything here takes plain numbers (sequences, numpy arrays, DataFrame columns) and returns
plain numbers or small frozen dataclasses; nothing reads a store or looks at ``backend``.
Null and NaN entries are ignored by every function that takes a list of values.

Methods and references:

- means: Student-t interval (``mean_ci``); percentile or BCa bootstrap (``bootstrap_ci``,
  Efron 1979; Efron & Tibshirani 1993, ch. 13-14), seeded so results are reproducible.
- ratio of two means (``ratio_ci``): Fieller's theorem (Fieller 1954) for independent samples,
  or a bootstrap of the ratio.
- two-sample tests: Welch's unequal-variance t test (Welch 1947; ``welch_test``) and the
  Mann-Whitney U test (Mann & Whitney 1947; ``mann_whitney``).
- spread and fairness: coefficient of variation, Jain's index (Jain, Chiu & Hawe 1984).
- bimodality across repeats: two-component Gaussian mixture fitted by EM against one Gaussian,
  compared by BIC (Schwarz 1978), plus Ashman's D > 2 (Ashman, Bird & Zepf 1994).
- periodicity of a time series: periodogram peak, Fisher's g test (Fisher 1929), confirmed by
  the autocorrelation at that lag (``dominant_period``).
- steps at events: the level change of a series across given instants (``level_change_at``)
  against the change midway between them, and the grouping of many flows' events into rounds
  (``event_rounds``): e.g. whether CUBIC's throughput moves when BBR's flows enter ProbeRTT.
- start-up removal: MSER-5 (White 1997; White, Cobb & Spratt 2000) in ``steady_state_start``.
- reference model: Mathis et al. 1997 Reno throughput.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable, Optional, Sequence

import numpy as np


class _Lazy:
    """A scipy submodule imported on first use: importing scipy.stats and scipy.signal takes
    ~1 s, and most users of this module (every `ccbench run`, for Jain's index) need neither."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str):
        import importlib

        return getattr(importlib.import_module(self._name), attr)


sps = _Lazy("scipy.stats")
sps_signal = _Lazy("scipy.signal")

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = [
    "jain_index",
    "coefficient_of_variation",
    "identical_repeats",
    "MeanCI",
    "mean_ci",
    "bootstrap_ci",
    "t_quantile",
    "t_cdf",
    "Ratio",
    "ratio_ci",
    "TestResult",
    "welch_test",
    "mann_whitney",
    "Bimodality",
    "bimodality",
    "Periodicity",
    "periodogram",
    "dominant_period",
    "EventRound",
    "event_rounds",
    "entries_into",
    "probe_rtt_entries",
    "probe_rtt_rounds",
    "LevelChange",
    "level_change_at",
    "SteadyState",
    "steady_state_start",
    "steady_state",
    "steady_state_table",
    "mathis_goodput_bps",
    "summarise",
    "ratio_table",
]


def _finite(values: Iterable[float]) -> np.ndarray:
    a = np.asarray([v for v in values if v is not None], dtype=float).ravel()
    return a[np.isfinite(a)]


# ---- spread and fairness ----------------------------------------------------------------------


def jain_index(values: Iterable[float]) -> Optional[float]:
    """Jain's fairness index (Σx)² / (n·Σx²): 1 when all equal, 1/n when one takes all.

    None for no values or when every value is 0 (fairness of nothing is undefined).
    Null / NaN entries are ignored. Reference: Jain, Chiu & Hawe, DEC-TR-301 (1984).
    """
    x = _finite(values)
    if x.size == 0:
        return None
    sq = float(np.sum(x * x))
    if sq == 0.0:
        return None
    s = float(np.sum(x))
    return s * s / (x.size * sq)


def coefficient_of_variation(values: Iterable[float], ddof: int = 1) -> Optional[float]:
    """Standard deviation / |mean| (sample standard deviation, ``ddof=1``, by default).

    None when there are fewer than ``ddof + 1`` values or the mean is 0.
    """
    x = _finite(values)
    if x.size <= ddof:
        return None
    m = float(np.mean(x))
    if m == 0.0:
        return None
    return float(np.std(x, ddof=ddof)) / abs(m)


def identical_repeats(values: Iterable[float], rel: float = 1e-12) -> bool:
    """True when there are at least two values and all are equal within ``rel`` of the largest
    magnitude (all zeros count as identical). Repeats of a randomised experiment that come out
    identical usually mean the seed did not reach the randomness (or there was none to reach)."""
    x = _finite(values)
    if x.size < 2:
        return False
    spread = float(np.max(x) - np.min(x))
    return spread <= rel * float(np.max(np.abs(x)))


# ---- means and intervals ----------------------------------------------------------------------


def t_cdf(t: float, df: float) -> float:
    """CDF of Student's t distribution with ``df`` degrees of freedom (scipy.stats.t)."""
    if df <= 0:
        raise ValueError("degrees of freedom must be positive")
    return float(sps.t.cdf(t, df))


def t_quantile(q: float, df: float) -> float:
    """Inverse of :func:`t_cdf` (scipy.stats.t.ppf)."""
    if not 0.0 < q < 1.0:
        raise ValueError("q must be within (0, 1)")
    if df <= 0:
        raise ValueError("degrees of freedom must be positive")
    return float(sps.t.ppf(q, df))


@dataclass(frozen=True)
class MeanCI:
    """A statistic (``mean``; for a bootstrap of another statistic, that statistic) with a
    two-sided confidence interval ``lo``..``hi`` from ``n`` values. ``method`` says how the
    interval was made: "t", "percentile" or "bca"."""

    mean: Optional[float]
    lo: Optional[float]
    hi: Optional[float]
    n: int
    confidence: float
    method: str = "t"

    @property
    def half_width(self) -> Optional[float]:
        """hi - mean (the t interval is symmetric; a bootstrap interval need not be)."""
        if self.hi is None or self.mean is None:
            return None
        return self.hi - self.mean


def mean_ci(
    values: Iterable[float],
    confidence: float = 0.95,
    *,
    nonnegative: bool = False,
    bounds: Optional[tuple[Optional[float], Optional[float]]] = None,
) -> MeanCI:
    """Sample mean ± t_{(1+c)/2, n-1} · s / √n (Student 1908). With one value the interval is
    undefined (lo = hi = None); with none, everything is None.

    ``nonnegative=True`` (goodput, RTT, delay, retransmits, Jain's index, shares, periods: any
    quantity that cannot be below 0) cuts the interval at 0: ``lo = max(lo, 0)``.
    ``bounds=(low, high)`` cuts it to the quantity's range in general (either side None = no
    cut), e.g. (0, 1) for a share, (0.5, 1) for Jain's index of two flows. The defaults leave
    the plain t interval, as before.

    Why a t interval cut at the range rather than a log-scale or a bootstrap interval: the cut
    only removes values the quantity cannot take, so the interval still covers the mean at
    least as often as the t interval does, and it is *the same interval* whenever the t
    interval lies inside the range — for a mean large against its spread (a goodput of
    50 ± 1 Mbit/s) nothing changes; it bites only near 0, where 2-5 repeats of a skewed
    positive quantity ([0.1, 5.0, 0.2] Mbit/s) give a t interval reaching below 0. A log-scale
    (lognormal) interval cannot take a 0 (a starved flow's goodput, a run without
    retransmissions) and estimates the geometric, not the arithmetic, mean; a percentile
    bootstrap is far too narrow with the 3-5 repeats studies and comparisons run (3 values
    have only 10 distinct resamples). The price: the upper end stays the symmetric t end, so
    for strongly skewed data near 0 the interval is conservative (wide) above, not tight.
    """
    if nonnegative:
        low, high = bounds if bounds is not None else (None, None)
        bounds = (0.0 if low is None else max(0.0, low), high)
    x = _finite(values)
    n = int(x.size)
    if n == 0:
        return MeanCI(None, None, None, 0, confidence)
    m = float(np.mean(x))
    if n == 1:
        return MeanCI(m, None, None, 1, confidence)
    s = float(np.std(x, ddof=1))
    half = t_quantile(0.5 + confidence / 2.0, n - 1) * s / math.sqrt(n)
    lo, hi = m - half, m + half
    if bounds is not None:
        low, high = bounds
        if low is not None:
            lo = max(lo, float(low))
        if high is not None:
            hi = min(hi, float(high))
    return MeanCI(m, lo, hi, n, confidence)


def _apply_stat(stat: Callable, samples: np.ndarray) -> np.ndarray:
    """stat over each row of ``samples``; vectorised when ``stat`` takes ``axis``."""
    try:
        out = np.asarray(stat(samples, axis=1), dtype=float)
        if out.shape == (samples.shape[0],):
            return out
    except TypeError:
        pass
    return np.array([float(stat(row)) for row in samples])


def bootstrap_ci(
    values: Iterable[float],
    stat: Callable = np.mean,
    confidence: float = 0.95,
    n_boot: int = 4000,
    seed: int = 0,
    method: str = "percentile",
) -> MeanCI:
    """Bootstrap interval of ``stat`` (Efron 1979): resample the values with replacement
    ``n_boot`` times with ``numpy.random.default_rng(seed)`` (so the same input gives the same
    interval), take the ``(1-c)/2`` and ``(1+c)/2`` quantiles of the resampled statistic
    (``method="percentile"``) or the bias-corrected and accelerated quantiles (``"bca"``, Efron
    & Tibshirani 1993 §14.3, acceleration from the jackknife).

    Returns a :class:`MeanCI` whose ``mean`` is ``stat`` of the sample. Fewer than 2 values:
    lo = hi = None. A constant sample gives lo = hi = the value.
    """
    if method not in ("percentile", "bca"):
        raise ValueError("method must be 'percentile' or 'bca'")
    x = _finite(values)
    n = int(x.size)
    if n == 0:
        return MeanCI(None, None, None, 0, confidence, method)
    theta = float(stat(x))
    if n == 1:
        return MeanCI(theta, None, None, 1, confidence, method)
    if np.all(x == x[0]):
        return MeanCI(theta, theta, theta, n, confidence, method)
    rng = np.random.default_rng(seed)
    boot = _apply_stat(stat, x[rng.integers(0, n, size=(n_boot, n))])
    alpha = (1.0 - confidence) / 2.0
    q_lo, q_hi = alpha, 1.0 - alpha
    if method == "bca":
        # bias correction: how far the bootstrap distribution sits from theta (ties count half)
        prop = (np.sum(boot < theta) + 0.5 * np.sum(boot == theta)) / n_boot
        z0 = sps.norm.ppf(min(max(prop, 1.0 / n_boot), 1.0 - 1.0 / n_boot))
        # acceleration from the jackknife (leave-one-out) values of the statistic
        jack = _apply_stat(stat, np.array([np.delete(x, i) for i in range(n)]))
        d = jack.mean() - jack
        den = 6.0 * float(np.sum(d * d)) ** 1.5
        acc = float(np.sum(d**3)) / den if den > 0 else 0.0
        z = sps.norm.ppf([q_lo, q_hi])
        q_lo, q_hi = sps.norm.cdf(z0 + (z0 + z) / (1.0 - acc * (z0 + z)))
    lo, hi = np.quantile(boot, [q_lo, q_hi])
    return MeanCI(theta, float(lo), float(hi), n, confidence, method)


# ---- ratio of two means -----------------------------------------------------------------------


@dataclass(frozen=True)
class Ratio:
    """mean(a) / mean(b) with a two-sided interval. ``bounded`` is False when the interval
    is not a finite range (Fieller: b's mean is not significantly different from 0); then
    ``lo`` and ``hi`` are None. ``ratio`` is None when mean(b) is 0 or a side is empty."""

    ratio: Optional[float]
    lo: Optional[float]
    hi: Optional[float]
    n_a: int
    n_b: int
    confidence: float
    method: str
    bounded: bool


def ratio_ci(
    a_values: Iterable[float],
    b_values: Iterable[float],
    confidence: float = 0.95,
    method: str = "fieller",
    n_boot: int = 4000,
    seed: int = 0,
) -> Ratio:
    """Ratio of means mean(a)/mean(b) of two independent samples with a confidence interval.

    ``method="fieller"`` (default), Fieller's theorem (Fieller 1954): the set of ρ for which
    mean(a) - ρ·mean(b) is not significantly different from 0, i.e. the ρ with
    (ā - ρ b̄)² ≤ t² (s_a²/n_a + ρ² s_b²/n_b). That is a finite interval exactly when
    g = t² (s_b²/n_b) / b̄² < 1 (b̄'s own t interval excludes 0); otherwise the set is unbounded
    and lo = hi = None, bounded = False. t uses the Welch-Satterthwaite degrees of freedom of
    ā - ρ̂ b̄ at the point estimate ρ̂ (an approximation: the exact df depends on ρ).

    ``method="bootstrap"``: resample a and b independently (seeded), percentile interval of
    the ratio of the resampled means; unbounded when some resampled mean(b) is 0 or changes
    sign (the ratio is then not a continuous function of the data).

    Fewer than 2 values on a side: the ratio only, no interval.
    """
    if method not in ("fieller", "bootstrap"):
        raise ValueError("method must be 'fieller' or 'bootstrap'")
    a, b = _finite(a_values), _finite(b_values)
    na, nb = int(a.size), int(b.size)
    if na == 0 or nb == 0 or float(np.mean(b)) == 0.0:
        return Ratio(None, None, None, na, nb, confidence, method, False)
    ma, mb = float(np.mean(a)), float(np.mean(b))
    r = ma / mb
    if na < 2 or nb < 2:
        return Ratio(r, None, None, na, nb, confidence, method, False)
    if method == "bootstrap":
        rng = np.random.default_rng(seed)
        ba = a[rng.integers(0, na, size=(n_boot, na))].mean(axis=1)
        bb = b[rng.integers(0, nb, size=(n_boot, nb))].mean(axis=1)
        if np.any(bb == 0) or np.any(np.sign(bb) != np.sign(mb)):
            return Ratio(r, None, None, na, nb, confidence, method, False)
        alpha = (1.0 - confidence) / 2.0
        lo, hi = np.quantile(ba / bb, [alpha, 1.0 - alpha])
        return Ratio(r, float(lo), float(hi), na, nb, confidence, method, True)
    va = float(np.var(a, ddof=1)) / na  # variance of each mean
    vb = float(np.var(b, ddof=1)) / nb
    if va == 0.0 and vb == 0.0:
        return Ratio(r, r, r, na, nb, confidence, method, True)
    num = (va + r * r * vb) ** 2
    den = (va * va / (na - 1) if va else 0.0) + ((r * r * vb) ** 2 / (nb - 1) if vb else 0.0)
    df = num / den if den > 0 else float(na + nb - 2)
    t = t_quantile(0.5 + confidence / 2.0, df)
    t2 = t * t
    # (b̄² - t² vb) ρ² - 2 ā b̄ ρ + (ā² - t² va) ≤ 0
    qa = mb * mb - t2 * vb
    if qa <= 0.0:
        return Ratio(r, None, None, na, nb, confidence, method, False)
    qb = -2.0 * ma * mb
    qc = ma * ma - t2 * va
    disc = qb * qb - 4.0 * qa * qc
    root = math.sqrt(max(disc, 0.0))
    lo, hi = (-qb - root) / (2.0 * qa), (-qb + root) / (2.0 * qa)
    return Ratio(r, lo, hi, na, nb, confidence, method, True)


# ---- two-sample tests -------------------------------------------------------------------------


@dataclass(frozen=True)
class TestResult:
    """Outcome of a two-sample test. ``statistic`` and ``p_value`` are None when the test is
    undefined (too few values). For Welch: ``mean_diff`` = mean(a) - mean(b) with its
    interval ``diff_lo``..``diff_hi`` and the Welch-Satterthwaite ``df``. For Mann-Whitney:
    ``effect`` = U/(n_a·n_b) = P(A > B) + ½P(A = B) (0.5: no tendency)."""

    __test__ = False  # not a pytest test class despite the name

    method: str
    statistic: Optional[float]
    p_value: Optional[float]
    n_a: int
    n_b: int
    mean_diff: Optional[float] = None
    diff_lo: Optional[float] = None
    diff_hi: Optional[float] = None
    df: Optional[float] = None
    effect: Optional[float] = None
    confidence: float = 0.95

    def significant(self, alpha: float = 0.05) -> Optional[bool]:
        """p_value < alpha, or None when the test was undefined."""
        return None if self.p_value is None else self.p_value < alpha


def welch_test(a: Iterable[float], b: Iterable[float], confidence: float = 0.95) -> TestResult:
    """Welch's two-sided t test of equal means without assuming equal variances (Welch 1947):
    t = (ā - b̄) / √(s_a²/n_a + s_b²/n_b), Welch-Satterthwaite df, p from scipy.stats.t;
    plus the mean difference and its t interval with that df.

    Needs n ≥ 2 on both sides (else statistic and p are None, mean_diff still given).
    Both samples constant (zero variance; deterministic repeats): there is no noise to test
    against, so the difference is exact: equal means give statistic 0, p = 1 and a zero-width
    interval; different means give statistic ±inf, p = 0 (scipy would return nan for the
    first). Documented choice, not a statistical result.
    """
    x, y = _finite(a), _finite(b)
    na, nb = int(x.size), int(y.size)
    diff = float(np.mean(x) - np.mean(y)) if na and nb else None
    if na < 2 or nb < 2:
        return TestResult("welch", None, None, na, nb, mean_diff=diff, confidence=confidence)
    va, vb = float(np.var(x, ddof=1)) / na, float(np.var(y, ddof=1)) / nb
    se2 = va + vb
    if se2 == 0.0:
        stat = 0.0 if diff == 0.0 else math.copysign(math.inf, diff)
        return TestResult(
            "welch", stat, 1.0 if diff == 0.0 else 0.0, na, nb, diff, diff, diff, None, confidence=confidence
        )
    df = se2**2 / ((va * va) / (na - 1) + (vb * vb) / (nb - 1))
    se = math.sqrt(se2)
    stat = diff / se
    p = float(2.0 * sps.t.sf(abs(stat), df))
    half = t_quantile(0.5 + confidence / 2.0, df) * se
    return TestResult("welch", stat, p, na, nb, diff, diff - half, diff + half, df, confidence=confidence)


@dataclass
class Correlation:
    """Pearson's r of paired values and its two-sided p (scipy.stats.pearsonr: the t test of
    r = 0); both None when undefined (fewer than ``Correlation.MIN_N`` pairs, or a constant side)."""

    r: Optional[float]
    p_value: Optional[float]
    n: int

    MIN_N = 5

    def significant(self, alpha: float = 0.05) -> bool:
        return self.p_value is not None and self.p_value < alpha


def correlation(x: Iterable[float], y: Iterable[float]) -> Correlation:
    """Pearson's r between ``x`` and ``y`` over the pairs where both are finite."""
    pairs = [(float(a), float(b)) for a, b in zip(x, y) if a is not None and b is not None]
    pairs = [(a, b) for a, b in pairs if math.isfinite(a) and math.isfinite(b)]
    n = len(pairs)
    if n < Correlation.MIN_N:
        return Correlation(None, None, n)
    xa, ya = np.array([a for a, _ in pairs]), np.array([b for _, b in pairs])
    if np.ptp(xa) == 0 or np.ptp(ya) == 0:
        return Correlation(None, None, n)
    res = sps.pearsonr(xa, ya)
    return Correlation(float(res.statistic), float(res.pvalue), n)


def mann_whitney(a: Iterable[float], b: Iterable[float]) -> TestResult:
    """Mann-Whitney U test, two-sided (Mann & Whitney 1947; scipy.stats.mannwhitneyu, exact
    p for small samples without ties, normal approximation with tie correction otherwise).
    ``statistic`` is U of sample a; ``effect`` = U/(n_a·n_b).

    Empty side: None. All values (both samples together) equal: U = n_a·n_b/2, p = 1 (no
    rank information at all; scipy may return nan there)."""
    x, y = _finite(a), _finite(b)
    na, nb = int(x.size), int(y.size)
    if na == 0 or nb == 0:
        return TestResult("mann-whitney", None, None, na, nb)
    diff = float(np.mean(x) - np.mean(y))
    both = np.concatenate([x, y])
    if np.all(both == both[0]):
        u = na * nb / 2.0
        return TestResult("mann-whitney", u, 1.0, na, nb, mean_diff=diff, effect=0.5)
    res = sps.mannwhitneyu(x, y, alternative="two-sided")
    u = float(res.statistic)
    return TestResult("mann-whitney", u, float(res.pvalue), na, nb, mean_diff=diff, effect=u / (na * nb))


# ---- bimodality across repeats ----------------------------------------------------------------


@dataclass(frozen=True)
class Bimodality:
    """Is a set of repeats split into two groups? ``bimodal`` None when n < min_n.

    ``delta_bic`` = BIC(one Gaussian) - BIC(two-component mixture), > 0 favours two;
    ``means`` (low, high), ``weights`` (of those), ``sd`` the components' common standard
    deviation, ``ashman_d`` = |μ1 - μ2| / sd."""

    bimodal: Optional[bool]
    n: int
    delta_bic: Optional[float] = None
    means: Optional[tuple[float, float]] = None
    weights: Optional[tuple[float, float]] = None
    sd: Optional[float] = None
    ashman_d: Optional[float] = None


def _norm_logpdf(x: np.ndarray, mu: float, var: float) -> np.ndarray:
    return -0.5 * (np.log(2.0 * math.pi * var) + (x - mu) ** 2 / var)


def _em_two_gaussians(x: np.ndarray, split: int, var_floor: float, iters: int = 500):
    """EM for w·N(μ1, σ²) + (1-w)·N(μ2, σ²) on sorted x, started from the split
    x[:split] | x[split:]. Returns (loglik, w, mu1, mu2, var)."""
    lo, hi = x[:split], x[split:]
    w, mu1, mu2 = split / x.size, float(lo.mean()), float(hi.mean())
    var = max(float((np.sum((lo - mu1) ** 2) + np.sum((hi - mu2) ** 2)) / x.size), var_floor)
    prev = -math.inf
    for _ in range(iters):
        l1 = math.log(w) + _norm_logpdf(x, mu1, var)
        l2 = math.log(1.0 - w) + _norm_logpdf(x, mu2, var)
        ll = np.logaddexp(l1, l2)
        loglik = float(np.sum(ll))
        r = np.exp(l1 - ll)  # responsibility of component 1
        s1 = float(r.sum())
        s2 = x.size - s1
        if s1 < 1e-9 or s2 < 1e-9:  # one component emptied: the fit is one Gaussian
            break
        w = s1 / x.size
        mu1, mu2 = float(np.sum(r * x) / s1), float(np.sum((1 - r) * x) / s2)
        var = max(float(np.sum(r * (x - mu1) ** 2 + (1 - r) * (x - mu2) ** 2) / x.size), var_floor)
        if loglik - prev < 1e-10 * max(1.0, abs(loglik)):
            break
        prev = loglik
    l1 = math.log(max(w, 1e-300)) + _norm_logpdf(x, mu1, var)
    l2 = math.log(max(1.0 - w, 1e-300)) + _norm_logpdf(x, mu2, var)
    return float(np.sum(np.logaddexp(l1, l2))), w, mu1, mu2, var


def bimodality(
    values: Iterable[float], min_n: int = 6, min_delta_bic: float = 6.0, min_ashman_d: float = 2.0
) -> Bimodality:
    """Two groups among repeats, by a 1-D Gaussian mixture (EM, written here) against one
    Gaussian.

    Model: two components with a common variance (homoscedastic): it has no degenerate
    maxima (a component cannot collapse onto one value and buy infinite likelihood, the
    classic failure of free variances with few repeats), and its Ashman's D (Ashman, Bird &
    Zepf 1994), |μ1 - μ2| / σ, has an exact meaning: an equal-weight mixture of two normals
    with a common σ has two modes iff D > 2. EM is started from several splits of the sorted
    values (quartiles, median, largest gap) and the best likelihood is kept (deterministic).

    Called bimodal iff all of: ΔBIC = BIC₁ - BIC₂ > ``min_delta_bic`` (6: "strong" evidence,
    Kass & Raftery 1995; BIC = -2 ln L + k ln n with k = 2 and 4 parameters; with 2, about 9 %
    of normal samples of 6-10 values were called bimodal, with 6 about 1-3 %); Ashman's
    D > ``min_ashman_d`` (so a small split of noise is not called two modes); and the smaller
    component holds at least two values' worth of weight (one odd value is an outlier, not a
    mode). n < ``min_n``: bimodal None. All values equal: not bimodal.

    A mixture cannot tell two modes from a flat (uniform-like) spread when n is large; with
    repeat counts (tens) the BIC penalty keeps flat samples unimodal in practice.
    """
    x = np.sort(_finite(values))
    n = int(x.size)
    if n < min_n:
        return Bimodality(None, n)
    var1 = float(np.var(x))
    if var1 == 0.0:
        return Bimodality(False, n, 0.0, (float(x[0]), float(x[0])), (1.0, 0.0), 0.0, 0.0)
    scale = float(np.sqrt(var1))
    var_floor = (1e-6 * scale) ** 2
    loglik1 = float(np.sum(_norm_logpdf(x, float(x.mean()), var1)))
    splits = {n // 4, n // 2, (3 * n) // 4, int(np.argmax(np.diff(x))) + 1}
    best = max(_em_two_gaussians(x, s, var_floor) for s in sorted(splits) if 0 < s < n)
    loglik2, w, mu1, mu2, var = best
    if mu1 > mu2:
        mu1, mu2, w = mu2, mu1, 1.0 - w
    delta_bic = (-2.0 * loglik1 + 2 * math.log(n)) - (-2.0 * loglik2 + 4 * math.log(n))
    sd = math.sqrt(var)
    d = abs(mu2 - mu1) / sd
    bimodal = bool(delta_bic > min_delta_bic and d > min_ashman_d and min(w, 1 - w) * n >= 2.0)
    return Bimodality(bimodal, n, float(delta_bic), (mu1, mu2), (w, 1.0 - w), sd, float(d))


# ---- periodicity ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Periodicity:
    """Dominant period of a series. ``period_s`` is None unless ``significant``;
    ``candidate_period_s`` is the best candidate either way (for diagnostics).
    ``strength``: share of the (detrended) variance in the peak band (the peak's Fourier bin
    and its two neighbours), 0..1. ``acf_at_period``: autocorrelation at that lag.
    ``p_value``: Fisher's g test of the largest periodogram ordinate against white noise."""

    period_s: Optional[float]
    strength: float
    acf_at_period: Optional[float]
    significant: bool
    p_value: Optional[float]
    candidate_period_s: Optional[float]
    n: int
    method: str = "periodogram+fisher-g+acf"


def _uniform(t_s, values) -> tuple[np.ndarray, float]:
    """(values on a uniform grid, sample interval). NaN samples are dropped; when the sample
    times are not uniform (spread > 0.1 % of the median step) the series is linearly
    interpolated onto a grid with the median step."""
    t = np.asarray(t_s, dtype=float)
    x = np.asarray(values, dtype=float)
    if t.shape != x.shape:
        raise ValueError("t_s and values must have the same length")
    ok = np.isfinite(t) & np.isfinite(x)
    t, x = t[ok], x[ok]
    order = np.argsort(t, kind="stable")
    t, x = t[order], x[order]
    if t.size < 2:
        return x, 1.0
    steps = np.diff(t)
    dt = float(np.median(steps))
    if dt <= 0:
        raise ValueError("sample times must increase")
    if np.max(np.abs(steps - dt)) > 1e-3 * dt:
        grid = t[0] + dt * np.arange(int(math.floor((t[-1] - t[0]) / dt)) + 1)
        x = np.interp(grid, t, x)
    return x, dt


def periodogram(t_s, values, oversample: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Periodogram of a series (scipy.signal.periodogram, linear trend removed, boxcar
    window, "spectrum" scaling so the ordinates add up to the variance), as
    (periods_s ascending, power). The zero frequency is left out. ``oversample`` > 1 zero-pads
    to a finer frequency grid (smoother curve; neighbouring ordinates then not independent).
    Non-uniform sampling is resampled (see ``dominant_period``)."""
    x, dt = _uniform(t_s, values)
    if x.size < 4:
        return np.array([]), np.array([])
    freqs, power = sps_signal.periodogram(
        x, fs=1.0 / dt, window="boxcar", detrend="linear", scaling="spectrum", nfft=x.size * max(1, oversample)
    )
    freqs, power = freqs[1:], power[1:]
    return (1.0 / freqs)[::-1], power[::-1]


def _fisher_g_pvalue(g: float, m: int) -> float:
    """P(G ≥ g) for Fisher's g = max/sum of m periodogram ordinates of white noise:
    Σ_{j=1}^{⌊1/g⌋} (-1)^{j-1} C(m, j) (1 - j g)^{m-1} (Fisher 1929). Summed only while the
    first term is < 1, where the terms fall like (first term)^j / j! (stable); else p ≈ 1."""
    if m < 2 or g <= 0:
        return 1.0
    if g >= 1.0:
        return 0.0

    def term(j: int) -> float:
        base = 1.0 - j * g
        if base <= 0:
            return 0.0
        return math.exp(math.lgamma(m + 1) - math.lgamma(j + 1) - math.lgamma(m - j + 1) + (m - 1) * math.log(base))

    first = term(1)
    if first >= 1.0:
        return 1.0
    p = 0.0
    for j in range(1, min(m, int(1.0 / g)) + 1):
        tj = term(j)
        p += tj if j % 2 else -tj
        if tj < 1e-17:
            break
    return min(max(p, 0.0), 1.0)


def _acf(x: np.ndarray) -> np.ndarray:
    """Biased sample autocorrelation (divide by n, so |r| ≤ 1) of a centred series, via FFT."""
    n = x.size
    spec = np.fft.rfft(x, 2 * n)
    ac = np.fft.irfft(spec * np.conj(spec), 2 * n)[:n]
    return ac / ac[0] if ac[0] > 0 else np.zeros(n)


def dominant_period(
    t_s,
    values,
    min_period_s: Optional[float] = None,
    max_period_s: Optional[float] = None,
    alpha: float = 0.01,
    min_acf: float = 0.2,
) -> Periodicity:
    """The dominant period of a (throughput) series, or None when there is none.

    Method: the series (uniformly sampled; resampled by linear interpolation if not) has its
    linear trend removed. 1) Candidate: the highest peak of an 8× zero-padded periodogram
    within [min_period_s (default 2 samples), max_period_s (default half the duration, so at
    least two cycles are seen)]; the padding places the peak between Fourier bins, so a 20 s
    period in 200 s is not forced onto 18.2 or 22.2 s. 2) Harmonic check: if another peak
    (≥ 20 % of the highest) sits at 2, 3 or 4 times the candidate's period and its
    autocorrelation is higher by > 0.1, that longer period is the fundamental and is taken
    (a signal repeating every P also repeats every P/k only if it is a pure harmonic).
    3) Significance: Fisher's g test (Fisher 1929) on the ordinary periodogram ordinates in the
    period range, g = largest / sum, p < ``alpha`` (0.01); AND the autocorrelation at the
    period ≥ ``min_acf`` (0.2). Fisher's null is white noise; throughput series are usually
    red (autocorrelated), which makes g alone too eager; the autocorrelation test requires
    the series to actually repeat itself after one period.
    """
    x, dt = _uniform(t_s, values)
    n = int(x.size)
    none = Periodicity(None, 0.0, None, False, None, None, n)
    if n < 8:
        return none
    scale = float(np.max(np.abs(x)))
    x = sps_signal.detrend(x, type="linear")
    if float(np.max(np.abs(x))) <= 1e-12 * scale:
        return none  # constant (or exactly linear) series: nothing repeats
    duration = n * dt
    pmin = max(min_period_s if min_period_s is not None else 2.0 * dt, 2.0 * dt)
    pmax = max_period_s if max_period_s is not None else duration / 2.0
    fs = 1.0 / dt
    f, p = sps_signal.periodogram(x, fs=fs, window="boxcar", detrend=False, scaling="spectrum")
    total = float(np.sum(p[1:]))
    inner = (f > 0) & (f < fs / 2.0) & (f >= 1.0 / pmax) & (f <= 1.0 / pmin)
    if inner.sum() < 2 or total <= 0:
        return none
    pv = _fisher_g_pvalue(float(p[inner].max() / p[inner].sum()), int(inner.sum()))

    fp, pp = sps_signal.periodogram(x, fs=fs, window="boxcar", detrend=False, scaling="spectrum", nfft=8 * n)
    band = (fp > 0) & (fp >= 1.0 / pmax) & (fp <= 1.0 / pmin)
    idx = np.flatnonzero(band)
    peaks = [i for i in idx if (i == 0 or pp[i] >= pp[i - 1]) and (i + 1 >= pp.size or pp[i] >= pp[i + 1])]
    if not peaks:
        return none
    acf = _acf(x)

    def acf_at(period: float) -> float:
        return float(np.interp(period / dt, np.arange(n), acf))

    top = max(peaks, key=lambda i: pp[i])
    period = float(1.0 / fp[top])
    best_acf = acf_at(period)
    for k in (2, 3, 4):
        near = [i for i in peaks if pp[i] >= 0.2 * pp[top] and abs(fp[i] - fp[top] / k) <= 1.5 / duration]
        for i in near:
            cand = float(1.0 / fp[i])
            if cand <= pmax and acf_at(cand) > best_acf + 0.1:
                period, best_acf = cand, acf_at(cand)
    k0 = int(round(1.0 / period / (fs / n)))  # nearest ordinary Fourier bin
    strength = float(np.sum(p[max(k0 - 1, 1) : k0 + 2]) / total)
    significant = bool(pv < alpha and best_acf >= min_acf)
    return Periodicity(period if significant else None, min(strength, 1.0), best_acf, significant, pv, period, n)


# ---- start-up removal -------------------------------------------------------------------------


@dataclass(frozen=True)
class SteadyState:
    """Where the steady state of a series starts (MSER-5) and what it looks like after.
    ``at_limit``: the truncation hit the half-series limit (the series may never settle)."""

    start_s: Optional[float]
    start_index: Optional[int]
    mean: Optional[float]
    n: int
    n_kept: int
    at_limit: bool


def _mser(x: np.ndarray, batch: int) -> tuple[int, bool]:
    """MSER-b: index (in samples) where to truncate, and whether it hit the limit."""
    k = x.size // batch
    z = x[: k * batch].reshape(k, batch).mean(axis=1)
    # for every truncation d: sum of squared deviations of z[d:] about its mean, / (k-d)²
    tail = z[::-1]
    cnt = np.arange(1, k + 1)
    s1 = np.cumsum(tail)[::-1]
    s2 = np.cumsum(tail * tail)[::-1]
    m = cnt[::-1]
    sse = np.maximum(s2 - s1 * s1 / m, 0.0)
    stat = sse / (m * m)
    limit = k // 2  # keep at least half of the batches (White 1997: beyond that, unreliable)
    d = int(np.argmin(stat[: limit + 1]))
    return d * batch, d >= limit


def steady_state(t_s, values, batch: int = 5) -> SteadyState:
    """MSER-5 truncation (White 1997; White, Cobb & Spratt 2000): average the series in
    batches of ``batch`` samples, then choose the truncation d (in batches) minimising
    MSER(d) = Σ_{j>d} (Z_j - Z̄_d)² / (k - d)², the squared standard error of the mean of what
    is kept. Start-up values far from the steady level inflate the sum; dropping more data
    than needed shrinks k - d; the minimum balances the two. d is searched over the first half.
    NaN samples are dropped. Fewer than 2 batches: start at the first sample."""
    t = np.asarray(t_s, dtype=float)
    x = np.asarray(values, dtype=float)
    ok = np.isfinite(t) & np.isfinite(x)
    t, x = t[ok], x[ok]
    order = np.argsort(t, kind="stable")
    t, x = t[order], x[order]
    n = int(x.size)
    if n == 0:
        return SteadyState(None, None, None, 0, 0, False)
    if n < 2 * batch:
        return SteadyState(float(t[0]), 0, float(x.mean()), n, n, False)
    i, at_limit = _mser(x, batch)
    return SteadyState(float(t[i]), i, float(x[i:].mean()), n, n - i, at_limit)


def steady_state_start(t_s, values, batch: int = 5) -> Optional[float]:
    """Time (same unit as ``t_s``) at which the steady state starts, by MSER-5; see
    :func:`steady_state`. None for an empty series."""
    return steady_state(t_s, values, batch).start_s


def steady_state_table(
    series: "pd.DataFrame",
    value: str = "goodput_bps",
    by: Sequence[str] = ("run_id", "flow_id"),
    t: str = "t_s",
    batch: int = 5,
) -> "pd.DataFrame":
    """:func:`steady_state` for every group of a long series table: one row per group with
    the keys, start_s, steady_mean (mean after start_s), n_kept, at_limit."""
    import pandas as pd

    keys = list(by)
    rows = []
    for key, grp in series.groupby(keys, sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        ss = steady_state(grp[t].to_numpy(), grp[value].to_numpy(), batch)
        rows.append(
            dict(zip(keys, key), start_s=ss.start_s, steady_mean=ss.mean, n_kept=ss.n_kept, at_limit=ss.at_limit)
        )
    return pd.DataFrame(rows, columns=keys + ["start_s", "steady_mean", "n_kept", "at_limit"])


# ---- steps at events ---------------------------------------------------------------------------


@dataclass(frozen=True)
class EventRound:
    start_s: float  # the round's first event
    n: int  # events in the round (one per flow that took part)


def entries_into(t_s, states, state: str) -> list[float]:
    """The sample times at which a state series enters ``state`` (a sample in it after one that
    was not); a series that starts in the state is not an entry."""
    t = list(t_s)
    st = list(states)
    return [float(t[i]) for i in range(1, len(st)) if st[i] == state and st[i - 1] != state]


def event_rounds(
    events_per_flow: Iterable[Iterable[float]], window_s: float = 1.0, min_events: int = 1
) -> list[EventRound]:
    """Events of many flows (e.g. each BBR flow's entries into ProbeRTT) grouped into rounds: an
    event within ``window_s`` of a round's first event joins that round. Rounds with fewer than
    ``min_events`` events are left out."""
    rounds: list[list[float]] = []
    for x in sorted(float(e) for es in events_per_flow for e in es):
        if rounds and x - rounds[-1][0] <= window_s:
            rounds[-1].append(x)
        else:
            rounds.append([x])
    return [EventRound(r[0], len(r)) for r in rounds if len(r) >= min_events]


def probe_rtt_entries(series: "pd.DataFrame") -> list[list[float]]:
    """Each BBR flow's entries into ProbeRTT (``entries_into`` on its ``cc_state``), from one
    run's series table (columns t_s, flow_id, cc, cc_state); empty without BBR flows or
    cc_state."""
    if series.empty or "cc_state" not in series.columns:
        return []
    bbr = series[series["cc"].astype(str).str.lower() == "bbr"].sort_values("t_s")
    return [
        entries_into(f["t_s"].to_numpy(dtype=float), list(f["cc_state"]), "probe_rtt")
        for _, f in bbr.groupby("flow_id")
    ]


def bbr_cwnd_beyond_bdp_pkts(series: "pd.DataFrame", after_s: float = 0.0, mss: int = 1448) -> Optional[float]:
    """BBR v1's cwnd beyond cwnd_gain x its BDP estimate (2 x bw_est x min_rtt), in packets of
    ``mss``: the median over one run's ProbeBW rows after ``after_s``, all BBR flows together.
    STARTUP and DRAIN are left out by their state: once the pipe is full, ``bbr_set_cwnd`` holds
    cwnd at its target.

    Linux's ``bbr_set_cwnd`` target is 2 x bw x min_rtt plus the quantization budget (3 TSO
    skbs, 2 more in the 1.25 gain phase) plus the ack-aggregation allowance
    (``bbr_ack_aggregation_cwnd``), so this is the sum of the last two: on a path whose ACKs come
    back bunched, the allowance grows by about bw x the longest ACK gap. None without BBR flows
    or the columns (cc_state, cwnd_pkts, bw_est_bps, min_rtt_ms)."""
    need = {"cc", "t_s", "cc_state", "cwnd_pkts", "bw_est_bps", "min_rtt_ms"}
    if series.empty or not need <= set(series.columns):
        return None
    bbr = series[
        (series["cc"].astype(str).str.lower() == "bbr")
        & (series["t_s"] > after_s)
        & (series["cc_state"].astype(str) == "probe_bw")
        & (series["bw_est_bps"] > 0)
        & (series["min_rtt_ms"] > 0)
    ]
    if bbr.empty:
        return None
    bdp_pkts = 2.0 * bbr["bw_est_bps"].astype(float) * bbr["min_rtt_ms"].astype(float) / 1e3 / 8.0 / mss
    return float(np.median(bbr["cwnd_pkts"].astype(float) - bdp_pkts))


def probe_rtt_rounds(series: "pd.DataFrame", window_s: float = 1.0) -> list[EventRound]:
    """The rounds in which one run's BBR flows enter ProbeRTT together (``event_rounds`` of
    ``probe_rtt_entries``): at least 3 flows per round, or all of them when there are fewer."""
    entries = probe_rtt_entries(series)
    if not entries:
        return []
    return event_rounds(entries, window_s=window_s, min_events=min(3, len(entries)))


@dataclass(frozen=True)
class LevelChange:
    at_events: Optional[float]  # median |ln(after / before)| across the events
    midway: Optional[float]  # the same, midway between consecutive events (the baseline)
    n_events: int
    n_midway: int


def level_change_at(t_s, values, events_s: Sequence[float], half_s: float = 4.0, gap_s: float = 0.5) -> LevelChange:
    """How much a series' level moves across given instants, against how much it moves midway
    between them. For each instant x, the mean over [x - gap - half, x - gap] is compared with
    the mean over [x + gap, x + gap + half] as |ln(after / before)| (0.69: halved or doubled);
    ``gap_s`` skips the transition itself. Instants whose windows leave the series are
    skipped, as are midpoints of events closer than 2 (half + gap). If the events set the
    series' rhythm, the change at them is several times the change midway."""
    t = np.asarray(t_s, dtype=float)
    x = np.asarray(values, dtype=float)
    ev = sorted(float(e) for e in events_s)
    if t.size == 0:
        return LevelChange(None, None, 0, 0)
    lo, hi = float(t[0]), float(t[-1])

    def change(at: float) -> Optional[float]:
        if at - gap_s - half_s < lo or at + gap_s + half_s > hi:
            return None
        before = x[(t > at - gap_s - half_s) & (t <= at - gap_s)]
        after = x[(t >= at + gap_s) & (t < at + gap_s + half_s)]
        if before.size == 0 or after.size == 0:
            return None
        b, a = float(np.nanmean(before)), float(np.nanmean(after))
        if not (a > 0 and b > 0):
            return None
        return abs(math.log(a / b))

    at = [c for c in (change(e) for e in ev) if c is not None]
    mid = [
        c for c in (change((p + q) / 2) for p, q in zip(ev, ev[1:]) if q - p >= 2 * (half_s + gap_s)) if c is not None
    ]
    return LevelChange(float(np.median(at)) if at else None, float(np.median(mid)) if mid else None, len(at), len(mid))


# ---- reference models -------------------------------------------------------------------------


def mathis_goodput_bps(rtt_s: float, loss: float, mss: int = 1448) -> Optional[float]:
    """Mathis et al. (1997) Reno throughput MSS/RTT · sqrt(3/(2p)) in bit/s; ``loss`` a fraction.

    None for p = 0 (the formula has no finite value; the link rate limits instead).
    """
    if loss <= 0 or rtt_s <= 0:
        return None
    return mss * 8 / rtt_s * math.sqrt(3.0 / (2.0 * loss))


# ---- tables -----------------------------------------------------------------------------------


def summarise(
    df: "pd.DataFrame",
    by: Sequence[str] | str,
    value: str,
    confidence: float = 0.95,
    bootstrap: bool = False,
    n_boot: int = 4000,
    seed: int = 0,
) -> "pd.DataFrame":
    """Per group of ``by``: n, mean, ci_lo, ci_hi (t interval), cv of column ``value``; with
    ``bootstrap=True`` also boot_lo, boot_hi (seeded percentile bootstrap of the mean)."""
    import pandas as pd

    keys = [by] if isinstance(by, str) else list(by)
    cols = keys + ["n", "mean", "ci_lo", "ci_hi", "cv"] + (["boot_lo", "boot_hi"] if bootstrap else [])
    rows = []
    for key, grp in df.groupby(keys, sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        vals = grp[value].tolist()
        ci = mean_ci(vals, confidence)
        row = dict(zip(keys, key), n=ci.n, mean=ci.mean, ci_lo=ci.lo, ci_hi=ci.hi, cv=coefficient_of_variation(vals))
        if bootstrap:
            b = bootstrap_ci(vals, confidence=confidence, n_boot=n_boot, seed=seed)
            row.update(boot_lo=b.lo, boot_hi=b.hi)
        rows.append(row)
    return pd.DataFrame(rows, columns=cols)


def ratio_table(
    df: "pd.DataFrame",
    index: str,
    columns: str,
    values: str,
    baseline: str,
    agg: str = "mean",
) -> "pd.DataFrame":
    """Pivot ``values`` (aggregated with ``agg``) to rows ``index`` × columns ``columns`` and
    divide every column by the ``baseline`` column, e.g. BBR/CUBIC goodput per loss rate:
    ``ratio_table(flows, "loss_pct", "cc", "goodput_bps", baseline="cubic")``.
    The baseline column becomes 1.0; division by 0 gives NaN. For intervals on a ratio use
    :func:`ratio_ci` per cell."""
    import pandas as pd

    table = pd.pivot_table(df, index=index, columns=columns, values=values, aggfunc=agg)
    if baseline not in table.columns:
        raise KeyError(f"baseline {baseline!r} is not among {list(table.columns)}")
    base = table[baseline].replace(0, np.nan)
    return table.div(base, axis=0)
