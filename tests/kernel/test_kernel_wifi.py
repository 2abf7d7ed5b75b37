"""The Wi-Fi link on the kernel backend: real Linux CUBIC through
ccbench-link's Wi-Fi arm, which runs the simulator's own 802.11n medium (ccbench-wifi) with one
thread serving both directions. Needs root, TUN, iperf3 and a built ccbench-link; skipped with
the reason otherwise. One 6 s kernel run and the same scenario in the simulator (a few seconds
of CPU)."""

from __future__ import annotations

import os

import pytest

from ccbench.backends.kernel import env
from ccbench.scenario.model import Scenario
from conftest import kernel_missing

pytestmark = pytest.mark.kernel

needs_kernel = pytest.mark.skipif(kernel_missing() is not None, reason=kernel_missing() or "")

#: MCS 4 (one stream, 16-QAM 3/4, 20 MHz, long GI): 39 Mbit/s PHY. A rate the shared CPU of this
#: machine forwards comfortably, still with full 64-MPDU aggregates for a queue-filling sender.
WIFI = {"mcs": 4}


def scenario(duration: str = "6s") -> Scenario:
    d = {
        "duration": duration,
        "seed": 1,
        "start_jitter": "0s",
        "bottleneck": {"link": "wifi", "rtt": "20ms"},
        "wifi": WIFI,
        "flows": [{"cc": "cubic"}],
    }
    return Scenario.from_dict(d, source="test_kernel_wifi")


def _our_namespaces() -> list[str]:
    from pyroute2 import netns

    return [n for n in netns.listnetns() if n.startswith(f"{env.PREFIX}{os.getpid()}x")]


@pytest.fixture(scope="module")
def runs():
    if kernel_missing():
        pytest.skip(kernel_missing())
    from ccbench.backends import kernel, sim

    sc = scenario()
    keep: dict = {}
    kres = kernel.run(sc, keep=keep)
    assert _our_namespaces() == [], "the run left its namespaces behind"
    sres = sim.run(sc)
    return sc, kres, keep, sres


@needs_kernel
def test_cubic_over_the_wifi_model_gets_the_simulators_goodput(runs):
    """One real CUBIC flow over the Wi-Fi hop: its goodput is within 15 % of the simulator's
    CUBIC over the same model. Both run the same medium code; what differs
    is the TCP (Linux's vs the simulator's) and its ACKs, which take airtime in the reverse
    direction on both."""
    sc, kres, _, sres = runs
    assert kres.ok, kres.error
    assert sres.ok, sres.error
    k = float(kres.flows.goodput_bps.iloc[0])
    s = float(sres.flows.goodput_bps.iloc[0])
    print(
        f"goodput kernel {k / 1e6:.2f} Mbit/s, sim {s / 1e6:.2f} Mbit/s "
        f"(PHY {sc.bottleneck.rate_bps / 1e6:.1f} Mbit/s); ratio {k / s:.3f}"
    )
    assert abs(k - s) <= 0.15 * s


