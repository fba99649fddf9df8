"""Judge-assisted estimates (annols.analysis.judging.ppi): against ppi-python on fixed data, against a hand computation
of the PPI++ mean and its CLT interval, never wider than the humans' for a useless or adversarial judge, items as the
unit for every kind of judgment, and the gain it states."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]
import ppi_py  # type: ignore[import-untyped, unused-ignore]
import pytest
from click.testing import CliRunner

from annols.analysis.inference import intervals
from annols.analysis.judging import ppi
from annols.cli import main
from annols.formats.answers import is_judge
from tests.conftest import ROOT

Z = 1.959963984540054  # the normal quantile of a 95% interval


def fixed(seed: int, n: int = 30, unlabeled: int = 120, r: float = 0.7) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    y = rng.normal(3, 1, n + unlabeled)
    f = 1.0 + r * y + math.sqrt(1 - r * r) * rng.normal(0, 1, n + unlabeled)  # biased judge
    return y[:n], f[:n], f[n:]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_estimate_is_the_librarys_ppi_plus_plus(seed: int) -> None:
    y, f, fu = fixed(seed)
    e = ppi.estimate(y, f, fu)
    low, high = ppi_py.ppi_mean_ci(y, f, fu, alpha=0.05, lam=None)
    assert (e.low, e.high) == pytest.approx((float(low[0]), float(high[0])), abs=1e-12)
    assert e.point == pytest.approx(float(ppi_py.ppi_mean_pointestimate(y, f, fu, lam=None)[0]), abs=1e-12)
    human = ppi_py.classical_mean_ci(y, alpha=0.05)
    assert (e.human_low, e.human_high) == pytest.approx((float(human[0]), float(human[1])), abs=1e-12)
    assert e.human == pytest.approx(float(y.mean()))
    assert 0 < e.lam < 1


def test_the_estimate_by_hand() -> None:
    """PPI++ (Angelopoulos, Duchi & Zrnic 2024, mean estimation) written out on eight numbers."""
    y = np.array([4.0, 2.0, 5.0, 3.0])
    f = np.array([4.5, 2.5, 4.5, 3.5])
    fu = np.array([3.0, 5.0, 4.0, 2.0])
    n, big_n = 4, 4
    # lambda = Cov(Y, f) / ((1 + n/N) Var(f over all 8)); the covariance over n, the variance over 8 - 1.
    cov = float(np.mean((y - y.mean()) * (f - f.mean())))
    var_all = float(np.var(np.concatenate([f, fu]), ddof=1))
    lam = cov / ((1 + n / big_n) * var_all)
    assert cov == pytest.approx(0.875)  # (0.375 + 1.875 + 1.125 + 0.125) / 4
    point = lam * fu.mean() + (y - lam * f).mean()
    se = math.sqrt(np.var(y - lam * f) / n + lam * lam * np.var(fu) / big_n)
    e = ppi.estimate(y, f, fu)
    assert e.lam == pytest.approx(lam, abs=1e-12)
    assert e.point == pytest.approx(point, abs=1e-12)
    assert (e.low, e.high) == pytest.approx((point - Z * se, point + Z * se), abs=1e-12)
    human_se = math.sqrt(np.var(y) / n)
    assert (e.human_low, e.human_high) == pytest.approx((3.5 - Z * human_se, 3.5 + Z * human_se), abs=1e-12)
    assert e.effective == pytest.approx(n * (human_se / se) ** 2)


@pytest.mark.parametrize("r", [0.0, -0.5, -0.95])
def test_a_useless_or_adversarial_judge_never_widens_the_interval(r: float) -> None:
    ratios, lams = [], []
    for seed in range(200):
        y, f, fu = fixed(seed, n=20, unlabeled=80, r=r)
        e = ppi.estimate(y, f, fu)
        ratios.append(e.width_ratio)
        lams.append(e.lam)
        assert e.width_ratio <= 1 + 1e-12, (seed, e)
    if r < -0.4:  # anti-correlated: lambda 0 (clipped), the humans' own interval, but in the odd sample
        assert float(np.median(lams)) == 0.0
        assert float(np.median(ratios)) == pytest.approx(1.0)
    else:
        assert float(np.median(lams)) < 0.1


def test_the_guard_takes_the_exact_minimiser_when_the_librarys_lambda_would_widen() -> None:
    """The judge varies little where humans judged and much elsewhere: the library's lambda (its variance over all
    items) is too large, and its interval would be wider than the humans'."""
    rng = np.random.default_rng(7)
    y = rng.normal(0, 1, 10)
    f = 0.05 * y + rng.normal(0, 0.01, 10)
    fu = rng.normal(0, 3, 10)
    lam = ppi.tuned_lambda(y, f, fu)
    wide = ppi_py.ppi_mean_ci(y, f, fu, alpha=0.05, lam=lam)
    human = ppi_py.classical_mean_ci(y, alpha=0.05)
    e = ppi.estimate(y, f, fu)
    if float(wide[1][0] - wide[0][0]) > float(human[1] - human[0]):
        assert e.lam < lam
    assert e.width_ratio <= 1 + 1e-12


