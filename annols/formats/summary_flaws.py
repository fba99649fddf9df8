"""The summary-flaws format: a summary of a (TL;DR Reddit) document in, the critic's answer blocks out.

The original (seed 000, Cao et al., EMNLP 2024) is the prompt of an LLM critic, here run
with humans. Its answer is a text block, parsed downstream with :data:`SPAN_REGEX`::

    Problematic Spans Identified in the Summary:
    Span 1: why did you decide to switch? (Label: Irrelevant)

    Is the summary missing key information?
    Yes

Mapping between that block and Label Studio results (names from the definition; the
shipped ``summary-flaws.toml`` gives the ones shown):

=============================================  ================================================
original block                                 Label Studio result item
=============================================  ================================================
``Span N: <text> (Label: X)``                  ``labels`` region, from_name ``flaws``, to_name
                                               ``summary``, value ``{start, end, text, labels:
                                               [X]}``; offsets in code points into the summary
``None identified`` (instead of span lines)    ``choices`` ``flaws_none``: ``["None identified"]``
``Is the summary missing key information?``    ``choices`` ``missing_key_information``:
followed by ``Yes`` / ``No``                   ``["Yes"]`` / ``["No"]``
=============================================  ================================================

The block has no offsets: reading one (a critic's output as a prediction, or a ``critique``
already in the input) finds each span's text in the summary; writing one numbers the spans
by start offset and writes the exact summary substring, so the consuming regex gives back
the same texts and labels.

Inputs (``.jsonl``, ``.csv``, or a ``.json`` array; one record per task): ``summary``, and
either ``document`` or the TL;DR fields ``subreddit``, ``title``, ``post`` (the document is
then ``SUBREDDIT: r/<subreddit> TITLE: <title> POST: <post>``, as in the seed); optional
``model`` (the system that wrote the summary), ``critique`` + ``annotator`` (an earlier
judgment). Task data: ``{"document", "summary", "record"}``; ``record`` holds every other
field of the input record (``id``, the TL;DR fields, ...). The model is not task data, which
annotators can see in the Data Manager: like a blinded system it goes to the task's meta.

Results: ``summary-flaws.txt`` (one seed-style entry per task and annotation, headed
``##### Task <key> | Annotator <email> #####`` like the seed's ``##### Example N #####``)
and ``summary-flaws.jsonl`` (the same judgments as data, with offsets).
"""

from __future__ import annotations

import csv
import json
import mmap
import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any, ClassVar

from annols import jsontext
from annols.definition import Definition
from annols.errors import InputError
from annols.files import atomic_open, copy_range
from annols.formats import (
    Join,
    ReadWarning,
    SourceAnnotation,
    SourcePrediction,
    SourceTask,
    Violation,
    content_key,
    csv_header,
    decoded_annotations,
    fit_row,
    join_concatenated,
    join_separated,
    line_spans,
    splice_concatenated,
)
from annols.styles import decode
from annols.styles import judgments as styles_judgments
from annols.styles.answers import ExportedAnnotation, ExportedTask
from annols.styles.spans import unread

NAME = "summary-flaws"
#: The regex the code consuming the original blocks parses span lines with.
SPAN_REGEX = re.compile(r"Span \d+: (.*?)( \(Label: .*?\))?(\n|$)")
SPANS_HEADER = "Problematic Spans Identified in the Summary:"
TLDR_FIELDS = ("subreddit", "title", "post")
RESULT_FILES = ("summary-flaws.txt", "summary-flaws.jsonl")
_ENTRY_START = b"##### Task "  # as :func:`entry` starts one
_NEXT_ENTRY = re.compile(rb"\n\n(?=##### Task )")  # the blank line before an entry but the first

# Fields that become task fields or a judgment; everything else goes to data["record"].
_NOT_CARRIED = frozenset({"document", "summary", "model", "critique", "annotator"})
# The seed's steps say to label spans with the dimension; critics following them write these.
_DIMENSION_LABELS = {"factuality": "Non-factual", "relevance": "Irrelevant", "coherence": "Incoherent"}
_CHUNK = 1 << 16


# ---------------------------------------------------------------------------- names


