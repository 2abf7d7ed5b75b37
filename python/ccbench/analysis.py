"""Statistics that never need to know which backend produced the numbers.

numpy only: the Student-t quantile for confidence intervals is computed here from the
regularised incomplete beta function (continued fraction), so scipy is not a dependency.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Optional, Sequence

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = [
    "jain_index",
    "coefficient_of_variation",
    "MeanCI",
    "mean_ci",
    "t_quantile",
    "t_cdf",
    "mathis_goodput_bps",
    "summarise",
    "ratio_table",
]


def _finite(values: Iterable[float]) -> np.ndarray:
    a = np.asarray([v for v in values if v is not None], dtype=float)
    return a[np.isfinite(a)]


def jain_index(values: Iterable[float]) -> Optional[float]:
    """Jain's fairness index (Σx)² / (n·Σx²): 1 when all equal, 1/n when one takes all.

    None for no values or when every value is 0 (fairness of nothing is undefined).
    Null / NaN entries are ignored.
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
    """Standard deviation / mean (sample standard deviation, ``ddof=1``, by default).

    None when there are fewer than ``ddof + 1`` values or the mean is 0.
    """
    x = _finite(values)
    if x.size <= ddof:
        return None
    m = float(np.mean(x))
    if m == 0.0:
        return None
    return float(np.std(x, ddof=ddof)) / abs(m)


# ---- Student t ------------------------------------------------------------------------------


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    ln_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    front = math.exp(ln_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """CDF of Student's t distribution with ``df`` degrees of freedom."""
    if df <= 0:
        raise ValueError("degrees of freedom must be positive")
    x = df / (df + t * t)
    tail = 0.5 * _betainc(df / 2.0, 0.5, x)
    return 1.0 - tail if t >= 0 else tail


def t_quantile(q: float, df: float) -> float:
    """Inverse of :func:`t_cdf` (bisection on a bracket, then to 1e-12)."""
    if not 0.0 < q < 1.0:
        raise ValueError("q must be within (0, 1)")
    if q == 0.5:
        return 0.0
    if q < 0.5:
        return -t_quantile(1.0 - q, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < q:
        hi *= 2.0
        if hi > 1e12:
            return math.inf
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_cdf(mid, df) < q:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return 0.5 * (lo + hi)


@dataclass(frozen=True)
class MeanCI:
    """Mean with a two-sided confidence interval (``lo``..``hi``) from ``n`` values."""

    mean: Optional[float]
    lo: Optional[float]
    hi: Optional[float]
    n: int
    confidence: float

    @property
    def half_width(self) -> Optional[float]:
        if self.hi is None or self.mean is None:
            return None
        return self.hi - self.mean


def mean_ci(values: Iterable[float], confidence: float = 0.95) -> MeanCI:
    """Sample mean ± t_{(1+c)/2, n-1} · s / √n. With one value the interval is undefined
    (lo = hi = None); with none, everything is None."""
    x = _finite(values)
    n = int(x.size)
    if n == 0:
        return MeanCI(None, None, None, 0, confidence)
    m = float(np.mean(x))
    if n == 1:
        return MeanCI(m, None, None, 1, confidence)
    s = float(np.std(x, ddof=1))
    half = t_quantile(0.5 + confidence / 2.0, n - 1) * s / math.sqrt(n)
    return MeanCI(m, m - half, m + half, n, confidence)


# ---- reference models ------------------------------------------------------------------------


def mathis_goodput_bps(rtt_s: float, loss: float, mss: int = 1448) -> Optional[float]:
    """Mathis et al. (1997) Reno throughput MSS/RTT · sqrt(3/(2p)) in bit/s; ``loss`` a fraction.

    None for p = 0 (the formula has no finite value; the link rate limits instead).
    """
    if loss <= 0 or rtt_s <= 0:
        return None
    return mss * 8 / rtt_s * math.sqrt(3.0 / (2.0 * loss))


# ---- tables ---------------------------------------------------------------------------------


def summarise(
    df: "pd.DataFrame", by: Sequence[str] | str, value: str, confidence: float = 0.95
) -> "pd.DataFrame":
    """Per group of ``by``: n, mean, ci_lo, ci_hi (t interval), cv of column ``value``."""
    import pandas as pd

    keys = [by] if isinstance(by, str) else list(by)
    rows = []
    for key, grp in df.groupby(keys, sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        ci = mean_ci(grp[value].tolist(), confidence)
        rows.append(
            dict(zip(keys, key), n=ci.n, mean=ci.mean, ci_lo=ci.lo, ci_hi=ci.hi,
                 cv=coefficient_of_variation(grp[value].tolist()))
        )
    return pd.DataFrame(rows, columns=keys + ["n", "mean", "ci_lo", "ci_hi", "cv"])


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
    The baseline column becomes 1.0; division by 0 gives NaN."""
    import numpy as np
    import pandas as pd

    table = pd.pivot_table(df, index=index, columns=columns, values=values, aggfunc=agg)
    if baseline not in table.columns:
        raise KeyError(f"baseline {baseline!r} is not among {list(table.columns)}")
    base = table[baseline].replace(0, np.nan)
    return table.div(base, axis=0)
