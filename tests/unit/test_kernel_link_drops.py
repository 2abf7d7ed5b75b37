"""The kernel backend's `drops` column from ccbench-link's report: every queue drop of a
direction, the bottleneck's and its access links', as the simulator counts every link's."""

from __future__ import annotations

from ccbench.backends.kernel.backend import queue_drops


def test_queue_drops_add_the_access_links_to_the_bottleneck():
    without = {"dropped": 3, "access": None}
    assert queue_drops(without) == 3
    with_access = {"dropped": 3, "access": {"entry": {"dropped": 20}, "exit": {"dropped": 1}}}
    assert queue_drops(with_access) == 3 + 20 + 1
    assert queue_drops({}) == 0  # a direction the emulator did not report
