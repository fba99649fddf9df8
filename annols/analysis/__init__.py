"""The report's statistics: pure functions from the judgments table to report sections.

The input is the tidy table of :func:`annols.styles.judgments.tidy` for the judgments that count
(one per item and annotator), with ``uid`` (the annotation), ``task_key`` (the item) and
``annotator`` joined. Each style has its module; :mod:`~annols.analysis.questions` covers
every task-level choice question; :mod:`~annols.analysis.agreement` and
:mod:`~annols.analysis.bootstrap` are shared. Nothing here reads files or Label Studio
results. Every test's unit is the item (docs/statistics.md); :mod:`~annols.analysis.item_tests`
has the pairwise one, :mod:`~annols.analysis.simulate` the null studies that check them all.

=========  ================================================================================
style      sections
=========  ================================================================================
pairwise   win / tie / loss (all judgments, majority, per annotator, bootstrap intervals),
           sign test over items with Holm, agreement (Fleiss, Krippendorff, Cohen), Bradley-Terry
ranking    mean rank and rank shares, mean-rank intervals, win rates from ranks,
           agreement (Kendall's W, ordinal alpha)
ratings    mean and median with intervals, mean z-score, distribution (plot), Wilcoxon
           signed-rank between systems with Holm, agreement (Fleiss, alpha)
spans      spans per label and system, agreement (exact and overlap F1, token alpha)
sentences  distribution per column, agreement per column (Fleiss, alpha)
best-worst counting scores (% best - % worst) with intervals (plot), Bradley-Terry strengths,
           Wilcoxon signed-rank over items (pools) between candidates with Holm, effect sizes and
           intervals, split-half reliability
=========  ================================================================================
"""

from __future__ import annotations

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols import memory
from annols.analysis import best_worst, conclusions, pairwise, questions, ranking, ratings, scores, sentences, spans
from annols.definition import Definition
from annols.report.common import ReportOptions
from annols.report.model import Section

STYLES = ("pairwise", "ranking", "ratings", "spans", "sentences", "best-worst")


def style_sections(definition: Definition, tidy: pd.DataFrame, judged: pd.DataFrame | None, options: ReportOptions,
                   tokens: dict[str, tuple[np.ndarray, np.ndarray]] | None = None) -> list[Section]:  # fmt: skip
    """The sections of a definition's style, then its choice questions.

    ``judged`` has every counted annotation (uid, task_key, annotator; optionally the
    system of a spans item), including those without a judgment row: only the spans style
    reads it (None for the others); ``tokens`` are the spans target's whitespace tokens per
    item key, for token-level alpha.
    """
    spec = definition.spec
    style = definition.style
    rated = None
    if style == "ratings":
        rated = ratings.rows(tidy, spec)  # made once, read by the ratings tables, detectable and reliability
        # What is read after this is the rating rows and the question rows: with the collector's copy
        # released, the rest of the judgments table (about 100 MB at 100,000 tasks) is freed here.
        tidy = questions.asked(tidy)
        memory.release()  # what that table's making and the table itself left free in the heap
    if style == "pairwise":
        out = pairwise.sections(tidy, spec, options)
    elif style == "ranking":
        out = ranking.sections(tidy, spec, options)
    elif style == "ratings":
        out = ratings.sections(tidy, spec, options, rated)
    elif style == "spans":
        if judged is None:
            raise ValueError("the spans sections need the counted annotations (judged)")
        out = spans.sections(tidy, spec, judged, tokens)
    elif style == "sentences":
        out = sentences.sections(tidy, spec)
    elif style == "best-worst":
        out = best_worst.sections(tidy, spec, options)
    else:
        out = [Section("Judgments", [f"No analysis for the style {style!r}."])]
    out += conclusions.sections(style, tidy, spec, options, rated)
    glance = scores.scores_section(style, out)
    out = scores.bounded(style, ([glance] if glance is not None else []) + out)
    return out + questions.sections(tidy, spec)
