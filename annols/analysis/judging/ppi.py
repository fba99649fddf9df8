"""Judge-assisted estimates: prediction-powered inference (PPI++) over items, beside the humans' own estimate.

A hybrid study has a judge answer every item and humans a random subset (``push --human-share``). Each
system score and each difference of two systems is then a mean over items, estimated twice:

- **humans only**: the mean of the items the humans judged, with the 95% CLT interval
  (``ppi_py.classical_mean_ci``);
- **PPI++** (Angelopoulos, Duchi & Zrnic 2024): ``lambda * mean(judge on the items without humans)
  + mean(humans - lambda * judge on the items with humans)``, its 95% CLT interval, ``lambda`` tuned to
  minimise the variance (power tuning; ``ppi_py.ppi_mean_ci`` and ``ppi_mean_pointestimate`` with
  ``lam=None``, clipped to [0, 1]). The judge's bias cancels (it is measured on the humans' items);
  its correlation with the humans narrows the interval. A useless judge gets lambda near 0, an
  adversarial one (negative correlation) lambda 0: the human-only estimate.

Items are the unit: an item's human judgments are combined first (their mean), and so are a judge's.
An item is a task, but where it holds several (best-worst: an article's tuples; spans: a source's
candidates, one task each), where it is every task sharing the context shown (the ``unit`` column;
the hybrid draw takes such items whole). What is averaged per item, by kind of judgment:

- ratings, ESA, DA and own numeric questions: the system's rating (``mean rating``);
- ranking: the system's rank (``mean rank``, lower is better);
- pairwise: the system's win share in the item, a tie half (``win rate %``); the difference of two
  systems is then 100 x the item's net preference (wins - losses over its judgments);
- best-worst: 100 for best, -100 for worst, 0 otherwise, over the tuples holding the system
  (``best-worst score %``);
- spans with weights (MQM): each judged candidate's error score, the sum of its spans' weights, 0
  without spans (``mean error score``, lower is better; :func:`error_score_rows`), unclipped as the
  report's "Error score" section compares it.

Spans without weights or a numeric question, sentence tables and choice questions have no mean per
system: the report says so (:data:`COVERED`) instead of estimating anything.

A difference A - B is the mean over the items holding both of the per-item difference.

**The gain.** ``effective`` is how many human items the estimate is worth: ``n x (human-only
variance / PPI variance)``; ``width ratio`` is the PPI interval's width over the human-only one.
With lambda tuned, the PPI variance is about the human-only variance times
``1 - r^2 x N / (n + N)`` (r: the judge's correlation with the humans' per-item value, n items with
humans, N items with the judge only): :func:`variance_factor`, which ``plan --judge-correlation``
uses. The library's lambda uses the judge's variance over all items; should that ever make the
interval wider than the humans' (only when the judge's spread differs much between the two sets),
lambda is the exact minimiser of the estimated variance instead, so the interval is never wider.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]
from numpy.typing import ArrayLike

from annols.analysis.by_style import asked
from annols.analysis.inference import intervals
from annols.analysis.naming import natural
from annols.analysis.results import Table
from annols.errors import AnnolsError

ALPHA = 0.05
INSTALL = "pip install 'annols[ppi]'"  # what the report tells a user without ppi-python
ERROR_SCORE = "error score"  # the kind of the rows of each judged candidate's error score (spans with weights)
MEASURES = {"rating": "mean rating", "rank": "mean rank", "preference": "win rate %",
            "best-worst": "best-worst score %", ERROR_SCORE: "mean error score"}  # fmt: skip
COVERED = ("the estimates cover ratings and numeric questions (ESA's, DA's scores), ranks, pairwise win rates, "
           "best-worst scores and the error score of spans with weights (MQM)")  # what the report says where none is
UNIT = asked.UNIT  # a row's item where it holds several tasks: best-worst (an article's tuples), spans
POINTS = {"win": 1.0, "tie": 0.5, "loss": 0.0}


def _library() -> Any:
    try:
        import ppi_py  # type: ignore[import-untyped, unused-ignore]
    except ImportError as e:  # an optional extra, like the annotator models
        raise AnnolsError(f"judge-assisted estimates need ppi-python: {INSTALL}") from e
    return ppi_py


def available() -> bool:
    try:
        _library()
    except AnnolsError:
        return False
    return True


@dataclass(frozen=True)
class Estimate:
    """One mean over items, by the humans alone and by PPI++ with the judge."""

    n: int  # items with humans (and the judge)
    unlabeled: int  # items with the judge only
    human: float
    human_low: float
    human_high: float
    point: float
    low: float
    high: float
    lam: float

    @property
    def width_ratio(self) -> float:
        human = self.human_high - self.human_low
        if human <= 0:  # the humans agree on every item: nothing to narrow (lambda is then 0, the PPI width 0)
            return 1.0 if self.high - self.low <= 0 else math.inf
        return (self.high - self.low) / human

    @property
    def effective(self) -> float:
        """The human items the PPI estimate is worth (ratio of the variances times n)."""
        ratio = self.width_ratio
        if math.isnan(ratio):  # no interval (all-equal values on a scale of unknown range)
            return math.nan
        return self.n / ratio**2 if ratio > 0 else math.inf


def correlation(y: np.ndarray, f: np.ndarray) -> float:
    """Pearson's r of the humans' and the judge's per-item values (NaN when either is constant)."""
    if np.ptp(y) == 0 or np.ptp(f) == 0:
        return math.nan
    return float(np.corrcoef(y, f)[0, 1])


