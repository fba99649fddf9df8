"""Spans in a conversation's messages are compared at their offsets in the whole conversation
(:func:`annols.analysis.table.judgment_rows`, read by :func:`annols.analysis.raters.quality.row_units` and the span
agreement), never at their offsets within their message: two annotators who mark the same offsets, same label and even
the same words in two different messages do not agree; the same words in the same message do.

Read from a pull folder written here (examples/chat-spans.toml: a spans target of kind conversation, Paragraphs regions
as Label Studio 1.23 stores them) by the one reader (:func:`annols.study.table.read`), no server: adjudicate's
disagreements (:func:`annols.analysis.raters.quality_findings.disagreements`, and through
:func:`annols.study.adjudicate.disagreeing`, which stages the export as a pull folder) and the report's span agreement
(``tables/spans_agreement.csv`` of :func:`annols.report.build_report`).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from annols import protocols
from annols.analysis.raters.quality_findings import Rules, disagreements
from annols.definition import fields
from annols.definition.blinding import META_KEY, META_SYSTEMS, encode_systems
from annols.labelstudio.client import Project
from annols.report import build_report
from annols.study.adjudicate import disagreeing
from annols.study.table import read
from tests.conftest import ROOT

EXAMPLE = ROOT / "examples" / "chat-spans.toml"
# The two assistant messages (1 and 3) hold "apples" at the same offsets, 2..8.
CONVERSATION = [
    {"role": "user", "content": "I have 3 apples and eat one. How many are left?"},
    {"role": "assistant", "content": "2 apples."},
    {"role": "user", "content": "And if I buy six more?"},
    {"role": "assistant", "content": "8 apples."},
]
USERS = {1: "ann-a@example.org", 2: "ann-b@example.org", 3: "ann-c@example.org"}
SAME, OTHER = "chat-spans:same-message", "chat-spans:other-message"


def marked(rid: str, message: int, start: int, end: int) -> list[dict[str, Any]]:
    """A Factual error on ``message``'s characters start..end, of severity major (its per-region answer)."""
    where = {"start": str(message), "end": str(message), "startOffset": start, "endOffset": end}
    return [{"id": rid, "from_name": "errors", "to_name": "conversation", "type": "paragraphlabels",
             "value": {**where, "paragraphlabels": ["Factual"]}, "origin": "manual"},
            {"id": rid, "from_name": "severity", "to_name": "conversation", "type": "choices",
             "value": {**where, "choices": ["major"]}, "origin": "manual"}]  # fmt: skip


def task(task_id: int, key: str, messages: tuple[int, ...]) -> dict[str, Any]:
    """A task the first annotators judged, each marking "apples" (2..8) in their message of ``messages``."""
    annotations = [{"id": 10 * task_id + n, "completed_by": uid, "result": marked(f"r{uid}", message, 2, 8),
                    "lead_time": 12.0, "created_at": "2024-05-01T10:00:00Z", "was_cancelled": False}
                   for n, (uid, message) in enumerate(zip(USERS, messages, strict=False))]  # fmt: skip
    return {"id": task_id, "data": {"conversation": CONVERSATION}, "annotations": annotations,
            "meta": {META_KEY: key, META_SYSTEMS: encode_systems(("model-y",))}}  # fmt: skip


def pull_folder(folder: Path, tasks: list[dict[str, Any]]) -> Path:
    folder.mkdir(parents=True)
    (folder / "export.json").write_text(json.dumps(tasks), encoding="utf-8")
    (folder / "annotators.json").write_text(json.dumps({str(k): v for k, v in USERS.items()}), encoding="utf-8")
    (folder / "project.json").write_text(json.dumps({"title": "Chat spans", "id": 3, "url": "http://127.0.0.1:8080",
                                                     "overlap": 2}), encoding="utf-8")  # fmt: skip
    return folder


