"""Judges and humans: does a judge agree with the annotators as well as they agree with each other,
and would it have reached the same conclusion about the systems?

Input: the judgments table (:func:`annols.styles.judgments.tidy` rows with ``task_key`` and
``annotator``) of the humans and of the judges (annotators ``judge:<name>``), and which
(task, annotator) judged at all (an annotator who marked no span still judged).

Units: what one answer is about. Pairwise: an item and aspect (value win/tie/loss of the
system first in name order); ranking and ratings: an item's system on a dimension or
aspect (the rank or rating: numbers); sentences: an item's row, on the special case
(``-`` for none) and on each column; a task-level choice question: the item (several
codes joined by ``+``). Spans are compared as sets of (control, label, start, end) per item.

- **Agreement** per question, by its level of measurement: every pair of humans, the judge
  with each human, and the judge with the human majority: share of equal answers, Cohen's
  kappa (codes; quadratic-weighted for ranks and ratings, weights from the values'
  distances) and Krippendorff's alpha (nominal for codes, ordinal for ranks and ratings,
  with interval alpha beside it). The human majority of a unit is the code more than half
  its annotators gave (units without one are left out), for numbers the median (the lower
  middle value when even).
- **Agreement as MT-Bench counts it** (pairwise; :mod:`annols.analysis.judging.arena`): pairs of votes on a
  unit, two humans' or the judge's and a human's, equal or not, with ties and without.
- **Correlations and bias** per question of numbers: the judge's answer against the
  humans' mean on each unit, Pearson, Spearman and Kendall tau-b (scipy), and the mean bias
  (judge - humans' mean) with a 95% interval over items: the betting interval bounded by the question's
  range where it is known (:func:`annols.analysis.inference.intervals.betting_ratio`), else the percentile bootstrap.
- **Error counts** (spans, sentence codes; :func:`count_tables`): per item, the spans each rater marked per
  labels control, or the rows given a code per column; the judge's count against the humans' mean count as
  above (correlations and bias) and agreement at the counts' level.
- **Alternative annotator test** (Calderon, Reichart & Dror 2025), with three or more
  annotators: for each annotator j, on the units j answered with at least one other
  annotator and the judge, the judge and j are each scored against the others: the share
  of the others with the same answer (codes), minus the root mean squared difference
  (numbers), or the mean exact span F1 with each other (spans). W_f = 1 where the judge
  scores at least as high as j, W_h = 1 where j scores at least as high as the judge;
  rho_f and rho_h their means. H0: rho_f <= rho_h - epsilon, tested with the one-sided
  one-sample t-test of d = W_h - W_f against epsilon (:func:`scipy.stats.ttest_1samp`,
  alternative "less"); when every d is the same the test is degenerate and p is 0 if
  d < epsilon, else 1. The annotators' p-values are corrected by Benjamini-Yekutieli
  (statsmodels, q = 0.05) as in the paper; the winning rate omega is the share of
  annotators whose H0 is rejected, and the judge passes (may replace an annotator) when
  omega >= 0.5. rho (average advantage probability) is the mean of rho_f. Pooled over the
  questions (a judge with two or more): each question's unit is one instance, as the
  authors' SummEval data has one instance per summary and aspect; per annotator one t-test
  over the instances of every question, then the same correction and verdict.
- **Systems**: the style's system-level score by the humans (pooled) and by each judge:
  pairwise the win rate (ties count half), ranking the mean rank, ratings the mean rating,
  spans the spans per item (of each system's items), sentences the % of rows with a code
  in each column (fewer is better for the last two, as for ranks);
  Kendall's tau-b, Pearson's r and Spearman's rho between the two (scipy), and whether the order
  is the same (systems with equal scores are tied in it).
- **Disagreements**: units where the judge's answer equals no human's, a rating within the
  tolerance of a human's excepted; named by the input record's id and the task key.
- **Spans**: exact F1 (2 x matching spans / spans of both, summed over items) of the judge
  against each human and against the majority spans (marked by more than half the humans).
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections import Counter
from collections.abc import Collection, Sequence
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]
from scipy import stats as scipy_stats
from statsmodels.stats.multitest import multipletests  # type: ignore[import-untyped, unused-ignore]

from annols.analysis.by_style import best_worst
from annols.analysis.inference import bootstrap, intervals
from annols.analysis.judging import arena
from annols.analysis.naming import natural_systems
from annols.analysis.options import AnalysisOptions
from annols.analysis.raters import agreement as agreement_lib
from annols.analysis.results import Finding, Table, percent
from annols.formats.answers import is_judge

EPSILON = 0.2  # the authors' value for experts, used on SummEval (0.15 skilled annotators, 0.1 crowd-workers)
ALPHA = 0.05
MAJORITY = "human majority"
NONE = "-"
SPANS = "spans (exact F1)"
UNIT_COLUMNS = ["question", "unit", "task_key", "about", "annotator", "value", "numeric"]


def units(frame: pd.DataFrame, special: str = "special") -> pd.DataFrame:
    """One row per answer about a unit (:data:`UNIT_COLUMNS`), from judgments rows."""
    rows: list[tuple[Any, ...]] = []
    choices: dict[tuple[str, str, str], list[str]] = {}
    for r in frame.itertuples(index=False):
        kind, key, who = r.kind, str(r.task_key), str(r.annotator)
        if kind == "preference":
            about = f"{r.system} vs {r.opponent}"
            rows.append((r.question, f"{key}|{about}", key, about, who, str(r.value), False))
        elif kind in ("rank", "rating"):
            rows.append((r.question, f"{key}|{r.system}", key, str(r.system), who, float(r.value), True))
        elif kind == "row":
            about = f"row {r.row}"
            rows.append((special, f"{key}|{about}", key, about, who, str(r.value) or NONE, False))
        elif kind == "cell":
            about = f"row {r.row}"
            rows.append((r.question, f"{key}|{about}", key, about, who, str(r.value), False))
        elif kind == "choice":
            choices.setdefault((str(r.question), key, who), []).append(str(r.value))
        elif kind == "best-worst" and r.code in ("best", "worst"):  # the candidate picked as best, as worst
            question = f"{r.question} ({r.code})"
            rows.append((question, f"{key}|{question}", key, "", who, str(r.system), False))
    for (question, key, who), codes in choices.items():
        rows.append((question, key, key, "", who, "+".join(sorted(codes)), False))
    return pd.DataFrame(rows, columns=UNIT_COLUMNS)


def majority(values: Sequence[Any], numeric: bool) -> Any:
    """The human majority of one unit: the code more than half gave (None if none), the lower median of numbers."""
    if numeric:
        ordered = sorted(float(v) for v in values)
        return ordered[(len(ordered) - 1) // 2]
    code, count = Counter(values).most_common(1)[0]
    return code if count * 2 > len(values) else None


def _pair(a: pd.Series, b: pd.Series, numeric: bool) -> list[Any]:
    """[units, agreement %, Cohen kappa, Krippendorff alpha, alpha (interval)] of two raters' answers by unit:
    for numbers the kappa is quadratic-weighted and alpha ordinal, with interval alpha beside it."""
    both = pd.concat([a.rename("a"), b.rename("b")], axis=1, join="inner")
    n = len(both)
    if not n:
        return [0, np.nan, np.nan, np.nan, np.nan]
    x, y = both["a"].to_numpy(), both["b"].to_numpy()
    agree = float(percent((x == y).sum(), n))
    level = "ordinal" if numeric else "nominal"
    found = [agreement_lib.cohen_or_weighted(x, y, level), agreement_lib.pair_alpha(x, y, level)]
    interval = agreement_lib.pair_alpha(x, y, "interval") if numeric else np.nan
    return [n, agree, *found, interval]


def _by_unit(part: pd.DataFrame, who: str) -> pd.Series:
    return part[part["annotator"] == who].set_index("unit")["value"]


def _majority_series(humans: pd.DataFrame, numeric: bool) -> pd.Series:
    found = {unit: majority(list(g["value"]), numeric) for unit, g in humans.groupby("unit", sort=True)}
    return pd.Series({u: v for u, v in found.items() if v is not None}, dtype=object)


def agreement(table: pd.DataFrame, judges: Sequence[str]) -> Table:
    rows = []
    for question, part in table.groupby("question", sort=False):
        numeric = bool(part["numeric"].iloc[0])
        humans = part[~part["annotator"].map(is_judge).astype(bool)]
        names = sorted(humans["annotator"].unique())
        for a, b in itertools.combinations(names, 2):
            rows.append([question, a, b, *_pair(_by_unit(part, a), _by_unit(part, b), numeric)])
        best = _majority_series(humans, numeric)
        for judge in judges:
            mine = _by_unit(part, judge)
            if not len(mine):
                continue
            for a in names:
                rows.append([question, judge, a, *_pair(mine, _by_unit(part, a), numeric)])
            rows.append([question, judge, MAJORITY, *_pair(mine, best, numeric)])
    columns = ["question", "rater 1", "rater 2", "units", "agreement %", "Cohen kappa", "Krippendorff alpha",
               "alpha (interval)"]  # fmt: skip
    note = ("By the question's level of measurement: codes get Cohen's kappa and nominal alpha; ranks and ratings "
            "get quadratic-weighted Cohen's kappa (weights from the values' distances), ordinal alpha and, beside "
            "it, interval alpha (the level SummEval reports). A judge that ranks like the humans but is offset "
            "scores low here: see the correlations and the bias below.")
    return Table("judges_agreement", "Agreement: humans with each other, each judge with each human and "
                 "with the human majority", pd.DataFrame(rows, columns=columns), note)  # fmt: skip


def alt_test_p(d: np.ndarray, epsilon: float) -> tuple[float, float]:
    """(t, p) of H0: mean(d) >= epsilon against mean(d) < epsilon (one-sided); degenerate when d is constant."""
    if len(d) < 2 or np.all(d == d[0]):
        mean = float(d.mean()) if len(d) else np.nan
        return (-math.inf if mean < epsilon else math.inf), (0.0 if mean < epsilon else 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        found = scipy_stats.ttest_1samp(d, popmean=epsilon, alternative="less")
    return float(found.statistic), float(found.pvalue)


def alt_test(scores: dict[str, tuple[np.ndarray, np.ndarray]], epsilon: float) -> tuple[list[list[Any]], list[Any]]:
    """Per annotator: (the judge's score, the annotator's score) on each of their units -> rows, and the summary.

    Rows: [annotator, units, rho_f, rho_h, advantage, CI low, CI high, t, p, p (BY), H0 rejected]; summary:
    [annotators, rejected, winning rate, rho, passes]. The advantage is the test's effect, rho_f - rho_h (the
    mean of -d), with its 95% bounded interval over the units (:func:`advantage_interval`).
    """
    rows = []
    for who, (f, h) in sorted(scores.items()):
        w_f, w_h = (f >= h).astype(float), (h >= f).astype(float)
        t, p = alt_test_p(w_h - w_f, epsilon)
        rows.append([who, len(f), float(w_f.mean()), float(w_h.mean()), *advantage_interval(w_f - w_h), t, p])
    if not rows:
        return [], []
    rejected, adjusted, _, _ = multipletests([r[8] for r in rows], alpha=ALPHA, method="fdr_by")
    for r, reject, q in zip(rows, rejected, adjusted, strict=True):
        r += [float(q), bool(reject)]
    omega = float(np.mean(rejected))
    rho = float(np.mean([r[2] for r in rows]))
    return rows, [len(rows), int(np.sum(rejected)), omega, rho, omega >= 0.5]


def advantage_interval(gain: np.ndarray, level: float = 0.95) -> tuple[float, float, float]:
    """The judge's mean advantage over an annotator (mean of W_f - W_h) and its 95% interval over the units: each
    gain lies in [-1, 1], so the betting interval of a bounded mean
    (:func:`annols.analysis.inference.intervals.betting`; Waudby-Smith & Ramdas 2024). Never a point: the t interval the
    t-test inverts covered 0.908 at 100 items on a ceiling plant and was a point wherever every gain was equal (judge
    and annotator both at the top)."""
    if not len(gain):
        return np.nan, np.nan, np.nan
    low, high = intervals.betting(np.asarray(gain, dtype=float), -1.0, 1.0, 1 - level)
    return float(gain.mean()), low, high


def _score(mine: Any, others: list[Any], numeric: bool) -> float:
    if numeric:
        return -math.sqrt(sum((float(mine) - float(o)) ** 2 for o in others) / len(others))
    return sum(mine == o for o in others) / len(others)


def alt_test_scores(part: pd.DataFrame, judge: str, numeric: bool) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per annotator: the judge's and the annotator's alignment with the other annotators, unit by unit."""
    humans = part[~part["annotator"].map(is_judge).astype(bool)]
    mine = _by_unit(part, judge).to_dict()
    by_unit = {u: dict(zip(g["annotator"], g["value"], strict=True)) for u, g in humans.groupby("unit", sort=True)}
    out: dict[str, tuple[list[float], list[float]]] = {}
    for unit, given in by_unit.items():
        if unit not in mine or len(given) < 2:
            continue
        for who, value in given.items():
            others = [v for a, v in given.items() if a != who]
            f, h = out.setdefault(who, ([], []))
            f.append(_score(mine[unit], others, numeric))
            h.append(_score(value, others, numeric))
    return {who: (np.array(f), np.array(h)) for who, (f, h) in out.items()}


