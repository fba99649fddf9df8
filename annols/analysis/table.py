"""The study table: what a study's analyses read of its pulls, as plain data.

:mod:`annols.study.table` fills it, reading the pull folders (or export files) once: the
annotations and items (:class:`Study`: who counts where), the style's judgments table
(:class:`Judgments`: every counted annotation decoded by its style,
:func:`annols.styles.decode`, and kept column by column as small integer codes), and the
rows the other analyses read beside it: rule violations, judgments on gold items and
attention checks, judges' answers, adjudication verdicts, a hybrid study's pool, the pull's
findings and a study's record of rounds. Every finding of a report is a function of this
table and the options (:mod:`annols.analysis.by_style.style_findings`,
:mod:`annols.analysis.raters.quality_findings`, :mod:`annols.analysis.judging.judge_findings`); the report
only renders them.

Each column of the judgments table stores small integer codes into a list of its distinct
values, so a value repeated over a study (a system, an aspect, "win") is held once; free
text (explanations, a span's text) is not analysed and not kept, and a text answer is kept
as answered with its text left out. A span's region id is kept as its number within the
annotation ("0", "1", ...; links name their target the same way), so the regions of a
study share a few values. For a spans definition the target text's whitespace tokens are
kept per item, for token-level agreement.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols import memory
from annols.analysis.by_style import asked
from annols.analysis.naming import natural
from annols.analysis.raters import agreement
from annols.definition import Definition, fields
from annols.styles import decode
from annols.styles.answers import ExportedAnnotation, ExportedTask
from annols.styles.judgments import TIDY_COLUMNS, Judgment, tidy

ANNOTATION_COLUMNS = ["uid", "source", "task_key", "task_id", "annotator", "annotation_id", "created_at",
                      "lead_time", "cancelled", "role"]  # fmt: skip
# A task's role as annols.study.roles names it (tests/analysis/test_study_table.py holds them equal).
STUDY, GOLD, ATTENTION = "study", "gold", "attention"
ATTENTION_ASPECT = "attention check"  # annols.study.attention.ASPECT: an attention check's score


@dataclass(frozen=True)
class Source:
    given: Path  # as the user named it
    export: Path
    project: dict[str, Any]

    @property
    def overlap(self) -> int | None:
        value = self.project.get("overlap")
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else None

    @property
    def title(self) -> str:
        return str(self.project.get("title") or "")


@dataclass
class Study:
    """Every annotation of every source, one row each, and the items they belong to."""

    sources: list[Source]
    annotations: pd.DataFrame  # ANNOTATION_COLUMNS + "kept"
    items: pd.DataFrame  # task_key, task_id, overlap, annotators (kept annotations)
    overlaps: list[tuple[int, str]] = field(default_factory=list)  # per source: (overlap, where it came from)
    source_tasks: list[int] = field(default_factory=list)  # tasks read from each source
    # push --share-identical: task key -> how many systems' identical outputs its task stands for (2 or more)
    shared: dict[str, int] = field(default_factory=dict)

    @property
    def kept(self) -> pd.DataFrame:
        """The judgments that count: one per item and annotator, never cancelled."""
        return self.annotations[self.annotations["kept"]]

    def annotator_of(self) -> pd.Series:
        """uid -> annotator, for joining a protocol's rows."""
        return self.annotations.set_index("uid")["annotator"]


def kept_mask(annotations: pd.DataFrame) -> pd.Series:
    submitted = annotations[~annotations["cancelled"]]
    latest = submitted.sort_values(["created_at", "annotation_id", "uid"], kind="stable").drop_duplicates(
        ["task_key", "annotator"], keep="last"
    )
    return annotations["uid"].isin(latest["uid"])


def latest(annotations: pd.DataFrame) -> pd.DataFrame:
    """Each annotator's latest submitted annotation of each task (gold items and attention checks too)."""
    submitted = annotations[~annotations["cancelled"]]
    return submitted.sort_values(["created_at", "annotation_id", "uid"], kind="stable").drop_duplicates(
        ["task_key", "annotator"], keep="last"
    )


