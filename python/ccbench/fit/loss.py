"""Random loss and its burstiness.

A transmission is lost when its bytes were sent again later, unless a D-SACK reported the
retransmitted bytes as a duplicate (a spurious retransmission, RFC 2883 §4). Drops by a full
buffer are not the link's random loss: they happen only while the queue is near its largest,
so the random loss rate is measured on transmissions that found the queue below half its
largest delay (queueing.py); loss independent of the queue gives the same rate there.

Burstiness: the loss indicators of those transmissions, in send order, are fitted both as
Bernoulli (one parameter q = losses / n) and as simple Gilbert (a two-state Markov chain in
which the bad state always loses: p = P(loss | previous delivered) = n01 / n0, r = P(delivered |
previous lost) = n10 / n1, the `{model = "gilbert", p, r}` of docs/scenario.md). Bernoulli is
nested in Gilbert (p = 1 - r = q), so 2 (log L_gilbert - log L_bernoulli) is chi-square with one
degree of freedom under Bernoulli (Wilks); bursty when its p-value is below ``BURSTY_P``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import chi2

from .estimate import Estimate
from .timeline import Timeline

__all__ = ["LossFit", "lost_transmissions", "fit_loss", "wilson"]

#: Likelihood-ratio p-value below which the loss is called bursty (Gilbert).
BURSTY_P = 1e-3
#: A transmission finding the queue below this fraction of its largest delay is "uncongested".
LOW_QUEUE = 0.5


def lost_transmissions(tl: Timeline) -> np.ndarray:
    """Per transmission: lost (its first byte was sent again later, and the segment holding it
    is lost by ``tl.seg_lost``: not a spurious retransmission)."""
    n = len(tl.tx_t)
    lost = np.zeros(n, dtype=bool)
    seen: set[int] = set()
    for i in range(n - 1, -1, -1):
        s = int(tl.tx_start[i])
        if s in seen:
            lost[i] = True
        else:
            seen.add(s)
    idx = np.nonzero(lost)[0]
    k = np.searchsorted(tl.seg_start, tl.tx_start[idx], side="right") - 1
    lost[idx] = tl.seg_lost[np.clip(k, 0, None)]
    return lost


def _xlogy(x: float, y: float) -> float:
    return 0.0 if x == 0 else x * math.log(y)


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion k/n (z = 1.96: 95 %)."""
    if n == 0:
        return 0.0, 1.0
    ph = k / n
    den = 1 + z * z / n
    mid = (ph + z * z / (2 * n)) / den
    half = z * math.sqrt(ph * (1 - ph) / n + z * z / (4 * n * n)) / den
    return max(0.0, mid - half), min(1.0, mid + half)


@dataclass(frozen=True)
class LossFit:
    rate: Estimate
    model: str
    #: Gilbert p and r (fractions), also when Bernoulli is chosen (for the evidence).
    p: float
    r: float
    lr_pvalue: float
    evidence: str


def fit_loss(tl: Timeline, queue_s: np.ndarray, queue_max_s: float) -> LossFit:
    lost = lost_transmissions(tl)
    n_all, k_all = len(lost), int(lost.sum())
    retx = int(tl.tx_retx.sum())
    low = queue_s < LOW_QUEUE * queue_max_s if queue_max_s > 1e-3 else np.ones(n_all, dtype=bool)
    seq = lost[low].astype(np.int8)
    n, k = len(seq), int(seq.sum())
    q = k / n if n else 0.0
    a, b = seq[:-1], seq[1:]
    n00 = int(np.sum((a == 0) & (b == 0)))
    n01 = int(np.sum((a == 0) & (b == 1)))
    n10 = int(np.sum((a == 1) & (b == 0)))
    n11 = int(np.sum((a == 1) & (b == 1)))
    p = n01 / (n00 + n01) if n00 + n01 else 0.0
    r = n10 / (n10 + n11) if n10 + n11 else 1.0
    # the Bernoulli likelihood over the same transitions as the chain (the first one conditions)
    m1 = n01 + n11
    m0 = n00 + n10
    ll_b = _xlogy(m1, m1 / (m0 + m1)) + _xlogy(m0, m0 / (m0 + m1)) if m0 and m1 else 0.0
    ll_g = _xlogy(n01, p) + _xlogy(n00, 1 - p) + _xlogy(n10, r) + _xlogy(n11, 1 - r)
    stat = max(2 * (ll_g - ll_b), 0.0)
    pval = float(chi2.sf(stat, 1)) if k else 1.0
    model = "none" if k == 0 else ("gilbert" if pval < BURSTY_P else "bernoulli")
    # Losses come in bursts of mean length 1/r: the events, not the packets, are independent.
    burst = 1 / r if model == "gilbert" and r > 0 else 1.0
    lo, hi = wilson(round(k / burst), round(n / burst)) if n else (0.0, 1.0)
    ev = (
        f"{retx} retransmissions of {n_all} transmissions, {k_all} lost after D-SACK "
        f"({tl.spurious_bytes} bytes D-SACKed, {tl.spurious_by_timing} segments acked too soon after "
        f"their retransmission); {k} lost of {n} sent below "
        f"{LOW_QUEUE:.0%} of the largest queue delay ({queue_max_s * 1e3:.1f} ms); "
        f"Gilbert p {p * 100:.3f} % r {r * 100:.1f} % vs Bernoulli: LR {stat:.1f}, p-value {pval:.2g} -> {model}"
    )
    return LossFit(
        rate=Estimate("loss", q, min(lo, q), max(hi, q), "fraction", ev),
        model=model,
        p=p,
        r=r,
        lr_pvalue=pval,
        evidence=ev,
    )
