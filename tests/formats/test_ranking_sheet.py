"""The seed-004 sheet as it was distributed (vertical, 7 rows per case) and its annotators' copies,
in both layouts: as published (headers on Case 1 only, numbers) and headers on every case (text)."""

from __future__ import annotations

import json
from pathlib import Path

import openpyxl
import pytest

from annols import protocols
from annols.errors import InputError
from annols.formats import SourceTask
from annols.formats.extractive_ranking import FORMAT
from annols.styles.answers import ExportedAnnotation, ExportedTask
from tests.formats.seed004_fixture import (
    ANNOTATORS,
    DIMENSIONS,
    EMPTY,
    LAYOUTS,
    LETTERS,
    STEM,
    SYSTEMS,
    Seed004Study,
    cells,
    make_seed004_study,
)

DEFINITION = protocols.load("extractive-ranking")


@pytest.fixture(params=LAYOUTS)
def study(request: pytest.FixtureRequest, tmp_path: Path) -> Seed004Study:
    return make_seed004_study(tmp_path / "etc", layout=request.param)


@pytest.fixture
def published(tmp_path: Path) -> Seed004Study:
    return make_seed004_study(tmp_path / "etc", layout="published")


@pytest.fixture
def every_case(tmp_path: Path) -> Seed004Study:
    return make_seed004_study(tmp_path / "etc", layout="every-case")


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
        assert task.data["sample"] == study.sample(task.data["case"]) and task.data["sheet"] == STEM
        # what the sheets written back need: this case's headers, and how each copy stored its ranks
        headers = task.data["case"] == 1 or study.layout == "every-case"
        typed = "number" if study.layout == "published" else "text"
        ranked = sorted(a for a, r in study.ranks.items() if task.data["case"] in r)
        assert task.data["layout"] == {"headers": headers, "ranks": dict.fromkeys(ranked, typed)}
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


def test_a_sample_id_stored_as_a_number_comes_back_as_a_number(every_case: Seed004Study, tmp_path: Path) -> None:
    study = every_case  # sample ids as text, but one
    for path in (study.sheet, *study.copies.values()):
        _edit(path, "A2", 107)
    tasks = list(FORMAT.read(study.inputs, DEFINITION))
    assert tasks[0].data["sample"] == 107 and tasks[1].data["sample"] == "114"
    out = tmp_path / "out"
    FORMAT.write_results(_exported(tasks), DEFINITION, out)
    for copy in study.copies.values():
        assert cells(out / copy.name) == cells(copy)
        assert openpyxl.load_workbook(out / copy.name).active["A2"].value == 107


@pytest.mark.parametrize(
    ("coordinate", "message"),
    [
        ("C1", "row 1, field 'column C': expected the headers informative, coherence, overall, found none"),
        ("C8", "row 8, field 'column C': expected the headers informative, coherence, overall (or nothing, as on "
               "every case after the first), found informative, (empty), (empty)"),
    ],
)  # fmt: skip
def test_the_first_case_names_the_rank_columns_and_a_later_case_repeats_them_or_nothing(
    published: Seed004Study, coordinate: str, message: str
) -> None:
    copy = published.copies["cas"]
    if coordinate == "C1":
        for c in ("C1", "D1", "E1"):
            _edit(copy, c, None)
    else:
        _edit(copy, coordinate, "informative")
    with pytest.raises(InputError) as excinfo:
        list(FORMAT.read(published.inputs, DEFINITION))
    assert str(excinfo.value) == f"{copy}, {message}"


def test_the_published_layout_was_refused_before_only_for_its_empty_header_cells(published: Seed004Study) -> None:
    """Row 8 (Case 2) is where the old reader stopped on the real sheet: C-E there are empty in every file."""
    for path in (published.sheet, *published.copies.values()):
        values = cells(path)
        assert [values.get(f"{c}1") for c in "CDE"] == list(DIMENSIONS)
        assert not any(f"{c}{row}" in values for c in "CDE" for row in range(8, 7 * published.cases, 7))
    tasks = list(FORMAT.read(published.inputs, DEFINITION))
    assert [t.data["layout"]["headers"] for t in tasks] == [True] + [False] * (published.cases - 1)