ALT_COLUMNS = ["judge", "question", "annotator", "units", "rho judge", "rho annotator", "advantage", "CI low",
               "CI high", "t", "p", "p (BY)", "H0 rejected"]  # fmt: skip
SUMMARY_COLUMNS = ["judge", "question", "annotators", "rejected", "winning rate", "rho (advantage)",
                   "as good as an annotator"]  # fmt: skip


Scores = dict[str, tuple[np.ndarray, np.ndarray]]  # annotator -> (the judge's, the annotator's) per unit


def alt_tests(table: pd.DataFrame, judges: Sequence[str], epsilon: float,
              span_scores: dict[str, Scores] | None = None) -> tuple[Table, Table, Table]:  # fmt: skip
    """The per-annotator and summary tables per judge and question, and the test pooled over the questions."""
    rows, summary, pooled = [], [], []
    groups: list[tuple[str, str, dict[str, tuple[np.ndarray, np.ndarray]]]] = []
    for question, part in table.groupby("question", sort=False):
        humans = part[~part["annotator"].map(is_judge).astype(bool)]["annotator"].nunique()
        if humans < 3:
            continue
        numeric = bool(part["numeric"].iloc[0])
        for judge in judges:
            groups.append((judge, str(question), alt_test_scores(part, judge, numeric)))
    for judge, scores in (span_scores or {}).items():
        groups.append((judge, SPANS, scores))
    for judge, question, scores in groups:
        found, total = alt_test(scores, epsilon)
        rows += [[judge, question, *r] for r in found]
        if total:
            summary.append([judge, question, *total])
    for judge in judges:
        mine = [(q, scores) for j, q, scores in groups if j == judge and scores]
        if len(mine) < 2:
            continue
        _, total = alt_test(pool([scores for _, scores in mine]), epsilon)
        if total:
            pooled.append([judge, len(mine), ", ".join(q for q, _ in mine), *total])
    note = (
        f"epsilon = {epsilon}, the cost-benefit margin; the authors' guidance (Calderon et al. 2025): 0.2 for "
        f"experts, 0.15 for skilled annotators, 0.1 for crowd-workers, smaller when the annotators agree little. "
        f"Benjamini-Yekutieli over the annotators at q = {ALPHA}. Needs three or more annotators. Advantage: the "
        f"test's effect, rho judge - rho annotator (the mean of W_f - W_h over the units), with its 95% bounded "
        f"interval over the units (betting, Waudby-Smith & Ramdas 2024: each W_f - W_h lies in -1 to 1); H0 says it "
        f"is at most -epsilon."
    )
    pooled_note = ("Each question's unit is one instance of a single test, as the authors do for SummEval's four "
                   "aspects (an instance is a summary and an aspect): per annotator, the instances of every "
                   "question they answered, one t-test; Benjamini-Yekutieli over the annotators. " + note)
    return (Table("judges_alt_test", "Alternative annotator test, per annotator", pd.DataFrame(rows,
                  columns=ALT_COLUMNS), note),
            Table("judges_alt_test_summary", "Alternative annotator test: can the judge replace an annotator?",
                  pd.DataFrame(summary, columns=SUMMARY_COLUMNS), note),
            Table("judges_alt_test_pooled", "Alternative annotator test pooled over the questions",
                  pd.DataFrame(pooled, columns=POOLED_COLUMNS), pooled_note))  # fmt: skip


