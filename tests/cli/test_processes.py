"""Processes: a long simulation stops on Ctrl-C/SIGTERM within about a second, with
the conventional exit status; the simulator's events cap; sweep workers die with their sweep
process however it dies, and never start a run after it; `ccbench cleanup` finds leftover
workers and temporary directories; the kernel lock cannot be redirected or held by others.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ccbench import procs
from ccbench.scenario.model import Scenario
from ccbench.sweeps import execute as sweep_execute
from ccbench.sweeps import lock as sweep_lock
from conftest import ROOT

ENV = {**os.environ, "PYTHONPATH": str(ROOT / "python")}

#: ~10-20 s of simulation on one core: long enough to be interrupted in the middle.
LONG = """\
name = "long"
duration = "600s"
[bottleneck]
rate = "1Gbit"
rtt = "20ms"
[[flows]]
cc = "cubic"
count = 4
"""

LONG_STUDY = (
    LONG
    + """
[sweep]
"flows.0.cc" = ["cubic", "reno", "bbr", "vegas"]
"""
)


def ccbench(*args: str) -> list[str]:
    return [sys.executable, "-m", "ccbench.cli", *args]


def _children(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(d.name))
    return out


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _wait_for(pred, timeout: float, step: float = 0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return pred()


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


# ---- interrupt, events cap -------------------------------------------------------------------


@pytest.mark.parametrize("sig,status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_long_simulation_stops_within_a_second(tmp_path, sig, status):
    """Before: the signal took effect only when the simulator returned (SIGINT) or killed the
    process without an exit status of its own (SIGTERM)."""
    sc = tmp_path / "long.toml"
    sc.write_text(LONG)
    p = subprocess.Popen(ccbench("run", str(sc)), env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # the simulator's module is loaded when the backend checks the scenario, just before the run
    loaded = _wait_for(lambda: "_sim.abi3.so" in Path(f"/proc/{p.pid}/maps").read_text(), 60)
    assert loaded and p.poll() is None
    time.sleep(0.5)  # inside the simulation now
    t0 = time.monotonic()
    p.send_signal(sig)
    _, err = p.communicate(timeout=30)
    took = time.monotonic() - t0
    assert p.returncode == status, err
    assert took < 1.5, f"took {took:.2f} s to stop"
    assert "Traceback" not in err


def test_simulator_events_cap_is_a_clear_failure():
    from ccbench import _sim
    from ccbench.backends import sim as sim_backend

    sc = Scenario.from_dict(
        {"duration": "5s", "bottleneck": {"rate": "100Mbit", "rtt": "20ms"}, "flows": [{"cc": "cubic"}]}, source="t"
    )
    cfg = sc.sim_config()
    events = json.loads(_sim.run_json(json.dumps(cfg)))["run"]["events"]
    with pytest.raises(ValueError, match=rf"run exceeded {events // 2} events"):
        _sim.run_json(json.dumps({**cfg, "max_events": events // 2}))
    # the default cap changes nothing for a normal run (same report with an explicit huge cap)
    assert _sim.run_json(json.dumps({**cfg, "max_events": 10**15})) == _sim.run_json(json.dumps(cfg))

    # through the backend: a failed run with the message, no exception (the backend calls
    # run_columns; both entry points get the cap)
    real = {name: getattr(_sim, name) for name in ("run_json", "run_columns")}
    try:
        for name, fn in real.items():
            setattr(_sim, name, lambda text, fn=fn: fn(json.dumps({**json.loads(text), "max_events": 1000})))
        res = sim_backend.run(sc)
    finally:
        for name, fn in real.items():
            setattr(_sim, name, fn)
    assert not res.ok and "run exceeded 1000 events" in res.error


# ---- workers die with the sweep ----------------------------------------------------------------


def _start_sweep(tmp_path, *extra: str):
    study = tmp_path / "study.toml"
    study.write_text(LONG_STUDY)
    p = subprocess.Popen(
        ccbench("sweep", str(study), "--out", str(tmp_path / "out"), "--workers", "2", "--quiet", *extra),
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )

    def workers():
        found = [c for c in _children(p.pid) if _comm(c).startswith(procs.WORKER_COMM)]
        return found if len(found) >= 2 else None

    found = _wait_for(workers, timeout=30)
    if not found:
        p.kill()
        raise AssertionError(f"no workers: {p.communicate()[1][-2000:]}")
    time.sleep(1.0)  # the workers are inside their simulations now
    return p, found


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGHUP])
def test_workers_die_with_the_sweep_process(tmp_path, sig):
    """Before: after kill -9 (or SIGTERM, SIGHUP) of the sweep process its workers stayed for
    ever, blocked on a pipe."""
    p, workers = _start_sweep(tmp_path)
    assert all(_comm(w) == procs.worker_comm(p.pid) for w in workers)
    try:
        p.send_signal(sig)
        _, err = p.communicate(timeout=30)
        t0 = time.monotonic()
        gone = _wait_for(lambda: not [w for w in workers if procs.alive(w)], 5.0)
        assert gone, f"workers alive {time.monotonic() - t0:.1f} s after the sweep died"
        if sig != signal.SIGKILL:
            assert p.returncode == 128 + sig, err  # 143 for SIGTERM, 129 for SIGHUP
            assert "Traceback" not in err
    finally:
        for w in workers:
            if procs.alive(w):
                os.kill(w, signal.SIGKILL)


def _orphan_child(log: str, dead: int):
    from ccbench import backends

    sweep_execute.WORKER_STATE.update(parent=os.getppid(), sweep_pid=dead)

    def never(name):
        Path(log).write_text("a run started")
        raise AssertionError("unreachable")

    backends.get_backend = never
    sweep_execute.execute_run(
        Scenario.from_dict(
            {"duration": "1s", "bottleneck": {"rate": "10Mbit", "rtt": "20ms"}, "flows": [{"cc": "cubic"}]}, source="t"
        ),
        "kernel",
    )
    os._exit(0)


def test_worker_of_a_dead_sweep_starts_no_run(tmp_path):
    """A worker that gets the next queued run after its sweep process died exits instead
    (before: a kernel-backend worker started the next run)."""
    import multiprocessing as mp

    log = tmp_path / "log"
    child = mp.get_context("fork").Process(target=_orphan_child, args=(str(log), _dead_pid()))
    child.start()
    child.join(20)
    assert child.exitcode == 1
    assert not log.exists()


def test_cleanup_kills_leftover_workers_only(monkeypatch):
    """`ccbench cleanup` kills processes named ccbw-<pid> whose sweep process is gone (as a user
    without root it does only that) and leaves the workers of a live sweep alone."""
    from typer.testing import CliRunner

    from ccbench.backends.kernel import env
    from ccbench.cli.app import app

    def fake_worker(sweep_pid: int) -> subprocess.Popen:
        code = (
            "import ctypes, time; ctypes.CDLL(None).prctl(15, ctypes.c_char_p(%r), 0, 0, 0); "
            "print('ready', flush=True); time.sleep(120)" % procs.worker_comm(sweep_pid).encode()
        )
        p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        assert p.stdout.readline().strip() == "ready"
        return p

    orphan, live = fake_worker(_dead_pid()), fake_worker(os.getpid())
    try:
        assert (orphan.pid, int(_comm(orphan.pid)[len(procs.WORKER_COMM) :])) in procs.leftover_workers()
        monkeypatch.setattr(env, "is_root", lambda: False)
        r = CliRunner().invoke(app, ["cleanup"])
        assert r.exit_code == 0, r.output
        assert f"removed 1 leftover sweep worker processes: {orphan.pid}" in r.output
        assert orphan.wait(timeout=10) is not None
        assert live.poll() is None  # its sweep (this process) is alive
    finally:
        for p in (orphan, live):
            p.kill()
            p.wait()


# ---- /tmp/ccb* leftovers ----------------------------------------------------------------------


def test_cleanup_removes_temp_dirs_of_dead_runs_only(tmp_path):
    from ccbench.backends.kernel.topology import remove_stale_tmp_dirs

    dead = _dead_pid()
    stale = tmp_path / f"ccb{dead}x1a2b-k3j4"
    (stale / "sub").mkdir(parents=True)
    (stale / "link.json").write_text("{}")
    mine = tmp_path / f"ccb{os.getpid()}x1a2b-abcd"  # a run of a live process
    mine.mkdir()
    other = tmp_path / "ccbench-results"  # not a run's directory
    other.mkdir()
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep").write_text("x")
    planted = tmp_path / f"ccb{dead}x00-planted"
    planted.symlink_to(victim)
    removed = remove_stale_tmp_dirs(str(tmp_path))
    assert removed == [str(stale)]
    assert not stale.exists() and mine.is_dir() and other.is_dir()
    assert planted.is_symlink() and (victim / "keep").exists()  # never through a symlink


# ---- the kernel lock --------------------------------------------------------------------------

LOCK_PROBE = """
import sys
from ccbench.sweeps import lock
print(lock.KERNEL_LOCK_PATH)
try:
    with lock.machine_lock("kernel"):
        print("locked")
