"""`ccbench run` imports pyarrow/numpy during the simulation, not before it (ccbench/backends/preload.py:
the imports would otherwise add to the fixed cost around a run), and the run's results are the
same either way."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import ROOT

ENV = dict(os.environ, PYTHONPATH=str(ROOT / "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _py(code: str) -> str:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=ENV, cwd=ROOT
    ).stdout.strip()


def test_cli_and_sim_backend_load_without_pyarrow_or_numpy():
    out = _py(
        "import sys, ccbench, ccbench.cli, ccbench.backends.sim, ccbench.api\n"
        "print(sorted(m for m in ('pyarrow', 'numpy', 'pandas') if m in sys.modules))"
    )
    assert out == "[]"


def test_preload_thread_imports_while_caller_waits_on_nothing():
    # the thread imports what is missing; a second start() with everything loaded does nothing
    out = _py(
        "import sys\nfrom ccbench.backends import preload\n"
        "t = preload.start(('json', 'ccbench.results'))\n"
        "t.join()\n"
        "print('ccbench.results' in sys.modules, 'pyarrow' in sys.modules, preload.start(('json',)))"
    )
    assert out == "True True None"


def test_preload_failure_is_left_to_the_callers_import():
    out = _py(
        "from ccbench.backends import preload\n"
        "t = preload.start(('ccbench_no_such_module_x',)); t.join()\n"
        "try:\n    import ccbench_no_such_module_x\nexcept ImportError as e:\n    print(type(e).__name__)"
    )
    assert out == "ModuleNotFoundError"


def test_run_through_the_cli_gives_the_same_tables_as_the_api(tmp_path):
    toml = tmp_path / "s.toml"
    toml.write_text(
        'duration = "2s"\nseed = 3\n[bottleneck]\nrate = "10Mbit/s"\nrtt = "20ms"\n[[flows]]\ncc = "cubic"\ncount = 2\n'
    )
    subprocess.run(
        [sys.executable, "-m", "ccbench.cli", "run", str(toml), "--out", str(tmp_path / "o")],
        check=True,
        env=ENV,
        cwd=ROOT,
        capture_output=True,
    )
    import ccbench

    stored = ccbench.load(tmp_path / "o")
    direct = ccbench.run(toml)
    a = stored.flows.sort_values("flow_id").reset_index(drop=True)
    b = direct.flows.sort_values("flow_id").reset_index(drop=True)
    assert list(a["goodput_bps"]) == list(b["goodput_bps"]) and a["goodput_bps"].min() > 0
    assert len(stored.series) == len(direct.series) > 0
