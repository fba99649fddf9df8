"""Spans: how many spans of each label per system, and agreement between annotators on spans.

Reads the ``span`` rows of the judgments table (:func:`annols.styles.judgments.tidy`) of the
target's labels control (spans in context panes are not counted here).

- Counts per label and system: spans, and the judgments with at least one span of the
  label (as a share of the system's judgments). A judgment is one annotation of one item.
- Agreement (:mod:`annols.analysis.raters.span_agreement`): exact and overlap F1 over every pair
  of annotators of an item, and token-level Krippendorff's alpha when the item's texts
  were kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols.analysis.naming import natural
from annols.analysis.raters import agreement as agreement_lib
from annols.analysis.raters import span_agreement
from annols.analysis.raters.agreement import NOTHING, ONE_ANNOTATOR
from annols.analysis.results import Finding, Table, bars, percent

ALL_SYSTEMS = "(all)"


def judgments(frame: pd.DataFrame, spec: Any) -> pd.DataFrame:
    """The target's spans as (uid, task_key, annotator, system, label, start, end)."""
    labels = [lab.value for lab in spec.labels]
    part = frame[(frame["kind"] == "span") & (frame["question"] == spec.labels_name)]
    part = part.rename(columns={"value": "label"})[["uid", "task_key", "annotator", "system", "label", "start", "end"]]
    part = part[part["label"].isin(labels)].copy()
    part["start"] = pd.to_numeric(part["start"], errors="coerce")
    part["end"] = pd.to_numeric(part["end"], errors="coerce")
    return part[part["start"].notna() & part["end"].notna()].astype({"start": "int64", "end": "int64"})


def system_of(tidy: pd.DataFrame, judged: pd.DataFrame) -> pd.Series:
    """Each judgment's system: ``judged["system"]`` when given, else its judgments' ("" where none is named)."""
    if "system" in judged:
        return judged["system"].fillna("").astype(str)
    named = tidy.drop_duplicates("uid").set_index("uid")["system"]
    return judged["uid"].map(named).fillna("").astype(str)


def sections(tidy: pd.DataFrame, spec: Any, judged: pd.DataFrame,
             tokens: dict[str, tuple[np.ndarray, np.ndarray]] | None = None) -> list[Finding]:  # fmt: skip
    """``judged``: every counted annotation (uid, task_key, annotator, optional system), spans or not;
    ``tokens``: each item's whitespace tokens (starts, ends) by key, for token alpha."""
    spans = judgments(tidy, spec)
    labels = [lab.value for lab in spec.labels]
    judged = judged.assign(system=system_of(tidy, judged))
    table = counts(spans, judged, labels)
    text = [f"{len(spans)} spans in {len(judged)} judgments. 'judgments %' is the share of the system's "
            "judgments with at least one span of the label."]  # fmt: skip
    overall = table.frame[table.frame["system"] == ALL_SYSTEMS]
    plot = bars("spans_labels", "Spans per label", list(overall["label"]), list(overall["spans"]), "spans")
    out = [Finding("Spans", text, [table], [plot])]
    # Agreement counts each judgment once: not its copies credited to the other systems of a shared task.
    if agreement_lib.COPY in judged.columns:
        copies = judged.loc[judged[agreement_lib.COPY].to_numpy(dtype=bool), "uid"]
        spans = spans[~spans["uid"].isin(copies)]
        judged = agreement_lib.once(judged)
    if not (judged.groupby("task_key")["uid"].size() >= 2).any():
        reason = ONE_ANNOTATOR if len(judged) else NOTHING
        return [*out, Finding("Span agreement", [f"No agreement statistics: {reason}."])]
    rows = span_agreement.SpanRows(labels=labels, tokens=dict(tokens or {}))
    rows.spans = list(spans[["uid", "task_key", "label", "start", "end"]].itertuples(index=False, name=None))
    agreement = span_agreement.agreement_table("spans_agreement", rows, judged)
    note = [span_agreement.AGREEMENT_NOTE]
    if tokens is None:
        agreement = Table(agreement.name, agreement.title, agreement.frame.drop(columns=["token alpha", "token units"]))
        note.append("Token alpha needs the items' texts, which were not given.")
    each = each_annotator(spans, judged, labels, "spans_agreement_annotators")
    note.append(EACH_NOTE)
    return [*out, Finding("Span agreement", note, [agreement, each])]


EACH_NOTE = ("Each annotator against the others: a unit is one candidate (an item's output), its value the spans the "
             "annotator marked on it (0 for none), per label and for all labels; the annotator's count is paired with "
             "each other annotator's on the same candidate. Agreement % is the share of equal counts, Cohen's kappa "
             "is quadratic-weighted, Krippendorff's alpha is interval (counts are numbers), and Spearman's rho is "
             "between the annotator's count and the others' mean count per candidate.")  # fmt: skip


def each_annotator(spans: pd.DataFrame, judged: pd.DataFrame, labels: Sequence[str], name: str) -> Table:
    """Per label (and all labels) and annotator: the annotator's span count per candidate against the others'
    (:func:`annols.analysis.raters.agreement.each_against_the_rest` at the interval level); ``judged`` has every counted
    annotation, so a candidate without spans counts 0."""
    base = judged[["uid", "task_key", "annotator"]].rename(columns={"task_key": "unit"})
    rows = []
    for label in [span_agreement.ALL, *labels]:
        mine = spans if label == span_agreement.ALL else spans[spans["label"] == label]
        counts = base["uid"].map(mine.groupby("uid").size()).fillna(0).astype(float)
        rows += [[label, *r] for r in agreement_lib.each_against_the_rest(base.assign(value=counts), "interval")]
    frame = pd.DataFrame(rows, columns=["label", *agreement_lib.EACH_COLUMNS])
    return Table(name, "Each annotator against the others: spans per candidate", frame)


def counts(spans: pd.DataFrame, judged: pd.DataFrame, labels: list[str]) -> Table:
    rows = []
    systems = natural(judged["system"])
    groups = [(ALL_SYSTEMS, judged)] + ([(s, judged[judged["system"] == s]) for s in systems] if systems != [""]
                                        else [])  # fmt: skip
    for system, mine in groups:
        part = spans[spans["uid"].isin(mine["uid"])]
        for label in labels:
            of = part[part["label"] == label]
            rows.append((label, system, len(of), of["uid"].nunique(), len(mine)))
    table = pd.DataFrame(rows, columns=["label", "system", "spans", "judgments with it", "judgments"])
    table["judgments %"] = percent(table["judgments with it"], table["judgments"])
    return Table("spans_counts", "Spans per label and system", table)
