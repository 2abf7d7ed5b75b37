"""The fit from iperf3's JSON output and a saved ping (fit/iperf.py), on iperf3 3.12 output
recorded over ccbench-link links of known rate, RTT, buffer and loss (tests/data/iperf3/, made
by make_fixtures.py there), and recommend --from iperf3.json --ping ping.txt with one-line
errors for what it cannot use."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from ccbench.cli import app
from ccbench.fit.capture import FitError
from ccbench.fit.iperf import fit_iperf3, fit_iperf3_file, is_json, read_iperf3
from ccbench.fit.scenario_toml import scenario_toml
from ccbench.pingparse import parse_ping_file
from conftest import TESTS

runner = CliRunner()
DATA = TESTS / "data" / "iperf3"
#: 20 Mbit/s, 40 ms base RTT, 1 BDP drop-tail buffer (100 kB), no loss; CUBIC for 10 s
CLEAN = "cubic_20mbit_40ms_1bdp"
#: 20 Mbit/s, 20 ms, 1 BDP, 2 % Bernoulli loss on the data direction (data segments and pings)
LOSSY = "cubic_20mbit_20ms_1bdp_loss2pct"


def _fit(case: str):
    return fit_iperf3_file(DATA / f"{case}.json", parse_ping_file(DATA / f"{case}.ping.txt"))


def test_clean_link_rate_rtt_and_buffer():
    """CUBIC fills a 1 BDP buffer, so the queue stands in most intervals and the rate is the
    link's. Tolerances:
    * rate within 5 %: busy intervals deliver at the link's rate, and the mean over nine
      consecutive ones is the bytes written over 9 s, which differ from the bytes delivered only
      by the change in what the socket holds between the first and the last (at most its send
      buffer, a few hundred kB) and by one 128 kB write: under 2 % of 22.5 MB;
    * base RTT within 1 ms of 40 ms: the ping's smallest RTT adds only an 84-byte packet's
      serialisation (34 us at 20 Mbit/s) and two TUN hops to the propagation delay;
    * buffer between 0.4 and 1.1 BDP: the smoothed RTT never exceeds the largest RTT sample
      (base + 1 BDP of queue + a packet), and after each loss CUBIC keeps 0.7 of its window of
      2 BDP, so the queue never drains below 0.4 BDP while it is measured."""
    fit = _fit(CLEAN)
    assert fit.rate.value == pytest.approx(20e6, rel=0.05)
    assert fit.rate.hi is not None and fit.rate.lo <= fit.rate.value <= fit.rate.hi
    assert fit.rtt.value == pytest.approx(0.040, abs=1e-3)
    bdp = 20e6 * 0.040 / 8
    assert 0.4 * bdp <= fit.buffer.value <= 1.1 * bdp
    assert fit.loss.model == "none"  # the link lost nothing: the ping must not either


def test_clean_link_buffer_overflowed():
    """With no random loss every retransmission is an overflow drop, so the data path lost more
    than the loss-free ping allows and the buffer counts as filled (an interval both sides)."""
    fit = _fit(CLEAN)
    assert "overflowed" in fit.buffer.evidence
    assert fit.buffer.hi is not None and fit.buffer.lo <= fit.buffer.value <= fit.buffer.hi


def test_lossy_link_rate_is_a_lower_bound():
    """2 % random loss holds CUBIC to about 1.22/sqrt(0.02) = 8.6 segments a round trip (the
    Reno-friendly region at this BDP of 33 segments), far below the link: no queue stands, the
    rate is only a lower bound, open above, and under the link's 20 Mbit/s (+5 %, as above)."""
    fit = _fit(LOSSY)
    # a standing queue must exceed four segment times at ~4.5 Mbit/s (10 ms): the delayed ACK and
    # the sender's own bursts lift the smoothed RTT a few ms above the ping's without one
    assert fit.rate.hi is None
    assert fit.rate.value <= 1.05 * 20e6
    assert "lower bound" in fit.rate.evidence


def test_lossy_link_loss_and_rtt_from_the_ping():
    """The ping crosses the lossy data direction once per probe: 500 probes at 2 % lose ~10, and
    the Wilson 95 % interval of what they lost holds the link's 2 %; the base RTT is 20 ms (1 ms,
    as above)."""
    fit = _fit(LOSSY)
    assert fit.loss.rate.lo <= 0.02 <= fit.loss.rate.hi
    assert fit.loss.model == "bernoulli"
    assert fit.rtt.value == pytest.approx(0.020, abs=1e-3)
    # the data path's cross-check counts the same random loss (and little else: no overflow)
    assert "retransmissions of about" in fit.loss.evidence