POOLED_COLUMNS = ["judge", "questions", "pooled", *SUMMARY_COLUMNS[2:]]


def pool(groups: Sequence[Scores]) -> Scores:
    """Each annotator's scores over several questions, one after the other: one instance per question's unit."""
    out: dict[str, tuple[list[np.ndarray], list[np.ndarray]]] = {}
    for scores in groups:
        for who, (f, h) in scores.items():
            mine = out.setdefault(who, ([], []))
            mine[0].append(f)
            mine[1].append(h)
    return {who: (np.concatenate(f), np.concatenate(h)) for who, (f, h) in out.items()}


# --- correlations and bias -------------------------------------------------------------------

CORRELATION_COLUMNS = ["judge", "question", "units", "items", "Pearson r", "Spearman rho", "Kendall tau",
                       "mean bias", "bias CI low", "bias CI high"]  # fmt: skip


def correlations(table: pd.DataFrame, judges: Sequence[str], options: AnalysisOptions,
                 ranges: dict[str, tuple[float, float]] | None = None) -> Table:  # fmt: skip
    """Per judge and question of numbers: the judge's answer against the humans' mean answer on each unit
    (Pearson, Spearman, Kendall tau-b from scipy), and the mean bias (judge - humans' mean) with its 95% interval
    over items (each item's units together). ``ranges``: each question's range of values
    (:func:`annols.analysis.judging.ppi.ranges_of`); where a question has one, the interval is the betting interval of
    the ratio sum(differences) / units over items (:func:`annols.analysis.inference.intervals.betting_ratio`, a unit's
    difference lies within plus or minus the range's width: it holds with few items and at a ceiling, where the
    percentile bootstrap covered 0.825 at 10 items), else the percentile bootstrap."""
    ranges = ranges or {}
    rows = []
    numbers = table[table["numeric"].astype(bool)]
    for n, (question, part) in enumerate(numbers.groupby("question", sort=False)):
        humans = part[~part["annotator"].map(is_judge).astype(bool)]
        mean = humans.groupby("unit")["value"].agg(lambda v: float(np.mean(v.astype(float))))
        item_of = humans.groupby("unit")["task_key"].first()
        for k, judge in enumerate(judges):
            mine = _by_unit(part, judge).astype(float)
            both = pd.concat([mine.rename("judge"), mean.rename("humans"), item_of.rename("item")], axis=1,
                             join="inner")  # fmt: skip
            if not len(both):
                continue
            diff = both["judge"] - both["humans"]
            per_item = diff.groupby(both["item"], sort=True).agg(["sum", "size"]).to_numpy(dtype=float)
            bounds = ranges.get(str(question))
            if bounds is not None and options.bootstrap > 0:  # --bootstrap 0 leaves the intervals out
                width = bounds[1] - bounds[0]
                low, high = intervals.betting_ratio(per_item[:, 0], per_item[:, 1], -width, width, seed=options.seed)
            else:
                rng = np.random.default_rng([options.seed, n, k])
                low, high = bootstrap.ratio(per_item, options.bootstrap, rng)
            rows.append([judge, question, len(both), len(per_item),
                         *(agreement_lib.correlation(both["judge"], both["humans"], m) for m in METHODS),
                         float(diff.mean()), low, high])  # fmt: skip
    note = ("A unit is an item's system (a rank or rating); the humans' answer is their mean on it. Correlation "
            "says whether the judge orders the units as the humans do, the bias how far above (+) or below (-) "
            "their mean it answers on average: a judge one point lower on every unit has r = 1 and bias -1. "
            "95% bias interval over items: " + ("betting interval bounded by the scale (Waudby-Smith & Ramdas "
                                                "2024) where the question's range is known, else " if ranges else "")
            + "percentile bootstrap.")
    return Table("judges_correlation", "Judges against the humans' mean: correlations and bias",
                 pd.DataFrame(rows, columns=CORRELATION_COLUMNS), note)  # fmt: skip


