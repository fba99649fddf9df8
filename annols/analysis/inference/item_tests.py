"""Tests with the item as the unit: the pairwise sign test over items and its power; a crossed test for plans.

An item's judgments are combined before any test: the annotators who judged one item make
one observation of that item, never several independent ones (three annotators who agree
on an item say 20 won against 10 lost over 30 items, not 60 against 30).

- Pairwise (:func:`sign_test`): per item, its net preference, wins minus losses over its
  judgments; the exact two-sided sign test (``scipy.stats.binomtest``, p = 1/2) of the items
  won (net > 0) against the items lost (net < 0), items even (net = 0) set aside; Holm's
  correction across the aspects of each system pair (with more than two systems, across
  every pair of an aspect: :func:`annols.analysis.inference.detectable.pairwise_family`). Effect size: wins minus losses
  as a share of the decided judgments (the report's win / loss measure), with its 95% betting
  interval of the ratio with the item as the unit (:func:`annols.analysis.inference.intervals.betting_ratio`).
- Its power (:func:`annols.analysis.inference.detectable.items_sign_test_power`, and the detectable
  difference ``items_detectable``): with independent judgments, each a tie with probability t,
  else a win with probability q, an item of k judgments is won, lost or even with
  probabilities from the trinomial; the exact binomial power over the decided items counts
  only rejections in the direction of the effect. The effect is 2q - 1, the same measure as
  the effect size above.
- Crossed test (:func:`min_f_prime`): the mean of a balanced items x annotators table of
  differences tested with both items and annotators random, by Clark's (1973) min F' on
  min(items, annotators) - 1 degrees of freedom, a conservative quasi-F: the result that
  generalises to new annotators as well as new items.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]
from scipy.stats import binomtest, f
from statsmodels.stats.multitest import multipletests

from annols.analysis.inference import detectable, intervals

PAIR = ["aspect", "system", "opponent"]
SCORE = {"win": 1, "tie": 0, "loss": -1}
COLUMNS = [*PAIR, "items", "items won", "items lost", "items even", "judgments", "ties", "win - loss %",
           "CI low %", "CI high %", "p (sign test)", "p (Holm)"]  # fmt: skip


def item_nets(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (aspect, system, opponent, task_key) of the preference rows: judgments, ties, decided and net."""
    score = frame["outcome"].astype(str).map(SCORE).to_numpy()
    parts = frame[[*PAIR, "task_key"]].assign(net=score, decided=score != 0, ties=score == 0, judgments=1)
    # The keys keep their types: aspects in the definition's order (categorical), as the win / tie / loss table.
    return parts.groupby([*PAIR, "task_key"], observed=True, sort=True).sum()


def sign_test(frame: pd.DataFrame, reps: int = 0, seed: int = 0) -> pd.DataFrame:
    """:data:`COLUMNS` per aspect and system pair of the preference rows
    (:func:`annols.analysis.by_style.pairwise.judgments`); ``reps`` 0 leaves the effect's interval out (the report's
    --bootstrap 0), ``seed`` seeds its orders."""
    nets = item_nets(frame)
    rows = []
    for key, part in nets.groupby(level=PAIR, sort=False):
        net = part["net"].to_numpy()
        won, lost = int((net > 0).sum()), int((net < 0).sum())
        decided = int(part["decided"].sum())
        p = binomtest(won, won + lost).pvalue if won + lost else np.nan
        # the betting interval of the ratio net / decided with the item as the unit (few items, a ceiling, never a
        # point); reps 0 (--bootstrap 0) leaves it out
        low, high = (intervals.betting_ratio(net, part["decided"].to_numpy(), -1.0, 1.0, seed=seed)
                     if decided and reps > 0 else (np.nan, np.nan))  # fmt: skip
        share = net.sum() / decided if decided else np.nan
        rows.append([*key, len(net), won, lost, len(net) - won - lost, int(part["judgments"].sum()),
                     int(part["ties"].sum()), 100 * share, 100 * low, 100 * high, float(p), np.nan])  # fmt: skip
    table = pd.DataFrame(rows, columns=COLUMNS)
    for _, part in table.groupby(detectable.pairwise_family(table), sort=False, observed=True):
        tested = part[part["p (sign test)"].notna()]
        if len(tested):
            table.loc[tested.index, "p (Holm)"] = multipletests(tested["p (sign test)"], method="holm")[1]
    for column in ("items", "items won", "items lost", "items even", "judgments", "ties"):
        table[column] = table[column].astype(int)
    return table


def crossed_p(mean: Any, var_items: Any, n: int, var_annotators: Any, k: int) -> tuple[Any, Any]:
    """Clark's min F' from a mean, the variance of the item means over ``n`` items and of the annotator means over
    ``k`` annotators: (p, standard error). min F' = mean^2 / (var_items / n + var_annotators / k) on 1 and
    min(n, k) - 1 degrees of freedom (see :func:`min_f_prime`); p is 1 where the mean is 0."""
    se = np.sqrt(var_items / n + var_annotators / k)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(np.asarray(mean) ** 2 > 0, f.sf(np.asarray(mean) ** 2 / se**2, 1, min(n, k) - 1), 1.0)
    return p, se


def min_f_prime(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Clark's min F' for the mean of ``y`` (..., items, annotators) being 0, items and annotators random.

    F1 tests the mean against the items' mean square (annotators fixed), F2 against the annotators' (items
    fixed); min F' = F1 F2 / (F1 + F2) = n k mean^2 / (MS items + MS annotators), whose denominator over-counts
    the residual, on 1 and min(n, k) - 1 degrees of freedom: Clark's Satterthwaite degrees of freedom swing to
    n - 1 when a one- or two-degree annotators' mean square is small by chance, and then reject too often with
    two or three annotators (seen in simulation), so the smaller is taken: conservative. Returns (p, mean); p is
    nan with fewer than two items or annotators. The report's unbalanced form:
    :mod:`annols.analysis.inference.sampled`."""
    n, k = y.shape[-2], y.shape[-1]
    mean = y.mean(axis=(-2, -1))
    if n < 2 or k < 2:
        return np.full(mean.shape, np.nan), mean
    p, _ = crossed_p(mean, y.mean(axis=-1).var(axis=-1, ddof=1), n, y.mean(axis=-2).var(axis=-1, ddof=1), k)
    return np.asarray(p), mean
