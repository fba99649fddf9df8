"""Intervals on every ranking: each system's rank with a 95% interval, and letters grouping the systems the tests
cannot tell apart.

- Rank intervals: per question, the items are resampled with replacement (the bootstrap of
  :func:`annols.analysis.inference.bootstrap.means`, ``default_rng([seed, 3, question
  index])``); in each resample the systems are ranked by their score (1 is best, tied
  systems share the best of their ranks); a system's interval is the 2.5th and 97.5th
  percentile of its ranks, rounded outwards to whole ranks. Where the score's range is known (ratings, ranking,
  best-worst), the conclusions' rank interval is instead the set of ranks that the betting intervals of every
  pair's paired differences over items allow (:func:`rank_sets`, :func:`paired_apart`; Bonferroni over the pairs):
  the bootstrap's covered the true rank 0.875 at 10 items on a ceiling plant. Pairwise studies rank by
  Bradley-Terry strength (:func:`bradley_terry`), the others by the mean score of
  :data:`annols.analysis.leaderboard.reliability.SCORES` (best-worst:
  :func:`annols.analysis.leaderboard.reliability.best_worst_scores`).
- Letters (compact letter display): the systems, best first, get letters by the
  insert-absorb algorithm of Piepho (2004), "An algorithm for a letter-based representation
  of all-pairwise comparisons", J. Computational and Graphical Statistics 13(2): two systems
  share a letter unless their test, corrected by Holm across every pair of the question,
  is significant at 0.05.
- Bradley-Terry with ties by choix (``choix.ilsr_pairwise_dense``: the maximum-likelihood
  estimate by iterative Luce spectral ranking, Maystre & Grossglauser 2015, regularised by
  :data:`BT_ALPHA`): choix is maintained, already used for best-worst, and its dense form
  takes a matrix of (possibly fractional) win counts, so a fit costs a few small matrix
  operations whatever the number of judgments, which a bootstrap of a thousand fits needs.
  choix has no tie parameter (Davidson's model, which annols fitted by hand before), so a
  tie counts as half a win for each system, as Chatbot Arena counts them (Chiang et al.
  2024). Strengths are exp(theta) / sum exp(theta) (they sum to 1). Their intervals are the least and most each
  strength can be within the pairs' simultaneous betting intervals of win shares (:func:`bt_bounds`): the
  percentile bootstrap they had covered 0.54-0.71 at 10 items where a system often never lost. The ranks'
  intervals resample the items (``default_rng([seed, 4, aspect index])``).
"""

from __future__ import annotations

import string
from collections.abc import Iterable
from typing import Any

import choix  # type: ignore[import-untyped, unused-ignore]
import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]
from scipy.stats import rankdata

from annols.analysis import cells
from annols.analysis.inference import bootstrap, detectable, intervals
from annols.analysis.naming import natural

LEVEL = 0.95
BT_ALPHA = 0.01  # choix's regularisation (a pseudo-comparison rate per pair): finite when a system never lost
MAX_ITER = 10_000
RANK_COLUMNS = ["rank", "rank low", "rank high", "group"]