def variance_factor(r: float, n: int, unlabeled: int) -> float:
    """PPI++ variance over the human-only variance, lambda tuned, for a judge of correlation r:
    ``1 - r^2 N / (n + N)`` (minimising ``Var(Y - l f)/n + l^2 Var(f)/N`` over l)."""
    total = n + unlabeled
    return 1.0 - r * r * unlabeled / total if total else 1.0


def _variance(y: np.ndarray, f: np.ndarray, fu: np.ndarray, lam: float) -> float:
    """The library's variance estimate of the PPI mean at lambda (population sd, as ppi_mean_ci)."""
    return float((lam * fu).std() ** 2 / len(fu) + (y - lam * f).std() ** 2 / len(y))


def estimate(y: ArrayLike, f: ArrayLike, fu: ArrayLike, alpha: float = ALPHA,
             bounds: tuple[float, float] | None = None) -> Estimate:  # fmt: skip
    """PPI++ of a mean: ``y`` the humans' per-item values, ``f`` the judge's on the same items, ``fu`` the
    judge's on the items without humans (each at least 2). ``bounds``: the range every per-item value lies in;
    with it both intervals are :mod:`annols.analysis.inference.intervals`' bounded ones (betting), which hold with few
    items and at a ceiling, and PPI++ falls back to the humans' own (lambda 0) where its bounded interval would
    be wider; without it, ppi-python's CLT intervals."""
    ppi = _library()
    y_, f_, fu_ = (np.asarray(v, dtype=float) for v in (y, f, fu))
    human_low, human_high = (float(v) for v in ppi.classical_mean_ci(y_, alpha=alpha))
    point, low, high, lam = _ppi(ppi, y_, f_, fu_, alpha, None)
    if _variance(y_, f_, fu_, lam) > _variance(y_, f_, fu_, 0.0):
        # The exact minimiser of the same variance estimate, clipped as the library clips: never above lambda 0's.
        a = float(np.mean((y_ - y_.mean()) * (f_ - f_.mean())))
        b = float(fu_.var() / len(fu_) * len(y_) + f_.var())
        point, low, high, lam = _ppi(ppi, y_, f_, fu_, alpha, min(max(a / b, 0.0), 1.0) if b > 0 else 0.0)
    if bounds is not None:
        human_low, human_high = intervals.betting(y_, *bounds, alpha=alpha)
        low, high = intervals.ppi(y_, f_, fu_, lam, *bounds, alpha=alpha)
        if high - low > human_high - human_low:  # the judge does not pay for its share of alpha: humans only
            point, low, high, lam = float(y_.mean()), human_low, human_high, 0.0
    return Estimate(len(y_), len(fu_), float(y_.mean()), human_low, human_high, point, low, high, lam)


def _ppi(ppi: Any, y: np.ndarray, f: np.ndarray, fu: np.ndarray, alpha: float,
         lam: float | None) -> tuple[float, float, float, float]:  # fmt: skip
    if lam is None:
        lam = tuned_lambda(y, f, fu)
    point = float(np.ravel(ppi.ppi_mean_pointestimate(y, f, fu, lam=lam))[0])
    low, high = (float(np.ravel(v)[0]) for v in ppi.ppi_mean_ci(y, f, fu, alpha=alpha, lam=lam))
    return point, low, high, float(lam)


