"""QA-Feedback records (allenai/FineGrainedRLHF, Wu et al. 2023) <-> Label Studio tasks and results.

Input: QA-Feedback JSON records, as a JSON array file (``dev_feedback.json``, parsed
incrementally) or as JSONL (one record per line). A record has ``question``, ``passages``
(each a list: title, then sentences), ``gold``, ``prediction 1``..``prediction 4``,
``feedback`` and ``preference``; any other field is carried through untouched.

Task data (the fields of ``configs/qa-feedback.xml``):

- ``question``; ``reference`` = ``gold``; ``prediction`` = ``prediction 1``;
- ``passages``: every passage sentence one Paragraphs item, all passages flattened in
  order, ``{"ref": "P<p> S<s>" (+ " (title)" for s == 0), "text", "passage": p, "sentence": s}``
  (passages from 1, sentence 0 is the title): a ParagraphLabels region's ``start``/``end``
  item indexes give passage and sentence ids directly;
- ``evidence_options``: ``{"value": "P<p>:S<s>", "hint": first 80 characters}`` per item;
- ``record``: the original record as a JSON string (PostgreSQL reorders object keys, a
  string keeps them), with the fields the task reproduces verbatim and ``feedback`` set to
  null, so the record can be rebuilt exactly; a field that cannot be rebuilt from the task
  data (e.g. an empty passage) keeps its original value there.

Feedback <-> result items (one annotation, annotator "original"), in this order:

- ``errors[i]`` -> a ``labels`` span on ``prediction`` (``errors``): Irrelevant, Redundant ->
  "Repetitive", Incoherent, Wrong-Grounding -> "Inconsistent Fact", Unverifiable ->
  "Unverifiable Fact". Wrong-Grounding's explanation ``{"passage_id":2,"sentence_id":[4]}``
  becomes the span's per-region ``evidence`` choices ``["P2:S4"]`` (order kept). Redundant's
  explanation (the earlier text the span repeats) becomes a "Repeated text" span found in
  the prediction before the span, with a relation from the Repetitive span to it; when the
  explanation is not verbatim in the prediction, the per-region ``repeated_text_note``
  keeps it exactly (and the best match is still marked).
- ``missing-info[j]`` -> ``paragraphlabels`` regions on ``passages`` (Missing Answer /
  Missing Major Auxiliary / Missing Minor Auxiliary), one per run of consecutive sentence
  ids; the runs of one entry are linked by relations from the first run's region.
- ``corrected-prediction`` (non-empty) -> the ``corrected_prediction`` textarea.

Back (``write_results``): errors and missing-info entries come out in the order their
regions appear in the result list, which is how the original order survives, and how an
annotation made in the browser is ordered too. Ids are never relied on beyond linking.
Results: ``qa-feedback.jsonl`` (one rebuilt record per task and annotation),
``qa-feedback.json`` (the same records in the dataset's own layout: ``json.dumps(indent=2)``,
ASCII escapes, no final newline) and ``qa-feedback-annotators.csv`` (who made each line).
"""

from __future__ import annotations

import csv
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, ClassVar

from annols import jsontext, protocols
from annols.definition import Definition
from annols.errors import InputError
from annols.files import atomic_open, copy_range
from annols.formats import (
    Join,
    SourceAnnotation,
    SourcePrediction,
    SourceTask,
    Violation,
    append_bytes,
    content_key,
    decoded_annotations,
    join_concatenated,
    line_spans,
    no_predictions,
    splice_concatenated,
)
from annols.styles import decode
from annols.styles.answers import ExportedAnnotation, ExportedTask
from annols.styles.judgments import Answer, Judgment, Span
from annols.styles.spans import unread

NAME = "qa-feedback"
ANNOTATOR = "original"  # the dataset has one annotator per record and no annotator ids

# Names in configs/qa-feedback.xml.
ERRORS = "errors"
TARGET = "prediction"
EVIDENCE = "evidence"
NOTE = "repeated_text_note"
PASSAGES = "passages"
PASSAGE_LABELS = "passages_labels"
CORRECTED = "corrected_prediction"
REPEATED = "Repeated text"

ERROR_LABELS = {
    "Irrelevant": "Irrelevant",
    "Redundant": "Repetitive",
    "Incoherent": "Incoherent",
    "Wrong-Grounding": "Inconsistent Fact",
    "Unverifiable": "Unverifiable Fact",
}
STORED_ERRORS = {label: stored for stored, label in ERROR_LABELS.items()}
MISSING_LABELS = {
    "Missing-Answer": "Missing Answer",
    "Missing-Major-Auxiliary": "Missing Major Auxiliary",
    "Missing-Minor-Auxiliary": "Missing Minor Auxiliary",
}
STORED_MISSING = {label: stored for stored, label in MISSING_LABELS.items()}

VERBATIM = ("question", "passages", "gold", "prediction 1")  # rebuilt from the task data
FEEDBACK_KEYS = ("errors", "missing-info", "corrected-prediction")
ERROR_KEYS = ("error type", "explanation", "start", "end")
MISSING_KEYS = ("error type", "passage_id", "sentence_id")
RESULT_FILES = ("qa-feedback.jsonl", "qa-feedback.json", "qa-feedback-annotators.csv")

_CHUNK = 1 << 16
_ANNOTATORS_HEADER = b"line,task_key,task_id,annotator,annotation_id\n"
_ENTRY = re.compile(rb",\n  (?=\S)")  # between two entries of qa-feedback.json
_EVIDENCE_VALUE = re.compile(r"^P(\d+):S(\d+)$")
_Fail = Callable[[str, str], InputError]


