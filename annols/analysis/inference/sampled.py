"""Annotators as sampled: the second result of a system comparison, for studies with five or more annotators.

The items' tests (:mod:`annols.analysis.inference.item_tests`,
:func:`annols.analysis.inference.detectable.paired_tests`) take the study's annotators as given: their result holds for
new items judged by these annotators. Where the same few annotators judge every item, each one's own preference between
two systems (an annotator x system interaction) adds up over the items and the items' test answers for them only. This
result treats the annotators as sampled too, so it holds for new items judged by new annotators.

- The unit of observation is a cell, one annotator's judgment of one item: pairwise, its outcome from the first
  system's side (1 win, 0 tie, -1 loss); ratings and own numeric questions, the first system's rating minus the
  second's; ranking, the rank difference; best-worst, the difference of the annotator's per-item scores (100 x
  (best - worst) / times shown in the item). An annotator's several judgments of one item are averaged first.
- The test: Clark's (1973) min F' (:func:`annols.analysis.inference.item_tests.crossed_p`), the cells' mean against
  var(item means) / items + var(annotator means) / annotators, on min(items, annotators) - 1 degrees of freedom.
  It is a closed form (cheap for 120 pairs) and conservative: it counts the residual twice, and its degrees of
  freedom are the smaller factor's. ``annols plan`` uses the same test for its power where it assumes annotator
  variance, so a plan and a report speak of one test. Null studies with an annotator x system interaction
  (``annols.analysis.planning.simulate.PANEL``) check its level.
- Effect size: the cells' mean (pairwise: as a share of the decided judgments, the items' result's measure) with
  the 95% interval mean ± t(0.975, df) x its standard error, the interval the test inverts.
- Holm's correction over the same family as the items' result.
- The detectable difference (:func:`detectable.sampled_detectable`): the smallest effect this test finds with
  power 0.8 at the corrected level, from the variance components the cells show (two-way mean squares).
- Fewer than :data:`MIN_ANNOTATORS` annotators: not given. With k annotators the test has at most k - 1 degrees
  of freedom; below four its critical t (3.18 at 3, 4.30 at 2, 12.7 at 1) leaves it next to powerless, and the
  annotators' variance cannot be told from noise.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]
from scipy.stats import t as student
from statsmodels.stats.multitest import multipletests

from annols.analysis import cells
from annols.analysis.inference import detectable, item_tests
from annols.analysis.naming import natural
from annols.analysis.results import Table

MIN_ANNOTATORS = 5
COLUMNS = ["system", "opponent", "items", "annotators", "difference", "CI low", "CI high", "df", "p (min F')",
           "p (Holm)", "detectable difference", "p (items, Holm)", "reading"]  # fmt: skip
NOTE = (
    "Annotators as sampled (Clark's min F', items and annotators both random): the result for new items judged "
    "by new annotators, beside the items' result (new items judged by these annotators). A cell is one "
    "annotator's judgment of one item; the difference is the cells' mean with its 95% interval (mean ± t x "
    "standard error, the interval the test inverts); df = min(items, annotators) - 1; p (Holm) over the same "
    "family as the items' test; the detectable difference has 80% power at the corrected level. Given only for "
    "pairs judged by {minimum} or more annotators."
)  # fmt: skip
NOT_GIVEN = (
    "Annotators as sampled: not given, as at most {most} distinct annotator(s) judged any compared pair ({minimum} "
    "or more are needed: with k annotators the test has k - 1 degrees of freedom, too few below four to reject "
    "anything but a very large difference). The result above holds for new items judged by these annotators."
)  # fmt: skip


@dataclass(frozen=True)
class Crossed:
    items: int
    annotators: int
    mean: float
    se: float
    df: int
    p: float
    item_var: float  # variance components of a cell (two-way mean squares, clipped at 0)
    annotator_var: float
    residual_var: float


def crossed(item: np.ndarray, annotator: np.ndarray, y: np.ndarray) -> Crossed:
    """Min F' of cells ``y`` with their item and annotator labels; several values of one cell are averaged."""
    frame = pd.DataFrame({"item": item, "annotator": annotator, "y": y})
    cell = frame.groupby(["item", "annotator"], sort=False, observed=True)["y"].mean().reset_index()
    n, k = cell["item"].nunique(), cell["annotator"].nunique()
    if n < 2 or k < 2:
        return Crossed(n, k, float(cell["y"].mean()) if len(cell) else math.nan, math.nan, 0, math.nan, *(0.0,) * 3)
    values = cell["y"].to_numpy(dtype=float)
    mean = float(values.mean())
    by_item = cell.groupby("item", sort=False, observed=True)["y"].transform("mean").to_numpy()
    by_annotator = cell.groupby("annotator", sort=False, observed=True)["y"].transform("mean").to_numpy()
    item_means = cell.groupby("item", sort=False, observed=True)["y"].mean().to_numpy()
    annotator_means = cell.groupby("annotator", sort=False, observed=True)["y"].mean().to_numpy()
    var_items, var_annotators = float(item_means.var(ddof=1)), float(annotator_means.var(ddof=1))
    p, se = item_tests.crossed_p(mean, var_items, n, var_annotators, k)
    # Components by the two-way mean squares of a complete design (approximate when some cells are missing).
    free = len(values) - n - k + 1
    residual = float(((values - by_item - by_annotator + mean) ** 2).sum() / free) if free > 0 else 0.0
    per_item, per_annotator = len(values) / n, len(values) / k
    return Crossed(n, k, mean, float(se), min(n, k) - 1, float(p), max(var_items - residual / per_item, 0.0),
                   max(var_annotators - residual / per_annotator, 0.0), residual)  # fmt: skip


