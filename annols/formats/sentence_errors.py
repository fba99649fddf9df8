"""sentence-errors: the Qualtrics questionnaire of Hájek & Horák (seed 002), as tasks and tables.

Input (CSV with a header row, or JSONL: one JSON object per line), one record per summary:

- ``input_text``, ``gold``: the article and the reference summary, shown verbatim;
- ``generated``: the summary to judge. Sentences are marked with "•" (split on the
  bullets, each sentence stripped; text before the first bullet counts as a sentence), or,
  without any bullet, one sentence per line (blank lines skipped);
- ``variant``: "abstract" or "headline"; must equal the project's variant, because the
  two variants have a different number of rows and live in separate projects;
- ``id`` (optional) and any other field: carried through in ``data["record"]``.

Task data (``configs/sentence-errors-<variant>.xml``)::

    {"input_text", "gold",
     "generated": "• sentence 1\\n• sentence 2",        # normalised display
     "sentence_1": ..., "sentence_<rows>": ...,         # "" when the summary is short
     "record": {every input field except input_text, gold and annotations}}

The key is ``content_key("sentence-errors", {variant, input_text, generated})`` over the
normalised ``generated``, so bullet and line-split copies of one summary are one task.
More sentences than rows is an error; fewer leave the last rows empty, and the annotator
answers them "Sentence missing", as the seed asks.

Label Studio result of an annotation, per row ``n`` (1-based), all with to_name
``sentence_<n>``: choices ``special_<n>``, ``mapping_<n>``, ``meaning_<n>`` (value
``{"choices": [code]}``, codes are the seed's English answer names) and textarea
``explanation_<n>`` (value ``{"text": [...]}``).

Existing judgments (a JSONL-only extension, e.g. for round trips): a record may carry
``"annotations": [{"annotator": "A", "lead_time": 12.5, "rows": [{"special": "OK"},
{"mapping": "Omission", "meaning": "Ungrammatical", "explanation": "..."}]}]``, row ``i``
of ``rows`` answering sentence ``i + 1``.

Results (the seed's answer table, one row per task x annotator x sentence row), written
to ``sentence-errors.csv`` and ``sentence-errors.jsonl`` with the columns of
``RESULT_COLUMNS``. A row shows what the annotator saw when submitting: a special case
hides the other columns in the editor, so their leftover values are not written
(``check`` reports them). Two answers in one column, which the editor cannot produce, are
joined with "; ".
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import IO, Any, ClassVar

from annols import jsontext
from annols.definition import Definition, Question
from annols.errors import InputError
from annols.files import atomic_open
from annols.formats import (
    Join,
    ReadWarning,
    SourceAnnotation,
    SourcePrediction,
    SourceTask,
    Violation,
    content_key,
    csv_header,
    csv_record_spans,
    decoded_annotations,
    fit_row,
    join_concatenated,
    join_csv,
    line_spans,
    no_predictions,
    splice_concatenated,
)
from annols.styles.answers import ExportedAnnotation, ExportedTask
from annols.styles.judgments import Row, choices_by_name, texts_by_name
from annols.styles.sentences import SentencesSpec

NAME = "sentence-errors"
BULLET = "•"
REQUIRED_FIELDS = ("input_text", "gold", "generated", "variant")
SHOWN_FIELDS = ("input_text", "gold")  # stored verbatim in data, so not repeated in data["record"]
RESULT_COLUMNS = (
    "task",
    "annotator",
    "variant",
    "sentence",
    "text",
    "special_case",
    "mapping",
    "meaning_group",
    "meaning",
    "explanation",
    "record_id",
)
_CSV_HEADER = (",".join(RESULT_COLUMNS) + "\r\n").encode("ascii")  # as csv.DictWriter writes it (excel dialect)
JOIN = "; "  # between two answers of one column (a rule violation the table must still show)

Record = dict[str, Any]
Answers = dict[int, dict[str, list[str]]]  # row number -> question name -> answers


# ---------------------------------------------------------------- reading


def split_sentences(generated: str) -> list[str]:
    """The sentences of a generated summary: bullet-marked, else one per non-blank line."""
    parts = generated.split(BULLET) if BULLET in generated else generated.splitlines()
    return [p.strip() for p in parts if p.strip()]


def display(sentences: Sequence[str]) -> str:
    """The summary as shown to the annotator: one bullet-marked sentence per line."""
    return "\n".join(f"{BULLET} {s}" for s in sentences)


def _open_error(path: Path, e: OSError) -> InputError:
    return InputError(path, "", "", f"cannot read the file ({e.strerror or e}); check the path")


def _utf8_lines(f: IO[bytes], path: Path) -> Iterator[str]:
    """Decode line by line, so a bad byte is reported on its own line (a BOM is dropped)."""
    for n, raw in enumerate(f, 1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise InputError(path, f"line {n}", "", "not UTF-8 text; save the file as UTF-8") from e
        yield line.removeprefix("\ufeff") if n == 1 else line


def _jsonl_records(path: Path) -> Iterator[tuple[str, Record]]:
    """One record per non-blank line, decoded line by line so errors name the line."""
    try:
        f = path.open("rb")
    except OSError as e:
        raise _open_error(path, e) from e
    with f:
        for n, line in enumerate(_utf8_lines(f, path), 1):
            where = f"line {n}"
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as e:
                raise InputError(path, where, "", f"not valid JSON ({e.msg}); one JSON object per line") from e
            if not isinstance(record, dict):
                raise InputError(path, where, "", "expected a JSON object with input_text, gold, generated, variant")
            yield where, record


def _csv_records(path: Path, warnings: list[ReadWarning]) -> Iterator[tuple[str, Record]]:
    """One record per CSV row (a quoted cell may span lines); the location is its first line."""
    try:
        f = path.open("rb")
    except OSError as e:
        raise _open_error(path, e) from e
    with f:
        reader = csv.reader(_utf8_lines(f, path))
        header: list[str] | None = None
        noted: set[int] = set()
        line = 1
        try:
            for row in reader:
                where, line = f"line {line}", reader.line_num + 1
                if not any(cell.strip() for cell in row):
                    continue
                if header is None:
                    header = _csv_header(path, where, row)
                    continue
                row = fit_row(path, where, len(header), row, warnings, noted)
                if len(row) != len(header):
                    raise InputError(path, where, "", f"has {len(row)} cells, the header has {len(header)}; "
                                     "quote cells that contain commas or line breaks")  # fmt: skip
                yield where, dict(zip(header, row, strict=True))
        except csv.Error as e:
            raise InputError(path, f"line {line}", "", f"not valid CSV ({e})") from e


def _csv_header(path: Path, where: str, row: list[str]) -> list[str]:
    header = csv_header(row)
    for i, name in enumerate(header):
        if not name:
            raise InputError(path, where, f"column {i + 1}", "empty header cell; name every column")
        if header.count(name) > 1:
            raise InputError(path, where, name, "appears twice in the header")
    if "annotations" in header:
        raise InputError(path, where, "annotations", "existing judgments are read from JSONL only; use a .jsonl file")
    return header


def _records(path: Path, warnings: list[ReadWarning]) -> Iterator[tuple[str, Record]]:
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return _csv_records(path, warnings)
    if suffix in (".jsonl", ".ndjson"):
        return _jsonl_records(path)
    raise InputError(path, "", "", f"unsupported file type {suffix or '(none)'!r}; give a .csv or .jsonl file")


def _text(record: Record, name: str, path: Path, where: str) -> str:
    if name not in record or record[name] is None:
        raise InputError(path, where, name, "missing; every record needs input_text, gold, generated and variant")
    value = record[name]
    if not isinstance(value, str):
        raise InputError(path, where, name, f"expected a string, got {type(value).__name__}")
    return value


def _task(path: Path, where: str, record: Record, definition: Definition) -> SourceTask:
    spec: SentencesSpec = definition.spec
    values = {name: _text(record, name, path, where) for name in REQUIRED_FIELDS}
    if values["variant"].strip() != definition.variant:
        raise InputError(path, where, "variant", f"{values['variant']!r} does not match this project's variant "
                         f"{definition.variant!r}; push each variant into its own project (--variant)")  # fmt: skip
    sentences = split_sentences(values["generated"])
    if len(sentences) > spec.rows:
        raise InputError(path, where, "generated", f"has {len(sentences)} sentences, the {definition.variant} variant "
                         f"has {spec.rows} row(s); fix the sentence marks or use the other variant")  # fmt: skip
    generated = display(sentences)
    data: dict[str, Any] = {"input_text": values["input_text"], "gold": values["gold"], "generated": generated}
    for n in range(1, spec.rows + 1):
        data[f"sentence_{n}"] = sentences[n - 1] if n <= len(sentences) else ""
    data["record"] = {k: v for k, v in record.items() if k not in (*SHOWN_FIELDS, "annotations")}
    key = content_key(NAME, {"variant": definition.variant, "input_text": values["input_text"], "generated": generated})
    annotations = _annotations(record.get("annotations"), spec, path, where)
    return SourceTask(key=key, data=data, location=f"{path}: {where}", annotations=annotations)


def _annotations(value: Any, spec: SentencesSpec, path: Path, where: str) -> tuple[SourceAnnotation, ...]:
    """Existing judgments of a JSONL record (the documented extension), as Label Studio results."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise InputError(path, where, "annotations", "expected a list of {annotator, rows} objects")
    out = []
    for i, item in enumerate(value):
        field = f"annotations[{i}]"
        if not isinstance(item, dict):
            raise InputError(path, where, field, "expected an object with annotator and rows")
        annotator = item.get("annotator")
        if not isinstance(annotator, str) or not annotator.strip():
            raise InputError(path, where, f"{field}.annotator", "missing; name who made the judgment")
        lead_time = item.get("lead_time")
        if lead_time is not None and (isinstance(lead_time, bool) or not isinstance(lead_time, int | float)):
            raise InputError(path, where, f"{field}.lead_time", "expected a number of seconds")
        rows = item.get("rows")
        if not isinstance(rows, list) or len(rows) > spec.rows:
            raise InputError(path, where, f"{field}.rows", f"expected a list of at most {spec.rows} row objects")
        result = [r for n, row in enumerate(rows, 1) for r in _row_result(row, n, spec, path, where, f"{field}.rows")]
        out.append(SourceAnnotation(annotator=annotator, result=result, lead_time=lead_time))
    return tuple(out)


