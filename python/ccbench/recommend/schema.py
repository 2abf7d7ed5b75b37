"""The --json document of recommend: its name, version and JSON Schema (docs/recommend.md)."""
from __future__ import annotations

from .goals import GOALS

#: the document's name and version: the version goes up when a field changes meaning
SCHEMA = "ccbench.recommend/2"
SCHEMA_VERSION = 2
_NUM = {"type": ["number", "null"]}
_CI = {"type": ["object", "null"], "required": ["mean", "lo", "hi"],
       "properties": {"mean": _NUM, "lo": _NUM, "hi": _NUM}}
_DECISION = {
    "type": "object",
    "required": ["outcome", "leader", "runner_up", "n", "diff", "lo", "hi", "rel_diff", "p_value",
                 "alpha_look", "margin", "ranking", "tied"],
    "properties": {"outcome": {"enum": ["winner", "tie", "continue", "undecided", "single"]},
                   "leader": {"type": ["string", "null"]}, "runner_up": {"type": ["string", "null"]},
                   "n": {"type": "integer"}, "diff": _NUM, "lo": _NUM, "hi": _NUM, "rel_diff": _NUM,
                   "p_value": _NUM, "alpha_look": _NUM, "margin": _NUM,
                   "ranking": {"type": "array", "items": {"type": "string"}},
                   "tied": {"type": "array", "items": {"type": "string"}}},
}
JSON_SCHEMA: dict = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "ccbench recommend --json",
    "type": "object",
    "required": ["schema", "schema_version", "ccbench_version", "goal", "goal_text", "backend", "link", "candidates", "eligible", "recommendation",
                 "tie", "leader", "runner_up", "outcome", "confidence", "decision", "repeats", "evidence",
                 "neighbourhood", "flips", "boundaries", "fairness", "delay", "notes", "kernel", "stop_reason",
                 "runs", "wall_s", "budget_s"],
    "properties": {
        "schema": {"const": SCHEMA},
        "schema_version": {"const": SCHEMA_VERSION},
        "ccbench_version": {"type": "string"},
        "goal": {"enum": list(GOALS)},
        "goal_text": {"type": "string"},
        "backend": {"enum": ["sim", "ns3", "kernel"]},
        "link": {"type": "object",
                 "required": ["rate_bps", "rtt_ms", "loss", "jitter_ms", "reorder", "buffer", "buffer_bdp", "aqm",
                              "aqm_params", "flows", "competing", "duration_s", "scenario"],
                 "properties": {"rate_bps": {"type": "number"}, "rtt_ms": {"type": "number"},
                                "loss": {"type": "number"}, "jitter_ms": {"type": "number"},
                                "buffer": {"type": "string"}, "buffer_bdp": {"type": "number"},
                                "aqm": {"type": "string"}, "flows": {"type": "integer"},
                                "reorder": {"type": "boolean"}, "aqm_params": {"type": "object"},
                                "scenario": {"type": ["string", "null"]},
                                "competing": {"type": "array", "items": {
                                    "type": "object", "required": ["cc", "count"],
                                    "properties": {"cc": {"type": "string"}, "count": {"type": "integer"}}}},
                                "duration_s": {"type": "number"}}},
        "candidates": {"type": "array", "items": {"type": "string"}},
        "eligible": {"type": "array", "items": {"type": "string"}},
        "recommendation": {"type": ["string", "null"]},
        "tie": {"type": "boolean"},
        "leader": {"type": ["string", "null"]},
        "runner_up": {"type": ["string", "null"]},
        "outcome": {"enum": ["winner", "tie", "undecided", "single"]},
        "confidence": {"type": "string"},
        "decision": _DECISION,
        "repeats": {"type": "integer"},
        "evidence": {"type": "array", "items": {
            "type": "object",
            "required": ["cc", "eligible", "n", "goodput_mbps", "p95_rtt_ms", "p95_over_base", "cv_pct", "share",
                         "jain", "score"],
            "properties": {"cc": {"type": "string"}, "eligible": {"type": "boolean"}, "n": {"type": "integer"},
                           "goodput_mbps": _CI, "p95_rtt_ms": _CI, "p95_over_base": _NUM, "cv_pct": _NUM,
                           "share": _CI, "jain": _CI, "score": _CI}}},
        "neighbourhood": {"type": "array", "items": {
            "type": "object",
            "required": ["label", "axis", "factor", "rate_bps", "loss", "jitter_ms", "decision", "score_means"],
            "properties": {"label": {"type": "string"}, "axis": {"type": ["string", "null"]},
                           "factor": {"type": "number"}, "rate_bps": {"type": "number"},
                           "loss": {"type": "number"}, "jitter_ms": {"type": "number"},
                           "decision": _DECISION,
                           "score_means": {"type": "object", "additionalProperties": _NUM}}}},
        "flips": {"type": "array", "items": {
            "type": "object", "required": ["point", "axis", "factor", "winner", "leader", "outcome", "overall"],
            "properties": {"point": {"type": "string"}, "axis": {"type": ["string", "null"]},
                           "factor": {"type": "number"}, "winner": {"type": ["string", "null"]},
                           "leader": {"type": ["string", "null"]}, "outcome": {"type": "string"}, "overall": {"type": ["string", "null"]}}}},
        "boundaries": {"type": "array", "items": {
            "type": "object",
            "required": ["axis", "from", "to", "stated_answer", "neighbour_answer", "between", "probes", "text"],
            "properties": {"axis": {"type": "string"}, "from": {"type": "number"}, "to": {"type": "number"},
                           "stated_answer": {"type": ["string", "null"]},
                           "neighbour_answer": {"type": ["string", "null"]},
                           "between": {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2},
                           "probes": {"type": "array"}, "text": {"type": "string"}}}},
        "fairness": {"type": "array", "items": {"type": "string"}},
        "delay": {"type": "array", "items": {"type": "string"}},
        "notes": {"type": "array", "items": {"type": "string"}},
        "kernel": {"type": ["object", "null"]},
        "stop_reason": {"type": "string"},
        "ping": {"type": "object", "required": ["base_rtt_ms", "jitter_ms", "loss", "replies", "sent"]},
        "runs": {"type": "integer"},
        "wall_s": {"type": "number"},
        "budget_s": {"type": "number"},
    },
}


# --------------------------------------------------------------------------------------------
