"""One part's stored runs, and the rows of a grid cell in them."""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

import pandas as pd

from .spec import Part, cell_text


class PartData:
    """runs / flows / series / link_series of one part (a Results-like object for plots)."""

    def __init__(self, results: Any, part: Part):
        self.part = part
        self._results = results
        runs = results.runs
        if "name" in runs.columns:
            runs = runs[runs["name"] == part.scenario_name]
        if "status" in runs.columns:
            runs = runs[runs["status"] == "ok"]
        self.runs = runs.reset_index(drop=True)
        ids = set(self.runs["run_id"]) if "run_id" in self.runs else set()
        flows = results.flows
        self.flows = flows[flows["run_id"].isin(ids)].reset_index(drop=True) if "run_id" in flows else flows
        self._ids = ids
        self._lazy: dict[str, pd.DataFrame] = {}
        meta = dict(getattr(results, "meta", {}) or {})
        meta["grid"] = part.axes(bool(meta.get("quick")))  # this part's own axes, for plots
        self.meta = meta

    def _part_rows(self, table: str) -> pd.DataFrame:
        """This part's rows of a time-series table of the whole store (read lazily, once)."""
        if table not in self._lazy:
            s = getattr(self._results, table, None)
            s = s if isinstance(s, pd.DataFrame) else pd.DataFrame()
            self._lazy[table] = s[s["run_id"].isin(self._ids)].reset_index(drop=True) if "run_id" in s else s
        return self._lazy[table]

    @property
    def series(self) -> pd.DataFrame:
        return self._part_rows("series")

    @property
    def link_series(self) -> pd.DataFrame:
        return self._part_rows("link_series")

    @property
    def empty(self) -> bool:
        return self.runs.empty


def _column(df: pd.DataFrame, key: str) -> Optional[str]:
    for c in (key, f"sweep.{key}"):
        if c in df.columns:
            return c
    return None


def _same(a: Any, b: Any) -> bool:
    if hasattr(a, "item") and not isinstance(a, (str, bytes)):
        a = a.item()
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return float(a) == float(b)
    return cell_text(a) == cell_text(b)


def match_cell(
    df: pd.DataFrame, cell: Mapping[str, Any], with_cc: bool = True, columns: Optional[Sequence[str]] = None
) -> pd.DataFrame:
    """The rows of ``df`` in ``cell`` (only ``columns`` when given: taking rows of a wide frame
    of nullable columns costs milliseconds, and a study report asks once per cell and metric)."""
    if columns is not None:
        columns = list(dict.fromkeys(columns))
    mask = pd.Series(True, index=df.index)
    for k, v in cell.items():
        if k == "cc":
            if with_cc and "cc" in df.columns:
                mask &= df["cc"].astype(str).str.lower() == str(v).lower()
            continue
        col = _column(df, k)
        if col is None:
            return df.iloc[:0] if columns is None else df.loc[df.index[:0], columns]
        values = df[col]
        hits = [u for u in pd.unique(values) if _same(u, v)]  # compare each distinct value once
        mask &= values.isin(hits)
    return df[mask] if columns is None else df.loc[mask, columns]
