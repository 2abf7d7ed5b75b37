"""The self-contained HTML document: inline SVG figures, tables, the page's CSS and navigation."""

from __future__ import annotations

import datetime as _dt
import html
import io
import re
from typing import Any, Sequence

import pandas as pd
from matplotlib.figure import Figure

from .. import __version__
from ..legible import tidy
from .section import Section

_CSS = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:#222;
 max-width:1080px;margin:0 auto;padding:1.2em 1.6em 3em;background:#fff}
h1{font-size:1.7em;margin:.2em 0 .1em}h2{font-size:1.3em;margin-top:2em;border-bottom:1px solid #ddd;
 padding-bottom:.2em}h3{font-size:1.05em;margin:1.4em 0 .4em}
.sub{color:#555;margin:0 0 1em}
table{border-collapse:collapse;margin:.4em 0 1.2em;font-size:.88em}
th,td{border-bottom:1px solid #e3e3e3;padding:.25em .7em;text-align:left;vertical-align:top}
th{background:#f4f5f7;font-weight:600}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
table.meta th{background:none;color:#555;font-weight:500;white-space:nowrap}
caption{caption-side:top;text-align:left;font-weight:600;padding:.3em 0;color:#333}
pre{background:#f6f8fa;border:1px solid #e1e4e8;padding:.7em 1em;overflow:auto;font-size:.85em;
 white-space:pre-wrap;overflow-wrap:anywhere;
 line-height:1.35}
code{font-size:.9em;background:#f3f3f3;padding:0 .25em}
figure{margin:1.2em 0 1.8em}figure svg{display:block;width:100%;max-width:860px;height:auto}
figcaption{color:#444;font-size:.9em;margin-top:.3em}
summary{cursor:pointer;color:#333;margin:.3em 0}
.warn{color:#8a4b00;background:#fff6e5;border-left:3px solid #f0a020;padding:.4em .8em}
.bad{color:#a00}.ok{color:#176a1a}
nav ol{columns:2;font-size:.92em}footer{margin-top:3em;color:#777;font-size:.85em}
"""


def escape_text(text: Any) -> str:
    return html.escape("" if text is None else str(text), quote=True)


def figure_svg(fig: Figure, salt: str) -> str:
    """The figure as an inline ``<svg>`` element: no XML prolog, no DOCTYPE (its DTD address), no
    metadata block, text as text; ids salted per figure so several SVGs in one page never clash.
    Overlapping tick labels are turned or thinned first (legible.tidy)."""
    import matplotlib

    tidy(fig)
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": salt, "svg.fonttype": "none"}):
        fig.savefig(buf, format="svg")
    text = buf.getvalue()
    text = text[text.index("<svg") :]
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.S)
    return text.strip()


def _num_cols(df: pd.DataFrame) -> set[str]:
    return {c for c in df.columns if pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c])}


def _fmt_cell(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        if v != v:
            return "–"
        return f"{v:.4g}" if abs(v) < 1e6 else f"{v:.4e}"
    try:
        if pd.isna(v):
            return "–"
    except (TypeError, ValueError):
        pass
    return str(v)


def table_html(df: pd.DataFrame, caption: str = "") -> str:
    """An escaped HTML table; numeric columns right-aligned."""
    nums = _num_cols(df)
    out = ["<table>"]
    if caption:
        out.append(f"<caption>{escape_text(caption)}</caption>")
    out.append(
        "<thead><tr>"
        + "".join(f"<th{' class=num' if c in nums else ''}>{escape_text(c)}</th>" for c in df.columns)
        + "</tr></thead><tbody>"
    )
    for row in df.itertuples(index=False):
        out.append(
            "<tr>"
            + "".join(
                f"<td{' class=num' if c in nums else ''}>{escape_text(_fmt_cell(v))}</td>"
                for c, v in zip(df.columns, row)
            )
            + "</tr>"
        )
    out.append("</tbody></table>")
    return "".join(out)


def _slug(text: str, used: set[str]) -> str:
    base = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"
    slug, i = base, 2
    while slug in used:
        slug, i = f"{base}-{i}", i + 1
    used.add(slug)
    return slug


def render_html(title: str, subtitle: str, sections: Sequence[Section]) -> str:
    """The whole document. ``<body data-figures=N>`` states how many figures it holds."""
    used: set[str] = set()
    body, nav = [], []
    n_fig = 0
    for sec in sections:
        sid = _slug(sec.title, used)
        nav.append(f'<li><a href="#{sid}">{escape_text(sec.title)}</a></li>')
        body.append(f'<section id="{sid}"><h2>{escape_text(sec.title)}</h2>')
        body.extend(f"<p>{escape_text(p)}</p>" for p in sec.paragraphs)
        if sec.html:
            body.append(sec.html)
        for caption, df in sec.tables:
            body.append(table_html(df, caption))
        for caption, fig in sec.figures:
            n_fig += 1
            body.append(
                f'<figure class="plot" id="fig-{n_fig}">{figure_svg(fig, f"ccbench-fig-{n_fig}")}'
                f"<figcaption>Figure {n_fig}. {escape_text(caption)}</figcaption></figure>"
            )
        body.append("</section>")
    n_tab = sum(len(s.tables) for s in sections)
    now = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
    return "".join(
        [
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{escape_text(title)}</title><style>{_CSS}</style></head>",
            f'<body data-figures="{n_fig}"><header><h1>{escape_text(title)}</h1>',
            f'<p class="sub">{escape_text(subtitle)} · {n_fig} figures, {n_tab} tables</p></header>',
            f"<nav><ol>{''.join(nav)}</ol></nav>",
            "".join(body),
            f"<footer>Made by ccbench {escape_text(__version__)} on {escape_text(now)}.</footer></body></html>\n",
        ]
    )