except lock.KernelLockError as e:
    print("refused:", e)
"""


def _lock_probe(lock_path) -> list[str]:
    env = dict(ENV)
    env.pop("CCBENCH_KERNEL_LOCK", None)
    if lock_path is not None:
        env["CCBENCH_KERNEL_LOCK"] = str(lock_path)
    r = subprocess.run([sys.executable, "-c", LOCK_PROBE], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def test_kernel_lock_is_not_in_tmp():
    env = dict(ENV)
    env.pop("CCBENCH_KERNEL_LOCK", None)
    r = subprocess.run(
        [sys.executable, "-c", "from ccbench.sweeps import lock; print(lock.KERNEL_LOCK_PATH)"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    path = Path(r.stdout.strip())
    assert path.parent == Path("/run/ccbench"), path


def test_kernel_lock_symlink_is_refused_not_followed(tmp_path):
    d = tmp_path / "lockdir"
    d.mkdir(mode=0o700)
    victim = tmp_path / "victim"  # where the planted symlink points: must not be created
    (d / "kernel.lock").symlink_to(victim)
    out = _lock_probe(d / "kernel.lock")
    assert out[0] == str(d / "kernel.lock")
    assert out[1].startswith("refused:") and "symlink" in out[1], out
    assert not victim.exists()
    # a symlinked directory is refused too
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (tmp_path / "linkdir").symlink_to(real)
    out = _lock_probe(tmp_path / "linkdir" / "kernel.lock")
    assert out[1].startswith("refused:") and "not a directory" in out[1], out
    assert not (real / "kernel.lock").exists()


def test_kernel_lock_refuses_shared_dirs_hard_links_and_foreign_files(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)  # like /tmp
    out = _lock_probe(shared / "kernel.lock")
    assert out[1].startswith("refused:") and "writable by other users" in out[1], out
    assert not (shared / "kernel.lock").exists()

    d = tmp_path / "private"
    d.mkdir(mode=0o700)
    target = tmp_path / "precious"
    target.write_text("do not touch\n")
    os.link(target, d / "kernel.lock")
    out = _lock_probe(d / "kernel.lock")
    assert out[1].startswith("refused:") and "hard links" in out[1], out
    assert target.read_text() == "do not touch\n"

    if os.geteuid() == 0:
        (d / "kernel.lock").unlink()
        (d / "kernel.lock").write_text("")
        os.chown(d / "kernel.lock", 65534, 65534)
        out = _lock_probe(d / "kernel.lock")
        assert out[1].startswith("refused:") and "belongs to uid 65534" in out[1], out

    ok = tmp_path / "ok"
    out = _lock_probe(ok / "kernel.lock")  # a missing directory is created private
    assert out[1] == "locked", out
    assert (ok.stat().st_mode & 0o777) == 0o700


def _hold(path: str, ready, release):
    sweep_lock.KERNEL_LOCK_PATH = Path(path)
    with sweep_lock.machine_lock("kernel"):
        ready.set()
        release.wait(30)


def test_kernel_lock_held_times_out_naming_the_holder(tmp_path, monkeypatch):
    """Before: a held lock made every kernel sweep wait silently for ever."""
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    ready, release = ctx.Event(), ctx.Event()
    path = tmp_path / "locks" / "kernel.lock"
    holder = ctx.Process(target=_hold, args=(str(path), ready, release))
    holder.start()
    try:
        assert ready.wait(20)
        monkeypatch.setattr(sweep_lock, "KERNEL_LOCK_PATH", path)
        monkeypatch.setattr(sweep_lock, "KERNEL_LOCK_TIMEOUT_S", 0.5)
        t0 = time.monotonic()
        with pytest.raises(sweep_lock.KernelLockError, match=rf"holds this machine.s lock \(pid {holder.pid}") as e:
            with sweep_lock.machine_lock("kernel"):
                pass
        assert 0.4 < time.monotonic() - t0 < 5
        assert "CCBENCH_KERNEL_LOCK_TIMEOUT" in str(e.value) and "\n" not in str(e.value)
    finally:
        release.set()
        holder.join(10)
    with sweep_lock.machine_lock("kernel"):  # released with its holder
        pass


# ---- kernel backend: a worker tears down and stops when the sweep is killed -----------------


def _kernel_missing() -> str | None:
    from ccbench.backends.kernel import env

    if not env.is_root():
        return "kernel backend tests need root (namespaces, TUN)"
    for ok, why in (env.tun_available(), env.netns_available()):
        if not ok:
            return why
    if env.iperf3_path() is None or env.link_binary() is None:
        return "iperf3 or ccbench-link missing (make system-deps, make build)"
    return None


@pytest.mark.kernel
@pytest.mark.skipif(_kernel_missing() is not None, reason=_kernel_missing() or "")
def test_kernel_sweep_killed_leaves_no_worker_and_starts_no_run(tmp_path):
    from pyroute2 import netns

    study = tmp_path / "k.toml"
    study.write_text("""