@dataclass(frozen=True)
class Names:
    """Field, control and text names of the protocol, taken from its definition."""

    document: str  # task field of the source document
    document_title: str  # "Source Document"
    summary: str  # task field of the summary, and to_name of every result
    summary_title: str  # "Summary to be Labeled"
    flaws: str  # the Labels control
    none_name: str  # the "None identified" Choices control
    none_answer: str  # "None identified"
    question: str  # the missing-information Choices control
    question_text: str  # "Is the summary missing key information?"
    labels: tuple[str, ...]
    answers: tuple[str, ...]  # "Yes", "No"


def names_for(definition: Definition) -> Names:
    """The names a summary-flaws definition uses (a spans definition with one context pane and one question)."""
    spec = definition.spec
    context = spec.context[0]
    question = spec.questions[0]
    return Names(
        document=context.name,
        document_title=context.title,
        summary=spec.target.name,
        summary_title=spec.target.title,
        flaws=spec.labels_name,
        none_name=f"{spec.labels_name}_none",
        none_answer=spec.none_answer or "None identified",
        question=question.name,
        question_text=question.text,
        labels=tuple(label.value for label in spec.labels),
        answers=tuple(choice.code for choice in question.all_choices),
    )


# ---------------------------------------------------------------------------- answer blocks


@dataclass(frozen=True)
class Critique:
    """An answer block as written: span texts with their labels, "None identified", the Yes/No answer."""

    spans: tuple[tuple[str, str], ...]  # (text as written by the critic, canonical label)
    none_identified: bool
    missing: str | None  # canonical answer code, None when the question or its answer is absent


class CritiqueError(ValueError):
    """An answer block that cannot be understood; the caller adds file, line and field."""


def answer_block(spans: Sequence[tuple[str, str]], missing: str | None, names: Names) -> str:
    """The seed's answer block (no trailing newline); a span with an empty label gets no label part."""
    lines = [SPANS_HEADER]
    for n, (text, label) in enumerate(spans, 1):
        lines.append(f"Span {n}: {text} (Label: {label})" if label else f"Span {n}: {text}")
    if not spans:
        lines.append(names.none_answer)
    lines += ["", names.question_text, missing or ""]
    return "\n".join(lines)


def parse_critique(text: str, names: Names) -> Critique:
    """Read an answer block as people and LLM critics write it.

    Tolerated: text before the spans header (or no header at all: the seed's prompt ends
    with it, so a critic's continuation starts with the span lines), CRLF, trailing spaces,
    a missing question, a following ``#####`` example, dimension names as labels.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    headers = list(re.finditer(re.escape(SPANS_HEADER.rstrip(":")) + r"\s*:?", text, re.IGNORECASE))
    body = text[headers[-1].end() :] if headers else text
    body = re.split(r"^\s*#####", body, maxsplit=1, flags=re.MULTILINE)[0]
    question = re.search(re.escape(names.question_text.rstrip("?")) + r"\s*\??", body, re.IGNORECASE)
    spans_part = body[: question.start()] if question else body
    spans: list[tuple[str, str]] = []
    none_identified = False
    for line in spans_part.split("\n"):
        line = line.strip().strip("*").strip()
        if line.rstrip(".").casefold() == names.none_answer.casefold():
            none_identified = True
        elif span := _span_line(line, names):
            spans.append(span)
    missing = _answer(body[question.end() :], names) if question else None
    if not spans and not none_identified and missing is None:
        raise CritiqueError(
            f"no span lines, no {names.none_answer!r} and no answer to {names.question_text!r}: "
            "expected the seed's answer block"
        )
    return Critique(tuple(spans), none_identified, missing)


_SPAN_LINE = re.compile(r"span\s*(\d+)\s*[:.]\s?(.*)", re.IGNORECASE)
_LABEL_TAIL = re.compile(r"\s*\(\s*label\s*:\s*([^()]*?)\s*\)\s*$", re.IGNORECASE)


def _span_line(line: str, names: Names) -> tuple[str, str] | None:
    """(text, label) of a ``Span N: <text> (Label: X)`` line, None for any other line."""
    m = _SPAN_LINE.fullmatch(line)
    if not m:
        return None
    tail = _LABEL_TAIL.search(m.group(2))
    if not tail:
        raise CritiqueError(f"Span {m.group(1)} has no label: write it as 'Span {m.group(1)}: <text> (Label: X)'")
    text = m.group(2)[: tail.start()]
    if not text.strip():
        raise CritiqueError(f"Span {m.group(1)} has no text")
    return text, _label(tail.group(1), m.group(1), names)


def _label(written: str, n: str, names: Names) -> str:
    """The definition's label for a written one: case-insensitive, dimension names accepted."""
    for label in names.labels:
        if written.casefold() == label.casefold():
            return label
    alias = _DIMENSION_LABELS.get(written.casefold())
    if alias in names.labels:
        return alias
    if written.casefold() == "coverage":
        raise CritiqueError(f"Span {n} is labelled Coverage: missing information is the question, not a span")
    raise CritiqueError(f"Span {n} has the unknown label {written!r}: use one of {', '.join(names.labels)}")


