"""Judges: an LLM judge's (or any automatic rater's) answers, read, checked against the config, and
turned into annotations of their own beside the humans'.

A judge file is JSONL, one line per task and judge, the same for every protocol and style::

    {"task": "<task key>", "judge": "gpt-4o", "answers": {"helpful": "A", "confidence": "3"}}
    {"id": "rec-17", "judge": "gpt-4o", "answers": {"quality": {"A": 1, "B": 3, "C": 2}}}
    {"id": "rec-18", "judge": "gpt-4o", "answers": {"spans": [{"label": "Wrong", "start": 4, "end": 9},
                                                              {"label": "Vague", "text": "old mill"}]}}

- ``task`` is the task key (results.csv's ``key``), or ``id`` the input record's ``id``;
- ``judge`` names the judge (letters, digits, ``.-_``); its annotations are by ``judge:<name>``;
- ``answers`` maps the labeling config's control names to answers in the protocol's own
  codes: a code (or a list of codes where the question takes several) for a choice, a
  number for a slider, a string for a text question. A nested object names the cells of
  a ranking or ratings grid and the rows of a sentences table: ``{"quality": {"A": 1}}``
  is control ``quality_a``, ``{"coherence": {"summary_1": 4}}`` control
  ``coherence_summary_1``, ``{"severity": {"1": "minor"}}`` control ``severity_1``.
  ``spans`` lists labelled spans of the target text, by offsets (``start``, ``end``:
  characters, end excluded) or by the quoted ``text`` (its first occurrence); ``control``
  picks another labels control than the first; ``answers`` gives the span's own questions
  (``perRegion``, MQM's severity: ``{"severity": "major"}``), checked as any answer is.
  Regions of a Paragraphs object (qa-feedback's missing-information sentences) are not part
  of a judge's answers.
- Candidates are meant as the judge saw them: in the input record's order (``system_1``
  is candidate 1, output ``A`` is the first output). The blinding of each task is undone
  when the judge is set beside the humans. Best-worst tuples are annols' own (no input
  record holds one): their ``{aspect}_best`` / ``{aspect}_worst`` codes are the positions
  as the task shows them (``annols tasks`` writes the tasks, keys and all); so are a ratings
  group's candidate panes (``[groups]``). In a hybrid study (``push --human-share``) the judge
  answers every item before the push shuffles any, most never shown: there they are the
  positions of the tuple (the group) as annols made it, the input's order, as the pool keeps it.

summary-flaws also takes the seed's own text: records with ``summary``, ``document`` (or the
TL;DR fields) and the critic's ``critique`` block, as ``push --predictions`` does; the
judge is the record's ``judge`` or ``model`` field, else the file's name.

An answer that does not fit the config (an unknown control, a code the question does not
offer, a span off the text) is refused with the file, line and field, never dropped.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from annols.definition import Definition
from annols.errors import InputError
from annols.formats import format_for
from annols.formats.answers import (
    JUDGE_NAME,
    SOURCE_JUDGE,
    Control,
    annotator_name,
    answer_items,
    controls,
    place_span,
)
from annols.styles.answers import ExportedAnnotation, ExportedTask

NAME = JUDGE_NAME
LINE_FIELDS = {"task", "id", "judge", "answers"}



@dataclass(frozen=True)
class JudgeAnswer:
    """One line of a judge file, checked against the config; spans still to be placed on their text."""

    judge: str
    task: str  # the task key, "" when the line names the input record's id
    record_id: str
    result: tuple[dict[str, Any], ...]  # Label Studio result items, candidates in the input's order
    spans: tuple[tuple[str, str, dict[str, Any]], ...]  # (labels control, its text, the span as given)
    source: str
    location: str

    def fail(self, field_name: str, problem: str) -> InputError:
        return InputError(self.source, self.location, field_name, problem)


def read_judges(paths: Sequence[Path], definition: Definition) -> list[JudgeAnswer]:
    """Every line of the judge files, each checked against the definition's config."""
    known = controls(definition)
    out: list[JudgeAnswer] = []
    seen: dict[tuple[str, str, str], str] = {}
    for path in paths:
        for answer in _read_file(Path(path), definition, known):
            ident = (answer.judge, answer.task, answer.record_id)
            if ident in seen:
                raise answer.fail("judge", f"judge {answer.judge!r} already answered this task ({seen[ident]})")
            seen[ident] = f"{answer.source}, {answer.location}"
            out.append(answer)
    return out


def _read_file(path: Path, definition: Definition, known: dict[str, Control]) -> Iterator[JudgeAnswer]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError(path, "", "", "not found") from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(path, "", "", f"not readable as UTF-8 text ({e})") from None
    records: list[tuple[int, dict[str, Any]]] = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            problem = f"not JSON ({e.msg}); a judge file has one JSON object a line"
            raise InputError(path, f"line {n}", "", problem) from None
        if not isinstance(record, dict):
            raise InputError(path, f"line {n}", "", "expected a JSON object with task or id, judge and answers")
        records.append((n, record))
    if not records:
        raise InputError(path, "", "", "holds no judge answers")
    if definition.format == "summary-flaws" and "critique" in records[0][1]:
        yield from _critic_blocks(path, definition, records)
        return
    for n, record in records:
        yield _line(path, n, record, known)


