"""The kernel backend's reading of /proc/stat (backends/kernel/hostcpu.py)."""

from __future__ import annotations

import pytest

from ccbench.backends.kernel.hostcpu import CpuTimes, read_cpu_times, steal_pct


def test_reads_the_aggregate_line_up_to_steal(tmp_path):
    p = tmp_path / "stat"
    # user nice system idle iowait irq softirq steal guest guest_nice; guest time is part of user
    p.write_text("cpu  100 2 30 800 5 0 3 60 40 0\ncpu0 50 1 15 400 2 0 1 30 20 0\n")
    assert read_cpu_times(p) == CpuTimes(total=1000, steal=60)


@pytest.mark.parametrize("text", ["", "intr 1 2 3\n", "cpu 1 2 3 4\n"])
def test_a_file_without_the_steal_field_gives_none(tmp_path, text):
    p = tmp_path / "stat"
    p.write_text(text)
    assert read_cpu_times(p) is None
    assert read_cpu_times(tmp_path / "missing") is None


def test_steal_share_is_stolen_ticks_over_all_ticks_between_readings():
    assert steal_pct(CpuTimes(1000, 60), CpuTimes(3000, 110)) == pytest.approx(2.5)
    assert steal_pct(None, CpuTimes(3000, 110)) is None
    assert steal_pct(CpuTimes(1000, 60), CpuTimes(1000, 60)) is None  # no time passed


def test_this_machine_reports_a_share_between_0_and_100():
    a = read_cpu_times()
    if a is None:
        pytest.skip("no /proc/stat steal field here")
    b = read_cpu_times()
    s = steal_pct(a, CpuTimes(b.total + 100, b.steal))
    assert s is not None and 0 <= s <= 100