KEPT = [c for c in TIDY_COLUMNS if c != "text"]
SKIPPED_KINDS = ("cell-text",)  # free text: nothing to count
# push --share-identical: the copy of a judgment credited to another system that produced the same text has a uid
# from here up (the original's uid is below it); its rows carry ``copy`` True. The styles whose tables count per
# system; a sentences table counts no system, so the copies are left out of it (each judgment once).
COPY_BASE = 1 << 30
CREDITED_STYLES = ("ratings", "spans")
COPY = agreement.COPY
_KIND, _VALUE, _TEXT, _REGION = (TIDY_COLUMNS.index(c) for c in ("kind", "value", "text", "region"))
_ROW, _START, _END = (TIDY_COLUMNS.index(c) for c in ("row", "start", "end"))


def target_text(definition: Definition, data: dict[str, Any]) -> str:
    """A spans task's target as the text the word counts and span agreement read: a conversation's messages
    joined by a blank line (:func:`annols.definition.fields.conversation_text`)."""
    target = definition.spec.target
    value = data.get(target.name, "")
    return fields.conversation_text(value)[0] if target.kind == "conversation" else str(value)


def _message_starts(definition: Definition, task: ExportedTask) -> list[int]:
    target = getattr(definition.spec, "target", None) if definition.style == "spans" else None
    if target is None or target.kind != "conversation":
        return []
    return fields.conversation_text(task.data.get(target.name))[1]


def judgment_rows(definition: Definition, task: ExportedTask, annotation: ExportedAnnotation) -> Iterator[list[Any]]:
    """The annotation's rows of the judgments table, in :data:`KEPT` order: free text left out (a text
    answer is kept as answered, value ""), region ids numbered within the annotation."""
    regions: dict[Any, str] = {}

    def number(region: Any) -> str:
        return regions.setdefault(region, str(len(regions))) if region != "" else ""

    starts = _message_starts(definition, task)
    for row in tidy(decode(definition, task, annotation)):
        kind = row[_KIND]
        if starts and kind in ("span", "span-answer", "link") and isinstance(row[_ROW], int) \
                and 0 <= row[_ROW] < len(starts):  # fmt: skip
            # A span in a conversation's message: offsets into the conversation's text, which the error scores'
            # word counts and span agreement read (the message stays in the row column).
            row[_START] += starts[row[_ROW]]
            row[_END] += starts[row[_ROW]]
        if kind in SKIPPED_KINDS:
            continue
        if kind == "text":
            row[_VALUE] = ""
        elif kind == "link":
            row[_VALUE] = number(row[_VALUE])
        if row[_REGION] != "":
            row[_REGION] = number(row[_REGION])
        del row[_TEXT]  # the one column of TIDY_COLUMNS not in KEPT
        yield row


class Column:
    """Values as codes into a list of distinct values."""

    def __init__(self) -> None:
        self.codes = array("b")  # one byte a row while there are few values; wider when there are more
        self.limit = 127
        self.values: list[Any] = []
        self.index: dict[Any, int] = {}

    def append(self, value: Any) -> None:
        key = (type(value), value)  # 1 and "1" and 1.0 stay apart
        code = self.index.get(key)
        if code is None:
            code = self.index[key] = len(self.values)
            self.values.append(value)
            self._fit(code)
        self.codes.append(code)

    def _fit(self, code: int) -> None:
        """Codes wide enough to hold ``code`` (one byte, then two, then four)."""
        if code > self.limit:
            wider = "h" if code <= 32767 else "i"
            self.codes = array(wider, self.codes)
            self.limit = 32767 if wider == "h" else 2**31 - 1

    def extend(self, values: Sequence[Any]) -> None:
        """:meth:`append` each of ``values``: the same codes and values, looked up in one pass at C speed (the
        reader adds an annotation's rows column by column)."""
        index = self.index
        codes: list[Any] = list(map(index.get, zip(map(type, values), values, strict=True)))
        if None in codes:  # a value not seen before: coded in order, as append would
            for at, value in enumerate(values):
                if codes[at] is None:
                    key = (type(value), value)
                    code = index.get(key)
                    if code is None:
                        code = index[key] = len(self.values)
                        self.values.append(value)
                    codes[at] = code
            self._fit(len(self.values) - 1)
        self.codes.extend(codes)

    def repeat(self, value: Any, times: int) -> None:
        """:meth:`append` ``value`` ``times`` times."""
        if times:
            self.append(value)
            self.codes.extend(self.codes[-1:] * (times - 1))

    def code_array(self) -> np.ndarray:
        return (
            np.frombuffer(self.codes, dtype={"b": np.int8, "h": np.int16, "i": np.int32}[self.codes.typecode])
            if len(self.codes)
            else np.zeros(0, dtype=np.int32)
        )

    def categorical(self, categories: list[Any] | None = None) -> Any:
        """The column as a pandas Categorical (small integer codes, categories in sorted order, None missing) when
        its values are all of one type (str, int or float) besides None, else as :meth:`array`: the same
        values at a fraction of an object array's memory. ``categories``: the categories to use (a superset)."""
        kinds = {type(v) for v in self.values if v is not None}
        if len(kinds) > 1 or not kinds <= {str, int, float}:
            return self.array()
        present = [v for v in self.values if v is not None]
        categories = sorted(set(present)) if categories is None else categories
        at = {v: i for i, v in enumerate(categories)}
        remap = np.array([at[v] if v is not None else -1 for v in self.values] or [-1], dtype=np.int32)
        codes = remap[self.code_array()]
        return pd.Categorical.from_codes(codes, categories=categories)

    def array(self) -> np.ndarray:
        values = np.empty(len(self.values), dtype=object)
        values[:] = self.values
        return values[self.code_array()] if len(self.codes) else values[:0]


