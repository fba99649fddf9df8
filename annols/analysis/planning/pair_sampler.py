"""Which pairs of systems the next round of a pairwise study asks about (``annols next-round --pairs adaptive``).

A pairwise study of k systems compares every pair; a round pushes ``n`` items (battles), each of one pair. Spread
evenly, many battles go to pairs whose order is already plain (a win probability near 0 or 1), which tell the
Bradley-Terry fit little. :func:`next_pairs` spends them where the strengths' intervals narrow most:

- the fit: Bradley-Terry log-strengths theta (centred) by ``choix``
(:func:`annols.analysis.leaderboard.rankings.bt_fit`) on
  the battles so far, each battle's first system winning a share s (1 won, 0 lost, 1/2 tie; an item of several
  judgments its net share, (1 + net) / 2), per question;
- the information: a battle of (i, j) adds p (1 - p) d d' to the Fisher information of theta (p the fitted win
  probability of i over j, d = e_i - e_j): largest for a pair whose order is least certain, p near 1/2. The
  covariance of the centred strengths is the pseudo-inverse (:func:`covariance`; a prior of :data:`PRIOR` battle on
  every pair of the study keeps it finite before the graph of battles is connected);
- the choice: greedily, the candidate pair whose battle most reduces the summed variance of the strengths
  (Sherman-Morrison: p (1 - p) |S d|^2 / (1 + p (1 - p) d' S d), summed over the questions), the covariance then
  updated as if that battle had been had, so a batch spreads over pairs as their returns diminish (A-optimal
  greedy design); ties broken by a seeded order;
- a floor of exploration: the first ceil(``explore`` x n) battles go to the candidate pairs with the fewest battles
  so far (seeded tie-break), so every candidate pair keeps being sampled. The fit is consistent only if every pair's
  share of battles stays away from 0 (a misfit of the model cannot starve a pair of the direct evidence that would
  show it), and each pair's confidence sequence (:mod:`annols.analysis.planning.sequential`) decides only on that pair's
  own items, so a pair the sampler starved would never be decided and the study never end.

The choice depends only on the battles already counted, the candidate pairs and the seed: it is predictable. Each
pair's items are drawn in a seeded order fixed before the study, so pair (i, j)'s t-th observation is the same
whichever round it is asked in; the sampler only chooses how far along each pair's stream a round reads. A
confidence sequence holds at every number of observations at once (Ville's inequality), so it holds at the random,
data-dependent numbers a predictable sampler reaches (the "stack of rewards" argument of adaptive sampling,
Lattimore and Szepesvari 2020, ch. 4; Kaufmann and Koolen 2021): the per-pair guarantee, and the Bonferroni
over the pairs, are those of uniform sampling. :func:`simulate` checks it, and what the sampler saves.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import choix  # type: ignore[import-untyped, unused-ignore]
import numpy as np

from annols.analysis.leaderboard import rankings

Pair = tuple[str, str]
Battle = tuple[str, str, float]  # first, second, the first's share of the win (1 won, 0 lost, 0.5 tie)
EXPLORE = 0.25  # share of a round's battles spread over the least-sampled candidate pairs
PRIOR = 0.5  # pseudo-battles per pair of the study in the information (a finite covariance before any battle)
Z95 = 1.959963984540054


def counts(systems: Sequence[str], battles: Sequence[Battle]) -> tuple[np.ndarray, np.ndarray]:
    """(wins, battles): ``wins[i, j]`` the shares i won against j, ``battles[i, j]`` (symmetric) how many."""
    at = {s: n for n, s in enumerate(systems)}
    k = len(systems)
    wins, held = np.zeros((k, k)), np.zeros((k, k))
    for first, second, share in battles:
        i, j = at[first], at[second]
        wins[i, j] += share
        wins[j, i] += 1 - share
        held[i, j] += 1
        held[j, i] += 1
    return wins, held


def fit(systems: Sequence[str], battles: Sequence[Battle]) -> np.ndarray:
    """Centred Bradley-Terry log-strengths by choix (zeros without battles)."""
    return fit_counts(counts(systems, battles)[0])


def fit_counts(wins: np.ndarray, start: np.ndarray | None = None) -> np.ndarray:
    """:func:`fit` from the wins matrix (``start``: where choix's iterations begin, a fit of fewer battles)."""
    if not wins.sum():
        return np.zeros(len(wins))
    if start is None:
        theta = np.log(rankings.bt_fit(len(wins), wins, np.zeros_like(wins)))
    else:
        theta = choix.ilsr_pairwise_dense(wins, alpha=rankings.BT_ALPHA, initial_params=start,
                                          max_iter=rankings.MAX_ITER)  # fmt: skip
    return np.asarray(theta - theta.mean(), dtype=float)


def information(theta: np.ndarray, held: np.ndarray, prior: float = PRIOR) -> np.ndarray:
    """Fisher information of theta: sum over pairs of (battles + prior) p (1 - p) (e_i - e_j)(e_i - e_j)'."""
    p = 1 / (1 + np.exp(-(theta[:, None] - theta[None, :])))
    w = (held + prior * (1 - np.eye(len(theta)))) * p * (1 - p)
    np.fill_diagonal(w, 0)
    return np.diag(w.sum(axis=1)) - w


def covariance(theta: np.ndarray, held: np.ndarray, prior: float = PRIOR) -> np.ndarray:
    """Covariance of the centred log-strengths: the pseudo-inverse of :func:`information` (its null space is the
    common shift the centring removes)."""
    return np.asarray(np.linalg.pinv(information(theta, held, prior), hermitian=True), dtype=float)


def half_widths(theta: np.ndarray, held: np.ndarray, prior: float = 0.0) -> np.ndarray:
    """Each centred log-strength's 95% Wald half-width (1.96 se) at the fit ``theta`` with ``held`` battles a pair,
    without the prior by default."""
    return np.asarray(Z95 * np.sqrt(np.clip(np.diag(covariance(theta, held, prior)), 0, None)), dtype=float)


def next_pairs(systems: Sequence[str], battles: Mapping[str, Sequence[Battle]], candidates: Sequence[Pair], n: int,
               seed: int, explore: float = EXPLORE, room: Mapping[Pair, int] | None = None) -> list[Pair]:  # fmt: skip
    """The ``n`` battles of the next round, as pairs (a pair as often as it gets battles): ``battles`` per question,
    ``candidates`` the pairs that may be asked (the undecided ones), ``room`` the most battles a pair can get (the
    pool's items of it left; default: no limit). Fewer than ``n`` when the room runs out."""
    tallies = [counts(systems, question) for question in battles.values()]
    fits = [(fit_counts(wins), held) for wins, held in tallies]
    at = {s: i for i, s in enumerate(systems)}
    cands = sorted({(min(p), max(p)) for p in candidates})
    index = [(at[a], at[b]) for a, b in cands]
    limit = None if room is None else [int(room.get(p, 0)) for p in cands]
    picked = allocate(fits, index, n, seed, explore, limit)
    return [cands[c] for c in picked]


def allocate(fits: Sequence[tuple[np.ndarray, np.ndarray]], candidates: Sequence[tuple[int, int]], n: int, seed: int,
             explore: float = EXPLORE, room: Sequence[int] | None = None) -> list[int]:  # fmt: skip
    """:func:`next_pairs` on indices: ``fits`` per question (centred log-strengths, battles a pair), ``candidates``
    pairs of system indices; returns the chosen candidates' positions, one per battle."""
    held_all = np.max([held for _, held in fits], axis=0) if fits else None  # an item counts in every question
    left = [n if room is None else int(room[c]) for c in range(len(candidates))]
    open_ = [c for c in range(len(candidates)) if left[c] > 0]
    if n <= 0 or not open_:
        return []
    done = int(held_all.sum() // 2) if held_all is not None and held_all.size else 0
    rng = np.random.default_rng([seed, done, len(candidates)])  # the past and the seed only: a predictable choice
    tie = rng.permutation(len(candidates))
    so_far = [int(held_all[i, j]) if held_all is not None and held_all.size else 0 for i, j in candidates]
    out: list[int] = []

    def take(c: int) -> None:
        out.append(c)
        so_far[c] += 1
        left[c] -= 1
        if left[c] <= 0:
            open_.remove(c)

    for _ in range(min(n, math.ceil(explore * n))):  # the floor: the least-sampled first
        if not open_:
            return out
        take(min(open_, key=lambda c: (so_far[c], tie[c])))
    if len(out) >= n or not open_:
        return out
    k = max([len(t) for t, _ in fits] or [1 + max(max(p) for p in candidates)])
    state = [(theta, covariance(theta, held)) for theta, held in fits] or [
        (np.zeros(k), covariance(np.zeros(k), np.zeros((k, k))))]
    while len(out) < n and open_:
        i = np.array([candidates[c][0] for c in open_])
        j = np.array([candidates[c][1] for c in open_])
        cols = np.arange(len(open_))
        gain = np.zeros(len(open_))
        for theta, sigma in state:
            w = 1 / (1 + np.exp(-(theta[i] - theta[j])))
            w = w * (1 - w)
            v = sigma[:, i] - sigma[:, j]  # S d, a column per candidate
            gain += w * (v**2).sum(axis=0) / (1 + w * (v[i, cols] - v[j, cols]))
        best = max(range(len(open_)), key=lambda c: (round(float(gain[c]), 12), -tie[open_[c]]))
        a, b = i[best], j[best]
        for theta, sigma in state:
            p = 1 / (1 + math.exp(-(theta[a] - theta[b])))
            v = sigma[:, a] - sigma[:, b]
            sigma -= p * (1 - p) * np.outer(v, v) / (1 + p * (1 - p) * (v[a] - v[b]))
        take(open_[best])
    return out


def uniform_pairs(systems: Sequence[str], battles: Mapping[str, Sequence[Battle]], candidates: Sequence[Pair], n: int,
                  seed: int, room: Mapping[Pair, int] | None = None) -> list[Pair]:  # fmt: skip
    """The even spread the simulation compares with: every battle to the candidate pair with the fewest so far
    (seeded tie-break), i.e. :func:`next_pairs` with a floor of the whole round."""
    return next_pairs(systems, battles, candidates, n, seed, explore=1.0, room=room)


# ----------------------------------------------------------------------------- simulation


@dataclass(frozen=True)
class Simulated:
    """Of ``studies`` seeded pairwise studies of k systems run in rounds, adaptive and uniform pairs alike."""

    k: int
    studies: int
    adaptive: float  # median battles until every strength's 95% interval is at most ``target`` wide
    uniform: float  # the same, pairs spread evenly
    adaptive_reached: float  # share of studies that reached the width within the cap
    uniform_reached: float
    adaptive_false: float  # share of studies with a false decision (any round up to the cap)
    uniform_false: float
    null_false: float  # adaptive, every strength equal: share with a decision of one system better
    null_studies: int


def run_study(theta: np.ndarray, *, adaptive: bool, batch: int, rounds: int, target: float, effect: float,
              alpha: float, seed: int, explore: float = EXPLORE, annotators: int = 3) -> tuple[int, bool]:  # fmt: skip
    """One study: ``rounds`` rounds of ``batch`` items (battles), each judged by ``annotators`` (no ties), among the
    pairs still
    undecided by their confidence sequences at alpha / pairs (:mod:`annols.analysis.planning.sequential`, as
    next-round), each pair's items a stream drawn once (the seeded order of the pool), stopped when every centred
    log-strength's 95% interval is at most ``target`` wide. Returns the items then (the cap if never), and whether
    some decision was false (one system better against the truth, or within ±effect where the true net share is not)."""
    from annols.analysis.planning import sequential

    k = len(theta)
    pairs = [(a, b) for a in range(k) for b in range(a + 1, k)]
    cap = batch * rounds
    rng = np.random.default_rng([seed, 1])
    win = {(a, b): 1 / (1 + math.exp(-(theta[a] - theta[b]))) for a, b in pairs}
    # each item: ``annotators`` judgments, its observation their net share (ties are left out: a tie counts half)
    streams = {p: (rng.random((cap, annotators)) < win[p]).mean(axis=1) for p in pairs}  # first's share
    level, eta = alpha / len(pairs), sequential.eta_for(cap // len(pairs))
    seen = dict.fromkeys(pairs, 0)
    decision = dict.fromkeys(pairs, sequential.UNDECIDED)
    wins, held = np.zeros((k, k)), np.zeros((k, k))
    fitted = np.zeros(k)
    false = False
    for r in range(rounds):
        open_ = [p for p in pairs if decision[p] == sequential.UNDECIDED]
        if not open_:
            break
        picked = allocate([(fitted, held)], open_, batch, seed + r, explore if adaptive else 1.0)
        for c in picked:
            (a, b), outcome = open_[c], streams[open_[c]][seen[open_[c]]]
            wins[a, b] += outcome
            wins[b, a] += 1 - outcome
            held[a, b] += 1
            held[b, a] += 1
            seen[open_[c]] += 1
        for p in {open_[c] for c in picked}:
            x = 2 * streams[p][: seen[p]] - 1  # the item's net share, in [-1, 1]
            decision[p] = str(sequential.verdicts(x, 1.0, level, eta, effect))
            d = 2 * win[p] - 1
            false |= (decision[p] == sequential.FIRST and d <= 0) or (decision[p] == sequential.SECOND and d >= 0) \
                or (decision[p] == sequential.WITHIN and abs(d) >= effect)
        fitted = fit_counts(wins, fitted if r else None)
        if 2 * half_widths(fitted, held).max() <= target:
            return int(held.sum() // 2), false
    return cap, false


def simulate(theta: Sequence[float], *, studies: int, null_studies: int, batch: int, rounds: int, target: float,
             effect: float = 0.3, alpha: float = 0.05, seed: int = 0) -> Simulated:  # fmt: skip
    """Seeded studies of the planted log-strengths ``theta``, adaptive and uniform on the same streams, and
    ``null_studies`` adaptive ones with every strength equal (any decision of one system better is false)."""
    planted = np.asarray(theta, dtype=float)
    runs = {flag: [run_study(planted, adaptive=flag, batch=batch, rounds=rounds, target=target, effect=effect,
                             alpha=alpha, seed=seed + s) for s in range(studies)] for flag in (True, False)}
    null = [run_study(np.zeros(len(planted)), adaptive=True, batch=batch, rounds=rounds, target=target,
                      effect=effect, alpha=alpha, seed=seed + 10**6 + s)[1] for s in range(null_studies)]
    cap = batch * rounds

    def summary(flag: bool) -> tuple[float, float, float]:
        used = np.array([r for r, _ in runs[flag]])
        return float(np.median(used)), float((used < cap).mean()), float(np.mean([f for _, f in runs[flag]]))

    (a, a_reached, a_false), (u, u_reached, u_false) = summary(True), summary(False)
    return Simulated(len(planted), studies, a, u, a_reached, u_reached, a_false, u_false,
                     float(np.mean(null)) if null else 0.0, null_studies)  # fmt: skip


def null_false(k: int, *, studies: int, rounds: int, adaptive: bool, annotators: int = 1, effect: float = 0.3,
               alpha: float = 0.05, seed: int = 0) -> float:  # fmt: skip
    """Share of ``studies`` seeded studies of ``k`` equal systems (every log-strength 0) run for ``rounds`` rounds of
    2k items, ``annotators`` an item (next-round --overlap; 1: each observation is +1 or -1), with some decision
    of one system better (all false): :func:`run_study` with a target no study reaches, so every round is looked
    at, the small numbers of items of a pair's first looks included."""
    false = [run_study(np.zeros(k), adaptive=adaptive, batch=2 * k, rounds=rounds, target=0.0, effect=effect,
                       alpha=alpha, seed=seed + s, annotators=annotators)[1] for s in range(studies)]  # fmt: skip
    return float(np.mean(false))
