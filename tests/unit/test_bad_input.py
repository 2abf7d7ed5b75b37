"""Every file in bad_scenarios/ is refused before anything runs, naming the file and the key.

Each file states what it expects in its first lines:
    # expect-key: bottleneck.rate
    # expect-problem: negative
"""
import re
import subprocess
import sys

import pytest

from ccbench.scenario.errors import ScenarioError
from ccbench.scenario.model import load_scenario

from conftest import BAD_DIR

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
    p = write_toml(
        '[bottleneck]\nrate = "-1Mbit"\nrtt = "5xs"\nloss = "200%"\n[[flows]]\ncc = "nope"\n'
    )
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


def test_sim_backend_refuses_what_it_cannot_run(minimal_toml, monkeypatch):
    from ccbench.backends import check
    from ccbench.backends import sim

    # the simulator runs every discipline today; a build without one must refuse it
    monkeypatch.setattr(sim, "SIM_AQMS", ("droptail",))
    sc = load_scenario(minimal_toml, ["bottleneck.aqm=codel"])  # a valid name…
    with pytest.raises(ScenarioError) as e:
        check(sc, "sim")  # …that this simulator does not implement
    assert e.value.key == "bottleneck.aqm" and "sim backend" in e.value.problem


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
