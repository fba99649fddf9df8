"""The generic format: JSONL or CSV whose columns are the definition's task fields.

Used for a user's own definition (and any protocol without a native format). Each
record must have every field the config shows; other fields are carried in
``data["record"]`` and come back in results. For pairwise and ranking definitions,
``systems`` may name the system behind each candidate (a JSON list in JSONL, or
``|``-separated in CSV), for blinding and unblinded results.

Judgments made elsewhere come in the same file (imported by ``push --with-annotations``):
a record with an ``annotator`` field is one annotator's judgment of its task, with one
field per answer named by the control that stores it (``coherence_summary_1``: the
config's control names; a multiple choice's codes ``|``-separated in CSV), or, in JSONL,
an ``answers`` object as a judge file has (:mod:`annols.study.judges`); or the lines of an
earlier pull's ``<name>.jsonl`` as they are (data and systems as shown, the raw result,
re-checked as answers). Answers are about the
candidates in the record's order (its ``systems``); push shuffles the candidates of judged
tasks like any and moves the answers with them. Judged records of the same task (every field
the same but the judgment's) are one task: consecutive ones are read as one task with several
annotations.
A spans definition's judgments give ``answers.spans`` as a judge file does (label, ``start``/``end`` or the
quoted ``text``, a span's own ``answers``), each span placed on the record's target text as its own region;
a sentences definition's rows as a judge file names them. An MQM vendor file (``.tsv``, the layout of the WMT
MQM releases) is read by :mod:`annols.formats.mqm_tsv` into such records, and a file in the public arena
layout (MT-Bench human judgments, Chatbot Arena: JSON lines, a JSON array or parquet whose rows hold
``question_id, model_a, model_b, winner, judge, conversation_a, conversation_b``) by
:mod:`annols.formats.arena`, each person's vote a judged record of its battle (model judges' votes go to
push as hidden judges, never to the server).

A task is a record and its systems (:class:`Identities`): two records whose shown texts are
the same but whose ``systems`` or other fields (an ``id``, a document, a position) differ are
two tasks, each credited to its own systems. The first record with given texts keeps the key
of the texts alone (so a study pushed before this resumes); a later one that differs in its
other fields gets a key of the texts and those fields. Exact duplicates (every field the same)
are one task, as push says. With ``push --share-identical``, records of the same texts share
one task instead, credited to every system that produced them.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Generator, Iterable, Iterator, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import IO, Any

from annols import files, jsontext
from annols.definition import Definition, Pane, blinding
from annols.definition import fields as fields_mod
from annols.errors import DefinitionError, InputError
from annols.formats import (
    ReadWarning,
    SourceAnnotation,
    SourcePrediction,
    SourceTask,
    Violation,
    arena,
    content_key,
    decoded_annotations,
    line_spans,
    mqm_tsv,
    original_annotator,
    splice_concatenated,
)
from annols.formats.answers import answer_items, controls, is_judge, place_span, refusal
from annols.protocols import config
from annols.styles.answers import ExportedAnnotation, ExportedTask

ANNOTATOR = "annotator"
ANSWERS = "answers"
CARRIED = "record"  # the task data key holding an input record's fields that are not task fields
_PREDICTION = ("systems", "result", "model_version", "score")  # a prediction record's own fields


class Identities:
    """The key of each record of an input, read in order: a task is a record and its systems.

    The first record with given shown texts gets the key of its texts alone, as every record
    did before (a study pushed then finds its tasks again, given its input in the same order).
    A later record of the same texts whose systems or other fields differ from the first's gets
    a key of its texts and those fields: its own task, credited to its own systems. A later
    record equal to the first in every field gets the first's key: an exact duplicate, which
    push merges and counts. The first record's identity is kept as a digest, one per distinct
    text.
    """

    def __init__(self) -> None:
        self._first: dict[str, str] = {}  # key of the texts -> digest of the first such record's other fields

    def key(self, name: str, key: str, shown: dict[str, Any], systems: Sequence[str], rest: dict[str, Any]) -> str:
        identity: dict[str, Any] = {}
        if systems:
            identity["systems"] = list(systems)
        if rest:
            identity[CARRIED] = rest
        digest = content_key("", identity) if identity else ""
        if self._first.setdefault(key, digest) == digest:
            return key
        return content_key(name, {"shown": shown, "identity": identity})


def conversation_fields(definition: Definition) -> set[str]:
    """The task fields the definition shows as conversations (panes of ``kind = "conversation"``)."""
    found: set[str] = set()
    for value in vars(definition.spec).values() if definition.spec is not None else ():
        for pane in value if isinstance(value, tuple) else (value,):
            if isinstance(pane, Pane) and pane.kind == "conversation":
                found.add(pane.name)
    return found


def check_conversation(path: Path, location: str, name: str, value: Any) -> None:
    """A conversation is a non-empty list of messages, each with a text ``role`` and ``content`` (OpenAI /
    Hugging Face chat layout); anything else would show as an empty pane."""
    if not isinstance(value, list) or not value:
        raise InputError(path, location, name, "a conversation: expected a non-empty list of "
                         '{"role": ..., "content": ...} messages')  # fmt: skip
    for i, message in enumerate(value):
        if not (isinstance(message, dict) and isinstance(message.get("role"), str) and message["role"]
                and isinstance(message.get("content"), str)):  # fmt: skip
            raise InputError(path, location, f"{name}[{i}]", 'expected a message {"role": ..., "content": ...} '
                             "with text in both")  # fmt: skip


def iter_records(path: Path) -> Generator[tuple[str, dict[str, Any]], None, None]:
    """(location, record) for each record of a JSONL or CSV file, streamed."""
    if path.suffix.lower() == ".csv":
        with _open(path) as f:
            for row_number, row in enumerate(csv.DictReader(f), start=2):
                yield f"line {row_number}", dict(row)
        return
    with _open(path) as f:
        for line_number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as e:
                raise InputError(path, f"line {line_number}", "", f"not valid JSON ({e.msg})") from None
            if not isinstance(record, dict):
                raise InputError(path, f"line {line_number}", "", "expected a JSON object")
            yield f"line {line_number}", record


def _records(path: Path, definition: Definition) -> Iterator[tuple[str, dict[str, Any], tuple[ReadWarning, ...]]]:
    """(location, record, what the reader tolerated): an MQM vendor file (``.tsv``, :mod:`annols.formats.mqm_tsv`)
    or a file in the public arena layout (:mod:`annols.formats.arena`) as judged records, any other file as
    :func:`iter_records` reads it."""
    if mqm_tsv.is_mqm(path):
        yield from mqm_tsv.records(path, definition)
        return
    if arena.is_arena(path):
        yield from arena.records(path, definition)
        return
    for location, record in iter_records(path):
        yield location, record, ()


def _open(path: Path) -> Any:
    try:
        return open(path, encoding="utf-8-sig", newline="")
    except FileNotFoundError:
        raise InputError(path, "", "", "file not found") from None
    except IsADirectoryError:
        raise InputError(path, "", "", "is a folder; give the input file") from None


def _separator_problem(cell: str, found: int, candidates: int) -> str:
    """Why a text cell of system names does not fit the candidates, naming the separator it seems to use."""
    problem = f"{cell!r} names {found} system(s) for {candidates} candidates"
    for separator in (",", ";", "/", "\t"):
        names = [s.strip() for s in cell.split(separator)]
        if len(names) == candidates and all(names):
            shown = repr(separator) if separator != "\t" else "a tab"
            return f"{problem}: separate the names with '|', not {shown} (e.g. {'|'.join(names)!r})"
    example = "|".join(chr(ord("A") + i) for i in range(min(candidates, 26)))
    return f"{problem}: give one name per candidate, in order, separated by '|' (e.g. {example!r})"


class GenericFormat:
    name = "generic"
    describe = "JSONL or CSV with one column per task field of the definition (plus optional 'systems')"

    moves_judgments = True  # judgments are by the record's order: push moves them with the shuffled candidates
    annotations_needed = (
        f"an {ANNOTATOR!r} field in each judged record, and one field per answer named as the config stores it "
        "(e.g. coherence_summary_1), or an 'answers' object in JSONL"
    )

    def read(self, paths: Sequence[Path], definition: Definition) -> Iterator[SourceTask]:
        fields = config.data_fields(definition)
        judged = _Judgments(definition)
        identities = Identities()
        for path in paths:
            held: SourceTask | None = None  # a judged task the next records may add judgments to
            for location, given, warnings in _records(path, definition):
                record, nested = judged.unpulled(path, location, given)
                annotation = judged.read(path, location, record, nested)
                task = self.source_task(definition, fields, path, location, record, read=judged.taken(record),
                                        identities=identities)  # fmt: skip
                if warnings:
                    task = replace(task, warnings=warnings)
                if annotation is None:
                    if held is not None:
                        yield held
                        held = None
                    yield task
                    continue
                judged.check(path, location, task, annotation, content_key(definition.name, {k: task.data[k]
                             for k in fields}))  # fmt: skip
                if held is not None and held.key == task.key:
                    held = replace(held, annotations=(*held.annotations, annotation),
                                   warnings=(*held.warnings, *task.warnings))  # fmt: skip
                    continue
                if held is not None:
                    yield held
                held = replace(task, annotations=(annotation,))
            if held is not None:
                yield held

    @classmethod
    def source_task(
        cls,
        definition: Definition,
        fields: Sequence[str],
        path: Path,
        location: str,
        record: dict[str, Any],
        read: tuple[str, ...] = ("systems",),
        identities: Identities | None = None,
    ) -> SourceTask:
        """The task of one record: every field of the definition is required; keys that are neither
        fields nor ``read`` (taken by the caller) are carried through under ``record``. ``identities``:
        the records read before, which tell this one apart from an earlier one of the same texts
        (without, its key is that of its texts alone)."""
        own = next((name for name in fields if name == CARRIED or name in read), None)
        if own is not None:  # the field's value and what this format reads under that name would mix
            raise DefinitionError(definition.source, own, f"the generic format's input uses {own!r} itself "
                                  f"({'other fields are carried under it' if own == CARRIED else 'it is read'}); "
                                  "name the field otherwise")  # fmt: skip
        data: dict[str, Any] = {}
        optional = config.optional_fields(definition)
        conversations = conversation_fields(definition)
        for name in fields:
            if name not in record or record[name] in (None, ""):
                if name in optional:  # an optional pane: shown empty is shown not at all
                    data[name] = ""
                    continue
                raise InputError(path, location, name, "missing; every task needs it")
            if name in conversations:
                check_conversation(path, location, name, record[name])
                if getattr(definition.spec, "per_turn", False) and not fields_mod.assistant_turns(record[name]):
                    raise InputError(path, location, name, "rated turn by turn (per_turn), but no message is the "
                                     "assistant's: give at least one assistant message")  # fmt: skip
            data[name] = record[name]
        systems = cls._systems(path, location, record, len(blinding.candidate_fields(definition)))
        rest = {k: v for k, v in record.items() if k not in fields and k not in read}
        if rest:
            data[CARRIED] = rest
        shown = {k: data[k] for k in fields}
        texts_key = key = content_key(definition.name, shown)
        if identities is not None:
            key = identities.key(definition.name, key, shown, systems, rest)
        return SourceTask(key=key, data=data, location=f"{path}: {location}", systems=systems, texts_key=texts_key)

    @staticmethod
    def _systems(path: Path, location: str, record: dict[str, Any], candidates: int = 0) -> tuple[str, ...]:
        """The system behind each candidate: a JSON list, or one text cell of names separated by ``|``."""
        raw = record.get("systems")
        if raw in (None, ""):
            return ()
        if isinstance(raw, str):
            cell, raw = raw, [s.strip() for s in raw.split("|")]
            if candidates and len(raw) != candidates:
                raise InputError(path, location, "systems", _separator_problem(cell, len(raw), candidates))
        if not isinstance(raw, list) or not all(isinstance(s, str) and s for s in raw):
            raise InputError(path, location, "systems", "expected a list of system names")
        return tuple(raw)

    def read_predictions(self, paths: Sequence[Path], definition: Definition) -> Iterator[tuple[str, SourcePrediction]]:
        """Each record's pre-annotation, by the key of the task it names: its fields, and (as the input
        has them, in the same order) its ``systems`` and other fields (:class:`Identities`)."""
        fields = config.data_fields(definition)
        optional = config.optional_fields(definition)
        identities = Identities()
        for path in paths:
            for location, record in iter_records(path):
                result = record.get("result")
                if not isinstance(result, list):
                    raise InputError(path, location, "result", "expected a list of Label Studio result items")
                missing = [f for f in fields if f not in record and f not in optional]
                if missing:
                    raise InputError(path, location, missing[0], "missing; needed to find the task")
                shown = {k: "" if k in optional and record.get(k) is None else record[k] for k in fields}
                rest = {k: v for k, v in record.items() if k not in fields and k not in _PREDICTION}
                systems = self._systems(path, location, record, len(blinding.candidate_fields(definition)))
                key = identities.key(definition.name, content_key(definition.name, shown), shown, systems, rest)
                score = record.get("score")
                yield (
                    key,
                    SourcePrediction(
                        result=result,
                        model_version=str(record.get("model_version", "")),
                        score=float(score) if isinstance(score, int | float) else None,
                    ),
                )

    def write_results(self, tasks: Iterable[ExportedTask], definition: Definition, out_dir: Path) -> list[Path]:
        """``<name>.jsonl``: one line per submitted annotation with its judgments, systems unblinded
        (:mod:`annols.styles.judgments`), beside the task's data and the raw result (nothing is lost); an answer
        decode cannot read is in the raw result only, and ``check`` names it."""
        path = out_dir / f"{definition.name}.jsonl"
        with files.atomic_open(path) as f:
            for task in tasks:
                for a, decoded in decoded_annotations(task, definition):
                    judged = [{"kind": j.kind, **{k: v for k, v in asdict(j).items() if k != "kind"
                                                  and not (k in ("turn", "message") and v is None)}}
                              for j in decoded]  # fmt: skip
                    line = {"key": task.key, "task_id": task.id, "annotator": a.annotator, "annotation_id": a.id,
                            "systems": list(task.systems), "judgments": judged, "data": task.data,
                            "result": a.result}  # fmt: skip
                    f.write(jsontext.dumps(line, ensure_ascii=False) + "\n")
        return [path]

    # Its one file is a line per judgment (a non-cancelled annotation), in task order: a re-pull copies the lines of
    # the tasks that did not change from the earlier pull's file (annols.study.pull).
    def record_spans(self, name: str, f: IO[bytes]) -> Iterator[tuple[int, int]]:
        """Where each line of the result file ``name`` (open as ``f``) lies."""
        return line_spans(f)

    def splice(self, name: str, runs: Iterable[tuple[IO[bytes], int, int]], out: IO[bytes]) -> None:
        """The result file of the lines in ``runs`` (byte ranges of whole lines), as write_results writes them."""
        splice_concatenated(runs, out)

    def check(self, task: ExportedTask, annotation: ExportedAnnotation, definition: Definition) -> list[Violation]:
        """Answers the style's decode cannot read (``<name>.jsonl`` holds no judgment of them)."""
        return unread_answers(task, annotation, definition)


