"""The span and sentence formats write their result files from the judgments their style decodes: a malformed
export the format's own parser once read otherwise is now read as decode reads it, and what decode reads no
judgment from is left out of the result files and named in violations.csv (offline, through ``convert``)."""

from __future__ import annotations

import copy
import csv
import json
from pathlib import Path
from typing import Any

from annols.study import pull
from annols.study.exports import read_export
from annols.styles import decode
from annols.styles.judgments import Row, Span
from tests.study.test_pull_parts import DEV, SUMMARY_FLAWS_INPUT, load, raw_export, sentence_errors_input, write_export


def converted(tmp_path: Path, protocol: str, tasks: list[dict[str, Any]]) -> tuple[Path, list[dict[str, str]]]:
    out = tmp_path / "out"
    out.mkdir(parents=True)
    pull.convert(write_export(tmp_path / "export.json", tasks), load(protocol), out, {1: "a@x", 2: "b@x"}, workers=1)
    with open(out / pull.VIOLATIONS_FILE, encoding="utf-8", newline="") as f:
        return out, list(csv.DictReader(f))


def rules(violations: list[dict[str, str]], task_key: str) -> list[str]:
    return [v["rule"] for v in violations if v["task_key"] == task_key]


def key_of(task: dict[str, Any]) -> str:
    return str(task["meta"]["annols_key"])


def test_summary_flaws_leaves_out_an_unlabelled_region_and_one_without_whole_offsets(tmp_path: Path) -> None:
    tasks = raw_export("summary-flaws", [SUMMARY_FLAWS_INPUT])
    task = tasks[0]
    summary = task["data"]["summary"]
    word = summary.split()[0]
    result = task["annotations"][0]["result"]
    result[:] = [item for item in result if item["from_name"] != "flaws_none"]
    region = {"from_name": "flaws", "to_name": "summary", "type": "labels", "origin": "manual"}
    result += [
        {**region, "id": "good", "value": {"start": 0, "end": len(word), "text": word, "labels": ["Irrelevant"]}},
        # Read before as a span without a label ("Span 2: <word>") and as one at offsets -1 with the region's text.
        {**region, "id": "bare", "value": {"start": 0, "end": len(word), "text": word, "labels": []}},
        {**region, "id": "words", "value": {"start": "zero", "end": len(word), "text": "elsewhere",
                                            "labels": ["Incoherent"]}},
    ]  # fmt: skip
    out, violations = converted(tmp_path, "summary-flaws", tasks)

    line = json.loads((out / "summary-flaws.jsonl").read_text("utf-8").splitlines()[0])
    assert line["spans"] == [{"start": 0, "end": len(word), "text": word, "label": "Irrelevant"}]
    block = (out / "summary-flaws.txt").read_text("utf-8").split("\n\n#####")[0]
    assert f"Span 1: {word} (Label: Irrelevant)" in block and "Span 2" not in block
    assert rules(violations, key_of(task)).count("unreadable-span") == 2
    found = [v["found"] for v in violations if v["rule"] == "unreadable-span"]
    assert any("'bare'" in f and "no label" in f for f in found)
    assert any("'words'" in f and "'zero'" in f for f in found)
    # The style reads the same: one span, which results.csv holds too.
    exported = next(read_export(tmp_path / "export.json", {1: "a@x"}))
    spans = [j for j in decode(load("summary-flaws"), exported, exported.annotations[0]) if isinstance(j, Span)]
    assert [(s.start, s.end, s.label) for s in spans] == [(0, len(word), "Irrelevant")]


def test_sentence_errors_reads_an_answer_of_another_type_as_decode_does(tmp_path: Path) -> None:
    tasks = raw_export("sentence-errors", [sentence_errors_input(tmp_path / "sentence-errors.jsonl")])
    task = tasks[0]
    result = task["annotations"][0]["result"]
    mapping = next(item for item in result if item["from_name"] == "mapping_2")
    # The format's parser read a column's choices whatever the item's type; decode reads choices items only.
    mapping["type"] = "textarea"
    explanation = next(item for item in result if item["from_name"] == "explanation_3")
    # Two items of one explanation: read before as "a\nb" by the format and as "ab" by decode; now both "a\nb".
    result.append({**explanation, "id": "again", "value": {"text": ["again"]}})
    out, violations = converted(tmp_path, "sentence-errors", tasks)

    with open(out / "sentence-errors.csv", encoding="utf-8", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["task"] == key_of(task) and r["annotator"] == "a@x"]
    assert rows[1]["mapping"] == "" and rows[1]["meaning"] == "Ungrammatical"
    assert rows[2]["explanation"] == 'x, "y"\nz\nagain'
    assert "unreadable-answer" in rules(violations, key_of(task))
    assert any("mapping_2 is a 'textarea' result" in v["found"] for v in violations)
    exported = next(read_export(tmp_path / "export.json", {1: "a@x"}))
    decoded = [j for j in decode(load("sentence-errors"), exported, exported.annotations[0]) if isinstance(j, Row)]
    assert decoded[1].columns["mapping"] == () and decoded[2].explanation == rows[2]["explanation"]


