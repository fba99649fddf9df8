"""Pairwise analysis on a planted study: every number against a count or formula of the test's own."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import pytest

from annols.analysis.inference import intervals
from annols.styles.judgments import Preference
from tests.analysis import independent, planted
from tests.analysis.run import OPTIONS, analyse
from tests.report import formulas

ASPECTS = ("helpful", "safe")  # the tables name an aspect by its name


@pytest.fixture(scope="module")
def study() -> planted.Study:
    return planted.pairwise()


def outcomes(study: planted.Study) -> list[tuple[int, str, str, str, str, str]]:
    """(item, annotator, aspect name, system, opponent, win/tie/loss of system), pairs in name order."""
    out = []
    for (item, annotator), judged in study.items():
        for j in judged:
            if isinstance(j, Preference):
                system, opponent = sorted(j.systems)
                winner = None if j.winner is None else j.systems[j.winner]
                result = "tie" if winner is None else "win" if winner == system else "loss"
                out.append((item, annotator, j.aspect, system, opponent, result))
    return out


def test_win_tie_loss_and_majority(study: planted.Study) -> None:
    result = analyse(planted.PAIRWISE, study)
    groups: dict[tuple[str, str, str], list[tuple[int, str]]] = {}
    for item, _, aspect, system, opponent, outcome in outcomes(study):
        groups.setdefault((aspect, system, opponent), []).append((item, outcome))
    assert len(result.table("pairwise_win_tie_loss")) == len(groups) == 6
    for (aspect, system, opponent), given in groups.items():
        c = Counter(o for _, o in given)
        row = result.row("pairwise_win_tie_loss", aspect=aspect, system=system, opponent=opponent)
        assert (row["wins"], row["ties"], row["losses"]) == (c["win"], c["tie"], c["loss"])
        assert row["win %"] == pytest.approx(100 * c["win"] / len(given))
        per_item: dict[int, Counter[str]] = {}
        for item, o in given:
            per_item.setdefault(item, Counter())[o] += 1
        votes = Counter(next((o for o, n in v.items() if 2 * n > sum(v.values())), "none") for v in per_item.values())
        m = result.row("pairwise_majority", aspect=aspect, system=system, opponent=opponent)
        assert (m["wins"], m["ties"], m["losses"], m["no majority"]) == (
            votes["win"], votes["tie"], votes["loss"], votes["none"])  # fmt: skip
    # The planted effect: good beats both others on helpfulness; fair and poor always tie on safety.
    assert result.row("pairwise_majority", aspect="helpful", system="good", opponent="poor")["wins"] == 8
    assert result.row("pairwise_win_tie_loss", aspect="safe", system="fair", opponent="poor")["tie %"] == 100


def test_sign_test_counts_items_with_holm_across_the_pairs_of_an_aspect(study: planted.Study) -> None:
    # The item is the unit; three systems: every pair's test of an aspect is one Holm family (one per question).
    result = analyse(planted.PAIRWISE, study)
    nets: dict[tuple[str, str, str], Counter[int]] = {}
    judged: Counter[tuple[str, str, str, str]] = Counter()
    for item, _, aspect, system, opponent, outcome in outcomes(study):
        nets.setdefault((system, opponent, aspect), Counter())[item] += {"win": 1, "tie": 0, "loss": -1}[outcome]
        judged[(system, opponent, aspect, outcome)] += 1
    table = result.table("pairwise_sign_test")
    assert len(table) == 6
    for aspect in ASPECTS:
        expected = {}
        for system, opponent in planted.PAIRS:
            system, opponent = sorted((system, opponent))
            net = nets[(system, opponent, aspect)]
            won, lost = sum(1 for v in net.values() if v > 0), sum(1 for v in net.values() if v < 0)
            row = result.row("pairwise_sign_test", aspect=aspect, system=system, opponent=opponent)
            assert (row["items"], row["items won"], row["items lost"]) == (len(net), won, lost)
            assert row["items even"] == len(net) - won - lost
            w, lo, t = (judged[(system, opponent, aspect, o)] for o in ("win", "loss", "tie"))
            assert (row["judgments"], row["ties"]) == (w + lo + t, t)
            if w + lo:
                assert row["win - loss %"] == pytest.approx(100 * (w - lo) / (w + lo))
                assert row["CI low %"] <= row["win - loss %"] <= row["CI high %"]
            if won + lost:
                expected[(system, opponent)] = independent.sign_test_p(won, lost)
                assert row["p (sign test)"] == pytest.approx(expected[(system, opponent)], rel=1e-9)
            else:  # every item even: nothing to test
                assert row["p (sign test)"] != row["p (sign test)"] and row["p (Holm)"] != row["p (Holm)"]
        adjusted = dict(zip(expected, independent.holm(list(expected.values())), strict=True))
        for (system, opponent), p in adjusted.items():
            row = result.row("pairwise_sign_test", aspect=aspect, system=system, opponent=opponent)
            assert row["p (Holm)"] == pytest.approx(p, rel=1e-9)
    text = " ".join(result.section("Win / tie / loss").text)
    assert "the item is the unit" in text and "items even set aside" in text
    assert "every pair of systems of an aspect" in text


def agreeing_study(won: int, lost: int, annotators: int) -> planted.Study:
    """Items on which every annotator agrees: the first system wins ``won`` of them and loses ``lost``."""
    out: planted.Study = {}
    for item in range(won + lost):
        for annotator in planted.ANNOTATORS[:annotators]:
            winner = 0 if item < won else 1
            out[(item, annotator)] = [Preference("helpful", ("fair", "good"), "LR"[winner], winner),
                                      Preference("safe", ("fair", "good"), "T", None)]  # fmt: skip
    return out


def test_agreeing_annotators_make_one_observation_of_an_item() -> None:
    """Issue 28's planted study: 30 items, 3 annotators agreeing on each, 20 items won and 10 lost. The items say
    20 against 10 (p = 0.099); the 60 against 30 judgments (p = 0.0021) counted each annotator as another item."""
    result = analyse(planted.PAIRWISE, agreeing_study(20, 10, 3))
    row = result.row("pairwise_sign_test", aspect="helpful", system="fair", opponent="good")
    assert (row["items won"], row["items lost"], row["judgments"]) == (20, 10, 90)
    assert row["p (sign test)"] == pytest.approx(independent.sign_test_p(20, 10), rel=1e-9)
    assert round(row["p (sign test)"], 3) == 0.099 and round(independent.sign_test_p(60, 30), 4) == 0.0021
    assert row["p (Holm)"] >= 0.05  # the only aspect with a decided item
    assert analyse(planted.PAIRWISE, agreeing_study(20, 10, 1)).row(
        "pairwise_sign_test", aspect="helpful", system="fair", opponent="good")["p (sign test)"] == row[
        "p (sign test)"]  # fmt: skip
    conclusion = result.row("detectable", aspect="helpful", system="fair", opponent="good")["conclusion"]
    assert conclusion.startswith("inconclusive at this size")


def test_share_intervals_take_the_item_as_the_unit(study: planted.Study) -> None:
    """The win and loss shares' intervals: the betting interval of a ratio (tested in test_intervals) of each item's
    wins (losses) over its judgments, the items in key order; the sign test's effect: of net over decided."""
    result = analyse(planted.PAIRWISE, study)
    groups: dict[tuple[str, str, str], dict[int, list[str]]] = {}
    for item, _, aspect, system, opponent, outcome in outcomes(study):
        groups.setdefault((aspect, system, opponent), {}).setdefault(item, []).append(outcome)
    for group, per_item in groups.items():
        units = [per_item[item] for item in sorted(per_item, key=planted.key)]
        sizes = [len(u) for u in units]
        row = result.row("pairwise_win_tie_loss", aspect=group[0], system=group[1], opponent=group[2])
        for name in ("win", "loss"):
            low, high = intervals.betting_ratio([u.count(name) for u in units], sizes, 0, 1, seed=OPTIONS.seed)
            assert (row[f"{name} CI low %"], row[f"{name} CI high %"]) == pytest.approx((100 * low, 100 * high))
            assert row[f"{name} CI high %"] - row[f"{name} CI low %"] > 1  # never a point
        decided = [u.count("win") + u.count("loss") for u in units]
        if sum(decided):
            net = [u.count("win") - u.count("loss") for u in units]
            low, high = intervals.betting_ratio(net, decided, -1, 1, seed=OPTIONS.seed)
            sign = result.row("pairwise_sign_test", aspect=group[0], system=group[1], opponent=group[2])
            assert (sign["CI low %"], sign["CI high %"]) == pytest.approx((100 * low, 100 * high))