def _detectable(c: Crossed, level: float) -> float:
    return detectable.sampled_detectable(c.items, c.annotators, c.item_var, c.annotator_var, c.residual_var, level)


def reading(p_items: float, p_sampled: float, annotators: int) -> str:
    """The two results in words."""
    if p_sampled != p_sampled:
        return f"not given: {annotators} annotator(s), {MIN_ANNOTATORS} or more needed"
    items, sampled = p_items < detectable.ALPHA, p_sampled < detectable.ALPHA
    if items and sampled:
        return "significant for new items and for new annotators"
    if items:
        return "significant for new items judged by these annotators, not for new annotators"
    if sampled:
        return "significant with annotators as sampled, not by the items' test: the two tests disagree, inconclusive"
    return "not significant for new items judged by these annotators, nor for new annotators"


def _rows(pairs: Iterator[tuple[tuple[Any, ...], np.ndarray, np.ndarray, np.ndarray, float]]) -> list[list[Any]]:
    """Each pair's key, cells (item, annotator, y) and measure scale: its figures before the correction."""
    rows = []
    for key, item, annotator, y, scale in pairs:
        c = crossed(item, annotator, y)
        given = c.annotators >= MIN_ANNOTATORS and c.p == c.p
        half = student.isf(0.025, c.df) * c.se if given else math.nan
        rows.append([*key, c.items, c.annotators, scale * c.mean, scale * (c.mean - half), scale * (c.mean + half),
                     c.df if given else pd.NA, c.p if given else math.nan, math.nan, c, scale])  # fmt: skip
    return rows


def _finish(rows: list[list[Any]], keys: list[str], family: list[str],
            items_p: pd.DataFrame | None) -> pd.DataFrame:  # fmt: skip
    """Holm over ``family``, the detectable difference at the corrected level, the items' p and the reading."""
    table = pd.DataFrame(rows, columns=[*keys, *COLUMNS[2:10], "_crossed", "_scale"])
    for _, part in table.groupby(family, sort=False, observed=True):
        tested = part[part["p (min F')"].notna()]
        if len(tested):
            table.loc[tested.index, "p (Holm)"] = multipletests(tested["p (min F')"], method="holm")[1]
    m = table.groupby(family, sort=False, observed=True)["p (min F')"].transform("count").clip(lower=1)
    table["detectable difference"] = [
        scale * _detectable(c, detectable.ALPHA / size) if p == p else math.nan
        for c, scale, size, p in zip(table["_crossed"], table["_scale"], m, table["p (min F')"], strict=True)
    ]
    if items_p is None:  # the second result alone (the null studies)
        table["p (items, Holm)"] = math.nan
    else:
        merged = table[keys].astype(str).merge(items_p.astype({k: str for k in keys}), on=keys, how="left")
        table["p (items, Holm)"] = merged["p (items, Holm)"].to_numpy(dtype=float)
    table["reading"] = [reading(a, b, int(k)) for a, b, k in
                        zip(table["p (items, Holm)"], table["p (Holm)"], table["annotators"], strict=True)]  # fmt: skip
    table["df"] = table["df"].astype("Int64")
    return table.drop(columns=["_crossed", "_scale"])