# --- reading: files -> records -------------------------------------------------------------


def _kind(value: Any) -> str:
    """How a JSON value is named in messages."""
    names = {dict: "an object", list: "a list", str: "a string", bool: "true/false", type(None): "null"}
    return names.get(type(value), f"{type(value).__name__} {value!r}")


class _ArrayReader:
    """Yields the elements of a JSON array file one at a time, reading it in chunks.

    ``json.JSONDecoder.raw_decode`` parses one record from a buffer holding at most that
    record plus a chunk; a decode failure near the buffer's end means "read more".
    """

    def __init__(self, f: IO[str], source: str) -> None:
        self.f = f
        self.source = source
        self.buf = ""
        self.pos = 0
        self.lines_before = 0  # newlines in the text already dropped from buf
        self.eof = False
        self.decoder = json.JSONDecoder()

    def _fill(self, size: int = _CHUNK) -> bool:
        if self.eof:
            return False
        chunk = self.f.read(size)
        if not chunk:
            self.eof = True
            return False
        self.buf += chunk
        return True

    def _drop_consumed(self) -> None:
        self.lines_before += self.buf.count("\n", 0, self.pos)
        self.buf = self.buf[self.pos :]
        self.pos = 0

    def line(self, pos: int) -> int:
        return self.lines_before + self.buf.count("\n", 0, pos) + 1

    def _peek(self) -> str:
        """The next non-whitespace character ("" at the end of the file)."""
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in " \t\r\n":
                self.pos += 1
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            self._drop_consumed()
            if not self._fill():
                return ""

    def _error(self, number: int, pos: int, problem: str) -> InputError:
        """An error in the file's JSON: the line is where the problem is, not where the record starts."""
        return InputError(self.source, f"record {number}, line {self.line(pos)}", "", problem)

    def _decode(self, number: int) -> Any:
        while True:
            try:
                value, end = self.decoder.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as e:
                truncated = e.msg.startswith("Unterminated string") or e.pos >= len(self.buf) - 8
                if truncated and self._fill(max(_CHUNK, len(self.buf))):
                    continue
                raise self._error(
                    number, e.pos, f"not valid JSON ({e.msg.removesuffix(' at')}); fix the file"
                ) from None
            if end == len(self.buf) and self._fill():
                continue  # a number at the end of the buffer may go on
            self.pos = end
            return value

    def records(self) -> Iterator[tuple[int, int, Any]]:
        """(record number, line, value) for each array element."""
        if self._peek() != "[":
            raise InputError(self.source, "line 1", "", "expected a JSON array of records ([...]) or JSONL")
        self.pos += 1
        number = 0
        if self._peek() == "]":
            self.pos += 1
        else:
            while True:
                number += 1
                if self._peek() == "":
                    raise self._error(number, self.pos, "the file ends inside the array; it is truncated")
                self._drop_consumed()
                yield number, self.line(self.pos), self._decode(number)
                sep = self._peek()
                self.pos += 1
                if sep == "]":
                    break
                if sep != ",":
                    raise self._error(number, self.pos - 1, "expected ',' or ']' after the record; fix the file")
        if self._peek() != "":
            raise InputError(self.source, f"line {self.line(self.pos)}", "", "extra data after the array; remove it")


def _first_char(path: Path) -> str:
    with path.open(encoding="utf-8-sig") as f:
        while chunk := f.read(4096):
            stripped = chunk.lstrip()
            if stripped:
                return stripped[0]
    return ""


def _records(path: Path) -> Iterator[tuple[str, Any]]:
    """(location, record) for each record of a JSON array or JSONL file, streamed."""
    source = str(path)
    where = "the start"
    try:
        first = _first_char(path)
        if first == "":
            raise InputError(source, "", "", "the file is empty; expected QA-Feedback records (JSON array or JSONL)")
        with path.open(encoding="utf-8-sig") as f:
            if first == "[":
                for number, line, record in _ArrayReader(f, source).records():
                    where = f"record {number} (line {line})"
                    yield where, record
                return
            for number, text in enumerate(f, 1):
                if not text.strip():
                    continue
                try:
                    record = json.loads(text)
                except json.JSONDecodeError as e:
                    problem = f"not valid JSON ({e.msg} at column {e.colno}); each line must be one JSON record"
                    raise InputError(source, f"line {number}", "", problem) from None
                where = f"line {number}"
                yield where, record
    except FileNotFoundError:
        raise InputError(source, "", "", "file not found") from None
    except UnicodeDecodeError:
        raise InputError(source, f"after {where}", "", "not UTF-8 text; save the file as UTF-8") from None


# --- reading: record -> task -------------------------------------------------------------------


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _text(record: dict[str, Any], key: str, fail: _Fail) -> str:
    if key not in record:
        raise fail(key, "missing; every QA-Feedback record needs it (a string)")
    value = record[key]
    if not isinstance(value, str):
        raise fail(key, f"expected a string, got {_kind(value)}")
    return value


def _passages(record: dict[str, Any], fail: _Fail) -> list[list[str]]:
    if "passages" not in record:
        raise fail("passages", "missing; expected a list of passages, each a list [title, sentence, ...]")
    passages = record["passages"]
    if not isinstance(passages, list):
        raise fail("passages", f"expected a list of passages, got {_kind(passages)}")
    for p, passage in enumerate(passages):
        if not isinstance(passage, list):
            raise fail(f"passages[{p}]", f"expected a list [title, sentence, ...], got {_kind(passage)}")
        for s, sentence in enumerate(passage):
            if not isinstance(sentence, str):
                raise fail(f"passages[{p}][{s}]", f"expected a string, got {_kind(sentence)}")
    return passages


