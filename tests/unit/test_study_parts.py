"""Running some parts of a study or grid (`study run --parts`, `validate --parts`)."""

from __future__ import annotations

import pytest

from ccbench.study.run import check_backend
from ccbench.study.spec import StudyError, find_study
from ccbench.validate.plan import load_grid


def test_only_keeps_the_parts_named_in_the_study_order_with_their_published_numbers():
    s = find_study("vegas-vs-cubic")
    sub = s.only(["debloated", "streams"])
    assert [p.name for p in sub.parts] == ["streams", "debloated"]
    assert {x.part for x in sub.published} <= {"streams", "debloated"}
    assert len(s.parts) == 6  # the study itself is unchanged


def test_an_unknown_part_is_refused_naming_the_study_s_parts():
    s = find_study("vegas-vs-cubic")
    with pytest.raises(StudyError) as e:
        s.only(["streams", "shapping"])
    msg = str(e.value)
    assert "--parts" in msg and "'shapping'" in msg and "shaping" in msg.split("expected")[1]


def test_a_part_the_backend_cannot_run_names_the_option_that_runs_the_others(monkeypatch):
    """A backend that refuses access-link rates (a stand-in check): the shaping part is refused,
    and the message says how to run the rest."""
    from ccbench import backends
    from ccbench.scenario.errors import ScenarioError

    def check(sc, backend):
        if sc.access.rate_bps:
            raise ScenarioError("f.toml", "access.rate", "no access-link rate here", "no access.rate")

    monkeypatch.setattr(backends, "check", check)
    s = find_study("vegas-vs-cubic")
    scenarios = [p.scenario(True) for p in s.parts]
    with pytest.raises(StudyError) as e:
        check_backend(s, scenarios, "kernel")
    assert "part 'shaping' cannot run on the kernel backend" in str(e.value)
    assert "--parts streams,window-8mb,lowest-mcs,frame-errors,debloated runs the others" in str(e.value)
    check_backend(s.only(["streams"]), scenarios[:1], "kernel")  # the others pass


def test_validate_grid_parts():
    g = load_grid("default").only(["vegas"])
    assert [p.name for p in g.parts] == ["vegas"]
