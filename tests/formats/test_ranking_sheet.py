"""The seed-004 sheet as it was distributed (vertical, 7 rows per case) and its annotators' copies."""

from __future__ import annotations

import json
from pathlib import Path

import openpyxl
import pytest

from annols import protocols
from annols.errors import InputError
from annols.formats import ExportedAnnotation, ExportedTask, SourceTask
from annols.formats.extractive_ranking import FORMAT
from tests.formats.seed004_fixture import (
    ANNOTATORS,
    DIMENSIONS,
    EMPTY,
    LETTERS,
    STEM,
    SYSTEMS,
    Seed004Study,
    cells,
    make_seed004_study,
)

DEFINITION = protocols.load("extractive-ranking")


@pytest.fixture
def study(tmp_path: Path) -> Seed004Study:
    return make_seed004_study(tmp_path / "etc")


def _exported(tasks: list[SourceTask], domain: bool = True) -> list[ExportedTask]:
    """What a pull gives back when everyone's judgments were imported as they were."""
    out = []
    for i, task in enumerate(tasks, start=1):
        annotations = tuple(
            ExportedAnnotation(id=i * 10 + j, annotator=a.annotator if "@" in a.annotator or not domain
                               else f"{a.annotator}@annotators.annols.local", result=a.result)
            for j, a in enumerate(task.annotations)
        )  # fmt: skip
        out.append(ExportedTask(id=i, key=task.key, data=task.data, systems=task.systems,
                                annotations=annotations, source_systems=task.systems))  # fmt: skip
    return out


def test_vertical_sheet_reads_one_task_per_case_with_each_copy_an_annotation(study: Seed004Study) -> None:
    tasks = list(FORMAT.read(study.inputs, DEFINITION))
    assert [t.data["case"] for t in tasks] == list(range(1, study.cases + 1))
    for task in tasks:
        assert task.systems == tuple(SYSTEMS[p] for p in LETTERS) and task.fixed_order
        assert task.data["sample"] == str(100 + 7 * task.data["case"]) and task.data["sheet"] == STEM
        assert not any(name in json.dumps(task.data) for name in SYSTEMS.values())
        got = {}
        for a in task.annotations:
            for item in a.result:
                dimension, letter = item["from_name"].rsplit("_", 1)
                got.setdefault(a.annotator, {})[(dimension, letter.upper())] = int(item["value"]["choices"][0])
        want = {a: r[task.data["case"]] for a, r in study.ranks.items() if task.data["case"] in r}
        assert got == want
    annotators = [sorted(a.annotator for a in t.annotations) for t in tasks]
    assert annotators[0] == sorted(ANNOTATORS) and annotators[-1] == sorted(set(ANNOTATORS) - {"ben"})
    assert ("coherence", "B") not in study.ranks["cas"][EMPTY[1]]
    warnings = [str(w) for t in tasks for w in t.warnings]
    assert any("row 2: ignored a note beside the table (column G)" in w for w in warnings), warnings
    assert any(f"{STEM}_cas.xlsx" in w and "empty row(s) at the end" in w for w in warnings), warnings


def test_each_annotators_sheet_comes_back_cell_for_cell(study: Seed004Study, tmp_path: Path) -> None:
    tasks = list(FORMAT.read(study.inputs, DEFINITION))
    out = tmp_path / "out"
    written = FORMAT.write_results(_exported(tasks), DEFINITION, out)
    for annotator, copy in study.copies.items():
        back = out / copy.name
        assert back in written
        assert cells(back) == cells(copy), annotator
    # beside the wide table, whose headers name the annotators as the sheets did
    with open(out / "extractive-ranking.csv", encoding="utf-8") as f:
        header = f.readline()
    assert "ann@study.org:informative:ex44" in header and "ben:overall:ex48" in header
    assert "annotators.annols.local" not in header


def test_a_mapping_is_required_and_checked(study: Seed004Study, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="names outputs by letter only; add a mapping file"):
        list(FORMAT.read([study.sheet], DEFINITION))
    bad = tmp_path / "bad.json"
    bad.write_text('{"A": "ex44", "B": "ex46", "C": "ex47"}', encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.json, field 'D': missing or empty"):
        list(FORMAT.read([study.sheet, bad], DEFINITION))


def _edit(path: Path, coordinate: str, value: object) -> None:
    workbook = openpyxl.load_workbook(path)
    workbook.active[coordinate] = value
    workbook.save(path)


@pytest.mark.parametrize(
    ("coordinate", "value", "message"),
    [
        ("C4", "2x", "row 4, field 'column C': '2x' is not a rank; expected a whole number 1..4"),
        ("C4", "5", "'5' is not a rank"),
        ("A5", "E", "row 5, field 'column A': expected one of the letters A, B, C, D once per case, found 'E'"),
        ("D1", "coherent", "row 1, field 'column C': expected the headers informative, coherence, overall"),
        ("B6", "another output", "row 6, field 'output C': Case 1 differs from"),
    ],
)
def test_what_is_refused(study: Seed004Study, coordinate: str, value: object, message: str) -> None:
    _edit(study.copies["cas"], coordinate, value)
    with pytest.raises(InputError) as excinfo:
        list(FORMAT.read(study.inputs, DEFINITION))
    text = str(excinfo.value)
    assert message in text and "\n" not in text
    assert text.startswith(str(study.copies["cas"]))


def test_without_the_distributed_sheet_annotators_come_from_the_last_underscore(study: Seed004Study) -> None:
    tasks = list(FORMAT.read([*study.copies.values(), study.mapping], DEFINITION))
    assert {a.annotator for t in tasks for a in t.annotations} == set(ANNOTATORS)
    assert {t.data["sheet"] for t in tasks} == {STEM}
    assert len(DIMENSIONS) == 3


def test_a_sample_id_stored_as_a_number_comes_back_as_a_number(study: Seed004Study, tmp_path: Path) -> None:
    for path in (study.sheet, *study.copies.values()):
        _edit(path, "A2", 107)
    tasks = list(FORMAT.read(study.inputs, DEFINITION))
    assert tasks[0].data["sample"] == 107 and tasks[1].data["sample"] == "114"
    out = tmp_path / "out"
    FORMAT.write_results(_exported(tasks), DEFINITION, out)
    for copy in study.copies.values():
        assert cells(out / copy.name) == cells(copy)
        assert openpyxl.load_workbook(out / copy.name).active["A2"].value == 107