def _in_order(frame: pd.DataFrame, study: Study) -> pd.DataFrame:
    """``frame`` with each row's annotation's ``created_at`` and ``annotation_id``: the order annotators judged a
    task in, which a study in several passes reads its passes from
    (:func:`annols.analysis.planning.sequential.pass_series`)."""
    by_uid = study.annotations.set_index("uid")
    uids = frame["uid"].to_numpy()
    return frame.assign(created_at=by_uid["created_at"].reindex(uids).to_numpy(),
                        annotation_id=by_uid["annotation_id"].reindex(uids).to_numpy())  # fmt: skip


class Judgments:
    """A style's judgments table (the rows of :func:`judgment_rows` of every counted annotation) as the reader
    keeps it (:mod:`annols.study.table`): column by column as codes, made a frame once (:meth:`table`)."""

    def __init__(self, definition: Definition) -> None:
        self.definition = definition
        self.uids = array("i")  # the annotation of each row (4 bytes: a study has far fewer than 2**31 annotations)
        self.columns = {name: Column() for name in ["task_key", *KEPT]}
        self.judged_system: dict[int, str] = {}  # uid -> the system a spans item's text is by
        self.tokens: dict[str, tuple[np.ndarray, np.ndarray]] | None = {} if definition.style == "spans" else None
        # best-worst, and the questions analysed by system (annols.analysis.by_style.asked): each task's item (its
        # context), the unit of the tests
        self.covered = asked.covered(definition.spec)
        per_turn = bool(getattr(definition.spec, "per_turn", False))  # ratings per turn: a conversation's item
        self.units: dict[str, str] | None = {} if definition.style == "best-worst" or self.covered or per_turn else None
        self._table: pd.DataFrame | None = None  # made from the columns by table(), which empties them
        self.copy_of: list[int] = []  # copy uid - COPY_BASE -> the uid of the judgment it copies

    def frame(self, study: Study) -> pd.DataFrame:
        """The kept judgments' rows, with the annotator joined."""
        table = self.table()
        uids = self.originals(table["uid"].to_numpy())
        keep = np.isin(uids, study.kept["uid"].to_numpy())
        if not keep.all():
            frame, uids = table[keep].reset_index(drop=True), uids[keep]
        else:
            frame = table  # every row kept (the usual case): the table itself, not a copy of it
        if self.copy_of:
            frame = frame.assign(**{COPY: frame["uid"].to_numpy() >= COPY_BASE})
        return frame.assign(annotator=annotators_of(study, uids))

    def originals(self, uids: np.ndarray) -> np.ndarray:
        """Each uid, a copy's (push --share-identical) as the uid of the judgment it copies."""
        if not self.copy_of:
            return uids
        copies = uids >= COPY_BASE
        out = uids.astype(np.int64)
        out[copies] = np.asarray(self.copy_of, dtype=np.int64)[out[copies] - COPY_BASE]
        return out

    def judged_copies(self, judged: pd.DataFrame) -> pd.DataFrame:
        """``judged`` (the counted annotations, with their system) and a row for each copy of one of them
        credited to another system, ``copy`` telling them apart (only when there are copies)."""
        if not self.copy_of:
            return judged
        copies = pd.DataFrame({"uid": np.arange(COPY_BASE, COPY_BASE + len(self.copy_of), dtype=np.int64),
                               "of": np.asarray(self.copy_of, dtype=np.int64)})  # fmt: skip
        copies["system"] = [self.judged_system.get(u, "") for u in copies["uid"]]
        rows = judged.drop(columns=["system"]).rename(columns={"uid": "of"}).merge(copies, on="of")
        rows = rows.drop(columns=["of"])[list(judged.columns)]
        out = pd.concat([judged.assign(**{COPY: False}), rows.assign(**{COPY: True})], ignore_index=True)
        return out.sort_values("uid", kind="stable").reset_index(drop=True)

    def rounds_frame(self, study: Study) -> pd.DataFrame:
        """:meth:`frame` as a study in rounds reads it (:func:`annols.analysis.planning.sequential.frame_of`):
        best-worst and spans with each row's item; spans also with a row of kind ``judged`` per counted annotation (uid,
        task key, annotator, system, item), since a candidate without spans has no row and its error score is 0."""
        from annols.analysis.planning import sequential

        frame = self.frame(study)
        if self.units is None or self.definition.style not in sequential.BY_ITEM:
            return _in_order(frame, study)
        frame = frame.assign(**{asked.UNIT: frame["task_key"].astype(str).map(self.units)})
        if self.tokens is None:
            return _in_order(frame, study)
        judged = study.kept[["uid", "task_key", "annotator"]].copy()
        judged["system"] = [self.judged_system.get(u, "") for u in judged["uid"]]
        judged[asked.UNIT] = judged["task_key"].astype(str).map(self.units)
        judged["kind"] = sequential.JUDGED
        rows = pd.DataFrame({c: frame[c].astype(object) for c in frame.columns})
        return _in_order(pd.concat([rows, judged.astype(object)], ignore_index=True), study)

    def hand_over(self) -> None:
        """Let the judgments table go: the analyses given its frame hold the only reference and may free it."""
        self._table = None

    def table(self) -> pd.DataFrame:
        """Every judgment row read, as a frame of categorical columns (see :meth:`Column.categorical`).

        Made once, on the first call: each column's codes are handed over to the frame and
        freed as it is converted, so the judgments are not held twice (at 100,000 ratings
        tasks each copy is about 100 MB). No annotation may be added after."""
        if self._table is None:
            if not self.columns:
                raise RuntimeError("the judgments table was handed over to the analyses and is gone")
            uids = np.frombuffer(self.uids, dtype=np.intc) if len(self.uids) else np.zeros(0, dtype=np.intc)
            systems = {v for name in ("system", "opponent") for v in self.columns[name].values if v is not None}
            # system and opponent compare; in natural order (M2 before M10), which the tables grouped by codes keep
            shared = natural(systems) if all(type(v) is str for v in systems) else None
            columns: dict[str, Any] = {"uid": uids}
            for name in list(self.columns):
                column = self.columns.pop(name)
                columns[name] = column.categorical(shared if name in ("system", "opponent") else None)
                del column  # its codes go now, before the next column is converted
            self._table = pd.DataFrame(columns, copy=False)
            memory.release()  # the columns' codes and the conversion's transients
        return self._table

