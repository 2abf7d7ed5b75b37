"""Tables that fit the terminal: one row per record when the terminal is wide, else a long
layout (one line per field, the records separated by rules), so no cell is folded into a
narrow column over many lines.

    print_table(console, "title", [{"part": ..., "metric": ..., "value": ...}, ...])
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Optional, Sequence

__all__ = ["WIDE", "print_table", "short_cell"]

#: the narrowest terminal (columns) that gets the wide layout
WIDE = 100

_DOTTED_KEY = re.compile(r"(?<![\w.])((?:[A-Za-z_][\w-]*|\d+)(?:\.(?:[A-Za-z_][\w-]*|\d+))+)(?==)")


def short_cell(text: str) -> str:
    """``flows.0.count=1, flows.0.cc=cubic`` -> ``count=1, cc=cubic``: each dotted key of a
    ``key=value`` list shortened to its last part (kept whole where two keys would clash)."""
    keys = list(dict.fromkeys(_DOTTED_KEY.findall(text)))
    if not keys:
        return text
    last = {k: k.rsplit(".", 1)[-1] for k in keys}
    counts: dict[str, int] = {}
    for v in last.values():
        counts[v] = counts.get(v, 0) + 1
    return _DOTTED_KEY.sub(lambda m: last[m.group(1)] if counts[last[m.group(1)]] == 1 else m.group(1), text)


def print_table(
    console: Any,
    title: str,
    rows: Sequence[Mapping[str, Any]],
    *,
    right: Sequence[str] = (),
    no_wrap: Sequence[str] = (),
    width: Optional[int] = None,
) -> None:
    """``rows`` (dicts with the same keys, values as text with rich markup) as one table when
    the console is at least WIDE columns, else in the long layout: one line per field (name,
    value), the first field in bold, a rule after each record. ``right``: columns right-aligned
    in the wide layout; ``no_wrap``: columns never folded there."""
    from rich.table import Table

    if not rows:
        return
    cols = list(rows[0])
    width = width or console.width
    if width >= WIDE:
        t = Table(title=title, title_justify="left")
        for c in cols:
            t.add_column(c, overflow="fold", no_wrap=c in no_wrap, justify="right" if c in right else "left")
        for r in rows:
            t.add_row(*[str(r[c]) for c in cols])
        console.print(t)
        return
    t = Table(title=title, title_justify="left", show_header=False)
    t.add_column("field", style="dim", no_wrap=True)
    t.add_column("value", overflow="fold")
    for r in rows:
        for i, c in enumerate(cols):
            value = _one_line(r[c])
            t.add_row(
                f"[bold]{c}[/]" if i == 0 else c,
                f"[bold]{value}[/]" if i == 0 else value,
                end_section=i == len(cols) - 1,
            )
    console.print(t)


def _one_line(v: Any) -> str:
    return " ".join(str(v).split("\n"))