def test_agreement_and_bradley_terry(study: planted.Study) -> None:
    result = analyse(planted.PAIRWISE, study)
    given = outcomes(study)
    for aspect in ASPECTS:
        by_item: dict[int, dict[str, str]] = {}
        for item, annotator, a, _, _, outcome in given:
            if a == aspect:
                by_item.setdefault(item, {})[annotator] = outcome
        full = [[list(v.values()).count(c) for c in ("win", "tie", "loss")] for v in by_item.values() if len(v) == 3]
        row = result.row("pairwise_agreement", aspect=aspect)
        assert row["samples (Fleiss)"] == len(full) == planted.ITEMS - 1
        assert row["Fleiss kappa"] == pytest.approx(formulas.fleiss_kappa(full))
        assert row["Krippendorff alpha"] == pytest.approx(formulas.krippendorff_alpha(list(map(list, (
            v.values() for v in by_item.values())))))  # fmt: skip
        for a, b in combinations(planted.ANNOTATORS, 2):
            pairs = [(v[a], v[b]) for v in by_item.values() if a in v and b in v]
            cohen = result.row("pairwise_cohen", aspect=aspect, **{"annotator 1": a, "annotator 2": b})
            assert cohen["Cohen kappa"] == pytest.approx(formulas.cohens_kappa(pairs))
        wins: Counter[tuple[str, str]] = Counter()
        ties: Counter[frozenset[str]] = Counter()
        for _, _, a, system, opponent, outcome in given:
            if a == aspect and outcome == "tie":
                ties[frozenset((system, opponent))] += 1
            elif a == aspect:
                wins[(system, opponent) if outcome == "win" else (opponent, system)] += 1
        bt = result.table("pairwise_bradley_terry")
        bt = bt[bt["aspect"] == aspect]
        strength = dict(zip(bt["system"], bt["strength"], strict=True))
        scores = formulas.bradley_terry_scores(strength, wins, ties)  # zero but for choix's small regularisation
        assert max(abs(v) for v in scores.values()) < 0.05
        assert max(strength, key=strength.__getitem__) == "good"
        assert (bt["strength CI low"] <= bt["strength"]).all() and (bt["strength"] <= bt["strength CI high"]).all()
        assert (bt["rank low"] <= bt["rank"]).all() and (bt["rank"] <= bt["rank high"]).all()


