"""The sections of every question by system, wherever it sits, and of weighted spans' error score: the tables of
:mod:`annols.analysis.by_style.asked`, and the ratings analysis (:mod:`annols.analysis.by_style.ratings`) run on each
numeric question and on the error score, its tables and plots named after the question.

=====================================  ===============================================================
question                               section
=====================================  ===============================================================
numeric (scale, number, slider)        ``Question <name> (<kind>, per ...)``: scores, agreement
choice per candidate                   ``Question <name> (choice, per candidate)``: per system, test
text                                   ``Question <name> (text, per ...)``: judgments answering
spans beside per-candidate scores      ``Scores and spans per system``
spans with ``[[spans.weights]]``       ``Error score``: scores, agreement (and per 100 words)
=====================================  ===============================================================
"""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols.analysis.by_style import asked, ratings
from annols.analysis.options import AnalysisOptions
from annols.analysis.results import Finding, Table
from annols.definition import Aspect, Question

Tokens = dict[str, tuple[np.ndarray, np.ndarray]]


def _rating_spec(q: Question) -> Any:
    """What the ratings analysis reads of a definition, for one numeric question."""
    aspect = Aspect(q.name, q.name)
    if q.kind == "scale":
        return SimpleNamespace(aspects=[aspect], scale="choices", slider=None, answers=q.all_choices)
    return SimpleNamespace(aspects=[aspect], scale="slider", slider=SimpleNamespace(min=q.min, max=q.max), answers=())


def _renamed(sections: list[Finding], prefix: str, title: str) -> list[Finding]:
    """A ratings analysis's sections under the question's name: its own titles and file names."""
    out = []
    for section in sections:
        tables = [replace(t, name=f"{prefix}_{t.name.removeprefix('ratings_')}") for t in section.tables]
        plots = [replace(p, name=f"{prefix}_{p.name.removeprefix('ratings_')}") for p in section.figures]
        out.append(Finding(f"{title}: {section.title.lower()}", section.text, tables, plots, section.summary))
    return out


def numeric_sections(frame: pd.DataFrame, spec: Any, options: AnalysisOptions) -> list[Finding]:
    out = []
    for q in asked.questions_of(spec):
        if q.numeric:
            rows = asked.rating_rows(frame, q.name)
            title = f"Question {q.name} ({q.kind}, per {q.per})"
            found = ratings.sections(rows, _rating_spec(q), options, (rows, [q.name]))
            out += _renamed(found, f"q_{q.name}", title)
    return out


def choice_sections(frame: pd.DataFrame, spec: Any, options: AnalysisOptions | None = None) -> list[Finding]:
    options = options or AnalysisOptions(bootstrap=0)
    out = []
    for n, q in enumerate(asked.questions_of(spec)):
        if q.kind != "choice" or not q.per_candidate:
            continue
        by_system = asked.choice_by_system(frame, q)
        tables = [Table(f"q_{q.name}_by_system", f"{q.name}: answers per system", by_system)]
        text = ["Each code's judgments as a share of the system's judgments that answered the question."]
        if q.multiple:
            text.append("No test of association: several answers may be chosen.")
        else:
            text += ["Test of association between system and answer over items: each item's answer for a "
                     "system is its judgments' most common code (ties: the code listed first), items where "
                     "every system has an answer; Pearson's chi-square statistic, its p-value from "
                     "permutations of the systems within each item (an item's answers are paired, not "
                     "independent samples). Effect size: Cramér's V (0 none, 1 the answer follows the "
                     "system), with a 95% interval that holds at any number of items and can hold 0: the "
                     "least and the largest V allowed by betting intervals of each system's and answer's share, "
                     "Bonferroni over them (wide with few items)."]  # fmt: skip
            found = asked.association(frame, q, options.bootstrap, options.seed, n)
            if not found["test"].iloc[0]:
                text.append(f"No test of association for {q.name}, no Cramér's V and no interval: the items' answers "
                            "use one code, or one system answered.")  # fmt: skip
            tables.append(Table(f"q_{q.name}_association", f"{q.name}: system and answer over items", found))
        out.append(Finding(f"Question {q.name} (choice, per candidate)", text, tables))
    return out


def text_sections(frame: pd.DataFrame, spec: Any) -> list[Finding]:
    out = []
    for q in asked.questions_of(spec):
        if q.kind == "text":
            table = Table(f"q_{q.name}_answered", f"{q.name}: judgments that wrote an answer",
                          asked.text_answers(frame, q))  # fmt: skip
            out.append(
                Finding(
                    f"Question {q.name} (text, per {q.per})",
                    ["The texts themselves are in the pull's <name>.jsonl and results.csv."],
                    [table],
                )
            )
    return out


def span_sections(frame: pd.DataFrame, spans: pd.DataFrame, spec: Any, judged: pd.DataFrame | None,
                  tokens: Tokens | None, options: AnalysisOptions) -> list[Finding]:  # fmt: skip
    """Spans beside the per-candidate scores, and the error score analysed like a rating (with weights)."""
    scored = any(q.numeric and q.per_candidate for q in asked.questions_of(spec))
    weights = getattr(spec, "weights", ())
    if judged is None or not hasattr(spec, "labels_name") or not (weights or scored):
        return []
    scores = asked.error_scores(spans, judged, tokens)
    table = asked.side_by_side(frame, spec, scores, spans)
    text = ("Per system: the candidates judged, the spans marked per candidate (by label), and the mean of each "
            "score asked per candidate" + (" and of the error score." if weights else "."))  # fmt: skip
    out = [Finding("Scores and spans per system", [text], [Table("scores_and_spans", "Scores and spans per system",
                                                                  table)])]  # fmt: skip
    if weights:
        out += error_score_sections(asked.score_frame(scores), options)
    return out


def error_score_sections(rows: pd.DataFrame, options: AnalysisOptions) -> list[Finding]:
    """The error score analysed like a rating: ``rows`` are :func:`annols.analysis.by_style.asked.score_frame`'s."""
    top = max(float(rows["rating"].max()) if len(rows) else 0.0, 1.0)
    shim = SimpleNamespace(aspects=[Aspect(a, a) for a in asked.SCORES], scale="slider",
                           slider=SimpleNamespace(min=0, max=top), answers=())  # fmt: skip
    intro = ["Error score: each judged candidate's sum of its spans' weights (the definition's "
             "[[spans.weights]]: a span no entry matches weighs 0; no span, 0), and per 100 words of its text. "
             "Lower is better. Items (the context shown) are the samples of the tests."]  # fmt: skip
    found = ratings.sections(rows, shim, options, (rows, list(asked.SCORES)))
    return [Finding("Error score", intro), *_renamed(found, "error_score", "Error score")]


def sections(frame: pd.DataFrame | None, spans: pd.DataFrame | None, spec: Any, options: AnalysisOptions,
             judged: pd.DataFrame | None = None, tokens: Tokens | None = None) -> list[Finding]:  # fmt: skip
    """Every section: ``frame`` is :func:`annols.analysis.by_style.asked.kept` of the judgments table, ``spans`` its
    :func:`annols.analysis.by_style.asked.span_rows` (None for a definition it covers nothing of)."""
    if frame is None:
        return []
    out = numeric_sections(frame, spec, options) + choice_sections(frame, spec, options) + text_sections(frame, spec)
    if spans is not None:
        out += span_sections(frame, spans, spec, judged, tokens, options)
    return out
