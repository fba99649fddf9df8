"""sentence-errors format: reading CSV/JSONL, the answer table back, and the protocol's rules."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path
from typing import Any

import pytest

from annols import protocols
from annols.definition import Definition
from annols.errors import InputError
from annols.formats import SourceTask, content_key, format_for
from annols.formats.sentence_errors import FORMAT, RESULT_COLUMNS
from annols.styles.answers import ExportedAnnotation, ExportedTask

DATA = Path(__file__).resolve().parent.parent / "data"
EXAMPLES = Path(protocols.HERE) / "examples"
ABSTRACT = protocols.load("sentence-errors", "abstract")
HEADLINE = protocols.load("sentence-errors", "headline")

# Written independently of the definition, so a changed group or code shows up here.
GROUP = {
    "Ungrammatical": "Malformed",
    "Semantically implausible": "Malformed",
    "No meaning can be inferred": "Malformed",
    "Meaning changed, not entailed": "Misleading",
    "Meaning changed, contradiction": "Misleading",
    "Pragmatic meaning changed": "Misleading",
}
MAPPINGS = ["Omission", "Wrong combination", "Fabrication", "Lack of rewriting"]
SPECIALS = ["OK", "Repetitive", "Sentence missing"]
EXPLANATIONS = [
    "vynechání slov „v Premiere League“ mění význam 🙂",
    "Spojení dvou vět: dívka „zmizí“, ne „zemře“ 😬",
    "Nový údaj o těhotenství; v článku není.\nDruhý řádek vysvětlení.",
    "Chybí kontext: „Je to praxe“ – jaká? 🤷‍♀️",
    "Obrácený význam (ž š č ř ď ť ň ů ú)",
    "Obrazné „boj o přežití“ čteno doslova 👍🏽",
]
# Every answer value of every column: three special cases, then 6 error rows using all
# four mappings and all six meanings, each with a Czech (and emoji) explanation.
ROW_ANSWERS: list[dict[str, str]] = [{"special": s} for s in SPECIALS] + [
    {"mapping": MAPPINGS[i % 4], "meaning": meaning, "explanation": EXPLANATIONS[i]} for i, meaning in enumerate(GROUP)
]


def _jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def _csv(path: Path, rows: list[list[str]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows(rows)
    return path


def _record(i: int, variant: str, generated: str, **extra: Any) -> dict[str, Any]:
    return {"id": f"doc-{i}", "input_text": f"Článek č. {i}: Žluťoučký kůň úpěl ďábelské ódy.",
            "gold": f"Zlatý standard {i}.", "generated": generated, "variant": variant, **extra}  # fmt: skip


# ---------------------------------------------------------------- reading


def test_format_is_registered() -> None:
    assert format_for(ABSTRACT) is FORMAT
    assert FORMAT.name == "sentence-errors" and "\n" not in FORMAT.describe


def test_bullets_split_into_rows_czech_kept(tmp_path: Path) -> None:
    generated = "• Trenér Nigel Pearson se obává dalších zranění.  \n•   Leicester prohrál s Chelsea 1:3 🙂\n"
    path = _jsonl(tmp_path / "in.jsonl", [_record(1, "abstract", generated, source="SumeCzech")])
    (task,) = FORMAT.read([path], ABSTRACT)
    assert task.data == {
        "input_text": "Článek č. 1: Žluťoučký kůň úpěl ďábelské ódy.",
        "gold": "Zlatý standard 1.",
        "generated": "• Trenér Nigel Pearson se obává dalších zranění.\n• Leicester prohrál s Chelsea 1:3 🙂",
        "sentence_1": "Trenér Nigel Pearson se obává dalších zranění.",
        "sentence_2": "Leicester prohrál s Chelsea 1:3 🙂",
        "sentence_3": "",
        "record": {"id": "doc-1", "generated": generated, "variant": "abstract", "source": "SumeCzech"},
    }
    assert task.location == f"{path}: line 1"
    assert task.key == content_key("sentence-errors", {"variant": "abstract", "input_text": task.data["input_text"],
                                                       "generated": task.data["generated"]})  # fmt: skip
    assert task.annotations == ()


def test_lines_split_into_rows_from_csv_same_key_as_jsonl(tmp_path: Path) -> None:
    generated = "Mauresmo bude v osmém měsíci.\n\n  Je to praxe, kterou Nejvyšší soud prosazuje.  \r\n"
    rec = _record(2, "abstract", generated)
    path = _csv(tmp_path / "in.csv", [list(rec), list(rec.values())])
    (task,) = FORMAT.read([path], ABSTRACT)
    assert [task.data[f"sentence_{n}"] for n in (1, 2, 3)] == [
        "Mauresmo bude v osmém měsíci.",
        "Je to praxe, kterou Nejvyšší soud prosazuje.",
        "",
    ]
    assert task.data["generated"] == "• Mauresmo bude v osmém měsíci.\n• Je to praxe, kterou Nejvyšší soud prosazuje."
    bullets = _jsonl(tmp_path / "b.jsonl", [_record(2, "abstract", task.data["generated"])])
    (same,) = FORMAT.read([bullets], ABSTRACT)
    assert same.key == task.key  # identical content, identical key
    (headline,) = FORMAT.read([_jsonl(tmp_path / "h.jsonl", [_record(2, "headline", "Jedna věta.")])], HEADLINE)
    assert headline.key != task.key and set(headline.data) >= {"sentence_1"} and "sentence_2" not in headline.data


def test_variant_mismatch_names_file_line_field(tmp_path: Path) -> None:
    ok = _record(1, "abstract", "• Věta.")
    bad = _record(2, "headline", "• Věta.")
    bad["input_text"] = "první řádek\ndruhý řádek"  # a quoted cell over two lines: line numbers still right
    path = _csv(tmp_path / "in.csv", [list(ok), list(ok.values()), list(bad.values())])
    with pytest.raises(InputError) as e:
        list(FORMAT.read([path], ABSTRACT))
    message = str(e.value)
    assert message.startswith(f"{path}, line 3, field 'variant': 'headline'")
    assert "own project" in message and "\n" not in message


def test_too_many_sentences(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "in.jsonl", [_record(1, "headline", "• Jedna.\n• Dvě.")])
    with pytest.raises(InputError, match=r"in\.jsonl, line 1, field 'generated': has 2 sentences.*1 row"):
        list(FORMAT.read([path], HEADLINE))


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"input_text": "a", "gold": "b", "variant": "headline"}\n', r"line 1, field 'generated': missing"),
        ('\n{"input_text": "a", "gold": "b", "generated": 3, "variant": "headline"}\n',
         r"line 2, field 'generated': expected a string"),
        ('{"input_text": "a", \n', r"line 1: not valid JSON"),
        ('["a"]\n', r"line 1: expected a JSON object"),
        ('{"input_text": "a", "gold": "b", "generated": "x", "variant": "headline", "annotations": '
         '[{"annotator": "A", "rows": [{"meaning": "Wrong"}]}]}\n',
         r"line 1, field 'annotations\[0\]\.rows\[0\]\.meaning': 'Wrong' is not one of"),
    ],
)  # fmt: skip
def test_bad_jsonl_records(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=expected):
        list(FORMAT.read([path], HEADLINE))


def test_bad_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"in\.txt: unsupported file type"):
        list(FORMAT.read([tmp_path / "in.txt"], HEADLINE))
    with pytest.raises(InputError, match=r"missing\.csv: cannot read"):
        list(FORMAT.read([tmp_path / "missing.csv"], HEADLINE))
    latin = tmp_path / "latin.csv"
    latin.write_bytes("input_text,gold,generated,variant\nčlánek,b,c,headline\n".encode("cp1250"))
    with pytest.raises(InputError, match=r"latin\.csv, line 2: not UTF-8"):
        list(FORMAT.read([latin], HEADLINE))
    ragged = _csv(tmp_path / "ragged.csv", [["input_text", "gold", "generated", "variant"], ["a", "b", "c"]])
    with pytest.raises(InputError, match=r"ragged\.csv, line 2: has 3 cells, the header has 4"):
        list(FORMAT.read([ragged], HEADLINE))
    with pytest.raises(InputError, match=r"takes no --predictions"):
        list(FORMAT.read_predictions([ragged], HEADLINE))


# ---------------------------------------------------------------- round trip


def _browser(result: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    """What the editor saves: arbitrary order and random ids."""
    items = [{**item, "id": "".join(rng.choices("abcdefghijk0123456789", k=10))} for item in result]
    rng.shuffle(items)
    return items


def _export(tasks: list[SourceTask], rng: random.Random) -> list[ExportedTask]:
    out = []
    for i, t in enumerate(tasks):
        annotations = [ExportedAnnotation(id=100 * i + j, annotator=f"{a.annotator}@annols.test",
                                          result=_browser(a.result, rng), lead_time=a.lead_time)
                       for j, a in enumerate(t.annotations)]  # fmt: skip
        skipped = ExportedAnnotation(id=100 * i + 99, annotator="skip@annols.test", result=[], cancelled=True)
        data = json.loads(json.dumps(t.data))  # as stored by the server
        out.append(ExportedTask(id=i + 1, key=t.key, data=data, systems=(), annotations=(*annotations, skipped)))
    return out


def _expected_row(task: SourceTask, annotator: str, n: int, answer: dict[str, str], variant: str) -> dict[str, Any]:
    meaning = answer.get("meaning", "")
    return {
        "task": task.key,
        "annotator": f"{annotator}@annols.test",
        "variant": variant,
        "sentence": n,
        "text": task.data[f"sentence_{n}"],
        "special_case": answer.get("special", ""),
        "mapping": answer.get("mapping", ""),
        "meaning_group": GROUP.get(meaning, ""),
        "meaning": meaning,
        "explanation": answer.get("explanation", ""),
        "record_id": task.data["record"]["id"],
    }


@pytest.mark.parametrize("definition", [ABSTRACT, HEADLINE], ids=["abstract", "headline"])
def test_every_answer_round_trips(tmp_path: Path, definition: Definition) -> None:
    rows = definition.spec.rows
    assert {a.get("special") for a in ROW_ANSWERS} - {None} == {c.code for c in definition.spec.special.choices}
    assert {a.get("mapping") for a in ROW_ANSWERS} - {None} == set(MAPPINGS)
    assert {a.get("meaning") for a in ROW_ANSWERS} - {None} == set(GROUP)
    variant = definition.variant or ""
    records, expected_answers = [], []
    for i in range(len(ROW_ANSWERS) // rows):
        a_rows = ROW_ANSWERS[i * rows : (i + 1) * rows]
        b_rows = [ROW_ANSWERS[(i * rows + k + 4) % len(ROW_ANSWERS)] for k in range(rows)]
        generated = "\n".join(f"• Věta {n} souhrnu {i}: řeřicha 🙂" for n in range(1, rows + 1))
        annotations = [{"annotator": "A", "rows": a_rows, "lead_time": 12.5}, {"annotator": "B", "rows": b_rows}]
        records.append(_record(i, variant, generated, annotations=annotations))
        expected_answers.append([("A", a_rows), ("B", b_rows)])
    tasks = list(FORMAT.read([_jsonl(tmp_path / "in.jsonl", records)], definition))
    assert len(tasks) == len(records) and all(len(t.annotations) == 2 for t in tasks)
    assert all("annotations" not in t.data["record"] for t in tasks)

    exported = _export(tasks, random.Random(2))
    for t in exported:
        for a in t.annotations[:2]:
            assert FORMAT.check(t, a, definition) == []
    paths = FORMAT.write_results(iter(exported), definition, tmp_path / "out")
    assert [p.name for p in paths] == ["sentence-errors.csv", "sentence-errors.jsonl"]

    expected = [_expected_row(t, who, n, answer, variant)
                for t, answers in zip(tasks, expected_answers, strict=True)
                for who, row_answers in answers for n, answer in enumerate(row_answers, 1)]  # fmt: skip
    with paths[0].open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        assert tuple(reader.fieldnames or ()) == RESULT_COLUMNS
        assert list(reader) == [{k: str(v) for k, v in row.items()} for row in expected]
    lines = paths[1].read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == expected


def test_hidden_answers_are_not_written(tmp_path: Path) -> None:
    result = [_choice("special_1", "Repetitive"), _choice("mapping_1", "Omission"), _text("explanation_1", "zbytek")]
    task = ExportedTask(1, "k", {"sentence_1": "Věta."}, (), (ExportedAnnotation(1, "a@x", result),))
    (csv_path, _) = FORMAT.write_results([task], HEADLINE, tmp_path)
    with csv_path.open(encoding="utf-8", newline="") as f:
        (row,) = csv.DictReader(f)
    assert (row["special_case"], row["mapping"], row["explanation"], row["record_id"]) == ("Repetitive", "", "", "")
    assert [v.rule for v in FORMAT.check(task, task.annotations[0], HEADLINE)] == ["special-case-excludes-the-rest"]


def test_golden_example(tmp_path: Path) -> None:
    (example,) = json.loads((EXAMPLES / "sentence-errors-abstract.json").read_text(encoding="utf-8"))
    result = json.loads((DATA / "example_annotations" / "sentence-errors-abstract.json").read_text(encoding="utf-8"))
    data = example["data"]
    key = content_key("sentence-errors", {"variant": "abstract", "input_text": data["input_text"],
                                          "generated": data["generated"]})  # fmt: skip
    task = ExportedTask(7, key, data, (), (ExportedAnnotation(1, "annotator@annols.local", result),))
    assert FORMAT.check(task, task.annotations[0], ABSTRACT) == []
    (csv_path, jsonl_path) = FORMAT.write_results([task], ABSTRACT, tmp_path)
    golden = DATA / "sentence_errors"
    assert csv_path.read_bytes() == (golden / "example-abstract.csv").read_bytes()
    assert jsonl_path.read_bytes() == (golden / "example-abstract.jsonl").read_bytes()


# ---------------------------------------------------------------- rules


def _choice(name: str, *codes: str) -> dict[str, Any]:
    n = name.rsplit("_", 1)[1]
    return {"id": f"x{name}", "from_name": name, "to_name": f"sentence_{n}", "type": "choices",
            "value": {"choices": list(codes)}, "origin": "manual"}  # fmt: skip


def _text(name: str, text: str) -> dict[str, Any]:
    n = name.rsplit("_", 1)[1]
    return {"id": f"x{name}", "from_name": name, "to_name": f"sentence_{n}", "type": "textarea",
            "value": {"text": [text]}, "origin": "manual"}  # fmt: skip


VALID = [_choice("mapping_1", "Omission"), _choice("meaning_1", "Ungrammatical"), _text("explanation_1", "Proč 🙂")]


@pytest.mark.parametrize(
    ("result", "rule"),
    [
        ([_choice("mapping_1", "Omission", "Fabrication"), *VALID[1:]], "one-answer-per-column"),
        ([_choice("special_1", "OK", "Repetitive")], "one-answer-per-column"),
        ([_choice("special_1", "OK"), _choice("meaning_1", "Ungrammatical")], "special-case-excludes-the-rest"),
        ([_choice("special_1", "OK"), _text("explanation_1", "zbylý text")], "special-case-excludes-the-rest"),
        ([], "row-answered"),
        ([VALID[0], VALID[2]], "row-answered"),
        (VALID[:2], "explanation-required"),
        ([*VALID[:2], _text("explanation_1", "   ")], "explanation-required"),
        ([VALID[0], _choice("meaning_1", "Malformed"), VALID[2]], "unknown-answer"),
        ([_choice("special_1", "Fine")], "unknown-answer"),
        ([*VALID, _choice("special_2", "OK")], "unknown-answer"),
    ],
)
def test_each_rule_can_fail(result: list[dict[str, Any]], rule: str) -> None:
    task = ExportedTask(1, "task-key", {"sentence_1": "Věta."}, (), ())
    annotation = ExportedAnnotation(5, "a@x.org", result)
    violations = FORMAT.check(task, annotation, HEADLINE)
    assert rule in [v.rule for v in violations]
    assert all(v.task_key == "task-key" and v.annotator == "a@x.org" and v.found for v in violations)


def test_valid_rows_pass_and_missing_row_fails() -> None:
    task = ExportedTask(1, "k", {}, (), ())
    assert FORMAT.check(task, ExportedAnnotation(1, "a", VALID), HEADLINE) == []
    rows = [*VALID, _choice("special_2", "Sentence missing")]
    (violation,) = FORMAT.check(task, ExportedAnnotation(1, "a", rows), ABSTRACT)
    assert (violation.rule, violation.found) == ("row-answered", "row 3: no special case and no mapping, meaning")


def test_what_a_real_spreadsheet_holds_is_read_with_warnings(tmp_path: Path) -> None:
    """A BOM, CRLF, stray spaces and NBSP around header names, trailing empty columns, empty rows,
    and a note beside the table after an empty column: the same tasks as the clean file."""
    header = ["id", "input_text", "gold", "generated", "variant"]
    rows = [[r[k] for k in header] for r in (_record(i, "abstract", "Věta jedna. Věta dvě.") for i in range(3))]
    clean = _csv(tmp_path / "clean.csv", [header, *rows])
    messy_rows = [[" id", "input_text\u00a0", "gold ", "generated", "variant", "", ""]]
    messy_rows += [[*rows[0], "", "", ""], [""] * 7, [*rows[1], "", "check this one"], [*rows[2]], [""] * 7]
    messy = _csv(tmp_path / "messy.csv", messy_rows)
    messy.write_bytes(b"\xef\xbb\xbf" + messy.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    expected = list(FORMAT.read([clean], ABSTRACT))
    tasks = list(FORMAT.read([messy], ABSTRACT))
    assert [(t.key, t.data) for t in tasks] == [(t.key, t.data) for t in expected]
    assert [str(w) for t in tasks for w in t.warnings] == [
        f"{messy}, line 4: ignored a note beside the table in column 7 ('check this one')"
    ]
    adjacent = _csv(tmp_path / "adjacent.csv", [header, [*rows[0], "stray"]])
    with pytest.raises(InputError, match=r"adjacent\.csv, line 2: has 6 cells, the header has 5; quote cells"):
        list(FORMAT.read([adjacent], ABSTRACT))