def _row_result(row: Any, n: int, spec: SentencesSpec, path: Path, where: str, field: str) -> list[dict[str, Any]]:
    field = f"{field}[{n - 1}]"
    if not isinstance(row, dict):
        raise InputError(path, where, field, "expected an object with special, mapping, meaning, explanation")
    questions = {q.name: q for q in (spec.special, *spec.columns, spec.explanation)}
    result = []
    for name, answer in row.items():
        question = questions.get(name)
        if question is None:
            raise InputError(path, where, f"{field}.{name}", f"unknown key; use {', '.join(questions)}")
        if answer is None or answer == "":
            continue
        if not isinstance(answer, str):
            raise InputError(path, where, f"{field}.{name}", "expected a string")
        if question.kind == "text":
            result.append(_item(name, n, "textarea", {"text": [answer]}))
            continue
        codes = [c.code for c in question.all_choices]
        if answer not in codes:
            raise InputError(path, where, f"{field}.{name}", f"{answer!r} is not one of {', '.join(codes)}")
        result.append(_item(name, n, "choices", {"choices": [answer]}))
    return result


def _item(name: str, n: int, kind: str, value: dict[str, Any]) -> dict[str, Any]:
    control = f"{name}_{n}"
    return {"id": control, "from_name": control, "to_name": f"sentence_{n}", "type": kind, "value": value,
            "origin": "manual"}  # fmt: skip


