"""The qa-feedback format: QA-Feedback records in, the same records out, rules, streaming."""

from __future__ import annotations

import copy
import csv
import json
import random
import string
import tracemalloc
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

from annols.definition import Definition
from annols.errors import InputError
from annols.formats import SourceTask, content_key, format_for
from annols.formats import qa_feedback as qa
from annols.protocols import load
from annols.styles.answers import ExportedAnnotation, ExportedTask
from tests.conftest import QA_DEV

ROOT = Path(__file__).resolve().parents[2]
DEV = QA_DEV
FIXTURES = ROOT / "tests" / "data" / "qa_feedback"
EXAMPLE_TASK = ROOT / "annols" / "protocols" / "examples" / "qa-feedback.json"
EXAMPLE_RESULT = ROOT / "tests" / "data" / "example_annotations" / "qa-feedback.json"


@pytest.fixture(scope="module")
def definition() -> Definition:
    return load("qa-feedback")


@pytest.fixture(scope="module")
def dev_path() -> Path:
    return DEV


@pytest.fixture(scope="module")
def dev_records(dev_path: Path) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = json.loads(dev_path.read_text(encoding="utf-8"))
    assert len(records) == 500
    return records


@pytest.fixture(scope="module")
def dev_tasks(dev_path: Path, definition: Definition) -> list[SourceTask]:
    return list(qa.FORMAT.read([dev_path], definition))


def export(task: SourceTask, *annotations: ExportedAnnotation, task_id: int = 1) -> ExportedTask:
    return ExportedTask(id=task_id, key=task.key, data=task.data, systems=(), annotations=annotations)


def original(task: SourceTask, task_id: int = 1) -> ExportedTask:
    """The export of a task whose imported annotation came back untouched."""
    return export(task, ExportedAnnotation(id=task_id, annotator="original", result=task.annotations[0].result))


