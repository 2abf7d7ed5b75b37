"""Scenario validation (ccbench.scenario): bad input is refused before anything runs, with one
line per problem naming the source (the file, ``<dict>`` or the ``--set`` override), the key and
what is accepted, and never another exception type, a traceback or a hang.

In order: the files of tests/bad_scenarios/ (each states the key and problem it expects in its
first lines), several problems at once, overrides, backends; values out of range; what one run
may cost; nonsense that parses (a flow starting after the run ends, jitter larger than the
one-way delay); the command line; then hypothesis tests that generate hostile scenarios (huge /
negative / NaN / infinite numbers, odd unit strings, wrong types, deep nesting, unicode, empty
tables) through every input path: a TOML-shaped dict, ``--set`` overrides and the file text. A
scenario that validates is run on the simulator within a time bound.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import unicodedata

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import ccbench
from ccbench.scenario import limits
from ccbench.scenario.errors import ScenarioError
from ccbench.scenario.model import Scenario, load_scenario
from conftest import BAD_DIR, MINIMAL_TOML, minimal_dict

U64_MAX = 2**64 - 1
#: A valid run the fuzz tests mutate: tiny, so a mutation that stays valid runs in milliseconds.
TINY = {
    "name": "fuzz",
    "duration": "50ms",
    "start_jitter": "0s",
    "sample_interval": "10ms",
    "bottleneck": {"rate": "10Mbit", "rtt": "4ms"},
    "flows": [{"cc": "cubic"}],
}
TINY_TOML = """name = "fuzz"
duration = "50ms"
start_jitter = "0s"
sample_interval = "10ms"
[bottleneck]
rate = "10Mbit"
rtt = "4ms"
loss = "0.1%"
[[flows]]
cc = "cubic"
count = 2
[probe]
ping = "5ms"
"""
#: A valid scenario is run only when it stays this cheap (a mutation such as duration = 3000
#: is valid but not what this test is for); the rest are checked for what Rust would receive.
RUN_MAX_PACKETS = 200_000
RUN_MAX_FLOWS = 50
RUN_MAX_DURATION_S = 5.0
RUN_TIME_BOUND_S = 20.0


def assert_clear_error(err: ScenarioError, source: str) -> None:
    """One line per problem, each naming the source and a key (or a line of the file), no
    line breaks or control characters smuggled in from the input."""
    text = str(err)
    assert "Traceback" not in text
    lines = text.split("\n")
    assert len(lines) == len(err.problems) >= 1, text
    for line, (key, problem, _expected) in zip(lines, err.problems):
        assert key, f"no key named: {line}"
        assert line.startswith(f"{source}: "), line
        assert len(line.splitlines()) == 1, repr(line)
        assert not any(unicodedata.category(c) in ("Cc", "Zl", "Zp") for c in line), repr(line)
        assert problem


def error_of(fn) -> ScenarioError:
    with pytest.raises(ScenarioError) as e:
        fn()
    return e.value


# --------------------------------------------------------------------------------------------
# the files of bad_scenarios/, several problems, overrides and backends

BAD_FILES = sorted(BAD_DIR.glob("*.toml"))


def expectations(path):
    text = path.read_text()
    key = re.search(r"^# expect-key: (.+)$", text, re.M).group(1).strip()
    problem = re.search(r"^# expect-problem: (.+)$", text, re.M).group(1).strip()
    return key, problem


def test_there_are_at_least_ten_bad_files():
    assert len(BAD_FILES) >= 10


@pytest.mark.parametrize("path", BAD_FILES, ids=[p.stem for p in BAD_FILES])
def test_bad_scenario_is_refused(path):
    key, problem = expectations(path)
    with pytest.raises(ScenarioError) as e:
        load_scenario(path)
    err = e.value
    assert err.source == str(path)
    assert err.key == key, str(err)
    assert problem in err.problem, str(err)
    first = str(err).splitlines()[0]
    assert first.startswith(f"{path}: {key}: "), first
    # every line names the file, a key and what was expected
    for line in str(err).splitlines():
        assert line.startswith(str(path) + ": ")
        assert "(expected " in line


def test_several_problems_are_reported_one_per_line(write_toml):
    p = write_toml('[bottleneck]\nrate = "-1Mbit"\nrtt = "5xs"\nloss = "200%"\n[[flows]]\ncc = "nope"\n')
    with pytest.raises(ScenarioError) as e:
        load_scenario(p)
    keys = [k for k, _, _ in e.value.problems]
    assert set(keys) == {"bottleneck.rate", "bottleneck.rtt", "bottleneck.loss", "flows.0.cc"}
    assert len(str(e.value).splitlines()) == 4


def test_bad_override_is_refused_with_the_key(minimal_toml):
    with pytest.raises(ScenarioError) as e:
        load_scenario(minimal_toml, ["bottleneck.loss=150%"])
    assert e.value.key == "bottleneck.loss" and "over 100%" in e.value.problem
    with pytest.raises(ScenarioError) as e:
        load_scenario(minimal_toml, ["flows.5.cc=bbr"])
    assert e.value.key == "flows.5"
    with pytest.raises(ScenarioError) as e:
        load_scenario(minimal_toml, ["bottleneck.rate.x=1"])
    assert e.value.key == "bottleneck.rate.x"
    with pytest.raises(ScenarioError) as e:
        load_scenario(minimal_toml, ["no-equals-sign"])
    assert e.value.key == "--set"
    with pytest.raises(ScenarioError) as e:
        load_scenario(minimal_toml, ["bottleneck.speed=1Gbit"])
    assert e.value.key == "bottleneck.speed" and "unknown key" in e.value.problem


def test_missing_file():
    with pytest.raises(ScenarioError) as e:
        load_scenario("/nonexistent/x.toml")
    assert "no such file" in str(e.value)


def test_sim_backend_refuses_what_it_cannot_run(minimal_toml):
    """hybla is a valid algorithm name (ns-3 runs it) that the simulator does not model: the
    backend check refuses it naming the flow's key, before anything runs."""
    from ccbench.backends import check

    sc = load_scenario(minimal_toml, ["flows.0.cc=hybla"])  # a valid name…
    with pytest.raises(ScenarioError) as e:
        check(sc, "sim")  # …that this simulator does not model
    assert e.value.key == "flows.0.cc" and "sim backend" in e.value.problem and "hybla" in e.value.problem