def pairwise(frame: pd.DataFrame, items: pd.DataFrame | None) -> pd.DataFrame:
    """From the preference rows (:func:`annols.analysis.by_style.pairwise.judgments`) and their items' sign-test table
    (:func:`annols.analysis.inference.item_tests.sign_test`): per aspect and pair, the cells' mean outcome (1 win, 0
    tie, -1 loss) in the items' measure, wins - losses as a share of the decided judgments (%)."""
    keys = item_tests.PAIR

    def pairs() -> Iterator[tuple[tuple[Any, ...], np.ndarray, np.ndarray, np.ndarray, float]]:
        if frame["annotator"].nunique() < MIN_ANNOTATORS:
            return
        score = frame["outcome"].astype(str).map(item_tests.SCORE)
        for key, part in frame.assign(y=score).groupby(keys, observed=True, sort=True):
            y = part["y"].to_numpy(dtype=float)
            decided = int((y != 0).sum())
            n_cells = len(part.drop_duplicates(["task_key", "annotator"]))
            # The cells' mean outcome over the judgments' share decided: the items' measure (one judgment a cell).
            scale = 100 * n_cells / decided if decided else math.nan
            yield key, part["task_key"].to_numpy(), part["annotator"].to_numpy(), y, scale

    return _finish(_rows(pairs()), keys, detectable.pairwise_family(frame) if len(frame) else ["aspect"],
                   _items_p(items, keys))


def paired(values: pd.DataFrame, group: str, items: pd.DataFrame | None, column: str = "value",
           item: str = "task_key") -> pd.DataFrame:  # fmt: skip
    """From per-judgment values (``group``, ``item``, annotator, system, ``column``) and the items' paired tests
    (:func:`annols.analysis.inference.detectable.paired_tests`): per ``group`` value and pair of systems (natural
    order), the cells' mean difference, system minus opponent."""

    def pairs() -> Iterator[tuple[tuple[Any, ...], np.ndarray, np.ndarray, np.ndarray, float]]:
        for (value,), part in cells.groups(values, [group]):  # slices of sorted rows: no 150 MB of groupby index
            if part["annotator"].nunique() < MIN_ANNOTATORS:
                continue
            cell_means = part.groupby([item, "annotator", "system"], observed=True)[column].mean()
            wide = cell_means.unstack("system")
            for system, opponent in _pairs(wide.columns):
                both = wide[[system, opponent]].dropna()
                diff = np.round((both[system] - both[opponent]).to_numpy(dtype=float), 9)
                yield ((value, system, opponent), both.index.get_level_values(0).to_numpy(),
                       both.index.get_level_values(1).to_numpy(), diff, 1.0)  # fmt: skip

    keys = [group, "system", "opponent"]
    return _finish(_rows(pairs()), keys, [group], _items_p(items, keys))


def _items_p(items: pd.DataFrame | None, keys: list[str]) -> pd.DataFrame | None:
    return None if items is None else items[keys].assign(**{"p (items, Holm)": items["p (Holm)"]})


def _pairs(columns: pd.Index) -> Iterator[tuple[Any, Any]]:
    names = natural(columns)
    for i, system in enumerate(names):
        for opponent in names[i + 1 :]:
            yield system, opponent


def most_annotators(values: pd.DataFrame, group: str) -> int:
    """The most distinct annotators of any ``group`` value: whether the second result can be given at all."""
    # a group at a time, as slices of sorted rows: a groupby of 4.8 million rows held 150 MB of index arrays
    return max((int(part["annotator"].nunique()) for _, part in cells.groups(values, [group])), default=0)


def text(table: pd.DataFrame, most: int, compared: bool) -> list[str]:
    """The paragraph beside the table, or why there is none; nothing where no pair of systems was compared."""
    if len(table) and table["p (min F')"].notna().any():
        return [NOTE.format(minimum=MIN_ANNOTATORS)]
    return [NOT_GIVEN.format(most=most, minimum=MIN_ANNOTATORS)] if compared else []


def table(name: str, found: pd.DataFrame, most: int, measure: str,
          items: pd.DataFrame) -> tuple[list[Table], list[str]]:  # fmt: skip
    """The report's table ``<name>_annotators_sampled`` (none where no pair had enough annotators) and its
    paragraph; ``measure``: what the difference is in; ``items``: the items' tests it stands beside."""
    given = len(found) and found["p (min F')"].notna().any()
    title = f"Annotators as sampled: min F' over items and annotators ({measure}), Holm as the items' test"
    return ([Table(f"{name}_annotators_sampled", title, found)] if given else []), text(found, most, len(items) > 0)
