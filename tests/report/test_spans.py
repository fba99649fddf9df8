"""Span agreement on a tiny hand-made fixture: overlapping spans, a span past the end, identical spans."""

from __future__ import annotations

import pandas as pd
import pytest

from annols.analysis.raters.span_agreement import SpanRows, _token_labels, agreement_table
from tests.report import formulas

TEXT = "a bb ccc dddd"  # tokens: a 0-1, bb 2-4, ccc 5-8, dddd 9-13


def fixture() -> tuple[SpanRows, pd.DataFrame]:
    rows = SpanRows(labels=("X", "Y"))
    # Annotation 1 (ann1): X over "a bb", Y over "bb ccc" (overlapping: X starts first, so "bb" is X).
    rows.add(1, "t1", TEXT, [("Y", 2, 8), ("X", 0, 4)])
    # Annotation 2 (ann2): Y from "ccc" to past the end of the text; X exactly as ann1.
    rows.add(2, "t1", TEXT, [("Y", 5, 100), ("X", 0, 4)])
    # Annotation 3 (ann3) on another item, alone: not pairable, never counted.
    rows.add(3, "t2", "zz", [("X", 0, 2)])
    kept = pd.DataFrame({"uid": [1, 2, 3], "task_key": ["t1", "t1", "t2"], "annotator": ["ann1", "ann2", "ann3"]})
    return rows, kept


def test_token_labels_first_span_wins_and_text_end_is_respected() -> None:
    rows, kept = fixture()
    spans = pd.DataFrame(rows.spans, columns=["uid", "task_key", "label", "start", "end"])
    counts = _token_labels(rows, kept, spans, {"X": 1, "Y": 2})
    # Columns none, X, Y. ann1: a=X, bb=X, ccc=Y, dddd=none. ann2: a=X, bb=X, ccc=Y, dddd=Y.
    assert counts.tolist() == [[0, 2, 0], [0, 2, 0], [0, 0, 2], [1, 0, 1]]


def test_agreement_by_hand() -> None:
    rows, kept = fixture()
    table = agreement_table("t", rows, kept).frame.set_index("label")
    # One pair (ann1, ann2). X: (0,4) on both sides: 1 exact match of 2 spans -> F1 1.
    assert table.loc["X", "exact matches"] == 1 and table.loc["X", "exact F1"] == pytest.approx(1.0)
    # Y: (2,8) vs (5,100): no exact match, but they overlap -> overlap F1 1.
    assert table.loc["Y", "exact F1"] == pytest.approx(0.0) and table.loc["Y", "overlap F1"] == pytest.approx(1.0)
    # All labels: 4 spans, 1 match -> 2 * 1 / 4.
    assert table.loc["all labels", "spans"] == 4 and table.loc["all labels", "exact F1"] == pytest.approx(0.5)
    units = [["X", "X"], ["X", "X"], ["Y", "Y"], ["none", "Y"]]
    assert table.loc["all labels", "token alpha"] == pytest.approx(formulas.krippendorff_alpha(units))
    y_units = [[str(v == "Y") for v in u] for u in units]
    assert table.loc["Y", "token alpha"] == pytest.approx(formulas.krippendorff_alpha(y_units))
    assert int(table.loc["X", "token units"]) == 4 and int(table.loc["X", "annotator pairs"]) == 1
    assert table.loc["X", "token alpha"] == pytest.approx(1.0)  # X and not-X agree on every token