METHODS = ("pearson", "spearman", "kendall")

SPANS_PER_ITEM = "{}: spans per item"
CODED_ROWS = "{}: rows with a code per item"


def count_units(frame: pd.DataFrame, judged: pd.DataFrame | None) -> pd.DataFrame:
    """The error counts each rater gave each item (:data:`UNIT_COLUMNS`, numbers): per labels control the spans
    marked (``judged``: every counted (task, rater), so an item without spans counts 0), per sentence column the
    rows given a code (of the rows each judgment has). The unit is the item, as a candidate is its item's output."""
    parts = []

    def counted(raters: pd.DataFrame, marks: pd.DataFrame, questions: Sequence[str], name: str) -> None:
        keys = raters[["task_key", "annotator"]].astype(str).drop_duplicates()
        for q in questions:
            mine = marks[marks["question"].astype(str) == q]
            n = mine.groupby([mine["task_key"].astype(str), mine["annotator"].astype(str)]).size()
            index = pd.MultiIndex.from_frame(keys)
            parts.append(pd.DataFrame({"question": name.format(q), "unit": keys["task_key"].to_numpy(),
                                       "task_key": keys["task_key"].to_numpy(), "about": "",
                                       "annotator": keys["annotator"].to_numpy(),
                                       "value": n.reindex(index, fill_value=0).to_numpy(dtype=float),
                                       "numeric": True}))  # fmt: skip

    spans = frame[frame["kind"] == "span"]
    if judged is not None and len(spans):
        counted(judged, spans, sorted(spans["question"].astype(str).unique()), SPANS_PER_ITEM)
    cells = frame[frame["kind"] == "cell"].drop_duplicates(["task_key", "annotator", "question", "row"])
    if len(cells):
        counted(frame[frame["kind"] == "row"], cells, sorted(cells["question"].astype(str).unique()), CODED_ROWS)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=UNIT_COLUMNS)


