"""Conversations judged turn by turn, in Label Studio's editor in Chromium.

examples/chat-per-turn.toml (``per_turn = true``): one task shows a system's whole conversation, turn by turn,
each assistant turn followed by its ratings. Pushed by `annols push` (the server accepts the Repeater config and
the turns sent beside the conversation), the annotator rates two turns in one task (a turn left unrated is
refused by the editor), and the pull's judgments name the system, the item's task, the turn and the aspect.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.browser.conftest import LabelingView, pull, push
from tests.conftest import ROOT, LiveServer

EXAMPLE = ROOT / "examples" / "chat-per-turn.toml"
INPUT = ROOT / "examples" / "chat-per-turn.jsonl"


def test_two_turns_are_rated_in_one_task_and_pulled_with_their_turns(
    label_studio: LiveServer, labeling: LabelingView, tmp_path: Path
) -> None:
    record = next(r for r in (json.loads(x) for x in INPUT.read_text("utf-8").splitlines())
                  if r["id"] == "conv-1" and r["systems"] == ["model-x"])  # fmt: skip
    source = tmp_path / "turns.jsonl"
    source.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    title = "browser chat per turn"
    project = push(label_studio, [str(EXAMPLE), str(source)], title, tmp_path)

    task = labeling.open(project)
    page = labeling.page
    assert labeling.shown_systems == ("model-x",)
    assert task["data"]["conversation"] == record["conversation"]
    turns = page.locator(".lsf-paragraphs")
    assert turns.count() == 2  # one dialogue per assistant turn, in order, each message once
    for k, (user, assistant) in enumerate(zip(record["conversation"][::2], record["conversation"][1::2],
                                              strict=True)):  # fmt: skip
        text = turns.nth(k).inner_text()
        assert user["content"] in text and assistant["content"] in text
        assert text.index(user["content"]) < text.index(assistant["content"])
    rows = page.locator(".lsf-choices")
    assert rows.count() == 4  # helpfulness and correctness under each turn
    for row in range(4):  # each row of choices sits below its turn's dialogue and above the next one
        below = rows.nth(row).bounding_box()["y"] > turns.nth(row // 2).bounding_box()["y"]
        above = row // 2 == 1 or rows.nth(row).bounding_box()["y"] < turns.nth(1).bounding_box()["y"]
        assert below and above, row

    labeling.choose(rows.nth(0), "4")  # turn 1: helpfulness 4, correctness 3
    labeling.choose(rows.nth(1), "3")
    assert "Please answer: Helpfulness" in labeling.refused()  # turn 2 unrated: required per turn
    labeling.choose(rows.nth(2), "2")  # turn 2: helpfulness 2, correctness 5 ("5: very good", stored as 5)
    labeling.choose(rows.nth(3), "5: very good")
    labeling.screenshot("chat-per-turn")
    labeling.submit()

    out = pull(label_studio, [str(EXAMPLE)], title, tmp_path / "pulled")
    [line] = [json.loads(x) for x in (out / "chat-per-turn.jsonl").read_text("utf-8").splitlines()]
    assert line["systems"] == ["model-x"] and line["key"] == labeling.task_key
    assert line["data"]["conversation"] == record["conversation"] and set(line["data"]) == {"conversation", "record"}
    rated = [(j["system"], j["turn"], j["aspect"], j["value"]) for j in line["judgments"]]
    assert rated == [("model-x", 1, "helpfulness", 4.0), ("model-x", 1, "correctness", 3.0),
                     ("model-x", 2, "helpfulness", 2.0), ("model-x", 2, "correctness", 5.0)]  # fmt: skip
    results = (out / "results.csv").read_text("utf-8")
    assert "helpfulness__turn1" in results and "model-x" in results


SPANS = ROOT / "examples" / "chat-spans.toml"


def test_a_span_in_the_second_assistant_message_names_its_message_and_offsets(
    label_studio: LiveServer, labeling: LabelingView, tmp_path: Path
) -> None:
    """examples/chat-spans.toml: a spans target of kind conversation; the mark is made inside one message."""
    record = next(r for r in (json.loads(x) for x in SPANS.with_suffix(".jsonl").read_text("utf-8").splitlines())
                  if r["id"] == "conv-1" and r["systems"] == ["model-y"])  # fmt: skip
    source = tmp_path / "spans.jsonl"
    source.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    title = "browser chat spans"
    project = push(label_studio, [str(SPANS), str(source)], title, tmp_path)

    task = labeling.open(project)
    assert task["data"]["conversation"] == record["conversation"]
    message = 3  # the second assistant message: "You would have 8 apples."
    content = record["conversation"][message]["content"]
    wrong = "8 apples"
    # The same words in an earlier message would make the drag ambiguous: they are only in this one.
    assert [m["content"].count(wrong) for m in record["conversation"]] == [0, 0, 0, 1]
    labeling.label("Factual")
    labeling.select_text(content, content.index(wrong), content.index(wrong) + len(wrong))
    labeling.unselect()
    assert labeling.refused() == "Please answer: Severity of this error"
    severity = labeling.choices_after("Severity of this error")
    if not severity.is_visible():
        labeling.select_region("Factual")
    labeling.choose(severity, "Major")
    labeling.unselect()
    labeling.screenshot("chat-spans")
    saved = labeling.submit()
    [region] = [r for r in saved["result"] if r["from_name"] == "errors"]
    assert (region["value"]["start"], region["value"]["end"]) == (str(message), str(message))

    out = pull(label_studio, [str(SPANS)], title, tmp_path / "pulled")
    [line] = [json.loads(x) for x in (out / "chat-spans.jsonl").read_text("utf-8").splitlines()]
    [span] = [j for j in line["judgments"] if j["kind"] == "span"]
    assert (span["system"], span["message"], span["label"], span["answers"]) == (
        "model-y", message, "Factual", {"severity": ["major"]})  # fmt: skip
    assert (span["start"], span["end"]) == (content.index(wrong), content.index(wrong) + len(wrong))
    assert content[span["start"] : span["end"]] == span["text"] == wrong
