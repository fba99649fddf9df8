"""Intervals on every ranking: compact letters against hand-worked cases (Piepho 2004), Bradley-Terry strengths
against choix called directly, their intervals (the pairs' betting intervals' strengths) against a linear
programme, and the rank intervals against choix on the same bootstrap resamples, on a fixed planted study; rank
intervals against a plain recomputation."""

from __future__ import annotations

import itertools
import math

import choix
import numpy as np
import pytest

from annols.analysis.leaderboard import rankings
from tests.analysis import planted
from tests.analysis.by_style.test_pairwise import ASPECTS, outcomes
from tests.analysis.run import OPTIONS, analyse


@pytest.mark.parametrize(
    ("order", "different", "expected"),
    [
        # Nothing differs: one group.
        (["A", "B", "C"], [], {"A": "a", "B": "a", "C": "a"}),
        # Everything differs: a letter each.
        (["A", "B", "C"], [("A", "B"), ("A", "C"), ("B", "C")], {"A": "a", "B": "b", "C": "c"}),
        # Only the ends differ: {A, B} and {B, C}; B is in both.
        (["A", "B", "C"], [("C", "A")], {"A": "a", "B": "ab", "C": "b"}),
        # Piepho's insert-absorb by hand: ABCD; A-C -> {BCD, ABD}; A-D -> {BCD, BD, AB}, BD absorbed into BCD;
        # B-D -> {CD, BC, AB}: lettered by their best member, AB a, BC b, CD c.
        (["A", "B", "C", "D"], [("A", "C"), ("A", "D"), ("B", "D")], {"A": "a", "B": "ab", "C": "bc", "D": "c"}),
        # The top system apart, the other three together: A-B, A-C, A-D -> {A}, {BCD}.
        (["A", "B", "C", "D"], [("A", "B"), ("A", "C"), ("A", "D")], {"A": "a", "B": "b", "C": "b", "D": "b"}),
        # A 5-system case: A-D, A-E, B-E -> {ABC}, {BCD}, {CDE}.
        (["A", "B", "C", "D", "E"], [("A", "D"), ("A", "E"), ("B", "E")],
         {"A": "a", "B": "ab", "C": "abc", "D": "bc", "E": "c"}),
    ],
)  # fmt: skip
def test_letters_are_piephos_insert_absorb(order: list[str], different: list[tuple[str, str]],
                                           expected: dict[str, str]) -> None:  # fmt: skip
    got = rankings.letters(order, different)
    assert got == expected
    for a, b in itertools.combinations(order, 2):  # the display's defining property
        apart = (a, b) in different or (b, a) in different
        assert (not set(got[a]) & set(got[b])) == apart


def test_rank_intervals_are_percentiles_of_resampled_ranks() -> None:
    full = np.array([3.0, 1.0, 2.0])
    resampled = np.array([[3.0, 1.0, 2.0]] * 90 + [[1.0, 3.0, 2.0]] * 10)
    rank, low, high = rankings.rank_intervals(full, resampled)
    assert list(rank) == [1, 3, 2]
    assert list(low) == [1, 1, 2] and list(high) == [3, 3, 2]  # 10% of resamples swap the first two
    tied = rankings.ranks(np.array([2.0, 2.0, 1.0]))
    assert list(tied) == [1, 1, 3]


def test_bradley_terry_closed_form_for_two_systems(monkeypatch: pytest.MonkeyPatch) -> None:
    # 4 wins, 1 loss, 2 ties: half-wins 5 against 2, and the unregularised MLE reproduces them: p_a / p_b = 5 / 2.
    monkeypatch.setattr(rankings, "BT_ALPHA", 0.0)
    strength = rankings.bt_fit(2, np.array([[0.0, 4.0], [1.0, 0.0]]), np.array([[0.0, 2.0], [2.0, 0.0]]))
    assert strength[0] / strength[1] == pytest.approx(2.5, rel=1e-6) and strength.sum() == pytest.approx(1)


