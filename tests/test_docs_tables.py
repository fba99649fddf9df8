"""The scripts that write generated tables into docs/statistics.md share one splice (scripts/_docs.py): given the
tables the document holds now, it writes the same bytes; given a new table, only what lies between that table's
markers changes."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "statistics.md"


def _script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"annols_script_{name}", ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _markers() -> list[tuple[str, str]]:
    """Every (start, end) pair the three scripts write between, taken from the scripts themselves."""
    calibration = _script("calibration")
    found = [(f"<!-- {m}: start -->", f"<!-- {m}: end -->") for m in calibration.MARKERS.values()]
    for name in ("sequential", "ppi_calibration", "ceiling_coverage", "plan_defaults"):
        module = _script(name)
        found.append((module.START, module.END))
    found.append((_script("ceiling_coverage").PRINTED_START, _script("ceiling_coverage").PRINTED_END))  # the others
    sequential = _script("sequential")
    found.append((sequential.PASSES_START, sequential.PASSES_END))  # next-round --passes
    found.append((sequential.WAITING_START, sequential.WAITING_END))  # looks taken while annotators are mid-way
    sampler = _script("pair_sampler")
    found.append((sampler.START, sampler.END))  # next-round --pairs adaptive
    found.append((sampler.OVERLAP_START, sampler.OVERLAP_END))  # one judgment an item, exact, before and after
    return found


def test_the_current_tables_give_the_same_file_and_a_new_one_changes_only_its_place(tmp_path: Path) -> None:
    docs = _script("_docs")
    original = DOC.read_bytes()
    copy = tmp_path / "statistics.md"
    copy.write_bytes(original)
    markers = _markers()
    assert len(markers) == 12  # one pair per generated table: both ceiling coverage tables, adaptive pairs, overlap 1,
    # plan's defaults
    for start, end in markers:
        (table,) = re.findall(re.escape(start) + r"\n(.*?)\n" + re.escape(end), original.decode("utf-8"), re.S)
        docs.splice(table, start, end, copy)
        assert copy.read_bytes() == original, start
    start, end = markers[0]
    docs.splice("| a new table |", start, end, copy)
    before, rest = original.decode("utf-8").split(start, 1)
    assert copy.read_text(encoding="utf-8") == f"{before}{start}\n| a new table |\n{end}{rest.split(end, 1)[1]}"


def test_every_link_within_the_document_names_a_heading_and_every_path_it_names_exists() -> None:
    """The index at the top links each section by its GitHub anchor (lower case, punctuation dropped, spaces to
    hyphens); the modules, scripts and tests the text names are in the tree."""
    text = DOC.read_text(encoding="utf-8")
    headings = re.findall(r"^#+ (.+)$", text, flags=re.MULTILINE)
    anchors = {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}
    links = re.findall(r"\]\(#([^)]+)\)", text)
    assert links and set(links) <= anchors, set(links) - anchors
    paths = set(re.findall(r"\b((?:annols|tests|scripts|examples)/[\w/.-]+\.(?:py|toml))", text))
    assert paths and all((ROOT / p).exists() for p in paths), [p for p in paths if not (ROOT / p).exists()]