def unread_answers(task: ExportedTask, annotation: ExportedAnnotation, definition: Definition) -> list[Violation]:
    """An "unreadable-answer" per task-level choice or number control answered in a way the style's decode leaves
    out of the judgments: two codes for a single choice, a code the config does not offer, a number off its
    scale. A control whose answer the config refuses is confirmed by decoding the annotation without it: when
    the judgments stay the same, decode read nothing of it (so what decode does read, a choice by its shown
    text, is never named). Per-span and per-turn answers are the styles' own and not checked here."""
    if _plainly_answered(annotation.result, _plain_answers(definition)):
        return []  # the common case, checked cheaply: every answer plain, nothing to confirm
    return _unread_answers(task, annotation, definition)


def _unread_answers(task: ExportedTask, annotation: ExportedAnnotation, definition: Definition) -> list[Violation]:
    """:func:`unread_answers` without its shortcut."""
    from annols.styles import decode  # the styles import this package: import on use

    known = _controls_of(definition)
    odd: set[str] = set()  # controls answered in a way other than one plain answer: read again below
    seen: set[str] = set()
    for item in annotation.result:
        name = item.get("from_name") if type(item) is dict else None
        control = known.get(name) if type(name) is str else None
        if control is None:
            continue
        value = item.get("value")
        if type(value) is not dict or item.get("type") != control.kind or "start" in value or "startOffset" in value:
            continue  # not a task-level choice or number (per-region answers are the styles' own)
        chosen = value.get("choices")
        if control.name in seen or not ((type(chosen) is list and len(chosen) == 1 and chosen[0] in control.codes)
                                        or _plain(control, value)):  # fmt: skip
            odd.add(control.name)
        seen.add(control.name)
    if not odd:
        return []
    given: dict[str, list[Any]] = {}
    for item in annotation.result:
        name = item.get("from_name") if isinstance(item, dict) else None
        if name in odd and type(value := item.get("value")) is dict and item.get("type") == known[name].kind:
            if known[name].kind == "choices":
                chosen = value.get("choices") or []
                given.setdefault(name, []).extend([chosen] if isinstance(chosen, str) else chosen)
            else:
                given.setdefault(name, []).append(value.get("number"))
    refused = []
    for name, values in given.items():
        control = known[name]
        if not values:
            continue  # an empty choice: unanswered
        problem = refusal(control, values if control.kind == "choices" or len(values) > 1 else values[0])
        if problem:
            refused.append((name, problem, values))
    if not refused:
        return []
    judged = decode(definition, task, annotation)
    out = []
    for name, problem, values in refused:
        rest = [i for i in annotation.result if not (isinstance(i, dict) and i.get("from_name") == name)]
        if decode(definition, task, replace(annotation, result=rest)) == judged:
            shown = ", ".join(str(v) for v in values)
            out.append(Violation(task.key, annotation.annotator, "unreadable-answer",
                                 f"{name}: {shown} ({problem}); left out of the judgments"))  # fmt: skip
    return out


