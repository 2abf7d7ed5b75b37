"""ccbench.pingparse on captured-style iputils ping outputs (tests/data/ping/)."""

import pytest

from ccbench.pingparse import PingParseError, parse_ping, parse_ping_file
from conftest import PING_DIR

DATA = PING_DIR


def test_loss_from_missing_sequence_numbers():
    e = parse_ping_file(DATA / "linux_loss.txt")
    assert e.base_rtt_ms == pytest.approx(48.6)
    assert e.missing == [3, 8]
    assert e.sent == 10 and e.replies == 8
    assert e.loss == pytest.approx(0.2)
    assert e.summary_loss == pytest.approx(0.2) and e.summary_sent == 10
    assert e.summary_mdev_ms == pytest.approx(1.96)
    assert 1.0 < e.jitter_ms < 3.5  # (p95 - p5)/2 of 48.6 .. 55.0
    assert e.host == "example.net" and not e.timestamps and not e.truncated


def test_duplicates_counted_once_and_their_rtts_left_out():
    e = parse_ping_file(DATA / "linux_dup.txt")
    assert e.duplicates == 2
    assert e.replies == 6 and e.loss == 0.0 and e.missing == []
    assert e.rtt_max_ms == pytest.approx(22.2)  # the DUP! RTTs (23.7, 24.9) are not used
    assert e.base_rtt_ms == pytest.approx(20.1)


def test_D_timestamps():
    e = parse_ping_file(DATA / "linux_D_timestamps.txt")
    assert e.timestamps
    assert e.span_s == pytest.approx(1763870008.114377 - 1763870000.101234)
    assert e.missing == [4]
    assert e.loss == pytest.approx(1 / 9)
    assert e.base_rtt_ms == pytest.approx(30.0)


def test_truncated_last_line_is_dropped():
    text = (DATA / "linux_truncated.txt").read_text()
    assert not text.endswith("\n")
    e = parse_ping(text)
    assert e.truncated
    assert e.sent == 7 and e.missing == [5]  # seq 8's line was cut: not counted at all
    assert e.loss == pytest.approx(1 / 7)
    assert e.base_rtt_ms == pytest.approx(99.8)
    assert e.rtt_max_ms == pytest.approx(112)  # integer "time=101 ms" forms parse
    # a line cut inside the number must not give a wrong RTT
    e2 = parse_ping(text[: text.rindex("ti")] + "time=10")
    assert e2.truncated and e2.base_rtt_ms == pytest.approx(99.8)
    # the same text with a final newline: the reply line without a time counts as received
    e3 = parse_ping(text + "\n")
    assert not e3.truncated and e3.sent == 8 and e3.missing == [5]


def test_errors_and_no_answer_lines_count_as_sent():
    e = parse_ping_file(DATA / "linux_unreachable_D.txt")
    assert e.errors == 2
    assert e.missing == [4, 5, 6]
    assert e.loss == pytest.approx(0.3)
    assert e.timestamps
    assert e.base_rtt_ms == pytest.approx(9.81)


def test_sub_millisecond_clean():
    e = parse_ping_file(DATA / "linux_clean_sub_ms.txt")
    assert e.loss == 0.0 and e.replies == 5
    assert e.base_rtt_ms == pytest.approx(0.041)
    assert e.jitter_ms < 0.01
    assert any("rough" in n for n in e.notes)


def test_jitter_measure_on_uniform_rtts():
    import numpy as np

    rng = np.random.default_rng(3)
    rtts = 50 + rng.uniform(-8, 8, 2000)
    text = "PING h (1.2.3.4) 56(84) bytes of data.\n" + "".join(
        f"64 bytes from 1.2.3.4: icmp_seq={i + 1} ttl=60 time={r:.3f} ms\n" for i, r in enumerate(rtts)
    )
    e = parse_ping(text)
    assert e.jitter_ms == pytest.approx(0.9 * 8, rel=0.05)  # (p95-p5)/2 of uniform +-J = 0.9 J
    assert e.base_rtt_ms == pytest.approx(42, abs=0.1)


def test_sequence_wrap():
    seqs = [65533, 65534, 65535, 0, 2]
    text = "".join(f"64 bytes from 1.2.3.4: icmp_seq={s} ttl=60 time=10.{s % 10} ms\n" for s in seqs)
    e = parse_ping(text)
    assert e.sent == 6 and len(e.missing) == 1 and e.loss == pytest.approx(1 / 6)


def test_no_replies_is_an_error():
    with pytest.raises(PingParseError):
        parse_ping(
            "PING h (1.2.3.4) 56(84) bytes of data.\n\n--- h ping statistics ---\n"
            "3 packets transmitted, 0 received, 100% packet loss, time 2030ms\n"
        )
