"""The sequential stopping rule: after each batch of repeats, is the leader separated from the
runner-up, equivalent to it, or neither yet? A pure function of per-repeat scores, tested on
synthetic samples (tests/unit/test_recommend_decision.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional, Sequence

import numpy as np

from .. import analysis
from .algorithms import ORDER

#: overall error rate of declaring a winner when the leader and the runner-up are equal
ALPHA = 0.05
#: relative indifference margin: differences smaller than this are a tie
MARGIN = 0.05


@dataclass
class Decision:
    """The state of the comparison between the leader and the runner-up after a look.

    outcome: ``winner`` (the leader is better by at least the margin and the interval of the
    difference excludes 0), ``tie`` (the interval lies inside ±margin), ``continue`` (neither
    yet), ``undecided`` (neither, and no more looks), ``single`` (one eligible candidate)."""

    outcome: str
    leader: Optional[str]
    runner_up: Optional[str]
    n: int = 0
    diff: Optional[float] = None  # mean(leader) - mean(runner-up), >= 0
    lo: Optional[float] = None  # interval of diff at level 1 - alpha_look
    hi: Optional[float] = None
    rel_diff: Optional[float] = None  # diff / max(|mean leader|, |mean runner-up|)
    p_value: Optional[float] = None  # Welch's two-sided p for leader vs runner-up
    alpha_look: Optional[float] = None  # Bonferroni level of this look
    margin: Optional[float] = None  # absolute indifference margin used
    ranking: list = field(default_factory=list)  # candidates by mean, best first
    tied: list = field(default_factory=list)  # no winner: the leader and every candidate not separated from it

    @property
    def done(self) -> bool:
        return self.outcome in ("winner", "tie", "single")


def sequential_decision(
    samples: Mapping[str, Sequence[float]],
    *,
    look: int = 1,
    max_looks: int = 1,
    alpha: float = ALPHA,
    margin: float = MARGIN,
    min_n: int = 3,
    final: bool = False,
) -> Decision:
    """One look of the sequential rule on per-repeat scores (higher is better).

    The leader (highest mean) is compared with the runner-up (second highest) by Welch's
    interval for the difference of means at level ``1 - alpha_look`` with
    ``alpha_look = alpha / (max_looks * (k - 1))`` (Bonferroni over the looks and over the
    leader's k - 1 possible rivals), so the chance of ever declaring a false winner is at most
    ``alpha``. With ``m = margin * max(|mean leader|, |mean runner-up|)``:

    * ``winner`` when the interval's lower end is > 0 and the difference is at least m;
    * ``tie`` when the whole interval lies inside (-m, m) (equivalence);
    * otherwise ``continue`` (``undecided`` when ``final``).

    Fewer than ``min_n`` values on either side: ``continue``. Constant samples (deterministic
    repeats) give a zero-width interval: the difference is then exact.
    """
    cands = {
        k: np.asarray([float(x) for x in v if x is not None and np.isfinite(x)], dtype=float)
        for k, v in samples.items()
    }
    cands = {k: v for k, v in cands.items() if v.size}
    ranking = sorted(cands, key=lambda k: (-float(np.mean(cands[k])), ORDER.get(k, 9), k))
    if len(ranking) < 2:
        return Decision(
            "single" if ranking else "undecided",
            ranking[0] if ranking else None,
            None,
            n=int(cands[ranking[0]].size) if ranking else 0,
            ranking=ranking,
        )
    lead, second = ranking[0], ranking[1]
    a, b = cands[lead], cands[second]
    n = int(min(a.size, b.size))
    k = len(ranking)
    alpha_look = alpha / (max(1, max_looks) * (k - 1))
    ma, mb = float(np.mean(a)), float(np.mean(b))
    scale = max(abs(ma), abs(mb))
    m_abs = margin * scale
    d = Decision(
        "continue",
        lead,
        second,
        n=n,
        diff=ma - mb,
        rel_diff=(ma - mb) / scale if scale > 0 else 0.0,
        alpha_look=alpha_look,
        margin=m_abs,
        ranking=ranking,
    )
    if n < max(2, min_n):
        d.outcome = "undecided" if final else "continue"
        return d
    w = analysis.welch_test(a, b, confidence=1.0 - alpha_look)
    d.p_value = w.p_value
    d.lo, d.hi = w.diff_lo, w.diff_hi
    if d.lo is None or d.hi is None:
        d.outcome = "undecided" if final else "continue"
        return d
    if d.lo > 0 and d.diff >= m_abs and d.diff > 0:
        d.outcome = "winner"
    elif -m_abs < d.lo and d.hi < m_abs:
        d.outcome = "tie"
    elif d.diff == 0 and d.lo == d.hi == 0:  # identical constant samples (margin 0)
        d.outcome = "tie"
    else:
        d.outcome = "undecided" if final else "continue"
    # the candidates not separated from the leader (none when there is a winner)
    d.tied = [] if d.outcome == "winner" else [lead]
    if d.outcome != "winner":
        for c in ranking[1:]:
            x = cands[c]
            if x.size < 2:
                continue
            wc = analysis.welch_test(a, x, confidence=1.0 - alpha_look)
            diff = ma - float(np.mean(x))
            if not (wc.diff_lo is not None and wc.diff_lo > 0 and diff >= m_abs and diff > 0):
                d.tied.append(c)
    return d
