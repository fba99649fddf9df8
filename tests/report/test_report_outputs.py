"""scripts/report_outputs.py compare: files byte for byte, and with --added-ok what a change may only add."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "report_outputs.py"


@pytest.fixture(scope="module")
def outputs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("report_outputs", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["report_outputs"] = module
    spec.loader.exec_module(module)
    return module


def folder(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


BEFORE = {
    "p/report.md": "# p\n\nSources: {root}/pulls/p.\n\n## A\n\n| x |\n|---|\n| 1 |\n",
    "p/report.html": "<html><body><h2>A</h2><table><tr><td>1</td></tr></table></body></html>",
    "p/paper.tex": "We collected 3 judgments.\n\\end{document}\n",
    "p/tables/a.csv": "x\n1\n",
    "p/tables/sources.csv": "source,title\n{root}/pulls/p,study\n",
}


def write(root: Path, files: dict[str, str]) -> Path:
    return folder(root, {name: text.replace("{root}", str(root)) for name, text in files.items()})


def test_a_folder_moved_after_writing_compares_the_same(outputs: ModuleType, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    written = write(tmp_path / "written", BEFORE)
    moved = tmp_path / "moved"
    written.rename(moved)
    after = write(tmp_path / "after", BEFORE)
    assert outputs.compare(moved, after) == 0
    assert "5 the same, 0 differ, 0 missing" in capsys.readouterr().out


def test_added_ok_passes_inserts_and_lists_added_files(outputs: ModuleType, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    before = write(tmp_path / "before", BEFORE)
    grown = dict(BEFORE)
    grown["p/report.md"] = BEFORE["p/report.md"] + "\n## B\n\n| y |\n|---|\n| 2 |\n"
    grown["p/report.html"] = BEFORE["p/report.html"].replace("</table>", "</table><h2>B</h2><p>new</p>")
    grown["p/paper.tex"] = "We collected 3 judgments. Agreement was measured.\n\\end{document}\n"
    grown["p/tables/b.csv"] = "y\n2\n"
    after = write(tmp_path / "after", grown)
    assert outputs.compare(before, after) == 1  # without the option every addition differs
    assert outputs.compare(before, after, added_ok=True) == 0
    out = capsys.readouterr().out.splitlines()
    assert "added: p/tables/b.csv" in out and "inserted into: p/report.md" in out
    assert out[-1] == "5 files compared: 2 the same, 0 differ, 0 missing, 3 only inserted into, 1 added"


@pytest.mark.parametrize(("name", "old", "new"), [
    ("p/report.md", "| 1 |", "| 2 |"),  # a changed line
    ("p/report.md", "## A\n", ""),  # a removed line
    ("p/report.html", "<td>1</td>", "<td>2</td>"),
    ("p/paper.tex", "3 judgments", "4 judgments"),
    ("p/tables/a.csv", "1", "1\n2"),  # a table may not even grow
])  # fmt: skip
def test_added_ok_still_fails_a_change(outputs: ModuleType, tmp_path: Path, name: str, old: str, new: str) -> None:
    before = write(tmp_path / "before", BEFORE)
    after = write(tmp_path / "after", {**BEFORE, name: BEFORE[name].replace(old, new)})
    assert outputs.compare(before, after, added_ok=True) == 1


def test_a_missing_file_fails(outputs: ModuleType, tmp_path: Path) -> None:
    before = write(tmp_path / "before", BEFORE)
    after = write(tmp_path / "after", {k: v for k, v in BEFORE.items() if k != "p/tables/a.csv"})
    assert outputs.compare(before, after, added_ok=True) == 1
