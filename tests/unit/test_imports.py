"""The package's imports point one way: no module of ccbench imports, directly or through others,
a module that imports it back. Every import counts, at the top of a file or inside a function
(a function-local import that only hides a cycle is still a cycle), and so does a ``from
package import name`` that runs the package's ``__init__``. The same walk also checks that
no module reaches a sibling through importlib or ``__import__``, and that no module imports
another module's private (underscore) name."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import ROOT

PKG = ROOT / "python" / "ccbench"


def _module(path: Path) -> str:
    parts = ["ccbench", *path.relative_to(PKG).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module(p): p for p in PKG.rglob("*.py")}


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _resolve(node: ast.ImportFrom, here: str) -> str:
    if node.level == 0:
        return node.module or ""
    base = here.split(".") if _is_package(here) else here.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(name: str) -> list[tuple[str, str, int]]:
    """(imported module, name taken or "", line) of every import of a ccbench module in ``name``."""
    tree = ast.parse(MODULES[name].read_text())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, "", node.lineno) for a in node.names if a.name.split(".")[0] == "ccbench"]
        elif isinstance(node, ast.ImportFrom):
            mod = _resolve(node, name)
            if mod.split(".")[0] != "ccbench":
                continue
            for a in node.names:
                sub = f"{mod}.{a.name}"
                out.append((sub, "", node.lineno) if sub in MODULES else (mod, a.name, node.lineno))
    return out


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for m in MODULES:
        for target, _, _ in _imports(m):
            # importing a.b.c runs a/__init__ and a/b/__init__ first, except the packages
            # that hold the importing module: they are initialised before it runs
            parts = target.split(".")
            for i in range(2, len(parts) + 1):
                t = ".".join(parts[:i])
                if t in MODULES and t != m and not m.startswith(t + "."):
                    graph[m].add(t)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on:
                    low[v] = min(low[v], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_the_walk_sees_the_package():
    graph = _graph()
    assert len(graph) > 50
    assert "ccbench.scenario.model" in graph["ccbench.sweeps.runner"]
    # a known chain, so that an empty graph cannot pass the next test
    assert "ccbench.results.schema" in graph["ccbench.results.run_result"]


def test_no_import_cycles():
    cycles = _cycles(_graph())
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_a_cycle_is_found_when_there_is_one():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_dynamic_imports_of_siblings():
    found = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                fn = node.func
                called = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
                arg = node.args[0] if node.args else None
                if (
                    called in ("import_module", "__import__")
                    and isinstance(arg, ast.Constant)
                    and str(arg.value).startswith("ccbench")
                ):
                    found.append(f"{name}:{node.lineno} {called}({arg.value!r})")
    assert not found, found


def test_no_module_imports_another_modules_private_names():
    found = []
    for name in MODULES:
        for target, taken, line in _imports(name):
            if taken.startswith("_") and not taken.startswith("__") and taken != "_sim":
                found.append(f"{name}:{line} takes {target}.{taken}")
    assert not found, "\n".join(found)
