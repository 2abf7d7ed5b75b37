"""Every command of README.md's ```sh blocks still runs, on the simulator, as written.

The commands are parsed from the blocks (not from line numbers), so the test follows the README
as it changes. They run in order in one temporary directory, as a reader would type them from
the repository root: a relative path that names a file of the repository is passed as that
file, everything else (``--out results/jc``, ``results/loss``) lands in the temporary directory,
so a command can read what an earlier one wrote (``ccbench plot results/jc`` after ``ccbench
study run jitter-cliff --out results/jc``).

What the reader supplies is supplied here (USER_FILES): ``study.toml`` and ``my-link.toml`` are
the README's own scenario example (its ```toml block), ``ping.txt`` a captured ``ping -D`` output,
``my-study.toml`` a two-run study file, ``sender.pcap`` a sender-side capture (the simulator's
``[output] pcap`` of CUBIC on 10 Mbit/s, 20 ms), ``iperf3.json`` the output of ``iperf3 -J``
(tests/data/iperf3: CUBIC over ccbench-link at 20 Mbit/s, 40 ms).

The rule for what runs (SKIP, in order; the first match decides):

- ``make ...`` builds, tests or benchmarks the whole repository: not from inside the tests;
- ``sudo ...``, ``--backend kernel`` and ``validate`` need root and the real kernel (validate runs
  the kernel backend whenever it can): the kernel tests cover them (kernel/, cli/test_validate.py);
- ``--backend ns3`` needs the ns-3 SDK and a compiler (ns3_backend/);
- ``--dask tcp://...`` needs a Dask cluster at that address (cli/test_sweep_dask.py).

Everything else runs as written, with two changes (CHEAPER): ``[--flag]`` (optional) is run with
the flag, and ``study run`` of a built-in study's full grid runs its ``--quick`` grid (the same
parts with fewer cells and repeats, seconds instead of a minute on a loaded machine; the full grids
are the study tests' business, cli/test_study.py). It must exit 0 without a traceback, and a
``--json`` command must print one JSON document. SKIP cannot
hide a broken README: at most MAX_SKIPPED commands may be skipped, at least MIN_RUN must run, and
every command must be a ``ccbench`` or ``make`` command (anything else fails the test).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import PING_DIR, ROOT

IPERF3_DIR = ROOT / "tests" / "data" / "iperf3"

README = ROOT / "README.md"

#: what the README's reader has and the test writes into the working directory first
TINY_STUDY = """\
[study]
name = "my-study"
seed = "999"
title = "A study file of your own"
question = "Does BBR beat CUBIC at 1 % loss?"
original = "none"
analyses = ["goodput"]

