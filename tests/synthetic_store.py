"""A synthetic sweep store whose answers are known by construction, for the figure tests
(unit/test_plots.py) and the report tests (cli/test_report.py): 3 loss rates x 2 algorithms x
3 repeats, two flows per run, 20 s of 100 ms samples, and one failed run."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd

from ccbench import analysis

LOSSES = {"0%": 0.0, "0.1%": 0.1, "1%": 1.0}
CCS = ["cubic", "bbr"]
REPEATS = 3
SPREAD = 0.5  # the two flows of a run get g·(1 ± SPREAD): Jain = 1 / (1 + SPREAD²) = 0.8
PERIOD_S = 5.0  # group 0's throughput oscillates with this period
GRID = {"bottleneck.loss": list(LOSSES), "flows.0.cc": CCS}


def cell_goodput_mbps(cc: str, loss_pct: float) -> float:
    """The mean per-flow goodput of a cell (the repeats are this ± 1 Mbit/s)."""
    return 40.0 if cc == "bbr" else 10.0 / (1.0 + loss_pct)  # ≥ 5: every repeat stays positive


def cell_p95_ms(cc: str) -> float:
    return 60.0 if cc == "bbr" else 90.0


def probe_p95_ms(cc: str, loss_pct: float) -> float:
    """The mean over repeats of a cell's probe p95 (the repeats are this ± 1 ms)."""
    return (300.0 if cc == "cubic" else 45.0) + 10 * loss_pct


def fake_store(probe: bool = False, failed: bool = True) -> SimpleNamespace:
    """A Results-like object shaped like the contract's tables: 3 loss rates × 2 algorithms ×
    3 repeats, two flows per run (groups 0 and 1), 20 s of 100 ms samples, plus one failed run."""
    runs, flows, series, link = [], [], [], []
    t = np.round(np.arange(0.1, 20.0 + 1e-9, 0.1), 3)
    for loss_key, loss in LOSSES.items():
        for cc in CCS:
            for rep in range(REPEATS):
                rid = f"{cc[:2]}{int(loss * 10):02d}{rep}" + "0" * 10
                g = (cell_goodput_mbps(cc, loss) + (rep - 1)) * 1e6  # repeats: mean ± 1 Mbit/s
                swept = {"bottleneck.loss": loss_key, "flows.0.cc": cc, "repeat": rep}
                goodputs = [g * (1 + SPREAD), g * (1 - SPREAD)]
                for fid, gp in enumerate(goodputs):
                    flows.append(
                        dict(
                            run_id=rid,
                            backend="sim",
                            name="fake",
                            rate_mbps=100.0,
                            rtt_ms=50.0,
                            jitter_ms=0.0,
                            loss_pct=loss,
                            buffer_bytes=625_000,
                            buffer_bdp=1.0,
                            n_flows=2,
                            flow_id=fid,
                            group=fid,
                            cc=cc,
                            goodput_bps=gp,
                            rtt_mean_ms=cell_p95_ms(cc) - 10,
                            rtt_p95_ms=cell_p95_ms(cc),
                            **swept,
                        )
                    )
                    wave = 0.2 * gp * np.sin(2 * np.pi * t / PERIOD_S) if fid == 0 else 0.0
                    for i, ts in enumerate(t):
                        series.append(
                            dict(
                                run_id=rid,
                                flow_id=fid,
                                group=fid,
                                cc=cc,
                                t_s=ts,
                                goodput_bps=gp + (wave[i] if fid == 0 else 0.0),
                                cwnd_pkts=100 + fid * 10,
                                rtt_ms=50.0 + (i % 10),
                                pacing_bps=gp * 1.25,
                                **swept,
                            )
                        )
                for i, ts in enumerate(t):
                    link.append(
                        dict(
                            run_id=rid,
                            t_s=ts,
                            queue_bytes=1500 * (i % 50),
                            probe_rtt_ms=(51.0 + (i % 4)) if probe else None,
                            **swept,
                        )
                    )
                runs.append(
                    dict(
                        run_id=rid,
                        backend="sim",
                        status="ok",
                        error=None,
                        jain_index=analysis.jain_index(goodputs),
                        jain_index_groups=analysis.jain_index(goodputs),
                        aggregate_goodput_bps=sum(goodputs),
                        link_utilisation=0.9,
                        kernel_version=None,
                        **swept,
                        **(
                            {"probe_rtt_p95_ms": probe_p95_ms(cc, loss) + (rep - 1), "base_rtt_ms": 50.0}
                            if probe
                            else {}
                        ),
                    )
                )
    if failed:
        runs.append(
            dict(
                run_id="zz" + "0" * 14,
                backend="sim",
                status="failed",
                error="boom <b>& bad</b>",
                **{"bottleneck.loss": "5%", "flows.0.cc": "bbr", "repeat": 0},
            )
        )
    link_df = pd.DataFrame(link)
    link_df["probe_rtt_ms"] = link_df["probe_rtt_ms"].astype(float)
    meta = {
        "ccbench_version": "0.2.0",
        "command": ["ccbench", "sweep", "fake.toml"],
        "created": "2025-01-01T00:00:00+00:00",
        "backend": "sim",
        "kernel_version": "6.1.0-test",
        "scenario_file": "fake.toml",
        "scenario_toml": '# A fake sweep.\nname = "fake"\n[bottleneck]\nrate = "100Mbit"\n',
        "grid": dict(GRID),
        "repeat": REPEATS,
        "study": None,
    }
    return SimpleNamespace(
        runs=pd.DataFrame(runs), flows=pd.DataFrame(flows), series=pd.DataFrame(series), link_series=link_df, meta=meta
    )


def write_store(store: SimpleNamespace, root: Path) -> Path:
    """Write a fake store in the contract's directory layout (one Parquet file per run)."""
    for table in ("runs", "flows", "series", "link_series"):
        df = getattr(store, table)
        (root / table).mkdir(parents=True, exist_ok=True)
        for rid, part in df.groupby("run_id", sort=False):
            part.reset_index(drop=True).to_parquet(root / table / f"{rid}.parquet", index=False)
    (root / "ccbench.json").write_text(json.dumps(store.meta))
    return root