def test_qa_feedback_leaves_out_what_decode_cannot_read_and_keeps_the_rest(tmp_path: Path) -> None:
    tasks = raw_export("qa-feedback", [DEV])
    task = tasks[1]
    before = copy.deepcopy(task["annotations"][0]["result"])
    result = task["annotations"][0]["result"]
    next(item for item in result if item.get("id") == "err1")["value"]["start"] = "sixty"
    mis2 = next(item for item in result if item.get("id") == "mis2")
    unlabelled = copy.deepcopy(mis2)
    unlabelled["id"], unlabelled["value"]["paragraphlabels"] = "mis0", []
    unlabelled["value"]["start"] = unlabelled["value"]["end"] = "22"
    # Read before: an error at start -1, and the unlabelled region heading mis2's entry, which was lost with it.
    result += [unlabelled, {"from_id": "mis0", "to_id": "mis2", "type": "relation", "direction": "right"}]
    out, violations = converted(tmp_path, "qa-feedback", tasks)

    record = json.loads((out / "qa-feedback.jsonl").read_text("utf-8").splitlines()[1])
    errors, missing = record["feedback"]["errors"], record["feedback"]["missing-info"]
    assert [e["start"] for e in errors] == [83, 251, 460]
    assert [m["error type"] for m in missing] == ["Missing-Major-Auxiliary", "Missing-Answer"]
    assert rules(violations, key_of(task)).count("unreadable-span") == 2
    assert "unreadable-link" in rules(violations, key_of(task))
    # Without the malformed parts the record is the well-formed one's, but for the span decode could not read.
    task["annotations"][0]["result"] = before
    again, _ = converted(tmp_path / "again", "qa-feedback", tasks)
    well = json.loads((again / "qa-feedback.jsonl").read_text("utf-8").splitlines()[1])["feedback"]
    assert well["missing-info"] == missing and well["errors"][1:] == errors


def test_qa_feedback_reads_a_region_s_first_label_and_names_the_second(tmp_path: Path) -> None:
    tasks = raw_export("qa-feedback", [DEV])
    task = tasks[1]
    err1 = next(item for item in task["annotations"][0]["result"] if item.get("id") == "err1")
    err1["value"]["labels"] = ["Irrelevant", "Incoherent"]
    out, violations = converted(tmp_path, "qa-feedback", tasks)
    record = json.loads((out / "qa-feedback.jsonl").read_text("utf-8").splitlines()[1])
    assert [e["error type"] for e in record["feedback"]["errors"]][:2] == ["Irrelevant", "Irrelevant"]
    assert len(record["feedback"]["errors"]) == 4
    assert rules(violations, key_of(task)).count("one-label-per-region") == 1


def test_a_relation_drawn_pointing_left_links_its_to_region_to_its_from_region(tmp_path: Path) -> None:
    tasks = raw_export("qa-feedback", [DEV])
    task = tasks[1]
    relation = next(item for item in task["annotations"][0]["result"] if item.get("type") == "relation")
    written, before = converted(tmp_path / "right", "qa-feedback", tasks)
    relation.update({"from_id": "rep1", "to_id": "err4", "direction": "left"})  # the same arrow, drawn the other way
    flipped, violations = converted(tmp_path / "left", "qa-feedback", tasks)
    assert (flipped / "qa-feedback.jsonl").read_bytes() == (written / "qa-feedback.jsonl").read_bytes()
    assert violations == before
    exported = list(read_export(tmp_path / "left" / "export.json", {1: "a@x"}))[1]
    spans = {s.region: s for s in decode(load("qa-feedback"), exported, exported.annotations[0]) if isinstance(s, Span)}
    assert spans["err4"].links == ("rep1",) and spans["rep1"].links == ()
