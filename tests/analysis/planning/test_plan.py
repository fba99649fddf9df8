"""``annols plan``: the simulation against closed forms and independent estimators, the command's output."""

from __future__ import annotations

import itertools
import math
import random
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]
import pytest
from click.testing import CliRunner
from scipy.stats import binom, binomtest, norm

from annols import protocols
from annols.analysis.inference import detectable, item_tests
from annols.analysis.planning import plan
from annols.cli import main
from annols.study.table import read, read_judgments
from tests.conftest import ROOT
from tests.report import study


def brute_sign_power(items: int, annotators: int, effect: float, tie_rate: float, alpha: float) -> float:
    """Every item outcome of every judgment sequence, then every count of decided items and of items won, each
    tested with scipy's binomtest and counted only when more items were won (the effect's direction)."""
    q = (1 + effect) / 2
    chance = {1: (1 - tie_rate) * q, 0: tie_rate, -1: (1 - tie_rate) * (1 - q)}
    won = lost = 0.0
    for judged in itertools.product((1, 0, -1), repeat=annotators):
        pmf = math.prod(chance[j] for j in judged)
        won += pmf if sum(judged) > 0 else 0.0
        lost += pmf if sum(judged) < 0 else 0.0
    total = 0.0
    for d in range(1, items + 1):
        rejected = sum(binom.pmf(k, d, won / (won + lost)) for k in range(d + 1)
                       if k * 2 > d and binomtest(k, d).pvalue <= alpha)  # fmt: skip
        total += binom.pmf(d, items, won + lost) * rejected
    return total


@pytest.mark.parametrize(("items", "annotators", "effect", "tie_rate", "tests"),
                         [(20, 2, 0.3, 0.2, 1), (30, 1, 0.5, 0.0, 2), (15, 3, 0.4, 0.4, 3)])  # fmt: skip
def test_pairwise_without_annotator_variance_is_the_exact_power_of_the_items_sign_test(
    items: int, annotators: int, effect: float, tie_rate: float, tests: int
) -> None:
    a = plan.Assumptions("pairwise", effect, tie_rate=tie_rate, tests=tests)
    sims = 4000
    simulated = plan.simulate(a, items, annotators, sims, seed=7)
    exact = brute_sign_power(items, annotators, effect, tie_rate, 0.05 / tests)
    assert plan.exact_pairwise_power(items, annotators, effect, tie_rate, 0.05 / tests) == pytest.approx(exact)
    error = math.sqrt(exact * (1 - exact) / sims)
    assert abs(simulated - exact) < 4 * error  # within Monte Carlo error (4 standard errors)
    assert 0.05 < exact < 0.95  # a design where the check can fail


def test_annotator_variance_costs_power_and_the_grid_finds_the_cheapest() -> None:
    base = plan.Assumptions("pairwise", 0.3, tie_rate=0.2)
    noisy = plan.Assumptions("pairwise", 0.3, tie_rate=0.2, annotator_sd=1.5)
    assert plan.simulate(noisy, 60, 3, 1000, 1) < plan.simulate(base, 60, 3, 1000, 1) - 0.05
    result = plan.plan(base, (20, 40, 80), (1, 3), simulations=300, seed=3, cost_per_judgment=0.25)
    table = result.table()
    assert list(zip(table["items"], table["annotators"], strict=True)) == [(20, 1), (20, 3), (40, 1), (40, 3),
                                                                          (80, 1), (80, 3)]  # fmt: skip
    assert list(table["cost"]) == [n * k * 0.25 for n, k in zip(table["items"], table["annotators"], strict=True)]
    reaching = table[table["power"] >= 0.8]
    best = result.cheapest
    assert best is not None and best.judgments == reaching["judgments"].min()
    assert (
        plan.plan(base, (20, 40, 80), (1, 3), simulations=300, seed=3).designs
        == plan.plan(base, (20, 40, 80), (1, 3), simulations=300, seed=3).designs
    )  # seeded: the same twice


