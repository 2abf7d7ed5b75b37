"""DIR/ccbench.json: what a store directory holds and how it was made (docs/results.md).

Written by sweeps (``run_sweep``), ``ccbench run --out`` (``RunResult.save``) and study runs;
read back as ``Results.meta``. Keys: ccbench_version, command (argv list or null), created
(ISO time, UTC), backend, kernel_version (``uname -r`` of the machine that ran it),
scenario_file, scenario_toml (the scenario as TOML text, overrides applied), grid
({key: [values]}), repeat, study (name or null).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import re
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

__all__ = ["META_FILE", "build_meta", "write_meta", "read_meta", "scenario_toml", "dump_toml"]

META_FILE = "ccbench.json"


def build_meta(
    scenario: Any,
    backend: str,
    *,
    grid: Optional[Mapping[str, Sequence[Any]]] = None,
    repeat: int = 1,
    command: Optional[Sequence[str]] = None,
    study: Optional[str] = None,
) -> dict[str, Any]:
    """The ccbench.json dict for runs of ``scenario`` (a Scenario, or None when unknown)."""
    from .. import __version__

    try:
        file, text = scenario_toml(scenario) if scenario is not None else (None, None)
    except TypeError:  # a value TOML cannot hold (a dict built in Python): keep the metadata
        file, text = getattr(scenario, "source", None), None
    return {
        "ccbench_version": __version__,
        "command": list(command) if command is not None else None,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "backend": backend,
        "kernel_version": os.uname().release,
        "scenario_file": file,
        "scenario_toml": text,
        "grid": {k: list(v) for k, v in (grid or {}).items()},
        "repeat": int(repeat),
        "study": study,
    }


def scenario_toml(scenario: Any) -> tuple[Optional[str], str]:
    """(the file the scenario came from or None, its TOML text). The file's own text (with its
    comments) when the scenario is exactly that file; else the validated input re-written as
    TOML (overrides and sweep table included)."""
    raw = scenario.raw
    src = getattr(scenario, "source", None)
    path = Path(src) if src and not str(src).startswith("<") else None
    if path is not None and path.is_file():
        try:
            import tomllib

            text = path.read_text()
            parsed = tomllib.loads(text)
            parsed.setdefault("name", path.stem)
            if parsed == raw:
                return str(path), text
        except (OSError, ValueError):
            pass
        return str(path), dump_toml(raw)
    return None, dump_toml(raw)


def write_meta(directory: str | os.PathLike, meta: Mapping[str, Any]) -> Path:
    """Write DIR/ccbench.json atomically (temporary file + rename)."""
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    target = root / META_FILE
    tmp = root / f".tmp-{os.getpid()}-{META_FILE}.part"
    tmp.write_text(json.dumps(meta, indent=2, sort_keys=False, default=str) + "\n")
    os.replace(tmp, target)
    return target


def read_meta(directory: str | os.PathLike) -> dict[str, Any]:
    """DIR/ccbench.json as a dict ({} when the file is missing)."""
    p = Path(directory) / META_FILE
    try:
        return json.loads(p.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        raise ValueError(f"{p}: not readable as JSON ({e})") from None


# --------------------------------------------------------------------------------------------
# A small TOML writer (the standard library only reads TOML): enough for scenario dicts —
# strings, numbers, booleans, arrays, tables and arrays of tables.

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(k: str) -> str:
    return k if _BARE.match(k) else json.dumps(k)


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)  # a valid TOML basic string
    if isinstance(v, Mapping):
        return "{ " + ", ".join(f"{_key(str(k))} = {_value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} as TOML")


def _is_table_array(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, Mapping) for x in v)


def dump_toml(data: Mapping[str, Any]) -> str:
    lines: list[str] = []
    _dump_table(data, [], lines)
    return "\n".join(lines).strip() + "\n"


def _dump_table(data: Mapping[str, Any], path: list[str], lines: list[str]) -> None:
    scalars = [(k, v) for k, v in data.items() if not isinstance(v, Mapping) and not _is_table_array(v)]
    for k, v in scalars:
        lines.append(f"{_key(str(k))} = {_value(v)}")
    for k, v in data.items():
        sub = path + [_key(str(k))]
        if isinstance(v, Mapping):
            lines += ["", f"[{'.'.join(sub)}]"]
            _dump_table(v, sub, lines)
        elif _is_table_array(v):
            for item in v:
                lines += ["", f"[[{'.'.join(sub)}]]"]
                _dump_table(item, sub, lines)