def _items(passages: list[list[str]]) -> list[dict[str, Any]]:
    """One Paragraphs item per sentence, all passages flattened in order."""
    return [
        {"ref": f"P{p} S{s}" + (" (title)" if s == 0 else ""), "text": text, "passage": p, "sentence": s}
        for p, passage in enumerate(passages, 1)
        for s, text in enumerate(passage)
    ]


def _options(items: list[dict[str, Any]]) -> list[dict[str, str]]:
    return [{"value": f"P{it['passage']}:S{it['sentence']}", "hint": it["text"][:80]} for it in items]


def _rebuild_passages(items: list[dict[str, Any]]) -> list[list[str]]:
    """The record's passages from the task's items (empty passages cannot come back)."""
    passages: list[list[str]] = []
    for item in items:
        while len(passages) < item["passage"]:
            passages.append([])
        passages[item["passage"] - 1].append(item["text"])
    return passages


def _record_string(record: dict[str, Any], passages: list[list[str]], items: list[dict[str, Any]]) -> str:
    """The record with what the task reproduces set to null, as a key-order-safe string."""
    rebuildable = set(VERBATIM) - ({"passages"} if _rebuild_passages(items) != passages else set())
    kept = {k: (None if k in rebuildable or k == "feedback" else v) for k, v in record.items()}
    return json.dumps(kept, ensure_ascii=False)


def _item(id_: str, from_name: str, to_name: str, type_: str, value: dict[str, Any]) -> dict[str, Any]:
    return {"id": id_, "from_name": from_name, "to_name": to_name, "type": type_, "value": value, "origin": "manual"}


def _relation(from_id: str, to_id: str) -> dict[str, Any]:
    return {"from_id": from_id, "to_id": to_id, "type": "relation", "direction": "right"}


def _find_repeated(prediction: str, explanation: str, start: int) -> tuple[int, int] | None:
    """Where the text a Repetitive span repeats sits: verbatim if possible, else stripped.

    Prefers the closest occurrence ending at or before the span, else one starting before it.
    """
    for candidate in dict.fromkeys((explanation, explanation.strip())):
        if not candidate:
            continue
        at = prediction.rfind(candidate, 0, start)
        if at < 0:
            at = prediction.find(candidate)
        if 0 <= at < start:
            return at, at + len(candidate)
    return None