def _answer(after: str, names: Names) -> str | None:
    """The Yes/No after the question: its first word, case-insensitive; None if nothing follows."""
    line = next((x.strip() for x in after.split("\n") if x.strip()), "")
    if not line:
        return None
    word = re.split(r"[\s.,;:!*]+", line.strip("* "), maxsplit=1)[0]
    for code in names.answers:
        if word.casefold() == code.casefold():
            return code
    raise CritiqueError(
        f"the answer to {names.question_text!r} is {line[:40]!r}: expected one of {', '.join(names.answers)}"
    )


# ---------------------------------------------------------------------------- locating spans

_QUOTES = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"'})


def locate_spans(summary: str, spans: Sequence[tuple[str, str]]) -> list[tuple[int, int, str]]:
    """(start, end, label) of each written span in the summary, in code points.

    Each span takes the first occurrence of its text whose range no earlier span took;
    text not found verbatim is searched again without surrounding quotes, then with
    whitespace collapsed and case folded, and mapped back to exact offsets.
    """
    used: set[tuple[int, int]] = set()
    out = []
    for n, (text, label) in enumerate(spans, 1):
        found = _find(summary, text, used)
        if found is None:
            raise CritiqueError(f"Span {n} {text!r} is not in the summary: copy the span text from the summary")
        used.add(found)
        out.append((found[0], found[1], label))
    return out


def _find(summary: str, text: str, used: set[tuple[int, int]]) -> tuple[int, int] | None:
    candidates = [text, text.strip()]
    stripped = text.strip()
    if len(stripped) > 2 and stripped[0] + stripped[-1] in ('""', "''", "“”", "‘’", "``"):
        candidates.append(stripped[1:-1].strip())
    for candidate in candidates:
        for start in _occurrences(summary, candidate):
            if (start, start + len(candidate)) not in used:
                return start, start + len(candidate)
    folded, index = _fold(summary)
    for candidate in candidates:
        needle = _fold(candidate)[0].strip()
        for start in _occurrences(folded, needle):
            span = (index[start], index[start + len(needle) - 1] + 1)
            if span not in used:
                return span
    return None


def _occurrences(haystack: str, needle: str) -> Iterator[int]:
    if not needle:
        return
    start = haystack.find(needle)
    while start >= 0:
        yield start
        start = haystack.find(needle, start + 1)


def _fold(text: str) -> tuple[str, list[int]]:
    """Text with whitespace runs collapsed, case folded and quotes straightened, and the source index of each char."""
    out: list[str] = []
    index: list[int] = []
    for i, ch in enumerate(text):
        if ch.isspace():
            if out and out[-1] == " ":
                continue
            out.append(" ")
            index.append(i)
            continue
        for c in ch.translate(_QUOTES).casefold():
            out.append(c)
            index.append(i)
    return "".join(out), index


def critique_result(critique: Critique, summary: str, names: Names) -> list[dict[str, Any]]:
    """Label Studio result items for a parsed answer block on this summary."""
    items: list[dict[str, Any]] = []
    for n, (start, end, label) in enumerate(locate_spans(summary, critique.spans), 1):
        value = {"start": start, "end": end, "text": summary[start:end], "labels": [label]}
        items.append(_item(f"span{n}", names.flaws, names.summary, "labels", value))
    if critique.none_identified:
        items.append(_item("none", names.none_name, names.summary, "choices", {"choices": [names.none_answer]}))
    if critique.missing is not None:
        items.append(_item("missing", names.question, names.summary, "choices", {"choices": [critique.missing]}))
    return items


