"""The association test of a choice question asked per candidate (:func:`annols.analysis.by_style.asked.association`):
its statistic is Pearson's chi-square, and its p-value, from permuting the systems within each item, keeps its
level on null studies whose items' answers are paired; the chi-square test of independence does not."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]
from scipy import stats

from annols.analysis.by_style import asked

LEVEL = 0.05
QUESTION = SimpleNamespace(name="usable", all_choices=[SimpleNamespace(code="yes"), SimpleNamespace(code="no")])


def study(rng: np.random.Generator, items: int, answers_of_item: list[str], flip: float = 0.1) -> pd.DataFrame:
    """A null study: each item's true answers are ``answers_of_item`` dealt to the systems at random (so which
    system gets which answer does not depend on the system), each of three annotators flipping one with
    probability ``flip``."""
    systems = [f"s{i}" for i in range(len(answers_of_item))]
    rows = []
    for item in range(items):
        dealt = rng.permutation(answers_of_item)
        for system, truth in zip(systems, dealt, strict=True):
            for annotator in range(3):
                value = truth if rng.random() > flip else ("no" if truth == "yes" else "yes")
                rows.append(("choice", "usable", f"item-{item}", system, annotator, value))
    return pd.DataFrame(rows, columns=["kind", "question", asked.UNIT, "system", "annotator", "value"])


def independence_p(frame: pd.DataFrame) -> float:
    """The test the report printed before: chi-square of independence over the items' answers, as if each system's
    answers were a separate sample."""
    answers = asked.item_answers(frame, QUESTION)
    return float(stats.chi2_contingency(pd.crosstab(answers["system"], answers["value"]).to_numpy())[1])


def rates(answers_of_item: list[str], studies: int, seed: int) -> tuple[float, float, int]:
    rng = np.random.default_rng(seed)
    permuted = independent = 0
    for n in range(studies):
        frame = study(rng, 40, answers_of_item)
        permuted += float(asked.association(frame, QUESTION, seed=n)["p (test)"].iloc[0]) < LEVEL
        independent += independence_p(frame) < LEVEL
    return permuted / studies, independent / studies, studies


def not_above_level(rate: float, studies: int) -> bool:
    """A one-sided exact binomial test of rate > LEVEL at 0.001 does not reject."""
    return bool(stats.binomtest(round(rate * studies), studies, LEVEL, alternative="greater").pvalue >= 0.001)


def test_the_statistic_is_pearsons_chi_square() -> None:
    frame = study(np.random.default_rng(1), 30, ["yes", "no", "no"])
    answers = asked.item_answers(frame, QUESTION)
    table = pd.crosstab(answers["system"], answers["value"]).to_numpy()
    row = asked.association(frame, QUESTION).iloc[0]
    assert row["statistic"] == stats.chi2_contingency(table, correction=False)[0]
    assert row["test"] == "chi-square, systems permuted within items"
    assert int(row["item answers"]) == 90


def test_one_flagged_candidate_of_two_keeps_the_level_where_independence_fails() -> None:
    """A guideline that flags one candidate of two makes an item's answers negatively related: the systems'
    shares of "yes" move against each other, and the test of independence, which takes them for separate samples,
    rejects about four times too often. Permuting within items keeps the level."""
    permuted, independent, studies = rates(["yes", "no"], 300, 2026)
    assert not_above_level(permuted, studies), permuted
    assert not not_above_level(independent, studies), independent
    assert independent > 2 * LEVEL, independent


def test_three_systems_with_exchangeable_answers_keep_the_level() -> None:
    permuted, _, studies = rates(["yes", "no", "no"], 200, 2027)
    assert not_above_level(permuted, studies), permuted
