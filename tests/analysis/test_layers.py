"""The analysis computes and returns data; the report arranges and renders: the imports say so."""

from __future__ import annotations

import ast
from pathlib import Path

import annols

PACKAGE = Path(annols.__file__).parent
STATISTICS = ("scipy", "statsmodels", "krippendorff", "crowdkit")


def imported(path: Path) -> set[str]:
    """Every module a file imports, at the top or inside a function ("from annols import report": annols.report)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "import_module":
            found.update(a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str))
    return found


def test_imported_sees_top_level_lazy_and_named_imports(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("import scipy.stats\ndef f():\n    from annols import report\n    import_module('crowdkit')\n")
    assert {"scipy.stats", "annols.report", "crowdkit"} <= imported(source)


def test_nothing_in_the_analysis_imports_the_report() -> None:
    upward = {str(p.relative_to(PACKAGE)): sorted(m for m in imported(p) if m.split(".")[:2] == ["annols", "report"])
              for p in sorted((PACKAGE / "analysis").rglob("*.py"))}  # fmt: skip
    assert {p: m for p, m in upward.items() if m} == {}


def test_the_report_imports_no_statistics_library() -> None:
    found = {str(p.relative_to(PACKAGE)): sorted(m for m in imported(p) if m.split(".")[0] in STATISTICS)
             for p in sorted((PACKAGE / "report").glob("*.py"))}  # fmt: skip
    assert {p: m for p, m in found.items() if m} == {}