def count_tables(frame: pd.DataFrame, judged: pd.DataFrame | None, judges: Sequence[str],
                 options: AnalysisOptions) -> list[Table]:  # fmt: skip
    """Judges on error codes: per item, the judge's error count against the humans' mean count (correlations and
    bias, as :func:`correlations`) and its agreement with each human and the majority at the counts' interval level
    (:func:`agreement`); none where the style marks no errors."""
    counts = count_units(frame, judged)
    if not len(counts):
        return []
    note = ("A unit is an item (its candidate): the errors each rater marked on it, spans per labels control or "
            "sentence rows given a code per column (0 where none). Correlation says whether the judge finds more "
            "errors where the humans do; the bias, how many more (+) or fewer (-) per item than the humans' mean, "
            "with its 95% percentile bootstrap interval over items. Agreement: counts are numbers, so "
            "quadratic-weighted kappa, ordinal alpha and interval alpha beside it.")  # fmt: skip
    found = correlations(counts, judges, options)
    agreed = agreement(counts, judges)
    return [Table("judges_count_correlation", "Judges against the humans' mean error count per item: "
                  "correlations and bias", found.frame, note),
            Table("judges_count_agreement", "Agreement on error counts per item: humans with each other, each "
                  "judge with each human and with the human majority", agreed.frame, note)]  # fmt: skip