@dataclass
class _Builder:
    """Turns one record's feedback into Label Studio result items."""

    data: dict[str, Any]
    fail: _Fail
    result: list[dict[str, Any]] = field(default_factory=list)
    repeated: dict[tuple[int, int], str] = field(default_factory=dict)  # offsets -> region id
    index: dict[tuple[int, int], int] = field(default_factory=dict)  # (passage, sentence) -> item

    def __post_init__(self) -> None:
        self.index = {(it["passage"], it["sentence"]): i for i, it in enumerate(self.data["passages"])}

    def feedback(self, feedback: Any) -> list[dict[str, Any]]:
        if not isinstance(feedback, dict):
            raise self.fail(
                "feedback",
                f"expected an object with errors, missing-info and corrected-prediction, got {_kind(feedback)}",
            )
        self._known_keys(feedback, FEEDBACK_KEYS, "feedback")
        for i, error in enumerate(self._list(feedback, "errors")):
            self.error(i, error)
        for j, entry in enumerate(self._list(feedback, "missing-info")):
            self.missing(j, entry)
        corrected = feedback.get("corrected-prediction", "")
        if not isinstance(corrected, str):
            raise self.fail("feedback.corrected-prediction", f"expected a string, got {_kind(corrected)}")
        if corrected:
            self.result.append(_item("corrected", CORRECTED, TARGET, "textarea", {"text": [corrected]}))
        return self.result

    def _known_keys(self, obj: dict[str, Any], known: Sequence[str], where: str) -> None:
        for key in obj:
            if key not in known:
                raise self.fail(f"{where}.{key}", "unknown key: Label Studio results cannot keep it; remove it")

    def _list(self, feedback: dict[str, Any], key: str) -> list[Any]:
        value = feedback.get(key, [])
        if not isinstance(value, list):
            raise self.fail(f"feedback.{key}", f"expected a list, got {_kind(value)}")
        return value

    def _int(self, obj: dict[str, Any], key: str, where: str) -> int:
        value = obj.get(key)
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.fail(f"{where}.{key}", f"expected a whole number, got {_kind(value)}")
        return value

    def error(self, i: int, error: Any) -> None:
        where = f"feedback.errors[{i}]"
        if not isinstance(error, dict):
            raise self.fail(where, f"expected an object with {', '.join(ERROR_KEYS)}, got {_kind(error)}")
        self._known_keys(error, ERROR_KEYS, where)
        stored = error.get("error type")
        if stored not in ERROR_LABELS:
            raise self.fail(f"{where}.error type", f"{stored!r} is not one of {', '.join(ERROR_LABELS)}")
        start, end = self._int(error, "start", where), self._int(error, "end", where)
        prediction: str = self.data["prediction"]
        if not 0 <= start < len(prediction):
            raise self.fail(f"{where}.start", f"{start} lies outside the prediction (0-{len(prediction)} characters)")
        if not start < end <= len(prediction):
            raise self.fail(
                f"{where}.end",
                f"{end} must lie after start {start} and within the prediction (0-{len(prediction)} characters)",
            )
        explanation = error.get("explanation", "")
        if not isinstance(explanation, str):
            raise self.fail(f"{where}.explanation", f"expected a string, got {_kind(explanation)}")
        span = {"start": start, "end": end, "text": prediction[start:end]}
        id_ = f"err{i + 1}"
        self.result.append(_item(id_, ERRORS, TARGET, "labels", {**span, "labels": [ERROR_LABELS[stored]]}))
        if stored == "Wrong-Grounding":
            self._evidence(id_, span, explanation, f"{where}.explanation")
        elif stored == "Redundant":
            self._repeated(id_, span, explanation)
        elif explanation:
            raise self.fail(
                f"{where}.explanation",
                f"a {stored} error carries no explanation in QA-Feedback; "
                "Label Studio results cannot keep it: remove it",
            )

    def _evidence(self, id_: str, span: dict[str, Any], explanation: str, where: str) -> None:
        if not explanation:
            return
        expected = 'expected evidence like {"passage_id":2,"sentence_id":[4]}'
        try:
            parsed = json.loads(explanation)
        except json.JSONDecodeError:
            raise self.fail(where, f"{expected}, got {explanation!r}") from None
        ok = (
            isinstance(parsed, dict)
            and _is_int(parsed.get("passage_id"))
            and isinstance(parsed.get("sentence_id"), list)
            and bool(parsed["sentence_id"])
            and all(_is_int(s) for s in parsed["sentence_id"])
            and json.dumps(parsed, separators=(",", ":")) == explanation
        )
        if not ok:
            raise self.fail(where, f"{expected} (exactly), got {explanation!r}")
        passage = parsed["passage_id"]
        for sentence in parsed["sentence_id"]:
            if (passage, sentence) not in self.index:
                raise self.fail(where, f"passage {passage} sentence {sentence} does not exist in the record's passages")
        choices = [f"P{passage}:S{sentence}" for sentence in parsed["sentence_id"]]
        self.result.append(_item(id_, EVIDENCE, TARGET, "choices", {**span, "choices": choices}))

    def _repeated(self, id_: str, span: dict[str, Any], explanation: str) -> None:
        if not explanation:
            return
        prediction: str = self.data["prediction"]
        found = _find_repeated(prediction, explanation, span["start"])
        if found is None or prediction[found[0] : found[1]] != explanation:
            self.result.append(_item(id_, NOTE, TARGET, "textarea", {**span, "text": [explanation]}))
        if found is None:
            return
        if found not in self.repeated:
            region_id = f"rep{len(self.repeated) + 1}"
            self.repeated[found] = region_id
            value = {"start": found[0], "end": found[1], "text": prediction[found[0] : found[1]], "labels": [REPEATED]}
            self.result.append(_item(region_id, ERRORS, TARGET, "labels", value))
        self.result.append(_relation(id_, self.repeated[found]))

    def missing(self, j: int, entry: Any) -> None:
        where = f"feedback.missing-info[{j}]"
        if not isinstance(entry, dict):
            raise self.fail(where, f"expected an object with {', '.join(MISSING_KEYS)}, got {_kind(entry)}")
        self._known_keys(entry, MISSING_KEYS, where)
        stored = entry.get("error type")
        if stored not in MISSING_LABELS:
            raise self.fail(f"{where}.error type", f"{stored!r} is not one of {', '.join(MISSING_LABELS)}")
        passage = self._int(entry, "passage_id", where)
        sentences = entry.get("sentence_id")
        if not isinstance(sentences, list) or not sentences:
            problem = f"expected a non-empty list of sentence ids, got {_kind(sentences)}"
            raise self.fail(f"{where}.sentence_id", problem)
        indexes = []
        for sentence in sentences:
            if not _is_int(sentence) or (passage, sentence) not in self.index:
                raise self.fail(
                    f"{where}.sentence_id",
                    f"passage {passage} sentence {sentence!r} does not exist in the record's passages",
                )
            indexes.append(self.index[(passage, sentence)])
        runs: list[list[int]] = []
        for index in indexes:
            if runs and index == runs[-1][-1] + 1:
                runs[-1].append(index)
            else:
                runs.append([index])
        ids = [f"mis{j + 1}" if len(runs) == 1 else f"mis{j + 1}-{k + 1}" for k in range(len(runs))]
        for id_, run in zip(ids, runs, strict=True):
            self.result.append(self._paragraph_region(id_, run, MISSING_LABELS[stored]))
        self.result.extend(_relation(ids[0], id_) for id_ in ids[1:])

    def _paragraph_region(self, id_: str, run: list[int], label: str) -> dict[str, Any]:
        items = self.data["passages"]
        value = {
            "start": str(run[0]),
            "end": str(run[-1]),
            "startOffset": 0,
            "endOffset": len(items[run[-1]]["text"]),
            "text": "\n".join(items[i]["text"] for i in run),
            "paragraphlabels": [label],
        }
        return _item(id_, PASSAGE_LABELS, PASSAGES, "paragraphlabels", value)


def _task(record: Any, source: str, where: str) -> SourceTask:
    def fail(field_: str, problem: str) -> InputError:
        return InputError(source, where, field_, problem)

    if not isinstance(record, dict):
        raise fail("", f"expected a QA-Feedback record (a JSON object), got {_kind(record)}")
    question = _text(record, "question", fail)
    passages = _passages(record, fail)
    gold = _text(record, "gold", fail)
    prediction = _text(record, "prediction 1", fail)
    items = _items(passages)
    data: dict[str, Any] = {
        "question": question,
        "passages": items,
        "reference": gold,
        "prediction": prediction,
        "evidence_options": _options(items),
        "record": _record_string(record, passages, items),
    }
    annotations: tuple[SourceAnnotation, ...] = ()
    if record.get("feedback") is not None:
        result = _Builder(data, fail).feedback(record["feedback"])
        annotations = (SourceAnnotation(annotator=ANNOTATOR, result=result),)
    key = content_key(NAME, {"question": question, "passages": passages, "prediction 1": prediction})
    return SourceTask(key=key, data=data, location=f"{Path(source).name}: {where}", annotations=annotations)


