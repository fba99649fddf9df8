"""Judged records as a format reads them (the tasks ``push --with-annotations`` imports) turned into the report's
error scores without a server: each annotation decoded by its style (:func:`annols.styles.decode`), its rows of
the judgments table (:func:`annols.styles.judgments.tidy`) given the task's item
(:func:`annols.analysis.by_style.asked.unit_of`), the spans weighed by their regions' answers
(:func:`annols.analysis.by_style.asked.span_rows`), each judgment's error score
(:func:`annols.analysis.by_style.asked.error_scores`) and the per-system table of the report's "Scores and spans per
system" (:func:`annols.analysis.by_style.asked.side_by_side`, by the items rule).

The one path from a read file to those numbers for a check that needs no server: scripts/mqm_release_scores.py (a
whole public MQM release) and tests/formats/test_mqm_tsv.py (its fixture), each beside a computation of its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols.analysis.by_style import asked
from annols.definition import Definition
from annols.formats import SourceTask
from annols.styles import decode
from annols.styles.answers import ExportedAnnotation, ExportedTask
from annols.styles.judgments import TIDY_COLUMNS, tidy


@dataclass(frozen=True)
class Scored:
    """What :func:`error_scores` found: ``tasks`` read, their readers' ``warnings``, one row per judgment
    (``scores``: uid, task_key, annotator, system, unit, spans, error score, words, per 100 words; the words are
    not counted here: 0 and NaN) and the per-system table (``table``, indexed by system)."""

    tasks: int
    warnings: int
    scores: pd.DataFrame
    table: pd.DataFrame


def error_scores(definition: Definition, tasks: Iterable[SourceTask]) -> Scored:
    """The error scores of ``tasks`` (read by ``definition``'s format, a spans definition with weights), each task
    credited to its one system (a spans task's)."""
    rows: list[list[object]] = []
    judged: list[tuple[int, str, str, str, str]] = []
    count = warnings = 0
    for task in tasks:
        count += 1
        warnings += len(task.warnings)
        exported = ExportedTask(id=count, key=task.key, data=task.data, systems=task.systems, annotations=())
        unit = asked.unit_of(definition.spec, task.data, task.key)
        for a in task.annotations:
            uid = len(judged)
            judged.append((uid, task.key, a.annotator, task.systems[0], unit))
            annotation = ExportedAnnotation(id=uid, annotator=a.annotator, result=a.result)
            rows += [[uid, task.key, a.annotator, *row, unit] for row in tidy(decode(definition, exported, annotation))]
    frame = pd.DataFrame(rows, columns=["uid", "task_key", "annotator", *TIDY_COLUMNS, asked.UNIT])
    judged_frame = pd.DataFrame(judged, columns=["uid", "task_key", "annotator", "system", asked.UNIT])
    spans = asked.span_rows(frame, definition.spec)
    scores = asked.error_scores(spans, judged_frame, None)
    table = asked.side_by_side(frame, definition.spec, scores, spans).set_index("system")
    return Scored(tasks=count, warnings=warnings, scores=scores, table=table)
