"""A span's answers belong to its region (two regions on the same words are two errors), and every per-system
score is the items rule's: each item's mean over its judgments, then the mean over items."""

from __future__ import annotations

import numpy as np
import pandas as pd

from annols import protocols
from annols.analysis import cells
from annols.analysis.by_style import asked, questions
from annols.styles.judgments import TIDY_COLUMNS, Span, tidy
from tests.conftest import ROOT

MQM = ROOT / "examples" / "mqm.toml"


def frame(judged: dict[tuple[str, str, str], list[Span]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The tidy table of (item, system, annotator) -> spans, and the judged candidates (uid, item, ...)."""
    rows, out = [], []
    for uid, ((item, system, annotator), spans) in enumerate(judged.items()):
        out.append((uid, f"{item}|{system}", annotator, system, item))
        rows += [[uid, f"{item}|{system}", annotator, *row, item] for row in tidy(spans)]
    columns = ["uid", "task_key", "annotator", *TIDY_COLUMNS, asked.UNIT]
    return (pd.DataFrame(rows, columns=columns) if rows else pd.DataFrame(columns=columns),
            pd.DataFrame(out, columns=["uid", "task_key", "annotator", "system", asked.UNIT]))  # fmt: skip


def span(label: str, severity: str, region: str, start: int = 4, end: int = 9, system: str = "s1") -> Span:
    return Span("errors", label, start, end, "words", region, system, {"severity": (severity,)})


def test_two_errors_on_the_same_words_score_minor_1_plus_major_5() -> None:
    spec = protocols.load(str(MQM)).spec
    tidy_frame, judged = frame({("seg1", "s1", "r1"): [span("Accuracy", "minor", "r-a"),
                                                      span("Fluency", "major", "r-b")]})  # fmt: skip
    rows = asked.span_rows(tidy_frame, spec)
    assert sorted(rows["weight"]) == [1.0, 5.0]
    scores = asked.error_scores(rows, judged, None)
    assert scores[asked.SCORE].tolist() == [6.0]
    # Per-span answers are counted per region too: two spans answered, not one.
    table = questions.per_span_questions(tidy_frame, spec)[0].tables[0].frame
    assert set(table["spans answered"]) == {2}


def test_the_items_rule_weighs_an_item_once_however_many_judged_it() -> None:
    rng = np.random.default_rng(5)
    units = rng.integers(0, 7, size=40)
    values = rng.normal(size=40)
    independent = pd.DataFrame({"u": units, "v": values}).groupby("u")["v"].mean().mean()
    assert np.isclose(cells.items_mean(units, values), independent)
    assert not np.isclose(cells.items_mean(units, values), values.mean())  # unequal judgments per item differ


def test_error_scores_per_system_are_means_over_items_of_their_raters_mean() -> None:
    spec = protocols.load(str(MQM)).spec
    # s1: item a judged twice (scores 5 and 1: mean 3), item b once (0): items rule 1.5, judgments mean 2.
    study = {("a", "s1", "r1"): [span("Accuracy", "major", "x1", system="s1")],
             ("a", "s1", "r2"): [span("Accuracy", "minor", "x2", system="s1")],
             ("b", "s1", "r1"): [],
             ("a", "s2", "r1"): [span("Style", "minor", "x3", system="s2")],
             ("b", "s2", "r2"): [span("Fluency/Punctuation", "minor", "x4", system="s2")]}  # fmt: skip
    tidy_frame, judged = frame(study)
    rows = asked.span_rows(tidy_frame, spec)
    scores = asked.error_scores(rows, judged, None)
    table = asked.side_by_side(tidy_frame, spec, scores, rows).set_index("system")
    independent = scores.groupby(["system", asked.UNIT])[asked.SCORE].mean().groupby("system").mean()
    assert np.allclose(table[f"mean {asked.SCORE}"], independent.reindex(table.index))
    assert np.allclose(table[f"mean {asked.SCORE}"].tolist(), [1.5, 0.55])
    assert np.allclose(table["spans per candidate"].tolist(), [0.5, 1.0])