def annotators_of(study: Study, uids: np.ndarray) -> pd.Categorical:
    """The annotator of each uid as a Categorical of the annotators present, in sorted order: what
    ``pd.Categorical(uids.map(annotator))`` gives, without a string object per row on the way."""
    annotations = study.annotations
    codes, names = pd.factorize(annotations["annotator"], sort=True)
    lookup = np.full(int(annotations["uid"].max()) + 1 if len(annotations) else 0, -1, dtype=np.int64)
    lookup[annotations["uid"].to_numpy()] = codes
    present = lookup[uids]
    used = np.unique(present)
    remap = np.full(len(names), -1, dtype=np.int64)
    remap[used] = np.arange(len(used))
    return pd.Categorical.from_codes(remap[present], categories=names[used])


@dataclass(frozen=True)
class Answer:
    """A judgment known beside the study: a gold item's answer or an adjudication verdict (the task as pushed)."""

    key: str
    task: ExportedTask
    annotation: ExportedAnnotation


@dataclass
class GoldRows:
    """Judgments on gold items and attention checks, scored while the pulls were read."""

    gold: dict[str, Answer] = field(default_factory=dict)  # the --gold input's answers by item key
    given: list[tuple[int, str, dict[str, float]]] = field(default_factory=list)  # uid, item key, aspect -> score
    roles: set[str] = field(default_factory=set)  # the roles (gold, attention) of the tasks seen


