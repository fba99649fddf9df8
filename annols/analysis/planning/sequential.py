"""Studies in rounds: anytime-valid decisions on the comparisons a study exists for.

A comparison is two systems on one question. Items are the unit: an item's judgments of the
pair make one observation, bounded in [-bound, bound]:

- pairwise: the item's net preference as a share of its decided judgments (wins minus losses
  over wins plus losses; 0 for an item of ties only), in [-1, 1]: the scale of ``annols plan``'s
  effect;
- ratings: the item's mean rating of the first system minus its mean rating of the second,
  bound the scale's range;
- ranking: the item's mean rank of the second system minus that of the first (a positive
  value: the first ranks better), bound the number of candidates minus one;
- best-worst: the item's score of the first system minus that of the second, each 100 x (times
  chosen best - times chosen worst) / times shown in the item (the report's paired tests,
  :func:`annols.analysis.by_style.best_worst.item_scores`), bound 200; the item is the pool of
  candidates shown with one context, all its tuples together;
- own definitions of the spans style (ESA, MQM), whose tasks show one candidate each, the item
  the context they share: each numeric question asked per candidate (ESA's score), the item's
  mean of the first system minus that of the second, bound the question's range (a slider or
  number needs its min and max, a scale its numeric codes; a question without a range is
  refused); and, with ``[[spans.weights]]``, the error score (the sum of a candidate's spans'
  weights, :func:`annols.analysis.by_style.asked.error_scores`), second minus first (lower is better),
  each candidate's score clipped to [0, C] with C the largest weight declared (MQM: 25, Freitag
  et al.'s cap of a segment's score: a non-translation, or five major errors) unless the study
  sets a higher one at its first round (``next-round --error-cap``, kept in the record), bound C.
  The error score has no bound of its own, so the decisions are about the mean clipped score: a
  candidate above the cap counts as at the cap.

The confidence sequence is a betting one (Waudby-Smith & Ramdas 2024, JRSS B 86(1): the capital process of
their Theorem 3, with a fixed grid of bets mixed as their "grid Kelly" capital): for a candidate mean m, a gambler
who bets that the mean is above m multiplies their wealth by 1 + lambda xi_i per item, xi_i = (x_i - m) /
(bound + m) (at least -1), one gambler per bet lambda of :func:`bets` (16 fixed bets, log-spaced, weighted
equally), and one betting below (xi_i = (m - x_i) / (bound - m)). Under a true mean m each wealth is a non-negative
martingale of expectation 1 (at most 1 where the mean is beyond m on the other side), so by Ville's inequality
their average ever reaches 2 / level with probability at most level / 2, at every number of items at once: the
means where neither side's wealth has reached it form the interval, exact at any stopping time, with no
asymptotics and no plug-in. The bets are fixed, so the wealth is a product over the items, whatever their order
(items complete out of push order count the same), and it depends on each observation, not on a variance
estimate: agreeing observations cannot collapse it (the variance plug-in it replaces did, see docs/statistics.md).
The smallest bet is fixed before the first round from eta = 1 / sqrt(n), n the pool's items holding a pair (the
median over pairs): where the boundary is tightest, never tuned to the data. Level: alpha / m for each of the m
comparisons (Bonferroni), so that all the study's intervals cover at once, at every round, with probability
1 - alpha.

Decisions, made at the first round that shows them and kept (a decision at a stopping time
of a confidence sequence keeps its error rate whatever comes after):

- ``first better`` / ``second better``: the interval excludes 0;
- ``within ±effect``: the interval lies inside (-effect, effect), ``effect`` the smallest
  difference worth finding, on the observation's scale (anytime-valid equivalence);
- ``undecided`` otherwise.

An item counts once complete: every one of its tasks holds its ``overlap`` judgments (next-round's ``--overlap``,
the record's ``fixed.annotators``), its observation then the mean over each task's first ``overlap`` judgments in
annotation order, final (:func:`completeness`, :func:`counted`). The guarantee is for a sequence of observations each
fixed once looked at; an item counted from its first judgment would change when the others come in. Items judged but
not complete wait, left out of the intervals (the record's ``waiting``).

A study of several passes (``next-round --passes``, :mod:`annols.study.passes`) gives each pass its own sequence:
pass p over the items complete for it (every task with p x overlap judgments), each item's mean over its first
p x overlap judgments in annotation order (:func:`pass_series`), at level alpha / (m x passes) (:func:`by_pass`).

The study's goal says which comparisons it exists for. ``all``: every one. ``best``: those that decide which
system is best, per question: the candidates are the systems not yet decided worse than any other, the relevant
comparisons the undecided ones between two candidates; the study is decided when none is left (one candidate: the
best; several, every pair of them within ±effect: tied for best). The level stays alpha / m over all m
comparisons, so the guarantee is the same whatever the goal.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols.analysis.inference import item_tests
from annols.analysis.inference.detectable import ALPHA
from annols.analysis.results import Finding, Table
from annols.errors import AnnolsError, OptionError

STYLES = ("pairwise", "ratings", "ranking", "best-worst", "spans")
BY_ITEM = ("best-worst", "spans")  # styles whose item (the context shown) holds several tasks
JUDGED = "judged"  # the kind of the rows naming each counted annotation (spans: a candidate without spans is 0)
FIRST, SECOND, WITHIN, UNDECIDED = "first better", "second better", "within ±effect", "undecided"
ALL, BEST = "all", "best"
GOALS = (ALL, BEST)
COLUMNS = ["question", "first", "second", "items", "mean", "CS low", "CS high", "decision"]


@dataclass(frozen=True)
class Comparison:
    question: str
    first: str
    second: str
    items: int
    mean: float
    low: float
    high: float
    decision: str

    pass_: int = 1  # the pass whose sequence the interval is of (a study of --passes above 1); decided: its pass

    def row(self) -> list[Any]:
        return [self.question, self.first, self.second, self.items, self.mean, self.low, self.high, self.decision]


def eta_for(pool: int) -> float:
    """The design width fixed before the first round: 1 / sqrt(items in the pool) (anytimemonitor's rule for a
    planned number of items). It sets the smallest bet of :func:`bets` (where the sequence is tightest), not its
    validity."""
    from anytimemonitor.avci import eta_from_n_planned  # type: ignore[import-untyped, unused-ignore]

    return float(eta_from_n_planned(max(1, pool)))


BETS, BET_MAX = 16, 0.95  # the bets of the mixture: BETS of them, log-spaced up to BET_MAX


@cache
def bets(level: float, eta: float) -> tuple[float, ...]:
    """The fixed bets lambda of the mixture, each weighted 1 / :data:`BETS`: log-spaced from the bet that is best
    for four times the planned items at the largest variance (sqrt(2 log(2 / level)) x eta / 2, at most 1/2) up to
    :data:`BET_MAX` (the best for few items or a small variance). Fixed before the first round, never tuned to the
    data."""
    low = min(0.5, math.sqrt(2 * math.log(2 / level)) * eta / 2)
    return tuple(float(b) for b in np.geomspace(low, BET_MAX, BETS))


def log_wealth(x: Any, m: float, bound: float, level: float, eta: float, side: int) -> Any:
    """The log of the mixture wealth against mean ``m`` after the observations ``x`` (last axis; NaN: not there),
    ``side`` +1 (a bet that the mean is above m) or -1 (below): log of the mean over :func:`bets` lambda of
    prod_i (1 + lambda xi_i), xi_i = (x_i - m) / (bound + m) (side +1) or (m - x_i) / (bound - m) (side -1), both
    at least -1. Under a mean at most m (side +1; at least m, side -1) each product is a non-negative
    supermartingale of expectation at most 1 whatever the order of the items (the bets are fixed), so is their
    average, and by Ville's inequality it ever reaches 2 / level with probability at most level / 2."""
    return _mixed(_terms(x, m, bound, level, eta, side).sum(axis=-2))


def _terms(x: Any, m: float, bound: float, level: float, eta: float, side: int) -> Any:
    """log(1 + lambda xi_i) per item and bet (shape: x's, then the bets); 0 for a NaN item."""
    values = np.clip(np.asarray(x, dtype=float), -bound, bound)
    scale = bound + m if side > 0 else bound - m
    if scale <= 0:
        return np.full((*values.shape, BETS), -np.inf)
    xi = side * (values - m) / scale
    lam = np.asarray(bets(level, eta))
    with np.errstate(divide="ignore"):
        return np.log1p(lam * np.nan_to_num(xi, nan=0.0)[..., None])