# --- results -> feedback --------------------------------------------------------------------


@dataclass(frozen=True)
class _Region:
    """A labels span (offsets in the prediction) or a paragraph region (item indexes)."""

    id: str
    position: int  # in the result list
    label: str
    start: int
    end: int
    text: str


@dataclass
class _Parsed:
    """One annotation's result, indexed: whatever order and ids the browser gave it."""

    spans: list[_Region] = field(default_factory=list)  # labels on the prediction, result order
    paragraphs: list[_Region] = field(default_factory=list)  # paragraphlabels, result order
    evidence: dict[str, list[str]] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    relations: list[tuple[str, str]] = field(default_factory=list)  # (from region, to region)
    corrected: str = ""
    extra: list[_Region] = field(default_factory=list)  # a region's second label (or item): not read


_SHIPPED: list[Definition] = []  # the shipped protocol's definition, once loaded


_PARSED: list[tuple[ExportedAnnotation, _Parsed]] = []  # the last annotation read


def _parsed(task: ExportedTask, annotation: ExportedAnnotation, definition: Definition) -> _Parsed:
    """The annotation read through its style (:func:`annols.formats.decoded_annotations`: decoded once per task),
    remembered for the last annotation: conversion checks and writes each annotation in turn."""
    if not _PARSED or _PARSED[0][0] is not annotation:
        judgments = next((j for a, j in decoded_annotations(task, definition) if a is annotation), None)
        judged = decode(definition, task, annotation) if judgments is None else judgments
        _PARSED[:] = [(annotation, parse_judgments(judged))]
    return _PARSED[0][1]


def parse_judgments(judgments: Iterable[Judgment]) -> _Parsed:
    """An annotation's judgments (its spans style's decode) in the protocol's terms, in result order.

    A region decode reads no span from (no label, offsets that are no whole numbers) is not here, nor a per-span
    answer or relation of no labelled span: check names them (``unreadable-span``, ``-answer``, ``-link``).
    Of a region with two labels (or two items of one id) the first is read, as the report's tables read it; the
    rest are ``extra``, and check names them (``one-label-per-region``)."""
    parsed = _Parsed()
    seen: set[tuple[str, str]] = set()
    for position, j in enumerate(judgments):
        if isinstance(j, Answer):
            if j.question == CORRECTED:
                parsed.corrected = j.text
            continue
        if not isinstance(j, Span) or j.message is not None:
            continue
        if (j.region, j.control) in seen:
            parsed.extra.append(_Region(j.region, position, j.label, int(j.start), int(j.end), j.text))
            continue
        seen.add((j.region, j.control))
        parsed.relations += [(j.region, to) for to in j.links]
        if j.control == ERRORS:
            parsed.spans.append(_Region(j.region, position, j.label, int(j.start), int(j.end), j.text))
            if j.answers.get(EVIDENCE):
                parsed.evidence[j.region] = list(j.answers[EVIDENCE])
            if j.answers.get(NOTE):
                parsed.notes[j.region] = "\n".join(j.answers[NOTE])
        elif j.control == PASSAGE_LABELS:  # paragraph indexes: decode's end is one past the last, ours the last
            parsed.paragraphs.append(_Region(j.region, position, j.label, int(j.start), int(j.end) - 1, j.text))
    return parsed


def _repeated_links(parsed: _Parsed) -> dict[str, list[_Region]]:
    """Repetitive span id -> the Repeated text regions linked to it (either direction)."""
    by_id = {s.id: s for s in parsed.spans}
    links: dict[str, list[_Region]] = {}
    for a, b in parsed.relations:
        for span_id, other_id in ((a, b), (b, a)):
            span, other = by_id.get(span_id), by_id.get(other_id)
            if span and other and span.label == "Repetitive" and other.label == REPEATED:
                links.setdefault(span_id, []).append(other)
    return links


def _missing_groups(parsed: _Parsed) -> list[list[_Region]]:
    """Paragraph regions joined by relations, one group per missing-info entry, in result order.

    A group starts with its root (the region relations start from), then the rest in result order.
    """
    by_id = {r.id: r for r in parsed.paragraphs}
    parent = {r.id: r.id for r in parsed.paragraphs}

    def root(id_: str) -> str:
        while parent[id_] != id_:
            id_ = parent[id_]
        return id_

    targets: set[str] = set()
    for a, b in parsed.relations:
        if a in by_id and b in by_id and a != b:
            targets.add(b)
            ra, rb = root(a), root(b)
            if ra != rb:
                parent[max(ra, rb, key=lambda i: by_id[i].position)] = min(ra, rb, key=lambda i: by_id[i].position)
    groups: dict[str, list[_Region]] = {}
    for region in parsed.paragraphs:
        groups.setdefault(root(region.id), []).append(region)
    ordered = []
    for members in groups.values():
        heads = [r for r in members if r.id not in targets]
        head = heads[0] if heads else members[0]
        ordered.append([head, *(r for r in members if r is not head)])
    return sorted(ordered, key=lambda g: min(r.position for r in g))


