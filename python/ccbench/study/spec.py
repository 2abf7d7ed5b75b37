"""A study file (studies/<name>.toml, or any path): ``[study]`` (name, seed, title, question,
original, simplifications, analyses, unit, discussion, runtimes, and ``[study.key_figure]``:
the one figure that answers the question), ``[[part]]`` (a scenario, its
sweep and its ``--quick`` form) and ``[[published]]`` (the seed's numbers as data), loaded and
checked before anything runs; the built-in studies."""

from __future__ import annotations

import copy
import dataclasses
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from ..scenario.errors import ScenarioError
from ..scenario.model import Scenario
from ..scenario.parse import parse_toml, read_toml_text

BUILTIN_DIR = Path(__file__).parent / "studies"
#: The report sections a study file may list under ``analyses`` (study/analyses.py's ANALYSES
#: implements each one).
ANALYSIS_NAMES = (
    "goodput",
    "ratio",
    "variability",
    "recommendation",
    "goodput_figure",
    "throughput",
    "delay",
    "fairness",
    "rtt_time",
    "cwnd_time",
    "latency",
    "goodput_delay",
    "wifi",
    "oscillation",
    "throughput_time",
    "recommendation_map",
)


class StudyError(ScenarioError):
    """Bad study input: ``"<file>: <key.path>: <problem> (expected <form>)"``."""


#: unit -> factor that turns the metric's base value into that unit
GOODPUT_UNITS = {"bit/s": 1.0, "kbit/s": 1e-3, "Mbit/s": 1e-6, "Gbit/s": 1e-9, "KB/s": 1 / 8e3, "MB/s": 1 / 8e6}


UNITS = {
    "goodput": GOODPUT_UNITS,  # base: bit/s
    "time_ms": {"ms": 1.0, "s": 1e-3},
    "time_s": {"s": 1.0, "ms": 1e3},
    "index": {"": 1.0},
    "percent": {"%": 1.0},
    "ratio": {"x": 1.0, "": 1.0},
}


#: metric -> (unit kind, what is measured). The sample is one value per run (repeats are the
#: independent samples), except cv and bbr_cubic_ratio, which are statistics of a cell.
METRICS: dict[str, tuple[str, str]] = {
    "goodput": ("goodput", "mean goodput per flow of the cell's algorithm"),
    "goodput_total": ("goodput", "goodput summed over the cell's flows, per run"),
    "rtt_mean": ("time_ms", "mean RTT of the cell's flows"),
    "rtt_max": ("time_ms", "largest sampled RTT of the cell's flows in the run"),
    "probe_p50": ("time_ms", "median latency-probe RTT (ping under load)"),
    "probe_p95": ("time_ms", "95th percentile latency-probe RTT"),
    "jain_index": ("index", "Jain's index over all flows of the run"),
    "cv": ("percent", "coefficient of variation of per-run goodput across repeats"),
    "bbr_cubic_ratio": ("ratio", "mean BBR goodput / mean CUBIC goodput (Fieller interval)"),
    "period": ("time_s", "dominant period of the group's aggregate throughput after steady state"),
}


_STUDY_KEYS = {
    "name",
    "seed",
    "title",
    "question",
    "original",
    "simplifications",
    "analyses",
    "unit",
    "discussion",
    "full_runtime",
    "quick_runtime",
    "key_figure",
}


_STUDY_REQUIRED = ("name", "seed", "title", "question", "original")


_PART_KEYS = {"name", "description", "scenario", "sweep", "quick"}


_PUBLISHED_KEYS = {"part", "cell", "metric", "value", "unit", "where"}


_TOP_KEYS = {"study", "part", "published"}


