"""Spans inside the messages of a conversation (examples/chat-spans.toml: a spans target of kind conversation).

The config shows the conversation as a dialogue with paragraph labels; a Paragraphs region (message indexes and
offsets into them, as Label Studio 1.23 stores it) decodes to a span naming its message, with offsets into that
message's content; the report's rows place it in the conversation's text (messages joined by a blank line), which
is what the error scores' word counts and span agreement read.
"""

from __future__ import annotations

from typing import Any

from annols import protocols
from annols.analysis.by_style import asked
from annols.analysis.table import judgment_rows, target_text
from annols.definition import fields
from annols.protocols import config
from annols.styles import decode
from annols.styles.answers import ExportedAnnotation, ExportedTask
from annols.styles.judgments import TIDY_COLUMNS, Span
from tests.conftest import ROOT

EXAMPLE = ROOT / "examples" / "chat-spans.toml"
CONVERSATION = [
    {"role": "user", "content": "I have 3 apples and eat one. How many are left?"},
    {"role": "assistant", "content": "2 apples."},
    {"role": "user", "content": "And if I buy five more?"},
    {"role": "assistant", "content": "You would have 8 apples."},
]
KEPT = [c for c in TIDY_COLUMNS if c != "text"]


def region(rid: str, first: int, last: int, start: int, end: int, label: str = "Factual") -> dict[str, Any]:
    return {"id": rid, "from_name": "errors", "to_name": "conversation", "type": "paragraphlabels",
            "value": {"start": str(first), "end": str(last), "startOffset": start, "endOffset": end,
                      "paragraphlabels": [label]}, "origin": "manual"}  # fmt: skip


def severity(rid: str, code: str) -> dict[str, Any]:
    return {"id": rid, "from_name": "severity", "to_name": "conversation", "type": "choices",
            "value": {"start": "3", "end": "3", "startOffset": 15, "endOffset": 23, "choices": [code]},
            "origin": "manual"}  # fmt: skip


def test_the_config_shows_a_dialogue_with_paragraph_labels() -> None:
    xml = config.label_config(protocols.load(str(EXAMPLE)))
    assert '<ParagraphLabels name="errors" toName="conversation">' in xml
    assert '<Paragraphs name="conversation" value="$conversation" layout="dialogue" nameKey="role"' in xml
    assert '<Choices name="severity" toName="conversation"' in xml and 'perRegion="true"' in xml


def test_a_region_in_one_message_names_the_message_and_its_offsets() -> None:
    d = protocols.load(str(EXAMPLE))
    task = ExportedTask(1, "k", {"conversation": CONVERSATION}, ("model-y",), ())
    annotation = ExportedAnnotation(1, "a@x", [region("r1", 3, 3, 15, 23), severity("r1", "major")])
    [span] = [j for j in decode(d, task, annotation) if isinstance(j, Span)]
    assert span == Span("errors", "Factual", 15, 23, "8 apples", "r1", "model-y", {"severity": ("major",)},
                        message=3)  # fmt: skip
    assert CONVERSATION[3]["content"][span.start : span.end] == "8 apples"


def test_a_region_across_messages_is_a_span_per_message() -> None:
    d = protocols.load(str(EXAMPLE))
    task = ExportedTask(1, "k", {"conversation": CONVERSATION}, ("model-y",), ())
    annotation = ExportedAnnotation(1, "a@x", [region("r1", 1, 3, 2, 9)])
    spans = [(j.message, j.start, j.end, j.text, j.region) for j in decode(d, task, annotation) if isinstance(j, Span)]
    assert spans == [(1, 2, 9, "apples.", "r1"), (2, 0, 23, "And if I buy five more?", "r1"),
                     (3, 0, 9, "You would", "r1")]  # fmt: skip


def test_report_rows_place_spans_in_the_conversation_text() -> None:
    d = protocols.load(str(EXAMPLE))
    task = ExportedTask(1, "k", {"conversation": CONVERSATION}, ("model-y",), ())
    annotation = ExportedAnnotation(1, "a@x", [region("r1", 3, 3, 15, 23), severity("r1", "major"),
                                               region("r2", 1, 1, 0, 1, "Unhelpful")])  # fmt: skip
    text = target_text(d, task.data)
    assert text == "\n\n".join(m["content"] for m in CONVERSATION)
    rows = [dict(zip(KEPT, row, strict=True)) for row in judgment_rows(d, task, annotation)]
    spans = [(r["row"], r["start"], r["end"], r["value"]) for r in rows if r["kind"] == "span"]
    starts = fields.conversation_text(CONVERSATION)[1]
    assert spans == [(3, starts[3] + 15, starts[3] + 23, "Factual"), (1, starts[1], starts[1] + 1, "Unhelpful")]
    assert text[starts[3] + 15 : starts[3] + 23] == "8 apples" and text[starts[1]] == "2"
    assert [(r["row"], r["start"], r["value"]) for r in rows if r["kind"] == "span-answer"] == [
        (3, starts[3] + 15, "major")]


def test_the_item_is_what_the_user_said() -> None:
    spec = protocols.load(str(EXAMPLE)).spec
    other = [*CONVERSATION[:1], {"role": "assistant", "content": "Two."}, *CONVERSATION[2:3],
             {"role": "assistant", "content": "Seven."}]  # fmt: skip
    assert asked.unit_of(spec, {"conversation": CONVERSATION}, "a") == asked.unit_of(spec, {"conversation": other}, "b")
    changed = [*CONVERSATION[:2], {"role": "user", "content": "And if I sell one?"}, *CONVERSATION[3:]]
    assert asked.unit_of(spec, {"conversation": changed}, "c") != asked.unit_of(spec, {"conversation": other}, "b")
