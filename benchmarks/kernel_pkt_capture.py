"""Stand-in for benchmarks/kernel_capture/kernel_pkt_capture.py, where the capture tool lives.

tests/test_kernel_paws_replay.py and tests/test_kernel_setup_packets.py put benchmarks/ on
sys.path and import `kernel_pkt_capture`; this file loads the real module under that name. Delete
it once those tests put benchmarks/kernel_capture on sys.path instead.
"""

import importlib.util
import sys
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    __name__, Path(__file__).resolve().parent / "kernel_capture" / "kernel_pkt_capture.py"
)
_module = importlib.util.module_from_spec(_spec)
sys.modules[__name__] = _module
_spec.loader.exec_module(_module)