@dataclass
class Part:
    name: str
    description: str
    scenario_raw: dict  # TOML-shaped scenario table, without name and sweep
    sweep: dict  # the full grid: axes + repeat (+ zip)
    quick: dict  # duration, repeat, replacement axes
    study: str = ""

    @property
    def scenario_name(self) -> str:
        return f"{self.study}/{self.name}"

    def sweep_table(self, quick: bool = False, repeat: Optional[int] = None) -> dict:
        table = copy.deepcopy(self.sweep)
        if quick:
            for key, value in self.quick.items():
                if key == "duration":
                    continue
                table[key] = copy.deepcopy(value)
        if repeat is not None:
            table["repeat"] = repeat
        table.setdefault("repeat", 1)
        return table

    def scenario(
        self, quick: bool = False, repeat: Optional[int] = None, source: str = "<study>", seed_offset: int = 0
    ) -> Scenario:
        """The part's scenario with its (quick) grid as the [sweep] table; ``seed_offset`` moves its
        seed (and so every repeat's) by that much, for runs that must not share random draws."""
        raw = copy.deepcopy(self.scenario_raw)
        raw["name"] = self.scenario_name
        if seed_offset:
            raw["seed"] = int(raw.get("seed", 1)) + int(seed_offset)
        if quick and "duration" in self.quick:
            raw["duration"] = self.quick["duration"]
        raw["sweep"] = self.sweep_table(quick, repeat)
        return Scenario.from_dict(raw, source=source)

    def axes(self, quick: bool = False) -> dict[str, list]:
        return {k: v for k, v in self.sweep_table(quick).items() if k not in ("repeat", "zip")}

    def n_runs(self, quick: bool = False, repeat: Optional[int] = None) -> int:
        from ..sweeps.grid import Grid

        return len(Grid.from_table(self.sweep_table(quick, repeat)))

    def duration_s(self, quick: bool = False) -> float:
        return self.scenario(quick).duration_s


@dataclass
class Published:
    part: str
    cell: dict
    metric: str
    value: float
    unit: str
    where: str = ""

    def cell_text(self) -> str:
        return ", ".join(f"{k}={cell_text(v)}" for k, v in self.cell.items()) or "all runs"


#: kind of key figure -> what it draws
KEY_FIGURE_KINDS = {
    "lines": "a metric vs a swept key (or jitter/rtt), one line per algorithm",
    "bars": "grouped bars of a metric per part (or per value of a swept key), one colour per algorithm",
    "scatter": "one metric against another per cell, one colour per algorithm, a marker per value of `by`",
    "time": "per-flow throughput over time of one run, one colour per algorithm, BBR's ProbeRTT rounds marked",
    "map": "the winner per cell of the recommendation map for one goal, ties hatched",
}

_KEY_FIGURE_KEYS = {
    "kind",
    "caption",
    "metric",
    "x",
    "by",
    "parts",
    "panel",
    "log_x",
    "log_y",
    "log_panel",
    "shade",
    "shade_label",
    "goal",
}

#: the x of a "lines" figure that is not a swept key: the bottleneck's jitter as % of its RTT
JITTER_PER_RTT = "jitter/rtt"
#: the x of a "bars" figure that groups by part
BY_PART = "part"
#: goals of a "map" figure -> the part whose runs decide them
MAP_GOALS = {"throughput": "alone", "latency": "alone", "balanced": "alone", "fairness": "vs-cubic"}


@dataclass
class KeyFigure:
    """``[study.key_figure]``: the figure a study's report opens with (study/key_figure.py draws it)."""

    kind: str
    caption: str
    metric: str = ""
    x: str = ""
    by: str = ""
    parts: list[str] = field(default_factory=list)
    panel: list[str] = field(default_factory=list)
    log_x: bool = False
    log_y: bool = False
    log_panel: bool = False
    shade: Optional[tuple[float, float]] = None
    shade_label: str = ""
    goal: str = ""


@dataclass
class Study:
    name: str
    seed: str
    title: str
    question: str
    original: str
    simplifications: list[str]
    analyses: list[str]
    unit: str
    discussion: list[str]
    full_runtime: str
    quick_runtime: str
    parts: list[Part]
    published: list[Published]
    path: Path
    text: str = ""
    key_figure: Optional[KeyFigure] = None

    def part(self, name: str) -> Part:
        for p in self.parts:
            if p.name == name:
                return p
        raise KeyError(name)

    def only(self, names: Sequence[str]) -> "Study":
        """The study with only the parts named (in the study's order) and their published
        numbers; StudyError naming an unknown part and the study's parts."""
        known = [p.name for p in self.parts]
        for n in names:
            if n not in known:
                raise StudyError(str(self.path), "--parts", f"no part named {n!r} in {self.name}", ", ".join(known))
        keep = set(names)
        return dataclasses.replace(
            self,
            parts=[p for p in self.parts if p.name in keep],
            published=[x for x in self.published if x.part in keep],
        )

    def n_runs(self, quick: bool = False, repeat: Optional[int] = None) -> int:
        return sum(p.n_runs(quick, repeat) for p in self.parts)

    def simulated_s(self, quick: bool = False, repeat: Optional[int] = None) -> float:
        return sum(p.n_runs(quick, repeat) * p.duration_s(quick) for p in self.parts)