[[part]]
name = "loss"
[part.scenario]
duration = "3s"
[part.scenario.bottleneck]
rate = "10Mbit"
rtt = "20ms"
loss = "1%"
[[part.scenario.flows]]
cc = "cubic"
[part.sweep]
"flows.0.cc" = ["cubic", "bbr"]
"""

#: a scenario for study.toml / my-link.toml when the README has no ```toml example
FALLBACK_SCENARIO = """\
name = "readme"
duration = "5s"
[bottleneck]
rate = "10Mbit"
rtt = "20ms"
[[flows]]
cc = "cubic"
"""

#: (reason, predicate over the command's words): the first that matches skips the command
SKIP = [
    ("make target: builds, tests or benchmarks the repository", lambda w: w[0] == "make"),
    ("needs root and the kernel backend", lambda w: w[0] == "sudo"),
    ("needs root and the kernel backend", lambda w: _option(w, "--backend") == "kernel"),
    ("validate runs the kernel backend when it can", lambda w: _subcommand(w) == "validate"),
    ("needs the ns-3 SDK", lambda w: _option(w, "--backend") == "ns3"),
    ("needs a Dask scheduler at that address", lambda w: (_option(w, "--dask") or "").startswith("tcp://")),
]
#: (reason, predicate, the words to run instead) for the commands that run
CHEAPER = [
    (
        "a built-in study's full grid: its --quick grid",
        lambda w: w[1:3] == ["study", "run"] and len(w) > 3 and not w[3].endswith(".toml") and "--quick" not in w,
        lambda w: [*w, "--quick"],
    ),
]
#: the root-only commands (kernel backend, validate, capture) and the make targets
MAX_SKIPPED = 17
MIN_RUN = 15
TIMEOUT_S = 600


def _option(words: list[str], name: str) -> str | None:
    for i, w in enumerate(words):
        if w == name and i + 1 < len(words):
            return words[i + 1]
        if w.startswith(name + "="):
            return w.split("=", 1)[1]
    return None


def _subcommand(words: list[str]) -> str | None:
    """The word after the program (``ccbench``, ``.venv/bin/ccbench``; after ``sudo`` too)."""
    rest = words[1:] if words[0] == "sudo" else words
    return rest[1] if len(rest) > 1 else None


def fenced_blocks(text: str, lang: str) -> list[str]:
    """The bodies of the ```lang fenced blocks of a Markdown text."""
    return [m.group(1) for m in re.finditer(rf"^```{lang}[ \t]*\n(.*?)^```[ \t]*$", text, re.M | re.S)]


def readme_commands(text: str) -> list[list[str]]:
    """The commands of the ```sh blocks, one per line, as words (comments dropped, ``[--x]``
    optional parts kept as ``--x``)."""
    commands = []
    for block in fenced_blocks(text, "sh"):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if words:
                commands.append([w[1:-1] if re.fullmatch(r"\[-[^\]]*\]", w) else w for w in words])
    return commands


def is_ccbench(word: str) -> bool:
    return word == "ccbench" or word.endswith("/ccbench")


def skip_reason(words: list[str]) -> str | None:
    for reason, matches in SKIP:
        if matches(words):
            return reason
    return None


def as_run(words: list[str]) -> list[str]:
    for _reason, matches, cheaper in CHEAPER:
        if matches(words):
            return cheaper(words)
    return words


def command_id(words: list[str]) -> str:
    text = " ".join(words)
    return text if len(text) <= 90 else text[:87] + "..."


def ccbench_program() -> list[str]:
    """The venv's ccbench (beside this interpreter), else this interpreter running ccbench.cli."""
    exe = Path(sys.executable).with_name("ccbench")
    return [str(exe)] if exe.is_file() else [sys.executable, "-m", "ccbench.cli"]


def user_files(workdir: Path, text: str) -> None:
    scenarios = [b for b in fenced_blocks(text, "toml") if "[bottleneck]" in b]
    scenario = scenarios[0] if scenarios else FALLBACK_SCENARIO
    for name in ("study.toml", "my-link.toml"):
        (workdir / name).write_text(scenario)
    (workdir / "my-study.toml").write_text(TINY_STUDY)
    (workdir / "ping.txt").write_text((PING_DIR / "linux_D_timestamps.txt").read_text())
    (workdir / "iperf3.json").write_text((IPERF3_DIR / "cubic_20mbit_40ms_1bdp.json").read_text())
    from ccbench.fit.replay import simulate_capture

    link = {"rate": "10Mbit", "rtt": "20ms", "buffer": "2bdp"}
    simulate_capture({"duration": "10s", "bottleneck": link, "flows": [{"cc": "cubic"}]}, workdir / "sender.pcap")


def argv(words: list[str], workdir: Path) -> list[str]:
    """The command as run: the venv's ccbench, and a relative path that exists in the repository
    (and was not made by the reader) as that file."""
    out = ccbench_program()
    for w in words[1:]:
        if not w.startswith("-") and not (workdir / w).exists() and (ROOT / w).exists():
            w = str(ROOT / w)
        out.append(w)
    return out


COMMANDS = readme_commands(README.read_text())
#: (position in the README, words) of the commands that run
RUN = [(i, c) for i, c in enumerate(COMMANDS) if not skip_reason(c)]


