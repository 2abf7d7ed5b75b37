"""ccbench recommend: the sequential stopping rule on synthetic samples, four typical links on the
simulator (lossy, loss-free 1 BDP, deep buffer, a competing CUBIC flow), --json against its
documented schema, bad input. tests/test_recommend_links.py covers the whole input space."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ccbench.cli.app import app
from ccbench.recommend import ALPHA, JSON_SCHEMA, Link, link_from_options, neighbourhood, parse_competing, recommend, sequential_decision
from conftest import PING_DIR, ROOT

PING = PING_DIR


# ---- the stopping rule ------------------------------------------------------------------------

def sequential(draw, k=2, min_n=3, batch=2, max_n=20, alpha=ALPHA, margin=0.05):
    """Drive sequential_decision as recommend does: min_n repeats, then batches, up to max_n."""
    max_looks = 1 + -(-(max_n - min_n) // batch)
    samples = {f"c{i}": [] for i in range(k)}
    n, look = 0, 0
    while True:
        add = min_n if n == 0 else min(batch, max_n - n)
        for _ in range(add):
            for i in range(k):
                samples[f"c{i}"].append(draw(i))
        n += add
        look += 1
        d = sequential_decision(samples, look=look, max_looks=max_looks, alpha=alpha, margin=margin,
                                min_n=min_n, final=n >= max_n)
        if d.done or n >= max_n:
            return d, n


def test_large_difference_is_separated_quickly():
    rng = np.random.default_rng(1)
    for _ in range(20):   # 10 standard deviations: the first look (3 repeats) decides
        d, n = sequential(lambda i: rng.normal(10 + 10 * (i == 1), 1.0))
        assert d.outcome == "winner" and d.leader == "c1" and d.runner_up == "c0" and n == 3
        assert d.p_value < d.alpha_look
    ns = []
    for _ in range(20):   # 3 standard deviations (30 %): within a few batches
        d, n = sequential(lambda i: rng.normal(10 + 3 * (i == 1), 1.0))
        assert d.outcome == "winner" and d.leader == "c1"
        ns.append(n)
    assert max(ns) <= 11 and np.median(ns) <= 7


def test_equal_distributions_give_a_tie():
    rng = np.random.default_rng(2)
    outcomes = [sequential(lambda i: rng.normal(100, 1.0))[0].outcome for _ in range(50)]
    assert outcomes.count("tie") == 50
    d, n = sequential(lambda i: 100.0)       # deterministic repeats: exact, a tie at once
    assert d.outcome == "tie" and n == 3


@pytest.mark.parametrize("k", [2, 4])
def test_false_winner_rate_within_alpha(k):
    """200 trials of identical candidates, noisy enough that a tie cannot be shown quickly:
    a winner is declared in at most alpha of them."""
    rng = np.random.default_rng(10 + k)
    outcomes = [sequential(lambda i: rng.normal(10, 3.0), k=k)[0].outcome for _ in range(200)]
    assert outcomes.count("winner") <= ALPHA * 200
    assert set(outcomes) <= {"tie", "undecided"} | {"winner"}


def test_small_true_difference_below_margin_is_a_tie_and_noise_is_undecided():
    rng = np.random.default_rng(4)
    d, _ = sequential(lambda i: rng.normal(100 + 2 * (i == 1), 0.5))   # 2 % < 5 % margin
    assert d.outcome == "tie"
    d, n = sequential(lambda i: rng.normal(10 + 0.6 * (i == 1), 4.0))
    assert d.outcome in ("undecided", "winner") and n == 20 or d.outcome == "tie"


def test_rule_edge_cases():
    assert sequential_decision({"a": [1, 2, 3]}).outcome == "single"
    d = sequential_decision({"a": [1.0, 1.1], "b": [5.0, 5.1]}, min_n=3)
    assert d.outcome == "continue" and d.leader == "b"
    d = sequential_decision({"a": [1.0] * 3, "b": [2.0] * 3})
    assert d.outcome == "winner" and d.leader == "b" and d.lo == d.hi == 1.0
    d = sequential_decision({"a": [10.0] * 3, "b": [10.0] * 3, "c": [1.0] * 3})
    assert d.outcome == "tie" and set(d.tied) == {"a", "b"}


# ---- the link and its options -----------------------------------------------------------------

def test_neighbourhood_and_options():
    link, notes = link_from_options(rate="50Mbit", rtt="50ms", loss="1%", jitter="5ms")
    pts = neighbourhood(link)
    assert [p.axis for p in pts] == [None, "rate", "rate", "loss", "loss", "jitter", "jitter"]
    assert pts[3].loss == pytest.approx(0.005) and pts[6].jitter_s == pytest.approx(0.0075)
    link0, _ = link_from_options(rate="50Mbit", rtt="50ms")
    assert len(neighbourhood(link0)) == 3          # a zero loss / jitter is not varied
    assert link0.buffer_bytes() == 312500
    assert parse_competing("2xcubic,bbr") == [("cubic", 2), ("bbr", 1)]
    assert parse_competing("cubic:3") == [("cubic", 3)]
    from ccbench.pingparse import parse_ping_file

    link, notes = link_from_options(rate=None, rtt=None, ping=parse_ping_file(PING / "linux_loss.txt"))
    assert link.rtt_s == pytest.approx(0.0486) and link.loss == pytest.approx(0.2)
    assert any("assuming 50 Mbit/s" in n for n in notes)


# ---- the four link cases (simulator) ----------------------------------------------------------

def _rec(goal="throughput", **opts):
    link, _ = link_from_options(**{"rate": "50Mbit", "rtt": "50ms", **opts})
    return recommend(link, goal, workers=1)


def test_lossy_link_throughput_is_bbr_with_high_confidence():
    r = _rec(loss="2%")
    doc = r.to_json()
    assert doc["recommendation"] == "bbr" and doc["outcome"] == "winner"
    assert doc["decision"]["p_value"] < 0.001
    assert r.confidence_text().startswith("high confidence: BBR v1 separated from")
    assert doc["flips"] == []
    assert r.wall_s < 30


def test_loss_free_one_bdp_throughput_is_a_tie():
    r = _rec(buffer="1bdp")
    doc = r.to_json()
    assert doc["tie"] and doc["recommendation"] is None and doc["outcome"] == "tie"
    assert {"cubic", "bbr"} <= set(doc["decision"]["tied"])
    assert "a tie" in r.headline() and "CUBIC" in r.headline() and "BBR" in r.headline()
    assert r.confidence_text().startswith("tie")


def test_deep_buffer_latency_is_not_cubic_or_reno():
    r = _rec("latency", buffer="10bdp")
    doc = r.to_json()
    assert doc["recommendation"] not in ("cubic", "reno", None)
    ev = {e["cc"]: e for e in doc["evidence"]}
    for cc in ("cubic", "reno"):
        assert ev[cc]["p95_over_base"] >= 5          # several times the 50 ms base RTT
        assert ev[cc]["p95_rtt_ms"]["lo"] > 5 * 50
    text = " ".join(doc["delay"])
    assert "CUBIC fills the buffer" in text and "Reno fills the buffer" in text


def test_competing_cubic_shallow_buffer_bbr_takes_most_of_the_link():
    r = _rec(buffer="0.5bdp", competing="cubic")
    doc = r.to_json()
    ev = {e["cc"]: e for e in doc["evidence"]}
    assert ev["bbr"]["share"]["mean"] > 0.75
    assert ev["cubic"]["share"]["mean"] < 0.7
    assert doc["recommendation"] == "bbr"
    bbr = [t for t in doc["fairness"] if t.startswith("BBR v1 takes most of the link")]
    assert bbr and "unfair to the other traffic" in bbr[0] and "--goal fairness" in bbr[0]
    # ranked for fairness, BBR is not the answer
    f = _rec("fairness", buffer="0.5bdp", competing="cubic").to_json()
    assert f["leader"] != "bbr" and "bbr" not in f["decision"]["tied"]


# ---- CLI, --json and its schema ---------------------------------------------------------------

def _validate(doc, schema, path="$"):
    """A small JSON-schema validator for the keywords JSON_SCHEMA uses (jsonschema when present)."""
    try:
        import jsonschema
    except ImportError:
        jsonschema = None
    if jsonschema is not None and path == "$":
        jsonschema.validate(doc, schema)
    types = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None),
             "integer": int, "number": (int, float)}
    if "const" in schema:
        assert doc == schema["const"], path
    if "enum" in schema:
        assert doc in schema["enum"], f"{path}: {doc!r} not in {schema['enum']}"
    if "type" in schema:
        ts = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        ok = any(isinstance(doc, types[t]) and not (t in ("integer", "number") and isinstance(doc, bool))
                 for t in ts)
        assert ok, f"{path}: {doc!r} is not {ts}"
    if isinstance(doc, dict):
        for k in schema.get("required", []):
            assert k in doc, f"{path}: missing {k}"
        for k, v in doc.items():
            if k in schema.get("properties", {}):
                _validate(v, schema["properties"][k], f"{path}.{k}")
            elif isinstance(schema.get("additionalProperties"), dict):
                _validate(v, schema["additionalProperties"], f"{path}.{k}")
    if isinstance(doc, list) and "items" in schema:
        for i, v in enumerate(doc):
            _validate(v, schema["items"], f"{path}[{i}]")
        if "minItems" in schema:
            assert len(doc) >= schema["minItems"]


def test_json_output_matches_the_schema_and_the_docs():
    res = CliRunner().invoke(app, ["recommend", "--ping", str(PING / "linux_D_timestamps.txt"), "--rate", "20Mbit",
                                   "--goal", "balanced", "--json", "--workers", "1"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    _validate(doc, JSON_SCHEMA)
    assert doc["goal"] == "balanced" and doc["link"]["rate_bps"] == 20e6
    # --json rounds to 4 significant digits
    assert doc["link"]["rtt_ms"] == pytest.approx(30.0) and doc["ping"]["loss"] == pytest.approx(1 / 9, rel=1e-3)
    assert len(doc["neighbourhood"]) == 7
    docs = (ROOT / "docs" / "recommend.md").read_text()
    for key in JSON_SCHEMA["required"]:
        assert f"`{key}`" in docs, f"docs/recommend.md does not document {key}"
    # the schema rejects a wrong document
    with pytest.raises(Exception):   # AssertionError, or jsonschema's ValidationError
        _validate({**doc, "outcome": "maybe"}, JSON_SCHEMA)
    with pytest.raises(Exception):
        _validate({k: v for k, v in doc.items() if k != "evidence"}, JSON_SCHEMA)


def test_text_output_names_goal_recommendation_and_evidence():
    res = CliRunner().invoke(app, ["recommend", "--rate", "50Mbit", "--rtt", "50ms", "--loss", "2%",
                                   "--cc", "cubic,bbr", "--workers", "1"])
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert "goal: throughput" in out and "Recommendation: BBR v1" in out and "runner-up CUBIC" in out
    assert "how sure: high confidence" in out and "evidence" in out and "neighbourhood" in out


@pytest.mark.parametrize("args,needle", [
    (["--rate", "50Mbit", "--rtt", "50ms", "--goal", "speed"], "--goal"),
    (["--rate", "50Mbit", "--rtt", "50ms", "--aqm", "cake"], "aqm"),
    (["--rate", "50Mbit"], "--rtt"),
    (["--rate", "fast", "--rtt", "50ms"], "--rate"),
    (["--rate", "50Mbit", "--rtt", "50ms", "--competing", "2x"], "--competing"),
    (["--rate", "50Mbit", "--rtt", "50ms", "--cc", "westwood"], "westwood"),
    (["--ping", str(PING / "missing.txt")], "--ping"),
])
def test_bad_input_is_one_line_exit_2(args, needle):
    res = CliRunner().invoke(app, ["recommend", *args])
    assert res.exit_code == 2, res.output
    assert needle in res.output and "Traceback" not in res.output


# ---- the recommendation-map study and its report section -------------------------------------

def _flows(cells, rng):
    """Synthetic flows rows: cells = {(rtt, jitter, loss, buf): {cc: (goodput Mbit/s, p95 ms)}}."""
    import pandas as pd

    rows, rid = [], 0
    for (rtt, jit, loss, buf), per in cells.items():
        for cc, (gp, p95) in per.items():
            for r in range(4):
                rid += 1
                rows.append({"run_id": f"r{rid}", "group": 0, "cc": cc, "rtt_ms": rtt, "jitter_ms": jit,
                             "loss_pct": loss, "buffer_bdp": buf, "rate_mbps": 50.0, "base_rtt_ms": rtt,
                             "goodput_bps": (gp + rng.normal(0, 0.2)) * 1e6,
                             "rtt_p95_ms": p95 + rng.normal(0, 0.5)})
    return pd.DataFrame(rows)


def test_map_table_marks_winners_and_ties():
    from ccbench.recommend import map_table

    rng = np.random.default_rng(5)
    f = _flows({(50, 0, 0, 1): {"cubic": (47, 99), "bbr": (47, 75)},
                (50, 0, 1, 1): {"cubic": (5, 55), "bbr": (45, 70)},
                (50, 10, 0, 4): {"cubic": (47, 240), "bbr": (46.5, 70)}}, rng)
    t = map_table(f, "throughput")
    assert list(t["winner"]) == ["tie", "BBR v1", "tie"]
    assert t.loc[1, "by %"] > 80 and t.loc[1, "runner-up"] == "CUBIC"
    lat = map_table(f, "latency")
    assert list(lat["winner"]) == ["BBR v1"] * 3
    assert lat.loc[1, "runner-up"] == ""            # CUBIC has under half BBR's goodput there
    assert lat.loc[2, "jitter/RTT"] == pytest.approx(0.2)


def test_recommendation_map_study_loads_and_its_section_renders():
    from types import SimpleNamespace

    from ccbench import study
    from ccbench.study import map_section

    s = study.find_study("recommendation-map")
    assert s.analyses == ["recommendation_map"] and [p.name for p in s.parts] == ["alone", "vs-cubic"]
    assert sum(p.n_runs() for p in s.parts) == 3072 and sum(p.n_runs(True) for p in s.parts) == 192
    assert "recommendation_map" in study.ANALYSES
    rng = np.random.default_rng(6)
    alone = _flows({(50, 0, 1, 1): {"cubic": (5, 55), "bbr": (45, 70)}}, rng)
    datas = [SimpleNamespace(part=SimpleNamespace(name="alone"), empty=False, flows=alone)]
    sec = map_section(s, datas)
    assert sec.title == "Recommendation map"
    assert "BBR v1 +" in sec.html and "goal throughput" in sec.html and "goal latency" in sec.html
    assert any("cells won per goal" in cap for cap, _ in sec.tables)
