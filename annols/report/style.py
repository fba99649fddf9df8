"""The collector of a definition reported by its style: judgments in, :mod:`annols.analysis` sections out.

Every submitted annotation is decoded (:func:`annols.judgments.decode`) and kept as rows
of the judgments table (:func:`annols.judgments.tidy`), column by column. Each column
stores small integer codes into a list of its distinct values, so a value repeated over
a study (a system, an aspect, "win") is held once; free text (explanations, text
answers, a span's text) is not analysed and not kept. For a spans definition the
target text's whitespace tokens are kept per item, for token-level agreement.
"""

from __future__ import annotations

from array import array
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols import analysis
from annols.analysis.span_agreement import TOKEN
from annols.definition import Definition
from annols.formats import ExportedAnnotation, ExportedTask
from annols.judgments import TIDY_COLUMNS, decode, tidy
from annols.report.common import ReportOptions
from annols.report.model import Section
from annols.report.sources import Study

KEPT = [c for c in TIDY_COLUMNS if c not in ("text", "region")]
SKIPPED_KINDS = ("text", "cell-text")  # free text: nothing to count
_AT = [TIDY_COLUMNS.index(c) for c in KEPT]


class Column:
    """Values as codes into a list of distinct values."""

    def __init__(self) -> None:
        self.codes = array("i")
        self.values: list[Any] = []
        self.index: dict[Any, int] = {}

    def append(self, value: Any) -> None:
        key = (type(value), value)  # 1 and "1" and 1.0 stay apart
        code = self.index.get(key)
        if code is None:
            code = self.index[key] = len(self.values)
            self.values.append(value)
        self.codes.append(code)

    def array(self) -> np.ndarray:
        values = np.empty(len(self.values), dtype=object)
        values[:] = self.values
        return values[np.frombuffer(self.codes, dtype=np.int32)] if len(self.codes) else values[:0]


class StyleCollector:
    def __init__(self, definition: Definition, options: ReportOptions) -> None:
        self.definition = definition
        self.options = options
        self.uids = array("q")
        self.columns = {name: Column() for name in ["task_key", *KEPT]}
        self.judged_system: dict[int, str] = {}  # uid -> the system a spans item's text is by
        self.tokens: dict[str, tuple[np.ndarray, np.ndarray]] | None = {} if definition.style == "spans" else None

    def add(self, task: ExportedTask, annotation: ExportedAnnotation, uid: int) -> None:
        for row in tidy(decode(self.definition, task, annotation)):
            if row[0] in SKIPPED_KINDS:
                continue
            self.uids.append(uid)
            self.columns["task_key"].append(task.key)
            for name, at in zip(KEPT, _AT, strict=True):
                self.columns[name].append(row[at])
        if self.tokens is not None:
            if len(task.systems) == 1:
                self.judged_system[uid] = task.systems[0]
            if task.key not in self.tokens:
                text = str(task.data.get(self.definition.spec.target.name, ""))
                found = [(m.start(), m.end()) for m in TOKEN.finditer(text)]
                self.tokens[task.key] = (np.array([s for s, _ in found], dtype=np.int64),
                                         np.array([e for _, e in found], dtype=np.int64))  # fmt: skip

    def frame(self, study: Study) -> pd.DataFrame:
        """The kept judgments' rows, with the annotator joined."""
        frame = pd.DataFrame({"uid": np.frombuffer(self.uids, dtype=np.int64) if len(self.uids) else
                              np.zeros(0, dtype=np.int64),
                              **{name: column.array() for name, column in self.columns.items()}})  # fmt: skip
        frame = frame[frame["uid"].isin(study.kept["uid"])].copy()
        frame["annotator"] = frame["uid"].map(study.annotator_of())
        return frame

    def sections(self, study: Study) -> list[Section]:
        judged = study.kept[["uid", "task_key", "annotator"]].copy()
        if self.tokens is not None:
            judged["system"] = [self.judged_system.get(u, "") for u in judged["uid"]]
        return analysis.style_sections(self.definition, self.frame(study), judged, self.options, self.tokens)