def test_ratings_power_matches_the_normal_approximation_of_wilcoxon() -> None:
    """Ratings without item or annotator variance: per-item means are normal with sd residual / sqrt(k); the
    Wilcoxon test's power is close to the t-test's at n * 3 / pi samples (Noether), to a few points."""
    a = plan.Assumptions("ratings", 0.3, item_sd=0.0, annotator_sd=0.0, residual_sd=1.0)
    n, k = 60, 2
    d = 0.3 / (1 / math.sqrt(k))
    z = norm.ppf(1 - 0.025)
    approx = norm.sf(z - d * math.sqrt(n * 3 / math.pi)) + norm.cdf(-z - d * math.sqrt(n * 3 / math.pi))
    assert plan.simulate(a, n, k, 2000, 5) == pytest.approx(approx, abs=0.05)


def test_ranking_gap_gives_the_asked_mean_rank_difference() -> None:
    gap = plan.ranking_gap(0.5, 4, 0.3)
    rng = np.random.default_rng(99)  # another seed than the bisection's
    a = plan.Assumptions("ranking", 0.5, item_sd=0.3, positions=4)
    ranks = plan._ranks(gap, a, (100_000, 1), rng)
    assert float((ranks[..., 1] - ranks[..., 0]).mean()) == pytest.approx(0.5, abs=0.02)


def balanced(seed: int, items: int, annotators: int, item_sd: float, annotator_sd: float) -> pd.DataFrame:
    rng = random.Random(seed)
    u = [rng.gauss(0, item_sd) for _ in range(items)]
    b = [rng.gauss(0, annotator_sd) for _ in range(annotators)]
    rows = [(0.4 + u[i] + b[a] + rng.gauss(0, 1), f"i{i}", f"a{a}") for i in range(items) for a in range(annotators)]
    return pd.DataFrame(rows, columns=["y", "item", "annotator"])


def test_pilot_variance_components_equal_the_anova_estimates_of_a_balanced_design() -> None:
    table = balanced(4, 40, 5, 0.8, 0.5)
    item_sd, annotator_sd = plan._components(table)
    # Independent: expected mean squares of the two-way crossed design, one observation per cell.
    y = table.pivot(index="item", columns="annotator", values="y").to_numpy()
    n, k = y.shape
    grand = y.mean()
    ms_item = k * ((y.mean(axis=1) - grand) ** 2).sum() / (n - 1)
    ms_annotator = n * ((y.mean(axis=0) - grand) ** 2).sum() / (k - 1)
    resid = y - y.mean(axis=1, keepdims=True) - y.mean(axis=0, keepdims=True) + grand
    ms_resid = (resid**2).sum() / ((n - 1) * (k - 1))
    assert item_sd == pytest.approx(math.sqrt((ms_item - ms_resid) / k), rel=1e-3)
    assert annotator_sd == pytest.approx(math.sqrt((ms_annotator - ms_resid) / n), rel=1e-3)