def _plain(control: Any, value: dict[str, Any]) -> bool:
    """The common well-formed answer, accepted without :func:`refusal`: offered codes (one for a single choice),
    a number on the scale."""
    if control.kind == "number":
        number = value.get("number")
        return type(number) in (int, float) and control.low <= number <= control.high
    chosen = value.get("choices")
    if type(chosen) is not list or not chosen or (len(chosen) > 1 and not control.multiple):
        return False
    return control.dynamic or all(c in control.codes for c in chosen)


def _plainly_answered(result: Sequence[Any], plain: dict[str, tuple[str | None, frozenset[Any], float, float]]
                      ) -> bool:  # fmt: skip
    """True only when :func:`unread_answers` finds nothing odd in ``result``: each item of a task-level choice or
    number control one offered code (a list of one) or a number on the scale, and no control twice. Stricter than
    its loop (any surprise, a per-region item of such a control too, is False: the loop decides), and cheaper."""
    seen = set()
    try:
        for item in result:
            if type(item) is not dict or (name := item.get("from_name")) not in plain:
                continue
            kind, codes, low, high = plain[name]
            if item["type"] != kind or name in seen:
                return False
            seen.add(name)
            if kind == "choices":
                chosen = item["value"]["choices"]
                if type(chosen) is not list or len(chosen) != 1 or chosen[0] not in codes:
                    return False
            else:
                number = item["value"]["number"]
                if type(number) not in (int, float) or not low <= number <= high:
                    return False
    except (KeyError, TypeError):  # a malformed item (no type or value, a value not an object, a list as a code)
        return False
    return True


