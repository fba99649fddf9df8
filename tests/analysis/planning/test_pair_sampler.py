"""The pair sampler of next-round --pairs adaptive: its choice on constructed cases (against a brute-force
computation), its covariance against statsmodels' logistic fit, and a seeded small simulation of studies in rounds
(false decisions at or below alpha; no more items than uniform pairs to the same interval width)."""

from __future__ import annotations

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]
from scipy import stats  # type: ignore[import-untyped, unused-ignore]

from annols.analysis.planning import pair_sampler

SYSTEMS = ["a", "b", "c"]


def battles(n_ab: tuple[int, int], n_ac: tuple[int, int], n_bc: tuple[int, int]) -> list[pair_sampler.Battle]:
    out: list[pair_sampler.Battle] = []
    for (first, second), (won, lost) in ((("a", "b"), n_ab), (("a", "c"), n_ac), (("b", "c"), n_bc)):
        out += [(first, second, 1.0)] * won + [(first, second, 0.0)] * lost
    return out


def test_the_pair_whose_order_is_least_certain_gets_the_battle_and_the_greedy_gain_is_the_trace_reduction() -> None:
    """a and b alike, both above c, c's strength already pinned by many battles: a battle of a against b (p near 1/2,
    few battles so far) tells the fit most. The chosen pair is the one whose battle most reduces the summed variance
    of the strengths, computed here by brute force (the pseudo-inverse of the information with the battle added),
    not by the sampler's Sherman-Morrison update; with equal battles a pair it is c's pairs that win, the
    least certain strength being c's, and the brute force agrees there too."""
    even = battles((10, 10), (18, 2), (17, 3))
    brute = _reductions(even)
    assert pair_sampler.next_pairs(SYSTEMS, {"q": even}, [("a", "b"), ("a", "c"), ("b", "c")], 1, seed=0,
                                   explore=0.0) == [max(brute, key=brute.__getitem__)]  # fmt: skip
    past = battles((3, 3), (40, 10), (38, 12))
    candidates = [("a", "b"), ("a", "c"), ("b", "c")]
    chosen = pair_sampler.next_pairs(SYSTEMS, {"q": past}, candidates, 1, seed=0, explore=0.0)
    reduction = _reductions(past)
    assert chosen == [max(reduction, key=reduction.__getitem__)] == [("a", "b")]
    # A round of 8: a-b is also the least sampled, so the floor's 2 go to it too; seeded; a pair's room respected.
    round_ = pair_sampler.next_pairs(SYSTEMS, {"q": past}, candidates, 8, seed=0)
    assert len(round_) == 8 and round_.count(("a", "b")) >= 6
    assert round_ == pair_sampler.next_pairs(SYSTEMS, {"q": past}, candidates, 8, seed=0)
    limited = pair_sampler.next_pairs(SYSTEMS, {"q": past}, candidates, 8, seed=0,
                                      room={("a", "b"): 2, ("a", "c"): 9, ("b", "c"): 9})  # fmt: skip
    assert limited.count(("a", "b")) == 2 and len(limited) == 8
    # Only candidates are chosen (a decided pair is none), and the floor goes to the least-sampled first.
    assert set(pair_sampler.next_pairs(SYSTEMS, {"q": past}, [("a", "c"), ("b", "c")], 5, seed=3)) <= {
        ("a", "c"), ("b", "c")}  # fmt: skip
    fresh = battles((20, 20), (0, 0), (18, 2))
    assert pair_sampler.next_pairs(SYSTEMS, {"q": fresh}, candidates, 4, seed=1)[0] == ("a", "c")
    assert pair_sampler.next_pairs(SYSTEMS, {}, candidates, 0, seed=1) == []


def _reductions(past: list[pair_sampler.Battle]) -> dict[tuple[str, str], float]:
    """Per pair, how much one more battle of it lowers the trace of the strengths' covariance (brute force)."""
    theta = pair_sampler.fit(SYSTEMS, past)
    _, held = pair_sampler.counts(SYSTEMS, past)
    before = np.trace(np.linalg.pinv(pair_sampler.information(theta, held)))
    out = {}
    for a, b in (("a", "b"), ("a", "c"), ("b", "c")):
        more = held.copy()
        i, j = SYSTEMS.index(a), SYSTEMS.index(b)
        more[i, j] += 1
        more[j, i] += 1
        out[(a, b)] = float(before - np.trace(np.linalg.pinv(pair_sampler.information(theta, more))))
    return out


def test_the_covariance_is_that_of_a_logistic_fit_and_choix_finds_its_strengths() -> None:
    """The information's pseudo-inverse gives each difference of log-strengths the variance statsmodels' binomial
    GLM (the Bradley-Terry model as a logistic regression, c the reference) gives it, at that fit's estimates; and
    choix's (lightly regularised) fit is close to the GLM's."""
    import statsmodels.api as sm  # type: ignore[import-untyped, unused-ignore]

    past = battles((14, 9), (17, 5), (15, 8))
    rows = pd.DataFrame([{"a": (f == "a") - (s == "a"), "b": (f == "b") - (s == "b"), "won": w} for f, s, w in past])
    glm = sm.GLM(rows["won"], rows[["a", "b"]].astype(float), family=sm.families.Binomial()).fit(tol=1e-13)
    theta = np.array([glm.params["a"], glm.params["b"], 0.0])
    _, held = pair_sampler.counts(SYSTEMS, past)
    sigma = pair_sampler.covariance(theta - theta.mean(), held, prior=0.0)
    cov = glm.cov_params().to_numpy()
    for d, expected in ((np.array([1, -1, 0]), cov[0, 0] + cov[1, 1] - 2 * cov[0, 1]),
                        (np.array([1, 0, -1]), cov[0, 0]), (np.array([0, 1, -1]), cov[1, 1])):  # fmt: skip
        assert abs(d @ sigma @ d - expected) < 1e-8 * expected
    fitted = pair_sampler.fit(SYSTEMS, past)
    assert np.allclose(fitted, theta - theta.mean(), atol=0.02)


def test_adaptive_pairs_keep_false_decisions_at_or_below_alpha_and_need_no_more_items_than_uniform() -> None:
    """Six systems with near-ties (scripts/pair_sampler.py's design at a smaller size): false decisions (against the
    planted order, or within ±effect where the truth is not) and any decision under equal strengths pass a one-sided
    exact binomial test against alpha; to the same interval width adaptive pairs need no more items (median) than
    uniform ones, on the same seeded streams."""
    r = pair_sampler.simulate((0.0, 0.0, 0.3, 0.6, 1.0, 1.6), studies=16, null_studies=80, batch=12, rounds=300,
                              target=0.9, effect=0.3, alpha=0.05, seed=7)  # fmt: skip
    for rate, n in ((r.adaptive_false, r.studies), (r.uniform_false, r.studies), (r.null_false, r.null_studies)):
        assert rate <= 0.05
        assert stats.binomtest(round(rate * n), n, 0.05, alternative="greater").pvalue > 0.05
    assert r.adaptive_reached == r.uniform_reached == 1.0
    assert r.adaptive <= r.uniform