def test_cli_plan_prints_the_grid_and_the_cheapest(tmp_path: Path) -> None:
    args = ["--items", "30,60", "--annotators", "1,3", "--simulations", "200", "--effect", "0.4"]
    result = CliRunner().invoke(main, ["plan", "pairwise-aspects", *args, "--cost-per-judgment", "0.5"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    header = lines.index(plan.HEADER)
    rows = [line.split("\t") for line in lines[header + 1 : header + 5]]
    assert [r[:4] for r in rows] == [["30", "1", "30", "15.00"], ["30", "3", "90", "45.00"],
                                     ["60", "1", "60", "30.00"], ["60", "3", "180", "90.00"]]  # fmt: skip
    a = plan.override(plan.assumptions(protocols.load("pairwise-aspects")), effect=0.4)
    assert a.tests == 3  # Holm across the protocol's three aspects
    # The grid's designs share their simulated studies (common random numbers): the same as the library's grid.
    designs = plan.plan(a, (30, 60), (1, 3), 200, 0).designs
    assert [(float(r[4]), float(r[5]), r[6]) for r in rows] == [
        (round(d.power, 3), round(d.false_positives, 3), "unsafe" if d.unsafe else "safe") for d in designs]
    assert lines[-3].startswith("Cheapest design reaching power 0.8: ") or lines[-3].startswith("No safe design")
    assert lines[-2].startswith("For new items, these annotators (the items' test): ")
    assert lines[-1].startswith("For new items and new annotators (the crossed test, min F'): ")
    # each claim's columns are its own test's power and false positives on the same studies
    assert [tuple(float(v) for v in r[7:11]) for r in rows] == [
        (round(d.items_power, 3), round(d.items_false, 3), round(d.crossed_power, 3), round(d.crossed_false, 3))
        for d in designs]  # fmt: skip


def test_cli_plan_refuses_bad_values_in_one_line() -> None:
    for args, words in ((["--effect", "1.5"], "between 0 and 1"), (["--residual-sd", "1"], "no such parameter"),
                        (["--items", "ten"], "comma-separated")):  # fmt: skip
        result = CliRunner().invoke(main, ["plan", "pairwise-aspects", "--simulations", "10", *args])
        assert result.exit_code != 0 and words in result.output and "Traceback" not in result.output
    spans = CliRunner().invoke(main, ["plan", "qa-feedback"])
    assert spans.exit_code != 0 and "no comparison of two systems" in spans.output


def test_cli_plan_from_a_pilot(tmp_path: Path) -> None:
    generated = study.pairwise()
    pull = study.write_pull(tmp_path / "pilot", generated.tasks)
    definition = protocols.load("pairwise-aspects")
    a = plan.from_pilot(definition, *read_judgments(definition, [pull]), plan.assumptions(definition))
    # Independent: the tie rate and the smallest |wins - losses| / decided over every pair and aspect.
    rows = preferences(pull, definition)
    ties = sum(1 for r in rows if r[3] == "tie") / len(rows)
    effects = {}
    for key in {r[:3] for r in rows}:
        w = sum(1 for r in rows if r[:3] == key and r[3] == "win")
        lo = sum(1 for r in rows if r[:3] == key and r[3] == "loss")
        if w + lo and w != lo:
            effects[key] = abs(w - lo) / (w + lo)
    assert a.tie_rate == pytest.approx(ties)
    assert a.effect == pytest.approx(min(effects.values()))
    assert a.source == str(pull)
    result = CliRunner().invoke(main, ["plan", "pairwise-aspects", "--pilot", str(pull), "--items", "40",
                                       "--annotators", "2", "--simulations", "50"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert f"From: {pull}. effect: the smallest difference in the pilot" in result.output


def preferences(pull: Path, definition: Any) -> list[tuple[str, str, str, str]]:
    """(aspect, system, opponent, outcome) of each preference judgment, read as the report reads it."""
    table = read(definition, [pull], only_judgments=True, with_judges=False)
    frame = table.judgments.frame(table.study)
    frame = frame[(frame["kind"] == "preference") & (frame["system"] != frame["opponent"])]
    return [(str(q), str(s), str(o), str(v)) for q, s, o, v in
            zip(frame["question"], frame["system"], frame["opponent"], frame["value"], strict=True)]  # fmt: skip


def test_annotators_taste_alone_has_no_power_and_every_design_is_unsafe() -> None:
    """Issue 28: with no effect (0.001) and one annotator's taste (sd 1), the items' test rejects for the
    annotator's bias, either way; that was the old plan's "power" (0.81 at 400 x 1)."""
    result = CliRunner().invoke(main, ["plan", "pairwise-aspects", "--effect", "0.001", "--annotator-sd", "1",
                                       "--item-sd", "0"])  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    header = lines.index(plan.HEADER)
    grid = len(plan.ITEMS) * len(plan.ANNOTATORS + plan.MORE_ANNOTATORS)  # annotators vary: the grid reaches 40
    rows = [line.split("\t") for line in lines[header + 1 : header + 1 + grid]]
    assert len(rows) == grid and all(len(r) == 11 for r in rows)
    assert max(float(r[4]) for r in rows) <= 0.05 / 2  # a calibrated test's share in one direction at most
    assert {r[6] for r in rows} == {"unsafe"}
    assert float(next(r for r in rows if r[:2] == ["400", "1"])[5]) > 0.5  # the items' test: the annotator's taste
    assert lines[-3].startswith("No safe design")
    # these annotators' taste is real for them: centred, the items' test keeps its level for that claim
    assert max(float(r[8]) for r in rows) <= 0.05 / 3 + 3 * (0.05 / 3 * (1 - 0.05 / 3) / plan.SIMULATIONS) ** 0.5
    assert lines[-1].startswith("For new items and new annotators (the crossed test, min F'): no design")


def test_plan_answers_both_claims_for_an_ordinary_ratings_study() -> None:
    """Issue 41: the SummEval example at effect 0.2 marked every design unsafe and recommended nothing. Now each
    claim gets the cheapest design whose own test reaches the power at its level, or what it would take."""
    example = ROOT / "examples" / "summeval-ratings.toml"
    result = CliRunner().invoke(main, ["plan", str(example), "--effect", "0.2", "--simulations", "100",
                                       "--items", "200,400,800"])  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    header = lines.index(plan.HEADER)
    rows = [line.split("\t") for line in lines[header + 1 : header + 1 + 3 * 7]]
    assert sorted({int(r[1]) for r in rows}) == [1, 2, 3, 5, 10, 20, 40]  # annotators vary: the grid reaches 40
    items_line, crossed_line = lines[-2], lines[-1]
    assert re.match(r"For new items, these annotators \(the items' test\): \d+ items x \d+ annotator\(s\)", items_line)
    assert re.match(r"For new items and new annotators \(the crossed test, min F'\): (\d+ items x (10|20|40) "
                    r"annotator\(s\)|no design of the grid)", crossed_line), crossed_line  # fmt: skip


@pytest.mark.parametrize("style", plan.STYLES)
def test_power_never_falls_with_more_items_or_annotators_on_the_default_grid(style: str) -> None:
    defaults: dict[str, Any] = dict(plan.DEFAULTS[style])
    a = plan.Assumptions(style, positions=4 if style == "ranking" else 2, **defaults)
    power = plan.plan(a, simulations=300, seed=1).table().pivot(index="items", columns="annotators", values="power")
    # Where annotators vary (the ratings defaults, from SQuALITY) power is the crossed test's, flat in items at a
    # given number of annotators: on the same draws, more items can turn one study's min F' (its annotators' mean
    # square moves) the other way. A drop of one study of the 300 is allowed there, none elsewhere.
    slack = 1 / 300 + 1e-9 if defaults.get("annotator_sd", 0) > 0 else 0.0
    assert (power.diff(axis=0).iloc[1:] >= -slack).all().all(), power
    assert (power.diff(axis=1).iloc[:, 1:] >= -slack).all().all(), power
    assert power.iloc[-1, -1] > power.iloc[0, 0]  # a grid where the check can fail


def detectable_of(items: int, annotators: int, tie_rate: float, seed: int) -> tuple[float, int, float]:
    """The report's "could detect >= X" (as a share), its decided items and its tie rate for a study of this design
    (one aspect, independent judgments, no effect)."""
    rng = random.Random(seed)
    rows = []
    for item in range(items):
        outcomes = ["tie" if rng.random() < tie_rate else rng.choice(("win", "loss")) for _ in range(annotators)]
        rows += [(0, f"i{item}", f"a{k}", "quality", "A", "B", o) for k, o in enumerate(outcomes)]
    frame = pd.DataFrame(rows, columns=["uid", "task_key", "annotator", "aspect", "system", "opponent", "outcome"])
    tests = item_tests.sign_test(frame)
    row = detectable.pairwise_table(tests).iloc[0]
    return row["detectable difference"] / 100, int(row["units"]), tests["ties"][0] / tests["judgments"][0]


def test_plan_power_at_the_reports_detectable_difference_is_the_target() -> None:
    # Three annotators, no ties: every item is decided, so the report's and plan's designs are the same.
    x, decided, _ = detectable_of(60, 3, 0.0, seed=1)
    assert decided == 60
    a = plan.Assumptions("pairwise", x)
    assert plan.exact_pairwise_power(60, 3, x, 0.0, 0.05) == pytest.approx(0.8, abs=1e-6)
    sims = 4000
    assert plan.simulate(a, 60, 3, sims, seed=2) == pytest.approx(0.8, abs=4 * math.sqrt(0.16 / sims))
    # With ties the report counts the items it saw decided, plan draws how many are: about the same.
    x, decided, tie_rate = detectable_of(50, 3, 0.3, seed=3)
    assert decided < 50
    tied = plan.Assumptions("pairwise", x, tie_rate=tie_rate)
    assert plan.simulate(tied, 50, 3, sims, seed=4) == pytest.approx(0.8, abs=0.05)
