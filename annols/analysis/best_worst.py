"""Best-worst scaling: counting scores, a choice model and split-half reliability per aspect.

Reads the ``best-worst`` rows of the judgments table (:func:`annols.judgments.tidy`):
one row per candidate of each answered tuple, ``value`` 1 (chosen best), -1 (worst) or 0.
A tuple whose best and worst are the same candidate has no rows (``validate`` flags it).

- Counting scores (Orme 2009; Kiritchenko & Mohammad 2017): per aspect and candidate,
  % best − % worst of the times it was shown, from -100 to 100, with a 95% percentile
  bootstrap interval resampling whole tuples (items); :func:`scores` computes them from
  a tidy table, for anything that needs them again (split-half reliability, planning).
- A choice model: each answer read as the comparisons it implies (the best beats every
  other candidate shown, each of those beats the worst) and fitted as a Bradley-Terry
  model by ``choix.opt_pairwise`` (maximum a posteriori with a weak Gaussian prior,
  ``alpha`` :data:`ALPHA`, so a candidate never worst still gets a finite strength),
  strengths centred to mean 0.
- Split-half reliability (Kiritchenko & Mohammad 2017): the answers to each tuple split
  at random into two halves, counting scores from each half, Spearman's rho between
  them over the candidates scored in both; the mean over :data:`TRIALS` splits, and the
  same raised to the whole by the Spearman-Brown formula.
"""

from __future__ import annotations

from typing import Any

import choix  # type: ignore[import-untyped, unused-ignore]
import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]
from scipy.stats import spearmanr

from annols.analysis import bootstrap
from annols.analysis.naming import by_aspect_text
from annols.report.common import ReportOptions
from annols.report.model import Section, Table, percent

ALPHA = 0.01  # the choice model's prior strength (choix's alpha)
TRIALS = 100  # random splits for split-half reliability
SCORE_COLUMNS = ["aspect", "system", "shown", "best", "worst", "best %", "worst %", "score %"]


def judgments(frame: pd.DataFrame) -> pd.DataFrame:
    """The best-worst rows as (uid, task_key, annotator, aspect, system, value)."""
    part = frame[frame["kind"] == "best-worst"].rename(columns={"question": "aspect"})
    part = part[["uid", "task_key", "annotator", "aspect", "system", "value"]].copy()
    part["value"] = pd.to_numeric(part["value"]).astype(int)
    return part


def scores(frame: pd.DataFrame) -> pd.DataFrame:
    """Counting scores of a tidy table (every kind of row may be in it): :data:`SCORE_COLUMNS`,
    one row per aspect and candidate, sorted by aspect, then score (highest first), then name."""
    rows = judgments(frame) if "kind" in frame.columns else frame
    if rows.empty:
        return pd.DataFrame(columns=SCORE_COLUMNS)
    grouped = rows.groupby(["aspect", "system"], sort=True, observed=True)["value"]
    out = pd.DataFrame({
        "shown": grouped.size(),
        "best": grouped.apply(lambda v: int((v == 1).sum())),
        "worst": grouped.apply(lambda v: int((v == -1).sum())),
    }).reset_index()
    out["best %"] = percent(out["best"], out["shown"])
    out["worst %"] = percent(out["worst"], out["shown"])
    out["score %"] = out["best %"] - out["worst %"]
    order = out.sort_values(["system"]).sort_values(["aspect", "score %"], ascending=[True, False], kind="stable")
    return order[SCORE_COLUMNS].reset_index(drop=True)


def implied_pairs(rows: pd.DataFrame, candidates: list[str]) -> list[tuple[int, int]]:
    """(winner, loser) indexes into ``candidates`` implied by each answer of one aspect."""
    index = {c: i for i, c in enumerate(candidates)}
    pairs: list[tuple[int, int]] = []
    for _, answer in rows.groupby("uid", sort=True):
        values = dict(zip(answer["system"], answer["value"], strict=True))
        best = [s for s, v in values.items() if v == 1]
        worst = [s for s, v in values.items() if v == -1]
        if len(best) != 1 or len(worst) != 1:
            continue
        for s, v in sorted(values.items()):
            if v != 1:
                pairs.append((index[best[0]], index[s]))
            if v == 0:
                pairs.append((index[s], index[worst[0]]))
    return pairs