def test_variance_factor_is_the_closed_form() -> None:
    assert ppi.variance_factor(0.0, 20, 80) == 1.0
    assert ppi.variance_factor(1.0, 20, 80) == pytest.approx(0.2)
    assert ppi.share_factor(0.4, 0.2) == pytest.approx(ppi.variance_factor(0.4, 20, 80))
    assert ppi.share_factor(-0.9, 0.2) == 1.0  # an adversarial judge gets lambda 0: no gain is predicted
    # The SummEval figure: r about 0.4, humans on 20 of 100: about 1.15 human items per item.
    assert 1 / ppi.variance_factor(0.4, 20, 80) == pytest.approx(1.146, abs=0.001)


# --- items are the unit ---------------------------------------------------------------------------------------


def frame(rows: list[tuple[str, str, str, str, str, str, object]]) -> pd.DataFrame:
    columns = ["task_key", "annotator", "kind", "question", "system", "opponent", "value"]
    return pd.DataFrame(rows, columns=columns)


def test_pairwise_win_rates_and_net_preference_per_item() -> None:
    rows = []
    # Humans on items 0-3 (three each), the judge on items 0-7.
    human = {0: ["win", "win", "loss"], 1: ["tie", "win", "win"], 2: ["loss", "loss", "tie"], 3: ["win", "tie", "tie"]}
    for item, outcomes in human.items():
        rows += [
            (f"k{item}", who, "preference", "helpful", "A", "B", o) for who, o in zip("abc", outcomes, strict=True)
        ]
    judge = ["win", "win", "loss", "tie", "win", "loss", "win", "win"]
    rows += [(f"k{i}", "judge:j", "preference", "helpful", "A", "B", o) for i, o in enumerate(judge)]
    table = ppi.estimates(frame(rows), ["judge:j"], is_judge)
    by = table.set_index("estimate")
    assert list(by.index) == ["A", "B", "A - B"]
    points = {"win": 1.0, "tie": 0.5, "loss": 0.0}
    per_item = np.array([np.mean([points[o] for o in v]) for v in human.values()]) * 100
    assert by.loc["A", "humans"] == pytest.approx(per_item.mean())
    assert by.loc["B", "humans"] == pytest.approx(100 - per_item.mean())
    net = np.array([np.mean([{"win": 1, "tie": 0, "loss": -1}[o] for o in v]) for v in human.values()])
    assert by.loc["A - B", "humans"] == pytest.approx(100 * net.mean())
    y = 100 * net
    f = np.array([100.0 * {"win": 1, "tie": 0, "loss": -1}[o] for o in judge])
    e = ppi.estimate(y, f[:4], f[4:], bounds=(-100.0, 100.0))  # a win rate's range is known: bounded
    assert by.loc["A - B", "PPI++"] == pytest.approx(e.point)
    assert by.loc["A - B", "interval"] == "bounded"
    assert by.loc["A - B", "items with humans"] == 4 and by.loc["A - B", "judge-only items"] == 4