# ---------------------------------------------------------------- results


def parse_result(result: Sequence[dict[str, Any]], spec: SentencesSpec) -> Answers:
    """Answers per row and question, read as the sentences style's decode reads them (task-level ``choices`` and
    ``textarea`` items, :func:`annols.styles.judgments.choices_by_name`), in any order and with any ids; unlike
    decode, a special case's hidden answers are kept, for check to name."""
    pattern = _row_control(spec)
    answers: Answers = {}
    for name, codes in choices_by_name(result).items():
        match = pattern.match(name)
        if match and match[1] != spec.explanation.name:
            answers.setdefault(int(match[2]), {})[match[1]] = list(codes)
    for name, text in texts_by_name(result).items():
        match = pattern.match(name)
        if match and match[1] == spec.explanation.name:
            answers.setdefault(int(match[2]), {})[match[1]] = [text]
    return answers


def _row_control(spec: SentencesSpec) -> re.Pattern[str]:
    names = [spec.special.name, *(q.name for q in spec.columns), spec.explanation.name]
    return re.compile(rf"^({'|'.join(map(re.escape, names))})_(\d+)$")


def _unread(result: Sequence[dict[str, Any]], spec: SentencesSpec) -> list[tuple[str, str]]:
    """Items of a row's controls decode reads no answer from: another type than the control's (``choices``, the
    explanation's ``textarea``), a per-region value, or no value."""
    pattern = _row_control(spec)
    out = []
    for item in result:
        match = pattern.match(str(item.get("from_name", ""))) if isinstance(item, dict) else None
        if match is None:
            continue
        expected = "textarea" if match[1] == spec.explanation.name else "choices"
        items = [item] if item.get("type") == expected and isinstance(item.get("value"), dict) else []
        if not (choices_by_name(items) if expected == "choices" else texts_by_name(items)):
            what = f"{match[0]} is a {item.get('type')!r} result with value {_shown(item.get('value'))}"
            out.append(("unreadable-answer", f"row {match[2]}: {what}, read as no answer (expected {expected})"))
    return out


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _groups(question: Question) -> dict[str, str]:
    return {c.code: title for title, choices in question.groups for c in choices}


