"""The best-worst report of the summary example (tests/report/examples.py), offline: its headline, the paired
tests over items (pools) against an independent count of the planted answers, the plot of the scores and the
comparisons it could detect."""

from __future__ import annotations

import itertools
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import wilcoxon

from annols.report import ReportOptions
from annols.study.exports import read_export
from tests.report import examples
from tests.report.build import build_report
from tests.report.test_report_files import UNESCAPE, read_csv

NAME = "summary-best-worst"
ASPECTS = ("informativeness", "fluency")  # the tables name an aspect by its name


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("bws")
    out = tmp / "report"
    build_report(examples.definition(NAME), [examples.pull(NAME, tmp / "pull")], out, ReportOptions(bootstrap=200))
    return out


def pool_scores(report: Path) -> dict[str, dict[str, dict[str, float]]]:
    """aspect -> pool (an article) -> system -> 100 x (best - worst) / times shown in the pool's tuples, counted
    from the pulled export's results."""
    export = report.parent / "pull" / "export.json"
    points: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for task in read_export(export):  # systems from the pull's blinding.jsonl (the manifest's), not task meta
        shown = task.systems
        for aspect in ASPECTS:
            for annotation in task.annotations:
                picks = {r["from_name"]: r["value"]["choices"][0] for r in annotation.result}
                best = shown[examples.LETTERS.index(picks[f"{aspect}_best"])]
                worst = shown[examples.LETTERS.index(picks[f"{aspect}_worst"])]
                for system in shown:
                    points[(aspect, task.data["document"], system)].append((system == best) - (system == worst))
    out: dict[str, dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    for (aspect, pool, system), values in points.items():
        out[aspect][pool][system] = 100 * sum(values) / len(values)
    return out


def holm(ps: list[float]) -> list[float]:
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    out, running = [0.0] * len(ps), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(ps) - rank) * ps[i]))
        out[i] = running
    return out


def test_paired_tests_count_items_not_tuples_and_give_effect_and_interval_beside_each_p(report: Path) -> None:
    rows = {(r["aspect"], r["system"], r["opponent"]): r for r in map(dict, _dicts(report, "best_worst_paired_tests"))}
    scores = pool_scores(report)
    assert len(rows) == 2 * 10  # every pair of the five summarisers, per aspect
    for aspect, pools in scores.items():
        systems = sorted({s for t in pools.values() for s in t})
        pairs = list(itertools.combinations(systems, 2))
        diffs = [np.array([t[a] - t[b] for t in pools.values() if a in t and b in t]) for a, b in pairs]
        ps = [float(wilcoxon(d).pvalue) if (d != 0).any() else np.nan for d in diffs]
        tested = [i for i, p in enumerate(ps) if p == p]
        corrected = dict(zip(tested, holm([ps[i] for i in tested]), strict=True))
        for i, ((a, b), d) in enumerate(zip(pairs, diffs, strict=True)):
            row = rows[(aspect, a, b)]
            # The unit is the item: each article's five summaries shown together in its tuples.
            assert int(row["items"]) == len(d) == 3 * examples.COPIES
            assert float(row["mean difference"]) == pytest.approx(d.mean(), abs=5e-5)
            assert float(row["CI low"]) <= float(row["mean difference"]) <= float(row["CI high"])
            positive, negative = _signed_rank_sums(d)
            r = (positive - negative) / (positive + negative) if positive + negative else None
            assert (row["rank-biserial r"] == "") if r is None else float(row["rank-biserial r"]) == pytest.approx(r)
            if i in corrected:
                assert float(row["p (Wilcoxon)"]) == pytest.approx(ps[i], abs=5e-5)
                assert float(row["p (Holm)"]) == pytest.approx(corrected[i], abs=5e-5)


def _signed_rank_sums(d: np.ndarray) -> tuple[float, float]:
    """The sums of the midranks of |d| (zeros dropped) over the positive and the negative differences."""
    nonzero = [x for x in d if x != 0]
    ordered = sorted(abs(x) for x in nonzero)
    midrank = {v: (ordered.index(v) + 1 + len(ordered) - ordered[::-1].index(v)) / 2 for v in ordered}
    return (sum(midrank[abs(x)] for x in nonzero if x > 0), sum(midrank[abs(x)] for x in nonzero if x < 0))


def _dicts(report: Path, name: str) -> list[dict[str, str]]:
    rows = read_csv(report / "tables" / f"{name}.csv")
    return [dict(zip(rows[0], r, strict=True)) for r in rows[1:]]


def test_headline_names_each_aspects_best_with_its_interval_and_whom_it_beat(report: Path) -> None:
    md = UNESCAPE.sub(r"\1", (report / "report.md").read_text(encoding="utf-8"))
    intro = md.split("\n## ")[0]
    scores = _dicts(report, "best_worst_scores")
    tests = _dicts(report, "best_worst_paired_tests")
    for aspect, top in (("informativeness", "abstractive-a"), ("fluency", "hallucinator")):  # as planted
        first = next(r for r in scores if r["aspect"] == aspect)
        assert first["system"] == top
        beaten = sum(
            1
            for r in tests
            if r["aspect"] == aspect
            and float(r["p (Holm)"]) < 0.05
            and top in (r["system"], r["opponent"])
            and (float(r["mean difference"]) > 0) == (r["system"] == top)
        )
        above = "all 4 others" if beaten == 4 else f"{beaten} of the 4 others"
        assert (
            f"on {aspect}, {top} scored highest ({first['score %']} [{first['score low %']}, "
            f"{first['score high %']}]), for new items, these annotators (the items' test) significantly above "
            f"{above}"
        ) in intro
    assert "Split-half reliability (Spearman-Brown): " in intro
    assert "system comparisons are significant after correction" in intro  # "What the study could detect"


def test_scores_are_plotted_with_their_intervals_and_the_comparisons_are_in_detectable(report: Path) -> None:
    md = (report / "report.md").read_text(encoding="utf-8")
    assert "![Best-worst scores with 95% intervals](plots/best_worst_scores.png)" in md
    assert (report / "plots" / "best_worst_scores.png").read_bytes().startswith(b"\x89PNG")
    detectable = _dicts(report, "detectable")
    tests = {(r["aspect"], r["system"], r["opponent"]): r for r in _dicts(report, "best_worst_paired_tests")}
    assert len(detectable) == len(tests)
    for row in detectable:
        mine = tests[(row["aspect"], row["system"], row["opponent"])]
        assert (row["units"], row["difference"], row["p (corrected)"]) == (
            mine["items"], mine["mean difference"], mine["p (Holm)"])  # fmt: skip
        assert row["measure"] == "score points per item"


def test_a_study_in_rounds_reads_one_observation_per_pool_the_paired_tests_difference(report: Path) -> None:
    """What next-round and report --rounds read of the pull: per pool (all its tuples) and pair, the first
    system's score minus the second's, equal to the count from the export."""
    import json

    from annols.analysis.planning import sequential
    from annols.study.table import read_judgments

    definition = examples.definition(NAME)
    tidy, _ = read_judgments(definition, [report.parent / "pull"], rounds=True)
    found = sequential.observations("best-worst", sequential.frame_of(definition, tidy))
    counted = pool_scores(report)
    for (aspect, first, second), x in found.items():
        expected = {pool: s[first] - s[second] for pool, s in counted[aspect].items() if first in s and second in s}
        assert len(x) == len(expected) and len(x) > 1  # pools, not tuples
        assert {json.loads(u)[0]: v for u, v in x.items()} == pytest.approx(expected)
