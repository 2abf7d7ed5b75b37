"""One section of a report: a title, paragraphs, tables and figures (a leaf every section
writer imports: the generic report, the studies' analyses, compare, validate)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import pandas as pd
from matplotlib.figure import Figure


class ReportError(ValueError):
    """The directory cannot be reported on (e.g. it holds no runs)."""


@dataclass
class Section:
    """A part of the report. ``paragraphs`` are plain text (escaped); ``tables`` are
    (caption, DataFrame); ``figures`` are (caption, matplotlib Figure); ``html`` is raw HTML
    inserted after the paragraphs (the caller is responsible for escaping inside it)."""

    title: str
    paragraphs: list[str] = field(default_factory=list)
    tables: list[tuple[str, pd.DataFrame]] = field(default_factory=list)
    figures: list[tuple[str, Figure]] = field(default_factory=list)
    html: Optional[str] = None