def _column(spec: SentencesSpec, name: str) -> Question:
    for q in spec.columns:
        if q.name == name:
            return q
    raise KeyError(name)


def result_rows(tasks: Iterable[ExportedTask], definition: Definition) -> Iterator[dict[str, Any]]:
    """The answer table, one row per task x submitted annotation x sentence row, from the annotations' judgments
    (:func:`annols.formats.decoded_annotations`): a row shows what the annotator saw when submitting (a special
    case hides, and its :class:`~annols.styles.judgments.Row` empties, the other columns)."""
    spec: SentencesSpec = definition.spec
    groups = _groups(_column(spec, "meaning"))
    for task in tasks:
        record = task.data.get("record")
        record = record if isinstance(record, dict) else {}
        variant = definition.variant or str(record.get("variant", ""))
        record_id = record.get("id")
        for annotation, judgments in decoded_annotations(task, definition):
            for row in judgments:
                if not isinstance(row, Row):
                    continue
                meanings = row.columns.get("meaning", ())
                yield {
                    "task": task.key,
                    "annotator": annotation.annotator,
                    "variant": variant,
                    "sentence": row.row,
                    "text": str(task.data.get(f"sentence_{row.row}", "")),
                    "special_case": row.special,
                    "mapping": JOIN.join(row.columns.get("mapping", ())),
                    "meaning_group": JOIN.join(groups.get(m, "") for m in meanings),
                    "meaning": JOIN.join(meanings),
                    "explanation": row.explanation,
                    "record_id": "" if record_id is None else record_id,
                }


# ---------------------------------------------------------------- checks


def _check_row(n: int, row: dict[str, list[str]], spec: SentencesSpec) -> list[tuple[str, str]]:
    """The protocol rules one answer row breaks, as (rule, what was found)."""
    found: list[tuple[str, str]] = []
    for q in (spec.special, *spec.columns):
        answers = row.get(q.name, [])
        codes = {c.code for c in q.all_choices}
        found += [("unknown-answer", f"row {n}: {q.name} {a!r} is not an answer of the definition")
                  for a in answers if a not in codes]  # fmt: skip
        if len(answers) > 1:
            listed = JOIN.join(answers)
            found.append(("one-answer-per-column", f"row {n}: {q.name} has {len(answers)} answers: {listed}"))
    explained = any(t.strip() for t in row.get(spec.explanation.name, []))
    columns = [q.name for q in spec.columns if row.get(q.name)]
    if row.get(spec.special.name):
        rest = columns + ([spec.explanation.name] if explained else [])
        if rest:
            special = JOIN.join(row[spec.special.name])
            rule = "special-case-excludes-the-rest"
            found.append((rule, f"row {n}: special case {special!r} with {', '.join(rest)}"))
        return found
    missing = [q.name for q in spec.columns if not row.get(q.name)]
    if missing:
        found.append(("row-answered", f"row {n}: no special case and no {', '.join(missing)}"))
    if columns and not explained:
        found.append(("explanation-required", f"row {n}: {', '.join(columns)} without an explanation"))
    return found