def test_scenario_of_the_fit(tmp_path):
    """The iperf3 fit writes the same scenario as a capture's (its figures to 4 digits)."""
    fit = _fit(CLEAN)
    text = scenario_toml(fit, "iperf3.json")
    assert f'rate = "{fit.rate.value / 1e6:.4g}Mbit"' in text
    assert f'rtt = "{fit.rtt.value * 1e3:.4g}ms"' in text


def test_is_json_tells_iperf3_from_a_capture(tmp_path):
    assert is_json(DATA / f"{CLEAN}.json")
    pcap = tmp_path / "x.pcap"
    pcap.write_bytes(b"\xd4\xc3\xb2\xa1" + b"\0" * 20)
    assert not is_json(pcap)


def _error_line(args) -> str:
    r = runner.invoke(app, ["recommend", *map(str, args), "--budget", "5s"])
    assert r.exit_code == 2, r.output
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), r.output
    return lines[0]


def test_bad_inputs_are_one_line_errors(tmp_path):
    ping = DATA / f"{CLEAN}.ping.txt"
    assert "iperf3 reported an error: unable to connect to server: Connection refused" in _error_line(
        ["--from", DATA / "error_connection_refused.json", "--ping", ping]
    )
    other = tmp_path / "other.json"
    other.write_text('{"name": "not iperf3"}')
    assert "not iperf3's output" in _error_line(["--from", other, "--ping", ping])
    broken = tmp_path / "broken.json"
    broken.write_text("{ cut off")
    assert "not valid JSON" in _error_line(["--from", broken, "--ping", ping])
    line = _error_line(["--from", DATA / f"{CLEAN}.json"])
    assert "--ping" in line and "is iperf3 JSON" in line


def _variant(tmp_path, name: str, change) -> str:
    doc = json.loads((DATA / f"{CLEAN}.json").read_text())
    change(doc)
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(doc))
    return str(path)


def test_tests_iperf3_cannot_fit_are_refused(tmp_path):
    """Real output edited into what iperf3 writes for -u, -R and -i 0."""
    udp = _variant(tmp_path, "udp", lambda d: d["start"]["test_start"].update(protocol="UDP"))
    rev = _variant(tmp_path, "rev", lambda d: d["start"]["test_start"].update(reverse=1))
    nointervals = _variant(tmp_path, "i0", lambda d: d.update(intervals=[]))
    for path, words in ((udp, "a UDP test"), (rev, "reverse (-R)"), (nointervals, "no per-interval reports")):
        with pytest.raises(FitError, match=words.replace("(", r"\(").replace(")", r"\)")):
            read_iperf3(path)


def test_too_few_intervals(tmp_path):
    short = _variant(tmp_path, "short", lambda d: d.update(intervals=d["intervals"][:3]))
    with pytest.raises(FitError, match="usable intervals"):
        fit_iperf3(read_iperf3(short), parse_ping_file(DATA / f"{CLEAN}.ping.txt"))


def test_recommend_from_iperf3_json(tmp_path):
    """recommend --from iperf3.json --ping ping.txt recommends over the fitted 20 Mbit/s, 40 ms
    link, its neighbourhood from the fit's intervals."""
    args = ["recommend", "--from", str(DATA / f"{CLEAN}.json"), "--ping", str(DATA / f"{CLEAN}.ping.txt")]
    r = runner.invoke(app, args + ["--budget", "5s", "--cc", "cubic,reno", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output[r.output.index("{") :])
    assert doc["link"]["rate_bps"] == pytest.approx(20e6, rel=0.05)
    assert doc["link"]["rtt_ms"] == pytest.approx(40, abs=1)
    assert any(f"intervals of the fit of {CLEAN}.json" in n for n in doc["notes"])
    assert {p["source"] for p in doc["neighbourhood"] if p["axis"] == "rate"} == {"fit interval"}
    assert doc["ping"]["base_rtt_ms"] == pytest.approx(40, abs=1)


def test_fit_command_reads_iperf3_json(tmp_path):
    """ccbench fit iperf3.json --ping ping.txt prints the table and writes the scenario; without
    the ping, or with --check (a replay needs a capture), one line says what is missing."""
    out = tmp_path / "link.toml"
    j, ping = DATA / f"{CLEAN}.json", DATA / f"{CLEAN}.ping.txt"
    r = runner.invoke(app, ["fit", str(j), "--ping", str(ping), "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "rate" in r.output and "buffer" in r.output and 'name = "fitted"' in out.read_text()
    for args, words in (([j], "give --ping FILE"), ([j, "--ping", ping, "--check"], "--check need a capture")):
        r = runner.invoke(app, ["fit", *map(str, args)])
        lines = [ln for ln in r.output.splitlines() if ln.strip()]
        assert r.exit_code == 2 and len(lines) == 1 and words in lines[0], r.output