def write_jsonl(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def read_one(tmp_path: Path, definition: Definition, record: dict[str, Any]) -> SourceTask:
    tasks = list(qa.FORMAT.read([write_jsonl(tmp_path / "in.jsonl", [record])], definition))
    assert len(tasks) == 1
    return tasks[0]


def results_back(tmp_path: Path, definition: Definition, tasks: list[ExportedTask]) -> list[dict[str, Any]]:
    out = tmp_path / "out"
    qa.FORMAT.write_results(tasks, definition, out)
    lines = (out / "qa-feedback.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def same(a: Any, b: Any) -> bool:
    """Equal including key order."""
    return json.dumps(a, ensure_ascii=False) == json.dumps(b, ensure_ascii=False)


def small_record(**changes: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "question": "Who wrote it?",
        "passages": [["Book", "Ann wrote the book.", "It sold well."], ["Ann", "Ann is a writer."]],
        "gold": "Ann wrote it.",
        "prediction 1": "Ann wrote it. Ann wrote it in 1999.",
        "feedback": {"errors": [], "missing-info": [], "corrected-prediction": ""},
    }
    record.update(changes)
    return record


# --- registry and config -----------------------------------------------------------------------


def test_format_is_registered(definition: Definition) -> None:
    fmt = format_for(definition)
    assert fmt is qa.FORMAT
    assert fmt.name == "qa-feedback"
    assert fmt.describe and "\n" not in fmt.describe


def test_result_names_are_those_of_the_config() -> None:
    root = etree.parse(str(ROOT / "configs" / "qa-feedback.xml")).getroot()
    tags = {el.get("name"): el.tag for el in root.iter() if el.get("name")}
    assert tags[qa.ERRORS] == "Labels" and tags[qa.TARGET] == "Text"
    assert tags[qa.EVIDENCE] == "Choices" and tags[qa.NOTE] == "TextArea" and tags[qa.CORRECTED] == "TextArea"
    assert tags[qa.PASSAGE_LABELS] == "ParagraphLabels" and tags[qa.PASSAGES] == "Paragraphs"
    labels = {el.get("value") for el in root.iter("Label")}
    assert set(qa.ERROR_LABELS.values()) | {qa.REPEATED} | set(qa.MISSING_LABELS.values()) == labels
    fields = {el.get("value") for el in root.iter() if (el.get("value") or "").startswith("$")}
    assert fields == {"$question", "$passages", "$reference", "$prediction", "$evidence_options"}


# --- the full dev set --------------------------------------------------------------------------


def test_dev_set_round_trips_exactly(
    tmp_path: Path,
    definition: Definition,
    dev_path: Path,
    dev_records: list[dict[str, Any]],
    dev_tasks: list[SourceTask],
) -> None:
    assert len(dev_tasks) == 500 and len({t.key for t in dev_tasks}) == 500
    exported = [original(t, i) for i, t in enumerate(dev_tasks, 1)]
    out = tmp_path / "out"
    paths = qa.FORMAT.write_results(iter(exported), definition, out)
    assert [p.name for p in paths] == ["qa-feedback.jsonl", "qa-feedback.json", "qa-feedback-annotators.csv"]

    rebuilt = [json.loads(line) for line in (out / "qa-feedback.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rebuilt) == 500
    assert sum(same(a, b) for a, b in zip(rebuilt, dev_records, strict=True)) == 500
    # The array file is the dataset's own file, byte for byte.
    assert (out / "qa-feedback.json").read_bytes() == dev_path.read_bytes()

    with (out / "qa-feedback-annotators.csv").open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 500
    assert rows[0] == {"line": "1", "task_key": dev_tasks[0].key, "task_id": "1", "annotator": "original",
                       "annotation_id": "1"}  # fmt: skip

    errors = Counter(e["error type"] for r in rebuilt for e in r["feedback"]["errors"])
    assert errors == {
        "Irrelevant": 909,
        "Redundant": 133,
        "Wrong-Grounding": 163,
        "Unverifiable": 152,
        "Incoherent": 16,
    }
    missing = Counter(e["error type"] for r in rebuilt for e in r["feedback"]["missing-info"])
    assert missing == {"Missing-Answer": 240, "Missing-Major-Auxiliary": 283, "Missing-Minor-Auxiliary": 319}
    assert sum(1 for r in rebuilt if r["feedback"]["corrected-prediction"]) == 487

    # The same counts in Label Studio's terms.
    results = [item for t in dev_tasks for item in t.annotations[0].result]
    labels = Counter(i["value"]["labels"][0] for i in results if i["type"] == "labels")
    assert labels["Repetitive"] == 133 and labels["Inconsistent Fact"] == 163 and labels["Unverifiable Fact"] == 152
    assert sum(1 for i in results if i.get("from_name") == "evidence") == 163
    assert sum(1 for i in results if i.get("from_name") == "corrected_prediction") == 487


def test_dev_task_data_survives_sorted_keys(
    tmp_path: Path, definition: Definition, dev_records: list[dict[str, Any]], dev_tasks: list[SourceTask]
) -> None:
    """PostgreSQL's jsonb reorders object keys: the record string keeps the original order."""
    exported = []
    for i, task in enumerate(dev_tasks, 1):
        data = json.loads(json.dumps(task.data, sort_keys=True))
        result = json.loads(json.dumps(task.annotations[0].result, sort_keys=True))
        exported.append(ExportedTask(i, task.key, data, (), (ExportedAnnotation(i, "original", result),)))
    rebuilt = results_back(tmp_path, definition, exported)
    assert sum(same(a, b) for a, b in zip(rebuilt, dev_records, strict=True)) == 500


def test_dev_task_layout(dev_records: list[dict[str, Any]], dev_tasks: list[SourceTask]) -> None:
    record, task = dev_records[0], dev_tasks[0]
    data = task.data
    assert set(data) == {"question", "passages", "reference", "prediction", "evidence_options", "record"}
    assert data["question"] == record["question"]
    assert data["reference"] == record["gold"]
    assert data["prediction"] == record["prediction 1"]
    assert len(data["passages"]) == sum(len(p) for p in record["passages"]) == len(data["evidence_options"])
    assert data["passages"][0] == {
        "ref": "P1 S0 (title)",
        "text": "Bloom (Troye Sivan album)",
        "passage": 1,
        "sentence": 0,
    }
    assert data["passages"][len(record["passages"][0])]["ref"] == "P2 S0 (title)"
    assert data["passages"][1]["ref"] == "P1 S1"
    assert data["evidence_options"][1] == {"value": "P1:S1", "hint": record["passages"][0][1][:80]}
    assert len(data["evidence_options"][1]["hint"]) == 80
    kept = json.loads(data["record"])
    assert list(kept) == list(record)
    assert [k for k, v in kept.items() if v is None] == ["question", "passages", "gold", "prediction 1", "feedback"]
    assert kept["prediction 2"] == record["prediction 2"] and kept["preference"] == record["preference"]
    assert task.key == content_key(
        "qa-feedback",
        {"question": record["question"], "passages": record["passages"], "prediction 1": record["prediction 1"]},
    )
    assert task.location == "dev_feedback.json: record 1 (line 2)"
    assert [a.annotator for a in task.annotations] == ["original"]
    # Records without passages (181 and 477 here) still make tasks.
    assert dev_tasks[181].data["passages"] == [] and dev_tasks[181].data["evidence_options"] == []


def test_dev_result_layout(dev_records: list[dict[str, Any]], dev_tasks: list[SourceTask]) -> None:
    """Errors first (each with its own items), then missing-info, then the corrected prediction."""
    index = next(i for i, r in enumerate(dev_records) if all(r["feedback"].values()))
    result = dev_tasks[index].annotations[0].result
    feedback = dev_records[index]["feedback"]
    first = feedback["errors"][0]
    assert result[0] == {
        "id": "err1",
        "from_name": "errors",
        "to_name": "prediction",
        "type": "labels",
        "value": {
            "start": first["start"],
            "end": first["end"],
            "text": dev_records[index]["prediction 1"][first["start"] : first["end"]],
            "labels": [qa.ERROR_LABELS[first["error type"]]],
        },
        "origin": "manual",
    }
    assert result[-1]["from_name"] == "corrected_prediction"
    assert result[-1]["value"] == {"text": [feedback["corrected-prediction"]]}
    kinds = [i.get("from_name", "relation") for i in result]
    assert kinds.index("passages_labels") > max(i for i, k in enumerate(kinds) if k == "errors")
    ids = [(i.get("id"), i.get("from_name")) for i in result if "id" in i]
    assert len(ids) == len(set(ids))


def test_dev_annotations_break_no_rule(definition: Definition, dev_tasks: list[SourceTask]) -> None:
    found = [
        v
        for i, t in enumerate(dev_tasks)
        for v in qa.FORMAT.check(original(t, i), original(t).annotations[0], definition)
    ]
    assert found == []


def test_wrong_grounding_keeps_sentence_order(dev_records: list[dict[str, Any]], dev_tasks: list[SourceTask]) -> None:
    result = dev_tasks[376].annotations[0].result
    evidence = [i["value"]["choices"] for i in result if i.get("from_name") == "evidence"]
    assert ["P1:S11", "P1:S5"] in evidence
    span = next(i for i in result if i.get("from_name") == "evidence" and i["value"]["choices"] == ["P1:S11", "P1:S5"])
    region = next(i for i in result if i.get("id") == span["id"] and i["type"] == "labels")
    assert region["value"]["labels"] == ["Inconsistent Fact"]
    assert {k: span["value"][k] for k in ("start", "end", "text")} == {
        k: region["value"][k] for k in ("start", "end", "text")
    }


def test_redundant_not_verbatim_keeps_note(dev_records: list[dict[str, Any]], dev_tasks: list[SourceTask]) -> None:
    """Record 483: two Redundant spans repeat the same sentence, once with trailing spaces."""
    record, result = dev_records[483], dev_tasks[483].annotations[0].result
    sentence = "The country's majority of manufacturing took place in the northeast and midwest."
    repeated = [i for i in result if i["type"] == "labels" and i["value"]["labels"] == ["Repeated text"]]
    assert [(r["value"]["start"], r["value"]["end"], r["value"]["text"]) for r in repeated] == [(0, 80, sentence)]
    notes = [i for i in result if i.get("from_name") == "repeated_text_note"]
    assert [n["value"]["text"] for n in notes] == [[sentence + "  "]]
    repetitive = [i["id"] for i in result if i["type"] == "labels" and i["value"]["labels"] == ["Repetitive"]]
    relations = [(i["from_id"], i["to_id"]) for i in result if i["type"] == "relation"]
    assert [(r, repeated[0]["id"]) for r in repetitive] == [r for r in relations if r[1] == repeated[0]["id"]]
    assert notes[0]["id"] == repetitive[1]
    back = qa.feedback_from_result(dev_tasks[483].data, result)
    assert back == record["feedback"]


def test_missing_info_runs_are_linked(dev_records: list[dict[str, Any]], dev_tasks: list[SourceTask]) -> None:
    record, task = dev_records[385], dev_tasks[385]
    entries = [e for e in record["feedback"]["missing-info"] if len(e["sentence_id"]) > 1]
    assert any(b != a + 1 for e in entries for a, b in zip(e["sentence_id"], e["sentence_id"][1:], strict=False))
    result = task.annotations[0].result
    regions = [i for i in result if i["type"] == "paragraphlabels"]
    relations = [(i["from_id"], i["to_id"]) for i in result if i["type"] == "relation"]
    by_id = {r["id"]: r for r in regions}
    linked = [(a, b) for a, b in relations if a in by_id and b in by_id]
    assert linked, "the runs of a non-adjacent missing-info entry are linked"
    for a, b in linked:
        first, later = by_id[a]["value"], by_id[b]["value"]
        items = task.data["passages"]
        assert items[int(first["start"])]["passage"] == items[int(later["start"])]["passage"]
        assert int(later["start"]) > int(first["end"]) + 1
    for r in regions:
        v = r["value"]
        covered = task.data["passages"][int(v["start"]) : int(v["end"]) + 1]
        assert v["startOffset"] == 0 and v["endOffset"] == len(covered[-1]["text"])
        assert v["text"] == "\n".join(it["text"] for it in covered)


# --- browser-made annotations ------------------------------------------------------------------


def browser_like(result: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    """Random ids, extra region keys, every non-region item moved somewhere else; regions keep their order."""
    ids: dict[str, str] = {}

    def new(old: str) -> str:
        return ids.setdefault(old, "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(10)))

    regions, others = [], []
    for item in copy.deepcopy(result):
        if item["type"] == "relation":
            item.update(from_id=new(item["from_id"]), to_id=new(item["to_id"]), labels=[])
            others.append(item)
            continue
        item["id"] = new(item["id"])
        if item["type"] in ("labels", "paragraphlabels"):
            item.update(meta={}, readonly=False, hidden=False, score=None, parentID=None, origin="manual")
            item["value"]["extra"] = "ignored"
            regions.append(item)
        else:
            others.append(item)
    out = list(regions)
    for item in others:
        out.insert(rng.randint(0, len(out)), item)
    return out


@pytest.mark.parametrize("index", [6, 376, 380, 385, 483, 0, 181])
def test_browser_like_annotation_converts(
    dev_records: list[dict[str, Any]], dev_tasks: list[SourceTask], index: int
) -> None:
    rng = random.Random(index)
    result = browser_like(dev_tasks[index].annotations[0].result, rng)
    assert result != dev_tasks[index].annotations[0].result
    assert qa.feedback_from_result(dev_tasks[index].data, result) == dev_records[index]["feedback"]


def test_left_relations_are_read_backwards(dev_records: list[dict[str, Any]], dev_tasks: list[SourceTask]) -> None:
    result = copy.deepcopy(dev_tasks[385].annotations[0].result)
    for item in result:
        if item["type"] == "relation":
            item.update(from_id=item["to_id"], to_id=item["from_id"], direction="left")
    assert qa.feedback_from_result(dev_tasks[385].data, result) == dev_records[385]["feedback"]


def test_example_annotation_converts() -> None:
    data = json.loads(EXAMPLE_TASK.read_text(encoding="utf-8"))[0]["data"]
    result = json.loads(EXAMPLE_RESULT.read_text(encoding="utf-8"))
    # The passages region is item 5: P2 S1 (item 4 is P2's title).
    assert qa.feedback_from_result(data, result) == {
        "errors": [
            {
                "error type": "Wrong-Grounding",
                "explanation": '{"passage_id":1,"sentence_id":[1]}',
                "start": 79,
                "end": 94,
            },
            {"error type": "Redundant", "explanation": "released on 31 August 2019.", "start": 95, "end": 126},
            {"error type": "Irrelevant", "explanation": "", "start": 127, "end": 158},
        ],
        "missing-info": [{"error type": "Missing-Major-Auxiliary", "passage_id": 2, "sentence_id": [1]}],
        "corrected-prediction": (
            "Bloom is the second studio album by Australian singer Troye Sivan, released on 31 August 2018."
        ),
    }


def test_example_task_writes_a_record(tmp_path: Path, definition: Definition) -> None:
    """Tasks without the record string (the shipped example) still give a record in the dataset's layout."""
    data = json.loads(EXAMPLE_TASK.read_text(encoding="utf-8"))[0]["data"]
    result = json.loads(EXAMPLE_RESULT.read_text(encoding="utf-8"))
    task = ExportedTask(7, "example", data, (), (ExportedAnnotation(3, "a@example.org", result),))
    [record] = results_back(tmp_path, definition, [task])
    assert list(record) == ["question", "passages", "gold", "prediction 1", "feedback"]
    assert record["passages"][1] == [
        "Bloom (Troye Sivan album)",
        data["passages"][5]["text"],
        data["passages"][6]["text"],
    ]
    assert record["gold"] == data["reference"]


# --- Czech, emoji, carried fields -------------------------------------------------------------------


def test_czech_and_emoji_offsets(tmp_path: Path, definition: Definition) -> None:
    source = FIXTURES / "czech.jsonl"
    tasks = list(qa.FORMAT.read([source], definition))
    assert [t.location for t in tasks] == ["czech.jsonl: line 1", "czech.jsonl: line 2"]
    result = tasks[0].annotations[0].result
    spans = {i["id"]: i["value"] for i in result if i["type"] == "labels"}
    assert spans["err1"] == {"start": 42, "end": 53, "text": "Kůň 🐎 úpěl.", "labels": ["Repetitive"]}
    assert spans["rep1"] == {"start": 17, "end": 27, "text": "kůň 🐎 úpěl", "labels": ["Repeated text"]}
    assert spans["err3"] == {"start": 76, "end": 84, "text": "🇨🇿 Česka", "labels": ["Irrelevant"]}
    assert {"from_id": "err1", "to_id": "rep1", "type": "relation", "direction": "right"} in result
    assert not any(i.get("from_name") == "repeated_text_note" for i in result)
    evidence = next(i for i in result if i.get("from_name") == "evidence")
    assert evidence["value"] == {"start": 86, "end": 104, "text": "založená roku 1999", "choices": ["P2:S2"]}
    regions = [i for i in result if i["type"] == "paragraphlabels"]
    assert [(r["id"], r["value"]["start"], r["value"]["end"], r["value"]["paragraphlabels"]) for r in regions] == [
        ("mis1-1", "1", "1", ["Missing Minor Auxiliary"]),
        ("mis1-2", "3", "3", ["Missing Minor Auxiliary"]),
        ("mis2", "4", "5", ["Missing Answer"]),
    ]
    assert regions[2]["value"]["text"] == "Praha\nPraha je hlavní město Česka."
    assert regions[2]["value"]["endOffset"] == len("Praha je hlavní město Česka.")

    # The second record has no feedback (no annotation) and a trailing empty passage.
    assert tasks[1].annotations == ()
    assert json.loads(tasks[1].data["record"])["passages"] == [
        ["Nadpis", "Věta."],
        [],
        ["Třetí", "Poslední věta 😀."],
        [],
    ]
    emoji = {"start": 16, "end": 17, "text": "😀", "labels": ["Irrelevant"]}
    made = [{"id": "x1", "from_name": "errors", "to_name": "prediction", "type": "labels", "value": emoji}]
    exported = [original(tasks[0], 1), export(tasks[1], ExportedAnnotation(2, "b@example.org", made), task_id=2)]
    out = tmp_path / "out"
    qa.FORMAT.write_results(exported, definition, out)
    lines = (out / "qa-feedback.jsonl").read_text(encoding="utf-8").splitlines()
    inputs = source.read_text(encoding="utf-8").splitlines()
    assert lines[0] == inputs[0]  # byte-exact, diacritics and emoji unescaped
    second = json.loads(lines[1])
    assert list(second) == ["question", "passages", "gold", "prediction 1", "feedback", "preference", "note"]
    assert second["passages"][-1] == [] and second["prediction 1"][16:17] == "😀"
    assert second["feedback"] == {
        "errors": [{"error type": "Irrelevant", "explanation": "", "start": 16, "end": 17}],
        "missing-info": [],
        "corrected-prediction": "",
    }
    array = json.loads((out / "qa-feedback.json").read_text(encoding="utf-8"))
    assert array == [json.loads(line) for line in lines]
    assert "\\ud83d\\udc0e" in (out / "qa-feedback.json").read_text(encoding="utf-8")  # the dataset's ASCII escapes


def test_repeated_text_not_found_is_a_note(tmp_path: Path, definition: Definition) -> None:
    record = small_record(
        feedback={
            "errors": [
                {"error type": "Redundant", "explanation": "Bob wrote", "start": 14, "end": 35},
                {"error type": "Redundant", "explanation": "", "start": 0, "end": 3},
            ],
            "missing-info": [],
            "corrected-prediction": "",
        }
    )
    task = read_one(tmp_path, definition, record)
    result = task.annotations[0].result
    assert [i["type"] for i in result] == ["labels", "textarea", "labels"]
    assert result[1] == {
        "id": "err1",
        "from_name": "repeated_text_note",
        "to_name": "prediction",
        "type": "textarea",
        "value": {"start": 14, "end": 35, "text": ["Bob wrote"]},
        "origin": "manual",
    }
    assert qa.feedback_from_result(task.data, result) == record["feedback"]


def test_same_content_is_one_key(tmp_path: Path, definition: Definition) -> None:
    a = small_record(gold="One.")
    b = small_record(gold="Another.", feedback={"errors": [], "missing-info": [], "corrected-prediction": "x"})
    c = small_record(**{"prediction 1": "Something else."})
    keys = [t.key for t in qa.FORMAT.read([write_jsonl(tmp_path / "in.jsonl", [a, b, c])], definition)]
    assert keys[0] == keys[1] != keys[2]


# --- results files -------------------------------------------------------------------------------


def test_several_annotations_and_cancelled(tmp_path: Path, definition: Definition) -> None:
    task = read_one(tmp_path, definition, small_record())
    corrected = [{"id": "c", "from_name": "corrected_prediction", "to_name": "prediction", "type": "textarea",
                  "value": {"text": ["Ann wrote it in 1999."]}}]  # fmt: skip
    exported = export(
        task,
        ExportedAnnotation(11, "a@example.org", corrected),
        ExportedAnnotation(12, "b@example.org", [], cancelled=True),
        ExportedAnnotation(13, "c@example.org", []),
        task_id=5,
    )
    out = tmp_path / "out"
    qa.FORMAT.write_results([exported], definition, out)
    records = [json.loads(x) for x in (out / "qa-feedback.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["feedback"]["corrected-prediction"] for r in records] == ["Ann wrote it in 1999.", ""]
    rows = list(csv.reader((out / "qa-feedback-annotators.csv").open(encoding="utf-8", newline="")))
    assert rows == [
        ["line", "task_key", "task_id", "annotator", "annotation_id"],
        ["1", task.key, "5", "a@example.org", "11"],
        ["2", task.key, "5", "c@example.org", "13"],
    ]


def test_no_annotations_gives_empty_files(tmp_path: Path, definition: Definition) -> None:
    out = tmp_path / "out"
    qa.FORMAT.write_results([], definition, out)
    assert (out / "qa-feedback.json").read_text(encoding="utf-8") == json.dumps([], indent=2)
    assert (out / "qa-feedback.jsonl").read_text(encoding="utf-8") == ""


def test_predictions_are_refused(tmp_path: Path, definition: Definition) -> None:
    with pytest.raises(InputError, match="takes no --predictions"):
        list(qa.FORMAT.read_predictions([tmp_path / "x.jsonl"], definition))


# --- input errors --------------------------------------------------------------------------------


def one_line_error(definition: Definition, path: Path) -> str:
    with pytest.raises(InputError) as info:
        list(qa.FORMAT.read([path], definition))
    message = str(info.value)
    assert "\n" not in message and message.startswith(str(path))
    return message


def test_bad_json_in_array_names_record_and_line(tmp_path: Path, definition: Definition) -> None:
    path = tmp_path / "bad.json"
    path.write_text("[\n" + json.dumps(small_record()) + ',\n  {"question": "b"\n   "gold": "x"}\n]', encoding="utf-8")
    message = one_line_error(definition, path)
    assert "bad.json, record 2, line 4: not valid JSON (Expecting ',' delimiter); fix the file" in message


def test_bad_json_in_jsonl_names_line(tmp_path: Path, definition: Definition) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(small_record()) + "\n\n{oops\n", encoding="utf-8")
    assert "line 3: not valid JSON" in one_line_error(definition, path)


def test_truncated_array(tmp_path: Path, definition: Definition) -> None:
    path = tmp_path / "cut.json"
    path.write_text("[\n" + json.dumps(small_record(), indent=2)[:-20], encoding="utf-8")
    message = one_line_error(definition, path)
    assert "cut.json, record 1, line 20: not valid JSON (Unterminated string starting)" in message


def test_not_utf8(tmp_path: Path, definition: Definition) -> None:
    path = tmp_path / "latin.jsonl"
    path.write_bytes(json.dumps(small_record(question="Kůň"), ensure_ascii=False).encode("cp1250") + b"\n")
    assert "not UTF-8" in one_line_error(definition, path)


@pytest.mark.parametrize(
    ("change", "field", "problem"),
    [
        ({"gold": None}, "gold", "expected a string, got null"),
        ({"passages": [["Book", 3]]}, "passages[0][1]", "expected a string"),
        ({"passages": "Book"}, "passages", "expected a list of passages"),
        ({"prediction 1": 5}, "prediction 1", "expected a string, got int 5"),
        ({"feedback": []}, "feedback", "expected an object"),
        ({"feedback": {"errors": [{"error type": "Irrelevant", "explanation": "", "start": 14, "end": 99}]}},
         "feedback.errors[0].end", "within the prediction"),
        ({"feedback": {"errors": [{"error type": "Irrelevant", "explanation": "", "start": -1, "end": 3}]}},
         "feedback.errors[0].start", "outside the prediction"),
        ({"feedback": {"errors": [{"error type": "Irrelevant", "explanation": "", "start": 3, "end": 3}]}},
         "feedback.errors[0].end", "after start"),
        ({"feedback": {"errors": [{"error type": "Irrelevant", "explanation": "", "start": "0", "end": 3}]}},
         "feedback.errors[0].start", "expected a whole number"),
        ({"feedback": {"errors": [{"error type": "Irrelevant", "explanation": "why", "start": 0, "end": 3}]}},
         "feedback.errors[0].explanation", "carries no explanation"),
        ({"feedback": {"errors": [{"error type": "Typo", "explanation": "", "start": 0, "end": 3}]}},
         "feedback.errors[0].error type", "is not one of"),
        ({"feedback": {"errors": [{"error type": "Wrong-Grounding", "explanation": "P1 S1", "start": 0, "end": 3}]}},
         "feedback.errors[0].explanation", "expected evidence like"),
        ({"feedback": {"errors": [
            {"error type": "Wrong-Grounding", "explanation": '{"passage_id":1, "sentence_id":[1]}', "start": 0,
             "end": 3}
        ]}}, "feedback.errors[0].explanation", "(exactly)"),
        ({"feedback": {"errors": [
            {"error type": "Wrong-Grounding", "explanation": '{"passage_id":3,"sentence_id":[1]}', "start": 0, "end": 3}
        ]}}, "feedback.errors[0].explanation", "passage 3 sentence 1 does not exist"),
        ({"feedback": {"missing-info": [{"error type": "Missing-Answer", "passage_id": 2, "sentence_id": [2]}]}},
         "feedback.missing-info[0].sentence_id", "passage 2 sentence 2 does not exist"),
        ({"feedback": {"missing-info": [{"error type": "Missing-Answer", "passage_id": 1, "sentence_id": []}]}},
         "feedback.missing-info[0].sentence_id", "non-empty list"),
        ({"feedback": {"errors": [], "score": 3}}, "feedback.score", "unknown key"),
    ],
)  # fmt: skip
def test_record_errors_name_record_and_field(
    tmp_path: Path, definition: Definition, change: dict[str, Any], field: str, problem: str
) -> None:
    path = tmp_path / "in.json"
    path.write_text(json.dumps([small_record(), small_record(**change)], indent=2), encoding="utf-8")
    message = one_line_error(definition, path)
    assert f"record 2 (line 23), field {field!r}: " in message
    assert problem in message


def test_missing_field_in_jsonl(tmp_path: Path, definition: Definition) -> None:
    record = small_record()
    del record["question"]
    message = one_line_error(definition, write_jsonl(tmp_path / "in.jsonl", [small_record(), record]))
    assert "in.jsonl, line 2, field 'question': missing" in message


def test_record_not_an_object(tmp_path: Path, definition: Definition) -> None:
    path = tmp_path / "in.json"
    path.write_text("[1, 2]", encoding="utf-8")
    assert "record 1 (line 1): expected a QA-Feedback record (a JSON object), got int 1" in one_line_error(
        definition, path
    )


# --- check() ---------------------------------------------------------------------------------------


def example() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    data = json.loads(EXAMPLE_TASK.read_text(encoding="utf-8"))[0]["data"]
    return data, json.loads(EXAMPLE_RESULT.read_text(encoding="utf-8"))


def rules(definition: Definition, data: dict[str, Any], result: list[dict[str, Any]]) -> list[str]:
    task = ExportedTask(1, "qa-feedback:k", data, (), (ExportedAnnotation(1, "a@example.org", result),))
    found = qa.FORMAT.check(task, task.annotations[0], definition)
    assert all(v.task_key == "qa-feedback:k" and v.annotator == "a@example.org" and v.found for v in found)
    return [v.rule for v in found]


def span(id_: str, start: int, end: int, label: str, data: dict[str, Any]) -> dict[str, Any]:
    value = {"start": start, "end": end, "text": data["prediction"][start:end], "labels": [label]}
    return {"id": id_, "from_name": "errors", "to_name": "prediction", "type": "labels", "value": value}


def passage_region(id_: str, start: int, end: int, label: str = "Missing Answer") -> dict[str, Any]:
    value = {"start": str(start), "end": str(end), "startOffset": 0, "endOffset": 1, "paragraphlabels": [label]}
    return {"id": id_, "from_name": "passages_labels", "to_name": "passages", "type": "paragraphlabels", "value": value}


def test_example_breaks_no_rule(definition: Definition) -> None:
    data, result = example()
    assert rules(definition, data, result) == []  # its Repeated text overlaps an error span: allowed


def test_rule_inconsistent_fact_needs_evidence(definition: Definition) -> None:
    data, result = example()
    without = [i for i in result if i.get("from_name") != "evidence"]
    assert rules(definition, data, without) == ["inconsistent-fact-evidence"]


def test_rule_evidence_exists(definition: Definition) -> None:
    data, result = example()
    next(i for i in result if i.get("from_name") == "evidence")["value"]["choices"] = ["P1:S1", "P1:S9", "S2"]
    assert rules(definition, data, result) == ["evidence-exists"]


def test_rule_evidence_one_passage(definition: Definition) -> None:
    data, result = example()
    next(i for i in result if i.get("from_name") == "evidence")["value"]["choices"] = ["P1:S1", "P2:S1"]
    assert rules(definition, data, result) == ["evidence-one-passage"]
    # Written back with the first passage's sentences only.
    assert qa.feedback_from_result(data, result)["errors"][0]["explanation"] == '{"passage_id":1,"sentence_id":[1]}'


def test_rule_repetitive_linked(definition: Definition) -> None:
    data, result = example()
    unlinked = [i for i in result if i["type"] != "relation"]
    assert rules(definition, data, unlinked) == ["repetitive-linked", "orphan-repeated-text"]
    note = {"id": "qa2", "from_name": "repeated_text_note", "to_name": "prediction", "type": "textarea",
            "value": {"start": 95, "end": 126, "text": ["released in 2019"]}}  # fmt: skip
    without_region = [i for i in unlinked if i.get("id") != "qa3"]
    assert rules(definition, data, [*without_region, note]) == []
    assert qa.feedback_from_result(data, [*without_region, note])["errors"][1]["explanation"] == "released in 2019"


def test_rule_repeated_text_before(definition: Definition) -> None:
    data, result = example()
    later = span("late", 127, 158, "Repeated text", data)
    changed = [later if i.get("id") == "qa3" else i for i in result]
    for item in changed:
        if item["type"] == "relation":
            item["to_id"] = "late"
    assert rules(definition, data, changed) == ["repeated-text-before"]


def test_rule_orphan_repeated_text(definition: Definition) -> None:
    data, result = example()
    assert rules(definition, data, [*result, span("lone", 0, 5, "Repeated text", data)]) == ["orphan-repeated-text"]


def test_rule_missing_info_one_passage(definition: Definition) -> None:
    data, result = example()
    assert rules(definition, data, [*result, passage_region("m1", 3, 4)]) == ["missing-info-one-passage"]
    linked = [passage_region("m2", 1, 1), passage_region("m3", 5, 5),
              {"from_id": "m2", "to_id": "m3", "type": "relation", "direction": "right"}]  # fmt: skip
    assert rules(definition, data, [*result, *linked]) == ["missing-info-one-passage"]
    same_passage = [passage_region("m2", 1, 1), passage_region("m3", 3, 3), linked[2]]
    assert rules(definition, data, [*result, *same_passage]) == []
    back = qa.feedback_from_result(data, [*result, *same_passage])["missing-info"]
    assert back[1] == {"error type": "Missing-Answer", "passage_id": 1, "sentence_id": [1, 3]}


def test_rule_missing_info_exists(definition: Definition) -> None:
    data, result = example()
    assert rules(definition, data, [*result, passage_region("m1", 6, 7)]) == ["missing-info-exists"]
    assert rules(definition, data, [*result, passage_region("m1", 6, 6)]) == []


def test_rule_overlapping_spans(definition: Definition) -> None:
    data, result = example()
    assert rules(definition, data, [*result, span("o", 151, 170, "Unverifiable Fact", data)]) == ["overlapping-spans"]
    assert rules(definition, data, [*result, span("o", 0, 120, "Irrelevant", data)]) == ["overlapping-spans"] * 2
    assert rules(definition, data, [*result, span("o", 159, 170, "Unverifiable Fact", data)]) == []


@pytest.mark.parametrize(
    ("start", "end", "what"),
    [
        (159, 171, "a trailing space"),
        (158, 170, "a leading space"),
        (160, 170, "a word cut at its start"),
        (159, 168, "a word cut at its end"),
        (170, 170, "nothing"),
    ],
)
def test_rule_spans_sit_on_word_boundaries(definition: Definition, start: int, end: int, what: str) -> None:
    data, result = example()
    assert rules(definition, data, [*result, span("o", start, end, "Unverifiable Fact", data)]) == [
        "span-on-word-boundaries"
    ], what
    # What the dataset's reward-model script asserts, on every error span of the example.
    text = data["prediction"]
    for item in result:
        if item.get("from_name") == "errors" and item["value"]["labels"][0] in qa.STORED_ERRORS:
            s, e = item["value"]["start"], item["value"]["end"]
            assert text[s].strip() != "" and (s == 0 or text[s - 1].strip() == "")
            assert e == len(text) or text[e].strip() == ""
    assert not qa.on_word_boundaries(text, start, end)


def test_the_dev_set_sits_on_word_boundaries(dev_records: list[dict[str, Any]]) -> None:
    spans = [(r["prediction 1"], e["start"], e["end"]) for r in dev_records for e in r["feedback"]["errors"]]
    assert len(spans) == 909 + 133 + 163 + 152 + 16
    assert all(qa.on_word_boundaries(*s) for s in spans)


def test_the_config_selects_whole_words(definition: Definition) -> None:
    from annols.protocols import config

    assert '<Text name="prediction" value="$prediction" granularity="word"/>' in config.label_config(definition)


# --- streaming -------------------------------------------------------------------------------------


def test_array_reader_across_any_chunk_boundary(
    monkeypatch: pytest.MonkeyPatch, definition: Definition, dev_path: Path, dev_tasks: list[SourceTask]
) -> None:
    monkeypatch.setattr(qa, "_CHUNK", 7)
    tasks = qa.FORMAT.read([dev_path], definition)
    for expected in dev_tasks[:60]:
        assert next(tasks) == expected


def big_array(path: Path, records: list[dict[str, Any]], copies: int) -> int:
    with path.open("w", encoding="utf-8") as f:
        f.write("[")
        for n in range(copies):
            for i, record in enumerate(records):
                f.write(
                    ("\n  " if n == i == 0 else ",\n  ")
                    + json.dumps({**record, "copy": n}, indent=2).replace("\n", "\n  ")
                )
        f.write("\n]")
    return path.stat().st_size


def count(tasks: Iterator[SourceTask]) -> int:
    return sum(1 for _ in tasks)


def test_array_file_is_streamed(tmp_path: Path, definition: Definition, dev_records: list[dict[str, Any]]) -> None:
    path = tmp_path / "big.json"
    size = big_array(path, dev_records, 9)
    assert size > 28_000_000
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        n = count(qa.FORMAT.read([path], definition))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert n == 4500
    assert peak < size / 20, f"peak {peak} bytes while reading a {size}-byte file"