def test_the_parser_reads_sh_blocks_only_with_comments_quotes_and_optional_flags():
    text = (
        "Text `ccbench run x.toml` outside a block.\n"
        "```sh\n"
        "ccbench run a.toml --json [--series]     # a comment\n"
        "                                         # a comment line\n"
        'ccbench query results/x "SELECT 1 # not a comment"\n'
        "sudo .venv/bin/ccbench run a.toml --backend kernel\n"
        "```\n"
        "```toml\n"
        "[bottleneck]\n"
        "```\n"
        "```\n"
        "ccbench in an unlabelled block: output, not a command\n"
        "```\n"
    )
    commands = readme_commands(text)
    assert commands == [
        ["ccbench", "run", "a.toml", "--json", "--series"],
        ["ccbench", "query", "results/x", "SELECT 1 # not a comment"],
        ["sudo", ".venv/bin/ccbench", "run", "a.toml", "--backend", "kernel"],
    ]
    assert [skip_reason(c) for c in commands] == [None, None, "needs root and the kernel backend"]
    assert fenced_blocks(text, "toml") == ["[bottleneck]\n"]
    study = ["ccbench", "study", "run", "jitter-cliff", "--out", "r"]
    assert as_run(study) == [*study, "--quick"]
    assert as_run(["ccbench", "study", "run", "mine.toml"]) == ["ccbench", "study", "run", "mine.toml"]


def test_the_readme_has_commands_and_skips_few():
    assert COMMANDS, "no ```sh block with a command in README.md"
    others = [c for c in COMMANDS if not (is_ccbench(c[0]) or c[0] in ("make", "sudo"))]
    assert not others, f"commands the test does not know how to run: {others}"
    sudo_others = [c for c in COMMANDS if c[0] == "sudo" and not is_ccbench(c[1])]
    assert not sudo_others, sudo_others
    skipped = [c for c in COMMANDS if skip_reason(c)]
    assert len(skipped) <= MAX_SKIPPED, [command_id(c) for c in skipped]
    assert len(COMMANDS) - len(skipped) >= MIN_RUN, (len(COMMANDS), [command_id(c) for c in skipped])


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Every command that is not skipped, run once, in README order, in one directory."""
    workdir = tmp_path_factory.mktemp("readme")
    text = README.read_text()
    user_files(workdir, text)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "python"), os.environ.get("PYTHONPATH")])),
        "COLUMNS": "160",
        "NO_COLOR": "1",
    }
    done = {}
    for i, words in RUN:
        t0 = time.monotonic()
        try:
            p = subprocess.run(
                argv(as_run(words), workdir), cwd=workdir, env=env, capture_output=True, text=True, timeout=TIMEOUT_S
            )
        except subprocess.TimeoutExpired as e:
            p = subprocess.CompletedProcess(e.cmd, -1, "", f"timed out after {TIMEOUT_S} s")
        done[i] = (p, time.monotonic() - t0)
    return done


def test_the_readme_scenario_example_is_valid(tmp_path):
    """The ```toml scenario example loads (it is also study.toml for the commands)."""
    from ccbench.scenario.model import load_scenario

    for i, block in enumerate(fenced_blocks(README.read_text(), "toml")):
        if "[bottleneck]" in block:
            path = tmp_path / f"example{i}.toml"
            path.write_text(block)
            load_scenario(path)


@pytest.mark.parametrize("i, words", RUN, ids=[command_id(c) for _, c in RUN])
def test_readme_command_runs(results, i, words):
    p, took = results[i]
    print(f"{took:.1f} s: {' '.join(as_run(words))}")
    out = (p.stdout[-3000:] + "\n" + p.stderr[-3000:]).strip()
    assert p.returncode == 0, f"exit {p.returncode} after {took:.1f} s:\n{out}"
    assert "Traceback" not in p.stderr, out
    if "--json" in words:
        json.loads(p.stdout)