def tuned_lambda(y: np.ndarray, f: np.ndarray, fu: np.ndarray) -> float:
    """The library's power-tuned lambda (what ``lam=None`` uses), to report it beside the estimate."""
    ppi = _library()
    from ppi_py.ppi import _calc_lam_glm  # type: ignore[import-untyped, unused-ignore]

    if np.ptp(np.concatenate([f, fu])) == 0:
        return 0.0  # a judge that gives every item the same answer tells nothing (the library would divide by 0)
    start = float(np.ravel(ppi.ppi_mean_pointestimate(y, f, fu, lam=1))[0])
    lam = _calc_lam_glm((y - start)[:, None], (f - start)[:, None], (fu - start)[:, None], np.eye(1), clip=True)
    return float(np.ravel(lam)[0])


# --- per-item values from the judgments table -------------------------------------------------------


def item_of(frame: pd.DataFrame) -> pd.Series:
    """Each row's item: its :data:`UNIT` where the frame names one, else its task."""
    task = frame["task_key"].astype(object)
    if UNIT not in frame.columns:
        return task
    unit = frame[UNIT].astype(object)
    return unit.where(unit.notna() & (unit.astype(str) != ""), task)


def item_values(frame: pd.DataFrame) -> pd.DataFrame:
    """[question, measure, task_key, annotator, system, value]: one value per judgment and system, from
    judgments rows (ratings, ranks, preferences, best-worst, error scores; other kinds have no mean per system).
    ``task_key`` is the item: the row's :data:`UNIT` where the frame names one (best-worst: an article's tuples;
    spans: a source's candidates), else its task."""
    frame = frame.assign(task_key=item_of(frame))
    parts = []
    for kind in ("rating", "rank", ERROR_SCORE):
        rows = frame[frame["kind"] == kind]
        if len(rows):
            parts.append(rows.assign(measure=MEASURES[kind], value=pd.to_numeric(rows["value"], errors="coerce")))
    prefs = frame[frame["kind"] == "preference"]
    if len(prefs):
        points = prefs["value"].astype(str).map(POINTS).astype(float) * 100.0
        mine = prefs.assign(measure=MEASURES["preference"], value=points)
        theirs = prefs.assign(measure=MEASURES["preference"], system=prefs["opponent"], value=100.0 - points)
        parts += [mine, theirs]
    picks = frame[frame["kind"] == "best-worst"]
    if len(picks):
        parts.append(picks.assign(measure=MEASURES["best-worst"], value=100.0 * pd.to_numeric(picks["value"])))
    columns = ["question", "measure", "task_key", "annotator", "system", "value"]
    if not parts:
        return pd.DataFrame(columns=columns)
    out = pd.concat([p[columns] for p in parts], ignore_index=True).dropna(subset=["value"])
    return out.astype({"question": str, "task_key": str, "system": str, "annotator": str})


def error_score_rows(frame: pd.DataFrame, judged: pd.DataFrame, spec: Any) -> pd.DataFrame:
    """Spans with weights (MQM): each judged candidate's error score as a row of kind :data:`ERROR_SCORE` (question
    ``error score``), the sum of its spans' weights, 0 without spans
    (:func:`annols.analysis.by_style.asked.error_scores`, what the report's "Error score" section compares). ``frame``:
    judgments rows with their annotation's ``uid``; ``judged``: one row per counted annotation (uid, task_key,
    annotator, system, unit), the judge's too."""
    scores = asked.error_scores(asked.span_rows(frame, spec), judged, None)
    return pd.DataFrame({"task_key": scores["task_key"], "annotator": scores["annotator"], "kind": ERROR_SCORE,
                         "question": asked.SCORE, "system": scores["system"], "value": scores[asked.SCORE],
                         UNIT: scores[asked.UNIT]})  # fmt: skip


def per_item(values: pd.DataFrame) -> pd.DataFrame:
    """The mean per (question, measure, system, item) over the given raters' judgments: a column per item."""
    means = values.groupby(["question", "measure", "system", "task_key"], sort=True)["value"].mean()
    return means.reset_index()


COLUMNS = ["judge", "question", "measure", "estimate", "items with humans", "judge-only items", "humans",
           "humans low", "humans high", "PPI++", "PPI++ low", "PPI++ high", "lambda", "width ratio",
           "worth human items", "judge r", "predicted width ratio", "interval"]  # fmt: skip


