"""``python -m ccbench.cli``: the same as the ``ccbench`` command."""

from .app import app

app()