def test_ratings_ranks_and_best_worst_are_averaged_per_item_first() -> None:
    rows = []
    for item in range(6):
        raters = ["judge:j"] + (["a", "b"] if item < 3 else [])
        for who in raters:
            bump = 1 if who == "b" else 0
            rows.append((f"k{item}", who, "rating", "quality", "X", "", item % 3 + 1 + bump))
            rows.append((f"k{item}", who, "rating", "quality", "Y", "", 2))
            rows.append((f"k{item}", who, "rank", "order", "X", "", 1 + (item % 2)))
            rows.append((f"k{item}", who, "rank", "order", "Y", "", 2 - (item % 2)))
            rows.append((f"k{item}", who, "best-worst", "best", "X", "", 1 if item % 2 else -1))
            rows.append((f"k{item}", who, "best-worst", "best", "Y", "", -1 if item % 2 else 1))
    table = ppi.estimates(frame(rows), ["judge:j"], is_judge)
    got = table.set_index(["measure", "estimate"])["humans"]
    # Humans' per-item means of X's ratings: (1 + 2) / 2, (2 + 3) / 2, (3 + 4) / 2.
    assert got[("mean rating", "X")] == pytest.approx(np.mean([1.5, 2.5, 3.5]))
    assert got[("mean rating", "X - Y")] == pytest.approx(np.mean([1.5, 2.5, 3.5]) - 2)
    assert got[("mean rank", "X")] == pytest.approx(np.mean([1, 2, 1]))
    assert got[("best-worst score %", "X")] == pytest.approx(100 * np.mean([-1, 1, -1]))
    assert set(table["items with humans"]) == {3} and set(table["judge-only items"]) == {3}


MQM_WEIGHT = {("Accuracy", "major"): 5.0, ("Accuracy", "minor"): 1.0, ("Fluency/Punctuation", "minor"): 0.1,
              ("Non-translation", "major"): 25.0}  # Freitag et al.'s weights, written out (not read from the example)