def _targets(humans: pd.DataFrame, judge: pd.DataFrame) -> list[tuple[str, str, str, pd.Series, pd.Series]]:
    """(question, measure, estimate, humans by item, judge by item) for each system and each pair of systems."""
    out = []
    for (question, measure), mine in judge.groupby(["question", "measure"], sort=False):
        theirs = humans[(humans["question"] == question) & (humans["measure"] == measure)]
        h = theirs.pivot(index="task_key", columns="system", values="value")
        j = mine.pivot(index="task_key", columns="system", values="value")
        systems = natural(set(j.columns) & set(h.columns))
        for s in systems:
            out.append((str(question), str(measure), str(s), h[s].dropna(), j[s].dropna()))
        for i, a in enumerate(systems):
            for b in systems[i + 1 :]:
                out.append((str(question), str(measure), f"{a} - {b}", (h[a] - h[b]).dropna(), (j[a] - j[b]).dropna()))
    return out


def pilot_correlation(frame: pd.DataFrame, judge: str, is_judge: Any) -> float | None:
    """A pilot's judge correlation for ``plan``: the median over the differences of two systems (what the plan's
    test compares) of Pearson's r between the humans' and the judge's per-item difference, on the items both
    answered; None where no difference has 3 such items with varying values."""
    values = item_values(frame)
    humans = per_item(values[~values["annotator"].map(is_judge).astype(bool)])
    found = []
    for _, _, target, h, j in _targets(humans, per_item(values[values["annotator"] == judge])):
        both = h.index.intersection(j.index)
        if " - " in target and len(both) >= 3:
            r = correlation(h[both].to_numpy(dtype=float), j[both].to_numpy(dtype=float))
            if math.isfinite(r):
                found.append(r)
    return float(np.median(found)) if found else None


KNOWN_RANGES = {MEASURES["preference"]: (0.0, 100.0), MEASURES["best-worst"]: (-100.0, 100.0)}
NO_INTERVAL = "no interval"  # the note of a row whose values are all equal on a scale of unknown range


def value_range(question: str, measure: str, systems: int,
                ranges: dict[str, tuple[float, float]] | None) -> tuple[float, float] | None:  # fmt: skip
    """The range a system's per-item value lies in: win rates and best-worst scores by their definition, ranks
    1 to the number of systems, ratings, numeric questions and error scores the study's (``ranges`` by
    question, from the definition); None where none is known."""
    if measure in KNOWN_RANGES:
        return KNOWN_RANGES[measure]
    if measure == MEASURES["rank"]:
        return (1.0, float(systems)) if systems >= 2 else None
    return (ranges or {}).get(question)


def _codes(answers: Any) -> list[float]:
    out = []
    for answer in answers or ():
        try:
            out.append(float(getattr(answer, "code", answer)))  # a rating is its code read as a number
        except (TypeError, ValueError):
            continue
    return out


def ranges_of(definition: Any) -> dict[str, tuple[float, float]]:
    """Each question's range of values from the definition: a ratings aspect's scale (its numeric codes, or the
    slider's min and max) and each numeric question's (a scale's codes, a number's or slider's min and max).
    The error score of spans with weights has none (a candidate's score is unbounded)."""
    spec = definition.spec
    out: dict[str, tuple[float, float]] = {}
    if definition.style == "ratings":
        if getattr(spec, "scale", None) == "slider" and getattr(spec, "slider", None) is not None:
            scale = (float(spec.slider.min), float(spec.slider.max))
        else:
            codes = _codes(getattr(spec, "answers", ()))
            scale = (min(codes), max(codes)) if len(codes) >= 2 else (0.0, 0.0)
        if scale[1] > scale[0]:
            out.update(dict.fromkeys((a.name for a in spec.aspects), scale))
    for q in asked.questions_of(spec):
        if not q.numeric:
            continue
        if q.kind == "scale":
            codes = _codes(q.all_choices)
            low, high = (min(codes), max(codes)) if len(codes) >= 2 else (None, None)
        else:
            low, high = getattr(q, "min", None), getattr(q, "max", None)
        if low is not None and high is not None and float(high) > float(low):
            out[q.name] = (float(low), float(high))
    return out


SEEN = "bounded, range seen"  # the interval column of an error score's: its range 0 to the largest seen