def polytope_strengths(per_item: dict[str, np.ndarray], k: int) -> tuple[np.ndarray, np.ndarray]:
    """The strength intervals recomputed another way: each compared pair's betting interval of its half-win share
    (items as the unit, 0.05 over the compared pairs), then each strength's extremes by linear programming (scipy's
    HiGHS, not shortest paths): the largest t_m - t_k subject to logit(low) <= t_i - t_j <= logit(high) for every
    compared pair, s_k = 1 / (1 + sum exp(t_m - t_k)) at its smallest, and the smallest at its largest."""
    from scipy.optimize import linprog
    from scipy.special import logit

    from annols.analysis.inference import intervals

    matrices = list(per_item.values())
    compared = [(i, j) for i, j in itertools.combinations(range(k), 2) if sum(m[i, j] + m[j, i] for m in matrices)]
    rows, limits = [], []
    for i, j in compared:
        num = [m[i, j] for m in matrices if m[i, j] + m[j, i]]  # a tie is already half a win each way here
        den = [m[i, j] + m[j, i] for m in matrices if m[i, j] + m[j, i]]
        lo, hi = intervals.betting_ratio(num, den, 0.0, 1.0, 0.05 / len(compared), OPTIONS.seed)
        for sign, limit in ((1.0, logit(hi)), (-1.0, -logit(lo))):  # sign x (t_i - t_j) <= limit
            if np.isfinite(limit):
                row = np.zeros(k)
                row[i], row[j] = sign, -sign
                rows.append(row)
                limits.append(limit)

    def largest(k_: int, m: int) -> float:  # max t_m - t_k, t_k fixed at 0
        c = np.zeros(k)
        c[m] = -1.0
        pin = np.zeros((1, k))
        pin[0, k_] = 1.0
        found = linprog(c, A_ub=np.array(rows) if rows else None, b_ub=np.array(limits) if rows else None,
                        A_eq=pin, b_eq=[0.0], bounds=[(None, None)] * k)  # fmt: skip
        return math.inf if found.status == 3 else -found.fun  # 3: unbounded

    low, high = np.zeros(k), np.zeros(k)
    for k_ in range(k):
        above = [largest(k_, m) for m in range(k) if m != k_]
        below = [-largest(m, k_) for m in range(k) if m != k_]  # the smallest t_m - t_k
        low[k_] = 1 / (1 + sum(math.exp(min(x, 700)) if x != math.inf else math.inf for x in above))
        high[k_] = 1 / (1 + sum(math.exp(x) for x in below))
    return low, high


def test_bradley_terry_and_its_intervals_equal_choix_on_the_planted_study() -> None:
    study = planted.pairwise()
    result = analyse(planted.PAIRWISE, study)
    table = result.table("pairwise_bradley_terry")
    given = outcomes(study)
    tests = result.table("pairwise_sign_test")
    for a, aspect in enumerate(ASPECTS):
        systems = sorted({s for _, _, x, s, o, _ in given if x == aspect} | {o for _, _, x, _, o, _ in given
                                                                          if x == aspect})  # fmt: skip
        at = {s: i for i, s in enumerate(systems)}
        items = sorted({planted.key(i) for i, _, x, *_ in given if x == aspect})
        per_item = {key: np.zeros((len(systems), len(systems))) for key in items}
        for item, _, x, system, opponent, outcome in given:
            if x != aspect:
                continue
            i, j = at[system], at[opponent]
            if outcome == "win":
                per_item[planted.key(item)][i, j] += 1
            elif outcome == "loss":
                per_item[planted.key(item)][j, i] += 1
            else:  # a tie: half a win each way
                per_item[planted.key(item)][i, j] += 0.5
                per_item[planted.key(item)][j, i] += 0.5

        def fit(matrix: np.ndarray) -> np.ndarray:
            theta = choix.ilsr_pairwise_dense(matrix, alpha=rankings.BT_ALPHA, max_iter=rankings.MAX_ITER)
            return np.exp(theta) / np.exp(theta).sum()

        full = fit(sum(per_item.values()))
        rng = np.random.default_rng([OPTIONS.seed, 4, a])
        draws = rng.integers(0, len(items), size=(OPTIONS.bootstrap, len(items)))  # one chunk at this size
        drawn = np.array([fit(sum(per_item[items[k]] for k in row)) for row in draws])
        low, high = polytope_strengths(per_item, len(systems))
        ranks = np.array([[1 + sum(o > s for o in row) for s in row] for row in drawn])
        mine = table[table["aspect"] == aspect].set_index("system")
        for s, k in at.items():
            assert mine.loc[s, "strength"] == pytest.approx(full[k], rel=1e-9)
            assert (mine.loc[s, "strength CI low"], mine.loc[s, "strength CI high"]) == pytest.approx(
                (low[k], high[k]), rel=1e-9)  # fmt: skip
            assert mine.loc[s, "rank"] == 1 + sum(o > full[k] for o in full)
            assert mine.loc[s, "rank low"] == np.percentile(ranks[:, k], 2.5, method="lower")
            assert mine.loc[s, "rank high"] == np.percentile(ranks[:, k], 97.5, method="higher")
        # Letters: systems apart after Holm across every pair of the aspect share none.
        mine_tests = tests[tests["aspect"] == aspect]
        for row in mine_tests.itertuples():
            apart = row[-1] < 0.05  # p (Holm)
            assert (not set(mine.loc[row.system, "group"]) & set(mine.loc[row.opponent, "group"])) == apart