def cell_text(v: Any) -> str:
    from ..sweeps.grid import param_str

    if hasattr(v, "item") and not isinstance(v, (str, bytes)):
        v = v.item()
    return param_str(v)


def _expect_str(src, key, v, required=True) -> str:
    if v is None and not required:
        return ""
    if not isinstance(v, str) or (required and not v.strip()):
        raise StudyError(
            src, key, f"{v!r} is not a non-empty string" if v is not None else "required key is missing", "a string"
        )
    return v


def _expect_str_list(src, key, v) -> list[str]:
    if v is None:
        return []
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise StudyError(src, key, f"{v!r} is not a list of strings", '["...", "..."]')
    return list(v)


def _check_keys(src, where, table, allowed, required=()) -> None:
    import difflib

    if not isinstance(table, Mapping):
        raise StudyError(src, where, f"{table!r} is not a table", "a TOML table")
    for k in table:
        if k not in allowed:
            close = difflib.get_close_matches(k, sorted(allowed), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise StudyError(
                src, f"{where}.{k}" if where else k, f"unknown key '{k}'{hint}", "one of " + ", ".join(sorted(allowed))
            )
    for k in required:
        if k not in table:
            raise StudyError(src, f"{where}.{k}" if where else k, "required key is missing", None)


def load_study(path: str | os.PathLike) -> Study:
    """Read and validate a study file. Raises StudyError (file, key path, what was expected)."""
    path = Path(path)
    src = str(path)
    text = read_toml_text(path, "a study .toml file or a built-in study name", StudyError)
    try:
        raw = parse_toml(text, src)
    except ScenarioError as e:
        raise StudyError(e.source, e.key, e.problem, e.expected) from None
    return study_from_dict(raw, src, path, text)


def study_from_dict(raw: Mapping[str, Any], src: str = "<study>", path: Optional[Path] = None, text: str = "") -> Study:
    _check_keys(src, "", raw, _TOP_KEYS, ("study", "part"))
    st = raw["study"]
    _check_keys(src, "study", st, _STUDY_KEYS, _STUDY_REQUIRED)
    name = _expect_str(src, "study.name", st["name"])
    if "/" in name or name != name.strip():
        raise StudyError(src, "study.name", f"{name!r} is not a plain name", "a name without '/' or surrounding spaces")
    seed = st["seed"]
    if isinstance(seed, int) and not isinstance(seed, bool):
        seed = f"{seed:03d}"
    seed = _expect_str(src, "study.seed", seed)
    analyses = _expect_str_list(src, "study.analyses", st.get("analyses"))
    for i, a in enumerate(analyses):
        if a not in ANALYSIS_NAMES:
            raise StudyError(
                src, f"study.analyses.{i}", f"unknown analysis {a!r}", "one of " + ", ".join(sorted(ANALYSIS_NAMES))
            )
    unit = st.get("unit", "Mbit/s")
    if unit not in GOODPUT_UNITS:
        raise StudyError(src, "study.unit", f"{unit!r} is not a goodput unit", "one of " + ", ".join(GOODPUT_UNITS))
    parts_raw = raw["part"]
    if not isinstance(parts_raw, list) or not parts_raw:
        raise StudyError(src, "part", "expected at least one [[part]] table", "[[part]] tables")
    parts = [_load_part(src, i, p, name) for i, p in enumerate(parts_raw)]
    names = [p.name for p in parts]
    for i, n in enumerate(names):
        if names.index(n) != i:
            raise StudyError(src, f"part.{i}.name", f"part name {n!r} is used twice", "a distinct name per part")
    published = [
        _load_published(src, i, r, parts) for i, r in enumerate(_as_list(src, "published", raw.get("published", [])))
    ]
    key_figure = None
    if "key_figure" in st:
        key_figure = _load_key_figure(src, st["key_figure"], parts)
    return Study(
        name=name,
        seed=seed,
        title=_expect_str(src, "study.title", st["title"]),
        question=_expect_str(src, "study.question", st["question"]),
        original=_expect_str(src, "study.original", st["original"]),
        simplifications=_expect_str_list(src, "study.simplifications", st.get("simplifications")),
        analyses=analyses,
        unit=unit,
        discussion=_expect_str_list(src, "study.discussion", st.get("discussion")),
        full_runtime=_expect_str(src, "study.full_runtime", st.get("full_runtime"), required=False),
        quick_runtime=_expect_str(src, "study.quick_runtime", st.get("quick_runtime"), required=False),
        parts=parts,
        published=published,
        path=path or Path(src),
        text=text,
        key_figure=key_figure,
    )


def _as_list(src, key, v) -> list:
    if not isinstance(v, list):
        raise StudyError(src, key, f"{v!r} is not a list of tables", f"[[{key}]] tables")
    return v


def _load_part(src: str, i: int, p: Any, study: str) -> Part:
    where = f"part.{i}"
    _check_keys(src, where, p, _PART_KEYS, ("name", "scenario"))
    name = _expect_str(src, f"{where}.name", p["name"])
    if "/" in name:
        raise StudyError(src, f"{where}.name", f"{name!r} contains '/'", "a plain name")
    scen = p["scenario"]
    if not isinstance(scen, Mapping):
        raise StudyError(src, f"{where}.scenario", f"{scen!r} is not a table", "a scenario table")
    for k in ("name", "sweep"):
        if k in scen:
            raise StudyError(
                src,
                f"{where}.scenario.{k}",
                f"'{k}' is set by the study"
                + (" (the grid is part.sweep)" if k == "sweep" else f" (the scenario is named '{study}/{name}')"),
                "no such key in part.scenario",
            )
    sweep_t = p.get("sweep", {}) or {}
    quick_t = p.get("quick", {}) or {}
    if not isinstance(sweep_t, Mapping):
        raise StudyError(src, f"{where}.sweep", f"{sweep_t!r} is not a table", "axes = [values] and repeat")
    if not isinstance(quick_t, Mapping):
        raise StudyError(src, f"{where}.quick", f"{quick_t!r} is not a table", "duration, repeat and replacement axes")
    sweep_t = _flatten_axes(sweep_t)
    quick_t = _flatten_axes(quick_t)
    for k in quick_t:
        if k not in ("duration", "repeat") and k not in sweep_t:
            raise StudyError(
                src,
                f"{where}.quick.{k}",
                f"{k!r} is not an axis of part.sweep",
                "duration, repeat, or a replacement for one of "
                + (", ".join(k2 for k2 in sweep_t if k2 not in ("repeat", "zip")) or "no axes"),
            )
    part = Part(
        name=name,
        description=str(p.get("description", "")),
        scenario_raw=copy.deepcopy(dict(scen)),
        sweep=dict(sweep_t),
        quick=dict(quick_t),
        study=study,
    )
    for quick in (False, True):
        label = "quick" if quick else "sweep"
        try:
            sc = part.scenario(quick, source=src)
        except ScenarioError as e:
            key = e.key or ""
            if key == "duration" and quick:
                key = f"{where}.quick.duration"
            elif key.startswith("sweep"):
                key = f"{where}.{label}{key[5:]}"
            else:
                key = f"{where}.scenario.{key}".rstrip(".")
            raise StudyError(src, key, e.problem, e.expected) from None
        _check_grid(src, f"{where}.{label}", sc)
    return part


def _flatten_axes(table: Mapping[str, Any]) -> dict:
    """Unquoted dotted keys in TOML make nested tables: flatten them to key paths, as [sweep]."""
    out: dict[str, Any] = {}

    def walk(prefix: str, v: Any):
        if isinstance(v, Mapping):
            for k, v2 in v.items():
                walk(f"{prefix}.{k}" if prefix else k, v2)
        else:
            out[prefix] = v

    for k, v in table.items():
        if k in ("duration", "repeat", "zip"):
            out[k] = v
        else:
            walk(k, v)
    return out


def _check_grid(src: str, where: str, sc: Scenario) -> None:
    from ..sweeps.grid import Grid, SweepError, param_str

    try:
        grid = Grid.from_table(sc.sweep, source=src)
    except SweepError as e:
        raise StudyError(src, where, str(e).removeprefix(f"{src}: "), None) from None
    for cell in grid.cells():
        try:
            sc.with_overrides(cell)
        except ScenarioError as e:
            desc = ", ".join(f"{k}={param_str(v)}" for k, v in cell.items())
            raise StudyError(
                src, f"{where}.{e.key}" if e.key else where, f"cell {desc}: {e.problem}", e.expected
            ) from None


def _load_published(src: str, i: int, r: Any, parts: list[Part]) -> Published:
    where = f"published.{i}"
    _check_keys(src, where, r, _PUBLISHED_KEYS, ("part", "metric", "value", "unit"))
    names = [p.name for p in parts]
    if r["part"] not in names:
        raise StudyError(src, f"{where}.part", f"unknown part {r['part']!r}", "one of " + ", ".join(names))
    part = parts[names.index(r["part"])]
    metric = r["metric"]
    if metric not in METRICS:
        raise StudyError(src, f"{where}.metric", f"unknown metric {metric!r}", "one of " + ", ".join(METRICS))
    units = UNITS[METRICS[metric][0]]
    if r["unit"] not in units:
        raise StudyError(
            src,
            f"{where}.unit",
            f"{r['unit']!r} is not a unit of {metric}",
            "one of " + ", ".join(repr(u) for u in units),
        )
    value = r["value"]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise StudyError(src, f"{where}.value", f"{value!r} is not a number", "e.g. value = 5.03")
    cell = r.get("cell", {}) or {}
    if not isinstance(cell, Mapping):
        raise StudyError(src, f"{where}.cell", f"{cell!r} is not a table", '{ "bottleneck.loss" = "1%", cc = "cubic" }')
    cell = _flatten_axes(cell)
    axes = part.axes()
    ccs = {str(g.get("cc", "")).lower() for g in part.scenario_raw.get("flows", [])}
    for key, v in axes.items():
        if key.endswith(".cc"):
            ccs.update(str(x).lower() for x in v)
    for k, v in cell.items():
        if k == "cc":
            if str(v).lower() not in ccs:
                raise StudyError(
                    src,
                    f"{where}.cell.cc",
                    f"{v!r} does not run in part {part.name!r}",
                    "one of " + ", ".join(sorted(ccs)),
                )
            continue
        if k not in axes:
            raise StudyError(
                src,
                f"{where}.cell.{k}",
                f"{k!r} is not swept in part {part.name!r}",
                "cc or one of " + (", ".join(axes) or "no axes"),
            )
        if not any(cell_text(v) == cell_text(x) for x in axes[k]):
            raise StudyError(
                src,
                f"{where}.cell.{k}",
                f"{v!r} is not in the grid",
                "one of " + ", ".join(cell_text(x) for x in axes[k]),
            )
    needs_cc = metric in ("goodput", "goodput_total", "rtt_mean", "rtt_max", "cv", "period")
    if metric == "bbr_cubic_ratio" and "cc" in cell:
        raise StudyError(src, f"{where}.cell.cc", "a BBR/CUBIC ratio compares two algorithms", "a cell without cc")
    if needs_cc and "cc" not in cell and not any(k.endswith(".cc") for k in cell) and len(ccs) > 1:
        raise StudyError(src, f"{where}.cell", f"metric {metric} needs the algorithm", 'cc = "<algorithm>" in the cell')
    return Published(
        part=part.name,
        cell=dict(cell),
        metric=metric,
        value=float(value),
        unit=r["unit"],
        where=str(r.get("where", "")),
    )


def _swept_keys(parts: list[Part]) -> list[str]:
    keys: list[str] = []
    for p in parts:
        keys.extend(k for k in p.axes() if k not in keys)
    return keys


def _load_key_figure(src: str, kf: Any, parts: list[Part]) -> KeyFigure:
    """Validate ``[study.key_figure]`` against the study's parts: every key it names must be swept
    in the parts it draws, every metric one of METRICS."""
    w = "study.key_figure"
    _check_keys(src, w, kf, _KEY_FIGURE_KEYS, ("kind", "caption"))
    kind = kf["kind"]
    if kind not in KEY_FIGURE_KINDS:
        raise StudyError(src, f"{w}.kind", f"unknown kind {kind!r}", "one of " + ", ".join(KEY_FIGURE_KINDS))
    caption = _expect_str(src, f"{w}.caption", kf["caption"])
    allowed = {
        "lines": {"metric", "x", "by", "parts", "panel", "log_x", "log_y", "log_panel", "shade", "shade_label"},
        "bars": {"metric", "x", "by", "parts", "panel", "log_y", "log_panel"},
        "scatter": {"metric", "x", "by", "parts", "log_x", "log_y"},
        "time": {"parts"},
        "map": {"goal"},
    }[kind] | {"kind", "caption"}
    for k in kf:
        if k not in allowed:
            raise StudyError(
                src, f"{w}.{k}", f"'{k}' does not apply to a {kind} figure", "one of " + ", ".join(sorted(allowed))
            )
    names = [p.name for p in parts]
    chosen = _expect_str_list(src, f"{w}.parts", kf.get("parts")) or list(names)
    for i, n in enumerate(chosen):
        if n not in names:
            raise StudyError(src, f"{w}.parts.{i}", f"unknown part {n!r}", "one of " + ", ".join(names))
    drawn = [p for p in parts if p.name in chosen]
    swept = [k for k in _swept_keys(drawn) if not k.endswith(".cc")]

    def metric(key: str, v: Any) -> str:
        if v not in METRICS:
            raise StudyError(src, key, f"unknown metric {v!r}", "one of " + ", ".join(METRICS))
        return v

    def flag(key: str) -> bool:
        v = kf.get(key, False)
        if not isinstance(v, bool):
            raise StudyError(src, f"{w}.{key}", f"{v!r} is not a boolean", "true or false")
        return v

    def swept_key(key: str, v: Any, extra: tuple[str, ...] = ()) -> str:
        if not isinstance(v, str) or (v not in swept and v not in extra):
            expected = ", ".join([*extra, *swept]) or "no swept keys"
            raise StudyError(src, key, f"{v!r} is not swept in part(s) {', '.join(chosen)}", "one of " + expected)
        return v

    out = KeyFigure(kind=kind, caption=caption, parts=chosen)
    if kind in ("lines", "bars", "scatter"):
        if "metric" not in kf:
            raise StudyError(src, f"{w}.metric", "required key is missing", "one of " + ", ".join(METRICS))
        out.metric = metric(f"{w}.metric", kf["metric"])
        if "x" not in kf:
            raise StudyError(src, f"{w}.x", "required key is missing", None)
        if kind == "scatter":
            out.x = metric(f"{w}.x", kf["x"])
        elif kind == "bars":
            out.x = swept_key(f"{w}.x", kf["x"], (BY_PART,))
        else:
            jitter = any("bottleneck.jitter" in p.axes() for p in drawn)
            out.x = swept_key(f"{w}.x", kf["x"], (JITTER_PER_RTT,) if jitter else ())
        if "by" in kf:
            out.by = swept_key(f"{w}.by", kf["by"])
            if out.by == out.x:
                raise StudyError(src, f"{w}.by", f"{out.by!r} is already the x", "another swept key")
        out.panel = [
            metric(f"{w}.panel.{i}", m) for i, m in enumerate(_expect_str_list(src, f"{w}.panel", kf.get("panel")))
        ]
        out.log_x, out.log_y, out.log_panel = flag("log_x"), flag("log_y"), flag("log_panel")
    if "shade" in kf:
        v = kf["shade"]
        if (
            not isinstance(v, list)
            or len(v) != 2
            or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v)
            or not v[0] < v[1]
        ):
            raise StudyError(src, f"{w}.shade", f"{v!r} is not an x range", "[low, high] with low < high, in x units")
        out.shade = (float(v[0]), float(v[1]))
        out.shade_label = _expect_str(src, f"{w}.shade_label", kf.get("shade_label"), required=False)
    if kind == "time":
        if len(drawn) != 1:
            raise StudyError(src, f"{w}.parts", f"a time figure draws one part, got {len(drawn)}", '["<one part>"]')
    if kind == "map":
        goal = kf.get("goal", "throughput")
        if goal not in MAP_GOALS:
            raise StudyError(src, f"{w}.goal", f"unknown goal {goal!r}", "one of " + ", ".join(MAP_GOALS))
        if MAP_GOALS[goal] not in names:
            raise StudyError(src, f"{w}.goal", f"goal {goal} needs a part named {MAP_GOALS[goal]!r}", None)
        out.goal = goal
        out.parts = [MAP_GOALS[goal]]
    return out


def builtin_studies() -> list[Path]:
    """The built-in study files (studies/*.toml with a [study] table), by name."""
    out = []
    for p in sorted(BUILTIN_DIR.glob("*.toml")):
        try:
            head = tomllib.loads(p.read_text())
        except (OSError, tomllib.TOMLDecodeError):
            continue
        if isinstance(head.get("study"), Mapping):
            out.append(p)
    return out


def list_studies() -> list[Study]:
    return [load_study(p) for p in builtin_studies()]


def find_study(name_or_path: str | os.PathLike) -> Study:
    """A built-in study by name, or a study file by path."""
    text = str(name_or_path)
    p = Path(text)
    if p.suffix == ".toml" or os.sep in text or p.is_file():
        return load_study(p)  # a path (a directory of the same name as a study does not count)
    for path in builtin_studies():
        if path.stem == text:
            return load_study(path)
    names = [p.stem for p in builtin_studies()]
    import difflib

    close = difflib.get_close_matches(text, names, n=1)
    raise StudyError(
        None,
        None,
        f"no built-in study {text!r}" + (f"; did you mean {close[0]!r}?" if close else ""),
        "one of " + ", ".join(names) + ", or a path to a study .toml file",
    )