def test_agreement_says_why_with_one_annotator_per_item(study: planted.Study) -> None:
    alone = {k: v for k, v in study.items() if k[1] == "a"}
    result = analyse(planted.PAIRWISE, alone)
    agreement = result.section("Agreement")
    assert agreement.tables == [] and agreement.text == ["No agreement statistics: each item has one annotator."]
    assert "pairwise_sign_test" in result.names


def test_questions_distribution_and_ordinal_agreement(study: planted.Study) -> None:
    result = analyse(planted.PAIRWISE, study)
    codes = {(item, annotator): j.codes[0] for (item, annotator), judged in study.items() for j in judged
             if getattr(j, "question", "") == "confidence"}  # fmt: skip
    c = Counter(codes.values())
    for code in "123":
        row = result.row("questions_distribution", question="confidence", answer=code)
        assert row["judgments"] == c[code] and row["judgments %"] == pytest.approx(100 * c[code] / len(codes))
    units: dict[int, list[int]] = {}
    for (item, _), code in sorted(codes.items()):
        units.setdefault(item, []).append(int(code))
    row = result.row("questions_agreement", question="confidence")
    assert row["level"] == "ordinal" and row["units (alpha)"] == planted.ITEMS - 1
    assert row["Krippendorff alpha"] == pytest.approx(formulas.krippendorff_alpha(list(units.values()), "ordinal",
                                                                                  [1, 2, 3]))  # fmt: skip
    full = [[u.count(k) for k in (1, 2, 3)] for u in units.values() if len(u) == 3]
    assert row["Fleiss kappa"] == pytest.approx(formulas.fleiss_kappa(full))
    text = " ".join(result.section("Questions").text)
    assert "topics: no agreement statistic, several answers may be chosen." in text