def _line(path: Path, n: int, record: dict[str, Any], known: dict[str, Control]) -> JudgeAnswer:
    where = f"line {n}"

    def fail(field_name: str, problem: str) -> InputError:
        return InputError(path, where, field_name, problem)

    unknown = sorted(set(record) - LINE_FIELDS)
    if unknown:
        raise fail(unknown[0], f"unknown field; a judge line has {sorted(LINE_FIELDS)}")
    judge = record.get("judge")
    if not isinstance(judge, str) or not NAME.match(judge):
        raise fail("judge", "missing or not a name (letters, digits, '.', '-', '_', at most 64)")
    task, record_id = record.get("task"), record.get("id")
    if (task is None) == (record_id is None):
        raise fail("task", "give exactly one of task (the task key) and id (the input record's id)")
    if task is not None and (not isinstance(task, str) or not task):
        raise fail("task", "must be the task key, a non-empty string")
    if record_id is not None and (not isinstance(record_id, str | int) or isinstance(record_id, bool)):
        raise fail("id", "must be the input record's id, a string or a number")
    answers = record.get("answers")
    if not isinstance(answers, dict) or not answers:
        raise fail("answers", "missing or empty; an object of control name -> answer")
    result, spans = answer_items(answers, known, fail)
    return JudgeAnswer(judge, task or "", "" if record_id is None else str(record_id), tuple(result), tuple(spans),
                       str(path), where)  # fmt: skip


def _critic_blocks(path: Path, definition: Definition,
                   records: list[tuple[int, dict[str, Any]]]) -> Iterator[JudgeAnswer]:  # fmt: skip
    """The summary-flaws critic's answer blocks, read as ``push --predictions`` reads them."""
    fmt = format_for(definition)
    for (n, record), (key, prediction) in zip(records, fmt.read_predictions([path], definition), strict=True):
        judge = str(record.get("judge") or prediction.model_version or path.stem)
        if not NAME.match(judge):
            raise InputError(path, f"line {n}", "judge", f"{judge!r} is not a name (letters, digits, '.', '-', '_')")
        result = tuple({**item, "origin": "judge"} for item in prediction.result)
        yield JudgeAnswer(judge, key, "", result, (), str(path), f"line {n}")


# --- setting judges beside the humans ------------------------------------------------------------


def record_id(task: ExportedTask) -> str:
    """The input record's ``id`` a task came from, where its data carries it ("" if not)."""
    for holder in (task.data, task.data.get("record") if isinstance(task.data.get("record"), dict) else None):
        if isinstance(holder, dict) and isinstance(holder.get("id"), str | int) and not isinstance(holder["id"], bool):
            return str(holder["id"])
    return ""


def shown_order(task: ExportedTask) -> list[int]:
    """Position p of the task shows input candidate ``order[p]`` (identity when unknown)."""
    shown, source = list(task.systems), list(task.source_systems)
    if not shown or len(shown) != len(source) or sorted(shown) != sorted(source):
        return list(range(len(shown)))
    taken: set[int] = set()
    order = []
    for system in shown:
        i = next(i for i, s in enumerate(source) if s == system and i not in taken)
        taken.add(i)
        order.append(i)
    return order


def reframe(
    definition: Definition, result: Iterable[dict[str, Any]], order: Sequence[int], *, tuples: bool = False
) -> list[dict[str, Any]]:
    """A result given with candidates in the input's order, for a task showing input candidate order[p] at p.

    ``tuples``: best-worst letters are input positions too (a tuple given in the input); a judge's are
    the positions shown, as annols made the tuple.
    """
    items = [dict(i) for i in result]
    if list(order) == list(range(len(order))):
        return items
    at = {source: p for p, source in enumerate(order)}  # input index -> position shown
    spec = definition.spec
    if definition.style == "best-worst" and tuples:
        ends = {spec.control(a, end) for a in spec.aspects for end in ("best", "worst")}
        letters = spec.letters
        for item in items:
            if item.get("from_name") in ends:
                codes = item["value"]["choices"]
                item["value"] = {"choices": [letters[at[letters.index(c)]] if c in letters else c for c in codes]}
    if definition.style == "pairwise":
        aspects = {a.name for a in spec.aspects}
        code_for = {p: a.code for a, p in reversed(list(zip(spec.answers, spec.prefers, strict=True))) if p is not None}
        meaning = {a.code: p for a, p in zip(spec.answers, spec.prefers, strict=True)}
        for item in items:
            if item.get("from_name") in aspects:
                codes = item["value"]["choices"]
                moved = [code_for.get(at[meaning[c]], c) if meaning.get(c) is not None else c for c in codes]
                item["value"] = {"choices": moved}
    elif definition.style in ("ranking", "ratings"):
        renames: dict[str, tuple[str, str]] = {}
        if definition.style == "ranking":
            for dim in spec.dimensions:
                for i, pos in enumerate(spec.positions):
                    shown = spec.positions[at[i]]
                    renames[spec.cell(dim, pos)] = (spec.cell(dim, shown), spec.field(shown))
        else:
            for aspect in spec.aspects:
                for i, candidate in enumerate(spec.candidates):
                    shown = spec.candidates[at[i]]
                    renames[spec.cell(aspect, candidate)] = (spec.cell(aspect, shown), shown.name)
        for item in items:
            if item.get("from_name") in renames:
                item["from_name"], item["to_name"] = renames[item["from_name"]]
                item["id"] = f"judge-{item['from_name']}" if item.get("origin") == "judge" else item["from_name"]
    return items