# --- systems ---------------------------------------------------------------------------------


LOWER_FIRST = ("mean rank", "spans per item", "% rows with a code")  # measures where less is better


def system_scores(frame: pd.DataFrame, judged: pd.DataFrame | None = None,
                  task_systems: dict[str, str] | None = None, controls: Sequence[str] = (),
                  columns: Sequence[str] = ()) -> pd.DataFrame:  # fmt: skip
    """[question, system, measure, score] of one rater group's judgments rows.

    Pairwise: win rate % (ties half); ranking: mean rank; ratings: mean rating; best-worst: the
    counting score (% best - % worst); spans: spans
    per item (a labels control's spans over the (item, rater) judged, by the item's one
    system: ``judged`` and ``task_systems``); sentences: % rows with a code in a column.
    """
    rows: list[tuple[str, str, str, float]] = []
    prefs = frame[frame["kind"] == "preference"]
    if len(prefs):
        points: dict[tuple[str, str], list[float]] = {}
        share = {"win": 1.0, "tie": 0.5, "loss": 0.0}
        for r in prefs.itertuples(index=False):
            mine = share[str(r.value)]
            points.setdefault((r.question, r.system), []).append(mine)
            points.setdefault((r.question, r.opponent), []).append(1.0 - mine)
        rows += [(q, s, "win rate %", 100.0 * float(np.mean(v))) for (q, s), v in points.items()]
    for kind, measure in (("rank", "mean rank"), ("rating", "mean rating")):
        part = frame[frame["kind"] == kind]
        for (q, s), g in part.groupby(["question", "system"], sort=True):
            rows.append((q, s, measure, float(pd.to_numeric(g["value"]).mean())))
    picks = frame[frame["kind"] == "best-worst"]
    if len(picks):  # % best - % worst of the tuples a candidate was in
        answers = pd.DataFrame({"aspect": picks["question"].astype(str), "system": picks["system"].astype(str),
                                "value": pd.to_numeric(picks["value"]).astype(int)})  # fmt: skip
        for r in best_worst.scores(answers).itertuples(index=False):
            rows.append((str(r.aspect), str(r.system), "best-worst score %", float(r[-1])))
    if controls and judged is not None and task_systems:
        items = Counter(task_systems.get(str(k), "") for k in judged["task_key"])
        spans = frame[frame["kind"] == "span"]
        for q in controls:
            counted = Counter(str(s) for s in spans[spans["question"] == q]["system"])
            rows += [(q, s, "spans per item", counted[s] / n) for s, n in sorted(items.items()) if s]
    if columns:
        marked = frame[frame["kind"] == "row"]
        per_system = Counter(str(s) for s in marked["system"])
        cells = frame[frame["kind"] == "cell"].drop_duplicates(["task_key", "annotator", "question", "row"])
        for q in columns:
            counted = Counter(str(s) for s in cells[cells["question"] == q]["system"])
            rows += [(q, s, "% rows with a code", 100.0 * counted[s] / n) for s, n in sorted(per_system.items()) if s]
    return pd.DataFrame(rows, columns=["question", "system", "measure", "score"])


def systems(frame: pd.DataFrame, judges: Sequence[str], judged: pd.DataFrame | None = None,
            task_systems: dict[str, str] | None = None) -> tuple[Table, Table] | None:  # fmt: skip
    controls = sorted(frame[frame["kind"] == "span"]["question"].unique())
    columns = sorted(frame[frame["kind"] == "cell"]["question"].unique())

    def scored(group: pd.DataFrame, who: Any) -> pd.DataFrame:
        mine = judged[who(judged["annotator"])] if judged is not None else None
        return system_scores(group, mine, task_systems, controls, columns)

    humans = scored(frame[~frame["annotator"].map(is_judge).astype(bool)], lambda a: ~a.map(is_judge).astype(bool))
    if not len(humans):
        return None
    by_judge = {j: scored(frame[frame["annotator"] == j], lambda a, j=j: a == j) for j in judges}
    side = humans.rename(columns={"score": "humans"})
    for j, scores in by_judge.items():
        side = side.merge(scores.rename(columns={"score": j}), on=["question", "system", "measure"], how="left")
    side = side.sort_values(["question", "system"], kind="stable", key=natural_systems).reset_index(drop=True)
    order_rows = []
    for question, part in side.groupby("question", sort=False):
        for j in judges:
            both = part[["system", "humans", j]].dropna()
            tau = np.nan
            if len(both) >= 2:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    tau = float(scipy_stats.kendalltau(both["humans"], both[j]).statistic)
            measure = str(part["measure"].iloc[0])
            human_order, judge_order = _order(both, "humans", measure), _order(both, j, measure)
            r = [agreement_lib.correlation(both["humans"], both[j], m) for m in METHODS[:2]]
            order_rows.append([j, question, len(both), human_order, judge_order, human_order == judge_order, tau,
                               *r])  # fmt: skip
    columns = ["judge", "question", "systems", "order by humans", "order by judge", "same order", "Kendall tau",
               "Pearson r", "Spearman rho"]  # fmt: skip
    return (
        Table("judges_systems", "System-level results by the humans and by each judge", side),
        Table(
            "judges_system_order",
            "Do the judges order the systems as the humans do?",
            pd.DataFrame(order_rows, columns=columns),
            "System-level correlation: Kendall's tau-b, Pearson's r and Spearman's rho over the systems' scores "
            "(scipy); '=' joins systems with equal scores.",
        ),
    )


