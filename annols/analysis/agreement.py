"""Agreement over units (an item, or one output or row of an item) rated by several annotators.

Every style's agreement table is built from the same two numbers per group of units:
Fleiss' kappa over the units with the most common number of ratings (it needs the same
number per unit) and Krippendorff's alpha over every unit with two or more. Where neither
can be computed, :func:`why_not` gives the sentence the report shows instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols.analysis import cells, stats
from annols.analysis.results import percent

ONE_ANNOTATOR = "each item has one annotator"
ONE_CATEGORY = "only one category was used"
NOTHING = "nothing was answered"
COLUMNS = ["units (alpha)", "Krippendorff alpha", "units (Fleiss)", "ratings per unit", "Fleiss kappa"]


def unit_counts(frame: pd.DataFrame, units: Sequence[str], value: str, categories: Sequence[Any]) -> np.ndarray:
    """Units x categories: how many ratings each unit got in each category (categories in the order given)."""
    if not len(frame):
        return np.zeros((0, len(categories)), dtype=np.int64)
    by_codes = cells.unit_counts(frame, units, value, categories)  # the same, with less memory
    if by_codes is not None:
        return by_codes
    counts = frame.groupby([*units, value], observed=True).size().unstack(value)
    return counts.reindex(columns=list(categories)).fillna(0).to_numpy(dtype=np.int64)


def why_not(counts: np.ndarray) -> str:
    """Why agreement over these units cannot be computed; "" when it can."""
    if not len(counts):
        return NOTHING
    pairable = counts[counts.sum(axis=1) >= 2]
    if not len(pairable):
        return ONE_ANNOTATOR
    if (pairable.sum(axis=0) > 0).sum() < 2:
        return ONE_CATEGORY
    return ""


def shared_reason(counts: Sequence[np.ndarray]) -> str:
    """Why no group's agreement can be computed, when every group lacks the data for it; else ""."""
    return shared_reason_of([why_not(c) for c in counts])


def shared_reason_of(found: Sequence[str]) -> str:
    """:func:`shared_reason` from each group's :func:`why_not`, when the counts are not kept."""
    if found and all(r in (ONE_ANNOTATOR, NOTHING) for r in found):
        return ONE_ANNOTATOR if ONE_ANNOTATOR in found else NOTHING
    return ""


def fleiss_and_alpha(counts: np.ndarray, level: str = "nominal", domain: Any = None,
                     fleiss: bool = True) -> list[Any]:  # fmt: skip
    """[units (alpha), alpha, units (Fleiss), ratings per unit, Fleiss kappa] (:data:`COLUMNS`)."""
    raters = counts.sum(axis=1) if len(counts) else np.zeros(0, dtype=np.int64)
    pairable = raters[raters >= 2]
    alpha = stats.krippendorff_alpha(counts, level, domain)
    if not fleiss or not len(pairable):
        return [len(pairable), alpha, 0, pd.NA, np.nan]
    common = int(np.bincount(pairable).argmax())
    full = counts[raters == common]
    return [len(pairable), alpha, len(full), common, stats.fleiss_kappa(full)]


def observed_and_chance(counts: np.ndarray) -> tuple[int, float, float, int, float]:
    """Units x categories rating counts: (units with two or more ratings, the share of agreeing pairs of
    ratings among them in %, Krippendorff's alpha (nominal), units with the most common number of ratings,
    Fleiss' kappa over those)."""
    raters = counts.sum(axis=1) if len(counts) else np.zeros(0)
    pairable = counts[raters >= 2]
    m = pairable.sum(axis=1)
    agree = percent((pairable * (pairable - 1)).sum(), (m * (m - 1)).sum())
    common = int(np.bincount(m.astype(int)).argmax()) if len(m) else 0
    full = pairable[m == common] if common else pairable[:0]
    return len(pairable), float(agree), stats.krippendorff_alpha(counts, "nominal"), len(full), stats.fleiss_kappa(full)


def interval_alpha(units: np.ndarray, values: np.ndarray) -> float:
    """Krippendorff's alpha with the interval metric, from each rating's unit (0..n-1) and value.

    ``krippendorff.alpha`` builds units x values x values arrays, values being the distinct
    numbers given: a slider's hundreds of values over thousands of units need gigabytes.
    With the metric (c - k)^2 the coincidence sums have a closed form (Krippendorff 2011):
    a unit's ordered pairs give sum (v_i - v_j)^2 = 2 (m S2 - S1^2) from its count m, sum
    S1 and sum of squares S2, so D_o = sum_u 2 (m_u S2_u - S1_u^2) / (m_u - 1) / n and
    D_e = 2 (n S2 - S1^2) / (n (n - 1)) over the n pairable values. Tested against
    ``krippendorff.alpha`` and a computation from the coincidences.
    """
    units = np.asarray(units, dtype=np.int64)
    values = np.asarray(values, dtype=float)
    m = np.bincount(units) if len(units) else np.zeros(0, dtype=np.int64)
    keep = m[units] >= 2
    units, values = units[keep], values[keep]
    values = values - values.mean() if len(values) else values  # alpha ignores a shift; sums stay small
    n = len(values)
    if n < 2:
        return np.nan
    m = np.bincount(units).astype(float)
    s1, s2 = np.bincount(units, values), np.bincount(units, values**2)
    pairable = m >= 2
    observed = (2 * (m[pairable] * s2[pairable] - s1[pairable] ** 2) / (m[pairable] - 1)).sum() / n
    expected = 2 * (n * (values**2).sum() - values.sum() ** 2) / (n * (n - 1))
    return float(1 - observed / expected) if expected > 0 else np.nan


def reasons(names: Sequence[str], counts: Sequence[np.ndarray]) -> list[str]:
    """One sentence per group whose agreement is undefined, naming the group and why."""
    return reasons_of(names, [why_not(c) for c in counts])


def reasons_of(names: Sequence[str], found: Sequence[str]) -> list[str]:
    """:func:`reasons` from each group's :func:`why_not`, when the counts are not kept."""
    return [f"{name}: no agreement statistic, {reason}." for name, reason in zip(names, found, strict=True) if reason]


def table_frame(rows: list[list[Any]], first: Sequence[str]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=[*first, *COLUMNS])
    frame["ratings per unit"] = frame["ratings per unit"].astype("Int64")
    return frame
