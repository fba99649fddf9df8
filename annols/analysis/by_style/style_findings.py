"""The findings of a study's judgments table by its style: the style's sections, the questions analysed by system,
the study in rounds, the annotator models and the tables again with the adjudicated verdicts.

Each is a function of the study table (:mod:`annols.analysis.table`, read by :mod:`annols.study.table`) and
the options. :func:`style_sections` hands the judgments table over to the analyses (they may free it) unless a
later section reads it again (the annotator models, the adjudicated tables).

The adjudicated tables (``annols report ... --adjudicated DIR``, the pull of the adjudication project): the
sections of :func:`annols.analysis.style_sections` computed on the judgments where every item with a verdict has
that verdict as its one judgment, by annotator ``adjudicated``; items without a verdict keep their annotators'
judgments. That includes the tables of their own of qa-feedback, summary-flaws and sentence-errors
(:func:`annols.analysis.protocol_sections`). Every table and plot of these sections is named with the prefix
``adjudicated_`` (``tables/adjudicated_pairwise_win_tie_loss.csv`` beside ``tables/pairwise_win_tie_loss.csv``),
every section title with "Adjudicated: ". The agreement before and after adjudication is
:func:`annols.analysis.raters.quality_findings.adjudication_section`'s.

The annotator models (:mod:`annols.analysis.raters.models`): gold items (``annols report --gold``) are known labels: the
annotators' judgments on them join the fit (they tell the models how reliable each annotator is), the gold answers
are fixed in Dawid-Skene, each method's accuracy on them is shown, and they stay out of the recomputed tables as
they stay out of every table of the study.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols import analysis
from annols.analysis.by_style import asked, best_worst
from annols.analysis.by_style.by_system import sections as asked_sections
from annols.analysis.naming import natural
from annols.analysis.options import ReportOptions
from annols.analysis.raters import models
from annols.analysis.results import Finding, Table
from annols.analysis.table import GOLD, KEPT, Answer, Study, StudyTable, judgment_rows, kept_mask


def style_sections(table: StudyTable, options: ReportOptions) -> list[Finding]:
    """The style's sections of the judgments table, and its questions analysed by system."""
    study, style = table.study, table.judgments
    judged = None  # read by the spans sections only (a copy of every counted annotation)
    if style.tokens is not None:
        judged = study.kept[["uid", "task_key", "annotator"]].copy()
        judged["system"] = [style.judged_system.get(u, "") for u in judged["uid"]]
        judged = style.judged_copies(judged)
        if style.covered and style.units is not None:
            judged[asked.UNIT] = judged["task_key"].astype(str).map(style.units)
    taken: list[Any] = []  # what the questions' sections read of the table, taken before it is handed over
    out = analysis.style_sections(table.definition, _last_frame(table, options, taken), judged, options,
                                  style.tokens)  # fmt: skip
    if not taken:
        return out
    return out + asked_sections(taken[0], taken[1], table.definition.spec, options, judged, style.tokens)


def _last_frame(table: StudyTable, options: ReportOptions, taken: list[Any] | None = None) -> pd.DataFrame:
    """The judgments frame, and the study table lets its judgments table go when nothing asks for it again (the
    annotator models and the adjudicated tables do): the analyses then hold the only reference and may free it.
    ``taken``: given the rows :mod:`annols.analysis.by_style.asked` reads and the target's spans (None but for spans),
    for a definition it covers."""
    style = table.judgments
    frame = style.frame(table.study)
    if style.units is not None:
        frame = frame.assign(**{best_worst.UNIT: frame["task_key"].astype(str).map(style.units)})
    if taken is not None and style.covered:
        spec = table.definition.spec
        taken += [asked.kept(frame, spec), asked.span_rows(frame, spec) if style.tokens is not None else None]
    if not options.models and not options.adjudicated:
        style.hand_over()
    return frame


def rounds_section(table: StudyTable) -> Finding:
    """The study in rounds (report --rounds): what the record of next-round's rounds decided."""
    from annols.analysis.planning import sequential

    assert table.rounds is not None
    return sequential.section(table.definition, table.judgments.rounds_frame(table.study), table.rounds)


def model_sections(table: StudyTable, options: ReportOptions) -> list[Finding]:
    """The models' section; with gold answers, their items' judgments are fitted with their answers known."""
    gold = table.gold.gold
    study = table.study
    known: dict[str, str] = {}
    if gold:
        study = with_gold(study, set(gold))
        known = known_labels(table, gold)
    judged = study.kept[["uid", "task_key", "annotator"]]
    return models.sections(table.judgments.frame(study), options, tokens=table.judgments.tokens, judged=judged,
                           known=known)  # fmt: skip


GOLD_ANNOTATOR = "gold"


def with_gold(study: Study, keys: set[str]) -> Study:
    """The study with each annotator's latest judgment on a known gold item counted too."""
    annotations = study.annotations.copy()
    on_gold = (annotations["role"] == GOLD) & annotations["task_key"].isin(keys)
    annotations["kept"] = annotations["kept"] | (on_gold & kept_mask(annotations))
    return Study(study.sources, annotations, study.items, study.overlaps, study.source_tasks, study.shared)


def known_labels(table: StudyTable, gold: Mapping[str, Answer]) -> dict[str, str]:
    """unit -> the gold answer's label, units as :func:`annols.analysis.raters.models.answers` names them."""
    rows = []
    for uid, item in enumerate(gold.values(), start=1):
        rows += [[-uid, item.key, GOLD_ANNOTATOR, *row]
                 for row in judgment_rows(table.definition, item.task, item.annotation)]  # fmt: skip
    if not rows:
        return {}
    frame = pd.DataFrame(rows, columns=["uid", "task_key", "annotator", *KEPT])
    judged = frame.drop_duplicates("uid")[["uid", "task_key", "annotator"]]
    answers = models.answers(frame, table.judgments.tokens, judged)
    return dict(zip(answers["unit"].astype(str), answers["label"].astype(str), strict=True))


ADJUDICATED = "adjudicated"  # the annotator annols.study.pull names the verdicts by
PREFIX = "adjudicated_"
TITLE = "Adjudicated: "


def adjudicated_sections(table: StudyTable, options: ReportOptions) -> list[Finding]:
    """The style's sections on the judgments with the verdicts standing for their items (none without verdicts)."""
    definition, style, study, verdict_of = table.definition, table.judgments, table.study, table.adjudication.verdicts
    frame = style.frame(study)
    judged = study.kept[["uid", "task_key", "annotator"]].copy()
    if style.tokens is not None:
        judged["system"] = [style.judged_system.get(u, "") for u in judged["uid"]]
    keys = sorted(set(judged["task_key"]) & set(verdict_of))
    if not keys:
        return []
    rows: list[dict[str, Any]] = []
    verdicts: list[dict[str, Any]] = []
    for n, key in enumerate(keys):
        item = verdict_of[key]
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
    sections = analysis.style_sections(definition, tidy_frame, judged_frame, options, style.tokens)
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
