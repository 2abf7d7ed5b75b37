"""One self-contained HTML report of a result store: figures inline as SVG, tables as HTML, a
small inline style sheet, no scripts and no external URLs (it opens offline, mails as one file).
Every piece of text is HTML-escaped; only ``Section.html`` is inserted as is.

- ``section``: Section, the unit every report is made of (a leaf);
- ``html``: the document, its figures and tables;
- ``build``: the generic sections of a store and ``build_report``.
"""

from .build import build_report, generic_sections, summary_table
from .html import figure_svg, render_html, table_html
from .section import ReportError, Section

__all__ = [
    "Section",
    "ReportError",
    "build_report",
    "render_html",
    "figure_svg",
    "generic_sections",
    "table_html",
    "summary_table",
]
