"""Legible output. Every built-in study's quick report, rendered in headless Chromium at 1300
px, keeps each figure legible: the axes cover at least half the figure, no legend or text
reaches outside the figure, no two tick labels of an axis overlap, and no text reads ``nan``.
And ``study run`` at 80 columns prints no table cell folded over more than two lines.

The figures are inline SVG from matplotlib, whose groups carry ids by kind (``axes_N``,
``legend_N``, ``text_N``, ``xtick_N``, ``ytick_N``; the first ``patch`` of an axes is its
background rectangle), so the page can be measured element by element.

The studies' quick runs take several minutes on a 2-core machine, so they run once per module
(the fixture below) and every test reads the same stores."""

from __future__ import annotations

import re

import pytest
from test_report import _chromium_or_skip

from ccbench.study.spec import builtin_studies
from conftest import ARTIFACTS, run_ccbench

STUDIES = [p.stem for p in builtin_studies()]

# Measures every figure of the page: a list of problems (strings), empty when all is legible.
MEASURE_JS = r"""
const tol = 1.5;
const out = [];
const inside = (r, f) => r.left >= f.left - tol && r.right <= f.right + tol
    && r.top >= f.top - tol && r.bottom <= f.bottom + tol;
const overlap = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5
    && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
const svgs = document.querySelectorAll('figure.plot > svg');
svgs.forEach((svg, i) => {
  const name = 'figure ' + (i + 1);
  const f = svg.getBoundingClientRect();
  const figArea = f.width * f.height;
  let axesArea = 0;
  const axes = svg.querySelectorAll('g[id^="axes_"]');
  axes.forEach(ax => {
    const bg = ax.querySelector(':scope > g[id^="patch_"]');
    if (bg) { const r = bg.getBoundingClientRect(); axesArea += r.width * r.height; }
    for (const kind of ['xtick_', 'ytick_']) {
      const boxes = [];
      ax.querySelectorAll(':scope g[id^="' + kind + '"] > g[id^="text_"]').forEach(t => {
        const r = t.getBoundingClientRect();
        if (r.width > 0 && r.height > 0 && (t.textContent || '').trim()) boxes.push([r, t.textContent.trim()]);
      });
      for (let a = 0; a < boxes.length; a++)
        for (let b = a + 1; b < boxes.length; b++)
          if (overlap(boxes[a][0], boxes[b][0]))
            out.push(name + ': ' + kind + ' labels overlap: ' + boxes[a][1] + ' / ' + boxes[b][1]);
    }
  });
  if (!axes.length) out.push(name + ': no axes');
  if (axesArea < 0.5 * figArea)
    out.push(name + ': axes cover ' + Math.round(100 * axesArea / figArea) + ' % of the figure');
  svg.querySelectorAll('g[id^="legend_"], g[id^="text_"]').forEach(g => {
    const r = g.getBoundingClientRect();
    if (r.width > 0 && !inside(r, f))
      out.push(name + ': ' + g.id + ' "' + (g.textContent || '').trim().slice(0, 60) + '" leaves the figure');
  });
  const text = Array.from(svg.querySelectorAll('text')).map(t => t.textContent).join(' | ');
  if (/\bnan\b/i.test(text)) out.push(name + ': text contains nan: ' + text.match(/[^|]*\bnan\b[^|]*/i)[0]);
});
return [svgs.length, out];
"""


@pytest.fixture(scope="module")
def study_reports(tmp_path_factory):
    """{study: store} of every built-in study's quick run (each run once)."""
    root = tmp_path_factory.mktemp("studies")
    out = {}
    for name in STUDIES:
        r = run_ccbench("study", "run", name, "--quick", "--out", root / name, "--quiet", "--workers", "2", timeout=600)
        assert r.returncode == 0, f"{name}: {r.stderr[-2000:]}"
        out[name] = root / name
        assert (root / name / "report.html").is_file()
    return out


def measure(path, width: int = 1300) -> tuple[int, list[str]]:
    """(figures, problems) of the report at ``path`` in headless Chromium ``width`` px wide."""
    chromium, driver_path = _chromium_or_skip()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for arg in (
        "--headless=new",
        "--disable-gpu",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        f"--window-size={width},1000",
    ):
        opts.add_argument(arg)
    drv = webdriver.Chrome(service=Service(driver_path), options=opts)
    try:
        drv.get(path.resolve().as_uri())
        n, problems = drv.execute_script(MEASURE_JS)
        return int(n), list(problems)
    finally:
        drv.quit()


@pytest.mark.parametrize("name", STUDIES)
def test_study_report_figures_are_legible(study_reports, name):
    path = study_reports[name] / "report.html"
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / f"report-{name}.html").write_bytes(path.read_bytes())
    n, problems = measure(path)
    assert n > 0, f"{name}: no figures"
    assert not problems, f"{name}: " + "\n".join(problems)


def test_the_measure_sees_a_bad_figure(tmp_path):
    """The checks can fail: a figure with a 24-entry legend inside it, a title running off the
    right edge, crowded tick labels and a nan label is flagged on each count."""
    import io

    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5, 3))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for i in range(24):
        ax.plot([0, 1], [i, i + 1], label=f"cubic (name=x/y, flows.0.count={i}, access.rate=nan)")
    ax.legend(loc="center left", bbox_to_anchor=(0.2, 0.5))
    ax.set_title("A title much too long for a figure of five inches that runs off the right edge of it")
    ax.set_xticks(range(12), [f"label number {i}" for i in range(12)])
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none"}):  # text as text, as the report writes it
        fig.savefig(buf, format="svg")  # as drawn: not through the report, which would tidy the ticks
    svg = buf.getvalue()
    path = tmp_path / "bad.html"
    path.write_text(
        f'<!DOCTYPE html><html><body><figure class="plot">{svg[svg.index("<svg") :]}</figure></body></html>'
    )
    n, problems = measure(path)
    text = "\n".join(problems)
    assert n == 1
    for expected in ("labels overlap", "leaves the figure", "contains nan"):
        assert expected in text, text


def test_study_run_tables_fit_80_columns(study_reports):
    """At 80 columns the published-vs-measured table takes the long layout: every line fits,
    and a cell continues onto at most one more line (its field name column is then empty)."""
    store = study_reports["vegas-vs-cubic"]  # runs already stored: only the tables are made
    r = run_ccbench("study", "run", "vegas-vs-cubic", "--quick", "--out", store, "--quiet", env={"COLUMNS": "80"})
    assert r.returncode == 0, r.stderr[-2000:]
    body = [ln for ln in r.stdout.splitlines() if ln.startswith("│")]
    assert body, r.stdout
    assert max(len(ln) for ln in r.stdout.splitlines() if ln[:1] in "┌│├└┏┃┡") <= 80, r.stdout
    run = 0
    for ln in body:
        cells = ln.strip("│").split("│")
        run = run + 1 if not cells[0].strip() else 0
        assert run <= 1, f"a cell folded over more than two lines:\n{r.stdout}"
    assert "flows.0." not in r.stdout  # swept keys shortened
    assert re.search(r"streams: count=1, cc=cubic", r.stdout), r.stdout