def estimates(frame: pd.DataFrame, judges: Sequence[str], is_judge: Any, alpha: float = ALPHA,
              ranges: dict[str, tuple[float, float]] | None = None) -> pd.DataFrame:  # fmt: skip
    """Every system score and difference as PPI++ beside humans only (:data:`COLUMNS`), per judge; rows only where
    the judge answered items the humans did not (at least 2) and at least 2 items have both. Where the values'
    range is known (:func:`value_range`) the intervals are the bounded ones (:func:`estimate`); where it is not
    and the humans' values are all equal, no interval is given (nan): a CLT interval would have no width."""
    values = item_values(frame)
    rows = []
    humans = per_item(values[~values["annotator"].map(is_judge).astype(bool)])
    systems = humans.groupby("question")["system"].nunique().to_dict() if len(humans) else {}
    seen = values.groupby("question")["value"].max().to_dict() if len(values) else {}
    for name in judges:
        judge = per_item(values[values["annotator"] == name])
        for question, measure, target, h, j in _targets(humans, judge):
            both = h.index.intersection(j.index)
            alone = j.index.difference(h.index)
            if len(both) < 2 or len(alone) < 2:
                continue
            y, f = h[both].to_numpy(dtype=float), j[both].to_numpy(dtype=float)
            bounds = value_range(question, measure, int(systems.get(question, 0)), ranges)
            kind = "bounded" if bounds is not None else "CLT"
            if bounds is None and measure == MEASURES[ERROR_SCORE]:
                # No bound is known for an error score: 0 to the largest seen (humans' and judges', at least 1), as
                # the error score's own tables take it (#41: the CLT interval covered 0.89 at 25 items, 90 % clean, one
                # annotator).
                bounds, kind = (0.0, max(float(seen.get(question, 0.0)), 1.0)), SEEN
            if bounds is not None and " - " in target:
                bounds = (bounds[0] - bounds[1], bounds[1] - bounds[0])
            e = estimate(y, f, j[alone].to_numpy(), alpha, bounds)
            if bounds is None and np.ptp(y) == 0:
                e = replace(e, human_low=math.nan, human_high=math.nan, low=math.nan, high=math.nan)
            r = correlation(y, f)
            predicted = math.sqrt(variance_factor(max(r, 0.0), e.n, e.unlabeled)) if math.isfinite(r) else math.nan
            rows.append([name, question, measure, target, e.n, e.unlabeled, e.human, e.human_low, e.human_high,
                         e.point, e.low, e.high, e.lam, e.width_ratio, e.effective, r, predicted,
                         kind])  # fmt: skip
    return pd.DataFrame(rows, columns=COLUMNS)


def interval_lines(table: pd.DataFrame) -> list[str]:
    """The headline's word on the intervals: which are bounded, which CLT, and where there is none."""
    if not len(table):
        return []
    lines = []
    bounded = table["interval"].isin(["bounded", SEEN])
    if bounded.any():
        lines.append(f"{int(bounded.sum())} of {len(table)} estimates have bounded 95% intervals (betting, "
                     "Waudby-Smith & Ramdas 2024: they hold at any number of items and at a ceiling of the scale, "
                     "and are wider than a CLT interval with few items).")  # fmt: skip
    seen = table["interval"] == SEEN
    if seen.any():
        lines.append(f"{int(seen.sum())} of them are error scores, which have no bound known beforehand: their "
                     "range is taken as 0 to the largest error score seen.")  # fmt: skip
    if (~bounded).any():
        lines.append(f"{int((~bounded).sum())} of {len(table)} estimates are on a scale of unknown range (CLT "
                     "intervals, which may cover less than 95% with few items or at a ceiling).")  # fmt: skip
    missing = table["humans low"].isna()
    if missing.any():
        names = ", ".join(f"{q} {t}" for q, t in table.loc[missing, ["question", "estimate"]].itertuples(index=False))
        lines.append(f"No interval for {names}: every human item got the same value on a scale of unknown range, "
                     "and a CLT interval would have no width.")  # fmt: skip
    return lines


def gain_lines(table: pd.DataFrame) -> list[str]:
    """What the judge was worth, per judge and question: the median over its scores, then over its differences."""
    lines = []
    for (judge, question), part in table.groupby(["judge", "question"], sort=False):
        for label, rows in (("scores", part[~part["estimate"].str.contains(" - ", regex=False)]),
                            ("differences", part[part["estimate"].str.contains(" - ", regex=False)])):  # fmt: skip
            if not len(rows):
                continue
            n = int(rows["items with humans"].median())
            worth = float(rows["worth human items"].median())
            narrower = 100.0 * (1.0 - float(rows["width ratio"].median()))
            predicted = rows["predicted width ratio"].dropna()
            plan = (f" From the judge's r = {float(rows['judge r'].median()):.2f}, plan predicts "
                    f"{100.0 * (1.0 - float(predicted.median())):.0f} %." if len(predicted) else "")  # fmt: skip
            if narrower < 0.5:
                lines.append(f"{judge} on {question} ({label}): the judge did not help; the intervals are the "
                             f"humans' own ({n} human items worth {worth:.0f}).{plan}")  # fmt: skip
            else:
                lines.append(f"{judge} on {question} ({label}): the judge made {n} human items worth {worth:.0f}: "
                             f"intervals {narrower:.0f} % narrower (medians).{plan}")  # fmt: skip
    return lines