def _plain_answers(definition: Definition) -> dict[str, tuple[str | None, frozenset[Any], float, float]]:
    """The task-level choice and number controls (:func:`_controls_of`) as :func:`_plainly_answered` checks them:
    name -> kind (None for choices from task data: never plain there), offered codes, scale."""
    _controls_of(definition)  # made once per definition, beside the controls
    return _CONTROLS[id(definition)][2]


# id(definition) -> (definition, its task-level controls, those controls as _plainly_answered checks them)
_CONTROLS: dict[int, tuple[Definition, dict[str, Any], dict[str, tuple[str | None, frozenset[Any], float, float]]]] = {}


def _controls_of(definition: Definition) -> dict[str, Any]:
    """The config's task-level choice and number controls (:func:`annols.formats.answers.controls`), read once per
    definition."""
    kept = _CONTROLS.get(id(definition))
    if kept is None or kept[0] is not definition:
        if len(_CONTROLS) > 16:
            _CONTROLS.clear()
        found = {n: c for n, c in controls(definition).items() if c.kind in ("choices", "number") and not c.per_region}
        plain = {name: (None if c.dynamic else c.kind, frozenset(c.codes), c.low, c.high) for name, c in found.items()}
        kept = _CONTROLS[id(definition)] = (definition, found, plain)
    return kept[1]