def strengths(rows: pd.DataFrame) -> pd.Series:
    """Choice-model strengths of one aspect's candidates (centred to mean 0), by candidate name."""
    candidates = sorted(rows["system"].unique())
    pairs = implied_pairs(rows, candidates)
    if len(candidates) < 2 or not pairs:
        return pd.Series(np.nan, index=candidates, dtype=float)
    params = choix.opt_pairwise(len(candidates), pairs, alpha=ALPHA)
    return pd.Series(params - params.mean(), index=candidates, dtype=float)


def split_half(frame: pd.DataFrame, trials: int = TRIALS, seed: int = 0) -> pd.DataFrame:
    """Split-half reliability per aspect: (aspect, candidates, split-half rho, Spearman-Brown)."""
    rows = judgments(frame) if "kind" in frame.columns else frame
    rng = np.random.default_rng(seed)
    out = []
    for aspect, part in rows.groupby("aspect", sort=True, observed=True):
        answers = part[["uid", "task_key"]].drop_duplicates().sort_values(["task_key", "uid"])
        rhos = []
        for _ in range(trials):
            # Each tuple's answers in a random order; alternate halves, so each half gets half of them.
            shuffled = answers.assign(r=rng.random(len(answers))).sort_values(["task_key", "r"])
            half = shuffled.groupby("task_key", sort=False).cumcount() % 2
            first = set(shuffled["uid"][half.to_numpy() == 0])
            a = scores(part[part["uid"].isin(first)]).set_index("system")["score %"]
            b = scores(part[~part["uid"].isin(first)]).set_index("system")["score %"]
            both = a.index.intersection(b.index)
            if len(both) >= 3:
                rho = spearmanr(a[both], b[both]).statistic
                if np.isfinite(rho):
                    rhos.append(float(rho))
        mean = float(np.mean(rhos)) if rhos else np.nan
        corrected = 2 * mean / (1 + mean) if rhos and mean > -1 else np.nan
        out.append([aspect, part["system"].nunique(), len(rhos), mean, corrected])
    return pd.DataFrame(out, columns=["aspect", "candidates", "splits", "split-half rho", "Spearman-Brown"])


def sections(tidy: pd.DataFrame, spec: Any, options: ReportOptions) -> list[Section]:
    named, aspects = by_aspect_text(tidy[tidy["kind"] == "best-worst"], spec.aspects)
    rows = judgments(named)
    if rows.empty:
        return [Section("Best-worst scores", ["No best-worst answers."])]
    table = scores(rows)
    table["aspect"] = pd.Categorical(table["aspect"], categories=aspects, ordered=True)
    table = table.sort_values("aspect", kind="stable").reset_index(drop=True)
    table["aspect"] = table["aspect"].astype(str)
    rng = np.random.default_rng(options.seed)
    low, high, model = [], [], []
    fitted = {aspect: strengths(part) for aspect, part in rows.groupby("aspect", sort=True)}
    for aspect, system in zip(table["aspect"], table["system"], strict=True):
        mine = rows[(rows["aspect"] == aspect) & (rows["system"] == system)]
        per_tuple = mine.groupby("task_key", sort=True)["value"].agg(["sum", "size"]).to_numpy()
        lo, hi = bootstrap.ratio(per_tuple, options.bootstrap, rng)
        low.append(100 * lo)
        high.append(100 * hi)
        model.append(fitted[aspect].get(system, np.nan))
    table["score low %"], table["score high %"] = low, high
    table["model strength"] = model
    reliability = split_half(rows, seed=options.seed)
    text = [
        "Each candidate's score is the share of the times it was shown that it was chosen best, minus the share "
        "it was chosen worst (from -100 to 100); the interval resamples whole tuples. The model strength is "
        "a Bradley-Terry fit (choix) of the comparisons each answer implies: the best beats every other "
        "candidate shown, and each of those beats the worst.",
    ]
    return [
        Section("Best-worst scores", text, [Table("best_worst_scores", "Best-worst scores per aspect", table)]),
        Section("Best-worst reliability", [
            f"Split-half reliability: each tuple's answers split at random into two halves ({TRIALS} times), "
            "Spearman's rho between the two halves' scores, and the same raised to the whole "
            "(Spearman-Brown). A tuple answered once goes to one half.",
        ], [Table("best_worst_split_half", "Split-half reliability per aspect", reliability)]),
    ]  # fmt: skip
