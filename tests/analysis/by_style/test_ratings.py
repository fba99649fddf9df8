"""Ratings analysis on planted studies (a 1-5 scale and a 0-100 slider): every number computed here too."""

from __future__ import annotations

import math
import statistics
from collections import Counter
from itertools import combinations

import pytest

from annols.analysis.inference import intervals
from annols.styles.judgments import Rating
from tests.analysis import independent, planted
from tests.analysis.run import OPTIONS, Analysed, analyse
from tests.report import formulas

ASPECTS = ("coherence", "fluency")  # the tables name an aspect by its name


def ratings_of(study: planted.Study) -> list[tuple[int, str, str, str, float]]:
    """(item, annotator, aspect name, system, value)."""
    return [(item, annotator, j.aspect, j.system, j.value)
            for (item, annotator), judged in sorted(study.items())
            for j in judged if isinstance(j, Rating)]  # fmt: skip


Analysis = tuple[planted.Study, Analysed]


@pytest.fixture(scope="module")
def scale() -> Analysis:
    """The planted study on a 1-5 scale, analysed once (exhaustive paired tests with ties take a while)."""
    study = planted.ratings()
    return study, analyse(planted.RATINGS, study)


@pytest.fixture(scope="module")
def slider() -> Analysis:
    study = planted.ratings(slider=True)
    return study, analyse(planted.SLIDER, study)


SCALES = {"scale": (1.0, 5.0), "slider": (0.0, 100.0)}  # the planted definitions' ranges


@pytest.mark.parametrize("which", ["scale", "slider"])
def test_mean_median_intervals_and_z(which: str, request: pytest.FixtureRequest) -> None:
    study, result = request.getfixturevalue(which)
    given = ratings_of(study)
    z: dict[tuple[int, str, str, str], float] = {}
    for annotator in planted.ANNOTATORS:
        for aspect in ASPECTS:
            mine = [(i, s, v) for i, a, asp, s, v in given if a == annotator and asp == aspect]
            mean, sd = statistics.mean(v for *_, v in mine), statistics.stdev(v for *_, v in mine)
            z.update({(i, annotator, aspect, s): (v - mean) / sd for i, s, v in mine})
    k = 0
    for aspect in ASPECTS:
        for system in sorted(planted.SYSTEMS):
            per_item: dict[int, list[float]] = {}
            for item, _, a, s, v in given:
                if (a, s) == (aspect, system):
                    per_item.setdefault(item, []).append(v)
            units = [per_item[i] for i in sorted(per_item)]
            values = [v for u in units for v in u]
            row = result.row("ratings_summary", aspect=aspect, system=system)
            assert (row["samples"], row["ratings"]) == (planted.RATING_ITEMS, len(values))
            # The items rule: each item's mean over its ratings, then the mean over items (the last item has one
            # annotator: it weighs as much as the others).
            item_means = [statistics.mean(u) for u in units]
            assert row["mean"] == pytest.approx(statistics.mean(item_means))
            assert row["median"] == pytest.approx(statistics.median(values))
            # the mean's interval: the betting interval (tested in test_intervals) of the items' means on the scale
            mean_ci = intervals.betting(item_means, *SCALES[which], seed=OPTIONS.seed)
            median_ci = independent.bootstrap(units, statistics.median, OPTIONS.bootstrap, [OPTIONS.seed, k, 1])
            assert (row["mean CI low"], row["mean CI high"]) == pytest.approx(mean_ci, rel=1e-9)
            if median_ci[0] == median_ci[1]:  # a point is not printed as a 95% interval: the cells stay empty
                assert math.isnan(row["median CI low"]) and math.isnan(row["median CI high"])
            else:
                assert (row["median CI low"], row["median CI high"]) == pytest.approx(median_ci, rel=1e-9)
            zs = [v for (_, _, a, s), v in z.items() if (a, s) == (aspect, system)]
            z_items: dict[int, list[float]] = {}
            for (i, _, a, s), v in z.items():
                if (a, s) == (aspect, system):
                    z_items.setdefault(i, []).append(v)
            z_mean = statistics.mean(statistics.mean(v) for v in z_items.values())
            assert row["ratings with z"] == len(zs) and row["mean z"] == pytest.approx(z_mean)
            k += 1
    summary = result.table("ratings_summary").query("aspect == 'coherence'")
    assert summary.loc[summary["mean z"].idxmax(), "system"] == "good"  # the planted effect


