"""extractive-ranking format: XLSX/CSV sheets in, blinded rankings back out as the sheet."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path
from typing import Any

import openpyxl
import pytest

from annols import protocols
from annols.errors import InputError
from annols.formats import SourceTask, content_key, format_for
from annols.formats.extractive_ranking import FORMAT
from annols.styles.answers import ExportedAnnotation, ExportedTask

DATA = Path(__file__).resolve().parent.parent / "data"
EXAMPLES = Path(protocols.HERE) / "examples"
DEFINITION = protocols.load("extractive-ranking")
POSITIONS = ("a", "b", "c", "d")
DIMENSIONS = ("informative", "coherence", "overall")
SYSTEMS = ("bart", "pegasus", "matchsum", "oracle")
ANNOTATORS = ("ann1@x.org", "ann2@x.org")
# Rankings with ties, each rank value 1..4 used, all-equal and all-different.
PATTERNS = [(1, 2, 3, 4), (3, 1, 1, 2), (4, 4, 4, 4), (2, 2, 1, 3), (4, 3, 2, 1), (1, 1, 2, 2), (3, 4, 3, 1)]

OUTPUTS = [
    [
        "( CNN ) James Best , best known for his portrayal of bumbling sheriff , died Monday .</s>He was 88 .",
        "He was 88 . </s> Best died in hospice in Hickory , North Carolina , of complications from pneumonia .",
        '" McGuire , 25 , said .  </s>She and Rogers , 34 , own  the Breckenridge Cannabis Club .</s>',
        "It 's Fireball Cinnamon Whisky , and lately it 's been as hot as its name .</s> \" Fireball is number one .",
    ],
    [
        "Žluťoučký kůň úpěl ďábelské ódy 🐎 .</s>Second , with a comma .",
        "Only one sentence , no separator .",
        "First .</s></s>  Third after an empty one .  ",
        "Ends with a separator .</s>",
    ],
]


def _rank_header() -> list[str]:
    return [f"{a}:{d}:{s}" for a in ANNOTATORS for d in DIMENSIONS for s in SYSTEMS]


def _ranks(row: int) -> dict[tuple[str, str, str], int]:
    """The generated rank of each annotator, dimension and system for sheet row ``row``."""
    out = {}
    for ai, a in enumerate(ANNOTATORS):
        for di, d in enumerate(DIMENSIONS):
            pattern = PATTERNS[(row * 5 + ai * 3 + di) % len(PATTERNS)]
            out.update({(a, d, s): pattern[si] for si, s in enumerate(SYSTEMS)})
    return out


def _sheet(with_ranks: bool = True) -> list[list[Any]]:
    """Header, data rows and an empty row in between, as cells of a spreadsheet."""
    header = ["url", "reference", *SYSTEMS, *(_rank_header() if with_ranks else [])]
    rows: list[list[Any]] = [header]
    for i, outputs in enumerate(OUTPUTS):
        if i == 1:
            rows.append([None] * len(header))
        n = len(rows) + 1
        ranks = _ranks(n)
        extra = [ranks[tuple(h.split(":"))] for h in _rank_header()] if with_ranks else []
        rows.append([f"https://edition.cnn.com/{i}", f'Reference {i} , „Czech“ ; with "quotes" .', *outputs, *extra])
    return rows


def _write_xlsx(path: Path, rows: list[list[Any]]) -> Path:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    for row in rows:
        sheet.append(row)
    workbook.create_sheet("ignored").append(["not", "read"])
    workbook.save(path)
    return path


def _write_csv(path: Path, rows: list[list[Any]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows([["" if c is None else str(c) for c in row] for row in rows])
    return path


def _comparable(tasks: list[SourceTask]) -> list[tuple[Any, ...]]:
    return [(t.key, t.data, t.systems, t.fixed_order, t.annotations, t.extra) for t in tasks]


# ---------------------------------------------------------------- reading


def test_format_is_registered() -> None:
    assert format_for(DEFINITION) is FORMAT
    assert FORMAT.name == "extractive-ranking" and "\n" not in FORMAT.describe


def test_xlsx_and_csv_read_identically(tmp_path: Path) -> None:
    rows = _sheet()
    from_xlsx = list(FORMAT.read([_write_xlsx(tmp_path / "sheet.xlsx", rows)], DEFINITION))
    from_csv = list(FORMAT.read([_write_csv(tmp_path / "sheet.csv", rows)], DEFINITION))
    assert _comparable(from_xlsx) == _comparable(from_csv)
    assert [t.data["row"] for t in from_xlsx] == [2, 4]  # the empty row 3 is skipped, numbering kept
    assert from_xlsx[1].location == f"{tmp_path / 'sheet.xlsx'}: row 4"
    first = from_xlsx[0]
    assert first.systems == SYSTEMS and first.fixed_order is False
    assert list(first.data) == ["url", "reference", "output_a", "output_b", "output_c", "output_d", "row"]
    assert list(first.extra) == ["raw"]  # the cells in column order would undo the shuffle: kept off the server
    outputs = dict(zip(SYSTEMS, OUTPUTS[0], strict=True))
    content = {"url": first.data["url"], "reference": first.data["reference"], "outputs": outputs}
    assert first.key == content_key("extractive-ranking", content)


def test_display_never_shows_separator_and_raw_is_byte_identical(tmp_path: Path) -> None:
    tasks = list(FORMAT.read([_write_xlsx(tmp_path / "sheet.xlsx", _sheet(with_ranks=False))], DEFINITION))
    for task, outputs in zip(tasks, OUTPUTS, strict=True):
        assert task.extra["raw"] == list(outputs) and task.systems == SYSTEMS
        assert not any(s in json.dumps(task.data) for s in SYSTEMS)  # blinding: no name in what is shown
        for position, cell in zip(POSITIONS, outputs, strict=True):
            shown = task.data[f"output_{position}"]
            assert "</s>" not in shown
            assert shown.split("\n") == [s.strip() for s in cell.split("</s>") if s.strip()]
        assert task.annotations == ()
    assert tasks[1].data["output_c"] == "First .\nThird after an empty one ."
    assert tasks[0].data["output_b"] == (
        "He was 88 .\nBest died in hospice in Hickory , North Carolina , of complications from pneumonia ."
    )


def test_rank_columns_become_annotations(tmp_path: Path) -> None:
    (task, _) = FORMAT.read([_write_csv(tmp_path / "sheet.csv", _sheet())], DEFINITION)
    assert [a.annotator for a in task.annotations] == list(ANNOTATORS)
    ranks = _ranks(2)
    for annotation in task.annotations:
        assert len(annotation.result) == len(DIMENSIONS) * len(POSITIONS)
        for item in annotation.result:
            dimension, position = item["from_name"].rsplit("_", 1)
            system = SYSTEMS[POSITIONS.index(position)]
            assert item["to_name"] == f"output_{position}" and item["type"] == "choices"
            assert item["value"] == {"choices": [str(ranks[(annotation.annotator, dimension, system)])]}
        assert len({item["id"] for item in annotation.result}) == len(annotation.result)


# ---------------------------------------------------------------- round trip with blinding


def _blind(task: SourceTask, rng: random.Random, index: int) -> ExportedTask:
    """What push + pull produce: outputs shuffled, systems naming what is shown, browser-made results;
    the original cells back from the manifest."""
    perm = list(range(len(POSITIONS)))
    rng.shuffle(perm)  # shown position i holds the input candidate perm[i]
    data = json.loads(json.dumps({**task.data, **task.extra}))
    for i, j in enumerate(perm):
        data[f"output_{POSITIONS[i]}"] = task.data[f"output_{POSITIONS[j]}"]
    shown_at = {POSITIONS[j]: POSITIONS[i] for i, j in enumerate(perm)}
    annotations = []
    for k, a in enumerate(task.annotations):
        result = []
        for item in a.result:
            dimension, position = item["from_name"].rsplit("_", 1)
            new = shown_at[position]
            result.append({**item, "id": f"r{rng.randrange(10**9)}", "from_name": f"{dimension}_{new}",
                           "to_name": f"output_{new}"})  # fmt: skip
        rng.shuffle(result)
        annotations.append(ExportedAnnotation(id=10 * index + k, annotator=a.annotator, result=result))
    annotations.append(ExportedAnnotation(id=10 * index + 9, annotator="skipper@x.org", result=[], cancelled=True))
    systems = tuple(task.systems[j] for j in perm)
    return ExportedTask(id=index, key=task.key, data=data, systems=systems, annotations=tuple(annotations),
                        source_systems=task.systems)  # fmt: skip


def _read_xlsx(path: Path) -> list[list[Any]]:
    workbook = openpyxl.load_workbook(path, read_only=True)
    try:
        return [list(r) for r in workbook.worksheets[0].iter_rows(values_only=True)]
    finally:
        workbook.close()


@pytest.mark.parametrize("suffix", ["xlsx", "csv"])
def test_blinded_ranks_come_back_per_system(tmp_path: Path, suffix: str) -> None:
    rows = _sheet()
    path = tmp_path / f"sheet.{suffix}"
    tasks = list(FORMAT.read([(_write_xlsx if suffix == "xlsx" else _write_csv)(path, rows)], DEFINITION))
    rng = random.Random(4)
    exported = [_blind(t, rng, i) for i, t in enumerate(tasks, 1)]
    assert any(e.systems != SYSTEMS for e in exported)
    for e in exported:
        assert all(FORMAT.check(e, a, DEFINITION) == [] for a in e.annotations if not a.cancelled)
    csv_path, xlsx_path = FORMAT.write_results(iter(exported), DEFINITION, tmp_path / "out")
    assert (csv_path.name, xlsx_path.name) == ("extractive-ranking.csv", "extractive-ranking.xlsx")

    header = ["url", "reference", *SYSTEMS, *_rank_header()]
    with csv_path.open(encoding="utf-8", newline="") as f:
        csv_rows = list(csv.reader(f))
    xlsx_rows = _read_xlsx(xlsx_path)
    assert csv_rows[0] == header and xlsx_rows[0] == header
    assert len(csv_rows) == len(xlsx_rows) == 1 + len(OUTPUTS)
    sheet_rows = [r for r in rows[1:] if r[0] is not None]
    for task, source, got_csv, got_xlsx in zip(tasks, sheet_rows, csv_rows[1:], xlsx_rows[1:], strict=True):
        ranks = _ranks(task.data["row"])
        expected_ranks = [ranks[(a, d, s)] for a in ANNOTATORS for d in DIMENSIONS for s in SYSTEMS]
        assert got_xlsx == [*source[: 2 + len(SYSTEMS)], *expected_ranks]
        assert got_csv == [*source[: 2 + len(SYSTEMS)], *map(str, expected_ranks)]
        assert all(type(v) is int for v in got_xlsx[2 + len(SYSTEMS) :])


def test_golden_example(tmp_path: Path) -> None:
    (example,) = json.loads((EXAMPLES / "extractive-ranking.json").read_text(encoding="utf-8"))
    result = json.loads((DATA / "example_annotations" / "extractive-ranking.json").read_text(encoding="utf-8"))
    systems = ("sys1", "sys2", "sys3", "sys4")
    task = ExportedTask(3, "extractive-ranking:example", example["data"], systems,
                        (ExportedAnnotation(1, "annotator@annols.local", result),))  # fmt: skip
    assert FORMAT.check(task, task.annotations[0], DEFINITION) == []
    csv_path, xlsx_path = FORMAT.write_results([task], DEFINITION, tmp_path)
    assert csv_path.read_bytes() == (DATA / "extractive_ranking" / "example.csv").read_bytes()
    with csv_path.open(encoding="utf-8", newline="") as f:
        assert _read_xlsx(xlsx_path) == [[int(c) if c.isdigit() else c for c in row] for row in csv.reader(f)]


def test_shuffled_example_unblinds_to_the_same_sheet(tmp_path: Path) -> None:
    """The same judgments seen through another blinding give the same per-system sheet."""
    (example,) = json.loads((EXAMPLES / "extractive-ranking.json").read_text(encoding="utf-8"))
    result = json.loads((DATA / "example_annotations" / "extractive-ranking.json").read_text(encoding="utf-8"))
    data = dict(example["data"])
    order = ["d", "a", "c", "b"]  # shown position i holds the original output order[i]
    for i, p in enumerate(POSITIONS):
        data[f"output_{p}"] = example["data"][f"output_{order[i]}"]
    moved = {old: POSITIONS[i] for i, old in enumerate(order)}
    shuffled = [{**r, "from_name": f"{r['from_name'][:-1]}{moved[r['from_name'][-1]]}"} for r in result]
    systems = tuple(f"sys{'abcd'.index(o) + 1}" for o in order)
    task = ExportedTask(3, "extractive-ranking:example", data, systems,
                        (ExportedAnnotation(1, "annotator@annols.local", shuffled),))  # fmt: skip
    csv_path, _ = FORMAT.write_results([task], DEFINITION, tmp_path)
    assert csv_path.read_bytes() == (DATA / "extractive_ranking" / "example.csv").read_bytes()


def test_text_starting_with_equals_stays_text(tmp_path: Path) -> None:
    data = {"url": "=HYPERLINK(\"x\")", "reference": "r", "raw": list("ABCD"),
            **{f"output_{p}": p for p in POSITIONS}}  # fmt: skip
    task = ExportedTask(1, "k", data, SYSTEMS, (), source_systems=SYSTEMS)
    _, xlsx_path = FORMAT.write_results([task], DEFINITION, tmp_path)
    assert _read_xlsx(xlsx_path)[1] == ['=HYPERLINK("x")', "r", "A", "B", "C", "D"]


# ---------------------------------------------------------------- input errors


def _error(tmp_path: Path, rows: list[list[Any]], suffix: str = "csv") -> str:
    path = (_write_xlsx if suffix == "xlsx" else _write_csv)(tmp_path / f"bad.{suffix}", rows)
    with pytest.raises(InputError) as e:
        list(FORMAT.read([path], DEFINITION))
    message = str(e.value)
    assert "\n" not in message and message.startswith(str(path))
    return message


@pytest.mark.parametrize("suffix", ["csv", "xlsx"])
def test_missing_header(tmp_path: Path, suffix: str) -> None:
    rows = [["link", "reference", *SYSTEMS], ["u", "r", "a", "b", "c", "d"]]
    assert "bad." in _error(tmp_path, rows, suffix)
    assert ", row 1, field 'url': missing from the header" in _error(tmp_path, rows, suffix)
    assert "field 'reference': missing" in _error(tmp_path, [["url", *SYSTEMS], ["u", "a", "b", "c", "d"]], suffix)


@pytest.mark.parametrize("systems", [SYSTEMS[:3], (*SYSTEMS, "lead3"), SYSTEMS[:2]])
def test_wrong_number_of_system_columns(tmp_path: Path, systems: tuple[str, ...]) -> None:
    message = _error(tmp_path, [["url", "reference", *systems], ["u", "r", *("x" * len(systems))]], "xlsx")
    assert f"row 1, field 'systems': found {len(systems)} system columns" in message
    assert "exactly 4" in message


def test_bad_cells(tmp_path: Path) -> None:
    header = ["url", "reference", *SYSTEMS]
    empty_output = [header, ["u", "r", "a", "b", "c", "d"], ["u", "r", "a", "b", " </s> ", "d"]]
    assert "row 3, field 'matchsum': empty output" in _error(tmp_path, empty_output)
    assert "row 2, field 'column G': has a value but no header" in _error(
        tmp_path, [header, ["u", "r", "a", "b", "c", "d", "stray"]]
    )
    ranked = [*header, "ann1@x.org:overall:bart"]
    assert "row 2, field 'ann1@x.org:overall:bart': '5' is not a rank" in _error(
        tmp_path, [ranked, ["u", "r", "a", "b", "c", "d", 5]], "xlsx"
    )
    assert "field 'ann1@x.org:overall:t5': a rank column" in _error(tmp_path, [[*header, "ann1@x.org:overall:t5"]])
    assert "row 1, field 'bart': appears twice" in _error(tmp_path, [[*header, "bart"]])


def test_bad_files(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.xlsx"
    garbage.write_bytes(b"PK\x03\x04 not really a workbook")
    with pytest.raises(InputError, match=r"garbage\.xlsx: not a readable XLSX workbook"):
        list(FORMAT.read([garbage], DEFINITION))
    with pytest.raises(InputError, match=r"missing\.xlsx: file not found"):
        list(FORMAT.read([tmp_path / "missing.xlsx"], DEFINITION))
    with pytest.raises(InputError, match=r"sheet\.ods: unsupported file type"):
        list(FORMAT.read([tmp_path / "sheet.ods"], DEFINITION))
    latin = tmp_path / "latin.csv"
    latin.write_bytes("url,reference,a,b,c,d\nu,Žluťoučký,a,b,c,d\n".encode("cp1250"))
    with pytest.raises(InputError, match=r"latin\.csv, line 2: not UTF-8"):
        list(FORMAT.read([latin], DEFINITION))
    empty = _write_csv(tmp_path / "empty.csv", [])
    with pytest.raises(InputError, match=r"empty\.csv, row 1, field 'url': the sheet is empty"):
        list(FORMAT.read([empty], DEFINITION))
    with pytest.raises(InputError, match=r"takes no --predictions"):
        list(FORMAT.read_predictions([empty], DEFINITION))


# ---------------------------------------------------------------- rules


def _cell(dimension: str, position: str, *codes: str) -> dict[str, Any]:
    return {"id": f"{dimension}{position}", "from_name": f"{dimension}_{position}", "to_name": f"output_{position}",
            "type": "choices", "value": {"choices": list(codes)}, "origin": "manual"}  # fmt: skip


COMPLETE = [_cell(d, p, str(1 + (i % 4))) for d in DIMENSIONS for i, p in enumerate(POSITIONS)]


@pytest.mark.parametrize(
    ("result", "rule", "found"),
    [
        (COMPLETE[1:], "ranking-complete", "no rank for informative_a"),
        ([], "ranking-complete", "no rank for informative_a, informative_b"),
        ([*COMPLETE[:-1], _cell("overall", "d", "5")], "rank-in-range", "overall_d: '5' is not a rank 1..4"),
        ([*COMPLETE[:-1], _cell("overall", "d", "0")], "rank-in-range", "overall_d: '0'"),
        ([*COMPLETE[:-1], _cell("overall", "d", "first")], "rank-in-range", "overall_d: 'first'"),
        ([*COMPLETE[:-1], _cell("overall", "d", "1", "2")], "one-rank-per-cell", "overall_d has 2 ranks: 1; 2"),
        ([*COMPLETE, _cell("coherence", "b", "3")], "one-rank-per-cell", "coherence_b has 2 ranks"),
    ],
)
def test_each_rule_can_fail(result: list[dict[str, Any]], rule: str, found: str) -> None:
    task = ExportedTask(1, "task-key", {}, SYSTEMS, ())
    violations = FORMAT.check(task, ExportedAnnotation(2, "a@x.org", result), DEFINITION)
    assert [v for v in violations if v.rule == rule and found in v.found]
    assert all(v.task_key == "task-key" and v.annotator == "a@x.org" for v in violations)


def test_complete_ranking_with_ties_passes() -> None:
    task = ExportedTask(1, "k", {}, SYSTEMS, ())
    tied = [_cell(d, p, "1") for d in DIMENSIONS for p in POSITIONS]
    assert FORMAT.check(task, ExportedAnnotation(2, "a", COMPLETE), DEFINITION) == []
    assert FORMAT.check(task, ExportedAnnotation(2, "a", tied), DEFINITION) == []


@pytest.mark.parametrize("suffix", ["csv", "xlsx"])
def test_what_a_real_spreadsheet_holds_is_read_with_warnings(tmp_path: Path, suffix: str) -> None:
    """Stray spaces and NBSP around header names, trailing empty rows and columns, a note beside the
    table (after an empty column), CRLF and a BOM (CSV): the same tasks and judgments as the clean sheet."""
    clean = _sheet()
    messy = [[f" {clean[0][0]}\u00a0", *clean[0][1:], "", ""]]
    messy += [[*row, "", "note: check this" if i == 1 else ""] for i, row in enumerate(clean[1:], start=1)]
    messy += [[""] * len(messy[0])] * 2
    write = _write_xlsx if suffix == "xlsx" else _write_csv
    expected = list(FORMAT.read([write(tmp_path / f"clean.{suffix}", clean)], DEFINITION))
    path = write(tmp_path / f"messy.{suffix}", messy)
    if suffix == "csv":
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    tasks = list(FORMAT.read([path], DEFINITION))
    assert [(t.key, t.extra["raw"], t.annotations) for t in tasks] == [
        (t.key, t.extra["raw"], t.annotations) for t in expected
    ]
    col = openpyxl.utils.get_column_letter(len(clean[0]) + 2)
    warnings = [str(w) for t in tasks for w in t.warnings]
    assert warnings == [f"{path}, row 2: ignored a note beside the table in column {col}"]
