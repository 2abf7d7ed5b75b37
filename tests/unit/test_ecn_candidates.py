"""Algorithms that need ECN marks (DCTCP, Prague: NEEDS_MARKING) are offered by compare and
recommend only where the bottleneck marks, and a note says why when they are left out."""

from __future__ import annotations

import pytest

from ccbench.compare import resolve_algorithms
from ccbench.recommend.search import _candidates
from ccbench.scenario.model import NEEDS_MARKING, Scenario


def _scenario(aqm: str, **params) -> Scenario:
    bn = {"rate": "50Mbit", "rtt": "20ms", "buffer": "1bdp", "aqm": aqm}
    if params:
        bn["aqm_params"] = params
    return Scenario.from_dict({"duration": "1s", "bottleneck": bn, "flows": [{"cc": "cubic"}]}, source="t")


@pytest.mark.parametrize(
    "aqm, params, marks",
    [
        ("droptail", {}, False),
        ("codel", {}, False),  # Linux's codel default: ecn off
        ("codel", {"ecn": True}, True),
        ("fq_codel", {}, True),  # fq_codel's default: ecn on
        ("fq_codel", {"ecn": False}, False),
        ("step", {}, True),
    ],
)
def test_which_bottlenecks_mark_ecn(aqm, params, marks):
    assert _scenario(aqm, **params).marks_ecn is marks


def test_compare_offers_dctcp_only_where_the_queue_marks():
    notes: list[str] = []
    plain = resolve_algorithms(None, "sim", marks_ecn=False, notes=notes)
    assert "dctcp" not in plain and "cubic" in plain
    assert notes and "dctcp" in notes[0] and "does not mark ECN" in notes[0]
    marked = resolve_algorithms(None, "sim", marks_ecn=True, notes=[])
    assert "dctcp" in marked and set(plain) < set(marked)
    assert resolve_algorithms("cubic,dctcp", "sim", marks_ecn=False) == ["cubic", "dctcp"]  # named: kept


def test_recommend_candidates_follow_the_marks():
    notes: list[str] = []
    cands, search = _candidates("sim", None, notes, marks_ecn=False)
    assert search == "sim" and not set(cands) & set(NEEDS_MARKING)
    assert any("DCTCP" in n and "marks ECN" in n for n in notes)
    cands_ecn, _ = _candidates("sim", None, [], marks_ecn=True)
    assert "dctcp" in cands_ecn and cands_ecn[: len(cands)] == cands  # the others first, in order