def _order(part: pd.DataFrame, column: str, measure: str) -> str:
    """Systems best first (lowest first for :data:`LOWER_FIRST`, else highest), equal scores joined by '='."""
    ascending = measure in LOWER_FIRST
    ranked = part.sort_values([column, "system"], ascending=[ascending, True], kind="stable")
    out = ""
    previous = None
    for system, score in zip(ranked["system"], ranked[column], strict=True):
        if previous is not None:
            out += " = " if math.isclose(score, previous, abs_tol=1e-9) else " > "
        out += str(system)
        previous = score
    return out


# --- disagreements ---------------------------------------------------------------------------


def disagreements(table: pd.DataFrame, judges: Sequence[str], tolerance: float = 0.0, rated: Collection[str] = (),
                  record_ids: dict[str, str] | None = None) -> Table:  # fmt: skip
    """Units where the judge's answer equals no human's; a rating within ``tolerance`` of a human's is no
    disagreement (``rated``: the questions of ratings; ranks and codes must be equal). Each row names the
    input record's id (``record_ids``: task key -> id, "" where the record has none) beside the task key."""
    rows = []
    humans = table[~table["annotator"].map(is_judge).astype(bool)]
    given = {(q, u): g for (q, u), g in humans.groupby(["question", "unit"], sort=True)}
    ids = record_ids or {}
    for judge in judges:
        mine = table[table["annotator"] == judge]
        for r in mine.itertuples(index=False):
            theirs = given.get((r.question, r.unit))
            if theirs is None or r.value in set(theirs["value"]):
                continue
            if str(r.question) in rated and tolerance and min(abs(float(r.value) - float(v)) for v in theirs["value"]) \
                    <= tolerance + 1e-9:  # fmt: skip
                continue
            said = "; ".join(f"{a}: {_shown(v)}" for a, v in sorted(zip(theirs["annotator"], theirs["value"],
                                                                          strict=True)))  # fmt: skip
            rows.append([judge, r.question, ids.get(str(r.task_key), ""), r.task_key, r.about, _shown(r.value), said])
    columns = ["judge", "question", "record id", "task_key", "about", "judge's answer", "humans' answers"]
    frame = pd.DataFrame(rows, columns=columns).sort_values(["judge", "question", "task_key", "about"], kind="stable")
    note = (f"A rating within {tolerance:g} of some human's (report --rating-tolerance) is not a disagreement; "
            "ranks and codes must be equal. The record id is the input record's id field.")
    return Table("judges_disagreements", "Where a judge disagrees with every human", frame.reset_index(drop=True),
                 note, shown=50)  # fmt: skip


def _shown(value: Any) -> str:
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:g}"
    return str(value)


# --- spans -----------------------------------------------------------------------------------

Spans = dict[tuple[str, str], Counter[tuple[str, str, int, int]]]  # (task, annotator) -> spans


def span_sets(frame: pd.DataFrame, judged: pd.DataFrame) -> Spans:
    out: Spans = {(str(k), str(a)): Counter() for k, a in zip(judged["task_key"], judged["annotator"], strict=True)}
    spans = frame[frame["kind"] == "span"]
    for r in spans.itertuples(index=False):
        out.setdefault((str(r.task_key), str(r.annotator)), Counter())[(str(r.question), str(r.value), int(r.start),
                                                                          int(r.end))] += 1  # fmt: skip
    return out


def item_f1(a: Counter[Any], b: Counter[Any]) -> float:
    total = sum(a.values()) + sum(b.values())
    return 1.0 if total == 0 else 2 * sum((a & b).values()) / total


