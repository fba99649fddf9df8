"""Best-worst analysis on planted answers: counting scores equal an independent count, the choice
model equals an independent fit of the same likelihood, split-half reliability tells consistent
annotators from random ones."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]
import pytest
from scipy.optimize import minimize

from annols.analysis.by_style import best_worst
from annols.styles.judgments import TIDY_COLUMNS, BestWorst, tidy

TRUTH = {f"item{i:02d}": float(i) for i in range(12)}  # item11 best, item00 worst


Answer = tuple[str, tuple[str, ...], int, int]


def planted(annotators: int, noise: float, seed: int = 1) -> tuple[pd.DataFrame, list[Answer]]:
    """Tuples of 4 of the 12 items, each answered by every annotator: best and worst by the true
    value plus Gaussian noise. Returns the tidy table and (task, systems, best, worst) per answer."""
    rng = random.Random(seed)
    items = list(TRUTH)
    answers = []
    rows = []
    uid = 0
    for t in range(36):
        systems = tuple(rng.sample(items, 4))
        for a in range(annotators):
            seen = [TRUTH[s] + rng.gauss(0, noise) for s in systems]
            best, worst = int(np.argmax(seen)), int(np.argmin(seen))
            answers.append((f"t{t}", systems, best, worst))
            for row in tidy([BestWorst("quality", systems, best, worst)]):
                rows.append([uid, f"t{t}", f"ann{a}", *row])
            uid += 1
    return pd.DataFrame(rows, columns=["uid", "task_key", "annotator", *TIDY_COLUMNS]), answers


def test_scores_equal_an_independent_count() -> None:
    frame, answers = planted(3, noise=3.0)
    shown = {s: 0 for s in TRUTH}
    best = dict.fromkeys(TRUTH, 0)
    worst = dict.fromkeys(TRUTH, 0)
    for _, systems, b, w in answers:
        for s in systems:
            shown[s] += 1
        best[systems[b]] += 1
        worst[systems[w]] += 1
    got = best_worst.scores(frame).set_index("system")
    for s in TRUTH:
        assert got.loc[s, "shown"] == shown[s]
        assert got.loc[s, "best"] == best[s] and got.loc[s, "worst"] == worst[s]
        assert got.loc[s, "score %"] == pytest.approx(100 * (best[s] - worst[s]) / shown[s])
    assert list(got.index[:1]) == ["item11"]  # the planted best item leads


def test_model_strengths_equal_an_independent_fit_of_the_implied_comparisons() -> None:
    frame, answers = planted(3, noise=3.0)
    names = sorted(TRUTH)
    index = {s: i for i, s in enumerate(names)}
    wins = []
    for _, systems, b, w in answers:
        for i, s in enumerate(systems):
            if i != b:
                wins.append((index[systems[b]], index[s]))
            if i not in (b, w):
                wins.append((index[s], index[systems[w]]))
    won = np.array(wins)

    def loss(theta: np.ndarray) -> float:  # Bradley-Terry log-likelihood with choix's L2 penalty
        return float(np.sum(np.logaddexp(0, theta[won[:, 1]] - theta[won[:, 0]])) + best_worst.ALPHA * theta @ theta)

    fit = minimize(loss, np.zeros(len(names)), method="BFGS", options={"gtol": 1e-9}).x
    fit -= fit.mean()
    got = best_worst.strengths(best_worst.judgments(frame))
    assert list(got.index) == names
    assert np.allclose(got.to_numpy(), fit, atol=1e-3)
    # The truth's order, up to noise: strongly rank-correlated.
    assert pd.Series(got).corr(pd.Series(TRUTH), method="spearman") > 0.9


def test_split_half_reliability_is_high_for_consistent_and_low_for_random_annotators() -> None:
    consistent, _ = planted(6, noise=1.0)
    random_, _ = planted(6, noise=1000.0)
    high = best_worst.split_half(consistent, trials=20).iloc[0]
    low = best_worst.split_half(random_, trials=20).iloc[0]
    assert high["aspect"] == "quality" and high["candidates"] == 12 and high["splits"] == 20
    assert high["split-half rho"] > 0.85 and low["split-half rho"] < 0.5
    assert high["Spearman-Brown"] == pytest.approx(2 * high["split-half rho"] / (1 + high["split-half rho"]))
    # Deterministic for a seed.
    assert best_worst.split_half(consistent, trials=20).equals(best_worst.split_half(consistent, trials=20))


def test_every_pair_of_candidates_counts_once_per_answer() -> None:
    frame, answers = planted(1, noise=0.0)
    rows = best_worst.judgments(frame)
    pairs = best_worst.implied_pairs(rows, sorted(TRUTH))
    assert len(pairs) == len(answers) * (2 * 4 - 3)
    assert all(a != b for a, b in pairs)
    assert not list(itertools.islice((p for p in pairs if p[0] < p[1]), 1))  # noise 0: the higher item always wins