def _item(item_id: str, from_name: str, to_name: str, kind: str, value: dict[str, Any]) -> dict[str, Any]:
    return {"id": item_id, "from_name": from_name, "to_name": to_name, "type": kind, "value": value, "origin": "manual"}


# ---------------------------------------------------------------------------- reading records


def _records(path: Path, warnings: list[ReadWarning] | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
    """(location, record) of every record of an input file, streamed; what a CSV reader ignored goes to ``warnings``."""
    suffix = path.suffix.lower()
    readers = {".jsonl": _jsonl_records, ".ndjson": _jsonl_records, ".json": _json_records}
    if suffix not in (*readers, ".csv"):
        raise InputError(path, "", "", f"unsupported file type {suffix or '(none)'!r}: use .jsonl, .csv or .json")
    if not path.is_file():
        raise InputError(path, "", "", "file not found")
    if suffix == ".csv":
        yield from _csv_records(path, [] if warnings is None else warnings)
    else:
        yield from readers[suffix](path)


def _not_utf8(path: Path, where: str) -> InputError:
    return InputError(path, where, "", "not UTF-8 text: save the file as UTF-8")


def _lines(path: Path) -> Iterator[str]:
    """The file's lines, decoded one at a time so a bad byte is reported at its own line; a BOM is dropped."""
    with path.open("rb") as f:
        for n, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise _not_utf8(path, f"line {n}") from None
            yield line.removeprefix("\ufeff") if n == 1 else line


def _jsonl_records(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    for n, line in enumerate(_lines(path), 1):
        if line.strip():
            yield f"line {n}", _json_object(path, f"line {n}", line)


def _json_object(path: Path, where: str, line: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except json.JSONDecodeError as e:
        raise InputError(
            path, where, "", f"not valid JSON ({e.msg}, column {e.colno}): one JSON object a line"
        ) from None
    if not isinstance(value, dict):
        raise InputError(path, where, "", f"expected a JSON object, got {_describe(value)}")
    return value


def _csv_records(path: Path, warnings: list[ReadWarning]) -> Iterator[tuple[str, dict[str, Any]]]:
    """CSV rows as records; an empty cell counts as absent (except a summary's, reported as empty)."""
    reader = csv.reader(_lines(path))
    line = 1  # where the next record starts
    noted: set[int] = set()
    try:
        first = next(reader, None)
        if first is None:
            return
        header = csv_header(first)
        line = reader.line_num + 1
        for row in reader:
            where, line = f"line {line}", reader.line_num + 1
            if not any(cell.strip() for cell in row):
                continue
            row = fit_row(path, where, len(header), row, warnings, noted)
            yield where, {k: v for k, v in zip(header, row, strict=False) if v != "" or k == "summary"}
    except csv.Error as e:
        raise InputError(path, f"line {line}", "", f"not valid CSV ({e})") from None


def _json_records(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """Records of a JSON array, parsed incrementally; a Label Studio task ``{"data": {...}}`` gives its data."""
    for n, value in enumerate(_json_array(path), 1):
        where = f"record {n}"
        if not isinstance(value, dict):
            raise InputError(path, where, "", f"expected a JSON object, got {_describe(value)}")
        data = value.get("data")
        yield where, data if isinstance(data, dict) and "summary" not in value else value


def _json_array(path: Path) -> Iterator[Any]:
    """The items of a top-level JSON array, one at a time, reading the file in chunks."""
    decoder = json.JSONDecoder()
    with path.open(encoding="utf-8-sig") as f:
        buffer, eof, n = "", False, 0

        def more() -> bool:
            nonlocal buffer, eof
            chunk = "" if eof else f.read(_CHUNK * max(1, len(buffer) // _CHUNK))
            eof = eof or not chunk
            buffer += chunk
            return bool(chunk)

        def next_char() -> str:
            nonlocal buffer
            while True:
                buffer = buffer.lstrip()
                if buffer or not more():
                    return buffer[:1]

        try:
            if next_char() != "[":
                raise InputError(path, "", "", "expected a JSON array of records ([{...}, ...]) or use .jsonl")
            buffer = buffer[1:]
            while next_char() != "]":
                n += 1
                if n > 1:
                    if buffer[:1] != ",":
                        raise InputError(path, f"record {n}", "", "not valid JSON: expected ',' between records")
                    buffer = buffer[1:]
                    next_char()
                while True:
                    try:
                        value, end = decoder.raw_decode(buffer)
                        break
                    except json.JSONDecodeError as e:
                        if not more():
                            raise InputError(path, f"record {n}", "", f"not valid JSON ({e.msg})") from None
                buffer = buffer[end:]
                yield value
        except UnicodeDecodeError:
            raise _not_utf8(path, f"record {n + 1}") from None


def _describe(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    text = repr(value)
    return f"{type(value).__name__} {text[:40] + '...' if len(text) > 40 else text}"


# ---------------------------------------------------------------------------- records to tasks


@dataclass(frozen=True)
class _Record:
    """One input record with its place, for messages."""

    path: Path
    where: str
    fields: dict[str, Any]

    def error(self, field: str, problem: str) -> InputError:
        return InputError(self.path, self.where, field, problem)

    def string(self, field: str, *, required: bool = True) -> str | None:
        """A string field; absent is None unless required; empty or blank is an error."""
        value = self.fields.get(field)
        if value is None:
            if required:
                raise self.error(field, "missing; every record needs one")
            return None
        if not isinstance(value, str):
            raise self.error(field, f"expected a string, got {_describe(value)}")
        if not value.strip():
            raise self.error(field, "empty; give the text or leave the field out")
        return value

    def document(self) -> str:
        """The document field, else the seed's layout of the TL;DR fields."""
        if self.fields.get("document") not in (None, ""):
            return str(self.string("document"))
        present = [f for f in TLDR_FIELDS if self.fields.get(f) not in (None, "")]
        if not present:
            raise self.error("document", "missing; give the document, or the TL;DR fields subreddit, title and post")
        missing = [f for f in TLDR_FIELDS if f not in present]
        if missing:
            raise self.error(missing[0], "missing; the TL;DR fields subreddit, title and post go together")
        subreddit, title, post = (str(self.string(f)) for f in TLDR_FIELDS)
        if not subreddit.startswith("r/"):
            subreddit = f"r/{subreddit}"
        return f"SUBREDDIT: {subreddit} TITLE: {title} POST: {post}"

    def critique(self, summary: str, names: Names) -> list[dict[str, Any]]:
        """The result of the record's critique field (an answer block)."""
        text = str(self.string("critique"))
        try:
            return critique_result(parse_critique(text, names), summary, names)
        except CritiqueError as e:
            raise self.error("critique", str(e)) from None

    def score(self) -> float | None:
        value = self.fields.get("score")
        if value is None:
            return None
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                pass
        raise self.error("score", f"expected a number, got {_describe(value)}")


def _all_records(paths: Sequence[Path], warnings: list[ReadWarning] | None = None) -> Iterator[_Record]:
    for path in paths:
        path = Path(path)
        for where, fields in _records(path, warnings):
            yield _Record(path, where, fields)


def _task_key(document: str, summary: str) -> str:
    return content_key(NAME, {"document": document, "summary": summary})


def _source_task(record: _Record, names: Names) -> SourceTask:
    summary = str(record.string("summary"))
    document = record.document()
    data: dict[str, Any] = {
        names.document: document,
        names.summary: summary,
        "record": {k: v for k, v in record.fields.items() if k not in _NOT_CARRIED},
    }
    model = record.string("model", required=False)
    annotations: tuple[SourceAnnotation, ...] = ()
    if record.fields.get("critique") not in (None, ""):
        annotator = record.fields.get("annotator")
        who = str(annotator) if annotator not in (None, "") else "original"
        annotations = (SourceAnnotation(annotator=who, result=record.critique(summary, names)),)
    warnings: tuple[ReadWarning, ...] = ()
    if "\n" in summary or "\r" in summary:
        warnings = (ReadWarning(str(record.path), record.where, "field 'summary' holds line breaks: the seed's "
                                "pipeline flattens them to spaces before the critic sees it, and a span across one "
                                "does not parse back from summary-flaws.txt"),)  # fmt: skip
    return SourceTask(
        key=_task_key(document, summary),
        data=data,
        location=f"{record.path}: {record.where}",
        systems=(model,) if model is not None else (),
        annotations=annotations,
        warnings=warnings,
    )


# ---------------------------------------------------------------------------- judgments in results


@dataclass(frozen=True)
class Span:
    """A span as its style decodes it: offsets as exported (possibly outside the summary), the region's own text,
    its label."""

    start: int
    end: int
    text: str
    label: str


@dataclass(frozen=True)
class Judgment:
    """What one annotation says, whatever order and ids the editor gave its result items."""

    spans: tuple[Span, ...]  # by start offset
    none_identified: bool
    missing: str | None


_NAMES: list[tuple[Definition, Names]] = []  # the last definition's names: checked once per annotation


def _names(definition: Definition) -> Names:
    """names_for, remembered for the last definition (conversion asks once per annotation)."""
    if not _NAMES or _NAMES[0][0] is not definition:
        _NAMES[:] = [(definition, names_for(definition))]
    return _NAMES[0][1]


def _decoded(task: ExportedTask, annotation: ExportedAnnotation, definition: Definition) -> list[Any]:
    """The annotation's judgments (:func:`annols.formats.decoded_annotations`: decoded once per task)."""
    return next((j for a, j in decoded_annotations(task, definition) if a is annotation), None) \
        or decode(definition, task, annotation)  # fmt: skip


def judgment(judgments: Iterable[Any], names: Names) -> Judgment:
    """What an annotation's judgments (its style's decode) say in the protocol's terms: the spans of the flaws
    control by start offset, "None identified" ticked, the first answer to the question that is one of its codes.
    A region decode reads no span from (no label, offsets that are no whole numbers) is not here:
    check names it (``unreadable-span``)."""
    spans: list[Span] = []
    none_identified = False
    missing: str | None = None
    for j in judgments:
        if isinstance(j, styles_judgments.Span) and j.control == names.flaws:
            spans.append(Span(int(j.start), int(j.end), j.text, j.label))
        elif isinstance(j, styles_judgments.Answer) and j.question == names.none_name:
            none_identified = none_identified or names.none_answer in j.codes
        elif isinstance(j, styles_judgments.Answer) and j.question == names.question:
            answers = [c for c in j.codes if c in names.answers]
            missing = answers[0] if answers else None
    spans.sort(key=lambda s: (s.start, s.end, s.label))
    return Judgment(tuple(spans), none_identified, missing)


def _valid(span: Span, summary: str) -> bool:
    return 0 <= span.start <= span.end <= len(summary)


def _span_text(span: Span, summary: str) -> str:
    """The exact summary substring; the region's own text only if its offsets are unusable."""
    return summary[span.start : span.end] if _valid(span, summary) else span.text


# ---------------------------------------------------------------------------- the format


class SummaryFlawsFormat:
    """The summary-flaws protocol's native input, predictions and results."""

    name = NAME
    describe = (
        "JSONL/CSV/JSON records: summary + document (or TL;DR subreddit, title, post), "
        "optional model, id, critique (+annotator); predictions: the same + critique"
    )

    def read(self, paths: Sequence[Path], definition: Definition) -> Iterator[SourceTask]:
        """Tasks in input order; consecutive records of the same summary become one task with all their critiques."""
        names = names_for(definition)
        pending: SourceTask | None = None
        ignored: list[ReadWarning] = []  # filled while a record is read; they travel with its task
        for record in _all_records(paths, ignored):
            task = _source_task(record, names)
            if ignored:
                task = replace(task, warnings=(*ignored, *task.warnings))
                ignored.clear()
            if pending is not None and pending.key == task.key:
                pending = replace(pending, annotations=pending.annotations + task.annotations,
                                  warnings=pending.warnings + task.warnings)  # fmt: skip
                continue
            if pending is not None:
                yield pending
            pending = task
        if pending is not None:
            yield pending

    def read_predictions(self, paths: Sequence[Path], definition: Definition) -> Iterator[tuple[str, SourcePrediction]]:
        """A critic's answer block per record, as a pre-annotation of the task with the same document and summary."""
        names = names_for(definition)
        for record in _all_records(paths):
            summary = str(record.string("summary"))
            key = _task_key(record.document(), summary)
            if record.fields.get("critique") in (None, ""):
                raise record.error("critique", "missing; each prediction record needs the critic's answer block")
            result = record.critique(summary, names)
            model = record.fields.get("model")
            yield key, SourcePrediction(result, model_version="" if model is None else str(model), score=record.score())

    # Entries are separated by a blank line; JSONL lines follow one another.
    joins: ClassVar[dict[str, Join]] = {
        "summary-flaws.txt": join_separated(b"\n\n"),
        "summary-flaws.jsonl": join_concatenated,
    }

    # Each result file is one record per judgment (a submitted annotation), in task order: a re-pull keeps the
    # records of the tasks that did not change (annols.study.pull), copied as byte ranges of the earlier pull's
    # files. An entry of the text file but the first starts with the blank line before it: the first entry's bytes
    # change with the entries before it (two bytes fewer when there are none).
    renumbered: ClassVar[frozenset[str]] = frozenset({RESULT_FILES[0]})

    def record_spans(self, name: str, f: IO[bytes]) -> Iterator[tuple[int, int]]:
        """Where each record of result file ``name`` (open as ``f``) lies, ``[start, end)``, one after another;
        ValueError if it is not a file write_results wrote. An entry of summary-flaws.txt starts at its header
        line, with the blank line before it but for the first; should a text hold a line like a header after a
        blank line, there are more spans than records and the caller keeps nothing."""
        if name == RESULT_FILES[1]:
            yield from line_spans(f)
            return
        if name != RESULT_FILES[0]:
            raise ValueError(f"{name} is not a result file of {NAME}")
        if not f.seek(0, 2):
            return
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            if data[: len(_ENTRY_START)] != _ENTRY_START or data[-1:] != b"\n":
                raise ValueError(f"{name} is not as write_results writes it")
            at = 0
            for m in _NEXT_ENTRY.finditer(data):
                yield at, m.start()
                at = m.start()
            yield at, len(data)

    def splice(self, name: str, runs: Iterable[tuple[IO[bytes], int, int]], out: IO[bytes]) -> None:
        """Result file ``name`` of the records in ``runs`` (byte ranges of such files as :meth:`record_spans` finds
        them, each a run of whole records), byte for byte write_results's of them; ValueError if a range does
        not hold what it should."""
        if name == RESULT_FILES[1]:
            splice_concatenated(runs, out)
            return
        if name != RESULT_FILES[0]:
            raise ValueError(f"{name} is not a result file of {NAME}")
        first = True
        for source, start, end in runs:
            if start == end:
                continue
            source.seek(start)
            if start and source.read(2) != b"\n\n":  # an entry but its file's first: the blank line before it
                raise ValueError(f"{name}: no entry at byte {start}")
            at = start + 2 if start else start
            source.seek(at)
            if source.read(len(_ENTRY_START)) != _ENTRY_START:
                raise ValueError(f"{name}: no entry at byte {start}")
            if not first:
                out.write(b"\n\n")
            copy_range(out, source, at, end)
            first = False

    def write_results(self, tasks: Iterable[ExportedTask], definition: Definition, out_dir: Path) -> list[Path]:
        """The seed's blocks (``summary-flaws.txt``) and the same as data (``summary-flaws.jsonl``)."""
        names = _names(definition)
        paths = [Path(out_dir) / name for name in RESULT_FILES]
        with ExitStack() as stack:
            text, lines = (stack.enter_context(atomic_open(p)) for p in paths)
            first = True
            for task in tasks:
                for annotation, judgments in decoded_annotations(task, definition):
                    found = judgment(judgments, names)
                    text.write(("" if first else "\n\n") + entry(task, annotation, found, names))
                    lines.write(jsontext.dumps(_json_line(task, annotation, found, names), ensure_ascii=False) + "\n")
                    first = False
        return paths

    def check(self, task: ExportedTask, annotation: ExportedAnnotation, definition: Definition) -> list[Violation]:
        """unreadable-span (-answer, -link), spans-xor-none, missing-info-answered, span-text-matches,
        overlapping-spans, span-parses-back (a skipped task has none)."""
        if annotation.cancelled:
            return []
        names = _names(definition)
        found = judgment(_decoded(task, annotation, definition), names)
        summary = str(task.data.get(names.summary, ""))
        problems = unread(definition.spec, task, annotation) + _xor_none(found, names) + _unanswered(found, names)
        problems += _mismatched(found, summary) + _overlapping(found) + _parses_back(found, summary, names)
        return [Violation(task.key, annotation.annotator, rule, what) for rule, what in problems]


FORMAT = SummaryFlawsFormat()


def entry(task: ExportedTask, annotation: ExportedAnnotation, found: Judgment, names: Names) -> str:
    """One entry of ``summary-flaws.txt``: header line, document, summary and answer block, newline-ended."""
    document = str(task.data.get(names.document, ""))
    summary = str(task.data.get(names.summary, ""))
    spans = [(_span_text(s, summary), s.label) for s in found.spans]
    return (
        f"##### Task {task.key} | Annotator {annotation.annotator} #####\n"
        f"{names.document_title}:\n{document}\n\n"
        f"{names.summary_title}:\n{summary}\n\n"
        f"{answer_block(spans, found.missing, names)}\n"
    )


def _json_line(task: ExportedTask, annotation: ExportedAnnotation, found: Judgment, names: Names) -> dict[str, Any]:
    summary = str(task.data.get(names.summary, ""))
    line: dict[str, Any] = {
        "key": task.key,
        "annotator": annotation.annotator,
        "document": task.data.get(names.document, ""),
        "summary": summary,
    }
    model = task.systems[0] if task.systems else task.data.get("model")  # data: tasks pushed before it moved to meta
    if model is not None:
        line["model"] = model
    line |= {
        "spans": [
            {"start": s.start, "end": s.end, "text": _span_text(s, summary), "label": s.label} for s in found.spans
        ],
        "none_identified": found.none_identified,
        "missing_key_information": found.missing,
        "record": task.data.get("record", {}),
        "lead_time": annotation.lead_time,
        "created_at": annotation.created_at,
    }
    return line


# ---------------------------------------------------------------------------- rules


def _xor_none(found: Judgment, names: Names) -> list[tuple[str, str]]:
    if found.spans and found.none_identified:
        return [("spans-xor-none", f"{len(found.spans)} span(s) marked and {names.none_answer!r} ticked")]
    if not found.spans and not found.none_identified:
        return [("spans-xor-none", f"no span marked and {names.none_answer!r} not ticked")]
    return []


def _unanswered(found: Judgment, names: Names) -> list[tuple[str, str]]:
    if found.missing is None:
        return [("missing-info-answered", f"no answer to {names.question_text!r}")]
    return []


def _mismatched(found: Judgment, summary: str) -> list[tuple[str, str]]:
    out = []
    for s in found.spans:
        if not _valid(s, summary):
            out.append(("span-text-matches", f"span {s.text!r} has offsets {s.start}-{s.end} outside the summary"))
        elif summary[s.start : s.end] != s.text:
            out.append(
                (
                    "span-text-matches",
                    f"span {s.start}-{s.end} has text {s.text!r}, the summary there reads {summary[s.start : s.end]!r}",
                )
            )
    return out


def _parses_back(found: Judgment, summary: str, names: Names) -> list[tuple[str, str]]:
    """Spans the seed's regex ``Span \\d+: (.*?)( \\(Label: .*?\\))?(\\n|$)`` would read back as something else."""
    out = []
    for s in found.spans:
        text = _span_text(s, summary)
        problem = ""
        if "\n" in text or "\r" in text:
            problem = "holds a line break: the seed's regex reads the span only up to it"
        elif " (Label: " in text:
            problem = "holds ' (Label: ': the seed's regex ends the span there"
        elif names.none_answer in text:
            problem = f"holds {names.none_answer!r}: the answer block reads as if nothing were marked"
        if problem:
            out.append(("span-parses-back", f"span {text!r} ({s.start}-{s.end}) {problem}"))
    return out


def _overlapping(found: Judgment) -> list[tuple[str, str]]:
    out = []
    spans = [s for s in found.spans if s.start >= 0]
    for i, a in enumerate(spans):
        for b in spans[i + 1 :]:
            if b.start < a.end and a.start < b.end:
                what = f"spans {a.text!r} ({a.start}-{a.end}) and {b.text!r} ({b.start}-{b.end}) overlap"
                out.append(("overlapping-spans", what))
    return out
