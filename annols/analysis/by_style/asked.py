"""Every question of a definition by system, wherever it sits (task, candidate, span), and the error score of
weighted spans: the tables as DataFrames (:mod:`annols.analysis.by_style.by_system` arranges them into sections).

Reads the judgments table (:func:`annols.styles.judgments.tidy`) with a ``unit`` column naming each row's item
(the content of the definition's context panes, set by the report's collector; the task where there is none):
items are the unit of every test, an item's judgments combined first.

- A numeric question (``kind`` scale, number or slider), per candidate or per item: :func:`rating_rows` are what
  the ratings analysis reads (:mod:`annols.analysis.by_style.ratings`: means with intervals, annotator z-scores,
  Wilcoxon signed-rank over items with Holm, agreement: ordinal alpha for a scale, interval alpha for a number or
  slider).
- A choice question asked per candidate: each system's distribution of answers (:func:`choice_by_system`); a
  test of association between system and answer over items (:func:`association`; each item's answer for a
  system is its judgments' most common code, ties to the code listed first): Pearson's chi-square statistic with
  its p-value from permutations of the systems within each item (``scipy.stats.permutation_test``), since an
  item's answers are paired.
- A text question: how many judgments answered it, per system (:func:`text_answers`).
- Spans with weights (``[[spans.weights]]``, MQM): each judged candidate's error score, the sum of its spans'
  weights (0 without spans), and per 100 words of the target text (:func:`error_scores`), compared across
  systems like a rating (:func:`score_frame`); beside it, and beside every numeric per-candidate question (ESA's
  score), the spans per candidate by label (:func:`side_by_side`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]
from scipy import stats  # type: ignore[import-untyped, unused-ignore]

from annols import jsontext
from annols.analysis import cells
from annols.analysis.by_style import ratings
from annols.definition import Question

UNIT = "unit"  # the column naming each row's item (annols.analysis.by_style.best_worst.UNIT)
SCORE = "error score"
PER_100 = "error score per 100 words"
SCORES = (SCORE, PER_100)


ITEM = "item"  # a record's own field naming its item, carried under the task data's "record"


def unit_of(spec: Any, data: dict[str, Any], key: str) -> str:
    """A task's item: the content of its context panes (the task's key where there are none), told apart by the
    record's ``item`` field where it has one: two segments of the same source text at two places of a document
    (an MQM release's "(Applause)") are two items, the outputs of every system for one of them one item."""
    context: list[Any] = [str(data.get(p.name, "")) for p in spec.context]
    # A conversation judged whole (ratings per turn, spans in its messages): its item is what was said to the
    # assistant, the same for every system that held it.
    judged = spec.candidates if getattr(spec, "per_turn", False) else ()
    target = getattr(spec, "target", None)
    if target is not None and getattr(target, "kind", "") == "conversation":
        judged = (target,)
    for c in judged:
        messages = data.get(c.name)
        context.append([m for m in messages if isinstance(m, dict) and m.get("role") != "assistant"]
                       if isinstance(messages, list) else messages)  # fmt: skip
    carried = data.get("record")
    item = carried.get(ITEM) if isinstance(carried, dict) else None
    if context and item not in (None, ""):
        context.append({ITEM: item})
    return jsontext.dumps(context) if context else key


def questions_of(spec: Any) -> list[Question]:
    return list(getattr(spec, "questions", ()))


def covered(spec: Any) -> bool:
    """Whether the definition asks anything this module analyses (so the report's collector keeps items)."""
    return bool(getattr(spec, "weights", ())) or any(
        q.numeric or q.per_candidate or q.kind == "text" for q in questions_of(spec)
    )


def kept(tidy: pd.DataFrame, spec: Any) -> pd.DataFrame:
    """The rows this module reads, taken before a style's analyses let the rest of the table go: numeric
    answers (rating rows of the questions), per-candidate choices, text answers."""
    qs = questions_of(spec)
    numeric = [q.name for q in qs if q.numeric]
    choices = [q.name for q in qs if q.kind == "choice" and q.per_candidate]
    texts = [q.name for q in qs if q.kind == "text"]
    kind, question = tidy["kind"].astype(str), tidy["question"].astype(str)
    rows = ((kind == "rating") & question.isin(numeric)) | ((kind == "choice") & question.isin(choices))
    rows |= (kind == "text") & question.isin(texts)
    part = tidy[rows.to_numpy()]
    columns = {c: part[c].astype(object).to_numpy() for c in part.columns}
    frame = pd.DataFrame(columns, index=range(len(part)))
    if UNIT not in frame.columns:
        frame[UNIT] = frame["task_key"] if len(frame) else pd.Series(dtype=object)
    return frame


PER_ITEM = "(per item)"  # the system of a per-item answer where the task shows several candidates (none is judged)


def rating_rows(frame: pd.DataFrame, aspect: str) -> pd.DataFrame:
    """One aspect's rating rows as the ratings tables read them, the item as their sample; a per-item question's
    answers, about no one candidate, under :data:`PER_ITEM` rather than an empty system name."""
    part = frame[(frame["kind"] == "rating") & (frame["question"] == aspect)]
    system = part["system"].astype(object)
    unnamed = system.isna() | (system.astype(str) == "")
    part = part.assign(task_key=part[UNIT].astype(str), system=system.where(~unnamed, PER_ITEM))
    return ratings.judgments(part, [aspect], uid=False)


def choice_by_system(frame: pd.DataFrame, q: Question) -> pd.DataFrame:
    """Per system and code: the judgments that chose it, and its share by the items rule (per item, the share of the
    item's judgments answering that chose it; then the mean over items)."""
    part = frame[(frame["kind"] == "choice") & (frame["question"] == q.name)]
    codes = [c.code for c in q.all_choices] + sorted(set(part["value"].astype(str)) - {c.code for c in q.all_choices})
    counts = part.groupby(["system", "value"]).size().unstack("value", fill_value=0)
    counts = counts.reindex(columns=codes, fill_value=0)
    answered = part.drop_duplicates(["uid", "system"]).groupby("system").size()
    table = counts.stack().rename("judgments").reset_index().rename(columns={"value": "answer"})
    table["answered"] = table["system"].map(answered).astype(int)
    # The share by the items rule (cells.items_mean): per item, the share of its judgments answering that chose
    # the code; then the mean over items.
    judgments = part.drop_duplicates(["uid", "system"])[["uid", "system", UNIT if UNIT in part.columns else
                                                                          "task_key"]]  # fmt: skip
    unit = judgments.columns[2]
    chose = set(zip(part["uid"], part["system"], part["value"].astype(str), strict=True))
    shares = {}
    for system, mine in judgments.groupby("system"):
        items, _ = pd.factorize(mine[unit].astype(str), sort=True)
        for code in codes:
            picked = np.array([(u, system, code) in chose for u in mine["uid"]], dtype=float)
            shares[(system, code)] = 100 * cells.items_mean(items, picked)
    table["judgments %"] = [shares.get((s_, str(c)), np.nan) for s_, c in zip(table["system"], table["answer"],
                                                                               strict=True)]  # fmt: skip
    return table.assign(question=q.name)[["question", "system", "answer", "judgments", "answered", "judgments %"]]


def item_answers(frame: pd.DataFrame, q: Question) -> pd.DataFrame:
    """Each (item, system)'s answer: the code its judgments chose most often, ties to the code listed first."""
    part = frame[(frame["kind"] == "choice") & (frame["question"] == q.name)]
    order = {c.code: i for i, c in enumerate(q.all_choices)}
    counts = part.groupby([UNIT, "system", "value"]).size().rename("n").reset_index()
    counts["order"] = counts["value"].map(lambda c: order.get(c, len(order)))
    counts = counts.sort_values([UNIT, "system", "n", "order", "value"], ascending=[True, True, False, True, True])
    return counts.drop_duplicates([UNIT, "system"])[[UNIT, "system", "value"]].reset_index(drop=True)


ASSOCIATION_COLUMNS = ["question", "item answers", "systems", "answers", "test", "statistic", "Cramér's V", "CI low",
                       "CI high", "p (test)"]  # fmt: skip


def cramers_v(table: np.ndarray) -> float:
    """Cramér's V of a systems x answers table (``scipy.stats.contingency.association``, no continuity
    correction), rows and columns without counts dropped; nan when fewer than two of either remain."""
    table = table[table.sum(axis=1) > 0][:, table.sum(axis=0) > 0]
    if min(table.shape) < 2:
        return np.nan
    return float(stats.contingency.association(table.astype(np.int64), method="cramer"))


def v_interval(coded: np.ndarray, codes: int, alpha: float = 0.05) -> tuple[float, float]:
    """A 95% interval for the population's Cramér's V from items' paired answers (``coded``: systems x items, each
    an answer's code index), one that can hold 0 and holds at any number of items.

    With K systems answering every item, V^2 = sum over systems s and codes c of (p_sc - p_c)^2 / (K p_c), over
    min(K, C) - 1, where p_sc is the chance that system s's answer is c and p_c their mean over systems. Each
    d_sc = p_sc - p_c is the mean over items of a value in [-1, 1] (1[s's answer is c] - the share of systems
    answering c), each p_c of one in [0, 1]: their betting intervals for bounded means
    (:func:`annols.analysis.inference.intervals.betting`), Bonferroni over the K C + C of them, hold jointly with
    95%, and V's interval is the least and the largest V over that box: a term is smallest with d_sc at the point
    of its interval nearest 0 and p_c at its top, largest with d_sc at its farthest and p_c at its bottom, and never
    above |d_sc| (K - 1) / K (p_sc lies in 0 to K p_c). C is the number of codes the study's answers use, as in V."""
    from annols.analysis.inference import intervals

    k, used = coded.shape[0], [c for c in range(codes) if (coded == c).any()]
    if k < 2 or len(used) < 2:
        return np.nan, np.nan
    level = alpha / (k * len(used) + len(used))
    low = high = 0.0
    for c in used:
        hit = (coded == c).astype(float)
        share = hit.mean(axis=0)  # per item: the share of systems answering c
        p_low, p_high = intervals.betting(share, 0.0, 1.0, alpha=level)
        for s in range(k):
            d_low, d_high = intervals.betting(hit[s] - share, -1.0, 1.0, alpha=level)
            near = 0.0 if d_low <= 0.0 <= d_high else min(abs(d_low), abs(d_high))
            far = max(abs(d_low), abs(d_high))
            low += near**2 / (k * p_high) if p_high > 0 else 0.0
            cap = far * (k - 1) / k
            high += min(far**2 / (k * p_low), cap) if p_low > 0 else cap
    scale = min(k, len(used)) - 1
    return float(np.sqrt(min(low / scale, 1.0))), float(np.sqrt(min(high / scale, 1.0)))


PERMUTATIONS = 1999  # resamples of the permutation test of association (exact below that many arrangements)


def chi_square_statistic(table: np.ndarray) -> float:
    """Pearson's chi-square statistic of a table whose row and column totals are all positive."""
    expected = np.outer(table.sum(axis=1), table.sum(axis=0)) / table.sum()
    return float(((table - expected) ** 2 / expected).sum())


def association(frame: pd.DataFrame, q: Question, reps: int = 0, seed: int = 0, stream: int = 0) -> pd.DataFrame:
    """The test of association between system and answer over items, with its effect size, Cramér's V, and V's
    95% interval (:func:`v_interval`; nan with ``reps`` 0, the report's no-intervals option).

    Each item gives one answer per system (its judgments' most common code); the items where every system of
    the table has an answer are kept. An item's answers are paired, not independent samples (a guideline that
    lets one candidate of two be flagged makes them negatively related, and then the chi-square test of
    independence rejects far above its level): the p-value is that of Pearson's chi-square statistic under
    permutations of the systems within each item (``scipy.stats.permutation_test``, ``permutation_type=
    "samples"``; exact when the arrangements are few, else ``PERMUTATIONS`` resamples drawn from
    ``[seed, 8, stream]``), the null being that an item's answers do not depend on which system gave them.
    """
    answers = item_answers(frame, q)
    systems = sorted(answers["system"].astype(str).unique())
    wide = answers.assign(system=answers["system"].astype(str)).pivot(index=UNIT, columns="system", values="value")
    wide = wide.reindex(columns=systems).dropna()
    codes = pd.unique(wide.to_numpy().ravel()) if len(wide) else np.array([])
    table = np.zeros((len(systems), len(codes)), dtype=np.int64)
    coded = np.stack([pd.Categorical(wide[s], categories=codes).codes for s in systems]) if len(wide) else None
    if coded is not None:
        for row, values in enumerate(coded):
            table[row] = np.bincount(values, minlength=len(codes))
    test, statistic, p = "", np.nan, np.nan
    if coded is not None and len(systems) >= 2 and len(codes) >= 2:
        test = "chi-square, systems permuted within items"

        def statistic_of(*samples: np.ndarray, axis: int = -1) -> np.ndarray:
            # samples: each system's answer codes, items on the last axis, a batch of permutations before it.
            counts = np.stack([(np.moveaxis(s, axis, -1)[..., None] == np.arange(len(codes))).sum(axis=-2)
                               for s in samples], axis=-2)  # fmt: skip
            expected = counts.sum(axis=-1, keepdims=True) * counts.sum(axis=-2, keepdims=True) / counts.sum(
                axis=(-2, -1), keepdims=True)
            return ((counts - expected) ** 2 / expected).sum(axis=(-2, -1))

        result = stats.permutation_test(tuple(coded), statistic_of, permutation_type="samples", vectorized=True,
                                        alternative="greater", n_resamples=PERMUTATIONS,
                                        random_state=np.random.default_rng([seed, 8, stream]))  # fmt: skip
        statistic, p = chi_square_statistic(table), float(result.pvalue)
    low = high = np.nan
    if reps > 0 and test:
        low, high = v_interval(coded, len(codes))  # type: ignore[arg-type]
    v = cramers_v(table) if test else np.nan
    return pd.DataFrame([[q.name, int(table.sum()), len(systems), len(codes), test,
                          float(statistic), v, float(low), float(high), float(p)]], columns=ASSOCIATION_COLUMNS)


def text_answers(frame: pd.DataFrame, q: Question) -> pd.DataFrame:
    part = frame[(frame["kind"] == "text") & (frame["question"] == q.name)]
    counts = part.groupby("system").size().rename("judgments answering").reset_index()
    return counts.assign(question=q.name)[["question", "system", "judgments answering"]]


def span_rows(tidy: pd.DataFrame, spec: Any) -> pd.DataFrame:
    """The target's spans, one row each: uid, label, weight. A span's answers are the span-answer rows of its
    region (the editor's region id), never those at the same offsets: two regions on the same words are two
    errors, each weighed by its own answers."""
    kind = tidy["kind"].astype(str)
    spans = tidy[(kind == "span").to_numpy() & (tidy["question"].astype(str) == spec.labels_name).to_numpy()]
    spans = pd.DataFrame({c: spans[c].astype(object).to_numpy() for c in ("uid", "value", "region")})
    answers = tidy[(kind == "span-answer").to_numpy()]
    codes: dict[tuple[Any, str], list[str]] = {}
    for uid, region, value in zip(answers["uid"], answers["region"].astype(str), answers["value"], strict=True):
        codes.setdefault((uid, region), []).append(str(value))
    weights = getattr(spec, "weights", ())
    spans["weight"] = [spec.weight_of(str(label), codes.get((u, str(r)), ())) if weights else 0.0
                       for u, label, r in zip(spans["uid"], spans["value"], spans["region"], strict=True)]  # fmt: skip
    return spans.rename(columns={"value": "label"})[["uid", "label", "weight"]]


def error_scores(spans: pd.DataFrame, judged: pd.DataFrame,
                 tokens: dict[str, tuple[np.ndarray, np.ndarray]] | None) -> pd.DataFrame:  # fmt: skip
    """One row per judged candidate (counted annotation): its item, system, annotator, spans, error score (the sum
    of its spans' weights, :func:`span_rows`) and the score per 100 words of its target text (whitespace
    tokens)."""
    per = spans.groupby("uid").agg(spans=("weight", "size"), score=("weight", "sum"))
    out = judged[["uid", "task_key", "annotator", "system"]].copy()
    out[UNIT] = judged[UNIT] if UNIT in judged.columns else judged["task_key"]
    out["spans"] = out["uid"].map(per["spans"]).fillna(0).astype(int)
    out[SCORE] = out["uid"].map(per["score"]).fillna(0.0).astype(float)
    words = [len(tokens[str(k)][0]) if tokens and str(k) in tokens else 0 for k in out["task_key"]]
    out["words"] = words
    with np.errstate(divide="ignore", invalid="ignore"):
        out[PER_100] = np.where(out["words"] > 0, 100 * out[SCORE] / out["words"].clip(lower=1), np.nan)
    return out.reset_index(drop=True)


def score_frame(scores: pd.DataFrame) -> pd.DataFrame:
    """The error scores as rating rows (each score and its per-100-words form an aspect), the item the sample."""
    parts = []
    for aspect in SCORES:
        values = scores[aspect].to_numpy(dtype=float)
        parts.append(pd.DataFrame({"task_key": scores[UNIT].astype(str).to_numpy(), "annotator": scores["annotator"],
                                   "aspect": aspect, "system": scores["system"], "rating": values,
                                   "code": [f"{v:g}" for v in values]})[np.isfinite(values)])  # fmt: skip
    frame = pd.concat(parts, ignore_index=True)
    frame["aspect"] = pd.Categorical(frame["aspect"], categories=list(SCORES), ordered=True)
    return frame.sort_values(["aspect", "system", "task_key", "annotator"], kind="stable").reset_index(drop=True)


def side_by_side(frame: pd.DataFrame, spec: Any, scores: pd.DataFrame, spans: pd.DataFrame) -> pd.DataFrame:
    """Per system: judged candidates, spans per candidate by label, mean error score (with weights) and the mean of
    every numeric per-candidate question (ESA's score beside its span counts), each by the items rule
    (:func:`annols.analysis.cells.items_mean`: per item over its judgments, then over items). ``spans``:
    :func:`span_rows`."""
    out = scores.groupby("system").agg(candidates=("uid", "size"))
    per = scores[["uid", UNIT, "system", "spans"]].rename(columns={"spans": "spans per candidate"})
    counts = spans.groupby(["uid", "label"]).size().unstack("label", fill_value=0)
    for label in [lab.value for lab in spec.labels]:
        found = counts[label] if label in counts.columns else pd.Series(dtype=float)
        per[f"{label} per candidate"] = per["uid"].map(found).fillna(0).astype(float)
    if getattr(spec, "weights", ()):
        per[f"mean {SCORE}"] = scores[SCORE].to_numpy(dtype=float)
    for column in per.columns[3:]:
        out[column] = _items_rule(per, column)
    for q in questions_of(spec):
        if q.numeric and q.per_candidate:
            part = frame[(frame["kind"] == "rating") & (frame["question"] == q.name)]
            given = pd.DataFrame({UNIT: part[UNIT] if UNIT in part.columns else part["task_key"],
                                  "system": part["system"], "value": pd.to_numeric(part["value"])})  # fmt: skip
            out[f"mean {q.name}"] = _items_rule(given, "value").reindex(out.index)
    return out.reset_index()


def _items_rule(frame: pd.DataFrame, column: str) -> pd.Series:
    """Per system, ``column``'s mean by the items rule (each item's mean over its judgments, then over items)."""
    out = {}
    for system, part in frame.groupby("system", sort=True):
        units, _ = pd.factorize(part[UNIT].astype(str), sort=True)
        out[system] = cells.items_mean(units, part[column].to_numpy(dtype=float))
    return pd.Series(out, dtype=float)