class Judges:
    """Judge answers ready to be set beside the tasks they are about."""

    def __init__(self, definition: Definition, answers: Sequence[JudgeAnswer], *, hybrid: bool = False) -> None:
        self.definition = definition
        # A best-worst tuple or a ratings group is annols' own, no input record holds it: a judge
        # names its candidates as the task shows them. In a hybrid study (``hybrid``) the judge answers
        # every item before the push shuffles any, and most items are never shown: it names them as
        # annols made them (the pool's order; for a pushed task, its order before the shuffle).
        self.hybrid = hybrid
        self.as_shown = format_for(definition).name in ("best-worst", "groups") and not hybrid
        self.by_key: dict[str, list[JudgeAnswer]] = {}
        self.by_id: dict[str, list[JudgeAnswer]] = {}
        for a in answers:
            (self.by_key.setdefault(a.task, []) if a.task else self.by_id.setdefault(a.record_id, [])).append(a)
        self.used: set[int] = set()
        self.answers = list(answers)
        self.number = {id(a): n for n, a in enumerate(self.answers, start=1)}
        self.names = sorted({a.judge for a in answers})

    @classmethod
    def read(cls, definition: Definition, paths: Sequence[Path], *, hybrid: bool = False) -> Judges:
        return cls(definition, read_judges(paths, definition), hybrid=hybrid)

    def __bool__(self) -> bool:
        return bool(self.answers)

    def _found(self, task: ExportedTask) -> list[JudgeAnswer]:
        return self.by_key.get(task.key, []) + self.by_id.get(record_id(task), []) if self.answers else []

    def numbers(self, task: ExportedTask) -> list[int]:
        """The numbers (1, 2...: their place among the answers) of the answers :meth:`with_judges` sets beside the
        task."""
        return [self.number[id(a)] for a in self._found(task)]

    def mark_used(self, numbers: Iterable[int]) -> None:
        """The answers of these numbers met their task (one an earlier pull set beside it, kept by a re-pull)."""
        for n in numbers:
            self.used.add(id(self.answers[n - 1]))

    def digest(self) -> str:
        """What the judges' annotations of any task follow from beside the task: every answer, in its place (its
        number is the annotation's id), and how candidates are named (``hybrid``)."""
        lines = [[a.judge, a.task, a.record_id, a.result, a.spans] for a in self.answers]
        text = json.dumps([self.hybrid, self.as_shown, lines], ensure_ascii=False, sort_keys=True, default=str)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def annotations(self, task: ExportedTask) -> list[ExportedAnnotation]:
        """The judges' annotations of this task, in the order the task shows its candidates."""
        found = self._found(task)
        out = []
        order = list(range(len(task.systems))) if self.as_shown else shown_order(task)
        for answer in found:
            self.used.add(id(answer))
            result = list(answer.result) + [item for n, (control, to_name, span) in enumerate(answer.spans)
                                            for item in place_span(answer.fail, control, to_name, span,
                                                                   task.data.get(to_name), f"judge-span-{n}")]
            out.append(ExportedAnnotation(
                id=-self.number[id(answer)], annotator=annotator_name(answer.judge),
                result=reframe(self.definition, result, order, tuples=self.hybrid), source=SOURCE_JUDGE,
            ))  # fmt: skip
        return out

    def with_judges(self, task: ExportedTask) -> ExportedTask:
        found = self.annotations(task)
        return replace(task, annotations=(*task.annotations, *found)) if found else task

    def check_used(self, gone: Collection[str] = ()) -> list[str]:
        """Every judge line must have met its task: a line that met none is refused by its location,
        but for one whose task (by key) is in ``gone`` (deleted on the server): their locations."""
        skipped = []
        for answer in self.answers:
            if id(answer) not in self.used:
                if answer.task and answer.task in gone:
                    skipped.append(f"{answer.source}, {answer.location}")
                    continue
                what = f"task {answer.task!r}" if answer.task else f"id {answer.record_id!r}"
                raise answer.fail("task" if answer.task else "id", f"{what} is no task of this study")
        return skipped
