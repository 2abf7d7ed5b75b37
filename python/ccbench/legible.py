"""What keeps a figure legible, shared by every figure of ccbench.plots and the report:

- ``series_labels``: a series is named only by the keys that vary between the series of one
  figure, by short key names, and a key a series does not set is left out (never ``nan``);
- ``MAX_SERIES``: beyond it a figure is split into facets (``facet_grid``) instead of growing
  its legend; ``legend_below`` puts a legend under the axes, outside them;
- ``wrap``: titles wrapped to the width they have instead of running off the figure;
- ``tidy``: tick labels that would overlap are rotated, then thinned.
"""

from __future__ import annotations

import math
import textwrap
import weakref
from typing import Any, Iterable, Mapping, Sequence

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

__all__ = [
    "MAX_SERIES",
    "is_missing",
    "short_keys",
    "series_labels",
    "legend_below",
    "legend_right",
    "facet_grid",
    "wrap",
    "wrap_for",
    "tidy",
]

#: the most series one legend lists; a figure with more is split into facets
MAX_SERIES = 8

#: average advance of a DejaVu Sans character, in units of the font size (a little generous)
_CHAR_EM = 0.6


def is_missing(v: Any) -> bool:
    """None, NaN, NaT, pandas NA, or an empty string: a key the series does not set."""
    if v is None:
        return True
    if isinstance(v, str):
        return v.strip() == "" or v.strip().lower() in ("nan", "none", "<na>", "nat")
    try:
        return bool(v != v)  # NaN, NaT
    except (TypeError, ValueError):
        return False


