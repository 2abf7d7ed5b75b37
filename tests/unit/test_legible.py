"""The figures' labelling and the terminal tables' helpers (ccbench.legible, ccbench.termtable)."""

from __future__ import annotations

import math
import re

from hypothesis import given
from hypothesis import strategies as st
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ccbench.legible import MAX_SERIES, series_labels, short_keys, tidy, wrap
from ccbench.termtable import short_cell

KEYS = ["name", "flows.0.count", "flows.0.cc", "flows.1.cc", "access.rate", "bottleneck.loss"]
VALUES = st.one_of(
    st.none(),
    st.just(math.nan),
    st.integers(0, 20),
    st.sampled_from(["cubic", "vegas", "1%", "95Mbit", "study/part-a", "study/part-b"]),
)
ROWS = st.lists(st.fixed_dictionaries({k: VALUES for k in KEYS}), min_size=1, max_size=12)


def _present(v) -> str:
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)


@given(ROWS)
def test_labels_never_say_nan_and_name_only_varying_keys(rows):
    labels = series_labels(rows, KEYS)
    assert len(labels) == len(rows)
    short = short_keys(KEYS)
    for label in labels:
        assert "nan" not in label.lower() and "none" not in label.lower()
    for k in KEYS:
        if k == "name":
            continue
        varies = len({_present(r[k]) for r in rows}) > 1
        shown = any(re.search(rf"(^|, ){re.escape(short[k])}=", lb) for lb in labels)
        if not varies:
            assert not shown, (k, labels)


@given(ROWS)
def test_rows_that_differ_get_different_labels(rows):
    labels = series_labels(rows, KEYS)
    for a, la in zip(rows, labels):
        for b, lb in zip(rows, labels):
            if tuple(_present(a[k]) for k in KEYS) != tuple(_present(b[k]) for k in KEYS):
                assert la != lb, (a, b, la)


def test_labels_example():
    rows = [
        {"name": "vvc/streams", "flows.0.count": 1, "access.rate": math.nan},
        {"name": "vvc/shaping", "flows.0.count": 10, "access.rate": "9.5Mbit"},
    ]
    assert series_labels(rows) == ["streams, count=1", "shaping, count=10, rate=9.5Mbit"]
    assert series_labels([{"a.b": 1}, {"a.b": 1}]) == ["", ""]


def test_short_keys_keep_what_tells_keys_apart():
    assert short_keys(["flows.0.cc", "flows.1.cc", "flows.0.count"]) == {
        "flows.0.cc": "0.cc",
        "flows.1.cc": "1.cc",
        "flows.0.count": "count",
    }


def test_wrap_fits_the_width():
    text = "Throughput and delay: runs (dots), mean of runs with 95% t intervals (crosses); up and right is better"
    lines = wrap(text, 4.0, 10).split("\n")
    assert len(lines) > 1 and max(map(len, lines)) <= int(4.0 * 72 / 6)


def test_tidy_separates_crowded_tick_labels():
    fig = Figure(figsize=(4, 3))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.bar(range(12), range(12))
    ax.set_xticks(range(12), [f"a long label {i}" for i in range(12)])
    tidy(fig)
    r = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(r) for t in ax.xaxis.get_majorticklabels() if t.get_visible() and t.get_text()]
    assert boxes and not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])


def test_short_cell():
    assert short_cell("flows.0.count=1, flows.0.cc=cubic") == "count=1, cc=cubic"
    assert short_cell("flows.0.cc=cubic, flows.1.cc=bbr") == "flows.0.cc=cubic, flows.1.cc=bbr"
    assert short_cell("all runs") == "all runs"
    assert short_cell("bottleneck.loss=1%") == "loss=1%"


def test_max_series_is_small():
    assert 4 <= MAX_SERIES <= 10


def _folds(text: str) -> int:
    """The most lines one row of a long-layout table takes (continuations have no field name)."""
    most = run = 0
    for ln in text.splitlines():
        if ln.startswith("│"):
            run = run + 1 if not ln.strip("│").split("│")[0].strip() else 0
            most = max(most, run)
    return most + 1


def test_compare_tables_fit_80_columns():
    from rich.console import Console

    from ccbench.compare import print_tables

    ci = {"mean": 12.345, "lo": 11.0, "hi": 13.5}
    doc = {
        "description": "cubic, bbr and reno on 20 Mbit/s, 20 ms, 10 BDP, 1 % random loss",
        "confidence": 0.95,
        "repeat": 3,
        "test": "welch",
        "alpha": 0.05,
        "alone": [
            {"cc": cc, "runs": 3, "goodput_mbps": ci, "rtt_mean_ms": ci, "rtt_p95_ms": ci, "retransmits": ci}
            for cc in ("cubic", "bbr", "reno")
        ],
        "pairs": [
            {
                "a": "cubic",
                "b": "bbr",
                "runs": 3,
                "share_a": {"mean": 0.2, "lo": 0.1, "hi": 0.3},
                "share_b": {"mean": 0.8, "lo": 0.7, "hi": 0.9},
                "jain": {"mean": 0.7, "lo": 0.6, "hi": 0.8},
                "aggregate_mbps": ci,
                "verdict": "bbr takes more",
            }
        ],
        "tests": [
            {
                "label": "goodput",
                "a": "cubic",
                "b": "bbr",
                "ratio": 4.2,
                "p": 0.001,
                "p_holm": 0.003,
                "statement": "bbr > cubic (p=0.003 after Holm's adjustment over three tests of this metric)",
            }
        ],
    }
    console = Console(width=80, record=True, force_terminal=False)
    print_tables(doc, console)
    text = console.export_text()
    assert max(len(ln) for ln in text.splitlines()) <= 80
    assert _folds(text) <= 2, text
    assert "cubic vs bbr" in text and "bbr > cubic (p=0.003" in text
    wide = Console(width=160, record=True, force_terminal=False)
    print_tables(doc, wide)
    assert "┃ algorithm" in wide.export_text()  # one row per algorithm when there is room