def check_result(result: Sequence[dict[str, Any]], spec: SentencesSpec) -> list[tuple[str, str]]:
    answers = parse_result(result, spec)
    found = _unread(result, spec)
    found += [("unknown-answer", f"row {n}: there is no such row (the project has {spec.rows})")
             for n in sorted(answers) if not 1 <= n <= spec.rows]  # fmt: skip
    for n in range(1, spec.rows + 1):
        found += _check_row(n, answers.get(n, {}), spec)
    return found


# ---------------------------------------------------------------- the format


class SentenceErrorsFormat:
    name = NAME
    describe = "CSV or JSONL records: input_text, gold, generated (• sentences or one per line), variant, optional id."

    def read(self, paths: Sequence[Path], definition: Definition) -> Iterator[SourceTask]:
        warnings: list[ReadWarning] = []  # filled while a record is read; they travel with its task
        for path in paths:
            for where, record in _records(Path(path), warnings):
                task = _task(Path(path), where, record, definition)
                if warnings:
                    task = replace(task, warnings=tuple(warnings))
                    warnings.clear()
                yield task

    def read_predictions(self, paths: Sequence[Path], definition: Definition) -> Iterator[tuple[str, SourcePrediction]]:
        """The protocol has no machine pre-annotations: say so instead of reading anything."""
        raise no_predictions(NAME, paths)

    joins: ClassVar[dict[str, Join]] = {f"{NAME}.csv": join_csv, f"{NAME}.jsonl": join_concatenated}

    # Each result file is one row per sentence row of a judgment (a submitted annotation), in task order: a re-pull
    # keeps the rows of the tasks that did not change (annols.study.pull), copied as byte ranges of the earlier
    # pull's files. A task's rows: record_count.
    def record_count(self, task: ExportedTask, definition: Definition) -> int:
        """The rows write_results writes of ``task`` in each of its files."""
        return sum(isinstance(row, Row) for _, judgments in decoded_annotations(task, definition) for row in judgments)

    def record_spans(self, name: str, f: IO[bytes]) -> Iterator[tuple[int, int]]:
        """Where each row of result file ``name`` (open as ``f``) lies, ``[start, end)``, one after another (the
        CSV file's after its header line); ValueError if it is not a file write_results wrote."""
        if name == f"{NAME}.jsonl":
            yield from line_spans(f)
        elif name == f"{NAME}.csv":
            if f.readline() != _CSV_HEADER:
                raise ValueError(f"{name} does not start with its header")
            yield from csv_record_spans(f, len(_CSV_HEADER))
        else:
            raise ValueError(f"{name} is not a result file of {NAME}")

    def splice(self, name: str, runs: Iterable[tuple[IO[bytes], int, int]], out: IO[bytes]) -> None:
        """Result file ``name`` of the rows in ``runs`` (byte ranges of whole rows), as write_results writes them."""
        if name == f"{NAME}.csv":
            out.write(_CSV_HEADER)
        elif name != f"{NAME}.jsonl":
            raise ValueError(f"{name} is not a result file of {NAME}")
        splice_concatenated(runs, out)

    def write_results(self, tasks: Iterable[ExportedTask], definition: Definition, out_dir: Path) -> list[Path]:
        csv_path, jsonl_path = Path(out_dir) / f"{NAME}.csv", Path(out_dir) / f"{NAME}.jsonl"
        with atomic_open(csv_path) as cf, atomic_open(jsonl_path) as jf:
            writer = csv.DictWriter(cf, fieldnames=RESULT_COLUMNS)
            writer.writeheader()
            for row in result_rows(tasks, definition):
                writer.writerow(row)
                jf.write(jsontext.dumps(row, ensure_ascii=False) + "\n")
        return [csv_path, jsonl_path]

    def check(self, task: ExportedTask, annotation: ExportedAnnotation, definition: Definition) -> list[Violation]:
        return [Violation(task.key, annotation.annotator, rule, found)
                for rule, found in check_result(annotation.result, definition.spec)]  # fmt: skip


FORMAT = SentenceErrorsFormat()
