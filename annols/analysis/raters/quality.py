"""Annotator accuracy on items whose judgment is known (gold items, attention checks).

Pure functions of judgments (:mod:`annols.styles.judgments`), so they hold for every style and
for a definition of one's own. A judgment is split into units, each scored 0..1 against
the known judgment:

==========  ==================================  ==============================================
kind        unit (grouped under its aspect)     score
==========  ==================================  ==============================================
preference  aspect                              1 if the same system won, or both tie
rank        dimension x system                  1 if the same rank
rating      aspect x candidate's system         1 if within ``tolerance`` of the known value
answer      question (x system)                 1 if the same codes (text answers: not scored)
row         special case and each column, x row 1 if the same special case / codes
span        labels control                      F1 of (label, start, end[, message]); 1 when both are empty
==========  ==================================  ==============================================

A unit either side holds only one of them counts 0 (a missing answer is a wrong one). An
item's accuracy is the mean of its units; an annotator's the mean over their items (each
item weighs the same), overall and per aspect.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from itertools import combinations
from typing import Any

import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols.styles.judgments import LOSS, TIE, WIN, Answer, Judgment, Preference, Rank, Rating, Row, Span

Unit = tuple[str, tuple[Any, ...]]  # (aspect, what else names the unit)


def _exact(judgments: Iterable[Judgment]) -> tuple[dict[Unit, Any], dict[str, set[tuple[Any, ...]]]]:
    """Exact-match units -> value, and labels control -> the set of spans."""
    values: dict[Unit, Any] = {}
    spans: dict[str, set[tuple[Any, ...]]] = defaultdict(set)
    for j in judgments:
        if isinstance(j, Preference):
            values[(j.aspect, ())] = j.winner_system if j.winner is not None else "tie"
        elif isinstance(j, Rank):
            values[(j.dimension, (j.system,))] = j.rank
        elif isinstance(j, Rating):
            values[(j.aspect, (j.system or j.candidate,))] = j.value
        elif isinstance(j, Answer):
            if j.codes:
                values[(j.question, (j.system,))] = tuple(sorted(j.codes))
        elif isinstance(j, Row):
            values[("special", (j.row,))] = j.special
            for column, codes in j.columns.items():
                if codes:
                    values[(column, (j.row,))] = tuple(sorted(codes))
        elif isinstance(j, Span):
            # a conversation's span: its offsets are in its message, so the message is part of where it is
            where = (str(j.start), str(j.end)) if j.message is None else (str(j.start), str(j.end), j.message)
            spans[j.control].add((j.label, *where))
    return values, spans


def span_f1(known: set[tuple[Any, ...]], given: set[tuple[Any, ...]]) -> float:
    """F1 of exact span matches (label, start, end, and a conversation's message); 1.0 when neither marks a span."""
    if not known and not given:
        return 1.0
    hits = len(known & given)
    return 2 * hits / (len(known) + len(given))


Units = tuple[dict[Unit, Any], dict[str, set[tuple[Any, ...]]]]  # exact-match units -> value; control -> spans


def score_item(known: Sequence[Judgment], given: Sequence[Judgment], tolerance: float = 0.0,
               span_controls: Iterable[str] = ()) -> dict[str, float]:  # fmt: skip
    """Aspect -> mean score of its units, for one annotator's judgment of one item.

    ``span_controls``: labels controls scored even when neither side marked a span there.
    """
    return score_units(_exact(known), _exact(given), tolerance, span_controls)


def score_units(known: Units, given: Units, tolerance: float = 0.0, span_controls: Iterable[str] = ()
                ) -> dict[str, float]:  # fmt: skip
    """:func:`score_item` of two judgments' units (:func:`_exact`, or :func:`row_units` of the judgments table)."""
    (known_values, known_spans), (given_values, given_spans) = known, given
    per_aspect: dict[str, list[float]] = defaultdict(list)
    for unit in sorted(set(known_values) | set(given_values), key=repr):
        a, b = known_values.get(unit), given_values.get(unit)
        if a is None or b is None:
            ok = False
        elif isinstance(a, float) and isinstance(b, float):
            ok = abs(a - b) <= tolerance + 1e-9
        else:
            ok = a == b
        per_aspect[unit[0]].append(1.0 if ok else 0.0)
    for control in sorted({*known_spans, *given_spans, *span_controls}):
        per_aspect[control].append(span_f1(known_spans.get(control, set()), given_spans.get(control, set())))
    return {aspect: sum(scores) / len(scores) for aspect, scores in per_aspect.items()}


def row_units(rows: Iterable[Sequence[Any]]) -> Units:
    """The units of one annotation's rows of the judgments table (:mod:`annols.analysis.table`), each row
    (kind, question, system, opponent, value, row, start, end): what :func:`_exact` makes of its judgments.

    A preference's winner is its system (``win``), its opponent (``loss``) or ``tie``; choices and a sentence
    row's cells are the sorted codes of their rows. Two readings differ from the judgments': a rating per turn
    is a unit per turn (the judgments' unit holds the last turn's), and a span in a conversation's message is at
    its offsets in the conversation's text (the judgments' at those in its message, with the message: either way a
    span in another message at the same offsets is another span)."""
    values: dict[Unit, Any] = {}
    spans: dict[str, set[tuple[Any, ...]]] = defaultdict(set)
    codes: dict[Unit, list[Any]] = defaultdict(list)
    for kind, question, system, opponent, value, row, start, end in rows:
        if kind == "preference":
            values[(question, ())] = system if value == WIN else opponent if value == LOSS else TIE
        elif kind == "rank":
            values[(question, (system,))] = value
        elif kind == "rating":
            values[(question, (system,) if row == "" else (system, row))] = value
        elif kind == "choice":
            codes[(question, (system,))].append(value)
        elif kind == "row":
            values[("special", (row,))] = value
        elif kind == "cell":
            codes[(question, (row,))].append(value)
        elif kind == "span":
            spans[question].add((value, str(start), str(end)))
    values.update({unit: tuple(sorted(found)) for unit, found in codes.items()})
    return values, spans


UNIT_KINDS = ("preference", "rank", "rating", "choice", "row", "cell", "span")  # the kinds row_units reads


def disagree(units: Sequence[Units], tolerance: float = 0.0, min_span_f1: float = 1.0,
             span_controls: Sequence[str] = ()) -> bool:  # fmt: skip
    """Whether any two annotators' units of one item disagree: a unit's score under 1 (ratings: further apart
    than ``tolerance``), a spans control's F1 under ``min_span_f1``."""
    for a, b in combinations(units, 2):
        for aspect, score in score_units(a, b, tolerance, span_controls).items():
            if score < (min_span_f1 if aspect in span_controls else 1.0) - 1e-9:
                return True
    return False


OVERALL = "all"


def accuracy_table(scores: pd.DataFrame, minimum: float | None = None) -> pd.DataFrame:
    """One row per annotator from item scores (columns annotator, task_key, aspect, score).

    Columns: annotator, gold items, accuracy (mean of each item's mean over its aspects),
    ``accuracy <aspect>`` when there are several aspects, and ``flagged`` (accuracy under
    ``minimum``) when a minimum is given.
    """
    if not len(scores):
        columns = ["annotator", "gold items", "accuracy"] + (["flagged"] if minimum is not None else [])
        return pd.DataFrame({c: [] for c in columns})
    item = scores.groupby(["annotator", "task_key"])["score"].mean().reset_index()
    table = item.groupby("annotator").agg(**{"gold items": ("task_key", "nunique"), "accuracy": ("score", "mean")})
    aspects = sorted(scores["aspect"].unique())
    if len(aspects) > 1:
        for aspect in aspects:
            part = scores[scores["aspect"] == aspect]
            table[f"accuracy {aspect}"] = part.groupby("annotator")["score"].mean()
    table = table.reset_index()
    if minimum is not None:
        table["flagged"] = table["accuracy"] < minimum
    return table


def adjudication_agreement(items: Iterable[tuple[str, Sequence[Judgment], Mapping[str, Sequence[Judgment]]]],
                           tolerance: float = 0.0, controls: Sequence[str] = ()) -> pd.DataFrame:  # fmt: skip
    """Each annotator's agreement on adjudicated items, with the others before and with the verdict after.

    ``items``: (item key, the verdict, annotator -> their judgment), in the order the rows are made.
    Agreement is the mean unit score of :func:`score_item` (1 when nothing is scored): before, the mean
    over the item's other annotators; after, against the verdict; each averaged over the annotator's items.
    """
    rows = []
    for key, verdict, per_annotator in items:
        for annotator, mine in sorted(per_annotator.items()):
            others = [j for a, j in per_annotator.items() if a != annotator]
            before = [_mean(score_item(j, mine, tolerance, controls)) for j in others]
            after = _mean(score_item(verdict, mine, tolerance, controls))
            rows.append((annotator, key, sum(before) / len(before) if before else float("nan"), after))
    frame = pd.DataFrame(rows, columns=["annotator", "task_key", "before", "after"])
    return frame.groupby("annotator").agg(
        **{"items adjudicated": ("task_key", "nunique"), "agreement with the others (before)": ("before", "mean"),
           "agreement with the verdict (after)": ("after", "mean")}
    ).reset_index()  # fmt: skip


def _mean(scores: dict[str, float]) -> float:
    return sum(scores.values()) / len(scores) if scores else 1.0