def _mixed(total: Any) -> Any:
    """log of the mean over the bets (last axis) of exp(``total``), the log-wealths of the bets."""
    top = total.max(axis=-1)
    finite = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(invalid="ignore"):  # a wealth of 0 at every bet: log 0, -inf
        return np.where(np.isfinite(top), finite + np.log(np.exp(total - finite[..., None]).mean(axis=-1)), top)


class Running:
    """The sequence's tests of many studies at once, fed a batch of items at a time (the simulations): the
    log-wealths at 0 (both sides) and at ±effect, summed as items come, so a look costs nothing more."""

    def __init__(self, shape: tuple[int, ...], bound: float, level: float, eta: float, effect: float) -> None:
        self.args = (bound, level, eta)
        self.tests = [(0.0, 1), (0.0, -1), *([(effect, -1), (-effect, 1)] if effect > 0 else [])]
        self.sums = np.zeros((len(self.tests), *shape, BETS))
        self.threshold = math.log(2 / level)

    def add(self, x: Any) -> None:
        """The next items (last axis; NaN: an item a study does not have)."""
        for i, (m, side) in enumerate(self.tests):
            self.sums[i] += _terms(x, m, self.args[0], self.args[1], self.args[2], side).sum(axis=-2)

    def verdicts(self) -> Any:
        """Each study's :func:`decide` after the items added so far (as :func:`verdicts`)."""
        out = _mixed(self.sums) >= self.threshold
        within = out[2] & out[3] if len(out) > 2 else np.zeros_like(out[0])
        return np.where(out[0], FIRST, np.where(out[1], SECOND, np.where(within, WITHIN, UNDECIDED)))


def rejects(x: Any, m: float, bound: float, level: float, eta: float, side: int) -> Any:
    """Whether the sequence at ``level`` (two-sided) has excluded mean ``m``: on side +1, every mean at most m
    (the mean is above m); on side -1, every mean at least m."""
    return np.asarray(log_wealth(x, m, bound, level, eta, side)) >= math.log(2 / level)


def excluded(x: Any, bound: float, level: float, eta: float) -> tuple[Any, Any]:
    """(above, below): whether 0 is excluded with the mean above it, and below it, per row of ``x`` (items on the
    last axis; NaN: not there). For simulations of many studies at once."""
    return rejects(x, 0.0, bound, level, eta, 1), rejects(x, 0.0, bound, level, eta, -1)


def verdicts(x: Any, bound: float, level: float, eta: float, effect: float) -> Any:
    """Each row's :func:`decide` (an array of decisions), from the sequence's tests at 0 and at ±effect."""
    above, below = excluded(x, bound, level, eta)
    within = (rejects(x, effect, bound, level, eta, -1) & rejects(x, -effect, bound, level, eta, 1)
              if effect > 0 else np.zeros_like(above))  # fmt: skip
    return np.where(above, FIRST, np.where(below, SECOND, np.where(within, WITHIN, UNDECIDED)))


def interval(x: np.ndarray, bound: float, alpha: float, eta: float) -> tuple[float, float, float]:
    """(mean, low, high) of the confidence sequence at level ``alpha`` (two-sided) after the observations ``x``:
    the means neither side's wealth has excluded. The wealth of side +1 falls as m rises (each factor does), so the
    excluded means of a side are a ray and its end is found by bisection (to 1e-9 of the bound), rounded outward."""
    values = np.asarray(x, dtype=float)
    if not len(values):
        return math.nan, -math.inf, math.inf
    mean = float(values.mean())
    ends = []
    for side in (1, -1):
        outer = -side * bound  # the bound on the side the side's test excludes
        kept, out = float(np.clip(mean, -bound, bound)), outer
        if not rejects(values, out + side * 1e-12 * bound, bound, alpha, eta, side):
            ends.append(outer)
            continue
        if rejects(values, kept, bound, alpha, eta, side):  # cannot happen (the mean itself is never excluded)
            ends.append(kept)
            continue
        while abs(kept - out) > 1e-9 * bound:
            mid = (kept + out) / 2
            if rejects(values, mid, bound, alpha, eta, side):
                out = mid
            else:
                kept = mid
        ends.append(out)
    return mean, float(ends[0]), float(ends[1])


def decide(mean: float, low: float, high: float, effect: float) -> str:
    """The decision the interval [low, high] shows (``mean`` is kept for the caller's reading; the interval decides)."""
    if low > 0:
        return FIRST
    if high < 0:
        return SECOND
    if effect > 0 and -effect < low and high < effect:
        return WITHIN
    return UNDECIDED


def frame_of(definition: Any, tidy: pd.DataFrame, cap: float | None = None) -> pd.DataFrame:
    """The style's judgments table of the report's judgments (:func:`annols.study.table.read_judgments`; best-worst and
    spans: the same with ``rounds=True``, with each row's item and, for spans, a row per counted
    annotation), as :func:`observations` reads it (pairwise: the preference rows; else aspect, system, task_key,
    annotator, value, and for best-worst and spans the item, ``unit``), questions named as the report names them;
    ``cap``: the study's error cap (spans with weights; None: the largest weight, :func:`error_cap`)."""
    from annols.analysis import naming
    from annols.analysis.by_style import best_worst, pairwise, ranking, ratings

    spec = definition.spec
    if definition.style == "pairwise":
        return pairwise.judgments(tidy, naming.aspect_names(spec.aspects))
    if definition.style == "ratings":
        return ratings.judgments(tidy, naming.aspect_names(spec.aspects)).rename(columns={"rating": "value"})
    if definition.style == "ranking":
        frame = ranking.judgments(tidy, [d.name for d in spec.dimensions], len(spec.positions))
        return frame.rename(columns={"rank": "value", "dimension": "aspect"})
    if definition.style == "best-worst":
        rows, _ = best_worst.named_judgments(tidy, spec)
        # 100 x each row's value (1 best, -1 worst, 0): an item's mean of them is its score in the item
        return rows.assign(value=100.0 * rows["value"].astype(float))[[*VALUE_COLUMNS, best_worst.UNIT]]
    bounds_of(definition)  # raises: no comparison of systems to read
    return _asked_frame(definition, tidy, cap)


VALUE_COLUMNS = ["aspect", "system", "task_key", "annotator", "value"]


def _asked_frame(definition: Any, tidy: pd.DataFrame, cap: float | None) -> pd.DataFrame:
    """Spans: each numeric per-candidate answer, and each counted annotation's clipped error score (with weights),
    as rows of :data:`VALUE_COLUMNS` and the item."""
    from annols.analysis.by_style import asked

    spec = definition.spec
    unit = asked.UNIT
    numeric = [q.name for q in asked.questions_of(spec) if q.numeric and q.per_candidate]
    kind, question = tidy["kind"].astype(str), tidy["question"].astype(str)
    part = tidy[((kind == "rating") & question.isin(numeric)).to_numpy()]
    parts = [pd.DataFrame({"aspect": part["question"].astype(str).to_numpy(), "system": part["system"].astype(str),
                           "task_key": part["task_key"].astype(str), "annotator": part["annotator"].astype(str),
                           "value": pd.to_numeric(part["value"].astype(object)).astype(float),
                           unit: part[unit].astype(str)})]  # fmt: skip
    if getattr(spec, "weights", ()):
        judged = tidy[(kind == JUDGED).to_numpy()]
        judged = pd.DataFrame({c: judged[c].astype(object).to_numpy() for c in ("uid", "task_key", "annotator",
                                                                                 "system", unit)})  # fmt: skip
        scores = asked.error_scores(asked.span_rows(tidy, spec), judged, None)
        parts.append(pd.DataFrame({"aspect": asked.SCORE, "system": scores["system"].astype(str),
                                   "task_key": scores["task_key"].astype(str),
                                   "annotator": scores["annotator"].astype(str),
                                   "value": scores[asked.SCORE].clip(0, error_cap(spec, cap)).astype(float),
                                   unit: scores[unit].astype(str)}))  # fmt: skip
    return pd.concat(parts, ignore_index=True)


def error_cap(spec: Any, given: float | None = None) -> float:
    """C, where each candidate's error score is clipped: ``given`` (the study's ``--error-cap``), else the largest
    weight declared (MQM: 25)."""
    return given if given is not None else max((float(w.weight) for w in getattr(spec, "weights", ())), default=0.0)