def spans_read(pull: Path) -> tuple[Any, dict[tuple[str, str], list[tuple[int, int, int]]]]:
    """The study table as adjudicate reads its staged pull, and (task key, annotator) -> its spans (message, start,
    end) as the judgments table holds them."""
    table = read(protocols.load(str(EXAMPLE)), [pull], only_judgments=True, with_judges=False)
    frame = table.judgments.frame(table.study)
    frame = frame[frame["kind"] == "span"]
    found: dict[tuple[str, str], list[tuple[int, int, int]]] = {}
    for key, annotator, row, start, end in zip(frame["task_key"].astype(str), frame["annotator"].astype(str),
                                               frame["row"], frame["start"], frame["end"], strict=True):  # fmt: skip
        found.setdefault((key, annotator), []).append((int(row), int(start), int(end)))
    return table, found


def test_adjudicate_finds_the_same_offsets_in_different_messages_disagree(tmp_path: Path) -> None:
    text, starts = fields.conversation_text(CONVERSATION)
    # What makes it sharp: the two marks are the same label and words at the same offsets within their messages.
    assert CONVERSATION[1]["content"][2:8] == CONVERSATION[3]["content"][2:8] == "apples"
    assert text[starts[1] + 2 : starts[1] + 8] == text[starts[3] + 2 : starts[3] + 8] == "apples"
    table, spans = spans_read(pull_folder(tmp_path / "pull", [task(1, OTHER, (1, 3)), task(2, SAME, (3, 3))]))
    # the units compared: each mark at its words' place in the conversation, not at 2..8 of it
    assert spans[(OTHER, USERS[1])] == [(1, starts[1] + 2, starts[1] + 8)]
    assert spans[(OTHER, USERS[2])] == [(3, starts[3] + 2, starts[3] + 8)]
    for rules in (Rules(), Rules(span_f1=0.5), Rules(tolerance=3.0)):
        found = disagreements(table, rules)
        assert found.items == 2 and OTHER in found.keys, rules


def test_adjudicate_stages_the_export_and_finds_the_marks_in_different_messages_only(tmp_path: Path) -> None:
    """adjudicate's own entry (:func:`annols.study.adjudicate.disagreeing`: the project's export staged as a pull
    folder, read by the one reader), as ``annols adjudicate`` calls it once the export is fetched."""
    tasks = [task(1, OTHER, (1, 3)), task(2, SAME, (3, 3))]
    found = disagreeing(protocols.load(str(EXAMPLE)), Project(id=3, title="Chat spans", label_config=""),
                        "http://127.0.0.1:8080", tasks, USERS, {})  # fmt: skip
    assert (found.items, found.keys) == (2, [OTHER])


def test_adjudicate_finds_the_same_words_in_the_same_message_agree(tmp_path: Path) -> None:
    text, starts = fields.conversation_text(CONVERSATION)
    table, spans = spans_read(pull_folder(tmp_path / "pull", [task(1, OTHER, (1, 3)), task(2, SAME, (3, 3))]))
    # both marks are the same unit, and it is where the words are in the conversation's text (the units agree
    # because they are the same words, not because offsets within some message happen to be equal)
    assert spans[(SAME, USERS[1])] == spans[(SAME, USERS[2])] == [(3, starts[3] + 2, starts[3] + 8)]
    assert text[starts[3] + 2 : starts[3] + 8] == "apples"
    for rules in (Rules(), Rules(span_f1=0.5), Rules(tolerance=3.0)):
        found = disagreements(table, rules)
        assert found.items == 2 and SAME not in found.keys, rules


def agreement(pull: Path, out: Path) -> dict[str, str]:
    """The report's span agreement of all labels (tables/spans_agreement.csv)."""
    definition = protocols.load(str(EXAMPLE))
    build_report(definition, read(definition, [pull]), out)
    with (out / "tables" / "spans_agreement.csv").open(encoding="utf-8") as f:
        [row] = [r for r in csv.DictReader(f) if r["label"] == "all labels"]
    return row