def table(frame: pd.DataFrame) -> Table:
    note = (
        f"Items are the unit: each item's judgments are averaged first (humans together, the judge alone). "
        f"Humans: the mean over the items with humans and its {100 * (1 - ALPHA):.0f}% interval. PPI++: "
        "lambda x the judge's mean on the judge-only items + the mean of (humans - lambda x judge) on the "
        "items with humans, lambda power-tuned in [0, 1] (ppi-python). Interval 'bounded': the scale's range "
        "is known, and both intervals are betting intervals for bounded means (Waudby-Smith & Ramdas 2024; "
        "PPI++: the rectifier's at 4% plus lambda x the judge-only mean's at 1%, the humans' own where that "
        "is wider); 'bounded, range seen': the same for an error score, its range 0 to the largest score seen "
        "(no bound is known beforehand); 'CLT': ppi-python's CLT intervals (none where the humans' values are all "
        "equal). Width "
        "ratio: PPI++ interval over the humans' (below 1: the judge helped). Worth human items: items with humans x "
        "(humans' variance / PPI++ variance). Judge r: the judge's correlation with the humans' per-item value "
        "on their items; predicted width ratio: sqrt(1 - r^2 N / (n + N)), what plan --judge-correlation "
        "predicts from it (1 for r <= 0: lambda is clipped to [0, 1]). A difference 'A - B' is the mean per-item "
        "difference over the items holding both; for win rates it is 100 x the item's net preference (wins - losses)."
    )
    return Table("judge_assisted", "Judge-assisted estimates (PPI++) beside the humans' on the same items",
                 frame, note)  # fmt: skip


# --- plans for hybrid studies ------------------------------------------------------------------------


def share_factor(r: float, share: float) -> float:
    """:func:`variance_factor` when humans judge a ``share`` of the items the judge answers: 1 - r^2 (1 - share);
    1 for r <= 0 (lambda is clipped to [0, 1]: an adversarial judge is not used)."""
    return 1.0 - max(r, 0.0) ** 2 * (1.0 - share)


PLAN_COLUMNS = ["annotators", "human items", "judgments", "with the judge: human items", "with the judge: judgments",
                "judge answers (items)", "human judgments saved %"]  # fmt: skip


def needed_items(designs: Sequence[Any], annotators: int, power: float) -> float | None:
    """Items a design of ``annotators`` per item needs for ``power``: the grid's power curve (safe designs),
    linear between the last grid point below the target and the first at or above it; None if none reaches it."""
    curve = sorted((d.items, d.power) for d in designs if d.annotators == annotators and not d.unsafe)
    for i, (items, reached) in enumerate(curve):
        if reached >= power:
            if i == 0:
                return float(items)
            before, below = curve[i - 1]
            return before + (items - before) * (power - below) / (reached - below)
    return None


def judge_plan(designs: Sequence[Any], power: float, r: float, share: float) -> pd.DataFrame:
    """Per number of annotators: the human judgments needed for ``power`` without the judge and with a judge of
    correlation ``r`` on every item, humans on ``share`` of them (PPI++: n human items with the judge are worth
    n / share_factor human items alone, so n_judge = n x share_factor)."""
    factor = share_factor(r, share)
    rows = []
    for k in sorted({d.annotators for d in designs}):
        items = needed_items(designs, k, power)
        if items is None:
            rows.append([k, None, None, None, None, None, None])
            continue
        alone = math.ceil(items - 1e-9)  # the interpolation's rounding error must not add an item
        helped = math.ceil(items * factor - 1e-9)
        rows.append([k, alone, alone * k, helped, helped * k, math.ceil(helped / share),
                     round(100.0 * (1 - helped / alone), 1)])  # fmt: skip
    return pd.DataFrame(rows, columns=PLAN_COLUMNS)