def check_error_cap(definition: Any, cap: float) -> None:
    """Refuse an error cap the definition cannot take: one without an error score (spans with ``[[spans.weights]]``),
    or one below the largest weight, under which a single span of that weight would count for less than the
    definition declares (the default is the smallest cap that keeps every weight as declared)."""
    if not asked_score(definition):
        raise OptionError(f"--error-cap {cap:g}", f"only a spans definition with [[spans.weights]] has an error "
                          f"score to clip; {definition.name} (style {definition.style}) has none")  # fmt: skip
    largest = error_cap(definition.spec)
    if not (math.isfinite(cap) and cap >= largest):
        raise OptionError(f"--error-cap {cap:g}", f"at least the largest weight declared, {largest:g} (below it one "
                          "span of that weight would count for less than the definition says)")  # fmt: skip


def questions(definition: Any) -> list[str]:
    """The questions of the main comparison, named as :func:`frame_of` names them."""
    from annols.analysis import naming

    spec = definition.spec
    if definition.style == "ranking":
        return [d.name for d in spec.dimensions]
    if definition.style not in STYLES[:4]:
        return list(bounds_of(definition))
    return naming.aspect_names(spec.aspects)


def observations(style: str, frame: pd.DataFrame) -> dict[tuple[str, str, str], pd.Series]:
    """(question, first, second) -> per-item observations (index: task key), from the style's judgments table
    (pairwise: :func:`annols.analysis.by_style.pairwise.judgments`; else :func:`frame_of`'s columns). Pairs in name
    order; positive favours the first system. Best-worst and spans: an observation per item (index: the item, ``unit``),
    the mean over its tasks and annotators; the error score's sign turned, lower being better."""
    out: dict[tuple[str, str, str], pd.Series] = {}
    if style == "pairwise":
        if not len(frame):
            return out
        nets = item_tests.item_nets(frame)
        for key, part in nets.groupby(level=item_tests.PAIR, sort=False, observed=True):
            x = (part["net"] / part["decided"].clip(lower=1)).to_numpy(float)
            first, second = str(key[1]), str(key[2])
            if first > second:  # the report writes pairs in natural order (M2 before M10); here, in plain order
                first, second, x = second, first, -x
            out[(str(key[0]), first, second)] = pd.Series(x, index=part.index.get_level_values("task_key").astype(str))
        return out
    from annols.analysis.by_style import asked

    index = asked.UNIT if style in BY_ITEM else "task_key"
    for aspect, part in frame.groupby("aspect", observed=True, sort=False):
        sign = -1.0 if style == "ranking" or str(aspect) == asked.SCORE else 1.0  # a lower rank or error is better
        means = part.pivot_table(index=index, columns="system", values="value", aggfunc="mean", observed=True)
        systems = sorted(str(s) for s in means.columns)
        for i, a in enumerate(systems):
            for b in systems[i + 1 :]:
                d = (sign * (means[a] - means[b])).dropna()
                out[(str(aspect), a, b)] = pd.Series(d.to_numpy(float), index=d.index.astype(str))
    return out


def judgments_of(frame: pd.DataFrame | None, keys: set[str]) -> int:
    """Human judgments of the items ``keys``: one per item and annotator (plan's unit: items x annotators), however
    many questions and systems each answered."""
    if frame is None or not len(frame):
        return 0
    part = frame[frame["task_key"].astype(str).isin(keys)]
    return len(part[["task_key", "annotator"]].drop_duplicates())


def comparisons(found: dict[tuple[str, str, str], pd.Series], bound: float | dict[str, float], effect: float,
                eta: float, alpha: float = ALPHA, earlier: dict[tuple[str, str, str], str] | None = None,
                tests: int | None = None) -> list[Comparison]:  # fmt: skip
    """Each comparison's interval at level alpha / m and its decision, m ``tests`` (all of ``found`` if None: fixed
    at the first round); ``earlier``: decisions of earlier rounds, kept (the decision at the round that first
    showed it). ``bound``: one for every question, or each question's (:func:`bounds_of`)."""
    level = alpha / max(1, tests or len(found))
    out = []
    for key, x in found.items():
        mean, low, high = interval(x.to_numpy(float), bound[key[0]] if isinstance(bound, dict) else bound, level, eta)
        decision = (earlier or {}).get(key, UNDECIDED)
        if decision == UNDECIDED and len(x):
            decision = decide(mean, low, high, effect)
        out.append(Comparison(*key, len(x), mean, low, high, decision))
    return out


ORDER = ("created_at", "annotation_id", "uid")  # annotation order, as far as the table says it


def judgment_ranks(tidy: pd.DataFrame) -> pd.Series:
    """Each row's annotator's place among its task's annotators in annotation order (0: the first to judge it):
    ``created_at``, then the annotation id (:meth:`annols.analysis.table.Judgments.rounds_frame` gives both),
    then the row's annotation (uid)."""
    order = [c for c in ORDER if c in tidy.columns]
    judged = tidy[["task_key", "annotator", *order]].astype(object).drop_duplicates(["task_key", "annotator"])
    judged = judged.sort_values(["task_key", *order], kind="stable")
    place = judged.groupby("task_key", sort=False).cumcount().to_numpy()
    index = pd.MultiIndex.from_frame(judged[["task_key", "annotator"]])
    rows = pd.MultiIndex.from_frame(tidy[["task_key", "annotator"]].astype(object))
    return pd.Series(place[index.get_indexer(rows)], index=tidy.index)


@dataclass(frozen=True)
class Completeness:
    """Of a study's judged items, how far each is complete (:func:`completeness`)."""

    place: np.ndarray  # each row's annotator's place among its task's annotators (:func:`judgment_ranks`)
    item: np.ndarray  # each row's item
    reached: dict[str, int]  # item -> the passes it has completed: all its tasks hold p x overlap judgments
    waiting: frozenset[str]  # items judged beyond their completed passes: counted nowhere until complete

    def rows(self, p: int, overlap: int) -> np.ndarray:
        """The rows pass ``p`` reads: its complete items' first p x ``overlap`` judgments of each task."""
        done = pd.Series(self.item, dtype=object).map(self.reached).fillna(0).to_numpy() >= p
        return done & (self.place < p * overlap)