def test_the_error_score_of_spans_with_weights_is_estimated_per_item_against_the_library() -> None:
    """MQM: each judged candidate's error score (its spans' weights, 0 without spans) from the humans and from the
    judge, averaged per item (a source: its candidates' tasks), is the PPI++ mean of ppi-python, its intervals the
    betting ones with the range 0 to the largest score seen."""
    from annols import protocols

    spec = protocols.load(str(ROOT / "examples" / "mqm.toml")).spec
    rng = np.random.default_rng(5)
    rows, judged, scores = [], [], {}  # scores[(rater, item, system)]: the planted error score
    marks = list(MQM_WEIGHT)
    for item in range(16):
        raters = ["judge:j"] + (["a", "b"] if item < 6 else [])
        for system, load in (("A", 1), ("B", 3)):
            key = f"k{item}-{system}"
            for rater in raters:
                uid = len(judged)
                judged.append((uid, key, rater, system, f"source {item}"))
                picked = [marks[int(i)] for i in rng.integers(0, 3, size=int(rng.integers(0, load + 1)))]
                if system == "B" and item % 5 == 0:
                    picked.append(marks[3])
                for n, (label, severity) in enumerate(picked):
                    region = f"{uid}-{n}"
                    rows.append((key, rater, uid, "span", "errors", system, label, n, n + 1, region))
                    rows.append((key, rater, uid, "span-answer", "severity", system, severity, n, n + 1, region))
                scores[(rater, item, system)] = sum(MQM_WEIGHT[m] for m in picked)
    assert 0.0 in scores.values()  # a candidate without spans is scored 0
    tidy = pd.DataFrame(rows, columns=["task_key", "annotator", "uid", "kind", "question", "system", "value", "start",
                                       "end", "region"]).assign(opponent="")  # fmt: skip
    judged_frame = pd.DataFrame(judged, columns=["uid", "task_key", "annotator", "system", ppi.UNIT])
    found = ppi.error_score_rows(tidy, judged_frame, spec)
    assert len(found) == len(judged) and set(found["kind"]) == {ppi.ERROR_SCORE}
    table = ppi.estimates(pd.concat([tidy.drop(columns=["uid"]), found], ignore_index=True), ["judge:j"], is_judge)
    got = table.set_index("estimate")
    assert set(got.index) == {"A", "B", "A - B"} and set(got["measure"]) == {"mean error score"}

    def per_item(rater: str | None, system: str, items: range) -> np.ndarray:
        return np.array([np.mean([scores[(r, i, system)] for r in (["a", "b"] if rater is None else [rater])])
                         for i in items])  # fmt: skip

    humans, alone = range(6), range(6, 16)
    for target, sign in (("A", 0), ("B", 0), ("A - B", 1)):
        if sign:
            y = per_item(None, "A", humans) - per_item(None, "B", humans)
            f = per_item("judge:j", "A", humans) - per_item("judge:j", "B", humans)
            fu = per_item("judge:j", "A", alone) - per_item("judge:j", "B", alone)
        else:
            y, f, fu = per_item(None, target, humans), per_item("judge:j", target, humans), per_item("judge:j",
                                                                                                   target, alone)
        row = got.loc[target]
        assert (row["items with humans"], row["judge-only items"]) == (6, 10)
        assert row["humans"] == pytest.approx(float(y.mean()), abs=1e-12)
        # No bound is known for an error score: the range 0 to the largest score seen (#41), betting intervals.
        top = max(max(scores.values()), 1.0)
        bounds = (-top, top) if sign else (0.0, top)
        assert row["interval"] == ppi.SEEN
        h_low, h_high = intervals.betting(y, *bounds)
        assert (row["humans low"], row["humans high"]) == pytest.approx((h_low, h_high), abs=1e-12)
        lam = ppi.tuned_lambda(y, f, fu)
        low, high = intervals.ppi(y, f, fu, lam, *bounds)
        if high - low <= h_high - h_low:  # the library's PPI++ point with its lambda, the bounded interval
            assert (row["PPI++ low"], row["PPI++ high"]) == pytest.approx((low, high), abs=1e-9)
            point = float(ppi_py.ppi_mean_pointestimate(y, f, fu, lam=lam)[0])
            assert row["PPI++"] == pytest.approx(point, abs=1e-9)
        else:  # the humans' own
            assert (row["PPI++"], row["PPI++ low"], row["PPI++ high"]) == pytest.approx((y.mean(), h_low, h_high))
        assert row["width ratio"] <= 1 + 1e-9


def test_no_estimate_without_judge_only_items() -> None:
    rows = [(f"k{i}", who, "rating", "q", "X", "", i) for i in range(5) for who in ("a", "judge:j")]
    assert not len(ppi.estimates(frame(rows), ["judge:j"], is_judge))


def test_the_gain_is_stated_and_so_is_no_gain() -> None:
    values = ["judge:j", "q", "mean rating", "X", 20, 80, 0, 0, 0, 0, 0, 0, 0.5, 0.94, 22.6, 0.4, 0.93, "CLT"]
    base = dict(zip(ppi.COLUMNS, values, strict=True))
    helped = pd.DataFrame([base])
    assert ppi.gain_lines(helped) == ["judge:j on q (scores): the judge made 20 human items worth 23: intervals "
                                      "6 % narrower (medians). From the judge's r = 0.40, plan predicts "
                                      "7 %."]  # fmt: skip
    useless = pd.DataFrame([{**base, "estimate": "X - Y", "width ratio": 1.0, "worth human items": 20.0,
                             "judge r": float("nan"), "predicted width ratio": float("nan")}])  # fmt: skip
    assert ppi.gain_lines(useless) == ["judge:j on q (differences): the judge did not help; the intervals are the "
                                       "humans' own (20 human items worth 20)."]  # fmt: skip


