"""The study's tables again, with each adjudicated item's judgments replaced by the verdict.

``annols report ... --adjudicated DIR`` (the pull of the adjudication project) adds, for
every definition (all are reported by their style, :class:`annols.report.style.StyleCollector`),
the sections of :func:`annols.analysis.style_sections` computed on the judgments where every
item with a verdict has that verdict as its one judgment, by annotator ``adjudicated``; items
without a verdict keep their annotators' judgments. That includes the tables of their own of
qa-feedback, summary-flaws and sentence-errors (:func:`annols.analysis.protocol_sections`).
Every table and plot of these sections is named with the prefix ``adjudicated_``
(``tables/adjudicated_pairwise_win_tie_loss.csv`` beside ``tables/pairwise_win_tie_loss.csv``,
``tables/adjudicated_qa_error_types.csv`` beside ``tables/qa_error_types.csv``), every
section title with "Adjudicated: ". The agreement before and after adjudication is
:class:`annols.report.quality.AdjudicationCollector`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols import analysis
from annols.analysis.naming import natural
from annols.analysis.results import Finding, Table
from annols.report.quality import AdjudicationCollector
from annols.report.sources import Study
from annols.report.style import KEPT, StyleCollector, judgment_rows

ADJUDICATED = "adjudicated"  # the annotator annols.study.pull names the verdicts by
PREFIX = "adjudicated_"
TITLE = "Adjudicated: "


def adjudicated_sections(style: StyleCollector, adjudication: AdjudicationCollector, study: Study) -> list[Finding]:
    """The style's sections on the judgments with the verdicts standing for their items (none without verdicts)."""
    definition = style.definition
    frame = style.frame(study)
    judged = study.kept[["uid", "task_key", "annotator"]].copy()
    if style.tokens is not None:
        judged["system"] = [style.judged_system.get(u, "") for u in judged["uid"]]
    keys = sorted(set(judged["task_key"]) & set(adjudication.verdicts))
    if not keys:
        return []
    rows: list[dict[str, Any]] = []
    verdicts: list[dict[str, Any]] = []
    for n, key in enumerate(keys):
        item = adjudication.verdicts[key]
        uid = -(n + 1)  # no annotation of the pulls has it
        verdict = {"uid": uid, "task_key": key, "annotator": ADJUDICATED}
        if style.tokens is not None:
            verdict["system"] = item.task.systems[0] if len(item.task.systems) == 1 else ""
        verdicts.append(verdict)
        for row in judgment_rows(definition, item.task, item.annotation):
            values = dict(zip(KEPT, row, strict=True))
            rows.append({"uid": uid, "task_key": key, **values, "annotator": ADJUDICATED})
    tidy_frame = _merged(frame, rows, keys)
    judged_frame = pd.concat([judged[~judged["task_key"].isin(keys)], pd.DataFrame(verdicts)], ignore_index=True)
    sections = analysis.style_sections(definition, tidy_frame, judged_frame, style.options, style.tokens)
    intro = (f"The tables above computed again with each of the {len(keys)} adjudicated items judged once, by the "
             f"verdict (annotator '{ADJUDICATED}', from the adjudication pull); other items keep their annotators' "
             "judgments. Tables and plots are named with the prefix "
             f"'{PREFIX}'.")  # fmt: skip
    out = [_renamed(s) for s in sections]
    out[0].text.insert(0, intro)
    return out


def _merged(frame: pd.DataFrame, rows: list[dict[str, Any]], keys: list[str]) -> pd.DataFrame:
    """``frame`` without the rows of ``keys``, with ``rows`` instead; columns categorical as in ``frame``."""
    kept = frame[~frame["task_key"].isin(keys)]
    plain = {c: (kept[c].astype(object) if isinstance(kept[c].dtype, pd.CategoricalDtype) else kept[c])
             for c in frame.columns}  # fmt: skip
    added = pd.DataFrame(rows, columns=list(frame.columns))
    merged = pd.concat([pd.DataFrame(plain), added], ignore_index=True)
    systems = _categories(pd.concat([merged["system"], merged["opponent"]]), natural)  # as the collector's table
    for c in frame.columns:
        if not isinstance(frame[c].dtype, pd.CategoricalDtype):
            continue
        categories = systems if c in ("system", "opponent") else _categories(merged[c])
        if categories is not None:
            merged[c] = pd.Categorical(merged[c], categories=categories)
    return merged


def _categories(values: pd.Series, order: Callable[[Iterable[Any]], list[Any]] = sorted) -> list[Any] | None:
    """Distinct values in ``order`` when they are all of one type (str, int or float), else None (left as objects);
    systems in natural order only when they are text."""
    present = [v for v in values if v is not None and not (isinstance(v, float) and v != v)]
    kinds = {type(v) for v in present}
    if len(kinds) > 1 or not kinds <= {str, int, float}:
        return None
    return (order if kinds == {str} else sorted)(set(present))


def _renamed(section: Finding) -> Finding:
    return Finding(
        TITLE + section.title,
        list(section.text),
        [Table(PREFIX + t.name, f"{t.title} (adjudicated)", t.frame, t.note, t.shown, picked=t.picked)
         for t in section.tables],
        [replace(f, name=PREFIX + f.name, title=f"{f.title} (adjudicated)") for f in section.figures],
    )