def test_unknown_backend(minimal_toml):
    import ccbench

    with pytest.raises(ScenarioError) as e:
        ccbench.run(minimal_toml, backend="quantum")
    assert e.value.key == "backend"


def test_error_is_picklable():
    import pickle

    err = ScenarioError("f.toml", "bottleneck.rate", "bad", "a rate", [("bottleneck.rate", "bad", "a rate")])
    back = pickle.loads(pickle.dumps(err))
    assert str(back) == str(err) and back.key == "bottleneck.rate"


@pytest.mark.parametrize("name", ["negative_rate", "toml_syntax_error", "unknown_cc"])
def test_cli_bad_input_exit_code_2_one_line_no_traceback(name):
    path = BAD_DIR / f"{name}.toml"
    key, _ = expectations(path)
    p = subprocess.run(
        [sys.executable, "-m", "ccbench.cli", "run", str(path)], capture_output=True, text=True, timeout=120
    )
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr
    assert p.stdout == ""
    lines = [line for line in p.stderr.splitlines() if not line.startswith("warning:")]
    assert len(lines) == 1, p.stderr
    assert str(path) in lines[0] and key in lines[0]


# --------------------------------------------------------------------------------------------
# large values: each a one-line error naming the key and the accepted range

LARGE = [
    # (override, key, the accepted maximum as the error states it)
    ("duration=1e20s", "duration", "86400s"),
    ("duration=1e11s", "duration", "86400s"),
    ("duration=1e9s", "duration", "86400s"),
    ("duration=1e300", "duration", "86400s"),  # a TOML float
    ("duration=" + "9" * 5000, "duration", "86400s"),  # more digits than int() reads
    ('duration="1e999999999s"', "duration", "86400s"),
    ("bottleneck.rtt=1e20s", "bottleneck.rtt", "86400s"),
    ("bottleneck.jitter=1e20s", "bottleneck.jitter", "86400s"),
    ("flows.0.start=1e20s", "flows.0.start", "86400s"),
    ('flows.0.start="0s+1e20s"', "flows.0.start", "86400s"),
    ("access.delay=1e20s", "access.delay", "86400s"),
    ("probe.ping=1e20s", "probe.ping", "86400s"),
    ("start_jitter=1e20s", "start_jitter", "86400s"),
    ("sample_interval=1e20s", "sample_interval", "86400s"),
    ("bottleneck.rate=1e30bit", "bottleneck.rate", "1Tbit"),
    ("bottleneck.rate=1e20bit", "bottleneck.rate", "1Tbit"),
    ("access.rate=1e30bit", "access.rate", "1Tbit"),
    ("bottleneck.buffer=1e19pkt", "bottleneck.buffer", "10000000pkt"),
    ("bottleneck.buffer=1e19B", "bottleneck.buffer", "15GB"),
    ("bottleneck.buffer=1e30bdp", "bottleneck.buffer", "15GB"),
    ("flows.0.size=1e20B", "flows.0.size", "1e15B"),
    ("flows.0.rwnd=1e20B", "flows.0.rwnd", "1GiB"),
    # the schema's lower bounds that keep a run finite
    ("sample_interval=1ns", "sample_interval", "1ms"),
    ("probe.ping=1ns", "probe.ping", "1ms"),
]


