"""The ns-3 backend: the same scenario on ns-3 3.44 (the ``ns3`` wheel's C++ SDK), through a small
C++ program (ccbench_ns3.cc beside this file) compiled on first use.

``pip install --no-deps ns3==3.44.post0`` (``make ns3``) installs the SDK: headers under
``site-packages/ns3/include/ns3`` and ``libns3.44-*.so`` under ``site-packages/ns3/lib64``. The
program is built with g++ into a cache directory keyed by the hash of its source and of the SDK
path (``$CCBENCH_CACHE`` or ``~/.cache/ccbench``), once per machine; a lock keeps parallel sweep
workers from building it twice. ``run(scenario)`` writes the scenario in the program's line
format, runs it, and turns its JSON report into the common ``flows``, ``runs``, ``series``,
``link_series`` and ``counters`` tables through ``build_result``: null where ns-3 does not
measure. Every ns-3 setting the program changes, and why: docs/ns3-backend.md.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Optional

from ...scenario.errors import ScenarioError
from ...scenario.model import Scenario

__all__ = [
    "NAME",
    "NS3_VERSION",
    "ALGORITHMS",
    "NS3_AQMS",
    "MAX_FLOWS",
    "run",
    "check",
    "algorithms",
    "sdk_dir",
    "binary",
    "Ns3Unavailable",
]

NAME = "ns3"
#: The ns-3 release the program is written against (the wheel ``ns3==3.44.post0``).
NS3_VERSION = "3.44"
INSTALL_HINT = "`make ns3` (pip install --no-deps ns3==3.44.post0 into the venv)"
GXX_HINT = "g++ with C++20 on PATH (`apt-get install g++`), or CXX=/path/to/g++"
SOURCE = Path(__file__).resolve().parent / "ccbench_ns3.cc"
LIBS = ("core", "network", "internet", "point-to-point", "applications", "traffic-control", "internet-apps")

#: ccbench name -> (ns-3 TypeId, the Linux module of the same algorithm, notes). The names are
#: Linux's (tcp_<name>.ko) where Linux has the algorithm.
ALGORITHMS: dict[str, tuple[str, str, str]] = {
    "reno": ("ns3::TcpLinuxReno", "tcp_cong.c (reno)", "ns-3's port of Linux Reno (per-ACK cwnd growth as Linux)"),
    "cubic": ("ns3::TcpCubic", "net/ipv4/tcp_cubic.c", "beta 0.7, C 0.4, fast convergence, TCP friendliness, HyStart"),
    "bbr": ("ns3::TcpBbr", "net/ipv4/tcp_bbr.c (BBR v1)", "BBR v1; always paced, as Linux's BBR"),
    "vegas": ("ns3::TcpVegas", "net/ipv4/tcp_vegas.c", "alpha 2, beta 4, gamma 1"),
    "westwood": (
        "ns3::TcpWestwoodPlus",
        "net/ipv4/tcp_westwood.c",
        "Westwood+ (Tustin filter), as Linux's tcp_westwood",
    ),
    "highspeed": ("ns3::TcpHighSpeed", "net/ipv4/tcp_highspeed.c", "RFC 3649 HighSpeed TCP"),
    "hybla": ("ns3::TcpHybla", "net/ipv4/tcp_hybla.c", "reference RTT 50 ms"),
    "illinois": ("ns3::TcpIllinois", "net/ipv4/tcp_illinois.c", "delay-based alpha/beta"),
    "scalable": ("ns3::TcpScalable", "net/ipv4/tcp_scalable.c", "AI 50, MD 0.125 (Linux: 50, 1/8)"),
    "yeah": ("ns3::TcpYeah", "net/ipv4/tcp_yeah.c", "YeAH-TCP"),
    "htcp": ("ns3::TcpHtcp", "net/ipv4/tcp_htcp.c", "H-TCP"),
    "bic": ("ns3::TcpBic", "net/ipv4/tcp_bic.c", "BIC, beta 0.8"),
    "veno": ("ns3::TcpVeno", "net/ipv4/tcp_veno.c", "TCP Veno, beta 3"),
    "lp": ("ns3::TcpLp", "net/ipv4/tcp_lp.c", "TCP Low Priority"),
    "dctcp": ("ns3::TcpDctcp", "net/ipv4/tcp_dctcp.c", "needs ECN marking (ecn = true and an AQM that marks)"),
    "ledbat": ("ns3::TcpLedbat", "none (RFC 6817; not in Linux)", "LEDBAT, target delay 100 ms"),
}

#: Queue disciplines ns-3 has (ccbench.scenario.aqm names); ``fq`` (Linux sch_fq) has no ns-3 counterpart.
NS3_AQMS = ("droptail", "codel", "fq_codel", "pie", "red")
#: Each connection is two ns-3 nodes with their own access links; beyond this ns-3 takes
#: minutes just to build the topology.
MAX_FLOWS = 2000


class Ns3Unavailable(ScenarioError):
    """The wheel or the compiler is missing, or the program does not build: the ``backend`` key,
    with the install line."""

    def __init__(self, problem: str, expected: str = INSTALL_HINT):
        super().__init__(None, "backend", problem, expected)

    def __reduce__(self):
        return (Ns3Unavailable, (self.problem, self.expected))


# --------------------------------------------------------------------------------------------
# the SDK and the program


def sdk_dir() -> Optional[Path]:
    """The wheel's ``site-packages/ns3`` directory, or ``$CCBENCH_NS3_SDK`` when set (and then
    only that); None if there is no SDK there."""
    env = os.environ.get("CCBENCH_NS3_SDK")
    cands = [Path(env)] if env else []
    seen: set = set()
    for p in [] if env else [sysconfig.get_paths().get("purelib"), sysconfig.get_paths().get("platlib"), *sys.path]:
        if p and p not in seen:
            seen.add(p)
            cands.append(Path(p) / "ns3")
    for c in cands:
        if (c / "include" / "ns3" / "core-module.h").is_file() and (c / "lib64").is_dir():
            return c
    return None


def _cache_root() -> Path:
    env = os.environ.get("CCBENCH_CACHE")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ccbench"


def _compiler() -> Optional[str]:
    cxx = os.environ.get("CXX")
    return shutil.which(cxx) if cxx else (shutil.which("g++") or shutil.which("c++"))


def problem() -> Optional[str]:
    """Why the backend cannot run here (no wheel, no compiler), or None."""
    if sdk_dir() is None:
        return f"the ns-3 {NS3_VERSION} SDK (the ns3 wheel) is not installed in this Python environment"
    if _compiler() is None:
        return "no C++ compiler (g++) to build the ns-3 program"
    return None


@functools.lru_cache(maxsize=1)
def binary() -> Path:
    """The compiled program, building it on first use (Ns3Unavailable if it cannot be built)."""
    why = problem()
    if why:
        raise Ns3Unavailable(why, GXX_HINT if "compiler" in why else INSTALL_HINT)
    sdk = sdk_dir()
    cxx = _compiler()
    src = SOURCE.read_bytes()
    key = hashlib.sha256(src + b"\0" + str(sdk).encode() + b"\0" + cxx.encode()).hexdigest()[:16]
    out_dir = _cache_root() / "ns3" / key
    exe = out_dir / "ccbench_ns3"
    if exe.is_file():
        return exe
    out_dir.mkdir(parents=True, exist_ok=True)
    with open(out_dir / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build per machine, however many workers ask
        if exe.is_file():
            return exe
        tmp = out_dir / f"ccbench_ns3.{os.getpid()}.tmp"
        lib = sdk / "lib64"
        cmd = [
            cxx,
            "-std=c++20",
            "-O2",
            f"-I{sdk / 'include'}",
            str(SOURCE),
            "-o",
            str(tmp),
            f"-L{lib}",
            f"-Wl,-rpath,{lib}",
            *(f"-lns{NS3_VERSION}-{x}" for x in LIBS),
        ]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode:
            tmp.unlink(missing_ok=True)
            lines = [ln for ln in p.stderr.splitlines() if "error" in ln or "cannot find" in ln]
            err = "; ".join(lines)[:1500] or p.stderr[-1500:]
            raise Ns3Unavailable(
                f"building the ns-3 program failed: {err}",
                f"a working g++ (C++20) and the ns3=={NS3_VERSION}.post0 wheel",
            )
        os.replace(tmp, exe)
    return exe


# --------------------------------------------------------------------------------------------
# the backend interface


def algorithms() -> list[dict]:
    """``[{"name", "linux", "notes"}]``: ns-3's algorithms under our (Linux's) names."""
    return [
        {"name": n, "linux": linux, "notes": f"{tid} (ns-3 {NS3_VERSION}): {notes}"}
        for n, (tid, linux, notes) in ALGORITHMS.items()
    ]


def _non_default(model, field: str):
    """The value of ``field`` on ``model`` if the model has it and it differs from its default
    (a key this backend does not serve, e.g. ``bottleneck.link``), else None."""
    fields = getattr(type(model), "model_fields", {})
    if field not in fields:
        return None
    v = getattr(model, field, None)
    return v if v != fields[field].default and v not in (None, "") else None


def check(scenario: Scenario) -> None:
    """Raise ScenarioError (every problem, the first one's key) for what ns-3 cannot run here."""
    problems: list[tuple[Optional[str], str, Optional[str]]] = []
    why = problem()
    if why:
        problems.append(("backend", why, GXX_HINT if "compiler" in why else INSTALL_HINT))
    b = scenario.bottleneck
    link = _non_default(b, "link")
    if link is not None:
        problems.append(
            (
                "bottleneck.link",
                f"the ns3 backend runs wired point-to-point links only, not link = {json.dumps(link)}",
                "the default wired link (the sim backend runs the others)",
            )
        )
    if _non_default(scenario, "wifi") is not None:
        problems.append(("wifi", "the ns3 backend has no Wi-Fi link model", "no [wifi] table"))
    trace = _non_default(b, "trace")
    if trace is not None:
        problems.append(
            (
                "bottleneck.trace",
                "the ns3 backend cannot replay delivery traces (Mahimahi)",
                'trace = "" (the sim backend runs traces)',
            )
        )
    if b.aqm not in NS3_AQMS:
        problems.append(
            (
                "bottleneck.aqm",
                f"ns-3 {NS3_VERSION} has no '{b.aqm}' queue discipline (Linux sch_fq's pacing fair queue)",
                " or ".join(NS3_AQMS),
            )
        )
    given = b.aqm_params or {}
    if b.aqm == "fq_codel" and "memory_limit" in given:
        problems.append(
            (
                "bottleneck.aqm_params.memory_limit",
                "ns-3's FqCoDelQueueDisc has no memory limit (only the packet limit)",
                "no memory_limit on the ns3 backend",
            )
        )
    if b.aqm == "pie" and scenario.aqm_wire.get("bytemode"):
        problems.append(
            (
                "bottleneck.aqm_params.bytemode",
                "ns-3's PieQueueDisc has no byte mode",
                "bytemode = false on the ns3 backend",
            )
        )
    if scenario.n_flows > MAX_FLOWS:
        problems.append(
            (
                "flows",
                f"{scenario.n_flows} connections: the ns3 backend builds two hosts with "
                f"their own access links per connection, and stops at {MAX_FLOWS}",
                f"at most {MAX_FLOWS} connections (the sim backend runs 100 000)",
            )
        )
    for i, g in enumerate(scenario.flows):
        if g.cc not in ALGORITHMS:
            problems.append((f"flows.{i}.cc", f"ns-3 {NS3_VERSION} has no '{g.cc}'", "one of " + ", ".join(ALGORITHMS)))
        if g.access_rate_bps is not None:
            problems.append(
                (
                    f"flows.{i}.access_rate",
                    "the ns3 backend gives every host the scenario's access rate",
                    "access.rate alone (the sim and kernel backends run per-flow rates)",
                )
            )
    if problems:
        k, p, e = problems[0]
        raise ScenarioError(scenario.source, k, p, e, problems)


def config_text(scenario: Scenario) -> str:
    """The program's input: one ``key value ...`` line per setting, one ``flow`` line per
    connection (ids, starts with start_jitter, as the simulator expands them)."""
    cfg = scenario.sim_config()
    b = cfg["bottleneck"]
    loss = b["loss"]
    lines = [
        f"duration_ns {cfg['duration_ns']}",
        f"seed {cfg['seed']}",
        f"sample_ns {cfg['sample_interval_ns']}",
        f"rate_bps {b['rate_bps']}",
        f"rtt_ns {b['rtt_ns']}",
        f"jitter {b['jitter_ns']} {b['jitter_dist']} {int(b['reorder'])}",
        "loss {} {!r} {!r} {!r} {!r}".format(
            loss["model"],
            float(loss.get("p") or 0.0),
            float(loss.get("r") or 0.0),
            float(loss.get("h") or 0.0),
            float(loss.get("k", 1.0)),
        ),
        f"impair {b['impair']}",
        "buffer "
        + (
            "packets {}".format(b["buffer"]["packets"])
            if "packets" in b["buffer"]
            else "bytes {}".format(b["buffer"]["bytes"])
        ),
        f"aqm {b['aqm']}",
    ]
    for k, v in (b.get("aqm_params") or {}).items():
        lines.append(f"aqm_param {k} {int(v) if isinstance(v, bool) else v!r}")
    a = cfg["access"]
    lines.append(f"access {a['rate_bps'] or 0} {a['delay_ns']}")
    lines.append(f"ping_ns {cfg['probe']['ping_interval_ns']}")
    for f in cfg["flows"]:
        size = -1 if f["size_bytes"] is None else f["size_bytes"]
        lines.append(
            f"flow {f['id']} {f['group']} {f['cc']} {f['start_ns']} {f['rwnd_bytes']} {size} "
            f"{int(f['pacing'])} {int(f['timestamps'])} {int(f.get('ecn', False))} "
            f"{int(f.get('direction') == 'reverse')}"
        )
    return "\n".join(lines) + "\n"


def _report(scenario: Scenario) -> dict:
    exe = binary()
    with tempfile.NamedTemporaryFile("w", suffix=".cfg", prefix="ccbench-ns3-", delete=False) as fh:
        fh.write(config_text(scenario))
        path = fh.name
    try:
        p = subprocess.run([str(exe), path], capture_output=True, text=True)
    finally:
        os.unlink(path)
    if p.returncode:
        raise RuntimeError(f"ccbench_ns3 exited {p.returncode}: {p.stderr.strip()[-1500:]}")
    return json.loads(p.stdout)


def run(scenario: Scenario):
    """Run on ns-3. A failure of the program gives a RunResult with status "failed"; a missing
    wheel or compiler raises Ns3Unavailable (check() refuses it first)."""
    from ...results.run_result import build_result, failed_result

    binary()  # build outside the timed part: the first run on a machine compiles (~5 s)
    t0 = time.perf_counter()
    try:
        report = _report(scenario)
    except (RuntimeError, ValueError, OSError) as e:
        return failed_result(scenario, NAME, str(e), time.perf_counter() - t0)
    wall = time.perf_counter() - t0
    run_extra = dict(report.get("run", {}))
    result = build_result(
        scenario,
        NAME,
        report.get("flows", []),
        report.get("series"),
        run_extra,
        wall,
        link_series=report.get("link_series"),
        counters=report.get("counters"),
    )
    result.links = report.get("links", [])
    return result