def _region_items(region: _Region, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    low, high = min(region.start, region.end), max(region.start, region.end)
    return [items[i] for i in range(max(low, 0), min(high, len(items) - 1) + 1)] if high >= 0 else []


def _missing_entry(group: list[_Region], items: list[dict[str, Any]]) -> dict[str, Any] | None:
    """A missing-info entry; sentences outside the first one's passage are left out (check() reports them)."""
    covered = [item for region in group for item in _region_items(region, items)]
    stored = STORED_MISSING.get(group[0].label)
    if not covered or stored is None:
        return None
    passage = covered[0]["passage"]
    sentences = [item["sentence"] for item in covered if item["passage"] == passage]
    return {"error type": stored, "passage_id": passage, "sentence_id": sentences}


def _evidence_refs(choices: list[str]) -> list[tuple[int, int]]:
    refs = []
    for choice in choices:
        match = _EVIDENCE_VALUE.match(choice)
        if match:
            refs.append((int(match[1]), int(match[2])))
    return refs


def _explanation(span: _Region, parsed: _Parsed, links: dict[str, list[_Region]], prediction: str) -> str:
    """The stored explanation: evidence JSON, the repeated text, or "" for other error types."""
    if span.label == "Inconsistent Fact":
        refs = _evidence_refs(parsed.evidence.get(span.id, []))
        if not refs:
            return ""
        passage = refs[0][0]  # evidence from other passages is left out; check() reports it
        sentences = [s for p, s in refs if p == passage]
        return json.dumps({"passage_id": passage, "sentence_id": sentences}, separators=(",", ":"))
    if span.label == "Repetitive":
        if parsed.notes.get(span.id):
            return parsed.notes[span.id]
        linked = links.get(span.id)
        if linked:
            region = linked[0]
            inside = 0 <= region.start < region.end <= len(prediction)
            return prediction[region.start : region.end] if inside else region.text
    return ""


def feedback_from_result(data: dict[str, Any], result: list[dict[str, Any]],
                         definition: Definition | None = None) -> dict[str, Any]:  # fmt: skip
    """The QA-Feedback ``feedback`` object of one annotation's result on a task with ``data``, read through the
    style of ``definition`` (the shipped qa-feedback protocol when None)."""
    if definition is None:
        _SHIPPED[:] = _SHIPPED or [protocols.load(NAME)]
        definition = _SHIPPED[0]
    task = ExportedTask(id=0, key="", data=data, systems=(), annotations=())
    return feedback(data, parse_judgments(decode(definition, task, ExportedAnnotation(id=0, annotator="",
                                                                                    result=result))))  # fmt: skip


def feedback(data: dict[str, Any], parsed: _Parsed) -> dict[str, Any]:
    """The QA-Feedback ``feedback`` object of one annotation (:func:`parse_judgments`), in the dataset's key order."""
    prediction = data.get("prediction", "")
    items = data.get("passages", [])
    links = _repeated_links(parsed)
    errors = [
        {
            "error type": STORED_ERRORS[span.label],
            "explanation": _explanation(span, parsed, links, prediction),
            "start": span.start,
            "end": span.end,
        }
        for span in parsed.spans
        if span.label in STORED_ERRORS
    ]
    missing = [entry for group in _missing_groups(parsed) if (entry := _missing_entry(group, items))]
    return {"errors": errors, "missing-info": missing, "corrected-prediction": parsed.corrected}


def rebuild_record(task: ExportedTask, feedback: dict[str, Any]) -> dict[str, Any]:
    """The original record: the ``record`` string with the task data and ``feedback`` put back."""
    source = f"Label Studio task {task.id}"
    data = task.data
    for key in ("question", "passages", "reference", "prediction"):
        if key not in data:
            raise InputError(source, task.key, key, "missing from the task data; was it pushed as qa-feedback?")
    fill = {
        "question": lambda: data["question"],
        "passages": lambda: _rebuild_passages(data["passages"]),
        "gold": lambda: data["reference"],
        "prediction 1": lambda: data["prediction"],
    }
    if isinstance(data.get("record"), str):
        try:
            record = json.loads(data["record"])
        except json.JSONDecodeError:
            raise InputError(source, task.key, "record", "not valid JSON; the task data was changed") from None
    else:  # a task made without the record string, e.g. the shipped example
        record = {"question": None, "passages": None, "gold": None, "prediction 1": None, "feedback": None}
    out: dict[str, Any] = {}
    for key, value in record.items():
        if key == "preference" and "feedback" not in record:
            out["feedback"] = feedback  # where the dataset has it
        out[key] = feedback if key == "feedback" else fill[key]() if value is None and key in fill else value
    out.setdefault("feedback", feedback)
    return out


# --- the format ----------------------------------------------------------------------------------


def _rule_text(region: _Region) -> str:
    text = region.text if len(region.text) <= 40 else region.text[:37] + "..."
    return f"{region.label or 'unlabelled'} span {region.start}-{region.end} {text!r}"


def _join_array(first: Path, rest: Sequence[Path]) -> None:
    """Parts of ``qa-feedback.json`` (``[`` + ``\\n  record`` joined by ``,`` + ``\\n]``, or ``[]``) as one array."""
    with open(first, "r+b") as out:
        size = out.seek(0, os.SEEK_END)
        empty = size == 2  # "[]"
        out.truncate(1 if empty else size - 2)  # without "]" / "\n]"
        out.seek(0, os.SEEK_END)
        for part in rest:
            part_size = part.stat().st_size
            if part_size == 2:
                continue
            if not empty:
                out.write(b",")
            append_bytes(out, part, 1, part_size - 2)  # without "[" and "\n]"
            empty = False
        out.write(b"]" if empty else b"\n]")


def _join_annotators(first: Path, rest: Sequence[Path]) -> None:
    """Parts of ``qa-feedback-annotators.csv``, their line numbers counted on across parts."""
    with open(first, encoding="utf-8", newline="") as f:
        offset = sum(1 for _ in csv.reader(f)) - 1  # the first part's rows (without the header)
    with open(first, "a", encoding="utf-8", newline="") as out:
        writer = csv.writer(out, lineterminator="\n")
        for part in rest:
            with open(part, encoding="utf-8", newline="") as f:
                rows = csv.reader(f)
                next(rows)  # the header
                last = 0
                for row in rows:
                    last = int(row[0])
                    writer.writerow([last + offset, *row[1:]])
                offset += last


def _entries(f: IO[bytes]) -> Iterator[bytes]:
    """The entries of a qa-feedback.json write_results wrote, read a chunk at a time."""
    head = f.read(4)
    if head == b"[]":
        if f.read(1):
            raise ValueError("qa-feedback.json goes on after its end")
        return
    if head != b"[\n  ":
        raise ValueError("qa-feedback.json does not start as write_results writes it")
    tail = b""
    while chunk := f.read(_CHUNK * 16):
        parts = _ENTRY.split(tail + chunk)
        tail = parts.pop()  # the entry being read (a separator cut by the chunk is found with the next one)
        yield from parts
    if not tail.endswith(b"\n]"):
        raise ValueError("qa-feedback.json does not end as write_results writes it")
    yield tail[:-2]


class QaFeedbackFormat:
    """QA-Feedback records in, the same records (with the new feedback) out."""

    name = NAME
    describe = "QA-Feedback records (a JSON array like dev_feedback.json, or JSONL); feedback becomes an annotation"

    joins: ClassVar[dict[str, Join]] = {
        "qa-feedback.jsonl": join_concatenated,
        "qa-feedback.json": _join_array,
        "qa-feedback-annotators.csv": _join_annotators,
    }

    # Each result file is one record per judgment (a non-cancelled annotation of a study item), in the order
    # write_results writes them: a re-pull keeps the records of the tasks that did not change (annols.study.pull),
    # copied as byte ranges of the earlier pull's files.
    # Files whose records say where they are (a line number): their bytes change with the records before them.
    renumbered: ClassVar[frozenset[str]] = frozenset({RESULT_FILES[2]})

    def record_spans(self, name: str, f: IO[bytes]) -> Iterator[tuple[int, int]]:
        """Where each record of result file ``name`` (open as ``f``) lies, ``[start, end)``, one after another;
        ValueError if it is not a file write_results wrote. A record of qa-feedback.json starts with the
        four bytes before its entry (``[\\n  `` or ``,\\n  ``); one of the annotators' table is its line."""
        if name == RESULT_FILES[0]:
            yield from line_spans(f)
        elif name == RESULT_FILES[1]:
            at = 0
            for entry in _entries(f):
                yield at, at + 4 + len(entry)
                at += 4 + len(entry)
        elif name == RESULT_FILES[2]:
            if f.readline() != _ANNOTATORS_HEADER:
                raise ValueError(f"{name} does not start with its header")
            yield from line_spans(f, len(_ANNOTATORS_HEADER))
        else:
            raise ValueError(f"{name} is not a result file of {NAME}")

    def splice(self, name: str, runs: Iterable[tuple[IO[bytes], int, int]], out: IO[bytes]) -> None:
        """Result file ``name`` of the records in ``runs`` (byte ranges of such files as :meth:`record_spans` finds
        them, each a run of whole records), byte for byte write_results's of them; ValueError if a range does
        not hold what it should."""
        if name == RESULT_FILES[0]:
            splice_concatenated(runs, out)
        elif name == RESULT_FILES[1]:
            empty = True
            for source, start, end in runs:
                if start == end:
                    continue
                source.seek(start)
                if source.read(4) not in (b"[\n  ", b",\n  "):
                    raise ValueError(f"{name}: no entry at byte {start}")
                out.write(b"[\n  " if empty else b",\n  ")
                copy_range(out, source, start + 4, end)
                empty = False
            out.write(b"[]" if empty else b"\n]")
        elif name == RESULT_FILES[2]:
            out.write(_ANNOTATORS_HEADER)
            line = 0
            for source, start, end in runs:  # the lines numbered anew: a few bytes each
                source.seek(start)
                data = source.read(end - start)
                if len(data) != end - start or (data and not data.endswith(b"\n")):
                    raise ValueError(f"{name}: bytes {start}-{end} are not whole lines")
                for row in data.splitlines(keepends=True):
                    line += 1
                    out.write(b"%d%s" % (line, row[row.index(b",") :]))
        else:
            raise ValueError(f"{name} is not a result file of {NAME}")

    def read(self, paths: Sequence[Path], definition: Definition) -> Iterator[SourceTask]:
        for path in paths:
            for where, record in _records(Path(path)):
                yield _task(record, str(path), where)

    def read_predictions(self, paths: Sequence[Path], definition: Definition) -> Iterator[tuple[str, SourcePrediction]]:
        raise no_predictions(NAME, paths)

    def write_results(self, tasks: Iterable[ExportedTask], definition: Definition, out_dir: Path) -> list[Path]:
        # The files' layouts are those the joins below expect: change them together.
        paths = [Path(out_dir) / name for name in RESULT_FILES]
        with ExitStack() as stack:
            jsonl, array, table = (stack.enter_context(atomic_open(p)) for p in paths)
            writer = csv.writer(table, lineterminator="\n")
            table.write(_ANNOTATORS_HEADER.decode("ascii"))
            line = 0
            array.write("[")
            for task in tasks:
                for annotation, _ in decoded_annotations(task, definition):
                    record = rebuild_record(task, feedback(task.data, _parsed(task, annotation, definition)))
                    line += 1
                    jsonl.write(jsontext.dumps(record, ensure_ascii=False) + "\n")
                    indented = jsontext.dumps(record, indent=2).replace("\n", "\n  ")  # strings hold no raw newline
                    array.write(("\n  " if line == 1 else ",\n  ") + indented)
                    writer.writerow([line, task.key, task.id, annotation.annotator, annotation.id])
            array.write("\n]" if line else "]")
        return paths

    def check(self, task: ExportedTask, annotation: ExportedAnnotation, definition: Definition) -> list[Violation]:
        parsed = _parsed(task, annotation, definition)
        items = task.data.get("passages", [])
        found: list[tuple[str, str]] = unread(definition.spec, task, annotation)
        found += [("one-label-per-region", f"{_rule_text(r)}: a second label (or item) of region {r.id!r}, not read")
                  for r in parsed.extra]  # fmt: skip
        found += _check_evidence(parsed, items)
        found += _check_repetitive(parsed)
        found += _check_missing(parsed, items)
        found += _check_overlaps(parsed)
        found += _check_word_boundaries(parsed, str(task.data.get(TARGET, "")))
        return [Violation(task.key, annotation.annotator, rule, text) for rule, text in found]


def _check_evidence(parsed: _Parsed, items: list[dict[str, Any]]) -> list[tuple[str, str]]:
    existing = {f"P{it['passage']}:S{it['sentence']}" for it in items}
    found = []
    for span in parsed.spans:
        if span.label != "Inconsistent Fact":
            continue
        choices = parsed.evidence.get(span.id, [])
        if not choices:
            found.append(("inconsistent-fact-evidence", f"{_rule_text(span)} has no evidence sentence"))
        unknown = [c for c in choices if c not in existing]
        if unknown:
            found.append(("evidence-exists", f"{_rule_text(span)} cites {', '.join(unknown)}, not in the passages"))
        passages = sorted({p for p, _ in _evidence_refs(choices)})
        if len(passages) > 1:
            found.append(("evidence-one-passage", f"{_rule_text(span)} cites passages {passages}"))
    return found


def _check_repetitive(parsed: _Parsed) -> list[tuple[str, str]]:
    links = _repeated_links(parsed)
    found = []
    for span in parsed.spans:
        if span.label != "Repetitive":
            continue
        linked = links.get(span.id, [])
        if not linked and not parsed.notes.get(span.id):
            found.append(("repetitive-linked", f"{_rule_text(span)} is linked to no Repeated text and has no note"))
        if linked and not any(r.start < span.start for r in linked):
            found.append(
                (
                    "repeated-text-before",
                    f"{_rule_text(span)} is linked to {_rule_text(linked[0])}, which does not start before it",
                )
            )
    linked_ids = {r.id for regions in links.values() for r in regions}
    for region in parsed.spans:
        if region.label == REPEATED and region.id not in linked_ids:
            found.append(("orphan-repeated-text", f"{_rule_text(region)} is linked from no Repetitive span"))
    return found


def _check_missing(parsed: _Parsed, items: list[dict[str, Any]]) -> list[tuple[str, str]]:
    found = []
    for region in parsed.paragraphs:
        what = f"{region.label or 'unlabelled'} region on items {region.start}-{region.end}"
        if not (0 <= region.start <= region.end < len(items)):
            found.append(("missing-info-exists", f"{what}: no such passage sentences ({len(items)} items)"))
        elif len({it["passage"] for it in _region_items(region, items)}) > 1:
            found.append(("missing-info-one-passage", f"{what} spans several passages"))
    for group in _missing_groups(parsed):
        passages = sorted({it["passage"] for region in group for it in _region_items(region, items)})
        if len(group) > 1 and len(passages) > 1:
            found.append(("missing-info-one-passage", f"linked {group[0].label} regions cover passages {passages}"))
    return found


def on_word_boundaries(text: str, start: int, end: int) -> bool:
    """The rule QA-Feedback's reward-model scripts assert on every error span: it starts on a
    non-space character at the start of the text or after a space, and ends at the end of the
    text or before a space (whole whitespace-separated words, no space at either end)."""
    if not 0 <= start < end <= len(text):
        return False
    starts = text[start].strip() != "" and (start == 0 or text[start - 1].strip() == "")
    return starts and (end == len(text) or text[end].strip() == "")


def _check_word_boundaries(parsed: _Parsed, prediction: str) -> list[tuple[str, str]]:
    """Error spans the dataset's own code would stop on (AssertionError): off word boundaries."""
    found = []
    for span in parsed.spans:
        if span.label in STORED_ERRORS and not on_word_boundaries(prediction, span.start, span.end):
            cut = prediction[max(span.start, 0) : max(span.end, 0)]
            found.append(("span-on-word-boundaries", f"{_rule_text(span)} ({cut!r} in the prediction) does not "
                          "start and end on word boundaries; mark whole words without spaces at the ends"))  # fmt: skip
    return found


def _check_overlaps(parsed: _Parsed) -> list[tuple[str, str]]:
    """Error spans that share characters (Repeated text regions may overlap anything)."""
    spans = sorted((s for s in parsed.spans if s.label in STORED_ERRORS), key=lambda s: (s.start, s.end))
    found = []
    reach: _Region | None = None  # the span reaching furthest right so far
    for span in spans:
        if reach is not None and span.start < reach.end:
            found.append(("overlapping-spans", f"{_rule_text(reach)} overlaps {_rule_text(span)}"))
        if reach is None or span.end > reach.end:
            reach = span
    return found


FORMAT = QaFeedbackFormat()
