"""The structure of docs/architecture.md holds: no import cycle among annols' modules, and the layer contracts.

Imports are read by grimp (import-linter's graph), every import counted: at module level,
inside a function, or under ``TYPE_CHECKING``. A cycle is a strongly connected set of
two or more modules; each is named with the imports that close it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp

from tests.conftest import ROOT


def cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected sets of two or more modules (Tarjan), each sorted; iterative, so any depth."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                part = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    part.append(member)
                    if member == node:
                        break
                if len(part) > 1:
                    found.append(sorted(part))
    return found


def test_the_cycle_finder_finds_a_cycle_and_only_cycles(tmp_path: Path) -> None:
    # A package of its own: a -> b -> c -> a is one cycle; d -> a is not part of it; e imports itself only.
    package = tmp_path / "cyclepkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name, imports in {"a": "b", "b": "c", "c": "a", "d": "a", "e": ""}.items():
        (package / f"{name}.py").write_text(f"def f():\n    from cyclepkg import {imports}\n" if imports else "")
    sys.path.insert(0, str(tmp_path))
    try:
        graph = grimp.build_graph("cyclepkg", cache_dir=None)
    finally:
        sys.path.remove(str(tmp_path))
    assert cycles(graph) == [["cyclepkg.a", "cyclepkg.b", "cyclepkg.c"]]


def test_no_import_cycle_among_annols_modules() -> None:
    graph = grimp.build_graph("annols", cache_dir=None)
    found = cycles(graph)
    described = []
    for part in found:
        ties = [f"{a} -> {b}" for a in part for b in sorted(graph.find_modules_directly_imported_by(a)) if b in part]
        described.append(", ".join(ties))
    assert not found, "import cycles: " + "; ".join(described)


def test_the_layer_contracts_hold() -> None:
    # The contracts live in pyproject.toml ([tool.importlinter]); scripts/test runs them too.
    done = subprocess.run([str(Path(sys.executable).parent / "lint-imports"), "--no-cache"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout
