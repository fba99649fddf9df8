"""The structure of docs/architecture.md holds: no import cycle among annols' modules, the layer contracts,
and its drawing names every module.

Imports are read by grimp (import-linter's graph), every import counted: at module level,
inside a function, or under ``TYPE_CHECKING``. A cycle is a strongly connected set of
two or more modules; each is named with the imports that close it.
"""

from __future__ import annotations

import re
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


def boxes(drawing: str) -> list[str]:
    """The text of each box of a box drawing (┌ ┐ │ └), boxes side by side included, top to bottom."""
    found: list[str] = []
    open_boxes: list[tuple[int, int, list[str]]] = []  # columns of ┌ and ┐, the lines inside
    for line in drawing.splitlines():
        if "└" in line:
            for start, end, text in [b for b in open_boxes if line[b[0] : b[0] + 1] == "└"]:
                found.append("\n".join(text))
                open_boxes.remove((start, end, text))
        for start, end, text in open_boxes:
            text.append(line[start + 1 : end])
        for top in re.finditer("┌[^┐]*┐", line):
            open_boxes.append((top.start(), top.end() - 1, []))
    return found


def undrawn(document: str, package: Path) -> list[str]:
    """What of ``package`` the first drawing of ``document`` leaves out: a folder with no box (a box is a
    folder's when it opens with ``folder/``), a module whose name is not a word of its folder's box, a
    top-level module named in no box, a sub-package of a folder (``analysis/tests/``) whose ``name/`` its
    folder's box does not show, or whose module is not a word of that box."""
    drawing = document.split("```\n")[1]
    by_folder: dict[str, set[str]] = {}
    subfolders: dict[str, set[str]] = {}
    everywhere: set[str] = set()
    for text in boxes(drawing):
        words = set(re.findall(r"\w+", text))
        everywhere |= words
        opening = re.match(r"\s*(\w+)/", text)
        if opening:
            by_folder.setdefault(opening.group(1), set()).update(words)
            subfolders.setdefault(opening.group(1), set()).update(re.findall(r"(?<![\w/])(\w+)/", text))
    missing = []
    for module in sorted(package.glob("*.py")):
        if module.stem not in everywhere and module.stem != "__init__":
            missing.append(f"{package.name}/{module.name}: named in no box")
    for folder in sorted(p.parent for p in package.glob("*/__init__.py")):
        if folder.name not in by_folder:
            missing.append(f"{package.name}/{folder.name}/: no box opens with {folder.name}/")
            continue
        for module in sorted(folder.glob("*.py")):
            if module.stem not in by_folder[folder.name] and module.stem != "__init__":
                missing.append(f"{package.name}/{folder.name}/{module.name}: not named in the {folder.name}/ box")
        for sub in sorted(p.parent for p in folder.glob("*/__init__.py")):
            where = f"{package.name}/{folder.name}/{sub.name}/"
            if sub.name not in subfolders[folder.name]:
                missing.append(f"{where}: the {folder.name}/ box does not show {sub.name}/")
            for module in sorted(sub.rglob("*.py")):
                if module.stem not in by_folder[folder.name] and module.stem != "__init__":
                    missing.append(f"{where}{module.name}: not named in the {folder.name}/ box")
    return missing


def test_the_drawing_check_names_what_is_missing(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    for path in ["__init__.py", "cli.py", "errors.py", "low/__init__.py", "low/kept.py", "side/__init__.py",
                 "side/a.py", "side/b.py"]:  # fmt: skip
        (package / path).parent.mkdir(parents=True, exist_ok=True)
        (package / path).write_text("")
    document = (
        "# pkg\n\n```\n"
        "top      ┌──────────────────────────┐\n"
        "         │ cli.py  prints · errors  │\n"
        "         └────────────┬─────────────┘\n"
        "         ┌────────────▼┐ ┌──────────┐\n"
        "low │    │ low/  kept  │ │ side/ a  │\n"
        "side     │ and b       │ │ · kept   │\n"
        "         └─────────────┘ └──────────┘\n"
        "```\n"
    )
    assert undrawn(document, package) == ["pkg/side/b.py: not named in the side/ box"]  # b is in low/'s box
    (package / "errors.py").rename(package / "faults.py")
    (package / "low" / "new.py").write_text("")
    (package / "other").mkdir()
    (package / "other" / "__init__.py").write_text("")
    (package / "side" / "deep").mkdir()
    for path in ["__init__.py", "kept.py", "lost.py"]:  # kept is a word of side/'s box, lost is not
        (package / "side" / "deep" / path).write_text("")
    assert undrawn(document, package) == [
        "pkg/faults.py: named in no box",
        "pkg/low/new.py: not named in the low/ box",
        "pkg/other/: no box opens with other/",
        "pkg/side/b.py: not named in the side/ box",
        "pkg/side/deep/: the side/ box does not show deep/",
        "pkg/side/deep/lost.py: not named in the side/ box",
    ]
    shown = document.replace("│ · kept   │", "│ deep/ kept │").replace("┐\n", "──┐\n").replace("┘\n", "──┘\n")
    shown = shown.replace("side/ a  │", "side/ a    │")
    assert [m for m in undrawn(shown, package) if "deep" in m] == ["pkg/side/deep/lost.py: not named in the side/ box"]


def test_the_drawing_names_every_module() -> None:
    document = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    missing = undrawn(document, ROOT / "annols")
    assert not missing, "docs/architecture.md's drawing leaves out: " + "; ".join(missing)