@pytest.mark.parametrize("override, key, limit", LARGE, ids=[c[0][:40] for c in LARGE])
def test_large_value_is_refused_naming_key_and_range(minimal_toml, override, key, limit):
    err = error_of(lambda: load_scenario(minimal_toml, [override]))
    assert_clear_error(err, str(minimal_toml))
    assert err.key == key, str(err)
    assert len(str(err).splitlines()) == 1, str(err)
    assert limit in str(err), str(err)
    assert "(expected " in str(err) and (" to " in err.expected or "at most" in err.expected), str(err)


@pytest.mark.parametrize("form", ["header", "dotted", "inline", "array"])
def test_500_levels_of_nesting_are_refused_without_recursion_error(write_toml, form):
    n = 500
    extra = {
        "header": "[sweep." + ".".join(["a"] * n) + "]\nx = 1\n",
        "dotted": "[sweep]\n" + ".".join(["a"] * n) + " = 1\n",
        "inline": "[sweep]\nz = " + "{a = " * n + "1" + "}" * n + "\n",
        "array": "[sweep]\nz = " + "[" * n + "1" + "]" * n + "\n",
    }[form]
    path = write_toml(MINIMAL_TOML + extra)
    err = error_of(lambda: load_scenario(path))
    assert_clear_error(err, str(path))
    assert err.key.startswith(("sweep.", "line ")), str(err)
    assert str(limits.MAX_NESTING) in str(err)


def test_deep_nesting_through_overrides_and_dicts(minimal_toml):
    deep: object = 1
    for _ in range(2000):
        deep = {"a": deep}
    err = error_of(lambda: Scenario.from_dict(minimal_dict(sweep=deep)))
    assert_clear_error(err, "<dict>")
    assert err.key.startswith("sweep.a")
    err = error_of(lambda: load_scenario(minimal_toml, ["sweep.x=" + "{a=" * 600 + "1" + "}" * 600]))
    assert err.key == "sweep.x", str(err)
    err = error_of(lambda: load_scenario(minimal_toml, ["sweep." + ".".join(["a"] * 600) + "=1"]))
    assert err.key.startswith("sweep.a.a")


