"""`ccbench algorithms` (cli/algorithms.py): what each backend runs, as a table and as JSON."""

from __future__ import annotations

import json

from conftest import run_ccbench as ccbench


def test_algorithms_json():
    p = ccbench("algorithms", "--json")
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    names = {a["name"] for a in data["sim"]}
    assert {"reno", "cubic"} <= names
    assert all(a.get("linux") for a in data["sim"])


def test_algorithms_table():
    p = ccbench("algorithms")
    assert p.returncode == 0 and "cubic" in p.stdout and "backend sim" in p.stdout