@needs_kernel
def test_the_link_ran_one_shared_medium_and_reports_its_columns(runs):
    """The emulator served the hop through the shared medium (its report has the `wifi` object)
    and the runs table has every wifi_* column filled. What must hold whatever the numbers:
    - a queue-filling CUBIC flow makes aggregates: the data station's mean A-MPDU is above 1
      MPDU, and no aggregate exceeds the 64-MPDU block-ack window;
    - the medium is half-duplex: the two stations' airtime shares add up to at most 1 (each
      share is that station's PPDUs + block-acks over the window, and they never overlap except
      in collisions, which both count, so the bound holds up to the collisions' airtime: at
      most 1 + a small slack);
    - the ACK station transmits (the ACKs cross the same medium) and its airtime is well below
      the data station's;
    - utilisation is below 1: the PHY rate is the ceiling, overheads come off it."""
    sc, kres, keep, sres = runs
    assert kres.ok, kres.error
    w = keep["link"].get("wifi")
    assert w is not None, "ccbench-link did not run its Wi-Fi arm"
    assert w["phy_rate_bps"] == sc.bottleneck.rate_bps
    r = kres.runs.iloc[0]
    cols = [
        "wifi_ampdu_mean_fwd",
        "wifi_ampdu_p50_fwd",
        "wifi_ampdu_p90_fwd",
        "wifi_ampdu_mean_rev",
        "wifi_ampdu_p50_rev",
        "wifi_ampdu_p90_rev",
        "wifi_txops_fwd",
        "wifi_txops_rev",
        "wifi_airtime_fwd",
        "wifi_airtime_rev",
        "wifi_collisions",
        "wifi_mpdus_retried",
        "wifi_retry_drops",
    ]
    s = sres.runs.iloc[0]
    print("kernel: " + ", ".join(f"{c}={r[c]}" for c in cols))
    print("sim:    " + ", ".join(f"{c}={s[c]}" for c in cols))
    for c in cols:
        assert r[c] is not None and r[c] == r[c], f"{c} is null"
    assert 1.0 < r.wifi_ampdu_mean_fwd <= 64
    assert r.wifi_ampdu_p90_fwd <= 64
    assert r.wifi_txops_rev > 0
    assert r.wifi_airtime_fwd + r.wifi_airtime_rev <= 1.02
    assert r.wifi_airtime_rev < r.wifi_airtime_fwd
    assert 0 < r.link_utilisation < 1
    # no frame errors configured: nothing retried except after collisions, nothing dropped
    assert r.wifi_retry_drops == 0


def test_wifi_run_columns_take_the_runs_window():
    """No kernel needed: the columns come from the samples at or before 0 and the duration, not
    from the emulator's whole life (it starts before the flows and stops after them)."""
    from ccbench.backends.kernel.wifi import ampdu_quantile, run_columns

    def hist(**n):  # A-MPDU histogram from {size: count}
        h = [0] * 65
        for k, v in n.items():
            h[int(k[1:])] = v
        return h

    t_ns = [0, 1_000_000_000, 2_000_000_000, 3_000_000_000]  # link start 10 s, run start 11 s

    def side(hs, air):
        return {
            "samples": {
                "txops": [sum(h) for h in hs],
                "airtime_ns": air,
                "mpdus_retried": [0, 1, 3, 9],
                "mpdus_dropped": [0, 0, 1, 5],
                "ampdu_hist": hs,
            }
        }

    fwd = side(
        [hist(), hist(n1=5), hist(n1=5, n10=2, n64=8), hist(n1=50, n10=2, n64=8)], [0, 100, 500_000_100, 900_000_000]
    )
    rev = side([hist(), hist(n1=1), hist(n1=4), hist(n1=9)], [0, 10, 100_000_010, 200_000_000])
    wifi = {"directions": [fwd, rev], "samples": {"t_ns": t_ns, "collisions": [0, 2, 5, 40]}}
    c = run_columns(wifi, link_t0_s=10.0, t0=11.0, dur=1.0)  # the window is samples 1 → 2
    assert c["wifi_ampdu_mean_fwd"] == pytest.approx((2 * 10 + 8 * 64) / 10)
    assert (c["wifi_ampdu_p50_fwd"], c["wifi_ampdu_p90_fwd"]) == (64.0, 64.0)
    assert c["wifi_ampdu_mean_rev"] == 1.0
    assert (c["wifi_txops_fwd"], c["wifi_txops_rev"]) == (10, 3)
    assert c["wifi_airtime_fwd"] == pytest.approx(0.5)
    assert c["wifi_airtime_rev"] == pytest.approx(0.1)
    assert (c["wifi_collisions"], c["wifi_mpdus_retried"], c["wifi_retry_drops"]) == (3, 4, 2)
    assert run_columns(None, 10.0, 11.0, 1.0) == {}
    # the quantile rule is the crate's: the smallest size whose cumulative count reaches ceil(q·n)
    assert ampdu_quantile(hist(n1=1, n2=1), 0.5) == 1
    assert ampdu_quantile(hist(n1=1, n2=1), 0.51) == 2
    assert ampdu_quantile(hist(), 0.5) is None