@dataclass
class AdjudicationRows:
    """The verdicts of an adjudication pull and the study's judgments on their items."""

    verdicts: dict[str, Answer] = field(default_factory=dict)
    given: list[tuple[int, str, list[Judgment]]] = field(default_factory=list)  # uid, item key, its judgments


@dataclass
class JudgeRows:
    """Judges' answers beside the humans (hidden judges, report --judge), decoded as the humans' are."""

    humans: Judgments  # the humans' judgments table, copies of shared tasks left out
    names: list[str]  # the judges' annotator names (judge:NAME)
    none_question: str | None  # spans: the "none found" choice, left out (it is in the span F1)
    record_ids: dict[str, str] = field(default_factory=dict)  # task key -> the input record's id
    judged: list[tuple[str, str, int]] = field(default_factory=list)  # task key, judge, its uid (negative)
    rows: list[list[object]] = field(default_factory=list)  # task key, judge, uid, *TIDY_COLUMNS
    units: dict[str, str] = field(default_factory=dict)  # task key -> item, for the styles whose item holds several
    task_systems: dict[str, str] = field(default_factory=dict)  # the system of each one-output task
    pool: bool = False  # a hybrid study: the judge answered items no human did


@dataclass
class TaskTexts:
    """What each study task showed, kept only where asked (``read(texts=True)``, for ``annols export``): task key ->
    system -> the value of its candidate as the task showed it, and task key -> the task's context panes."""

    shown: dict[str, dict[str, Any]] = field(default_factory=dict)
    context: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass
class StudyTable:
    """Everything a study's analyses read of its pulls (:func:`annols.study.table.read` fills it)."""

    definition: Definition
    study: Study
    judgments: Judgments
    blind: bool = False  # a blind-only pull: no system is known
    violations: list[tuple[int, str]] = field(default_factory=list)  # uid, rule of the protocol it breaks
    gold: GoldRows = field(default_factory=GoldRows)
    adjudication: AdjudicationRows = field(default_factory=AdjudicationRows)
    judges: JudgeRows | None = None
    findings: list[list[Any]] = field(default_factory=list)  # what pull found (folder, task id, key, ...)
    rounds: list[dict[str, Any]] | None = None  # the record of next-round (report --rounds)
    texts: TaskTexts | None = None  # what each study task showed (read(texts=True) only)

    @property
    def folders(self) -> list[Path]:
        return [s.export.parent for s in self.study.sources]

    def frames(self) -> dict[str, pd.DataFrame]:
        """Every table of the study as a frame (the judgments table made, if it was not yet): to compare two reads."""
        out = {"annotations": self.study.annotations, "items": self.study.items,
               "judgments": self.judgments.table(),
               "violations": pd.DataFrame(self.violations, columns=["uid", "rule"]),
               "gold": pd.DataFrame([(u, k, a, s) for u, k, d in self.gold.given for a, s in d.items()],
                                    columns=["uid", "task_key", "aspect", "score"]),
               "findings": pd.DataFrame(self.findings, columns=["source", "task id", "task key", "annotation id",
                                                                "finding", "detail"])}  # fmt: skip
        if self.judges is not None:
            out["judge_rows"] = pd.DataFrame(self.judges.rows, columns=["task_key", "annotator", "uid", *TIDY_COLUMNS])
            out["judges_humans"] = self.judges.humans.table()
        return out