class _Judgments:
    """Reads the judgment a record holds (its annotator and answers), checked against the definition's config."""

    def __init__(self, definition: Definition) -> None:
        self.definition = definition
        self._controls: dict[str, Any] | None = None
        self._every: dict[str, Any] | None = None
        self.systems: dict[str, tuple[tuple[str, ...], str]] = {}  # key of judged texts -> their systems, where first
        self.judged: dict[tuple[str, str], str] = {}  # (task key, annotator) -> where

    @property
    def every_control(self) -> dict[str, Any]:
        """Every control of the config, the span labels and per-span questions too (a span's answers)."""
        if self._every is None:
            self._every = controls(self.definition)
        return self._every

    @property
    def controls(self) -> dict[str, Any]:
        if self._controls is None:
            self._controls = {n: c for n, c in controls(self.definition).items() if c.kind not in ("labels",
                              "paragraphlabels") and not c.per_region}  # fmt: skip
        return self._controls

    def taken(self, record: dict[str, Any]) -> tuple[str, ...]:
        """The record's keys that are no task data: ``systems``, and the judgment's own fields."""
        if ANNOTATOR not in record:
            return ("systems",)
        return ("systems", ANNOTATOR, ANSWERS, *(k for k in record if k in self.controls))

    def unpulled(self, path: Path, location: str, record: dict[str, Any]) -> tuple[dict[str, Any], str]:
        """A line of an earlier pull's ``<name>.jsonl`` (task ``data`` as shown, the ``systems`` shown, the
        ``annotator``, the raw ``result``) as an input record with its answers under ``answers``, and the
        field those answers are named by in errors (``result``); any other record as it is (``answers``)."""
        data, result = record.get("data"), record.get("result")
        if not (isinstance(data, dict) and isinstance(result, list) and "judgments" in record):
            return record, ANSWERS
        annotator = str(record.get(ANNOTATOR) or "")
        if is_judge(annotator):
            raise InputError(path, location, ANNOTATOR, f"{annotator!r} is a judge: give its answers with --judge")
        answers: dict[str, Any] = {}
        for i, item in enumerate(result):
            name = item.get("from_name") if isinstance(item, dict) else None
            if name not in self.controls or name in answers:
                raise InputError(path, location, f"result[{i}]", "not an answer this definition takes once")
            value = item.get("value") or {}
            kind = self.controls[name].kind
            answers[name] = "\n".join(value.get("text") or []) if kind == "textarea" else value.get(
                "choices" if kind == "choices" else kind)  # fmt: skip
        fields = {k: v for k, v in data.items() if k != CARRIED}
        carried: dict[str, Any] = data[CARRIED] if isinstance(data.get(CARRIED), dict) else {}
        return {**carried, **fields, "systems": record.get("systems") or [],
                ANNOTATOR: original_annotator(annotator), ANSWERS: answers}, "result"  # fmt: skip

    def read(self, path: Path, location: str, record: dict[str, Any], nested_field: str = ANSWERS
             ) -> SourceAnnotation | None:  # fmt: skip
        """The record's judgment; None for a record without one (no annotator, no answers). Errors in its
        ``answers`` object name ``{nested_field}.{control}``."""
        if ANNOTATOR not in record:
            return None
        annotator = record[ANNOTATOR]
        given = {k: v for k, v in record.items() if k in self.controls and v not in (None, "")}
        nested = record.get(ANSWERS)
        if annotator in (None, "") and not given and not nested:
            return None  # a task nobody judged yet, in a file of judged ones
        if not isinstance(annotator, str | int) or isinstance(annotator, bool) or not str(annotator).strip():
            raise InputError(path, location, ANNOTATOR, "missing; every judgment needs its annotator")
        if nested is not None and not isinstance(nested, dict):
            raise InputError(path, location, ANSWERS, "expected an object of control name -> answer")

        def fail(name: str, problem: str) -> InputError:
            return InputError(path, location, name, problem)

        csv_cells = path.suffix.lower() == ".csv"
        flat = {k: self._cell(k, v, fail) if csv_cells else v for k, v in given.items()}
        result, _ = answer_items(flat, self.controls, fail, prefix="", origin="manual")
        regions: list[dict[str, Any]] = []
        if nested:
            more, spans = answer_items(nested, self.every_control, fail, prefix=f"{nested_field}.", origin="manual")
            result += more
            # Each span its own region (span-1, span-2, ...): its answers belong to it, not to its offsets.
            for n, (control, to_name, span) in enumerate(spans, start=1):
                regions += place_span(fail, control, to_name, span, record.get(to_name), f"span-{n}",
                                      self.every_control)  # fmt: skip
        answered = [str(item["from_name"]) for item in result]
        for name in answered:
            if answered.count(name) > 1:
                raise fail(name, "answered twice (as a field and in answers)")
        missing = [c.name for c in self.controls.values() if c.required and c.name not in answered]
        if missing:
            raise fail(missing[0], "missing; a required answer of the definition")
        order = {name: i for i, name in enumerate(self.controls)}  # the config's order, as the editor saves them
        result.sort(key=lambda item: order[str(item["from_name"])])
        return SourceAnnotation(annotator=str(annotator).strip(), result=regions + result)

    def _cell(self, name: str, value: str, fail: Any) -> Any:
        """A CSV cell as the answer it holds: a number for a slider, a list of codes for a multiple choice."""
        control = self.controls[name]
        if control.kind == "number":
            try:
                number = float(value)
            except ValueError:
                raise fail(name, f"{value!r} is not a number") from None
            return int(number) if number.is_integer() else number
        if control.kind == "choices" and control.multiple:
            return [code.strip() for code in value.split("|")]
        return value

    def check(self, path: Path, location: str, task: SourceTask, annotation: SourceAnnotation, texts: str) -> None:
        """Every record of the same texts (``texts``: their key) by the same systems names them in the same
        order (its answers are by that order), and an annotator judges a task once. The same texts by other
        systems are another task (identical outputs)."""
        where = f"{path}, {location}"
        first = self.systems.setdefault(texts, (task.systems, where))
        if first[0] != task.systems and sorted(first[0]) == sorted(task.systems):
            raise InputError(path, location, "systems", f"{list(task.systems)} differ from {list(first[0])} of the "
                             f"same task at {first[1]}; its judgments are by the systems' order")  # fmt: skip
        seen = self.judged.setdefault((task.key, annotation.annotator), where)
        if seen != where:
            raise InputError(path, location, ANNOTATOR, f"{annotation.annotator!r} already judged this task ({seen})")


FORMAT = GenericFormat()