def test_the_report_counts_the_same_offsets_in_different_messages_as_no_match(tmp_path: Path) -> None:
    row = agreement(pull_folder(tmp_path / "pull", [task(1, OTHER, (1, 3))]), tmp_path / "report")
    assert (row["annotator pairs"], row["spans"], row["exact matches"]) == ("1", "2", "0")
    # No span of one overlaps the other's: overlap precision and recall are 0, and the table leaves their F1 empty
    # (0/0); with the offsets within each message they would overlap (F1 1).
    assert float(row["exact F1"]) == 0.0 and (row["overlap F1"] == "" or float(row["overlap F1"]) == 0.0)


def test_the_report_counts_the_same_words_in_the_same_message_as_a_match(tmp_path: Path) -> None:
    """A and B mark "apples" in message 3, C the same offsets in message 1: of the three pairs, A-B match only."""
    row = agreement(pull_folder(tmp_path / "pull", [task(2, SAME, (3, 3, 1))]), tmp_path / "report")
    assert (row["annotator pairs"], row["spans"], row["exact matches"]) == ("3", "6", "1")
    # the CSV holds 4 decimals; micro-averaged over the pairs: 1 match in 6 spans, overlap P = R = 1/3
    assert abs(float(row["exact F1"]) - 2 * 1 / 6) < 1e-4 and abs(float(row["overlap F1"]) - 1 / 3) < 1e-4
    alone = agreement(pull_folder(tmp_path / "pair", [task(2, SAME, (3, 3))]), tmp_path / "pair-report")
    assert (alone["exact matches"], float(alone["exact F1"]), float(alone["overlap F1"])) == ("1", 1.0, 1.0)


def gold_pull(tmp_path: Path) -> tuple[Path, Path]:
    """A pull whose one task is a gold item (A marks the gold's words, "apples" in message 3; B the same offsets in
    message 1), and the expert's pull of it: the gold judgment."""
    from annols.study.roles import GOLD, META_TAG, encode_tag

    gold_task = task(2, SAME, (3, 1))
    gold_task["meta"][META_TAG] = encode_tag(SAME, GOLD)
    pull = pull_folder(tmp_path / "pull", [gold_task])
    expert = {**gold_task, "annotations": [{**gold_task["annotations"][0], "completed_by": 99}]}
    (tmp_path / "gold").mkdir()
    (tmp_path / "gold" / "export.json").write_text(json.dumps([expert]), encoding="utf-8")
    return pull, tmp_path / "gold"


def test_gold_scores_the_same_offsets_in_another_message_as_wrong(tmp_path: Path) -> None:
    from annols.analysis.options import ReportOptions
    from annols.analysis.raters.quality_findings import gold_scores

    pull, gold = gold_pull(tmp_path)
    table = read(protocols.load(str(EXAMPLE)), [pull], ReportOptions(gold=(gold,)))
    scores = gold_scores(table)
    found = dict(zip(scores["annotator"], scores["score"], strict=True))
    assert found == {USERS[1]: 1.0, USERS[2]: 0.0}


def test_adjudication_agreement_scores_the_same_offsets_in_another_message_as_no_match(tmp_path: Path) -> None:
    from annols.analysis.options import ReportOptions
    from annols.analysis.raters.quality_findings import adjudication_section

    pull = pull_folder(tmp_path / "pull", [task(2, SAME, (3, 1))])  # A: message 3, B: message 1
    verdict = task(2, SAME, (3,))
    verdict["meta"]["annols_adjudication"] = 1
    verdict["annotations"][0]["completed_by"] = 99
    (tmp_path / "adjudicated").mkdir()
    (tmp_path / "adjudicated" / "export.json").write_text(json.dumps([verdict]), encoding="utf-8")
    options = ReportOptions(adjudicated=(tmp_path / "adjudicated",))
    section = adjudication_section(read(protocols.load(str(EXAMPLE)), [pull], options), options)
    assert section is not None
    frame = section.tables[0].frame.set_index("annotator")
    assert frame.loc[USERS[1], "agreement with the verdict (after)"] == 1.0
    assert frame.loc[USERS[2], "agreement with the verdict (after)"] == 0.0
    assert frame.loc[USERS[1], "agreement with the others (before)"] == 0.0
