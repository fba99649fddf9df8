"""The collector of a definition reported by its style: judgments in, :mod:`annols.analysis` findings out.

Every submitted annotation is decoded (:func:`annols.styles.decode`) and kept as rows
of the judgments table (:func:`annols.styles.judgments.tidy`), column by column. Each column
stores small integer codes into a list of its distinct values, so a value repeated over
a study (a system, an aspect, "win") is held once; free text (explanations, a span's
text) is not analysed and not kept, and a text answer is kept as answered with its text
left out. A span's region id is kept as its number within the annotation ("0", "1", ...;
links name their target the same way), so the regions of a study share a few values.
For a spans definition the target text's whitespace tokens are kept per item, for
token-level agreement.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols import analysis, memory
from annols.analysis import agreement, asked, best_worst
from annols.analysis.by_system import sections as asked_sections
from annols.analysis.naming import natural
from annols.analysis.results import Finding
from annols.analysis.span_agreement import TOKEN
from annols.definition import Definition, fields
from annols.report.common import ReportOptions
from annols.report.sources import Study
from annols.styles import decode
from annols.styles.answers import ExportedAnnotation, ExportedTask
from annols.styles.judgments import TIDY_COLUMNS, tidy

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
            if code > self.limit:
                wider = "h" if self.codes.typecode == "b" else "i"
                self.codes = array(wider, self.codes)
                self.limit = 32767 if wider == "h" else 2**31 - 1
        self.codes.append(code)

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
    task in, which a study in several passes reads its passes from (:func:`annols.analysis.sequential.pass_series`)."""
    by_uid = study.annotations.set_index("uid")
    uids = frame["uid"].to_numpy()
    return frame.assign(created_at=by_uid["created_at"].reindex(uids).to_numpy(),
                        annotation_id=by_uid["annotation_id"].reindex(uids).to_numpy())  # fmt: skip


class StyleCollector:
    def __init__(self, definition: Definition, options: ReportOptions) -> None:
        self.definition = definition
        self.options = options
        self.uids = array("i")  # the annotation of each row (4 bytes: a study has far fewer than 2**31 annotations)
        self.columns = {name: Column() for name in ["task_key", *KEPT]}
        self.judged_system: dict[int, str] = {}  # uid -> the system a spans item's text is by
        self.tokens: dict[str, tuple[np.ndarray, np.ndarray]] | None = {} if definition.style == "spans" else None
        # best-worst, and the questions analysed by system (annols.analysis.asked): each task's item (its context),
        # the unit of the tests
        self.covered = asked.covered(definition.spec)
        per_turn = bool(getattr(definition.spec, "per_turn", False))  # ratings per turn: a conversation's item
        self.units: dict[str, str] | None = {} if definition.style == "best-worst" or self.covered or per_turn else None
        self._table: pd.DataFrame | None = None  # made from the columns by table(), which empties them
        self.copy_of: list[int] = []  # copy uid - COPY_BASE -> the uid of the judgment it copies

    def add(self, task: ExportedTask, annotation: ExportedAnnotation, uid: int) -> None:
        if task.share:  # a shared task's judgment (uid), credited to another system: a copy of its own uid
            if self.definition.style not in CREDITED_STYLES:
                return
            self.copy_of.append(uid)
            uid = COPY_BASE + len(self.copy_of) - 1
        for row in judgment_rows(self.definition, task, annotation):
            self.uids.append(uid)
            self.columns["task_key"].append(task.key)
            for name, value in zip(KEPT, row, strict=True):
                self.columns[name].append(value)
        if self.units is not None and task.key not in self.units:
            self.units[task.key] = asked.unit_of(self.definition.spec, task.data, task.key)
        if self.tokens is not None:
            if len(task.systems) == 1:
                self.judged_system[uid] = task.systems[0]
            if task.key not in self.tokens:
                text = target_text(self.definition, task.data)
                found = [(m.start(), m.end()) for m in TOKEN.finditer(text)]
                self.tokens[task.key] = (np.array([s for s, _ in found], dtype=np.int64),
                                         np.array([e for _, e in found], dtype=np.int64))  # fmt: skip

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
        """:meth:`frame` as a study in rounds reads it (:func:`annols.analysis.sequential.frame_of`): best-worst
        and spans with each row's item; spans also with a row of kind ``judged`` per counted annotation (uid,
        task key, annotator, system, item), since a candidate without spans has no row and its error score is 0."""
        from annols.analysis import sequential

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

    def sections(self, study: Study) -> list[Finding]:
        judged = None  # read by the spans sections only (a copy of every counted annotation)
        if self.tokens is not None:
            judged = study.kept[["uid", "task_key", "annotator"]].copy()
            judged["system"] = [self.judged_system.get(u, "") for u in judged["uid"]]
            judged = self.judged_copies(judged)
            if self.covered and self.units is not None:
                judged[asked.UNIT] = judged["task_key"].astype(str).map(self.units)
        taken: list[Any] = []  # what the questions' sections read of the table, taken before it is handed over
        out = analysis.style_sections(self.definition, self._last_frame(study, taken), judged, self.options,
                                      self.tokens)  # fmt: skip
        if not taken:
            return out
        return out + asked_sections(taken[0], taken[1], self.definition.spec, self.options, judged, self.tokens)

    def _last_frame(self, study: Study, taken: list[Any] | None = None) -> pd.DataFrame:
        """:meth:`frame`, and the collector lets its table go when nothing asks for it again (the annotator
        models and the adjudicated tables do): the analyses then hold the only reference and may free it.
        ``taken``: given the rows :mod:`annols.analysis.asked` reads and the target's spans (None but for spans),
        for a definition it covers."""
        frame = self.frame(study)
        if self.units is not None:
            frame = frame.assign(**{best_worst.UNIT: frame["task_key"].astype(str).map(self.units)})
        if taken is not None and self.covered:
            spec = self.definition.spec
            taken += [asked.kept(frame, spec), asked.span_rows(frame, spec) if self.tokens is not None else None]
        if not self.options.models and not self.options.adjudicated:
            self._table = None
        return frame


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