@pytest.mark.parametrize("which", ["scale", "slider"])
def test_paired_wilcoxon_with_holm(which: str, request: pytest.FixtureRequest) -> None:
    study, result = request.getfixturevalue(which)
    given = ratings_of(study)
    for aspect in ASPECTS:
        means: dict[tuple[int, str], float] = {}
        for item in range(planted.RATING_ITEMS):
            for system in planted.SYSTEMS:
                means[(item, system)] = statistics.mean(v for i, _, a, s, v in given
                                                        if (i, a, s) == (item, aspect, system))  # fmt: skip
        expected = {}
        for system, opponent in combinations(sorted(planted.SYSTEMS), 2):
            diffs = [means[(i, system)] - means[(i, opponent)] for i in range(planted.RATING_ITEMS)]
            row = result.row("ratings_paired_tests", aspect=aspect, system=system, opponent=opponent)
            assert row["samples"] == planted.RATING_ITEMS
            assert row["mean difference"] == pytest.approx(statistics.mean(diffs))
            assert (row["samples system higher"], row["samples opponent higher"]) == (
                sum(d > 1e-12 for d in diffs), sum(d < -1e-12 for d in diffs))  # fmt: skip
            expected[(system, opponent)] = independent.wilcoxon_p([round(d, 9) for d in diffs])
            assert row["p (Wilcoxon)"] == pytest.approx(expected[(system, opponent)], rel=1e-6)
        for pair, p in zip(expected, independent.holm(list(expected.values())), strict=True):
            row = result.row("ratings_paired_tests", aspect=aspect, system=pair[0], opponent=pair[1])
            assert row["p (Holm)"] == pytest.approx(p, rel=1e-6)


def test_distribution_and_ordinal_agreement_on_a_scale(scale: Analysis) -> None:
    study, result = scale
    given = ratings_of(study)
    for aspect in ASPECTS:
        for system in planted.SYSTEMS:
            c = Counter(int(v) for _, _, a, s, v in given if (a, s) == (aspect, system))
            for code in range(1, 6):
                row = result.row("ratings_distribution", aspect=aspect, system=system, answer=str(code))
                assert row["ratings"] == c[code]
                assert row["ratings %"] == pytest.approx(100 * c[code] / sum(c.values()))
        units: dict[tuple[int, str], list[int]] = {}
        for item, _, a, s, v in given:
            if a == aspect:
                units.setdefault((item, s), []).append(int(v))
        row = result.row("ratings_agreement", aspect=aspect)
        assert row["level"] == "ordinal" and row["units (alpha)"] == 3 * (planted.RATING_ITEMS - 1)
        assert row["Krippendorff alpha"] == pytest.approx(
            formulas.krippendorff_alpha(list(units.values()), "ordinal", [1, 2, 3, 4, 5])
        )
        full = [[u.count(k) for k in range(1, 6)] for u in units.values() if len(u) == 3]
        assert row["Fleiss kappa"] == pytest.approx(formulas.fleiss_kappa(full))
    assert [p.name for s in result.sections for p in s.figures] == ["ratings_distribution", "reliability_order"]


def test_slider_tenths_and_interval_agreement(slider: Analysis) -> None:
    study, result = slider
    given = ratings_of(study)
    for aspect in ASPECTS:
        for system in planted.SYSTEMS:
            c = Counter(min(9, int(v // 10)) for _, _, a, s, v in given if (a, s) == (aspect, system))
            for tenth in range(10):
                row = result.row("ratings_distribution", aspect=aspect, system=system,
                                 answer=f"{10 * tenth}-{10 * tenth + 10}")  # fmt: skip
                assert row["ratings"] == c[tenth]
        units: dict[tuple[int, str], list[float]] = {}
        for item, _, a, s, v in given:
            if a == aspect:
                units.setdefault((item, s), []).append(v)
        row = result.row("ratings_agreement", aspect=aspect)
        assert row["level"] == "interval"
        assert row["Krippendorff alpha"] == pytest.approx(independent.interval_alpha(list(units.values())))
        assert row["Fleiss kappa"] != row["Fleiss kappa"]  # no categories on a slider: empty, and the text says so
    assert "not computed for a slider" in " ".join(result.section("Agreement").text)


def test_agreement_says_why_with_one_annotator_per_item() -> None:
    study = {k: v for k, v in planted.ratings().items() if k[1] == "a" and k[0] < 4}
    result = analyse(planted.RATINGS, study)
    assert result.section("Agreement").text == ["No agreement statistics: each item has one annotator."]