def test_rust_accepts_every_limit_at_its_maximum():
    """What the schema accepts at its edges, the simulator takes (no "invalid simulator
    scenario JSON"): the largest rate, window, size and buffer; the longest times."""
    fast = Scenario.from_dict(
        {
            "duration": "10ms",
            "start_jitter": "0s",
            "sample_interval": "1ms",
            "bottleneck": {"rate": "1Tbit", "rtt": "1ms", "buffer": f"{limits.MAX_BUFFER_PACKETS}pkt"},
            "flows": [{"cc": "reno", "rwnd": f"{limits.MAX_RWND_BYTES}B", "size": f"{limits.MAX_SIZE_BYTES}B"}],
            "probe": {"ping": "1ms"},
        }
    )
    long = Scenario.from_dict(
        {
            "duration": f"{limits.MAX_TIME_NS}ns",
            "start_jitter": f"{limits.MAX_TIME_NS - 1}ns",
            "sample_interval": 0,
            "bottleneck": {"rate": "1kbit", "rtt": "36000s", "jitter": "18000s"},
            "access": {"delay": "1000s"},
            "flows": [{"cc": "cubic", "start": "0s"}],
            "probe": {"ping": "86400s"},
        }
    )
    for sc in (fast, long):
        cfg = sc.sim_config()
        ints = [v for v in _leaves(cfg) if isinstance(v, int) and not isinstance(v, bool)]
        assert all(0 <= v <= U64_MAX for v in ints)
        t = time.perf_counter()
        result = ccbench.run(sc, raise_on_error=False)
        assert result.ok, result.error
        assert time.perf_counter() - t < RUN_TIME_BOUND_S


def _leaves(node):
    if isinstance(node, dict):
        for v in node.values():
            yield from _leaves(v)
    elif isinstance(node, list):
        for v in node:
            yield from _leaves(v)
    else:
        yield node


# --------------------------------------------------------------------------------------------
# what one run may cost, across keys


@pytest.mark.parametrize(
    "top, key, fragment",
    [
        (
            {"duration": "60s", "sample_interval": "1ms", "flows": [{"cc": "cubic", "count": 200}]},
            "sample_interval",
            "series rows",
        ),
        ({"duration": "86400s", "probe": {"ping": "1ms"}, "start_jitter": "0s"}, "probe.ping", "pings"),
        ({"duration": "3600s", "bottleneck": {"rate": "10Gbit", "rtt": "20ms"}}, "duration", "packets"),
        ({"flows": [{"cc": "cubic", "count": 100_000}, {"cc": "bbr", "count": 1}]}, "flows", "connections"),
        (
            {"duration": "10s", "bottleneck": {"rate": "1Tbit", "rtt": "1s", "buffer": "5bdp"}},
            "bottleneck.buffer",
            "15GB",
        ),
        (
            {
                "duration": "10s",
                "bottleneck": {"rate": "1Tbit", "rtt": "1s", "buffer": "1GB"},
                "flows": [{"cc": "cubic", "count": 100, "rwnd": "1GiB"}],
            },
            "flows.0.rwnd",
            "in flight",
        ),
    ],
)
def test_cost_limits_across_keys(top, key, fragment):
    d = minimal_dict(**top)
    err = error_of(lambda: Scenario.from_dict(d))
    assert_clear_error(err, "<dict>")
    assert err.key == key, str(err)
    assert fragment in str(err) and "(expected " in str(err)


def test_cost_limits_leave_ordinary_runs_alone():
    """The studies' largest runs: 20 flows for 200 s at 1 Gbit/s with 100 ms samples, 100 000
    flows for 1 s (the scale benchmark), 30 s pinged every 10 ms."""
    Scenario.from_dict(
        minimal_dict(
            duration="200s",
            bottleneck={"rate": "1Gbit", "rtt": "200us"},
            flows=[{"cc": "cubic", "count": 10, "rwnd": "32MB"}, {"cc": "bbr", "count": 10, "rwnd": "32MB"}],
        )
    )
    Scenario.from_dict(minimal_dict(duration="1s", flows=[{"cc": "cubic", "count": 100_000}]))
    Scenario.from_dict(minimal_dict(duration="30s", probe={"ping": "10ms"}))


# --------------------------------------------------------------------------------------------
# nonsense that parses: starts after the end of the run, runs too short for two RTTs, jitter
# beyond the one-way delay