def completeness(definition: Any, part: pd.DataFrame, passes: int, overlap: int,
                 members: dict[str, str] | None = None) -> Completeness:  # fmt: skip
    """How far each item of ``part`` (the judgments of a study's tasks, as :func:`frame_of` takes them) is
    complete. An item completes pass p when every one of its tasks holds p x ``overlap`` judgments (an item of
    best-worst or spans is several tasks, :data:`BY_ITEM`); its judgments beyond that (an extra annotation Label
    Studio gave a task) wait for the next pass, or, after the last, are never read. ``members``: task key -> its
    item, for every task of the study, judged or not (a task of an item none of whose judgments is in the pull still
    keeps its item waiting); without it, the items are those the judged rows name."""
    from annols.analysis.by_style import asked

    if not len(part):
        return Completeness(np.zeros(0, dtype=int), np.zeros(0, dtype=object), {}, frozenset())
    keys = part["task_key"].astype(str).to_numpy()
    named = part[asked.UNIT].astype(str).to_numpy() if definition.style in BY_ITEM else keys
    item = named.astype(object)
    if members:
        item = pd.Series(keys, dtype=object).map(members).fillna(pd.Series(item)).to_numpy(dtype=object)
    place = judgment_ranks(part).to_numpy()
    made = pd.Series(place + 1).groupby(keys).max()
    tasks: dict[str, set[str]] = {}
    for k, i in dict(zip(keys, item, strict=True)).items():  # a task is in one item
        tasks.setdefault(str(i), set()).add(k)
    for k, i in (members or {}).items():
        if i in tasks:  # an item with a judgment: its unjudged tasks count too
            tasks[i].add(k)
    reached: dict[str, int] = {}
    waiting: set[str] = set()
    for i, held in tasks.items():
        counts = [int(made.get(k, 0)) for k in held]
        reached[i] = min(passes, min(counts) // overlap)
        if reached[i] < passes and max(counts) > reached[i] * overlap:
            waiting.add(i)
    return Completeness(place, item, reached, frozenset(waiting))


def pass_series(definition: Any, tidy: pd.DataFrame, keys: set[str], wanted: list[tuple[str, str, str]], passes: int,
                overlap: int, cap: float | None = None,
                members: dict[str, str] | None = None) -> list[dict[tuple[str, str, str], pd.Series]]:  # fmt: skip
    """Per pass p (1 to ``passes``), each comparison's observations (:func:`observations`) of the items complete for
    pass p (:func:`completeness`: every task of the item holds p x ``overlap`` judgments), each item's observation its
    mean over its tasks' first p x ``overlap`` judgments in annotation order, so that an observation, once counted,
    never changes: not when the item's other annotators come in (an item counts only once complete), not when a
    later pass adds annotators. One pass of ``overlap`` annotators: the study in rounds without passes.
    ``keys``: the study tasks counted; ``tidy`` and ``cap``: as :func:`frame_of` takes them; ``members``: as
    :func:`completeness` takes it."""
    return counted(definition, tidy, keys, wanted, passes, overlap, cap, members)[0]


def counted(definition: Any, tidy: pd.DataFrame, keys: set[str], wanted: list[tuple[str, str, str]], passes: int,
            overlap: int, cap: float | None = None, members: dict[str, str] | None = None,
            ) -> tuple[list[dict[tuple[str, str, str], pd.Series]], Completeness]:  # fmt: skip
    """:func:`pass_series`, and the :func:`completeness` it counted the items by (its ``waiting`` items)."""
    empty = pd.Series([], dtype=float)
    part = tidy[tidy["task_key"].astype(str).isin(keys).to_numpy()] if len(tidy) else tidy
    state = completeness(definition, part, passes, overlap, members)
    out = []
    for p in range(1, passes + 1):
        upto = state.rows(p, overlap)
        frame = frame_of(definition, part[upto], cap) if upto.any() else None
        found = observations(definition.style, frame) if frame is not None and len(frame) else {}
        out.append({key: found.get(key, empty) for key in wanted})
    return out, state


def by_pass(found: list[dict[tuple[str, str, str], pd.Series]], bound: float | dict[str, float], effect: float,
            eta: float, alpha: float = ALPHA, earlier: dict[tuple[str, str, str], tuple[str, int]] | None = None,
            tests: int | None = None) -> list[Comparison]:  # fmt: skip
    """Each comparison over the passes of :func:`pass_series`: each pass its own confidence sequence at level
    alpha / (m x passes) (Bonferroni over the passes as over the comparisons: whatever the switching, every
    interval of every pass covers at once with probability 1 - alpha). A comparison is decided by the first pass
    whose interval decides it, and stays decided (``earlier``: decision and pass, kept); an undecided one shows the
    interval of its latest pass with items."""
    passes = len(found)
    level = alpha / passes
    each = [comparisons(series, bound, effect, eta, level, None, tests or len(series)) for series in found]
    out = []
    for at, key in enumerate(found[0]):
        row = [cs[at] for cs in each]
        decision, stage = (earlier or {}).get(key, (UNDECIDED, 0))
        if decision != UNDECIDED:
            shown = replace(row[stage - 1], decision=decision, pass_=stage)
        else:
            deciding = [p for p, c in enumerate(row, start=1) if c.decision != UNDECIDED]
            stage = deciding[0] if deciding else max([p for p, c in enumerate(row, start=1) if c.items] or [1])
            shown = replace(row[stage - 1], pass_=stage)
        out.append(shown)
    return out


def _loser(decision: str, first: str, second: str) -> str | None:
    return second if decision == FIRST else first if decision == SECOND else None


def candidates(found: list[Comparison]) -> dict[str, list[str]]:
    """Per question, the systems not decided worse than any other (sorted)."""
    systems: dict[str, set[str]] = {}
    worse: dict[str, set[str]] = {}
    for c in found:
        systems.setdefault(c.question, set()).update((c.first, c.second))
        loser = _loser(c.decision, c.first, c.second)
        if loser is not None:
            worse.setdefault(c.question, set()).add(loser)
    return {q: sorted(s - worse.get(q, set())) for q, s in systems.items()}


def relevant(found: list[Comparison], goal: str) -> list[Comparison]:
    """The undecided comparisons the goal still needs: all of them, or (``best``) those between two candidates."""
    open_ = [c for c in found if c.decision == UNDECIDED]
    if goal == ALL:
        return open_
    among = {q: set(s) for q, s in candidates(found).items()}
    return [c for c in open_ if c.first in among[c.question] and c.second in among[c.question]]


def conclusions(found: list[Comparison]) -> dict[str, str]:
    """Per question, what the comparisons say of the best system: ``best: A``, ``tied for best: A, B``, or, while
    comparisons between candidates are undecided, ``undecided between A, B, C``."""
    waiting = {c.question for c in relevant(found, BEST)}
    out = {}
    for question, names in candidates(found).items():
        if question in waiting:
            out[question] = f"undecided between {', '.join(names)}"
        elif len(names) == 1:
            out[question] = f"best: {names[0]}"
        elif names:
            out[question] = f"tied for best: {', '.join(names)}"
        else:  # only wrong decisions make a cycle (each decision errs with probability at most alpha / m)
            out[question] = "no best: every system was decided worse than another"
    return out


def table(found: list[Comparison]) -> pd.DataFrame:
    return pd.DataFrame([c.row() for c in found], columns=COLUMNS)


def bound_of(definition: Any) -> float:
    """The largest absolute per-item observation of the definition's main comparison."""
    spec = definition.spec
    if definition.style == "pairwise":
        return 1.0
    if definition.style == "ranking":
        return float(len(spec.positions) - 1)
    if definition.style == "best-worst":
        return 200.0  # two scores in [-100, 100]
    if definition.style == "ratings":
        if getattr(spec, "scale", None) == "slider" and spec.slider is not None:
            return float(spec.slider.max - spec.slider.min)
        values = [float(v) for v in _numbers(spec)]
        if len(values) >= 2:
            return max(values) - min(values)
    raise _unbounded(definition, "none it can read")


def bounds_of(definition: Any, cap: float | None = None) -> dict[str, float]:
    """Each question's bound: :func:`bound_of` for a style with a main comparison; for spans, each numeric
    per-candidate question's range and the clipped error score's cap (:func:`error_cap`; ``cap``: the study's)."""
    from annols.analysis.by_style import asked

    if definition.style in STYLES[:4]:
        bound = bound_of(definition)
        return dict.fromkeys(questions(definition), bound)
    if definition.style != "spans":
        raise _unbounded(definition, "none it can read")
    spec = definition.spec
    out: dict[str, float] = {}
    for q in asked.questions_of(spec):
        if not (q.numeric and q.per_candidate):
            continue
        if q.kind == "scale":
            values = _numbers(SimpleNamespace(answers=q.all_choices))
            low, high = (min(values), max(values)) if len(values) >= 2 else (None, None)
        else:
            low, high = q.min, q.max
        if low is None or high is None or not high > low:
            raise _unbounded(definition, f"question {q.name!r} ({q.kind}) has no range (min and max) to bound it")
        out[q.name] = float(high) - float(low)
    if getattr(spec, "weights", ()):
        if not error_cap(spec) > 0:
            raise _unbounded(definition, "its error score's weights are none above 0")
        out[asked.SCORE] = error_cap(spec, cap)
    if not out:
        raise _unbounded(definition, "no numeric question per candidate and no [[spans.weights]]")
    return out


def _unbounded(definition: Any, why: str) -> AnnolsError:
    return AnnolsError(f"a study in rounds needs a comparison of systems on a bounded scale; {definition.name} "
                       f"(style {definition.style}) has {why} (styles: {', '.join(STYLES)}; spans: a numeric "
                       "question per candidate or the error score of [[spans.weights]])")  # fmt: skip


def _numbers(spec: Any) -> list[float]:
    out = []
    for answer in getattr(spec, "answers", ()) or ():
        value = getattr(answer, "code", answer)  # a rating is its code read as a number (as the ratings tables)
        try:
            out.append(float(value))
        except (TypeError, ValueError):
            continue
    return out


# ----------------------------------------------------------------------------- simulation


@dataclass(frozen=True)
class Simulated:
    """Of ``sims`` simulated studies of one comparison, checked after each round of ``batch`` items."""

    effect: float
    sims: int
    rounds: int
    batch: int
    annotators: int
    sequential_rejects: float  # share whose sequence excluded 0 at some round
    naive_rejects: float  # share whose report test (the items' sign test) rejected at some round
    correct: float  # share decided towards the better system
    judgments: float  # mean human judgments until every decision (or the last round)


def simulate(effect: float, *, sims: int, rounds: int, batch: int, annotators: int = 3, tie_rate: float = 0.2,
             item_sd: float = 0.5, alpha: float = ALPHA, margin: float = 0.0, seed: int = 0) -> Simulated:  # fmt: skip
    """Pairwise studies of one comparison run in rounds, by plan's model (:mod:`annols.analysis.planning.plan`), looked
    at after every round by the confidence sequence and, beside it, by the report's fixed-sample test re-run."""
    from annols.analysis.planning import plan

    a = plan.Assumptions("pairwise", effect or 0.5, tie_rate=tie_rate, item_sd=item_sd, alpha=alpha)
    n_max = rounds * batch
    rng = np.random.default_rng(seed)
    draws = plan.DRAWS["pairwise"](a, n_max, annotators, sims, rng)
    y = plan.OUTCOMES["pairwise"](a, draws, effect, n_max, annotators)
    x = y.sum(axis=2) / np.maximum((y != 0).sum(axis=2), 1)  # per item: net share of its decided judgments
    eta = eta_for(n_max)
    done = np.zeros(sims, dtype=bool)  # decided either way, or within the margin: stopped
    seq = np.zeros(sims, dtype=bool)
    naive = np.zeros(sims, dtype=bool)
    towards = np.zeros(sims, dtype=bool)
    stop: np.ndarray = np.full(sims, n_max)
    running = Running((sims,), 1.0, alpha, eta, margin)
    for r in range(1, rounds + 1):
        n = r * batch
        running.add(x[:, n - batch : n])
        said = running.verdicts()
        crossed = ~done & ((said == FIRST) | (said == SECOND))
        within = ~done & (said == WITHIN)
        seq |= crossed
        towards |= crossed & (said == FIRST)
        stop = np.where(crossed | within, n, stop)
        done |= crossed | within
        naive |= plan.items_test(a, y[:, :n], alpha)[0]
    return Simulated(effect, sims, rounds, batch, annotators, float(seq.mean()), float(naive.mean()),
                     float(towards.mean()), float(stop.mean() * annotators))  # fmt: skip


def exact_null(items: int, level: float, eta: float, effect: float,
               rule: Callable[[int, np.ndarray], np.ndarray] | None = None) -> float:  # fmt: skip
    """The exact probability that a pair of equal systems whose items are one judgment each (+1 or -1 with even
    odds: next-round --overlap 1, no ties) is decided one system better at some look, looked at after every item up
    to ``items`` and stopped once decided (within ±``effect`` too), by summing over the walk of the judgments' sum
    (no Monte Carlo). ``rule``: (n, the sums at n) -> the decision at each; default, this sequence's at ``level``.
    With m pairs of independent items, the chance of any false decision is 1 - (1 - p)^m."""

    def betting(n: int, sums: np.ndarray) -> np.ndarray:
        wins = (n + sums) // 2
        x = np.where(np.arange(n)[None, :] < wins[:, None], 1.0, -1.0)
        return np.asarray(verdicts(x, 1.0, level, eta, effect))

    decide_at = rule or betting
    mass = {0: 1.0}
    false = 0.0
    for n in range(1, items + 1):
        step: dict[int, float] = {}
        for total, p in mass.items():
            for move in (1, -1):
                step[total + move] = step.get(total + move, 0.0) + p / 2
        sums = np.array(sorted(step))
        said = decide_at(n, sums)
        mass = {}
        for total, decision in zip(sums.tolist(), said, strict=True):
            if decision in (FIRST, SECOND):
                false += step[total]
            elif decision == UNDECIDED:
                mass[total] = step[total]
    return false


@dataclass(frozen=True)
class SimulatedPairs:
    """Of studies of several pairs of systems run in rounds (:func:`simulate_pairs`)."""

    right: float  # share of studies whose every decision equals the truth
    wrong: float  # share with some decision against the truth
    judgments: float  # median human judgments until the goal was decided (or the last round)
    first_found: float  # median judgments until every pair with a difference was decided
    concluded: float = 0.0  # share whose conclusion on the best system (:func:`conclusions`) equals the truth's


def simulate_pairs(effects: list[float], *, studies: int, rounds: int, batch: int, annotators: int = 3,
                   tie_rate: float = 0.2, item_sd: float = 0.5, alpha: float = ALPHA, margin: float = 0.3,
                   seed: int = 0, goal: str = ALL, systems: list[tuple[str, str]] | None = None) -> SimulatedPairs:
    """Pairwise studies of ``len(effects)`` pairs (an item holds one pair, as in next-round), each round ``batch``
    items spread evenly over the pairs the ``goal`` still needs (:func:`relevant`), each pair at alpha / pairs
    whatever the goal, the mixture width set from the items a pair can get; the truth: first better where the
    effect is above ``margin``, within ±margin where it is 0 (other effects: either is right). ``systems``: the
    pair of systems of each effect (a positive effect favours the first); default: one pair per effect."""
    from annols.analysis.planning import plan

    pairs = len(effects)
    names = systems or [(f"s{2 * p}", f"s{2 * p + 1}") for p in range(pairs)]
    a = plan.Assumptions("pairwise", 0.5, tie_rate=tie_rate, item_sd=item_sd, alpha=alpha)
    n_max = rounds * batch
    eta = eta_for(n_max // pairs)
    level = alpha / pairs
    rng = np.random.default_rng(seed)
    streams = []
    for effect in effects:  # each pair's items in the order the rounds push them
        y = plan.OUTCOMES["pairwise"](a, plan.DRAWS["pairwise"](a, n_max, annotators, studies, rng), effect, n_max,
                                      annotators)  # fmt: skip
        streams.append(y.sum(axis=2) / np.maximum((y != 0).sum(axis=2), 1))
    truth = [{FIRST} if e > margin else {SECOND} if e < -margin else {WITHIN} if e == 0 else {FIRST, WITHIN}
             for e in effects]  # fmt: skip
    true_best = conclusions([Comparison("q", *names[p], 0, 0.0, 0.0, 0.0, min(truth[p])) for p in range(pairs)])

    def compared(decision: list[str]) -> list[Comparison]:
        return [Comparison("q", *names[p], 0, 0.0, 0.0, 0.0, decision[p]) for p in range(pairs)]

    used, first_found = np.zeros(studies), np.zeros(studies)
    right = wrong = concluded = 0
    for s in range(studies):
        seen = np.zeros(pairs, dtype=int)
        decision = [UNDECIDED] * pairs
        for _ in range(rounds):
            needed = {(c.first, c.second) for c in relevant(compared(decision), goal)}
            undecided = [p for p in range(pairs) if names[p] in needed]
            if not undecided:
                break
            for i in range(batch):
                seen[undecided[i % len(undecided)]] += 1
            by_items: dict[int, list[int]] = {}  # the pairs at the same number of items: one vectorised call
            for p in undecided:
                by_items.setdefault(int(seen[p]), []).append(p)
            for n, group in by_items.items():
                said = verdicts(np.stack([streams[p][s, :n] for p in group]), 1.0, level, eta, margin)
                for p, d in zip(group, said, strict=True):
                    decision[p] = str(d)
            if not first_found[s] and all(decision[p] != UNDECIDED for p in range(pairs) if effects[p] > 0):
                first_found[s] = seen.sum() * annotators
        used[s] = seen.sum() * annotators
        wrong += any(d != UNDECIDED and d not in t for d, t in zip(decision, truth, strict=True))
        right += all(d in t for d, t in zip(decision, truth, strict=True))
        concluded += conclusions(compared(decision)) == true_best
    return SimulatedPairs(right / studies, wrong / studies, float(np.median(used)), float(np.median(first_found)),
                          concluded / studies)  # fmt: skip


@dataclass(frozen=True)
class SimulatedPasses:
    """Of ``sims`` simulated pairwise studies of one comparison run in passes (:func:`simulate_passes`)."""

    effect: float
    sims: int
    items: int
    passes: int
    overlap: int
    batch: int
    rejects: float  # share with a decision of one system better at some round: each pass its own sequence
    naive_rejects: float  # the same when re-opened judgments are folded into one sequence of the items
    correct: float  # share decided towards the first system (each pass its own sequence)
    judgments: float  # mean human judgments until the decision (or the last round), each pass its own sequence


def simulate_passes(effect: float, *, sims: int, items: int, passes: int, overlap: int = 1, batch: int = 10,
                    tie_rate: float = 0.2, item_sd: float = 0.5, alpha: float = ALPHA,
                    seed: int = 0) -> SimulatedPasses:  # fmt: skip
    """Pairwise studies of one comparison whose pool holds ``items`` items, run in rounds as next-round with
    ``--passes``: pass 1 pushes ``batch`` items a round with ``overlap`` annotators each; once all are pushed, pass p
    re-opens ``batch`` items a round (in the order pushed) for ``overlap`` more. Looked at after every round, stopped
    at the first decision (no equivalence stop: the worst case for false decisions). The design: each pass its own
    sequence, over the items that reached it, an item's observation its net share of its first p x overlap
    judgments, at alpha / passes. Beside it, the naive design: one sequence of the items at alpha, a re-opened
    item's observation rewritten to its net share of all its judgments so far."""
    from annols.analysis.planning import plan

    a = plan.Assumptions("pairwise", effect or 0.5, tie_rate=tie_rate, item_sd=item_sd, alpha=alpha)
    rng = np.random.default_rng(seed)
    k = passes * overlap
    y = plan.OUTCOMES["pairwise"](a, plan.DRAWS["pairwise"](a, items, k, sims, rng), effect, items, k)
    per_pass = [y[:, :, : p * overlap].sum(axis=2) / np.maximum((y[:, :, : p * overlap] != 0).sum(axis=2), 1)
                for p in range(1, passes + 1)]  # fmt: skip
    eta = eta_for(items)
    steps = -(-items // batch)
    done, towards = np.zeros(sims, dtype=bool), np.zeros(sims, dtype=bool)
    naive = np.zeros(sims, dtype=bool)
    used: np.ndarray = np.full(sims, float(items * k))
    for stage in range(1, passes + 1):
        for step in range(1, steps + 1):
            n = min(items, step * batch)  # items that reached this pass
            for p in range(1, stage + 1):
                seen = items if p < stage else n
                x = per_pass[p - 1][:, :seen]
                above, below = excluded(x, 1.0, alpha / passes, eta)
                new = ~done & (above | below)
                towards |= new & above
                used = np.where(new, (items * (stage - 1) + n) * overlap, used)
                done |= new
            folded = per_pass[stage - 1].copy()  # re-opened items rewritten, the others as the pass before left them
            if stage > 1:
                folded[:, n:] = per_pass[stage - 2][:, n:]
            else:
                folded = folded[:, :n]
            naive |= np.logical_or(*excluded(folded, 1.0, alpha, eta))
    return SimulatedPasses(effect, sims, items, passes, overlap, batch, float(done.mean()), float(naive.mean()),
                           float(towards.mean()), float(used.mean()))  # fmt: skip


@dataclass(frozen=True)
class SimulatedWaiting:
    """Of ``sims`` simulated pairwise studies of one comparison looked at while annotators are mid-way
    (:func:`simulate_waiting`)."""

    effect: float
    sims: int
    rounds: int
    batch: int
    annotators: int
    rejects: float  # share with a decision of one system better at some look: an item counts once complete
    partial_rejects: float  # the same when an item counts from its first judgment, its observation revised later
    waiting: float  # mean share of the latest round's items not complete at a look
    correct: float  # share decided towards the first system (complete items)
    looks: float  # mean look of the decision (complete items; undecided: the last)
    partial_looks: float  # the same, an item counted from its first judgment


def simulate_waiting(effect: float, *, sims: int, rounds: int, batch: int, annotators: int = 3,
                     tie_rate: float = 0.2, item_sd: float = 0.5, alpha: float = ALPHA,
                     seed: int = 0) -> SimulatedWaiting:  # fmt: skip
    """Pairwise studies of one comparison run in rounds of ``batch`` items, ``annotators`` an item (next-round
    --overlap), looked at after every round while annotators are mid-way: at each look the items of earlier rounds
    are complete and each item of the latest round holds 0 to ``annotators`` of its judgments (uniformly, drawn anew
    at each look, whatever their values). Stopped at the first decision (no equivalence stop: the worst case for
    false decisions). The rule: an item counts once complete, its net share of its judgments. Beside it, the rule
    before it: an item counts from its first judgment, its observation its net share of the judgments so far,
    revised at the next look."""
    from annols.analysis.planning import plan

    a = plan.Assumptions("pairwise", effect or 0.5, tie_rate=tie_rate, item_sd=item_sd, alpha=alpha)
    n_max = rounds * batch
    rng = np.random.default_rng(seed)
    y = plan.OUTCOMES["pairwise"](a, plan.DRAWS["pairwise"](a, n_max, annotators, sims, rng), effect, n_max,
                                  annotators)  # fmt: skip
    # share[k - 1]: each item's net share of its first k judgments (sims, items)
    share = np.stack([y[:, :, :k].sum(axis=2) / np.maximum((y[:, :, :k] != 0).sum(axis=2), 1)
                      for k in range(1, annotators + 1)])  # fmt: skip
    eta = eta_for(n_max)
    done, partial, towards = (np.zeros(sims, dtype=bool) for _ in range(3))
    looks, partial_looks = np.full(sims, rounds), np.full(sims, rounds)
    waiting = []
    for r in range(1, rounds + 1):
        old = (r - 1) * batch
        held = rng.integers(0, annotators + 1, size=(sims, batch))  # judgments each latest item holds at this look
        waiting.append(float((held < annotators).mean()))
        latest = np.take_along_axis(share[:, :, old : old + batch], (np.maximum(held, 1) - 1)[None], axis=0)[0]
        for counted_, values, decided, at_look in ((held == annotators, share[-1][:, old : old + batch], done, looks),
                                                   (held >= 1, latest, partial, partial_looks)):  # fmt: skip
            x = np.concatenate([share[-1][:, :old], np.where(counted_, values, np.nan)], axis=1)  # NaN: not counted
            above, below = excluded(x, 1.0, alpha, eta)
            new = ~decided & (above | below)
            if decided is done:
                towards |= new & above
            at_look[new] = r
            decided |= new
    return SimulatedWaiting(effect, sims, rounds, batch, annotators, float(done.mean()), float(partial.mean()),
                            float(np.mean(waiting)), float(towards.mean()), float(looks.mean()),
                            float(partial_looks.mean()))  # fmt: skip


@dataclass(frozen=True)
class SimulatedBestWorst:
    """Of ``sims`` simulated best-worst studies, every pair of ``systems`` compared, checked after each round."""

    effect: float
    sims: int
    rounds: int
    batch: int
    rejects: float  # share with some comparison whose sequence excluded 0 at some round
    naive_rejects: float  # the same for a fixed-sample t-test over items at alpha / pairs, re-run every round
    wrong: float  # share with some comparison decided towards the worse system
    correct: float  # share whose comparisons of the first system with each other were all decided for it


def simulate_best_worst(effect: float, *, sims: int, rounds: int, batch: int, systems: int = 4, tuple_size: int = 3,
                        appearances: int = 3, annotators: int = 3, item_sd: float = 0.5, alpha: float = ALPHA,
                        seed: int = 0) -> SimulatedBestWorst:  # fmt: skip
    """Best-worst studies run in rounds: each item shows ``systems`` candidates in the tuples best-worst's design
    makes (:func:`annols.definition.design.tuples`), each tuple answered by ``annotators``; an answer picks the
    candidate of highest utility as best and of lowest as worst, a utility the candidate's quality in the item
    (the first system ``effect`` above the others, each candidate's item effect normal with sd ``item_sd``) plus
    a Gumbel draw per answer (a multinomial-logit choice). Each pair's observations are :func:`observations`'s
    (score differences, bound 200), at level alpha / pairs, looked at after every round of ``batch`` items."""
    from annols.definition import design

    layout = np.array(design.tuples(systems, tuple_size, appearances, seed="simulation"))  # (tuples, size)
    n_max = rounds * batch
    rng = np.random.default_rng(seed)
    quality = rng.normal(0, item_sd, (sims, n_max, systems)) if item_sd > 0 else np.zeros((sims, n_max, systems))
    quality[..., 0] += effect
    shown = quality[:, :, layout]  # (sims, items, tuples, size)
    utility = shown[..., None, :] + rng.gumbel(size=(*shown.shape[:3], annotators, tuple_size))
    best = np.argmax(utility, axis=-1)
    worst = np.argmin(utility, axis=-1)
    value = np.zeros((sims, n_max, systems))  # per item and system: best - worst, over its answers
    for position in range(tuple_size):
        net = ((best == position).astype(float) - (worst == position)).sum(axis=-1)  # (sims, items, tuples)
        for t, members in enumerate(layout):
            value[:, :, members[position]] += net[:, :, t]
    times = np.bincount(layout.ravel(), minlength=systems) * annotators
    score = 100 * value / times  # each system's score in each item, as item_scores has it
    pairs = [(a, b) for a in range(systems) for b in range(a + 1, systems)]
    level, eta = alpha / len(pairs), eta_for(n_max)
    from scipy import stats  # type: ignore[import-untyped, unused-ignore]

    rejects, wrong = np.zeros(sims, dtype=bool), np.zeros(sims, dtype=bool)
    naive = np.zeros(sims, dtype=bool)
    won = np.zeros((sims, systems), dtype=bool)
    for a, b in pairs:
        x = score[:, :, a] - score[:, :, b]
        crossed = np.zeros(sims, dtype=bool)
        towards = np.zeros(sims, dtype=bool)
        for r in range(1, rounds + 1):
            n = r * batch
            above, below = excluded(x[:, :n], 200.0, level, eta)
            new = ~crossed & (above | below)
            towards |= new & above
            crossed |= new
            naive |= stats.ttest_1samp(x[:, :n], 0.0, axis=1).pvalue < level
        rejects |= crossed
        # the first system is the better one (effect > 0); the others are alike: any decision among them is wrong
        wrong |= (crossed & ~towards) if a == 0 and effect > 0 else crossed if a > 0 or effect == 0 else False
        if a == 0:
            won[:, b] = towards
    return SimulatedBestWorst(effect, sims, rounds, batch, float(rejects.mean()), float(naive.mean()),
                              float(wrong.mean()),
                              float(won[:, 1:].all(axis=1).mean()))  # fmt: skip


def named_rounds(definition: Any, rounds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rounds record with each comparison keyed by its question's name. A record written before every table
    named an aspect by its name keyed them by the aspect's text (:func:`annols.analysis.naming.former_cells`): a
    round whose questions are all such texts, not the names, is read with the names, so its decisions are kept.
    (Texts that are the names in another order cannot be told apart: read as names.)"""
    from annols.analysis import naming

    aspects = list(getattr(definition.spec, "aspects", ()))
    former = naming.former_cells(aspects)
    names = set(naming.aspect_names(aspects))
    if not former or set(former) == names:
        return rounds
    out = []
    for r in rounds:
        questions = {c["key"][0] for c in r.get("comparisons", [])}
        if questions and questions <= set(former) and not questions <= names:
            r = {**r, "comparisons": [{**c, "key": [former[c["key"][0]], *c["key"][1:]]} for c in r["comparisons"]]}
        out.append(r)
    return out


# ----------------------------------------------------------------------------- the report's section


def section(definition: Any, tidy: pd.DataFrame, rounds: list[dict[str, Any]]) -> Finding:
    """``Sequential study``: the rounds recorded by ``annols next-round``, each comparison's interval on the
    report's judgments of the items the rounds pushed (with the width, alpha and number of comparisons fixed at
    the first round) and its decision, and the judgments used against ``annols plan``'s fixed design."""
    rounds = named_rounds(definition, rounds)
    first, last = rounds[0], rounds[-1]
    cap = first.get("error_cap")  # spans with weights: the cap fixed at round 1 (none recorded: the default)
    pushed = {k for r in rounds for k in r.get("pushed", [])}
    items = sum(_items_pushed(r) for r in rounds)
    frame = frame_of(definition, tidy, cap)
    recorded = {tuple(c["key"]): c for c in last.get("comparisons", [])}
    when: dict[tuple[str, str, str], int] = {}
    for r in rounds:
        for c in r.get("comparisons", []):
            if c["decision"] != UNDECIDED:
                when.setdefault(tuple(c["key"]), r["round"])
    passes = int(first.get("passes", 1))
    need = per_item(first)
    by, state = counted(definition, tidy, pushed, list(recorded), passes, need, cap, recorded_items(rounds, tidy))
    if passes == 1:
        kept = {key: c["decision"] for key, c in recorded.items()}
        found_now = comparisons(by[0], bounds_of(definition, cap), float(first["effect"]), float(first["eta"]),
                                float(first["alpha"]), kept, int(first["tests"]))  # fmt: skip
    else:
        found_now = by_pass(by, bounds_of(definition, cap), float(first["effect"]), float(first["eta"]),
                            float(first["alpha"]), {k: (c["decision"], int(c.get("pass", 1)))
                                                    for k, c in recorded.items()}, int(first["tests"]))  # fmt: skip
    rows = [[*c.row(), when.get((c.question, c.first, c.second), ""), *([c.pass_] if passes > 1 else [])]
            for c in found_now]  # fmt: skip
    judgments = judgments_of(frame, pushed)
    fixed = first.get("fixed") or {}
    m = first["tests"]
    level = f"{first['alpha']} / {m}" if passes == 1 else f"{first['alpha']} / ({m} x {passes})"
    text = [
        f"This study ran in {len(rounds)} round(s) of annols next-round, {items} study items pushed; the "
        f"report reads {judgments} human judgments of them. Every pair of systems of the input pool is compared "
        f"per question ({first['tests']} comparison(s)). Items are the unit (pairwise: an item's wins minus losses "
        "over its decided judgments; ratings and ranking: its mean difference). Each comparison has an "
        "anytime-valid confidence sequence (betting, bounded observations), at level "
        f"{level} (Bonferroni over the comparisons{'' if passes == 1 else ' and the passes'}), so every decision "
        f"holds with probability {1 - float(first['alpha']):.2f} together, however many rounds were looked at. "
        f"{PLUG_IN} {complete_rule(need, passes)} "
        f"{'' if first.get('goal') == BEST else GOAL_ALL}Decided: 0 "
        f"outside the interval (one system better), or the interval inside ±{first['effect']} (within the "
        "smallest difference worth finding); a decision is the one made at the round that first showed it. "
        "Intervals are those of the judgments in this report.",
        *_observed(definition, cap),
        *_waiting(len(state.waiting)),
        _savings(fixed, judgments, first, last),
        *_observed_savings(definition, tidy, first, judgments, len({(a, b) for _, a, b in recorded})),
    ]
    summary = [_savings(fixed, judgments, first, last)]
    if first.get("goal") == BEST:  # goal all: the section as it always was
        found_best = conclusions(found_now)
        said = "; ".join(f"{q}: {v}" for q, v in found_best.items())
        text.insert(1, "Goal: the best system. The comparisons the study exists for are those that decide which "
                    "system is best, per question: between systems not yet decided worse than any other; once one "
                    "is decided worse, its other comparisons get no more items. The level is still alpha over all "
                    f"{first['tests']} comparisons, so the guarantee is the same. Conclusion: {said}.")  # fmt: skip
        summary.insert(0, f"Sequential study, goal best: {said}.")
    if passes > 1:
        decided_in = Counter(c.pass_ for c in found_now if c.decision != UNDECIDED)
        said = ", ".join(f"{n} in pass {p}" for p, n in sorted(decided_in.items())) or "none yet"
        text.insert(1, f"Passes: {passes}. Once the pool held no more item for the undecided comparisons, rounds "
                    f"re-opened items already pushed for {first['overlap']} more annotator(s) each; pass p is the "
                    f"items that reached p x {first['overlap']} annotators, each its mean over its first p x "
                    f"{first['overlap']} judgments in annotation order (a pass never changes an earlier pass's "
                    f"observations), with its own confidence sequence at level {first['alpha']} / ({first['tests']} x "
                    f"{passes}). A comparison is decided by the first pass that shows it. Decided: {said}. The "
                    "interval shown is the deciding pass's (undecided: the latest pass's).")  # fmt: skip
    table = pd.DataFrame(rows, columns=[*COLUMNS, "decided at round", *(["pass"] if passes > 1 else [])])
    history = pd.DataFrame([[r["round"], r["time"], _items_pushed(r), r["items"], r["judgments"],
                             sum(c["decision"] != UNDECIDED for c in r.get("comparisons", [])),
                             r.get("reason", "")] for r in rounds],
                           columns=["round", "time", "items pushed", "study items", "judgments read",
                                    "comparisons decided", "stopped because"])  # fmt: skip
    if passes > 1:
        history.insert(3, "pass", [int(r.get("pass", 1)) for r in rounds])
        history.insert(4, "tasks re-opened", [len(r.get("reopened") or {}) for r in rounds])
    return Finding("Sequential study", text,
                   [Table("sequential_comparisons", "Each comparison at the last round", table,
                          whole=("items", "pass") if passes > 1 else ("items",)),
                    Table("sequential_rounds", "The rounds", history,
                          whole=("round", "items pushed", "study items", "judgments read", "comparisons decided",
                                 *(("pass", "tasks re-opened") if passes > 1 else ())))],
                   summary=summary)  # fmt: skip


PLUG_IN = ("The sequence is a betting one with a fixed grid of bets (Waudby-Smith and Ramdas 2024): it uses only "
           "that every observation lies within the scale's bound, with no variance estimate plugged in, so the "
           "guarantee is exact at any round, however few items a comparison has or however much they agree.")
GOAL_ALL = "Goal: every comparison (next-round --goal all); the study is decided when all of them are. "


def complete_rule(need: int, passes: int) -> str:
    """The section's sentence on which items the intervals count (complete ones, each observation final)."""
    needed = f"{need} judgment(s)" if passes == 1 else f"p x {need} judgments in pass p"
    return (f"An item counts once complete, every one of its tasks holding its {needed} (each task's first in "
            "annotation order), so that an observation once looked at never changes; items not yet complete wait "
            "and are left out of the intervals.")  # fmt: skip


def per_item(first: dict[str, Any]) -> int:
    """The judgments an item's task needs to count (a study of passes: in each pass), from the first round's record:
    its ``overlap`` (a study of passes), else the annotators of its fixed design (next-round's ``--overlap``, every
    record has it; a record without: 1, every judged item complete)."""
    return int(first.get("overlap") or (first.get("fixed") or {}).get("annotators") or 1)


def recorded_items(rounds: list[dict[str, Any]], tidy: pd.DataFrame) -> dict[str, str] | None:
    """Task key -> item of the tasks the rounds pushed whose item has a judgment in ``tidy`` (best-worst and spans),
    from each round's ``item_tasks`` (the number of tasks of each item it pushed, in ``pushed`` order): the pull
    names the item of a judged task only, and an item whose other tasks have no judgment yet is not complete.
    None where no round records them (other styles, a record from before): the items are those the rows name."""
    from annols.analysis.by_style import asked

    if not any(r.get("item_tasks") for r in rounds) or asked.UNIT not in tidy.columns:
        return None
    named = tidy[["task_key", asked.UNIT]].astype(str).drop_duplicates("task_key")
    unit_of = dict(zip(named["task_key"], named[asked.UNIT], strict=True))
    out: dict[str, str] = {}
    for r in rounds:
        keys, at = [str(k) for k in r.get("pushed", [])], 0
        for n in r.get("item_tasks") or ():
            group, at = keys[at : at + int(n)], at + int(n)
            item = next((unit_of[k] for k in group if k in unit_of), None)
            if item is not None:
                out.update(dict.fromkeys(group, item))
    return out


def _waiting(waiting: int) -> list[str]:
    """The section's word on the items left out as not yet complete (none when none is; the rule itself is in the
    first paragraph, :func:`complete_rule`)."""
    if not waiting:
        return []
    return [f"Waiting: {waiting} item(s) pushed have some of their judgments in this pull but are not complete; "
            "they are left out of the intervals."]  # fmt: skip


def _items_pushed(round_: dict[str, Any]) -> int:
    """The study items a recorded round pushed: its count of them (best-worst and spans: an item is several tasks,
    all pushed together), else (a record from before the count was kept) its task keys."""
    return int(round_.get("pushed_items", len(round_.get("pushed", []))))


def _observed(definition: Any, cap: float | None = None) -> list[str]:
    """What an observation is, for the styles the first paragraph does not name (none for those it does); ``cap``:
    the study's error cap (None: the largest weight)."""
    if definition.style == "best-worst":
        return ["Best-worst: the item is the candidates shown with one context, all its tuples together; its "
                "observation is the first system's score in it minus the second's, each 100 x (best - worst) / times "
                "shown (the report's paired tests), bound 200."]  # fmt: skip
    if definition.style != "spans":
        return []
    bounds = bounds_of(definition, cap)
    said = "; ".join(f"{q}: bound {b:g}" for q, b in bounds.items())
    chosen = "the largest weight declared" if cap is None else "the study's --error-cap, fixed at round 1"
    return ["Spans: a task shows one candidate; the item is the context its candidates share. Its observation is the "
            "first system's mean minus the second's (the error score: second minus first, lower being better). Each "
            f"candidate's error score is clipped to [0, {error_cap(definition.spec, cap):g}] ({chosen}), "
            f"so its decisions are about the mean clipped score. {said}." if asked_score(definition) else
            "Spans: a task shows one candidate; the item is the context its candidates share. Its observation is the "
            f"first system's mean minus the second's, bound the question's range ({said})."]  # fmt: skip


def asked_score(definition: Any) -> bool:
    return definition.style == "spans" and bool(getattr(definition.spec, "weights", ()))


def observed_design(definition: Any, tidy: pd.DataFrame, first: dict[str, Any], pairs: int,
                    seed: int = 0) -> tuple[Any, Any] | None:  # fmt: skip
    """The assumptions this study's judgments show (``annols plan --pilot``'s estimates: the variance components of
    its smallest difference by REML MixedLM, the tie rate) at the study's effect, and the cheapest fixed design of
    ``annols plan`` reaching its target power for the items' claim (the claim the rounds' items test makes) with the
    study's annotators an item, or None (no design of the grid); None for both where plan has no simulation of the
    style or the judgments cannot be planned from. Pairwise items hold one pair: the design counts once per pair."""
    from annols.analysis.planning import plan

    if definition.style not in plan.DEFAULTS:
        return None
    annotators = per_item(first)
    try:
        a = plan.from_pilot(definition, tidy, "this study", plan.assumptions(definition))
        a = plan.override(a, effect=float(first["effect"]))
        best = plan.plan(a, plan.ITEMS, (annotators,), plan.SIMULATIONS, seed).cheapest_for("items")
    except AnnolsError:  # judgments plan cannot read a comparison from, or an effect off plan's scale
        return None
    if best is not None and definition.style == "pairwise" and pairs > 1:
        best = replace(best, items=best.items * pairs, judgments=best.judgments * pairs)
    return a, best


def _observed_savings(definition: Any, tidy: pd.DataFrame, first: dict[str, Any], judgments: int,
                      pairs: int) -> list[str]:  # fmt: skip
    found = observed_design(definition, tidy, first, pairs)
    if found is None:
        return []
    a, best = found
    shown = (f"item sd {a.item_sd:.3g}, annotator sd {a.annotator_sd:.3g}"
             + (f", residual sd {a.residual_sd:.3g}" if a.style == "ratings" else "")
             + (f", tie rate {a.tie_rate:.3g}" if a.style == "pairwise" else ""))  # fmt: skip
    head = (f"With the variances this study's judgments show ({shown}; REML MixedLM of its smallest difference, as "
            f"annols plan --pilot estimates them), ")  # fmt: skip
    if best is None:
        return [head + f"no fixed design of annols plan's grid reaches power {a.power} for effect {first['effect']} "
                f"over items (new items, these annotators) with {per_item(first)} annotator(s) an item: the study "
                f"used {judgments} judgments."]  # fmt: skip
    saved = best.judgments - judgments
    change = (f"{saved} fewer ({100 * saved / best.judgments:.0f}%)" if saved >= 0 else
              f"{-saved} more ({100 * -saved / best.judgments:.0f}%)")  # fmt: skip
    return [head + f"the cheapest fixed design of the same power ({a.power}, over items: new items, these "
            f"annotators) for effect {first['effect']} with {best.annotators} annotator(s) an item needs "
            f"{best.judgments} judgments ({best.items} items): the study used {judgments}, {change}."]  # fmt: skip


def _savings(fixed: dict[str, Any], judgments: int, first: dict[str, Any], last: dict[str, Any]) -> str:
    stops = {"decided": "every comparison was decided", "best": "the comparisons that decide the best system were "
             "decided", "budget": "the budget was spent",
             "pool": "the pool had no item left for the undecided comparisons",
             "passes": "the pool had no item left for the undecided comparisons and every pushed one had had all "
                       "its passes"}  # fmt: skip
    stopped = stops.get(last.get("reason", ""), "the study is still running")
    if fixed.get("plan") is False:
        return (f"Sequential study: {judgments} human judgments; {stopped}. annols plan has no simulation of this "
                "style, so there is no fixed design to state a saving against.")  # fmt: skip
    if not fixed.get("judgments"):
        return (f"Sequential study: {judgments} human judgments; {stopped}. annols plan finds no safe fixed design "
                f"of its grid for effect {first['effect']}, so there is no saving to state.")  # fmt: skip
    saved = int(fixed["judgments"]) - judgments
    share = saved / int(fixed["judgments"])
    return (f"Sequential study: {judgments} human judgments; {stopped}. The fixed design annols plan chooses for "
            f"effect {first['effect']} with {fixed['annotators']} annotator(s) an item needs {fixed['judgments']} "
            f"judgments ({fixed['items']} items): the stopping saved {saved} ({100 * share:.0f}%)."
            if saved >= 0 else
            f"Sequential study: {judgments} human judgments; {stopped}. The fixed design annols plan chooses for "
            f"effect {first['effect']} needs {fixed['judgments']}: the sequential study used {-saved} more "
            f"({100 * -share:.0f}%), the price of looking after every round.")  # fmt: skip