duration = "8s"
[bottleneck]
rate = "20Mbit"
rtt = "20ms"
[[flows]]
cc = "cubic"
[sweep]
"bottleneck.loss" = ["0%", "0.1%", "0.2%"]
""")
    env = {**ENV, "CCBENCH_KERNEL_LOCK": str(tmp_path / "lock" / "kernel.lock")}
    p = subprocess.Popen(
        ccbench("sweep", str(study), "--backend", "kernel", "--out", str(tmp_path / "o"), "--quiet"),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        worker = _wait_for(
            lambda: next((c for c in _children(p.pid) if _comm(c).startswith(procs.WORKER_COMM)), None), 30
        )
        assert worker, p.stderr.read() if p.poll() is not None else "no worker"
        ours = lambda: [n for n in netns.listnetns() if n.startswith(f"ccb{worker}x")]  # noqa: E731
        assert _wait_for(lambda: len(ours()) == 2, 30), "the run did not start"
        time.sleep(1.0)
        p.kill()
        p.wait()
        assert _wait_for(lambda: not procs.alive(worker), 10.0), "the worker outlived its sweep"
        assert ours() == []  # it tore its namespaces down (SIGTERM from PR_SET_PDEATHSIG)
        time.sleep(2.0)
        assert ours() == []  # and started no next run
    finally:
        if p.poll() is None:
            p.kill()


@pytest.mark.kernel
@pytest.mark.skipif(_kernel_missing() is not None, reason=_kernel_missing() or "")
def test_kernel_run_sigterm_exits_143_and_tears_down(tmp_path):
    """Before: SIGTERM of a kernel run exited 130, the status of Ctrl-C."""
    from pyroute2 import netns

    sc = tmp_path / "k.toml"
    sc.write_text('duration = "20s"\n[bottleneck]\nrate = "20Mbit"\nrtt = "20ms"\n[[flows]]\ncc = "cubic"\n')
    p = subprocess.Popen(
        ccbench("run", str(sc), "--backend", "kernel"),
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    ours = lambda: [n for n in netns.listnetns() if n.startswith(f"ccb{p.pid}x")]  # noqa: E731
    try:
        assert _wait_for(lambda: len(ours()) == 2, 30), "the run did not start"
        time.sleep(1.0)
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=30)
        assert p.returncode == 143, err
        assert ours() == []
    finally:
        if p.poll() is None:
            p.kill()
