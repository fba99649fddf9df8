"""Every task-level choice question of a definition: its distribution and agreement.

Reads the ``choice`` rows of the judgments table (:func:`annols.styles.judgments.tidy`), one per
code chosen. A unit is one item (and system, where the task names one).

- Distribution: per code, the judgments that chose it, as a share of the judgments that
  answered the question.
- Per-span choice questions (spans): the distribution over the spans answered; no
  agreement, as its units, the spans, differ between annotators.
- Agreement, for single-choice questions: Fleiss' kappa over the units with the most
  common number of answers, and Krippendorff's alpha, ordinal when every code of the
  question is a number (the codes in numeric order), nominal otherwise. A
  multiple-choice question has no single value per judgment, so no agreement.
"""

from __future__ import annotations

from typing import Any

import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols.analysis.raters import agreement
from annols.analysis.results import Finding, Table, percent


def numeric(code: str) -> float | None:
    try:
        return float(code)
    except ValueError:
        return None


def choice_questions(spec: Any) -> list[Any]:
    """The choice questions asked once per task (per candidate: :mod:`annols.analysis.by_style.asked`)."""
    return [q for q in getattr(spec, "questions", ()) if q.kind == "choice" and not q.per_candidate]


def span_questions(spec: Any) -> list[Any]:
    """The choice questions asked per span, once each (labels of the target and of context panes)."""
    labels = [*getattr(spec, "labels", ()), *(lab for p in getattr(spec, "context", ()) for lab in p.labels)]
    found = {lab.question.name: lab.question for lab in labels if lab.question and lab.question.kind == "choice"}
    found.update({q.name: q for q in getattr(spec, "span_questions", ()) if q.kind == "choice"})
    return list(found.values())


def codes_of(question: Any, seen: pd.Series) -> list[str]:
    """The question's codes in its own order, then any other code seen (choices read from task data)."""
    declared = [str(c.code) for c in question.all_choices]
    return declared + sorted(set(map(str, seen)) - set(declared))


KINDS = ("choice", "span-answer")  # the rows of the judgments table the questions read


def asked(tidy: pd.DataFrame) -> pd.DataFrame:
    """The rows :func:`sections` reads (:data:`KINDS`): a style's analyses that have made their own rows may
    let the rest of the judgments table go."""
    return tidy[tidy["kind"].isin(KINDS).to_numpy()]


def sections(tidy: pd.DataFrame, spec: Any) -> list[Finding]:
    return task_questions(tidy, spec) + per_span_questions(tidy, spec)


def per_span_questions(tidy: pd.DataFrame, spec: Any) -> list[Finding]:
    questions = span_questions(spec)
    if not questions:
        return []
    answers = tidy[tidy["kind"] == "span-answer"]
    rows = []
    for q in questions:
        part = answers[answers["question"] == q.name].assign(value=lambda f: f["value"].astype(str))
        answered = len(part.drop_duplicates(["uid", "region"]))  # a span is its region, not its offsets
        chosen = part.groupby("value").size().reindex(codes_of(q, part["value"])).fillna(0).astype(int)
        rows += [(q.name, code, int(n), answered) for code, n in chosen.items()]
    table = pd.DataFrame(rows, columns=["question", "answer", "spans", "spans answered"])
    table["spans %"] = percent(table["spans"], table["spans answered"])
    text = ["Questions asked per span: each code's spans as a share of the spans that answered the question. "
            "No agreement statistic: the units, spans, differ between annotators."]  # fmt: skip
    return [Finding("Per-span questions", text, [Table("span_questions_distribution", "Answers per span", table)])]


def task_questions(tidy: pd.DataFrame, spec: Any) -> list[Finding]:
    questions = choice_questions(spec)
    if not questions:
        return []
    answers = tidy[tidy["kind"] == "choice"]
    dist, rows, counts, notes, each = [], [], [], [], []
    interval: dict[str, float] = {}
    for q in questions:
        part = answers[answers["question"] == q.name].assign(value=lambda f: f["value"].astype(str))
        codes = codes_of(q, part["value"])
        answered = part["uid"].nunique()
        chosen = part.groupby("value").size().reindex(codes).fillna(0).astype(int)
        dist += [(q.name, code, int(n), answered) for code, n in chosen.items()]
        if q.multiple:
            notes.append(f"{q.name}: no agreement statistic, several answers may be chosen.")
            continue
        values = [float(c) for c in codes] if all(numeric(c) is not None for c in codes) else None
        order = [c for _, c in sorted(zip(values, codes, strict=True))] if values else codes
        level = "ordinal" if values else "nominal"
        c = agreement.unit_counts(part, ["task_key", "system"], "value", order)
        counts.append((q.name, c))
        rows.append([q.name, level, *agreement.fleiss_and_alpha(c, level, sorted(values) if values else None)])
        given = pd.DataFrame({"unit": part["task_key"].astype(str) + "|" + part["system"].astype(str),
                                "annotator": part["annotator"].astype(str),
                                "value": part["value"].astype(float) if values else part["value"]})  # fmt: skip
        if values:  # numbers: interval alpha beside the ordinal
            unit, _ = pd.factorize(given["unit"])
            interval[q.name] = agreement.interval_alpha(unit, given["value"].to_numpy(dtype=float))
        each += [[q.name, *r] for r in agreement.each_against_the_rest(given, level)]
    table = pd.DataFrame(dist, columns=["question", "answer", "judgments", "answered"])
    table["judgments %"] = percent(table["judgments"], table["answered"])
    text = ["Each code's judgments as a share of the judgments that answered the question. Agreement: a unit is "
            "one item (and system); Krippendorff's alpha is ordinal when every code of the question is a number "
            "(with interval alpha beside it, the codes' values as numbers), nominal otherwise; Fleiss' kappa over "
            "the units with the most common number of answers."]  # fmt: skip
    notes += agreement.reasons([n for n, _ in counts], [c for _, c in counts])
    tables = [Table("questions_distribution", "Answers per question", table)]
    if rows:  # undefined cells stay empty; the notes say why
        frame = agreement.table_frame(rows, ["question", "level"])
        if interval:
            frame.insert(frame.columns.get_loc("Krippendorff alpha") + 1, "Krippendorff alpha (interval)",
                         frame["question"].map(interval).astype(float))  # fmt: skip
        tables.append(Table("questions_agreement", "Agreement per question", frame))
        tables.append(Table("questions_agreement_annotators", "Each annotator against the others, per question",
                            pd.DataFrame(each, columns=["question", *agreement.EACH_COLUMNS]),
                            agreement.EACH_NOTE))  # fmt: skip
    return [Finding("Questions", text + notes, tables)]
