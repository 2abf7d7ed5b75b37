"""What ccbench.recommend decides from numbers, without running a simulation: the sequential
stopping rule on synthetic samples of known distributions (recommend/decision.py), the link's
options and its neighbourhood of variants (recommend/link.py), and the recommendation map's table
and report section on synthetic flows (recommend/map.py). The searches on the simulator and the
command line are in cli/test_recommend.py."""

from __future__ import annotations

import numpy as np
import pytest

from ccbench.recommend import ALPHA, link_from_options, neighbourhood, parse_competing, sequential_decision
from conftest import PING_DIR

PING = PING_DIR


# ---- the stopping rule ------------------------------------------------------------------------


def sequential(draw, k=2, min_n=3, batch=2, max_n=20, alpha=ALPHA, margin=0.05):
    """Drive sequential_decision as recommend does: min_n repeats, then batches, up to max_n."""
    max_looks = 1 + -(-(max_n - min_n) // batch)
    samples = {f"c{i}": [] for i in range(k)}
    n, look = 0, 0
    while True:
        add = min_n if n == 0 else min(batch, max_n - n)
        for _ in range(add):
            for i in range(k):
                samples[f"c{i}"].append(draw(i))
        n += add
        look += 1
        d = sequential_decision(
            samples, look=look, max_looks=max_looks, alpha=alpha, margin=margin, min_n=min_n, final=n >= max_n
        )
        if d.done or n >= max_n:
            return d, n


def test_large_difference_is_separated_quickly():
    rng = np.random.default_rng(1)
    for _ in range(20):  # 10 standard deviations: the first look (3 repeats) decides
        d, n = sequential(lambda i: rng.normal(10 + 10 * (i == 1), 1.0))
        assert d.outcome == "winner" and d.leader == "c1" and d.runner_up == "c0" and n == 3
        assert d.p_value < d.alpha_look
    ns = []
    for _ in range(20):  # 3 standard deviations (30 %): within a few batches
        d, n = sequential(lambda i: rng.normal(10 + 3 * (i == 1), 1.0))
        assert d.outcome == "winner" and d.leader == "c1"
        ns.append(n)
    assert max(ns) <= 11 and np.median(ns) <= 7


def test_equal_distributions_give_a_tie():
    rng = np.random.default_rng(2)
    outcomes = [sequential(lambda i: rng.normal(100, 1.0))[0].outcome for _ in range(50)]
    assert outcomes.count("tie") == 50
    d, n = sequential(lambda i: 100.0)  # deterministic repeats: exact, a tie at once
    assert d.outcome == "tie" and n == 3


@pytest.mark.parametrize("k", [2, 4])
def test_false_winner_rate_within_alpha(k):
    """200 trials of identical candidates, noisy enough that a tie cannot be shown quickly:
    a winner is declared in at most alpha of them."""
    rng = np.random.default_rng(10 + k)
    outcomes = [sequential(lambda i: rng.normal(10, 3.0), k=k)[0].outcome for _ in range(200)]
    assert outcomes.count("winner") <= ALPHA * 200
    assert set(outcomes) <= {"tie", "undecided"} | {"winner"}


def test_small_true_difference_below_margin_is_a_tie_and_noise_is_undecided():
    rng = np.random.default_rng(4)
    d, _ = sequential(lambda i: rng.normal(100 + 2 * (i == 1), 0.5))  # 2 % < 5 % margin
    assert d.outcome == "tie"
    d, n = sequential(lambda i: rng.normal(10 + 0.6 * (i == 1), 4.0))
    assert d.outcome in ("undecided", "winner") and n == 20 or d.outcome == "tie"


def test_rule_edge_cases():
    assert sequential_decision({"a": [1, 2, 3]}).outcome == "single"
    d = sequential_decision({"a": [1.0, 1.1], "b": [5.0, 5.1]}, min_n=3)
    assert d.outcome == "continue" and d.leader == "b"
    d = sequential_decision({"a": [1.0] * 3, "b": [2.0] * 3})
    assert d.outcome == "winner" and d.leader == "b" and d.lo == d.hi == 1.0
    d = sequential_decision({"a": [10.0] * 3, "b": [10.0] * 3, "c": [1.0] * 3})
    assert d.outcome == "tie" and set(d.tied) == {"a", "b"}


# ---- the link and its options -----------------------------------------------------------------


def test_neighbourhood_and_options():
    link, notes = link_from_options(rate="50Mbit", rtt="50ms", loss="1%", jitter="5ms")
    pts = neighbourhood(link)
    assert [p.axis for p in pts] == [None, "rate", "rate", "loss", "loss", "jitter", "jitter"]
    assert pts[3].loss == pytest.approx(0.005) and pts[6].jitter_s == pytest.approx(0.0075)
    link0, _ = link_from_options(rate="50Mbit", rtt="50ms")
    assert len(neighbourhood(link0)) == 3  # a zero loss / jitter is not varied
    assert link0.buffer_bytes() == 312500
    assert parse_competing("2xcubic,bbr") == [("cubic", 2), ("bbr", 1)]
    assert parse_competing("cubic:3") == [("cubic", 3)]
    from ccbench.pingparse import parse_ping_file

    link, notes = link_from_options(rate=None, rtt=None, ping=parse_ping_file(PING / "linux_loss.txt"))
    assert link.rtt_s == pytest.approx(0.0486) and link.loss == pytest.approx(0.2)
    assert any("assuming 50 Mbit/s" in n for n in notes)


# ---- the recommendation-map study and its report section -------------------------------------


def _flows(cells, rng):
    """Synthetic flows rows: cells = {(rtt, jitter, loss, buf): {cc: (goodput Mbit/s, p95 ms)}}."""
    import pandas as pd

    rows, rid = [], 0
    for (rtt, jit, loss, buf), per in cells.items():
        for cc, (gp, p95) in per.items():
            for _ in range(4):
                rid += 1
                rows.append(
                    {
                        "run_id": f"r{rid}",
                        "group": 0,
                        "cc": cc,
                        "rtt_ms": rtt,
                        "jitter_ms": jit,
                        "loss_pct": loss,
                        "buffer_bdp": buf,
                        "rate_mbps": 50.0,
                        "base_rtt_ms": rtt,
                        "goodput_bps": (gp + rng.normal(0, 0.2)) * 1e6,
                        "rtt_p95_ms": p95 + rng.normal(0, 0.5),
                    }
                )
    return pd.DataFrame(rows)


def test_map_table_marks_winners_and_ties():
    from ccbench.recommend import map_table

    rng = np.random.default_rng(5)
    f = _flows(
        {
            (50, 0, 0, 1): {"cubic": (47, 99), "bbr": (47, 75)},
            (50, 0, 1, 1): {"cubic": (5, 55), "bbr": (45, 70)},
            (50, 10, 0, 4): {"cubic": (47, 240), "bbr": (46.5, 70)},
        },
        rng,
    )
    t = map_table(f, "throughput")
    assert list(t["winner"]) == ["tie", "BBR v1", "tie"]
    assert t.loc[1, "by %"] > 80 and t.loc[1, "runner-up"] == "CUBIC"
    lat = map_table(f, "latency")
    assert list(lat["winner"]) == ["BBR v1"] * 3
    assert lat.loc[1, "runner-up"] == ""  # CUBIC has under half BBR's goodput there
    assert lat.loc[2, "jitter/RTT"] == pytest.approx(0.2)


def test_recommendation_map_study_loads_and_its_section_renders():
    from types import SimpleNamespace

    from ccbench import study
    from ccbench.study import map_section

    s = study.find_study("recommendation-map")
    assert s.analyses == ["recommendation_map"] and [p.name for p in s.parts] == ["alone", "vs-cubic"]
    # (12 rtt-jitter pairs x 4 losses x 3 buffers + 12 x 2 x 2) x 5 algorithms x 4 repeats; quick x 3 repeats
    assert sum(p.n_runs() for p in s.parts) == 3840 and sum(p.n_runs(True) for p in s.parts) == 240
    assert "recommendation_map" in study.ANALYSES
    rng = np.random.default_rng(6)
    alone = _flows({(50, 0, 1, 1): {"cubic": (5, 55), "bbr": (45, 70)}}, rng)
    datas = [SimpleNamespace(part=SimpleNamespace(name="alone"), empty=False, flows=alone)]
    sec = map_section(s, datas)
    assert sec.title == "Recommendation map"
    assert "BBR v1 +" in sec.html and "goal throughput" in sec.html and "goal latency" in sec.html
    assert any("cells won per goal" in cap for cap, _ in sec.tables)
