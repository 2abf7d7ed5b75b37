"""The example notebooks run from top to bottom and show what they say they show.

The kernel is the one of the interpreter running pytest: jupyter_client starts the "python3"
kernel with sys.executable (the venv's python, where ccbench is installed), so no kernelspec
needs installing. The notebook's working directory is a temporary directory (its sweep store
lands there, not in the repository)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import ROOT

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

EXAMPLES = ROOT / "examples"


def _execute(name: str, workdir: Path, extra: str | None = None):
    """Run the notebook; ``extra``: a code cell appended for the test (to read its variables)."""
    nb = nbformat.read(EXAMPLES / name, as_version=4)
    if extra is not None:
        nb.cells.append(nbformat.v4.new_code_cell(extra))
    client = nbclient.NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(workdir)}}
    )
    client.execute()  # raises CellExecutionError (with the traceback) if a cell fails
    return nb


def _outputs(cell) -> list[dict]:
    return list(cell.get("outputs", []))


def _data(cell, mime: str) -> str:
    return "".join(str(o.get("data", {}).get(mime, "")) for o in _outputs(cell))


def test_quickstart_notebook_runs(tmp_path):
    nb = _execute("quickstart.ipynb", tmp_path, extra="print(table.to_json(orient='records'))")
    code = [c for c in nb.cells if c.cell_type == "code"]
    rows = json.loads("".join(o.get("text", "") for o in _outputs(code.pop())))
    for c in code:
        assert c.get("execution_count") is not None, c.source  # every cell ran
        assert not [o for o in _outputs(c) if o.get("output_type") == "error"], c.source
    sweep_cell, table_cell, figure_cell = code[0], code[1], code[2]

    # the sweep's Results render as HTML, naming the swept columns
    html = _data(sweep_cell, "text/html")
    assert html and "flows.0.cc" in html and "bottleneck.loss" in html

    # the table: one row per (cc, loss) cell of the 2 x 2 grid, with mean and CI columns
    table = _data(table_cell, "text/html")
    for column in ("cc", "loss_pct", "goodput_mbps", "ci_lo", "ci_hi", "n", "mathis_mbps"):
        assert f">{column}<" in table, column
    assert table.count("</tr>") == 1 + 4  # header + 4 cells
    for cc in ("cubic", "reno"):
        assert table.count(f">{cc}<") == 2

    # the numbers: 4 repeats per cell; the interval holds the mean; goodput below the link's
    # payload rate (20 Mbit/s x 1448/1500); and at 10x the loss rate every algorithm gets
    # less (Mathis: about 1/sqrt(10) of it)
    assert len(rows) == 4 and all(r["n"] == 4 for r in rows)
    for r in rows:
        assert r["ci_lo"] <= r["goodput_mbps"] <= r["ci_hi"]
        assert 0 < r["goodput_mbps"] <= 20 * 1448 / 1500 * 1.01
    by = {(r["cc"], r["loss_pct"]): r["goodput_mbps"] for r in rows}
    for cc in ("cubic", "reno"):
        assert by[(cc, 1.0)] < by[(cc, 0.1)]
    assert {r["loss_pct"] for r in rows} == {0.1, 1.0}

    # one figure, drawn as an image
    assert any("image/png" in o.get("data", {}) for o in _outputs(figure_cell))

    # the store went to the notebook's working directory
    assert (tmp_path / "quickstart-results" / "runs").is_dir()
