"""Ranking analysis on a planted study: every number against a count or formula of the test's own."""

from __future__ import annotations

import math
import statistics

import pytest

from annols.analysis.inference import intervals
from annols.styles.judgments import Rank
from tests.analysis import planted
from tests.analysis.run import OPTIONS, analyse
from tests.report import formulas

DIMENSIONS = ("quality", "brevity")


@pytest.fixture(scope="module")
def study() -> planted.Study:
    return planted.ranking()


def ranks_of(study: planted.Study) -> dict[tuple[int, str, str], dict[str, int]]:
    """(item, annotator, dimension) -> system -> rank."""
    out: dict[tuple[int, str, str], dict[str, int]] = {}
    for (item, annotator), judged in study.items():
        for j in judged:
            assert isinstance(j, Rank)
            out.setdefault((item, annotator, j.dimension), {})[j.system] = j.rank
    return out


def test_mean_rank_with_intervals(study: planted.Study) -> None:
    result = analyse(planted.RANKING, study)
    given = ranks_of(study)
    i = 0
    for dimension in DIMENSIONS:
        for system in sorted(planted.SYSTEMS):
            per_item: dict[int, list[float]] = {}
            for (item, _, d), ranks in sorted(given.items()):
                if d == dimension:
                    per_item.setdefault(item, []).append(ranks[system])
            values = [r for rs in per_item.values() for r in rs]
            row = result.row("ranking_mean_rank_intervals", dimension=dimension, system=system)
            assert (row["samples"], row["rankings"]) == (planted.ITEMS, len(values))
            # The items rule: each item's mean rank over its rankings, then the mean over items (the last item
            # has one annotator: it weighs as much as the others); so are the shares of each rank.
            item_means = [statistics.mean(per_item[k]) for k in sorted(per_item)]
            assert row["mean rank"] == pytest.approx(statistics.mean(item_means))
            # the betting interval (tested in test_intervals) of the items' mean ranks, ranks 1 to the candidates
            low, high = intervals.betting(item_means, 1, 3, seed=OPTIONS.seed)  # positions A, B, C
            assert (row["CI low"], row["CI high"]) == pytest.approx((low, high), rel=1e-9)
            shares = result.row("ranking_mean_rank", dimension=dimension, system=system)
            firsts = statistics.mean(rs.count(1) / len(rs) for rs in (per_item[k] for k in sorted(per_item)))
            assert shares["rank 1 %"] == pytest.approx(100 * firsts)
            assert shares["mean rank"] == pytest.approx(row["mean rank"])
            i += 1
    best = result.table("ranking_mean_rank_intervals").query("dimension == 'quality'")
    assert best.loc[best["mean rank"].idxmin(), "system"] == "good"  # the planted effect


def test_pairwise_win_rates_from_ranks(study: planted.Study) -> None:
    result = analyse(planted.RANKING, study)
    given = ranks_of(study)
    for dimension in DIMENSIONS:
        for system, opponent in [("fair", "good"), ("fair", "poor"), ("good", "poor")]:
            mine = [(r[system], r[opponent]) for (_, _, d), r in given.items() if d == dimension]
            wins, ties = sum(a < b for a, b in mine), sum(a == b for a, b in mine)
            row = result.row("ranking_pairwise_wins", dimension=dimension, system=system, opponent=opponent)
            assert (row["rankings"], row["wins"], row["ties"], row["losses"]) == (
                len(mine), wins, ties, len(mine) - wins - ties)  # fmt: skip
            assert row["tie %"] == pytest.approx(100 * ties / len(mine))


def test_kendall_w_and_ordinal_alpha(study: planted.Study) -> None:
    result = analyse(planted.RANKING, study)
    given = ranks_of(study)
    for dimension in DIMENSIONS:
        by_item: dict[int, list[dict[str, int]]] = {}
        for (item, _, d), ranks in sorted(given.items()):
            if d == dimension:
                by_item.setdefault(item, []).append(ranks)
        ws = [formulas.kendall_w([[r[s] for s in planted.SYSTEMS] for r in rankings])
              for rankings in by_item.values() if len(rankings) >= 2]  # fmt: skip
        defined = [w for w in ws if not math.isnan(w)]
        row = result.row("ranking_agreement", dimension=dimension)
        assert (row["samples (W)"], row["samples all tied"]) == (len(defined), len(ws) - len(defined))
        assert row["mean Kendall W"] == pytest.approx(statistics.mean(defined))
        assert row["median Kendall W"] == pytest.approx(statistics.median(defined))
        units = [[r[s] for r in rankings] for rankings in by_item.values() for s in planted.SYSTEMS]
        assert row["Krippendorff alpha"] == pytest.approx(formulas.krippendorff_alpha(units, "ordinal", [1, 2, 3]))
    assert result.row("ranking_agreement", dimension="brevity")["samples all tied"] == 5  # items 0, 5, 10, 15, 20


def test_agreement_says_why_with_one_annotator_per_item(study: planted.Study) -> None:
    result = analyse(planted.RANKING, {k: v for k, v in study.items() if k[1] == "b"})
    assert result.section("Agreement").text == ["No agreement statistics: each item has one annotator."]
