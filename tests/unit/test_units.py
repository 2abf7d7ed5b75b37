import math

import pytest

from ccbench.units import (
    BufferSpec,
    UnitError,
    format_rate,
    format_time,
    parse_buffer,
    parse_percent,
    parse_rate,
    parse_size,
    parse_start,
    parse_time,
    parse_time_ns,
)


@pytest.mark.parametrize(
    "text, bps",
    [
        ("50Mbit", 50_000_000),
        ("50Mbps", 50_000_000),
        ("50mbit", 50_000_000),
        ("50M", 50_000_000),
        ("50Mbit/s", 50_000_000),
        ("1Gbit", 10**9),
        ("1G", 10**9),
        ("1Gbps", 10**9),
        ("500kbit", 500_000),
        ("500Kbit", 500_000),
        ("500kbps", 500_000),
        ("500k", 500_000),
        ("1.5Mbit", 1_500_000),
        ("100bit", 100),
        ("100bps", 100),
        ("2.5e3kbit", 2_500_000),
        (" 10 Mbit ", 10_000_000),
        ("0bit", 0),
        (0, 0),
    ],
)
def test_rates(text, bps):
    assert parse_rate(text) == bps


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("50", "no unit"),
        (50, "no unit"),
        ("-5Mbit", "negative"),
        ("abc", "does not parse"),
        ("", "empty"),
        ("nanMbit", "does not parse"),
        ("50MB/s", "byte rates"),
        ("50MBps", "byte rates"),
        ("50Xbit", "unknown unit"),
        ("50 furlongs", "unknown unit"),
        (float("nan"), "finite"),
        (True, "not a value"),
        (None, "not a value"),
        ("inf", "does not parse"),
    ],
)
def test_rate_errors(text, fragment):
    with pytest.raises(UnitError) as e:
        parse_rate(text)
    assert fragment in e.value.problem
    assert "expected" in str(e.value) and "Mbit" in e.value.expected


@pytest.mark.parametrize(
    "text, ns",
    [
        ("30s", 30 * 10**9),
        ("50ms", 50 * 10**6),
        ("100us", 100_000),
        ("100µs", 100_000),
        ("250ns", 250),
        ("0.1s", 100_000_000),
        ("1.5ms", 1_500_000),
        (30, 30 * 10**9),
        (0.05, 50_000_000),
        ("0", 0),
        ("0s", 0),
        ("2min", 120 * 10**9),
        ("1.5min", 90 * 10**9),
        ("1h", 3600 * 10**9),
        ("0.25h", 900 * 10**9),
        ("1e-9min", 60),
    ],
)
def test_times(text, ns):
    assert parse_time_ns(text) == ns


def test_time_seconds_exact_to_the_nanosecond():
    for text in ("50ms", "0.1s", "12.345678901s", "1us"):
        s = parse_time(text)
        assert round(s * 1e9) == parse_time_ns(text)


@pytest.mark.parametrize(
    "text", ["1m", "5mins", "-1s", "ms", "1hr", "2H", "10 seconds", "s5", "1e-12min", float("inf")]
)
def test_time_errors(text):
    with pytest.raises(UnitError) as e:
        parse_time(text)
    assert "30s" in e.value.expected


def test_m_alone_is_refused_with_a_hint():
    with pytest.raises(UnitError, match="minutes or milliseconds"):
        parse_time_ns("1m")


@pytest.mark.parametrize(
    "text, n",
    [
        ("256KB", 256_000),
        ("256kB", 256_000),
        ("256KiB", 262_144),
        ("1MB", 1_000_000),
        ("1MiB", 1_048_576),
        ("1GB", 10**9),
        ("1GiB", 2**30),
        ("1500B", 1500),
        (1500, 1500),
        ("1500", 1500),
        ("1.5KB", 1500),
        ("32MB", 32_000_000),
    ],
)
def test_sizes(text, n):
    assert parse_size(text) == n


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("10kb", "case-sensitive"),
        ("10Kb", "case-sensitive"),
        ("1.5B", "whole number"),
        ("-1KB", "negative"),
        ("10 bytes", "unknown unit"),
        ("KB", "does not parse"),
    ],
)
def test_size_errors(text, fragment):
    with pytest.raises(UnitError) as e:
        parse_size(text)
    assert fragment in e.value.problem


@pytest.mark.parametrize(
    "text, frac",
    [
        ("0.1%", 0.001),
        ("1%", 0.01),
        ("5%", 0.05),
        ("100%", 1.0),
        ("0%", 0.0),
        (0, 0.0),
        ("0", 0.0),
        ("0.01%", 0.0001),
        ("50 %", 0.5),
    ],
)
def test_percentages(text, frac):
    assert parse_percent(text) == frac


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("120%", "over 100%"),
        ("100.5%", "over 100%"),
        ("-1%", "negative"),
        (0.01, "no '%' sign"),
        ("1", "no '%' sign"),
        ("1 percent", "unknown unit"),
        ("%", "does not parse"),
    ],
)
def test_percentage_errors(text, fragment):
    with pytest.raises(UnitError) as e:
        parse_percent(text)
    assert fragment in e.value.problem
    assert "0-100%" in e.value.expected


