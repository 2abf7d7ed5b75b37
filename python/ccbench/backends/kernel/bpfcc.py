"""Congestion controls the running kernel lacks, as BPF struct_ops ports (backends/kernel/bpf/).

A distribution kernel often ships only reno, cubic and bbr. Where the kernel supports BPF
``tcp_congestion_ops`` (BTF at /sys/kernel/btf/vmlinux), the backend compiles our port of the
Linux module on first use (clang ``-target bpf`` against a ``vmlinux.h`` that bpftool generates
from the running kernel's BTF), caches the object under a key of the source, the kernel's BTF
and the compiler, and registers it with ``bpftool struct_ops register`` under the name
``ccb_<algorithm>``, which no built-in module uses. A scenario's ``cc = "vegas"`` runs the
kernel's own module when it has one and the port otherwise (``flows.cc_impl`` says which).

Registration is shared between processes: each run that uses a port leaves a holder file named
by its pid under HOLDERS_DIR and unregisters the port on exit only if no other live process
holds it; ``ccbench kernel cleanup`` unregisters ports whose holders are all gone.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
from pathlib import Path
from typing import Iterator, Optional

from . import env

SOURCE_DIR = Path(__file__).resolve().parent / "bpf"
#: The ports: scenario name -> source file in SOURCE_DIR (every ccb_<name>.bpf.c there); each
#: registers with the kernel as ccb_<name>.
PORTS = {p.name[len("ccb_") : -len(".bpf.c")]: p.name for p in sorted(SOURCE_DIR.glob("ccb_*.bpf.c"))}
BTF_PATH = Path("/sys/kernel/btf/vmlinux")
HELPERS_HEADER = Path("/usr/include/bpf/bpf_helpers.h")
CACHE_DIR = Path(os.environ.get("CCBENCH_BPF_CACHE") or Path.home() / ".cache" / "ccbench" / "bpf")
HOLDERS_DIR = Path(os.environ.get("CCBENCH_BPF_HOLDERS") or "/run/ccbench/bpf")
NAME_PREFIX = "ccb_"


class BpfError(RuntimeError):
    """A port could not be built or registered; the message names the algorithm and why."""


def registered_name(cc: str) -> str:
    return NAME_PREFIX + cc


def missing() -> Optional[str]:
    """Why BPF congestion controls cannot be built and loaded here (None: they can)."""
    if not env.is_root():
        return "loading a BPF congestion control needs root"
    if not BTF_PATH.exists():
        return f"the kernel exposes no BTF ({BTF_PATH} missing: CONFIG_DEBUG_INFO_BTF off)"
    for tool, pkg in (("clang", "clang"), ("bpftool", "bpftool")):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Debian package {pkg}; `make install` as root)"
    if not HELPERS_HEADER.exists():
        return f"{HELPERS_HEADER} missing (Debian package libbpf-dev; `make install` as root)"
    return None


def implementation(cc: str, builtin: list[str]) -> Optional[tuple[str, str]]:
    """(name to give the kernel, "builtin" | "bpf") for a scenario's algorithm, or None if this
    kernel can run it neither way. A port that is already registered counts as available."""
    if cc in builtin:
        return cc, "builtin"
    if cc in PORTS and (registered_name(cc) in builtin or missing() is None):
        return registered_name(cc), "bpf"
    return None


def _digest(*parts: bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(hashlib.sha256(p).digest())
    return h.hexdigest()[:20]


def _compiler_version() -> bytes:
    return subprocess.run(["clang", "--version"], capture_output=True, check=True).stdout


def build(cc: str) -> Path:
    """The compiled object of ``cc``'s port, from the cache or compiled now."""
    if cc not in PORTS:
        raise BpfError(f"{cc}: no BPF port (ports: {', '.join(sorted(PORTS))})")
    why = missing()
    if why:
        raise BpfError(f"{cc}: {why}")
    btf = BTF_PATH.read_bytes()
    sources = sorted(SOURCE_DIR.glob("*.[ch]"))
    key = _digest(btf, _compiler_version(), *(p.name.encode() + p.read_bytes() for p in sources))
    out = CACHE_DIR / key
    obj = out / f"{registered_name(cc)}.o"
    if obj.is_file():
        return obj
    out.mkdir(parents=True, exist_ok=True)
    header = out / "vmlinux.h"
    if not header.is_file():
        r = subprocess.run(
            ["bpftool", "btf", "dump", "file", str(BTF_PATH), "format", "c"], capture_output=True, text=True
        )
        if r.returncode != 0:
            raise BpfError(f"{cc}: bpftool could not dump the kernel's BTF: {_first_line(r.stderr)}")
        tmp = header.with_suffix(f".{os.getpid()}")
        tmp.write_text(r.stdout)
        tmp.replace(header)
    tmp_obj = obj.with_suffix(f".{os.getpid()}.o")
    r = subprocess.run(
        ["clang", "-O2", "-g", "-target", "bpf", "-D__TARGET_ARCH_x86"]
        + ["-I", str(out), "-I", str(SOURCE_DIR), "-c", str(SOURCE_DIR / PORTS[cc]), "-o", str(tmp_obj)],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        tmp_obj.unlink(missing_ok=True)
        raise BpfError(f"{cc}: the BPF port did not compile: {_first_error(r.stderr)}")
    tmp_obj.replace(obj)
    return obj


def _first_line(text: str) -> str:
    return next((ln.strip() for ln in text.splitlines() if ln.strip()), "no message")


def _first_error(text: str) -> str:
    return next((ln.strip() for ln in text.splitlines() if "error" in ln), _first_line(text))


def _holders(name: str) -> Path:
    return HOLDERS_DIR / name


def _live_holders(name: str) -> list[int]:
    """Pids holding the port, after removing the files of processes that are gone."""
    live = []
    d = _holders(name)
    for p in d.glob("*") if d.is_dir() else []:
        try:
            pid = int(p.name)
            os.kill(pid, 0)
            live.append(pid)
        except (ValueError, ProcessLookupError):
            p.unlink(missing_ok=True)
        except PermissionError:  # alive, another user's
            live.append(int(p.name))
    return live


def _register(cc: str) -> None:
    name = registered_name(cc)
    obj = build(cc)
    r = subprocess.run(["bpftool", "struct_ops", "register", str(obj)], capture_output=True, text=True)
    if name not in env.available_algorithms():
        _unregister(name)  # a partial registration must not stay
        raise BpfError(f"{cc}: the kernel refused the BPF port: {_first_line(r.stderr or r.stdout)}")


def _unregister(name: str) -> bool:
    """Unregister ``name``; True once the kernel no longer offers it. bpftool also tries the
    maps of earlier registrations that sockets still hold (closing connections) and reports
    EINPROGRESS for those, so its exit status alone does not tell."""
    subprocess.run(["bpftool", "struct_ops", "unregister", "name", name], capture_output=True, text=True)
    return name not in env.available_algorithms()


@contextlib.contextmanager
def loaded(ccs: list[str]) -> Iterator[None]:
    """Register the ports ``ccs`` for the duration of the block (sharing a registration another
    live process holds) and unregister on any exit — normal, exception, Ctrl-C, SIGTERM raised
    as an exception — those no other live process holds."""
    held: list[str] = []
    try:
        for cc in ccs:
            name = registered_name(cc)
            d = _holders(name)
            d.mkdir(parents=True, exist_ok=True)
            (d / str(os.getpid())).touch()
            held.append(name)
            if name not in env.available_algorithms():
                _register(cc)
        yield
    finally:
        for name in held:
            (_holders(name) / str(os.getpid())).unlink(missing_ok=True)
            if not _live_holders(name) and name in env.available_algorithms():
                _unregister(name)


def cleanup_stale() -> list[str]:
    """Unregister every ccb_* congestion control no live process holds; returns their names."""
    done = []
    for name in env.available_algorithms():
        if name.startswith(NAME_PREFIX) and not _live_holders(name) and _unregister(name):
            done.append(name)
    return done