# --- plans ----------------------------------------------------------------------------------------------------


def design(items: int, annotators: int, power: float, unsafe: bool = False) -> SimpleNamespace:
    return SimpleNamespace(items=items, annotators=annotators, power=power, unsafe=unsafe)


def test_the_plan_with_a_judge_scales_the_items_by_the_variance_factor() -> None:
    designs = [design(50, 1, 0.5), design(100, 1, 0.7), design(200, 1, 0.9), design(50, 3, 0.85),
               design(50, 5, 0.2), design(100, 5, 0.9, unsafe=True)]  # fmt: skip
    assert ppi.needed_items(designs, 1, 0.8) == pytest.approx(150.0)  # halfway from 0.7 to 0.9
    assert ppi.needed_items(designs, 3, 0.8) == 50.0
    assert ppi.needed_items(designs, 5, 0.8) is None  # the only design reaching it is unsafe
    table = ppi.judge_plan(designs, 0.8, 0.5, 0.2).set_index("annotators")
    factor = 1 - 0.25 * 0.8
    assert table.loc[1, "human items"] == 150 and table.loc[1, "with the judge: human items"] == math.ceil(150 * factor)
    assert table.loc[1, "judge answers (items)"] == math.ceil(math.ceil(150 * factor) / 0.2)
    assert table.loc[3, "judgments"] == 150 and table.loc[3, "with the judge: judgments"] == 3 * math.ceil(50 * factor)
    assert pd.isna(table.loc[5, "human items"])


def test_plan_prints_the_judges_table() -> None:
    result = CliRunner().invoke(
        main,
        [
            "plan",
            "pairwise-aspects",
            "--judge-correlation",
            "0.4",
            "--human-share",
            "0.2",
            "--simulations",
            "20",
            "--items",
            "25,50,100",
            "--annotators",
            "1,3",
        ],
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("With a judge of correlation 0.4"))
    assert "variance x 0.872" in lines[at] and "6.6 % narrower" in lines[at]
    assert lines[at + 1].split("\t") == ppi.PLAN_COLUMNS
    assert [line.split("\t")[0] for line in lines[at + 2 :]] == ["1", "3"]


def test_without_ppi_python_the_report_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from annols.analysis.judging.judge_findings import assisted_section

    rows = [(f"k{i}", who, "rating", "q", "X", "", i % 3) for i in range(6) for who in ("judge:j", "a") if
            who == "judge:j" or i < 3]  # fmt: skip
    found = assisted_section(frame(rows), ["judge:j"])
    assert found and found[0].tables and "3 items have the judge's answers only" in found[0].text[0]
    monkeypatch.setattr(ppi, "available", lambda: False)
    (section,) = assisted_section(frame(rows), ["judge:j"])
    assert not section.tables
    assert section.text == ["3 items have the judge's answers only: judge-assisted estimates need ppi-python, which "
                            "is not installed (pip install 'annols[ppi]')."]  # fmt: skip


def test_a_definition_without_a_system_score_is_told_so() -> None:
    """Spans without weights (or a numeric question): no mean per system, and the section says so."""
    from annols.analysis.judging.judge_findings import assisted_section

    rows = [(f"k{i}", who, "span", "errors", "X", "", "Wrong") for i in range(6) for who in ("judge:j", "a")
            if who == "judge:j" or i < 3]  # fmt: skip
    (section,) = assisted_section(frame(rows), ["judge:j"])
    assert not section.tables[0].frame.shape[0]
    assert section.text[1] == (f"This definition has no system score to estimate: {ppi.COVERED}. Its spans, choices "
                               "and sentence rows are not a mean per system, so no judge-assisted estimate is made.")
