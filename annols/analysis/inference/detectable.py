"""What a study could detect: per system pair and aspect, the smallest difference its test had 80% power for.

A comparison that is not significant after the correction the report applies says only that
the study was too small to see a difference of its size, never that there is none: it is
written "inconclusive at this size (could detect >= X)", X being the smallest difference the
same test, on the same number of units, would find with probability 0.8 (:data:`POWER`) at
the corrected level.

- Pairwise (exact sign test over items of items won against items lost, items even set
  aside: :mod:`annols.analysis.inference.item_tests`): X is in percentage points of
  (wins - losses) / (wins + losses) of the judgments, the smallest for which the test at the
  corrected level has power 0.8 (rejections towards the better system only) on the observed
  number of decided items, with independent judgments at the observed tie rate and the mean
  number of judgments per item (:func:`items_detectable`). An item's outcome is a trinomial
  sum (:func:`item_outcomes`); the rejection region and its power are exact binomial sums
  (``scipy.stats.binom``); the root in the effect is found by ``brentq``.
- Ratings and ranking (Wilcoxon signed-rank over samples of per-sample mean differences):
  X is in the scale's units (a mean rating, a mean rank), from the power of the paired
  t-test (``statsmodels.stats.power.TTestPower``) on the observed standard deviation of the
  per-sample differences, with the samples discounted by the Wilcoxon test's asymptotic
  relative efficiency 3/pi against the t-test (Noether 1955): an approximation, the report
  says so.
- The corrected level: the report corrects by Holm's method; its first step, alpha / m for
  m tests in the family, is the level a single comparison needs at least, so X is computed
  at alpha / m (Bonferroni), which is conservative.

Ranking had no test between systems: :func:`paired_tests` gives it the ratings' paired
test on per-sample mean ranks (Holm across the pairs of a dimension).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from functools import cache
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]
from scipy import optimize
from scipy.stats import binom, norm, rankdata, wilcoxon
from scipy.stats import f as f_dist
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import TTestPower

from annols.analysis import cells
from annols.analysis.inference import bootstrap, intervals
from annols.analysis.naming import natural

ALPHA = 0.05
POWER = 0.8
WILCOXON_ARE = 3 / math.pi
INCONCLUSIVE = "inconclusive at this size"

COLUMNS = ["aspect", "system", "opponent", "test", "measure", "units", "difference", "CI low", "CI high",
           "p (corrected)", "tests corrected for", "detectable difference", "conclusion"]  # fmt: skip
EFFECT_COLUMNS = ["CI low", "CI high", "rank-biserial r"]  # beside a paired test's mean difference (with_effects)


def sign_test_region(n: int, alpha: float) -> int:
    """The largest k with 2 P(X <= k) <= alpha for X ~ Binomial(n, 1/2): reject when wins <= k or >= n - k
    (scipy's two-sided binomtest p at 1/2 is min(1, 2 P(X <= min(k, n - k)))); -1 when nothing can be rejected."""
    if n <= 0:
        return -1
    ks = np.arange(n // 2 + 1)
    ok = 2 * binom.cdf(ks, n, 0.5) <= alpha * (1 + 1e-12)
    return int(ks[ok].max()) if ok.any() else -1


def sign_test_power(n: int, q: float, alpha: float) -> float:
    """Exact power of the two-sided sign test on n decided judgments when P(win) = q."""
    k = sign_test_region(n, alpha)
    if k < 0:
        return 0.0
    return float(binom.cdf(k, n, q) + binom.sf(n - k - 1, n, q))


def sign_test_detectable(n: int, alpha: float, power: float = POWER) -> float:
    """The smallest 2q - 1 (win share minus loss share among decided judgments, 0..1) with the given power;
    inf when no difference can reach it (too few decided judgments to reject at all)."""
    if sign_test_region(n, alpha) < 0 or sign_test_power(n, 1.0, alpha) < power:
        return math.inf
    q = optimize.brentq(lambda x: sign_test_power(n, x, alpha) - power, 0.5, 1.0, xtol=1e-10)
    return 2 * q - 1


def paired_detectable(n: int, sd: float, alpha: float, power: float = POWER) -> float:
    """The smallest mean difference the Wilcoxon signed-rank test on n paired samples detects with the given
    power: the paired t-test's effect size at n * 3/pi samples times the differences' standard deviation."""
    effective = n * WILCOXON_ARE
    if effective < 2 or not sd > 0:
        return math.nan
    d = TTestPower().solve_power(effect_size=None, nobs=effective, alpha=alpha, power=power,
                                 alternative="two-sided")  # fmt: skip
    return float(np.atleast_1d(d)[0]) * sd


def paired_differences(means: pd.Series, group: str) -> Iterator[tuple[Any, Any, Any, np.ndarray]]:
    """(group value, system, opponent, the per-sample differences system - opponent over the samples that have
    both) of every pair of systems, in name order. ``means`` is each (group, task_key, system)'s mean value."""
    for value, wide in cells.wide(means, group, "system"):  # each group's samples x systems
        for system, opponent in itertools.combinations(natural(wide.columns), 2):
            both = wide[[system, opponent]].dropna()
            # Rounded: float noise in means of a few values would split ties and zeros.
            yield value, system, opponent, np.round((both[system] - both[opponent]).to_numpy(), 9)


def paired_tests(means: pd.Series, group: str) -> pd.DataFrame:
    """Wilcoxon signed-rank between every pair of systems (name order) over samples, Holm across the pairs of
    a ``group`` value. ``means`` is each (group, task_key, system)'s mean value."""
    rows = []
    for value, system, opponent, diff in paired_differences(means, group):
        p = wilcoxon(diff).pvalue if (diff != 0).any() else np.nan
        sd = float(np.std(diff, ddof=1)) if len(diff) > 1 else np.nan
        rows.append([value, system, opponent, len(diff), float(diff.mean()) if len(diff) else np.nan,
                     int((diff > 0).sum()), int((diff < 0).sum()), float(p), np.nan, sd])  # fmt: skip
    columns = [group, "system", "opponent", "samples", "mean difference", "samples system higher",
               "samples opponent higher", "p (Wilcoxon)", "p (Holm)", "sd of differences"]  # fmt: skip
    table = pd.DataFrame(rows, columns=columns)
    for _, part in table.groupby(group, sort=False, observed=True):
        tested = part[part["p (Wilcoxon)"].notna()]
        if len(tested):
            table.loc[tested.index, "p (Holm)"] = multipletests(tested["p (Wilcoxon)"], method="holm")[1]
    return table


def rank_biserial(diff: np.ndarray) -> float:
    """The matched-pairs rank-biserial correlation of paired differences (zeros dropped): the share of the
    signed-rank sum that is positive minus the share that is negative, from -1 to 1 (Kerby 2014)."""
    nonzero = diff[diff != 0]
    if not len(nonzero):
        return np.nan
    ranks = rankdata(np.abs(nonzero))
    return float((ranks[nonzero > 0].sum() - ranks[nonzero < 0].sum()) / ranks.sum())


def with_effects(tests: pd.DataFrame, means: pd.Series, group: str, reps: int, seed: int,
                 stream: int, bounds: tuple[float, float] | None = None) -> pd.DataFrame:  # fmt: skip
    """:func:`paired_tests`' table with :data:`EFFECT_COLUMNS` after its mean difference: the difference's 95%
    interval and the rank-biserial correlation, so no p stands without an effect and its interval. ``bounds``: the
    range of a sample's value (a rating scale's, ranks', scores'); with it the interval is the betting interval of
    the per-sample differences, which lie within plus or minus the range's width
    (:func:`annols.analysis.inference.intervals.betting`: it holds with few samples and at a ceiling, and never has zero
    width); without it, the percentile bootstrap resampling the samples (``default_rng([seed, stream, pair
    index])``; nan without resamples)."""
    effects = []
    for i, (*_, diff) in enumerate(paired_differences(means, group)):
        if bounds is not None and reps > 0 and len(diff):  # no resamples: no intervals (as the simulations ask)
            width = bounds[1] - bounds[0]
            interval = intervals.betting(diff, -width, width, seed=seed)
        else:
            units = np.column_stack([diff, np.ones(len(diff))])
            interval = bootstrap.ratio(units, reps, np.random.default_rng([seed, stream, i]))
        effects.append([*interval, rank_biserial(diff)])
    found = pd.DataFrame(effects, index=tests.index, columns=EFFECT_COLUMNS, dtype=float)
    at = list(tests.columns).index("mean difference") + 1
    columns = [*tests.columns[:at], *EFFECT_COLUMNS, *tests.columns[at:]]
    return pd.concat([tests, found], axis=1)[columns]


def _text(x: float, unit: str) -> str:
    if math.isinf(x):
        return "nothing at this size: too few units for the test to reject"
    return f"{x:.4g}{unit}"


def conclusion(p: float, difference: float, better: str, worse: str, detectable: float, unit: str,
               alpha: float = ALPHA) -> str:  # fmt: skip
    """The words for one comparison: who is better when significant after the correction, else inconclusive."""
    if p == p and p < alpha:
        return f"{better} better than {worse} (p corrected = {p:.2g})"
    if math.isnan(detectable):
        return f"{INCONCLUSIVE} (too few units to say what it could detect)"
    if math.isinf(detectable):
        return f"{INCONCLUSIVE} (could detect {_text(detectable, unit)})"
    return f"{INCONCLUSIVE} (could detect ≥ {_text(detectable, unit)})"


def pairwise_family(frame: pd.DataFrame) -> list[str]:
    """The columns that make one Holm family of pairwise sign tests: the aspects of a pair of systems; with more
    than two systems, every pair of an aspect (all pairwise tests of a question form one family)."""
    return ["aspect"] if len(set(frame["system"]) | set(frame["opponent"])) > 2 else ["system", "opponent"]


def pairwise_table(sign_test: pd.DataFrame, alpha: float = ALPHA, power: float = POWER) -> pd.DataFrame:
    """From the pairwise sign-test table (:func:`annols.analysis.inference.item_tests.sign_test`): each pair and
    aspect's difference, detectable difference (:func:`items_detectable`: units are the decided items), conclusion."""
    rows = []
    family = sign_test.groupby(pairwise_family(sign_test), observed=True)["p (sign test)"].transform("count")
    for (_, row), m in zip(sign_test.iterrows(), family, strict=True):
        won, lost = int(row["items won"]), int(row["items lost"])
        decided = won + lost
        m = max(int(m), 1)
        per_item = max(1, round(row["judgments"] / row["items"]))  # judgments per item, the mean rounded
        tie_rate = row["ties"] / row["judgments"]
        x = 100 * items_detectable(decided, tie_rate, per_item, alpha / m, power) if decided else math.nan
        diff = float(row["win - loss %"])
        better, worse = (row["system"], row["opponent"]) if won >= lost else (row["opponent"], row["system"])
        p = float(row["p (Holm)"])
        rows.append([row["aspect"], row["system"], row["opponent"], "sign test over items",
                     "win - loss % of decided", decided, diff, row["CI low %"], row["CI high %"], p, m, x,
                     conclusion(p, diff, better, worse, x, " points", alpha)])  # fmt: skip
    return pd.DataFrame(rows, columns=COLUMNS)


def paired_table(tests: pd.DataFrame, group: str, measure: str, lower_better: bool = False,
                 alpha: float = ALPHA, power: float = POWER) -> pd.DataFrame:  # fmt: skip
    """From a paired-test table (:func:`paired_tests` or the ratings' own with ``sd of differences``)."""
    rows = []
    family = tests.groupby(group, observed=True)["p (Wilcoxon)"].transform("count")
    for (_, row), m in zip(tests.iterrows(), family, strict=True):
        m = max(int(m), 1)
        n, diff = int(row["samples"]), float(row["mean difference"])
        x = paired_detectable(n, float(row["sd of differences"]), alpha / m, power)
        first_better = (diff < 0) if lower_better else (diff > 0)
        better, worse = (row["system"], row["opponent"]) if first_better else (row["opponent"], row["system"])
        p = float(row["p (Holm)"])
        low, high = (row["CI low"], row["CI high"]) if "CI low" in row else (np.nan, np.nan)
        rows.append([row[group], row["system"], row["opponent"], "Wilcoxon signed-rank", measure, n, diff, low, high,
                     p, m, x, conclusion(p, diff, better, worse, x, "", alpha)])  # fmt: skip
    return pd.DataFrame(rows, columns=COLUMNS)


# ----------------------------------------------------------------------------- the items' sign test


@cache
def item_outcomes(q: float, tie_rate: float, k: int) -> tuple[float, float]:
    """P(an item of k independent judgments is won), P(it is lost): net wins - losses above / below 0."""
    win, loss, tie = (1 - tie_rate) * q, (1 - tie_rate) * (1 - q), tie_rate
    above = below = 0.0
    for w in range(k + 1):
        for lo in range(k - w + 1):
            pmf = math.comb(k, w) * math.comb(k - w, lo) * win**w * loss**lo * tie ** (k - w - lo)
            above += pmf if w > lo else 0.0
            below += pmf if w < lo else 0.0
    return above, below


def directed_power(decided: int, q_item: float, alpha: float) -> float:
    """P(the sign test over ``decided`` items rejects with more items won) when an item is won w.p. ``q_item``."""
    k = sign_test_region(decided, alpha)
    return float(binom.sf(decided - k - 1, decided, q_item)) if k >= 0 else 0.0


def items_sign_test_power(decided_items: int, effect: float, tie_rate: float, per_item: int, alpha: float) -> float:
    """Directed power of the items' sign test on ``decided_items`` items of ``per_item`` judgments each."""
    above, below = item_outcomes((1 + effect) / 2, tie_rate, per_item)
    return directed_power(decided_items, above / (above + below), alpha) if above + below else 0.0


def items_detectable(decided_items: int, tie_rate: float, per_item: int, alpha: float,
                         power: float = POWER) -> float:  # fmt: skip
    """The smallest effect (wins - losses as a share of decided judgments, 0..1) the items' sign test finds with
    the given power on ``decided_items`` decided items; inf when none can."""
    if items_sign_test_power(decided_items, 1.0, tie_rate, per_item, alpha) < power:
        return math.inf
    return float(optimize.brentq(lambda e: items_sign_test_power(decided_items, e, tie_rate, per_item, alpha) - power,
                                 0.0, 1.0, xtol=1e-10))  # fmt: skip


def items_exact_power(items: int, effect: float, tie_rate: float, per_item: int, alpha: float) -> float:
    """Directed power with independent judgments over every count of decided items: decided ~ Bin(items, P(decided))."""
    above, below = item_outcomes((1 + effect) / 2, tie_rate, per_item)
    if not above + below:
        return 0.0
    d = np.arange(items + 1)
    return float(binom.pmf(d, items, above + below) @ [directed_power(int(n), above / (above + below), alpha)
                                                      for n in d])  # fmt: skip


# ----------------------------------------------------------------------------- annotators as sampled (min F')

SAMPLED_DRAWS = 4000  # fixed draws of the two mean squares: the power is a smooth, repeatable function


@cache
def _chi2(df: float) -> np.ndarray:
    return np.random.default_rng(0).chisquare(df, SAMPLED_DRAWS) / df


def sampled_power(effect: float, items: float, annotators: float, item_var: float, annotator_var: float,
                  residual_var: float, alpha: float) -> float:  # fmt: skip
    """Power towards the better system of min F' (:func:`annols.analysis.inference.item_tests.crossed_p`) on a complete
    items x annotators design of normal cells: cell = effect + item + annotator + residual. The mean is normal
    with variance (k s_i + n s_a + s_e) / (n k); the two mean squares are independent scaled chi-squares,
    MS_items ~ (k s_i + s_e) chi2(n - 1) / (n - 1), MS_annotators ~ (n s_a + s_e) chi2(k - 1) / (k - 1); the test
    rejects upwards when mean > sqrt(F(1 - alpha; 1, df) (MS_items + MS_annotators) / (n k)). The expectation
    over the mean squares is taken on fixed draws."""
    n, k = items, annotators
    if n < 2 or k < 2:
        return 0.0
    df = min(round(n), round(k)) - 1
    spread = (k * item_var + n * annotator_var + residual_var) / (n * k)
    squares = (k * item_var + residual_var) * _chi2(n - 1) + (n * annotator_var + residual_var) * _chi2(k - 1)
    bound = np.sqrt(f_dist.isf(alpha, 1, df) * squares / (n * k))
    if spread <= 0:
        return float((effect > bound).mean())
    return float(norm.cdf((effect - bound) / math.sqrt(spread)).mean())


def sampled_detectable(items: float, annotators: float, item_var: float, annotator_var: float, residual_var: float,
                       alpha: float, power: float = POWER) -> float:  # fmt: skip
    """The smallest effect min F' finds with the given power (:func:`sampled_power`); nan where there is no
    spread to scale it by, inf where too few items or annotators to reject."""
    if items < 2 or annotators < 2:
        return math.inf
    scale = math.sqrt(item_var + annotator_var + residual_var)
    if not scale > 0:
        return math.nan

    def short(e: float) -> float:
        return sampled_power(e, items, annotators, item_var, annotator_var, residual_var, alpha) - power

    high = scale
    while short(high) < 0 and high < 1e6 * scale:
        high *= 2
    return float(optimize.brentq(short, 0.0, high, xtol=1e-9 * scale)) if short(high) >= 0 else math.inf