def test_bounded_rank_sets_are_what_the_pairs_betting_intervals_allow() -> None:
    """With the score's range the rank interval is the set of ranks the pairs' betting intervals (paired differences
    over items, Bonferroni over the pairs) allow, recomputed here pair by pair with intervals.betting; the sets hold
    each rank and never claim an order the intervals do not."""
    import pandas as pd

    from annols.analysis.inference import intervals

    rng = np.random.default_rng(7)
    items, systems = 30, ["A", "B", "C", "D"]
    level = {"A": 4.6, "B": 4.5, "C": 2.5, "D": 2.0}  # A, B close; C, D well below
    rows = [("q", f"i{i:02d}", "a0", s, float(np.clip(np.rint(level[s] + rng.normal(0, 0.7)), 1, 5)))
            for i in range(items) for s in systems]  # fmt: skip
    scores = pd.DataFrame(rows, columns=["aspect", "task_key", "annotator", "system", "score"])
    no_tests = pd.DataFrame(columns=["aspect", "system", "opponent", "p (corrected)"])
    table = rankings.table(scores, no_tests, seed=3, reps=100, bounds=(1.0, 5.0)).set_index("system")
    wide = scores.pivot(index="task_key", columns="system", values="score")
    sure_above = {s: 0 for s in systems}  # systems surely better than s
    sure_below = {s: 0 for s in systems}
    for a, b in itertools.combinations(systems, 2):
        low, high = intervals.betting((wide[a] - wide[b]).to_numpy(), -4.0, 4.0, 0.05 / 6, 3)
        if low > 0:
            sure_above[b] += 1
            sure_below[a] += 1
        elif high < 0:
            sure_above[a] += 1
            sure_below[b] += 1
    for s in systems:
        assert (table.loc[s, "rank low"], table.loc[s, "rank high"]) == (1 + sure_above[s], 4 - sure_below[s])
        assert table.loc[s, "rank low"] <= table.loc[s, "rank"] <= table.loc[s, "rank high"]
    assert table.loc["A", "rank low"] == 1 and table.loc["D", "rank high"] == 4
    assert table.loc["A", "rank high"] <= 2 and table.loc["C", "rank low"] >= 3  # 30 items tell the halves apart
    unbounded = rankings.table(scores, no_tests, seed=3, reps=0, bounds=(1.0, 5.0))
    assert unbounded["rank low"].isna().all()  # --bootstrap 0: no interval, bounded or not


def test_a_cycle_the_model_cannot_fit_gets_no_strength_interval_and_says_why() -> None:
    """A beats B, B beats C and C beats A on every item: the pairs' intervals allow no Bradley-Terry strengths (a
    negative cycle), so no strength interval is printed and the line for the section and the headline names the
    aspect; a system that never lost still gets a finite interval (a strength is at most 1)."""
    import pandas as pd

    rows = [("q", s, o, f"i{i:02d}", "a0", "win") for i in range(30) for s, o in (("A", "B"), ("B", "C"), ("C", "A"))]
    cycle = pd.DataFrame(rows, columns=["aspect", "system", "opponent", "task_key", "annotator", "outcome"])
    no_tests = pd.DataFrame(columns=["aspect", "system", "opponent", "p (corrected)"])
    table = rankings.bradley_terry(cycle, ["q"], no_tests, seed=1, reps=50)
    assert table["strength"].notna().all() and table["strength CI low"].isna().all()
    assert table["strength CI high"].isna().all() and table["rank low"].notna().all()
    [line] = rankings.no_strength_interval(table)
    assert line.startswith("No strength interval for q: ") and "contradict the model" in line
    rows = [("q", s, o, f"i{i:02d}", "a0", "win") for i in range(30) for s, o in (("A", "B"), ("B", "C"), ("A", "C"))]
    order = pd.DataFrame(rows, columns=cycle.columns)  # A never lost, C never won
    ordered = rankings.bradley_terry(order, ["q"], no_tests, seed=1, reps=50).set_index("system")
    assert rankings.no_strength_interval(ordered.reset_index()) == []
    assert 0 < ordered.loc["C", "strength CI high"] < 1 and ordered.loc["C", "strength CI low"] == 0
    assert 0 < ordered.loc["A", "strength CI low"] < ordered.loc["A", "strength CI high"] == 1
