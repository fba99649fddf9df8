"""Sentences: the distribution of each column's answers over sentence rows, and agreement per column.

Reads the ``row`` and ``cell`` rows of the judgments table (:func:`annols.styles.judgments.tidy`).
A sentence row of one judgment falls in exactly one answer of each column: the special
case chosen or "(no special case)"; for the other columns their code, "(special case)"
where a special case hid them, or "(unanswered)". Two codes in one column (a rule
violation) count as their joined text.

Agreement per column, a unit being one sentence row of an item: Krippendorff's alpha
(nominal) and Fleiss' kappa over the units with the most common number of judgments. The
special-case column counts "(no special case)" as a value; the other columns count only
rows without a special case, and unanswered cells not at all.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols.analysis.raters import agreement
from annols.analysis.results import Finding, Panel, Table, percent, stacked_bars

NO_SPECIAL = "(no special case)"
HIDDEN = "(special case)"
UNANSWERED = "(unanswered)"
KEYS = ["uid", "task_key", "annotator", "row"]


def rows_frame(tidy: pd.DataFrame, spec: Any) -> pd.DataFrame:
    """One line per judgment and sentence row: KEYS, then the special case and each column's answer."""
    columns = [q.name for q in spec.columns]
    frame = tidy[tidy["kind"] == "row"][[*KEYS, "value"]].rename(columns={"value": spec.special.name})
    cells = tidy[(tidy["kind"] == "cell") & tidy["question"].isin(columns)][["uid", "row", "question", "value"]]
    cells = cells.astype({"value": str}).sort_values(["uid", "row", "question", "value"], kind="stable")
    at = ["uid", "row", "question"]
    several = cells.duplicated(at, keep=False)  # a violation: joined, the rare case, by a slower path
    joined = cells[several].groupby(at)["value"].agg(" + ".join).reset_index()
    answers = pd.concat([cells[~several], joined], ignore_index=True)
    for column in columns:
        mine = answers[answers["question"] == column][["uid", "row", "value"]].rename(columns={"value": column})
        frame = frame.merge(mine, on=["uid", "row"], how="left")
    chosen = frame[spec.special.name].fillna("").astype(str)
    for c in columns:
        frame[c] = np.where(chosen != "", HIDDEN, frame[c].fillna(UNANSWERED))
    frame[spec.special.name] = chosen.where(chosen != "", NO_SPECIAL)
    return frame.sort_values(["task_key", "row", "annotator"], kind="stable").reset_index(drop=True)


def sections(tidy: pd.DataFrame, spec: Any) -> list[Finding]:
    frame = rows_frame(tidy, spec)
    judged = [spec.special.name, *(q.name for q in spec.columns)]
    if not len(frame):
        return [Finding("Answers", ["No sentence rows to count."]),
                Finding("Agreement per column", [f"No agreement statistics: {agreement.NOTHING}."])]  # fmt: skip
    table = distribution(frame, judged)
    panels = [Panel(str(c), list(p["answer"]), [list(p["rows %"])])
              for c, p in table.frame.groupby("column", sort=False)]  # fmt: skip
    plot = stacked_bars("sentences_distribution", "Answers per column", panels, ["rows %"])
    text = [f"{len(frame)} sentence rows judged ({frame['uid'].nunique()} judgments); each column sums to 100%."]
    out = [Finding("Answers", text, [table], [plot])]
    return [*out, agreement_section(frame, spec, judged)]


def distribution(frame: pd.DataFrame, judged: list[str]) -> Table:
    parts = []
    for column in judged:
        counts = frame.groupby(column).size().rename("rows").reset_index().rename(columns={column: "answer"})
        counts.insert(0, "column", column)
        parts.append(counts.sort_values(["rows", "answer"], ascending=[False, True], kind="stable"))
    table = pd.concat(parts, ignore_index=True)
    table["rows %"] = percent(table["rows"], len(frame))
    return Table("sentences_distribution", "Answers per column, over sentence rows", table)


EACH_TEXT = ("Each annotator against the others: the same units and answers per column, each answer of the annotator "
             "paired with each other annotator's on the same sentence row; agreement % of equal pairs, Cohen's kappa "
             "and nominal Krippendorff's alpha over those pairs.")  # fmt: skip


def each_annotator(frame: pd.DataFrame, columns: list[str], special: str, row: str, name: str) -> Table:
    """Per column and annotator, each answer against the other annotators' on the same sentence row of an item
    (:func:`annols.analysis.raters.agreement.each_against_the_rest`, nominal); the special-case column counts every row,
    the others only rows without a special case and with an answer, as the group table does. ``frame``: one line
    per judgment and sentence row with task_key, annotator, ``row`` and the columns' answers."""
    each = []
    for column in columns:
        part = frame if column == special else frame[~frame[column].isin([HIDDEN, UNANSWERED])]
        units = part["task_key"].astype(str) + "|" + part[row].astype(str)
        answers = pd.DataFrame({"unit": units, "annotator": part["annotator"], "value": part[column].astype(str)})
        each += [[column, *r] for r in agreement.each_against_the_rest(answers, "nominal")]
    return Table(name, "Each annotator against the others, per column",
                 pd.DataFrame(each, columns=["column", *agreement.EACH_COLUMNS]))  # fmt: skip


def agreement_section(frame: pd.DataFrame, spec: Any, judged: list[str]) -> Finding:
    rows, all_counts = [], []
    for column in judged:
        part = frame if column == spec.special.name else frame[~frame[column].isin([HIDDEN, UNANSWERED])]
        values = sorted(set(part[column]))
        counts = agreement.unit_counts(part, ["task_key", "row"], column, values)
        pairable = counts[counts.sum(axis=1) >= 2] if len(counts) else counts
        m = pairable.sum(axis=1)
        observed = percent((pairable * (pairable - 1)).sum(), (m * (m - 1)).sum())
        all_counts.append(counts)
        rows.append([column, float(observed), *agreement.fleiss_and_alpha(counts)])
    shared = agreement.shared_reason(all_counts)
    if shared:
        return Finding("Agreement per column", [f"No agreement statistics: {shared}."])
    reasons = agreement.reasons(judged, all_counts)
    text = ["Units are sentence rows of an item. The special-case column counts '(no special case)' as a value; "
            "the other columns count only rows without a special case, and unanswered cells not at all. Observed "
            "agreement: the share of agreeing pairs of annotators."]  # fmt: skip
    table = agreement.table_frame(rows, ["column", "observed agreement %"])
    per_annotator = each_annotator(frame, judged, spec.special.name, "row", "sentences_agreement_annotators")
    text.append(EACH_TEXT)
    return Finding("Agreement per column", text + reasons, [Table("sentences_agreement", "Agreement per column",
                                                                    table), per_annotator])  # fmt: skip