NONSENSE = [
    # (top-level keys of a 2 s / 20 ms run, the key named, a fragment of the problem)
    ({"flows": [{"cc": "cubic", "start": "2s"}], "start_jitter": "0s"}, "flows.0.start", "end of the run"),
    ({"flows": [{"cc": "cubic", "start": "5s"}]}, "flows.0.start", "end of the run"),
    (
        {"flows": [{"cc": "cubic"}, {"cc": "bbr", "count": 3, "start": "0s+1s"}], "start_jitter": "0s"},
        "flows.1.start",
        "connection 2 of the group starts at 2s",
    ),
    ({"flows": [{"cc": "cubic", "start": "1.995s"}], "start_jitter": "10ms"}, "flows.0.start", "start_jitter"),
    ({"duration": "1ns"}, "duration", "below the minimum 10ms"),
    ({"duration": "5ms"}, "duration", "below the minimum 10ms"),
    ({"duration": "40ms", "start_jitter": "0s"}, "duration", "two base RTTs"),
    ({"duration": "100ms", "start_jitter": "0s", "access": {"delay": "10ms"}}, "duration", "two base RTTs (120ms)"),
    ({"bottleneck": {"rate": "10Mbit", "rtt": "20ms", "jitter": "11ms"}}, "bottleneck.jitter", "at most 10ms"),
    (
        {"bottleneck": {"rate": "10Mbit", "rtt": "20ms", "jitter": "20ms", "jitter_dist": "uniform", "impair": "ack"}},
        "bottleneck.jitter",
        "one-way delay",
    ),
]


@pytest.mark.parametrize("top, key, fragment", NONSENSE, ids=[f"{c[1]}-{i}" for i, c in enumerate(NONSENSE)])
def test_nonsense_is_refused_naming_the_key(top, key, fragment):
    err = error_of(lambda: Scenario.from_dict(minimal_dict(**top)))
    assert_clear_error(err, "<dict>")
    assert err.key == key, str(err)
    assert fragment in str(err), str(err)


@pytest.mark.parametrize(
    "top",
    [
        {"flows": [{"cc": "cubic", "start": "1.99s"}], "start_jitter": "10ms"},  # the last start that can be
        {"flows": [{"cc": "cubic", "count": 2, "start": "0s+1.9s"}], "start_jitter": "0s"},
        {"duration": "41ms", "start_jitter": "0s"},  # just over two base RTTs
        {"bottleneck": {"rate": "10Mbit", "rtt": "20ms", "jitter": "10ms"}},  # exactly the one-way delay
        {"bottleneck": {"rate": "10Mbit", "rtt": "20ms", "jitter": "15ms", "jitter_dist": "normal"}},
    ],
)
def test_the_edges_of_the_nonsense_rules_are_accepted(top):
    Scenario.from_dict(minimal_dict(**top))


def test_a_utf8_bom_is_accepted(write_toml):
    plain = load_scenario(write_toml(MINIMAL_TOML, "plain.toml"))
    path = write_toml("", "bom.toml")
    path.write_bytes(b"\xef\xbb\xbf" + MINIMAL_TOML.encode())
    with_bom = load_scenario(path)
    assert with_bom.scenario_hash() != "" and with_bom.normalised() == plain.normalised()


# --------------------------------------------------------------------------------------------
# the command line: exit 2, one line on stderr, no traceback

CLI_CASES = [
    (["--set", "duration=1e20s"], "duration"),
    (["--set", "bottleneck.buffer=1e19pkt"], "bottleneck.buffer"),
    (["--set", "sample_interval=1ns"], "sample_interval"),
    (["--set", "sweep.x=" + "[" * 800 + "]" * 800], "sweep.x"),
    (["--set", "flows.0.start=9s"], "flows.0.start"),
    (["--set", "bottleneck.jitter=30ms"], "bottleneck.jitter"),
]


