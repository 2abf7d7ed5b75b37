"""The commands' --help: every command lists its flags bare (no ``<bool>`` placeholder), and
rich markup leaves literal brackets such as ``[sweep]`` alone."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("command", [[], ["run"], ["sweep"], ["query"], ["demo"], ["algorithms"]])
def test_help_keeps_brackets_and_has_no_bool_placeholder(command):
    from typer.testing import CliRunner

    from ccbench.cli.app import app

    res = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert res.exit_code == 0, res.output
    assert "<bool>" not in res.output
    assert "--help" in res.output
    if command in (["run"], ["sweep"]):
        assert "[sweep]" in res.output  # rich markup would otherwise swallow it as a tag


def test_no_command_help_shows_a_bool_placeholder():
    """Every registered command (also those other modules add) lists its flags bare."""
    from typer.testing import CliRunner

    from ccbench.cli.app import app

    names = [c.name or c.callback.__name__ for c in app.registered_commands]
    assert {"run", "sweep", "query"} <= set(names)
    for name in names:
        res = CliRunner().invoke(app, [name, "--help"], env={"COLUMNS": "200", "NO_COLOR": "1"})
        assert res.exit_code == 0, (name, res.output)
        assert "<bool>" not in res.output, name
