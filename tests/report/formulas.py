"""Independent, plain-Python versions of the report's statistics, straight from their definitions.

No numpy, statsmodels or krippendorff here: these are the tests' own computations. Each
is checked against a worked textbook example in test_stats.py before the study tests
use it to compute expected values.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence
from itertools import permutations


def fleiss_kappa(table: Sequence[Sequence[int]]) -> float:
    """Fleiss (1971): subjects x categories counts, n raters per subject."""
    subjects = len(table)
    n = sum(table[0])
    p_i = [(sum(c * c for c in row) - n) / (n * (n - 1)) for row in table]
    p_bar = sum(p_i) / subjects
    p_j = [sum(row[j] for row in table) / (subjects * n) for j in range(len(table[0]))]
    p_e = sum(p * p for p in p_j)
    return (p_bar - p_e) / (1 - p_e)


def cohens_kappa(pairs: Sequence[tuple[Hashable, Hashable]]) -> float:
    """Cohen (1960) from (rater 1, rater 2) labels of the same items."""
    n = len(pairs)
    p_o = sum(a == b for a, b in pairs) / n
    first, second = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    p_e = sum(first[c] * second[c] for c in first) / (n * n)
    return (p_o - p_e) / (1 - p_e) if p_e != 1 else math.nan


def weighted_kappa(pairs: Sequence[tuple[float, float]]) -> float:
    """Cohen (1968) quadratic-weighted, weights (a - b)^2 from the values: 1 - mean observed weight over the
    mean weight of every (rater 1 value, rater 2 value) combination."""
    n = len(pairs)
    observed = sum((a - b) ** 2 for a, b in pairs) / n
    expected = sum((a - b) ** 2 for a, _ in pairs for _, b in pairs) / (n * n)
    return 1 - observed / expected if expected else math.nan


def _coincidences(units: Sequence[Sequence[Hashable]]) -> dict[tuple[Hashable, Hashable], float]:
    o: dict[tuple[Hashable, Hashable], float] = {}
    for values in units:
        m = len(values)
        if m < 2:
            continue
        for i, j in permutations(range(m), 2):
            key = (values[i], values[j])
            o[key] = o.get(key, 0.0) + 1 / (m - 1)
    return o


def krippendorff_alpha(units: Sequence[Sequence[Hashable]], level: str = "nominal",
                       order: Sequence[Hashable] = ()) -> float:  # fmt: skip
    """Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability": units = the values each got."""
    o = _coincidences(units)
    values = list(order) if order else sorted({c for c, _ in o}, key=str)
    n_c = {c: sum(o.get((c, k), 0.0) for k in values) for c in values}  # pairable values of each kind
    n = sum(n_c.values())

    def delta(c: Hashable, k: Hashable) -> float:
        if level == "nominal":
            return 0.0 if c == k else 1.0
        if level == "interval":
            return (float(str(c)) - float(str(k))) ** 2
        lo, hi = sorted((values.index(c), values.index(k)))
        between = sum(n_c[values[g]] for g in range(lo, hi + 1))
        return (between - (n_c[c] + n_c[k]) / 2) ** 2

    observed = sum(o.get((c, k), 0.0) * delta(c, k) for c in values for k in values)
    expected = sum(n_c[c] * n_c[k] * delta(c, k) for c in values for k in values) / (n - 1)
    return 1 - observed / expected


def midranks(ranks: Sequence[float]) -> list[float]:
    """Tied values share the mean of the places they occupy (3, 1, 1, 2 -> 4, 1.5, 1.5, 3)."""
    ordered = sorted(ranks)
    return [sum(i + 1 for i, v in enumerate(ordered) if v == r) / ordered.count(r) for r in ranks]


def kendall_w(rankings: Sequence[Sequence[float]]) -> float:
    """Kendall's W with the tie correction (Siegel & Castellan 1988): m raters x n objects."""
    m, n = len(rankings), len(rankings[0])
    mids = [midranks(r) for r in rankings]
    sums = [sum(r[i] for r in mids) for i in range(n)]
    s = sum((x - m * (n + 1) / 2) ** 2 for x in sums)
    t = sum(c**3 - c for r in mids for c in Counter(r).values())
    denominator = m * m * (n**3 - n) - m * t
    return 12 * s / denominator if denominator else math.nan


def bradley_terry_scores(strength: dict[str, float], wins: Counter[tuple[str, str]],
                         ties: Counter[frozenset[str]]) -> dict[str, float]:  # fmt: skip
    """The Bradley-Terry likelihood equations with a tie as half a win, at the given strengths: for each system,
    (wins + ties / 2) minus its expected wins, sum over opponents of n p_i / (p_i + p_j). Zero at the maximum."""
    systems = sorted(strength)
    score = dict.fromkeys(systems, 0.0)
    for i in systems:
        for j in systems:
            if i >= j:
                continue
            n = wins[(i, j)] + wins[(j, i)] + ties[frozenset((i, j))]
            pi, pj = strength[i], strength[j]
            score[i] += wins[(i, j)] + ties[frozenset((i, j))] / 2 - n * pi / (pi + pj)
            score[j] += wins[(j, i)] + ties[frozenset((i, j))] / 2 - n * pj / (pi + pj)
    return score