@pytest.mark.parametrize("args, key", CLI_CASES, ids=[c[1] for c in CLI_CASES])
def test_cli_refuses_hostile_overrides_in_one_line(minimal_toml, args, key):
    p = subprocess.run(
        [sys.executable, "-m", "ccbench.cli", "run", str(minimal_toml), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr and p.stdout == ""
    lines = [line for line in p.stderr.splitlines() if not line.startswith("warning:")]
    assert len(lines) == 1, p.stderr
    assert f"{minimal_toml}: {key}" in lines[0], lines[0]


def test_cli_refuses_a_deeply_nested_file_and_runs_a_bom_file(write_toml):
    deep = write_toml(MINIMAL_TOML + "[sweep]\nz = " + "{a = " * 500 + "1" + "}" * 500 + "\n", "deep.toml")
    p = subprocess.run(
        [sys.executable, "-m", "ccbench.cli", "run", str(deep)], capture_output=True, text=True, timeout=120
    )
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert len([x for x in p.stderr.splitlines() if not x.startswith("warning:")]) == 1, p.stderr
    bom = write_toml("", "bom.toml")
    bom.write_bytes(b"\xef\xbb\xbf" + MINIMAL_TOML.replace('"2s"', '"200ms"').encode())
    p = subprocess.run(
        [sys.executable, "-m", "ccbench.cli", "run", str(bom), "--json"], capture_output=True, text=True, timeout=120
    )
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)


# --------------------------------------------------------------------------------------------
# fuzz: generated hostile scenarios through every input path

KEYS = [
    "name",
    "duration",
    "seed",
    "sample_interval",
    "start_jitter",
    "bottleneck",
    "bottleneck.rate",
    "bottleneck.rtt",
    "bottleneck.jitter",
    "bottleneck.jitter_dist",
    "bottleneck.reorder",
    "bottleneck.loss",
    "bottleneck.loss.p",
    "bottleneck.impair",
    "bottleneck.buffer",
    "bottleneck.aqm",
    "bottleneck.trace",
    "access",
    "access.rate",
    "access.delay",
    "flows",
    "flows.0",
    "flows.0.cc",
    "flows.0.count",
    "flows.0.start",
    "flows.0.rwnd",
    "flows.0.size",
    "flows.0.pacing",
    "flows.0.timestamps",
    "flows.1.cc",
    "flows.1.count",
    "flows.1.start",
    "probe",
    "probe.ping",
    "sweep",
    "sweep.repeat",
]
UNITS = [
    "",
    "s",
    "ms",
    "us",
    "µs",
    "ns",
    "bit",
    "Mbit",
    "Gbit",
    "Tbit",
    "bps",
    "M",
    "B",
    "KB",
    "KiB",
    "GB",
    "%",
    "pkt",
    "bdp",
    "MB/s",
    "xyz",
    "ſ",
    "e",
    " ",
    "+1s",
    "s+1ms",
    "ms+",
    "\n",
    "\x00",
    "\u2028",
    "🙂",
]
NUMBER_TEXT = st.one_of(
    st.integers(-(10**30), 10**30).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(
        [
            "1e20",
            "1e999999999",
            "1e-999999999",
            "-0",
            "0x10",
            "nan",
            "inf",
            "1_000",
            ".",
            "1..2",
            "9" * 5000,
            "0." + "0" * 3000 + "1",
            "1e" + "9" * 30,
            "5",
            "0.5",
            "20",
            "1e-3",
            "",
        ]
    ),
)
UNIT_TEXT = st.builds(lambda n, u: n + u, NUMBER_TEXT, st.sampled_from(UNITS))


def _nest(depth: int, leaf=1, kind: str = "dict"):
    node = leaf
    for _ in range(depth):
        node = {"a": node} if kind == "dict" else [node]
    return node


#: Values some key accepts, so that part of the mutated scenarios are valid and get run.
PLAUSIBLE = st.sampled_from(
    [
        0,
        1,
        2,
        3,
        True,
        False,
        "0",
        "0s",
        "1ms",
        "5ms",
        "20ms",
        "30ms",
        "1Mbit",
        "100Mbit",
        "1Gbit",
        "1%",
        "0.5bdp",
        "10pkt",
        "3000B",
        "64KiB",
        "bbr",
        "reno",
        "vegas",
        "cubic",
        "normal",
        "pareto",
        "ack",
        "both",
        "codel",
        {"model": "gilbert", "p": "1%", "r": "30%"},
        {"cc": "bbr"},
        [{"cc": "reno", "count": 2}],
    ]
)
LEAF = st.one_of(
    PLAUSIBLE,
    PLAUSIBLE,
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(),
    st.booleans(),
    st.text(max_size=20),
    UNIT_TEXT,
    st.just(""),
    st.just({}),
    st.just([]),
    st.datetimes(),
    st.none(),
    st.builds(_nest, st.integers(20, 1500), st.just(1), st.sampled_from(["dict", "list"])),
)
VALUE = st.recursive(
    LEAF,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=8,
)
KEY = st.one_of(
    st.sampled_from(KEYS),
    st.text(max_size=12),
    st.builds(lambda k, t: f"{k}.{t}", st.sampled_from(KEYS), st.text(max_size=6)),
)


def check_outcome(make, source: str) -> None:
    """``make()`` gives a valid Scenario or raises a clear ScenarioError; a valid one runs
    within the time bound when cheap, and is at least what Rust can read when not."""
    try:
        sc = make()
    except ScenarioError as err:
        assert_clear_error(err, source)
        event("refused")
        return
    cfg = sc.sim_config()
    json.dumps(cfg, allow_nan=False)
    assert all(0 <= v <= U64_MAX for v in _leaves(cfg) if isinstance(v, int) and not isinstance(v, bool))
    packets = sc.bottleneck.rate_bps * sc.duration_s / 12_000
    if packets > RUN_MAX_PACKETS or sc.n_flows > RUN_MAX_FLOWS or sc.duration_s > RUN_MAX_DURATION_S:
        event("valid, too large to run here")
        return
    t = time.perf_counter()
    try:
        result = ccbench.run(sc, raise_on_error=False)
    except ScenarioError as err:  # what the simulator backend cannot run yet (another AQM)
        assert_clear_error(err, sc.source)
        event("refused by the sim backend")
        return
    assert result.ok, result.error
    assert time.perf_counter() - t < RUN_TIME_BOUND_S
    event("ran on the simulator")


#: CCBENCH_FUZZ_EXAMPLES=5000 fuzzes deeper with fresh random examples (CI: 120, derandomised).
_DEEP = int(os.environ.get("CCBENCH_FUZZ_EXAMPLES", "0"))
FUZZ = settings(
    max_examples=_DEEP or 120,
    deadline=None,
    derandomize=not _DEEP,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)


@FUZZ
@given(st.lists(st.tuples(KEY, VALUE), min_size=1, max_size=3))
def test_fuzz_dicts(edits):
    base = Scenario.from_dict(TINY)
    check_outcome(lambda: base.with_overrides(dict(edits)), "<dict>")


@FUZZ
@given(
    st.lists(
        st.tuples(
            KEY,
            st.one_of(
                UNIT_TEXT,
                st.text(max_size=40),
                PLAUSIBLE.map(str),
                st.builds(lambda d: "{a=" * d + "1" + "}" * d, st.integers(1, 700)),
            ),
        ),
        min_size=1,
        max_size=3,
    )
)
def test_fuzz_set_overrides(tmp_path_factory, edits):
    path = tmp_path_factory.getbasetemp() / "fuzz.toml"
    if not path.exists():
        path.write_text(TINY_TOML)
    check_outcome(lambda: load_scenario(path, [f"{k}={v}" for k, v in edits]), str(path))


@FUZZ
@given(
    st.integers(0, len(TINY_TOML)),
    st.one_of(
        st.text(st.characters(blacklist_categories=("Cs",)), max_size=30),
        UNIT_TEXT,
        st.sampled_from(
            ["\ufeff", "[", "{", '"', "'''", "=", "\n[[flows]]\n", "\nduration = 1e300\n", "\n" + "[" * 900 + "\n"]
        ),
    ),
    st.booleans(),
)
def test_fuzz_file_text(tmp_path_factory, at, insert, bom):
    text = TINY_TOML[:at] + insert + TINY_TOML[at:]
    path = tmp_path_factory.getbasetemp() / "fuzz-text.toml"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())
    check_outcome(lambda: load_scenario(path), str(path))


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(KEYS), PLAUSIBLE), min_size=1, max_size=4))
def test_fuzz_plausible_edits_run_or_are_refused(edits):
    """Mostly valid edits: the share of scenarios that reach the simulator is much larger."""
    base = Scenario.from_dict(TINY)
    check_outcome(lambda: base.with_overrides(dict(edits)), "<dict>")