def letters(order: list[str], different: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Piepho's (2004) insert-absorb letters: ``order`` the systems best first, ``different`` the pairs whose
    corrected test is significant. Each column is a set of systems none of which differ; a significant pair
    splits every column holding both into one without each (insert), and a column inside another is dropped
    (absorb). Columns are lettered a, b, ... by their best system, so the best system has "a"."""
    at = {s: i for i, s in enumerate(order)}
    columns: list[frozenset[str]] = [frozenset(order)] if order else []
    for i, j in sorted((tuple(sorted(p, key=at.__getitem__)) for p in different), key=lambda p: (at[p[0]], at[p[1]])):
        split: list[frozenset[str]] = []
        for column in columns:
            split += [column - {i}, column - {j}] if i in column and j in column else [column]
        columns = _absorbed(split)
    columns.sort(key=lambda c: sorted(at[s] for s in c))
    names = [_letter(k) for k in range(len(columns))]
    return {s: "".join(n for n, c in zip(names, columns, strict=True) if s in c) for s in order}


def _absorbed(columns: list[frozenset[str]]) -> list[frozenset[str]]:
    """The columns without any that another column contains (of equal ones, the first stays)."""
    out = []
    for k, column in enumerate(columns):
        inside = any(column < other or (column == other and m < k) for m, other in enumerate(columns) if m != k)
        if column and not inside:
            out.append(column)
    return out


def _letter(k: int) -> str:
    alphabet = string.ascii_lowercase + string.ascii_uppercase
    return alphabet[k] if k < len(alphabet) else f"[{k + 1}]"


def ranks(values: np.ndarray) -> np.ndarray:
    """Competition ranks of the last axis, 1 for the highest value; nan values rank last."""
    values = np.where(np.isnan(values), -np.inf, values)
    return rankdata(-values, method="min", axis=-1)


def rank_intervals(full: np.ndarray, resampled: np.ndarray, level: float = LEVEL) -> tuple[np.ndarray, ...]:
    """Each system's rank in ``full`` and the percentile interval of its ranks over the rows of ``resampled``
    (resamples x systems; rows with a nan are left out), rounded outwards to whole ranks."""
    rank = ranks(np.asarray(full, dtype=float))
    kept = resampled[~np.isnan(resampled).any(axis=1)] if len(resampled) else resampled
    if not len(kept):
        return rank, np.full(len(rank), np.nan), np.full(len(rank), np.nan)
    tail = (1 - level) / 2 * 100
    drawn = ranks(kept)
    return rank, np.percentile(drawn, tail, axis=0, method="lower"), np.percentile(drawn, 100 - tail, axis=0,
                                                                               method="higher")  # fmt: skip


def significant_pairs(tests: pd.DataFrame, question: Any) -> list[tuple[str, str]]:
    """The (system, opponent) pairs of a question whose corrected p is below 0.05, from a ``detectable`` frame."""
    mine = tests[(tests["aspect"].astype(str) == str(question)) & (tests["p (corrected)"] < detectable.ALPHA)]
    return list(zip(mine["system"].astype(str), mine["opponent"].astype(str), strict=True))


def rank_sets(full: np.ndarray, apart: np.ndarray) -> tuple[np.ndarray, ...]:
    """Each system's rank in ``full`` and the set of ranks the simultaneous intervals of the pairs' differences
    allow: ``apart[i, j]`` is +1 where the interval of i - j lies wholly above 0, -1 wholly below, else 0. A system
    ranks from 1 + the systems surely better to K - the systems surely worse; if every pair's interval holds its
    true difference (jointly, with 95%), every true rank lies in its set."""
    rank = ranks(np.asarray(full, dtype=float))
    k = len(rank)
    above, below = (apart == -1).sum(axis=1), (apart == 1).sum(axis=1)
    return rank, (1 + above).astype(float), (k - below).astype(float)


def paired_apart(sums: np.ndarray, counts: np.ndarray, bounds: tuple[float, float], seed: int,
                 level: float = LEVEL) -> np.ndarray:  # fmt: skip
    """K x K: +1 / -1 / 0 as :func:`rank_sets` reads it, from the betting interval of each pair's per-item
    differences of means (items both were scored on; differences within plus or minus the range's width), each
    at ``1 - (1 - level) / pairs`` (Bonferroni over the K (K - 1) / 2 pairs). Nan (no interval): a pair with no
    common item, never apart."""
    k = sums.shape[1]
    width = bounds[1] - bounds[0]
    alpha = (1 - level) / max(k * (k - 1) // 2, 1)
    apart = np.zeros((k, k), dtype=int)
    with np.errstate(divide="ignore", invalid="ignore"):
        means = sums / counts
    for i in range(k):
        for j in range(i + 1, k):
            both = (counts[:, i] > 0) & (counts[:, j] > 0)
            if not both.any():
                continue
            low, high = intervals.betting(means[both, i] - means[both, j], -width, width, alpha, seed)
            sign = 1 if low > 0 else -1 if high < 0 else 0
            apart[i, j], apart[j, i] = sign, -sign
    return apart


def table(scores: pd.DataFrame, tests: pd.DataFrame, seed: int, reps: int,
          bounds: tuple[float, float] | None = None) -> pd.DataFrame:  # fmt: skip
    """Per question and system (best first): the mean score, its rank with the interval, and its letters.
    ``scores``: :data:`annols.analysis.leaderboard.reliability.SCORE_COLUMNS`; ``tests``: the ``detectable`` frame.
    ``bounds``: the range of a score (a rating scale's, ranks', best-worst's); with it the rank interval is
    :func:`rank_sets` of the pairs' betting intervals of their paired differences over items (:func:`paired_apart`, 95%
    jointly), which holds with few items and at a ceiling where the bootstrap of the ranks covered 0.875 at 10 items;
    without, the bootstrap of the ranks. ``reps`` 0: no interval."""
    rows = []
    for a, ((question,), part) in enumerate(cells.groups(scores, ["aspect"])):
        _, systems, sums, counts = cells.sums_and_counts(part, "task_key", "system", "score")
        if len(systems) < 2:
            continue
        with np.errstate(divide="ignore", invalid="ignore"):
            full = sums.sum(axis=0) / counts.sum(axis=0)
        names = [str(s) for s in systems]
        different = significant_pairs(tests, question)
        if bounds is not None and reps > 0:
            apart = paired_apart(sums, counts, bounds, seed)
            rows += _rows(names, str(question), rank_sets(full, apart), full, different)
            continue
        resampled = bootstrap.means(sums, counts, reps, np.random.default_rng([seed, 3, a]))
        rows += _rows(names, str(question), rank_intervals(full, resampled), full, different)
    return pd.DataFrame(rows, columns=["aspect", "system", "score", *RANK_COLUMNS])


def wide(long: pd.DataFrame) -> pd.DataFrame:
    """The long :func:`table` as one row per system (natural order) and one column per question, each cell
    "rank [low, high] letters": a 16-system study fits a page."""
    cells_ = [f"{r} [{_whole(lo)}, {_whole(hi)}] {g}" for r, lo, hi, g in
              zip(long["rank"], long["rank low"], long["rank high"], long["group"], strict=True)]  # fmt: skip
    frame = long.assign(cell=cells_).pivot(index="system", columns="aspect", values="cell")
    frame = frame.reindex(index=natural(long["system"]), columns=list(dict.fromkeys(long["aspect"])))
    return frame.rename_axis(index="system", columns=None).reset_index()


def _whole(x: float) -> str:
    return "" if x != x else str(int(x))


def _rows(systems: list[str], question: str, ranked: tuple[np.ndarray, ...], full: np.ndarray,
          different: list[tuple[str, str]]) -> list[list[Any]]:  # fmt: skip
    rank, low, high = ranked
    order = sorted(range(len(systems)), key=lambda k: (rank[k], natural(systems).index(systems[k])))
    groups = letters([systems[k] for k in order], different)
    return [[question, systems[k], float(full[k]), int(rank[k]), low[k], high[k], groups[systems[k]]] for k in order]


# ----------------------------------------------------------------------------- Bradley-Terry


def bt_fit(k: int, wins: np.ndarray, ties: np.ndarray) -> np.ndarray:
    """Bradley-Terry strengths (sum 1) of k systems by ``choix.ilsr_pairwise_dense`` on wins plus half the ties
    (``wins[i, j]``: i beat j; ``ties`` symmetric); nan without comparisons."""
    comparisons = np.asarray(wins, dtype=float) + np.asarray(ties, dtype=float) / 2
    if not comparisons.sum():
        return np.full(k, np.nan)
    theta = choix.ilsr_pairwise_dense(comparisons, alpha=BT_ALPHA, max_iter=MAX_ITER)
    strength = np.exp(theta - theta.max())
    return np.asarray(strength / strength.sum(), dtype=float)


def bt_bootstrap(items: np.ndarray, k: int, reps: int, rng: np.random.Generator) -> np.ndarray:
    """reps x k strengths, each fitted on a resample of the items. ``items`` is items x (k * k * 2): each
    item's wins matrix then its (symmetric) ties matrix, flattened."""
    n = len(items)
    if reps <= 0 or n == 0:
        return np.zeros((0, k))
    out = []
    chunk = max(1, bootstrap.CHUNK // n)
    for done in range(0, reps, chunk):
        for drawn in bootstrap._times(rng, n, min(chunk, reps - done)) @ items:
            wins, ties = drawn[: k * k].reshape(k, k), drawn[k * k :].reshape(k, k)
            out.append(bt_fit(k, np.rint(wins), np.rint(ties)))
    return np.asarray(out)


def bt_bounds(per_item: np.ndarray, seed: int, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """Simultaneous intervals of the k strengths (sum 1) from ``per_item`` (items x 2 x k x k: each item's wins
    matrix, then its symmetric ties matrix). Each compared pair's share of half-wins gets a betting interval of a
    ratio with the item as the unit (:func:`annols.analysis.inference.intervals.betting_ratio`, its orders
    drawn from ``seed``) at ``1 - level``
    over the number of compared pairs (Bonferroni); under the Bradley-Terry model p_ij = s_i / (s_i + s_j), so the
    intervals bound every compared difference of log strengths, ``logit(low) <= t_i - t_j <= logit(high)``. Those
    difference constraints are a graph (an edge u -> v of weight w for t_v - t_u <= w), and the largest t_m - t_k
    they allow is the shortest path from k to m (scipy's Floyd-Warshall); the shortest paths from k (to k) are
    one point of the set, so s_k is smallest at ``1 / (1 + sum exp(d[k, m]))`` and largest at
    ``1 / (1 + sum exp(-d[m, k]))``. Every strength is in [0, 1], so the interval is finite where the maximum
    likelihood estimate is not (a system that never lost). nan (no interval) where the pairs' intervals allow
    no strengths at all (a negative cycle: the judgments contradict the model)."""
    from scipy.sparse.csgraph import NegativeCycleError, csgraph_from_dense, floyd_warshall
    from scipy.special import logit

    k = per_item.shape[-1]
    wins, ties = per_item[:, 0], per_item[:, 1]
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k) if (wins[:, i, j] + wins[:, j, i] + ties[:, i, j]).any()]
    none = np.full(k, np.nan)
    if not pairs:
        return none, none
    bound = np.full((k, k), np.inf)  # bound[u, v]: the largest t_v - t_u allowed (inf: no edge)
    for i, j in pairs:
        den = wins[:, i, j] + wins[:, j, i] + ties[:, i, j]
        num = wins[:, i, j] + ties[:, i, j] / 2
        low, high = intervals.betting_ratio(num[den > 0], den[den > 0], 0.0, 1.0, (1 - level) / len(pairs), seed)
        bound[j, i], bound[i, j] = logit(high), -logit(low)
    try:
        d = floyd_warshall(csgraph_from_dense(bound, null_value=np.inf), directed=True)
    except NegativeCycleError:
        return none, none
    off = ~np.eye(k, dtype=bool)
    with np.errstate(over="ignore"):
        low = 1 / (1 + np.where(off, np.exp(d), 0).sum(axis=1))
        high = 1 / (1 + np.where(off, np.exp(-d), 0).sum(axis=0))
    return low, high


def no_strength_interval(table: pd.DataFrame) -> list[str]:
    """The line (for the section and the report's headline) naming the aspects whose strengths have no interval:
    the pairs' simultaneous intervals allow no Bradley-Terry strengths at all (:func:`bt_bounds`)."""
    if "strength CI low" not in table or not len(table):
        return []
    empty = table[table["strength"].notna() & table["strength CI low"].isna() & table["rank low"].notna()]
    aspects = list(dict.fromkeys(str(a) for a in empty["aspect"]))
    if not aspects:
        return []
    return [f"No strength interval for {', '.join(aspects)}: the pairs' 95% intervals of win shares allow no "
            "Bradley-Terry strengths at all (the judgments contradict the model), so no strength interval is "
            "printed; the strengths and ranks stand as fitted."]  # fmt: skip


def bradley_terry(frame: pd.DataFrame, aspects: list[str], tests: pd.DataFrame, seed: int,
                  reps: int) -> pd.DataFrame:  # fmt: skip
    """Per aspect and system (natural order): judgments, wins, ties, losses, the strength with its interval,
    the log strength (centred), the rank with its interval and the letters. ``frame``: the pairwise
    judgments (:func:`annols.analysis.by_style.pairwise.judgments`); ``tests``: its ``detectable`` frame."""
    rows = []
    for a, aspect in enumerate(aspects):
        part = frame[frame["aspect"] == aspect]
        systems = natural(set(part["system"]) | set(part["opponent"]))
        k = len(systems)
        if k < 2:
            continue
        at = {s: n for n, s in enumerate(systems)}
        keys, item = np.unique(part["task_key"].astype(str).to_numpy(), return_inverse=True)
        i, j = part["system"].map(at).to_numpy(dtype=np.int64), part["opponent"].map(at).to_numpy(dtype=np.int64)
        outcome = part["outcome"].to_numpy(dtype=object)
        per_item = np.zeros((len(keys), 2, k, k))
        for mask, first, second, layer in ((outcome == "win", i, j, 0), (outcome == "loss", j, i, 0),
                                           (outcome == "tie", i, j, 1), (outcome == "tie", j, i, 1)):  # fmt: skip
            np.add.at(per_item, (item[mask], layer, first[mask], second[mask]), 1)
        wins, ties = per_item.sum(axis=0)
        strength = bt_fit(k, wins, ties)
        drawn = bt_bootstrap(per_item.reshape(len(keys), -1), k, reps, np.random.default_rng([seed, 4, a]))
        low, high = bt_bounds(per_item, seed) if reps > 0 else (np.full(k, np.nan), np.full(k, np.nan))
        log = np.log(strength) - np.log(strength).mean()
        ranked = {r[1]: r[3:] for r in _rows(systems, aspect, rank_intervals(strength, drawn), strength,
                                             significant_pairs(tests, aspect))}  # fmt: skip
        for s, n in at.items():
            rows.append([aspect, s, int(wins[n].sum() + wins[:, n].sum() + ties[n].sum()), int(wins[n].sum()),
                         int(ties[n].sum()), int(wins[:, n].sum()), float(strength[n]), float(low[n]),
                         float(high[n]), float(log[n]), *ranked[s]])  # fmt: skip
    columns = ["aspect", "system", "judgments", "wins", "ties", "losses", "strength", "strength CI low",
               "strength CI high", "log strength", *RANK_COLUMNS]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)
