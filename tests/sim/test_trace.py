"""Trace-driven links from Python: the Mahimahi parser's cases through the
extension, the scenario keys ``trace`` / ``trace_reverse`` and their errors, the shipped traces
reproduced byte for byte by scripts/make_traces.py, and a saturating flow getting the trace's
capacity through the simulator backend."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ccbench.scenario import trace_file
from ccbench.scenario.errors import ScenarioError
from ccbench.scenario.model import Scenario, load_scenario
from conftest import ROOT

_sim = pytest.importorskip("ccbench._sim")


def parse(text: str) -> list[int]:
    return list(_sim.parse_trace(text))


def parse_error(text: str) -> tuple[int, str]:
    with pytest.raises(ValueError) as e:
        _sim.parse_trace(text)
    return e.value.args


# ---- the format ------------------------------------------------------------------------------


def test_parser_reads_comments_blank_lines_and_repeated_timestamps():
    # a repeated timestamp = several opportunities in that millisecond (Mahimahi's format)
    assert parse("# LTE\n\n0\n3\n3\n3   # three packets in ms 3\n  10\r\n") == [0, 3, 3, 3, 10]


@pytest.mark.parametrize(
    "text, line, words",
    [
        ("1\n5\n3\n", 3, "before the previous timestamp (5 ms on line 2)"),
        ("1\n\n1.5\n", 3, "not a whole number"),
        ("# only a comment\n", 0, "no timestamps"),
        ("0\n", 1, "more than 0 ms"),
        ("1\n-2\n", 2, "not a whole number"),
    ],
)
def test_parser_errors_name_the_line(text, line, words):
    got_line, problem = parse_error(text)
    assert got_line == line and words in problem, (got_line, problem)


def test_the_trace_loops_with_its_last_timestamp_as_period():
    # Through the simulator: a trace [5] (one opportunity every 5 ms) with a ping every 100 ms
    # over an idle path (one 3 kB transfer at the start) and a reverse trace with one every
    # 1 ms: the request waits 0-5 ms, so the RTT is the propagation delay plus at most 5 ms +
    # 1 ms, for 3 s, far beyond the trace's single line.
    sc = _from_toml_dict(
        {"trace": "five.trace", "trace_reverse": "one.trace", "rtt": "20ms"},
        files={"five.trace": "5\n", "one.trace": "1\n"},
        flow_size="3000",
        duration="3s",
        probe={"ping": "100ms"},
    )
    assert sc.bottleneck.rate_bps == 12_000 * 1000 // 5  # one 1500 B packet per 5 ms = 2.4 Mbit/s
    from ccbench.backends import sim

    r = sim.run(sc)
    assert r.ok, r.error
    run = r.runs.iloc[0]
    assert 20.0 <= run.probe_rtt_p50_ms <= 26.0 and run.probe_rtt_p99_ms <= 26.5, run


# ---- scenario keys ----------------------------------------------------------------------------

_TMP: list[Path] = []


def _from_toml_dict(
    bottleneck: dict, files: dict[str, str] | None = None, tmp: Path | None = None, flow_size: str | None = None, **top
) -> Scenario:
    """A scenario file in a fresh directory with the given trace files beside it, loaded."""
    import tempfile

    d = tmp or Path(tempfile.mkdtemp(prefix="ccbench-trace-"))
    for name, text in (files or {}).items():
        (d / name).write_text(text)
    lines = [f'{k} = "{v}"' for k, v in top.items() if not isinstance(v, dict)]
    lines.append("[bottleneck]")
    lines += [f'{k} = "{v}"' for k, v in bottleneck.items()]
    lines += ["[[flows]]", 'cc = "cubic"'] + ([f'size = "{flow_size}"'] if flow_size else [])
    for k, v in top.items():
        if isinstance(v, dict):
            lines.append(f"[{k}]")
            lines += [f'{kk} = "{vv}"' for kk, vv in v.items()]
    path = d / "s.toml"
    path.write_text("\n".join(lines) + "\n")
    return load_scenario(path)


def test_shipped_names_and_relative_paths_resolve(tmp_path):
    sc = Scenario.from_dict({"bottleneck": {"trace": "lte-steady", "rtt": "40ms"}, "flows": [{"cc": "cubic"}]})
    ms = [int(x) for x in (ROOT / "python/ccbench/scenario/traces/lte-steady.trace").read_text().split()]
    assert sc.bottleneck.rate_bps == len(ms) * 1500 * 8 * 1000 // ms[-1]
    wire = sc.sim_config()["bottleneck"]["trace"]
    assert wire == {"fwd_ms": ms}, "reverse defaults to the forward trace (sent once)"
    (tmp_path / "sub").mkdir()
    sc = _from_toml_dict(
        {"trace": "sub/a.trace", "trace_reverse": "sat-handover", "rtt": "40ms"},
        files={"sub/a.trace": "1\n1\n2\n"},
        tmp=tmp_path,
    )
    assert sc.bottleneck.rate_bps == 3 * 12_000 * 1000 // 2
    wire = sc.sim_config()["bottleneck"]["trace"]
    assert wire["fwd_ms"] == [1, 1, 2] and len(wire["rev_ms"]) > 1000


def test_scenarios_without_a_trace_are_unchanged():
    sc = Scenario.from_dict({"bottleneck": {"rate": "10Mbit", "rtt": "10ms"}, "flows": [{"cc": "cubic"}]})
    assert "trace" not in sc.sim_config()["bottleneck"]
    assert sc.normalised()["bottleneck"]["trace"] == "", "the hash of every existing scenario stays"


def test_the_hash_follows_the_traces_content(tmp_path):
    a = _from_toml_dict({"trace": "t.trace", "rtt": "10ms"}, files={"t.trace": "1\n2\n"}, tmp=tmp_path)
    b = _from_toml_dict({"trace": "t.trace", "rtt": "10ms"}, files={"t.trace": "1\n3\n"}, tmp=tmp_path)
    assert a.scenario_hash() != b.scenario_hash()


@pytest.mark.parametrize(
    "bottleneck, key, words",
    [
        ({"trace": "lte-steady", "rate": "10Mbit", "rtt": "10ms"}, "bottleneck.rate", "the trace sets the rate"),
        (
            {"trace_reverse": "lte-steady", "rate": "10Mbit", "rtt": "10ms"},
            "bottleneck.trace_reverse",
            "without a trace",
        ),
        ({"trace": "missing.trace", "rtt": "10ms"}, "bottleneck.trace", "no such file"),
        ({"trace": "bad.trace", "rtt": "10ms"}, "bottleneck.trace", "bad.trace: line 3: 2 ms is before"),
        ({"trace": "lte-steady", "trace_reverse": "bad.trace", "rtt": "10ms"}, "bottleneck.trace_reverse", "line 3"),
        ({"trace": "zero.trace", "rtt": "10ms"}, "bottleneck.trace", "more than 0 ms"),
        ({"rtt": "10ms"}, "bottleneck.rate", "required key is missing"),
    ],
)
def test_bad_trace_keys_are_refused_naming_file_key_and_line(tmp_path, bottleneck, key, words):
    files = {"bad.trace": "# header\n5\n2\n", "zero.trace": "0\n0\n"}
    with pytest.raises(ScenarioError) as e:
        _from_toml_dict(bottleneck, files=files, tmp=tmp_path)
    err = e.value
    assert err.key == key and words in err.problem, str(err)
    assert str(err).startswith(str(tmp_path / "s.toml")), "the scenario file is named"
    if "line" in words:
        assert str(tmp_path / "bad.trace") in err.problem, "the trace file is named"


def test_a_directory_or_a_device_is_not_read(tmp_path):
    (tmp_path / "d").mkdir()
    for value in ("d", "/dev/zero"):
        with pytest.raises(ScenarioError) as e:
            _from_toml_dict({"trace": value, "rtt": "10ms"}, tmp=tmp_path)
        assert "not a regular file" in e.value.problem


# ---- shipped traces ----------------------------------------------------------------------------


def test_the_shipped_traces_are_what_the_script_makes(tmp_path):
    shipped = sorted((ROOT / "python/ccbench/scenario/traces").glob("*.trace"))
    assert [p.stem for p in shipped] == ["lte-fluctuating", "lte-steady", "sat-handover"]
    subprocess.run(
        [sys.executable, str(ROOT / "scripts/make_traces.py"), str(tmp_path)], check=True, capture_output=True
    )
    for p in shipped:
        assert (tmp_path / p.name).read_bytes() == p.read_bytes(), p.name
        assert p.stat().st_size < 100_000, f"{p.name}: keep shipped traces small"
    assert subprocess.run([sys.executable, str(ROOT / "scripts/make_traces.py"), "--check"]).returncode == 0


def test_sat_handover_has_its_gaps():
    ms = [int(x) for x in (ROOT / "python/ccbench/scenario/traces/sat-handover.trace").read_text().split()]
    period = ms[-1]
    assert period == 15_000, "one Starlink-like 15 s reconfiguration interval"
    # the handover: nothing from the end of one period to 120 ms into the next
    assert ms[0] > 120
    gaps = [b - a for a, b in zip(ms, ms[1:])]
    assert max(gaps) >= 40, "the mid-pass beam switch"


def test_a_saturating_flow_gets_the_traces_capacity():
    """One CUBIC flow, a 1000-packet buffer: the forward link sends a 1500-byte packet at every
    opportunity after slow start, so the utilisation (IP bytes sent / the trace's opportunities
    up to the end × 1500 B: on wire bytes) is within 1 % of 1, and the goodput is the trace's
    capacity × 1448/1500 less the retransmissions (at most a few per cent)."""
    from ccbench.backends import sim

    sc = Scenario.from_dict(
        {
            "duration": "15s",
            "bottleneck": {"trace": "sat-handover", "rtt": "40ms", "buffer": "1000pkt"},
            "flows": [{"cc": "cubic"}],
        }
    )
    r = sim.run(sc)
    assert r.ok, r.error
    run = r.runs.iloc[0]
    assert run.link_utilisation >= 0.99, run.link_utilisation
    g = r.flows.iloc[0].goodput_bps
    cap = sc.bottleneck.rate_bps * 1448 / 1500  # 15 s = exactly one period of the trace
    assert 0.95 * cap <= g <= 1.01 * cap, (g, cap)


def test_expected_form_lists_the_shipped_traces():
    assert "lte-steady" in trace_file.expected_form()