def test_a_copy_whose_headers_differ_is_read_with_a_warning_and_written_as_the_distributed_sheet(
    study: Seed004Study, tmp_path: Path
) -> None:
    copy = study.copies["cas"]
    headers = study.layout == "every-case"  # what the distributed sheet has on Case 2's row
    for c, name in zip("CDE", DIMENSIONS, strict=True):
        _edit(copy, f"{c}8", None if headers else name)
    tasks = list(FORMAT.read(study.inputs, DEFINITION))
    state = "leaves out" if headers else "carries"
    warnings = [str(w) for t in tasks for w in t.warnings]
    assert f"{copy}, row 8: Case 2 {state} the headers unlike {study.sheet}; the sheets written back follow " \
           f"{study.sheet.name}" in warnings, warnings  # fmt: skip
    out = tmp_path / "out"
    FORMAT.write_results(_exported(tasks), DEFINITION, out)
    row8 = {f"{c}8": name for c, name in zip("CDE", DIMENSIONS, strict=True)}
    rest = {k: v for k, v in cells(copy).items() if k not in row8}
    assert cells(out / copy.name) == ({**rest, **row8} if headers else rest)
    assert all(cells(out / c.name) == cells(c) for a, c in study.copies.items() if a != "cas")


def test_a_copy_mixing_numbers_and_text_comes_back_cell_for_cell(study: Seed004Study, tmp_path: Path) -> None:
    copy = study.copies["cas"]
    rank = study.ranks["cas"][1][("informative", "A")]
    _edit(copy, "C4", str(rank) if study.layout == "published" else rank)  # the other type, in one cell
    tasks = list(FORMAT.read(study.inputs, DEFINITION))
    typed = tasks[0].data["layout"]["ranks"]["cas"]
    every = sorted(f"{d}_{p.lower()}" for d in DIMENSIONS for p in LETTERS)
    assert typed == ([c for c in every if c != "informative_a"] if study.layout == "published" else ["informative_a"])
    assert tasks[1].data["layout"]["ranks"]["cas"] == ("number" if study.layout == "published" else "text")
    out = tmp_path / "out"
    FORMAT.write_results(_exported(tasks), DEFINITION, out)
    assert cells(out / copy.name) == cells(copy)
    assert type(cells(out / copy.name)["C4"]) is type(cells(copy)["C4"])


def test_an_annotator_without_a_copy_gets_the_cells_typed_as_the_copies(study: Seed004Study, tmp_path: Path) -> None:
    """Someone who ranked in Label Studio: their sheet looks like the copies of the same study."""
    tasks = list(FORMAT.read(study.inputs, DEFINITION))
    exported = []
    for task in _exported(tasks):
        first = task.annotations[0]  # ann@study.org, who ranked every case
        again = ExportedAnnotation(id=first.id + 5, annotator="dan@study.org", result=first.result)
        exported.append(ExportedTask(id=task.id, key=task.key, data=task.data, systems=task.systems,
                                     annotations=(*task.annotations, again),
                                     source_systems=task.source_systems))  # fmt: skip
    out = tmp_path / "out"
    FORMAT.write_results(exported, DEFINITION, out)
    assert cells(out / f"{STEM}_dan@study.org.xlsx") == cells(study.copies["ann@study.org"])


def test_tasks_pushed_before_annols_kept_the_layout_come_back_as_it_wrote_them_then(
    study: Seed004Study, tmp_path: Path
) -> None:
    """No "layout" in the task data: headers on every case and ranks as text, as before."""
    tasks = list(FORMAT.read(study.inputs, DEFINITION))
    exported = [ExportedTask(id=t.id, key=t.key, data={k: v for k, v in t.data.items() if k != "layout"},
                             systems=t.systems, annotations=t.annotations, source_systems=t.source_systems)
                for t in _exported(tasks)]  # fmt: skip
    out = tmp_path / "out"
    FORMAT.write_results(exported, DEFINITION, out)
    for copy in study.copies.values():
        back = cells(out / copy.name)
        if study.layout == "every-case":
            assert back == cells(copy)
        else:
            assert back["C8"] == "informative" and back["C4"] == str(cells(copy)["C4"])


def test_the_release_folder_reads_as_its_files(study: Seed004Study) -> None:
    """distribute/, results/ and systems.json below one folder, as released; other files skipped with a warning."""
    (study.root / "Guidance for Human Evaluators.md").write_text("# guidance\n", encoding="utf-8")
    (study.root / "results" / f"~${STEM}_cas.xlsx").write_bytes(b"an Excel lock file")
    by_folder = list(FORMAT.read([study.root], DEFINITION))
    by_files = list(FORMAT.read(study.inputs, DEFINITION))
    assert [(t.key, t.data, t.annotations) for t in by_folder] == [(t.key, t.data, t.annotations) for t in by_files]
    assert str(by_folder[0].warnings[0]) == (f"{study.root}: ignored 1 file(s) not .xlsx, .csv or .json: "
                                             "Guidance for Human Evaluators.md")  # fmt: skip
    empty = study.root / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match=r"empty: no \.xlsx, \.csv or \.json file in this folder"):
        list(FORMAT.read([empty], DEFINITION))