@pytest.mark.parametrize(
    "text, spec",
    [
        ("1bdp", BufferSpec("bdp", 1.0)),
        ("0.25bdp", BufferSpec("bdp", 0.25)),
        ("4BDP", BufferSpec("bdp", 4.0)),
        ("100pkt", BufferSpec("packets", 100)),
        ("100pkts", BufferSpec("packets", 100)),
        ("100packets", BufferSpec("packets", 100)),
        ("256KB", BufferSpec("bytes", 256_000)),
        ("256KiB", BufferSpec("bytes", 262_144)),
        (3000, BufferSpec("bytes", 3000)),
    ],
)
def test_buffers(text, spec):
    assert parse_buffer(text) == spec


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("abc", "does not parse"),
        ("0bdp", "not positive"),
        ("0pkt", "holds no packet"),
        ("1.5pkt", "whole number"),
        ("100", "no unit"),
        ("-1bdp", "negative"),
        ("1kbdp", "unknown unit"),
    ],
)
def test_buffer_errors(text, fragment):
    with pytest.raises(UnitError) as e:
        parse_buffer(text)
    assert fragment in e.value.problem
    assert "bdp" in e.value.expected


@pytest.mark.parametrize(
    "text, pair",
    [("0s", (0, 0)), ("2s", (2 * 10**9, 0)), ("0s+1s", (0, 10**9)), ("1s+500ms", (10**9, 5 * 10**8)), (0, (0, 0))],
)
def test_start(text, pair):
    assert parse_start(text) == pair


@pytest.mark.parametrize("text", ["0s+soon", "0s+", "later", "0s+1s+2s", "-1s"])
def test_start_errors(text):
    with pytest.raises(UnitError) as e:
        parse_start(text)
    assert "0s+1s" in e.value.expected


def test_format_helpers():
    assert format_rate(50_000_000) == "50Mbit"
    assert format_rate(1.5e9) == "1.5Gbit"
    assert format_time(0.05) == "50ms"
    assert format_time(30) == "30s"
    assert math.isclose(parse_rate(format_rate(123_000)), 123_000)
    assert format_rate(2e12) == "2Tbit" and parse_rate(format_rate(2e12)) == 2 * 10**12


# ---- numbers far out of any range: a UnitError, never InvalidOperation/Overflow ---------------

HUGE = [
    "1e41s",
    "1e999999999s",
    "1e" + "9" * 5000 + "s",
    "9" * 5000 + "s",
    1e300,
    10**5000,
    "1e50bit",
    "1e60B",
    "1e45pkt",
    "1e41bdp",
    "0s+1e50s",
    "1e42%",
]


@pytest.mark.parametrize("value", HUGE, ids=[str(i) for i in range(len(HUGE))])
def test_huge_numbers_are_refused_as_too_large(value):
    from ccbench.units import TooLarge

    too_large = 0
    for parse in (parse_time_ns, parse_rate, parse_size, parse_buffer, parse_start, parse_percent):
        try:
            parse(value)
        except TooLarge as e:
            assert "too large" in e.problem and len(e.problem) < 120
            too_large += 1
        except UnitError:
            pass  # the unit does not fit this parser: refused before the size matters
        else:
            pytest.fail(f"{parse.__name__} accepted {str(value)[:40]}")
    assert too_large >= 1  # at least the parser the unit belongs to says why


@pytest.mark.parametrize("value", ["1e-999999999s", "1e-41s", 1e-300, "0." + "0" * 50 + "1s"])
def test_vanishing_numbers_are_refused(value):
    with pytest.raises(UnitError) as e:
        parse_time_ns(value)
    assert "too small" in e.value.problem or "1 ns resolution" in e.value.problem


def test_values_up_to_1e40_stay_exact_integers():
    # more digits than Decimal's 28-digit context: quantize() raised InvalidOperation here
    assert parse_rate("1e30bit") == 10**30
    assert parse_time_ns("1e20s") == 10**29
    assert parse_size("1e40B") == 10**40
    assert parse_time_ns("0e999999999999s") == 0


def test_quote_is_short_and_never_fails():
    from ccbench.units import SHOW_CHARS, quote

    assert quote("50ms") == "'50ms'" and quote(5) == "5"
    assert len(quote("x" * 10_000)) == SHOW_CHARS and quote("x" * 10_000).endswith("…")
    assert "digits" in quote(10**5000)  # str() of it raises ValueError
    with pytest.raises(UnitError) as e:
        parse_time_ns("5" + "x" * 1000)
    assert len(str(e.value)) < 200