def _text(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def short_keys(keys: Sequence[str]) -> dict[str, str]:
    """key -> the shortest trailing part of its dotted path that no other key ends with
    ("flows.0.count" -> "count"; "flows.0.cc" and "flows.1.cc" keep "0.cc" and "1.cc")."""
    out = {}
    for k in keys:
        parts = str(k).split(".")
        for n in range(1, len(parts) + 1):
            tail = ".".join(parts[-n:])
            clash = any(o != k and (str(o) == tail or str(o).endswith("." + tail)) for o in keys)
            if not clash:
                break
        out[k] = tail
    return out


def _part_names(values: Iterable[Any]) -> dict[str, str]:
    """Scenario names of a study's parts share the study prefix ("study/part"): keep the part."""
    names = [str(v) for v in values if not is_missing(v)]
    prefixes = {n.rsplit("/", 1)[0] for n in names if "/" in n}
    if len(prefixes) == 1 and all("/" in n for n in names):
        return {n: n.rsplit("/", 1)[1] for n in names}
    return {n: n for n in names}


def series_labels(rows: Sequence[Mapping[str, Any]], keys: Sequence[str] | None = None, sep: str = ", ") -> list[str]:
    """One label per row: ``short=value`` for each key whose value differs between the rows,
    joined by ``sep``. A missing value (None, NaN) leaves its key out of that row's label; the
    scenario name (key ``name``) is shown as the part name alone. Rows that all agree get ""."""
    rows = list(rows)
    if keys is None:
        keys = list(dict.fromkeys(k for r in rows for k in r))
    varying = []
    for k in keys:
        seen = {("" if is_missing(r.get(k)) else _text(r.get(k))) for r in rows}
        if len(seen) > 1:
            varying.append(k)
    short = short_keys(varying)
    parts = _part_names(r.get("name") for r in rows) if "name" in varying else {}
    out = []
    for r in rows:
        bits = []
        for k in varying:
            v = r.get(k)
            if is_missing(v):
                continue
            bits.append(parts.get(str(v), str(v)) if k == "name" else f"{short[k]}={_text(v)}")
        out.append(sep.join(bits))
    return out


def wrap(text: str, width_in: float, fontsize: float = 10.0) -> str:
    """``text`` broken at spaces into lines that fit ``width_in`` inches at ``fontsize`` points
    (existing line breaks kept)."""
    chars = max(12, int(width_in * 72.0 / (fontsize * _CHAR_EM)))
    return "\n".join(textwrap.fill(line, chars) if line else line for line in str(text).split("\n"))


def _fontsize(size: Any) -> float:
    from matplotlib.font_manager import FontProperties

    return float(FontProperties(size=size).get_size_in_points())


def wrap_for(ax_or_fig: Any, text: str, fontsize: Any = "medium", share: float = 1.0) -> str:
    """``text`` wrapped to ``share`` of the width of an axes (or a whole figure)."""
    if isinstance(ax_or_fig, Figure):
        width = ax_or_fig.get_figwidth() * 0.96
    else:
        fig = ax_or_fig.get_figure()
        width = fig.get_figwidth() * ax_or_fig.get_position().width
    return wrap(text, width * share, _fontsize(fontsize))


def legend_below(fig: Figure, handles: list, labels: list[str], title: str | None = None) -> Any:
    """A legend under the axes, outside them (constrained layout makes room), at most
    ``MAX_SERIES`` entries in up to four columns."""
    if not handles:
        return None
    handles, labels = handles[:MAX_SERIES], labels[:MAX_SERIES]
    longest = max((len(lb) for lb in labels), default=1)
    # an entry is its label plus about 9 characters' width: the handle (2 em), its pad (0.8 em)
    # and the column spacing (2 em)
    per_row = max(1, int(fig.get_figwidth() * 72 / (_fontsize("small") * _CHAR_EM * (longest + 9))))
    return fig.legend(
        handles,
        labels,
        title=title,
        fontsize="small",
        title_fontsize="small",
        loc="outside lower center",
        ncols=max(1, min(len(labels), 4, per_row)),
        frameon=False,
    )


def legend_right(ax: Any, max_chars: int = 18) -> Any:
    """The axes' legend outside its right edge (constrained layout makes room), at most
    ``MAX_SERIES`` entries; labels longer than ``max_chars`` would narrow the axes too much, so
    the only axes of a figure then gets its legend below instead."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return None
    fig = ax.get_figure()
    if max(len(lb) for lb in labels) > max_chars and len(fig.axes) == 1:
        return legend_below(fig, handles, labels)
    return ax.legend(
        handles[:MAX_SERIES],
        labels[:MAX_SERIES],
        fontsize="small",
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        frameon=False,
    )


def facet_grid(n: int, panel_w: float = 3.6, panel_h: float = 2.9, max_cols: int = 3, **kw: Any):
    """(figure, list of n axes) for n facets in rows of up to ``max_cols``; spare cells removed."""
    ncols = max(1, min(n, max_cols))
    nrows = math.ceil(n / ncols)
    fig = Figure(figsize=(panel_w * ncols + 0.6, panel_h * nrows + 1.2), layout="constrained")
    FigureCanvasAgg(fig)
    grid = fig.subplots(nrows, ncols, squeeze=False, **kw)
    axes = [grid[i // ncols, i % ncols] for i in range(n)]
    for i in range(n, nrows * ncols):
        grid[i // ncols, i % ncols].remove()
    return fig, axes


def _overlap(boxes: list) -> bool:
    return any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])


def _label_boxes(axis: Any, renderer: Any, pad: float) -> list:
    return [
        t.get_window_extent(renderer).padded(pad)
        for t in axis.get_majorticklabels()
        if t.get_visible() and t.get_text()
    ]


def _fix_axis(fig: Figure, axis: Any, rotate: bool, pad: float) -> None:
    """Rotate an x axis's labels upright (their boxes then stay narrow), then keep every k-th."""
    if not _overlap(_label_boxes(axis, fig.canvas.get_renderer(), pad)):
        return
    if rotate:
        axis.set_tick_params(labelrotation=90)
        fig.canvas.draw()
        if not _overlap(_label_boxes(axis, fig.canvas.get_renderer(), pad)):
            return
    locs = list(axis.get_majorticklocs())
    texts = [t.get_text() for t in axis.get_majorticklabels()]
    for k in range(2, max(3, len(locs))):
        axis.set_ticks(locs[::k], texts[::k])
        fig.canvas.draw()
        if not _overlap(_label_boxes(axis, fig.canvas.get_renderer(), pad)):
            return


# figures already tidied, with their size then: a second call (make, then the report) is free
_TIDIED: "weakref.WeakKeyDictionary[Figure, tuple]" = weakref.WeakKeyDictionary()


def tidy(fig: Figure) -> Figure:
    """Tick labels that overlap on the figure's canvas are turned upright (x axis), then thinned
    to every k-th (their positions and texts fixed from then on) until none overlap. Labels are
    given a few points' margin: a browser's font may run a little wider than matplotlib's."""
    size = tuple(fig.get_size_inches())
    if _TIDIED.get(fig) == size:
        return fig
    if fig.canvas is None or not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    fig.canvas.draw()
    pad = 3.0 * fig.dpi / 72.0
    for ax in fig.axes:
        _fix_axis(fig, ax.xaxis, True, pad)
        _fix_axis(fig, ax.yaxis, False, pad)
    _TIDIED[fig] = size
    return fig
