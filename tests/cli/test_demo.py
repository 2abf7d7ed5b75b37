"""`ccbench demo` (ccbench/demo.py, cli/demo.py): its grid, a short run, and the table it prints
with the Mathis line, on a wide and a narrow terminal."""

from __future__ import annotations

from conftest import run_ccbench as ccbench


def test_demo_grid_lists_what_the_sim_has():
    from ccbench.demo import demo_grid

    losses, algs = demo_grid()
    assert losses == ["0%", "0.1%", "1%", "5%"]
    assert algs[:2] == ["cubic", "reno"]


def test_demo_short_run():
    p = ccbench("demo", "--duration", "2s", timeout=600)
    assert "Mathis" in p.stdout and "5%" in p.stdout
    assert p.returncode == 0, p.stdout + p.stderr
    assert "failed" not in p.stdout


def test_demo_render_table_and_mathis_line():
    from rich.console import Console

    from ccbench.demo import render

    losses, algs = ["0%", "1%"], ["cubic", "reno"]
    cells = [
        {
            "loss": loss,
            "cc": c,
            "status": "ok",
            "error": None,
            "base_rtt_s": 0.05,
            "goodput_bps": g,
            "rtt_mean_ms": 60.0,
            "rtt_p95_ms": 75.5,
            "retransmits": r,
        }
        for (loss, c, g, r) in [
            ("0%", "cubic", 48.1e6, 0),
            ("0%", "reno", 47.9e6, 0),
            ("1%", "cubic", 3.3e6, 250),
            ("1%", "reno", 2.9e6, 240),
        ]
    ]
    con = Console(record=True, width=200)
    render(losses, algs, cells, con)
    text = con.export_text()
    assert "48.10" in text and "2.90" in text and "60.0 / 75.5" in text and "250" in text
    assert "1% → 2.84 Mbit/s" in text  # Mathis at 50 ms, 1448 B, 1 %
    assert "failed" not in text
    cells[3] = dict(cells[3], status="failed", error="boom")
    con = Console(record=True, width=200)
    render(losses, algs, cells, con)
    text = con.export_text()
    assert "failed" in text and "boom" in text


def test_demo_render_narrow_terminal_splits_by_metric():
    from rich.console import Console

    from ccbench.demo import render

    losses, algs = ["0%", "5%"], ["cubic", "reno", "bbr", "vegas"]
    cells = [
        {
            "loss": loss,
            "cc": c,
            "status": "ok",
            "error": None,
            "base_rtt_s": 0.05,
            "goodput_bps": 12.345e6,
            "rtt_mean_ms": 51.25,
            "rtt_p95_ms": 60.0,
            "retransmits": 7,
        }
        for loss in losses
        for c in algs
    ]
    con = Console(record=True, width=80)
    render(losses, algs, cells, con)
    text = con.export_text()
    assert max(len(line) for line in text.splitlines() if "│" in line) <= 80
    assert "goodput, Mbit/s" in text and "retransmits" in text and "12.35" in text and "51.2 / 60.0" in text
    assert "…" not in text  # nothing truncated