def _majority_spans(given: list[Counter[Any]]) -> Counter[Any]:
    marked = Counter(s for c in given for s in set(c))
    return Counter({s: 1 for s, n in marked.items() if n * 2 > len(given)})


def span_tables(frame: pd.DataFrame, judged: pd.DataFrame, judges: Sequence[str]) -> tuple[Table, dict[str, Any]]:
    sets = span_sets(frame, judged)
    items: dict[str, dict[str, Counter[Any]]] = {}
    for (key, who), spans in sets.items():
        items.setdefault(key, {})[who] = spans
    rows = []
    scores: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]] = {}
    names = sorted({w for per in items.values() for w in per if not is_judge(w)})
    for a, b in itertools.combinations(names, 2):
        rows.append(["humans", a, b, *_f1([(p[a], p[b]) for p in items.values() if a in p and b in p])])
    for judge in judges:
        pairs: dict[str, list[tuple[Counter[Any], Counter[Any]]]] = {}
        per_annotator: dict[str, tuple[list[float], list[float]]] = {}
        for per in items.values():
            if judge not in per:
                continue
            humans = {w: s for w, s in per.items() if not is_judge(w)}
            for who, spans in humans.items():
                pairs.setdefault(who, []).append((per[judge], spans))
                others = [s for w, s in humans.items() if w != who]
                if others:
                    f, h = per_annotator.setdefault(who, ([], []))
                    f.append(float(np.mean([item_f1(per[judge], o) for o in others])))
                    h.append(float(np.mean([item_f1(spans, o) for o in others])))
            if humans:
                pairs.setdefault(MAJORITY, []).append((per[judge], _majority_spans(list(humans.values()))))
        for who in [*names, MAJORITY]:
            if who in pairs:
                rows.append([judge, judge, who, *_f1(pairs[who])])
        if len(per_annotator) >= 3:
            scores[judge] = {w: (np.array(f), np.array(h)) for w, (f, h) in per_annotator.items()}
    columns = ["group", "rater 1", "rater 2", "items", "spans 1", "spans 2", "exact F1"]
    table = Table("judges_span_f1", "Span exact F1: humans with each other, each judge with each human and the "
                  "majority spans", pd.DataFrame(rows, columns=columns))  # fmt: skip
    return table, scores


def _f1(pairs: list[tuple[Counter[Any], Counter[Any]]]) -> list[Any]:
    one, two = sum(sum(a.values()) for a, _ in pairs), sum(sum(b.values()) for _, b in pairs)
    matched = sum(sum((a & b).values()) for a, b in pairs)
    return [len(pairs), one, two, (2 * matched / (one + two)) if one + two else np.nan]


# --- the section -----------------------------------------------------------------------------


def sections(frame: pd.DataFrame, judged: pd.DataFrame, judges: Sequence[str], epsilon: float = EPSILON,
             special: str = "special", spans: bool = False, task_systems: dict[str, str] | None = None,
             options: AnalysisOptions | None = None, tolerance: float = 0.0,
             record_ids: dict[str, str] | None = None,
             ranges: dict[str, tuple[float, float]] | None = None) -> list[Finding]:  # fmt: skip
    """The "Judges and humans" section from judgments rows of humans and judges. ``options``: the bias
    intervals' bootstrap; ``ranges``: each question's range of values (the bias intervals bounded where known);
    ``tolerance``: how far a rating may be from a human's and not be a disagreement;
    ``record_ids``: task key -> the input record's id, named in the disagreements."""
    options = options or AnalysisOptions()
    table = units(frame, special)
    text = [f"Judges: {', '.join(judges)}. Each judge is compared with every annotator and with the human "
            "majority, beside the annotators' agreement with each other; the study's own tables above count "
            "the humans only."]  # fmt: skip
    tables = [agreement(table, judges)]
    if (frame["kind"] == "preference").any():
        tables.append(arena.agreement(frame, judges))
    if table["numeric"].astype(bool).any():
        tables.append(correlations(table, judges, options, ranges))
    span_scores: dict[str, Any] = {}
    if spans:
        span_table, span_scores = span_tables(frame, judged, judges)
        tables.append(span_table)
    tables += count_tables(frame, judged, judges, options)
    per_annotator, summary, pooled = alt_tests(table, judges, epsilon, span_scores)
    if not len(summary.frame):
        text.append("Alternative annotator test: not computed, it needs three or more annotators per question.")
    tables += [summary, *([pooled] if len(pooled.frame) else []), per_annotator]
    found = systems(frame, judges, judged, task_systems)
    if found:
        tables += list(found)
    else:
        text.append("Systems: this style has no system-level score to compare.")
    rated = set(frame.loc[frame["kind"] == "rating", "question"].astype(str))
    tables.append(disagreements(table, judges, tolerance, rated, record_ids))
    return [Finding("Judges and humans", text, tables)]
