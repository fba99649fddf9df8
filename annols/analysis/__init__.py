"""Every number a report shows: pure functions from the judgments table to findings, plain data.

The analysis computes and returns data; :mod:`annols.report` arranges and renders it. A
finding (:class:`~annols.analysis.results.Finding`) holds paragraphs, tables (frames of
values) and figures (what to draw, not a drawing); nothing here formats a cell, draws, or
imports :mod:`annols.report`. The statistics are thin wrappers over maintained libraries
(:mod:`~annols.analysis.inference.stats`: scipy, statsmodels, krippendorff; crowd-kit in
:mod:`~annols.analysis.raters.models`); the options they read are
:class:`~annols.analysis.options.AnalysisOptions`.

The input is the tidy table of :func:`annols.styles.judgments.tidy` for the judgments that count
(one per item and annotator), with ``uid`` (the annotation), ``task_key`` (the item) and
``annotator`` joined. Each style has its module; :mod:`~annols.analysis.by_style.questions` covers
every task-level choice question; :mod:`~annols.analysis.raters.agreement` and
:mod:`~annols.analysis.inference.bootstrap` are shared. Nothing here reads files or Label Studio
results. Every test's unit is the item (docs/statistics.md); :mod:`~annols.analysis.inference.item_tests`
has the pairwise one, :mod:`~annols.analysis.planning.simulate` the null studies that check them all.

=========  ================================================================================
style      findings
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

Three shipped protocols have tables of their own before their style's, read from the same
table (:data:`PROTOCOLS`, by the definition's format, each module with ``sections`` and
``RESTATED``): the error types of qa-feedback
(:mod:`~annols.analysis.protocol_tables.qa_feedback`), the flaw counts of summary-flaws
(:mod:`~annols.analysis.protocol_tables.summary_flaws`), the answer table of sentence-errors per variant
(:mod:`~annols.analysis.protocol_tables.sentence_errors`). They stand for the style's sections they restate.
"""

from __future__ import annotations

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols import memory
from annols.analysis.by_style import best_worst, pairwise, questions, ranking, ratings, sentences, spans
from annols.analysis.leaderboard import conclusions, scores
from annols.analysis.options import AnalysisOptions
from annols.analysis.protocol_tables import qa_feedback, sentence_errors, summary_flaws
from annols.analysis.results import Finding
from annols.definition import Definition

STYLES = ("pairwise", "ranking", "ratings", "spans", "sentences", "best-worst")
PROTOCOLS = {"qa-feedback": qa_feedback, "summary-flaws": summary_flaws, "sentence-errors": sentence_errors}


def restated(definition: Definition) -> tuple[str, ...]:
    """Titles of the style's sections that the format's own tables restate, and stand for."""
    module = PROTOCOLS.get(definition.format or "")
    return module.RESTATED if module is not None else ()


def protocol_sections(definition: Definition, tidy: pd.DataFrame, judged: pd.DataFrame | None,
                      tokens: dict[str, tuple[np.ndarray, np.ndarray]] | None = None) -> list[Finding]:  # fmt: skip
    """The tables of the definition's own format (:data:`PROTOCOLS`), none for any other."""
    module = PROTOCOLS.get(definition.format or "")
    return module.sections(definition, tidy, judged, tokens) if module is not None else []


def style_sections(definition: Definition, tidy: pd.DataFrame, judged: pd.DataFrame | None, options: AnalysisOptions,
                   tokens: dict[str, tuple[np.ndarray, np.ndarray]] | None = None) -> list[Finding]:  # fmt: skip
    """The sections of the definition's own format (:func:`protocol_sections`), of its style, then its
    choice questions.

    ``judged`` has every counted annotation (uid, task_key, annotator; optionally the
    system of a spans item), including those without a judgment row: only the spans style
    (and qa-feedback's and summary-flaws' own tables) reads it (None for the others);
    ``tokens`` are the spans target's whitespace tokens per item key, for token-level alpha.
    """
    spec = definition.spec
    style = definition.style
    own = protocol_sections(definition, tidy, judged, tokens)
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
        out = [Finding("Judgments", [f"No analysis for the style {style!r}."])]
    out = [s for s in out if s.title not in restated(definition)]
    out += conclusions.sections(style, tidy, spec, options, rated)
    glance = scores.scores_section(style, out)
    out = scores.bounded(style, ([glance] if glance is not None else []) + out)
    return own + out + questions.sections(tidy, spec)
