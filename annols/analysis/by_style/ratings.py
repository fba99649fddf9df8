"""Ratings: mean and median per system and aspect, z-scores, distribution, paired tests, agreement.

Reads the ``rating`` rows of the judgments table (:func:`annols.styles.judgments.tidy`): the
aspect, the system rated and the number given (a scale code, lowest first, or a slider's
0..100).

- Mean and median per aspect and system, with 95% intervals that resample whole samples
  (percentile bootstrap). The mean is the items rule's (:func:`annols.analysis.cells.items_mean`):
  each sample's mean over its ratings, then the mean over samples.
- Mean z-score: each annotator's ratings of an aspect standardised by that annotator's
  own mean and sample standard deviation (the direct-assessment convention), then
  averaged per system; an annotator whose ratings of the aspect are all equal (or who
  gave one) has no z-scores. Averaged by the items rule as the mean is.
- Distribution per system: the share of each scale code, or of each tenth of a slider's range
  (the top value in the last tenth).
- Paired tests between systems over samples: per sample, each system's mean rating; the
  Wilcoxon signed-rank test (``scipy.stats.wilcoxon``, zero differences dropped) of the
  differences over the samples where both were rated; Holm's correction across the
  system pairs of an aspect. scipy gives the exact p up to 50 samples without ties or
  zero differences, else the normal approximation (tie-corrected); the report says so.
- Agreement per aspect, a unit being one system's output on one sample: Krippendorff's
  alpha, ordinal for a scale of codes, interval for a slider; Fleiss' kappa (scale codes
  as categories) over the units with the most common number of ratings.

Turn by turn (ratings ``per_turn``: each assistant turn of a conversation rated in one task,
the turn in the table's ``row``): the sample stays the unit of every mean, interval and test,
so a conversation's turn ratings are averaged within it per system (the items rule does it:
each sample's mean over its ratings). The agreement's unit is one system's turn on one
sample (a turn's rating is compared only with other ratings of that turn); beside the
overall table, the mean rating per turn position (``ratings_turns``) and the agreement per
turn position (``ratings_agreement_turns``, units: the samples' turn of that position).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols import memory
from annols.analysis import cells
from annols.analysis.cells import UNIT
from annols.analysis.inference import bootstrap, detectable, intervals, sampled
from annols.analysis.naming import aspect_names, in_order
from annols.analysis.options import AnalysisOptions
from annols.analysis.raters import agreement
from annols.analysis.results import SHOWN_ROWS, Figure, Finding, Panel, Table, percent, stacked_bars

TENTHS = 10


def judgments(frame: pd.DataFrame, aspects: list[str], uid: bool = True, compact: bool = False,
              turns: bool = False) -> pd.DataFrame:  # fmt: skip
    """The rating rows as (uid, task_key, annotator, aspect, system, rating, code), numbered from 0 (``turns``:
    with ``turn``, the assistant turn a per-turn rating is of, from 1);
    ``uid=False``: without uid. ``compact``: whole-number ratings in the smallest integer type that holds
    them (int8 for a scale of codes: 5 MB instead of 40 MB at 100,000 tasks), for readers that take them as
    float or through pandas' float aggregates."""
    # The rows are chosen and sorted on the few columns that decide, then each column is taken once: each
    # copy of the rating rows is about 100 MB at 100,000 tasks.
    rated = (frame["kind"] == "rating").to_numpy()
    rows = slice(None) if rated.all() else np.flatnonzero(rated)  # every row (the usual case): no indexes
    numbers, value_codes = _numbers(frame["value"].iloc[rows])  # each row's number is numbers[value_codes]
    aspect = in_order(frame["question"].iloc[rows], aspects)
    counted = ~pd.isna(numbers[value_codes]) & (aspect.codes >= 0)
    if not counted.all():
        rows = np.flatnonzero(rated)[counted]
        value_codes, aspect = value_codes[counted], aspect[counted]
    keys = [aspect, *(frame[name].iloc[rows].array for name in ("system", "task_key", "annotator"))]
    order: np.ndarray = _sorted_order(keys).astype(np.int32 if len(aspect) < 2**31 else np.int64)  # half the bytes
    del keys
    taken = order if isinstance(rows, slice) else rows[order]
    columns: dict[str, Any] = {name: _take(frame[name].array, taken)
                               for name in ((["uid"] if uid else []) + ["task_key", "annotator"])}  # fmt: skip
    columns["aspect"] = _take(aspect, order)
    columns["system"] = _take(frame["system"].array, taken)
    if compact:
        at = np.unique(value_codes)
        used = numbers[at]
        if numbers.dtype.kind == "i" or (np.isfinite(used).all() and (used == np.round(used)).all()):
            numbers = np.zeros(len(numbers), dtype=_smallest(used))  # whole numbers: the same values, fewer bytes
            numbers[at] = used  # (the entries of codes no row has stay 0: nothing reads them)
    columns["rating"] = numbers[_take(value_codes, order)]  # the numbers made in sorted order: no unsorted copy
    columns["code"] = _take(frame["code"].array, taken)
    if turns:
        columns["turn"] = pd.to_numeric(pd.Series(_take(frame["row"].array, taken), dtype=object),
                                        errors="coerce").to_numpy()  # fmt: skip
    if agreement.COPY in frame.columns:  # push --share-identical: which rows credit a judgment to another system
        columns[agreement.COPY] = _take(frame[agreement.COPY].to_numpy(), taken)
    return pd.DataFrame(columns, copy=False)


def _take(values: Any, order: np.ndarray) -> Any:
    """``values.take(order)`` for a numpy array or a Categorical, a chunk of the order at a time: numpy and
    pandas turn a whole int32 order into an int64 copy first (40 MB at 100,000 tasks, for every column)."""
    codes = values.codes if isinstance(values, pd.Categorical) else values
    if not isinstance(codes, np.ndarray):  # another extension array: its own take
        return values.take(order)
    out = np.empty(len(order), dtype=codes.dtype)
    for start in range(0, len(order), cells.CHUNK):
        out[start : start + cells.CHUNK] = codes[order[start : start + cells.CHUNK]]
    if isinstance(values, pd.Categorical):
        return pd.Categorical.from_codes(out, dtype=values.dtype, validate=False)
    return out


def _smallest(values: np.ndarray) -> type[np.signedinteger[Any]]:
    """The smallest signed integer type that holds these whole numbers."""
    low, high = (int(values.min()), int(values.max())) if len(values) else (0, 0)
    for kind in (np.int8, np.int16, np.int32):
        if np.iinfo(kind).min <= low and high <= np.iinfo(kind).max:
            return kind
    return np.int64


def _numbers(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """``pd.to_numeric(values, errors="coerce")`` as a lookup and an index into it (int64 numbers when every
    value is a whole number, as there): a categorical's categories in use are converted once, not a string
    object per row, and the row-sized array of numbers is made only once the rows are sorted."""
    if not isinstance(values.dtype, pd.CategoricalDtype):
        return pd.to_numeric(values, errors="coerce").to_numpy(), np.arange(len(values))
    codes = values.cat.codes.to_numpy()
    used = np.unique(codes)
    present = used[used >= 0]
    converted = pd.to_numeric(pd.Series(values.cat.categories[present], dtype=object), errors="coerce")
    whole = len(present) == len(used) and converted.dtype.kind in "iu"
    lookup = np.zeros(len(values.cat.categories) + 1, dtype=np.int64 if whole else np.float64)
    if not whole:
        lookup[:] = np.nan  # a category not in use, and the last entry, code -1 (missing)
    lookup[present] = converted.to_numpy()
    return lookup, codes


def _sorted_order(keys: list[Any]) -> np.ndarray:
    """The stable order of ``DataFrame.sort_values`` on these keys (first key first). Categorical keys are
    sorted by their codes with missing values last, as pandas does, but on the small codes themselves:
    pandas makes an int64 array per key first (about 150 MB for four keys at 100,000 tasks)."""
    if not all(isinstance(k, pd.Categorical) for k in keys):
        frame = pd.DataFrame({i: k for i, k in enumerate(keys)})
        return frame.sort_values(list(range(len(keys))), kind="stable").index.to_numpy()
    codes = []
    for key in reversed(keys):  # np.lexsort sorts by its last key first
        c = key.codes
        codes.append(np.where(c < 0, len(key.categories), c) if (c < 0).any() else c)
    return np.lexsort(codes)


def rows(tidy: pd.DataFrame, spec: Any) -> tuple[pd.DataFrame, list[str]]:
    """:func:`judgments` with each aspect named by its name, and the aspects in order: what the ratings
    tables, the detectable differences and the reliability read. The report makes it once and hands it to
    each (at 100,000 tasks each copy of the rating rows is about 100 MB). Without the uid, which none of
    them reads."""
    aspects = aspect_names(spec.aspects)
    if per_turn(spec) and UNIT in tidy.columns:  # the sample is the item: each system's conversation of it
        tidy = tidy.assign(task_key=tidy[UNIT])
    return judgments(tidy, aspects, uid=False, compact=True, turns=per_turn(spec)), aspects


def per_turn(spec: Any) -> bool:
    """Whether the definition rates a conversation turn by turn (ratings ``per_turn``)."""
    return bool(getattr(spec, "per_turn", False))


def answer_of(frame: pd.DataFrame, spec: Any) -> tuple[pd.Series, list[str]]:
    """Each rating's place on the scale: its code (choice scale) or its tenth (slider), and the order of those."""
    if spec.scale == "slider":
        low, high = spec.slider.min, spec.slider.max
        width = (high - low) / TENTHS
        names = [f"{low + k * width:g}-{low + (k + 1) * width:g}" for k in range(TENTHS)]
        tenth = np.clip((frame["rating"].to_numpy(dtype=float) - low) // width, 0, TENTHS - 1).astype(int)
        return pd.Series(np.array(names)[tenth], index=frame.index), names
    codes = [str(a.code) for a in spec.answers]
    if isinstance(frame["code"].dtype, pd.CategoricalDtype):  # a string per code, not one per rating
        return frame["code"].cat.rename_categories([str(c) for c in frame["code"].cat.categories]), codes
    return frame["code"].astype(str), codes


def scale_range(spec: Any) -> tuple[float, float] | None:
    """The range of a rating: the slider's min and max, else the scale's numeric codes' (None without two)."""
    if spec.scale == "slider":
        return float(spec.slider.min), float(spec.slider.max)
    codes = []
    for a in spec.answers:
        try:
            codes.append(float(a.code))
        except (TypeError, ValueError):
            continue
    return (min(codes), max(codes)) if len(codes) >= 2 and max(codes) > min(codes) else None


def sections(tidy: pd.DataFrame, spec: Any, options: AnalysisOptions,
             rated: tuple[pd.DataFrame, list[str]] | None = None) -> list[Finding]:  # fmt: skip
    """The ratings sections; ``rated``: :func:`rows` of ``tidy`` when already made."""
    frame, aspects = rated or rows(tidy, spec)
    if not len(frame):
        return [Finding("Ratings", ["No ratings to count."]),
                Finding("Agreement", [f"No agreement statistics: {agreement.NOTHING}."])]  # fmt: skip
    dist = distribution(frame, spec)
    bounds = scale_range(spec)
    intervals_text = (f"95% intervals of the mean ratings and of the paired differences: betting intervals for a "
                      f"mean bounded by the scale ({bounds[0]:g} to {bounds[1]:g}; Waudby-Smith & Ramdas 2024) over "
                      "the samples' means, which hold with few samples and at the scale's ceiling; the medians': "
                      f"percentile bootstrap over samples, {options.bootstrap} resamples, seed {options.seed}, left "
                      "empty where every resample gives the same median (a point is not a 95% interval)."
                      if bounds is not None else
                      f"95% intervals: percentile bootstrap over samples, {options.bootstrap} resamples, seed "
                      f"{options.seed}.")  # fmt: skip
    text = [
        f"{len(frame)} ratings. Means by the items rule: each sample's mean over its ratings, then the mean over "
        f"samples. {intervals_text} Mean z: each annotator's ratings of an aspect standardised by their own mean "
        "and standard deviation (direct assessment), averaged per system by the same rule.",
        "Paired tests: per sample each system's mean rating; Wilcoxon signed-rank over the samples where both "
        "systems were rated (zero differences dropped); p is exact up to 50 samples without tied or zero "
        "differences, else scipy's normal approximation with the tie correction; p (Holm) corrects across the "
        "system pairs of an aspect.",
    ]
    # Each table's transients (tens of MB at 100,000 tasks) go back to the system before the next is made.
    tables = [summary(frame, options, whole=spec.scale != "slider", bounds=bounds), dist]
    memory.release()
    tests = paired_tests(frame, options, bounds)
    tables.append(tests)
    crossed, crossed_text = sampled.table("ratings", sampled.paired(frame, "aspect", tests.frame, "rating"),
                                          sampled.most_annotators(frame, "aspect"), "mean rating difference",
                                          tests.frame)  # fmt: skip
    tables += crossed
    text += crossed_text
    if "turn" in frame.columns:
        text.append("Turn by turn: each conversation (sample) stays the unit of the means, intervals and tests "
                    "above, its turns' ratings averaged within it per system; the tables per turn give the same "
                    "means and paired tests for the ratings of one turn position only.")  # fmt: skip
        tables += [turn_summary(frame, options, whole=spec.scale != "slider", bounds=bounds),
                   turn_tests(frame, options, bounds)]
    memory.release()
    pointless = no_median_interval(tables[0].frame, options)
    out = [Finding("Ratings", [*text, *pointless], tables, [_plot(dist)], pointless),
           agreement_section(frame, spec, aspects)]  # fmt: skip
    memory.release()
    return out


def turn_summary(frame: pd.DataFrame, options: AnalysisOptions, whole: bool = True,
                 bounds: tuple[float, float] | None = None) -> Table:  # fmt: skip
    """:func:`summary` of each turn position's ratings alone, with its turn first."""
    parts = []
    for turn in sorted(frame["turn"].dropna().unique()):
        table = summary(frame[frame["turn"].to_numpy() == turn].reset_index(drop=True), options, whole, bounds)
        parts.append(table.frame.assign(turn=int(turn)))
    columns = ["turn", *summary_columns()]
    out = pd.concat(parts, ignore_index=True)[columns] if parts else pd.DataFrame(columns=columns)
    out = out.sort_values(["aspect", "turn"], kind="stable").reset_index(drop=True)
    return Table("ratings_turns", "Mean rating per turn position (each turn's ratings alone)", out,
                 whole=MEDIANS if whole else ())  # fmt: skip


def turn_tests(frame: pd.DataFrame, options: AnalysisOptions, bounds: tuple[float, float] | None = None) -> Table:
    """:func:`paired_tests` of each turn position's ratings alone (Holm across the system pairs of an aspect within a
    turn position), with its turn first."""
    parts = []
    for turn in sorted(frame["turn"].dropna().unique()):
        mine = frame[frame["turn"].to_numpy() == turn].reset_index(drop=True)
        parts.append(tests_with_effects(mine, options, bounds).drop(columns="sd of differences").assign(turn=int(turn)))
    out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["turn"])
    out = out[["turn", *(c for c in out.columns if c != "turn")]]
    if "aspect" in out.columns:
        out = out.sort_values(["aspect", "turn"], kind="stable").reset_index(drop=True)
    return Table("ratings_turn_paired_tests", "Paired tests per turn position (each turn's ratings alone; Wilcoxon "
                 "signed-rank over items, Holm within a turn position)", out)  # fmt: skip


def summary_columns() -> list[str]:
    return ["aspect", "system", "samples", "ratings", "mean", "mean CI low", "mean CI high", "median",
            "median CI low", "median CI high", "ratings with z", "mean z"]  # fmt: skip


def no_median_interval(table: pd.DataFrame, options: AnalysisOptions) -> list[str]:
    """The line (for the section and the report's headline) naming the medians left without an interval: where
    every bootstrap resample gave the same median (at a scale's ceiling, most samples), that interval would be a
    point, and a point is not printed as a 95% interval."""
    if options.bootstrap <= 0:
        return []
    empty = table[table["median"].notna() & table["median CI low"].isna()]
    if not len(empty):
        return []
    named = ", ".join(f"{a} {s}" for a, s in zip(empty["aspect"], empty["system"], strict=True))
    return [f"No median interval for {named}: every resample of the samples gave the same median, and a point is "
            "not a 95% interval (the mean's bounded interval stands beside it)."]  # fmt: skip


def z_scores(frame: pd.DataFrame) -> pd.Series:
    """Each rating standardised within its annotator and aspect (sample sd); nan where the sd is 0 or undefined."""
    standard = _standardisation(frame)
    if standard is None:
        grouped = frame.groupby(["annotator", "aspect"], observed=True)["rating"]
        sd = grouped.transform("std")
        return (frame["rating"] - grouped.transform("mean")) / sd.where(sd > 0)
    z = np.empty(len(frame))
    for start in range(0, len(z), cells.CHUNK):  # a row-sized transient is 40 MB at 100,000 tasks
        z[start : start + cells.CHUNK] = _z(frame.iloc[start : start + cells.CHUNK], *standard)
    return pd.Series(z, index=frame.index, name="rating")


def _standardisation(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray] | None:
    """Per (annotator, aspect), numbered annotator code x aspects + aspect code: the mean and the sd of its
    ratings (nan where the sd is 0 or undefined, and in the last entry, for a row missing either key);
    None when the columns are not categorical.

    groupby(["annotator", "aspect"]) on one small integer per row made from the codes: the same groups with
    their rows in the same order (the same means and sds), without pandas' int64 arrays per key; one
    aspect's rows at a time (slices of rows sorted by aspect, as judgments gives them), each group being
    within one."""
    annotator, aspect = frame["annotator"].array, frame["aspect"].array
    if not (isinstance(annotator, pd.Categorical) and isinstance(aspect, pd.Categorical)):
        return None
    groups = len(annotator.categories) * len(aspect.categories)
    mean, sd = np.full(groups + 1, np.nan), np.full(groups + 1, np.nan)
    for _, part in cells.groups(frame, ["aspect"]):  # rows missing an aspect have no z: left out here
        grouped = part["rating"].groupby(_standard_key(part, groups))
        means, sds = grouped.mean(), grouped.std()
        del grouped
        mean[means.index], sd[sds.index] = means.to_numpy(dtype=float), sds.to_numpy(dtype=float)
    mean[groups] = sd[groups] = np.nan
    sd[~(sd > 0)] = np.nan
    return mean, sd


def _standard_key(rows: pd.DataFrame, groups: int) -> np.ndarray:
    annotator, aspect = rows["annotator"].array, rows["aspect"].array
    key = annotator.codes.astype(np.int32) * len(aspect.categories) + aspect.codes
    key[(annotator.codes < 0) | (aspect.codes < 0)] = groups
    return key


def _z(rows: pd.DataFrame, mean: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """The z-scores of these rows, from :func:`_standardisation`."""
    key = _standard_key(rows, len(mean) - 1)
    z = mean[key]
    np.subtract(rows["rating"].to_numpy(), z, out=z)
    z /= sd[key]
    return z


MEDIANS = ("median", "median CI low", "median CI high")


def summary(frame: pd.DataFrame, options: AnalysisOptions, whole: bool = True,
            bounds: tuple[float, float] | None = None) -> Table:  # fmt: skip
    """``whole``: the scale's codes are whole numbers (not a slider), so are its medians when the two middle
    ratings agree, and the rendered reports show them without decimals. ``bounds``: the scale's range; with it the
    mean's interval is the betting interval of the per-sample means
    (:func:`annols.analysis.inference.intervals.betting`: it holds with few samples and at a ceiling, and never has zero
    width), else the percentile bootstrap."""
    standard = _standardisation(frame)
    if standard is None:
        frame = frame.assign(z=z_scores(frame))
    rows = []
    for i, ((aspect, system), part) in enumerate(cells.groups(frame, ["aspect", "system"])):
        # Each group's z-scores made for it alone: no column of them for every rating (40 MB at 100,000 tasks).
        z = part["z"] if standard is None else pd.Series(_z(part, *standard))
        sample, _ = pd.factorize(part["task_key"], sort=True)  # samples in key order
        values = part["rating"].to_numpy(dtype=float)
        # The items rule (cells.items_mean): each sample's mean over its ratings, then the mean over samples; the
        # interval is of that same estimate.
        means = cells.item_means(sample, values)
        sums = np.column_stack([means, np.ones(len(means))])
        if bounds is not None and options.bootstrap > 0:  # --bootstrap 0 leaves the intervals out
            mean_ci = intervals.betting(means, *bounds, seed=options.seed)
        else:
            mean_ci = bootstrap.ratio(sums, options.bootstrap, np.random.default_rng([options.seed, i, 0]))
        median_ci = bootstrap.median(sample, values, options.bootstrap, np.random.default_rng([options.seed, i, 1]))
        if median_ci[0] == median_ci[1]:  # every resample's median one rating: a point is not a 95% interval
            median_ci = (np.nan, np.nan)
        z_values = z.to_numpy(dtype=float)
        rows.append((aspect, system, len(sums), len(part), cells.items_mean(sample, values), *mean_ci,
                     part["rating"].median(), *median_ci, int(np.isfinite(z_values).sum()),
                     cells.items_mean(sample, z_values)))  # fmt: skip
    columns = summary_columns()
    title = ("Mean rating with its 95% bounded interval (betting, over the samples' means), median rating with "
             "its 95% bootstrap interval; mean z-score" if bounds is not None else
             "Mean and median rating with 95% bootstrap intervals; mean z-score")  # fmt: skip
    return Table("ratings_summary", title,
                 pd.DataFrame(rows, columns=columns), whole=MEDIANS if whole else ())  # fmt: skip


def distribution(frame: pd.DataFrame, spec: Any) -> Table:
    answers, order = answer_of(frame, spec)
    counts = cells.grouped(frame.assign(answer=answers), ["aspect", "system", "answer"], "answer", "size")
    counts = counts.unstack("answer").reindex(columns=order).fillna(0).astype(int).stack()
    table = counts.rename("ratings").reset_index()
    table["ratings %"] = percent(table["ratings"], table.groupby(["aspect", "system"], observed=True)["ratings"]
                                 .transform("sum"))  # fmt: skip
    # systems x answers rows per aspect: the report prints the first ones, the plot and the CSV have all
    return Table("ratings_distribution", "Ratings per system: share of each answer", table, shown=SHOWN_ROWS)


def sample_means(frame: pd.DataFrame) -> pd.Series:
    """Each system's mean rating per aspect and sample: ``frame.groupby(["aspect", "task_key", "system"],
    observed=True)["rating"].mean()`` (see :func:`annols.analysis.cells.grouped`)."""
    return cells.grouped(frame, ["aspect", "task_key", "system"], "rating", "mean")


EFFECT_STREAM = 5  # the paired differences' bootstrap: default_rng([seed, 5, pair index])


def tests_with_effects(frame: pd.DataFrame, options: AnalysisOptions,
                       bounds: tuple[float, float] | None = None) -> pd.DataFrame:  # fmt: skip
    """The detectable differences' test (:func:`annols.analysis.inference.detectable.paired_tests`) of per-sample mean
    ratings, with the mean difference's interval and rank-biserial r
    (:func:`annols.analysis.inference.detectable.with_effects`)."""
    means = sample_means(frame)
    return detectable.with_effects(detectable.paired_tests(means, "aspect"), means, "aspect", options.bootstrap,
                                   options.seed, EFFECT_STREAM, bounds)  # fmt: skip


def paired_tests(frame: pd.DataFrame, options: AnalysisOptions, bounds: tuple[float, float] | None = None) -> Table:
    """Wilcoxon signed-rank between each pair of systems over samples of per-sample mean ratings, Holm across the
    pairs of an aspect, with the mean difference's 95% interval over samples (bounded where ``bounds``, the scale's
    range, is given; else the bootstrap) and rank-biserial r."""
    table = tests_with_effects(frame, options, bounds).drop(columns="sd of differences")
    return Table("ratings_paired_tests", "Paired tests between systems over samples (Wilcoxon signed-rank, Holm)",
                 table)  # fmt: skip


def agreement_section(frame: pd.DataFrame, spec: Any, aspects: list[str]) -> Finding:
    frame = agreement.once(frame)  # each judgment once, not once per system it is credited to
    slider = spec.scale == "slider"
    level = "interval" if slider else "ordinal"
    rows, found = [], []  # each aspect's why_not, not its counts (16 MB an aspect at 100,000 tasks)
    each, on_systems = [], []
    parts = {key: part for (key,), part in cells.groups(frame, ["aspect"])}  # slices of the sorted rows, no copies
    units = ["task_key", "system", *(["turn"] if "turn" in frame.columns else [])]  # per turn: a system's turn
    for aspect in aspects:
        part = parts.get(aspect, frame.iloc[:0])
        unit, values, row, counts = _agreement_row(part, units, spec)
        found.append(agreement.why_not(counts))
        rows.append([aspect, level, *row])
        del counts
        # the annotators as the categorical they are: a name per row made 190 MB of strings at 100,000 tasks
        answers = pd.DataFrame({"unit": unit, "annotator": part["annotator"].array, "value": values}, copy=False)
        each += [[aspect, *r] for r in agreement.each_against_the_rest(answers, level)]
        means = part.groupby(["annotator", "system"], observed=True)["rating"].mean().unstack("system")
        on_systems.append([aspect, *agreement.system_agreement(means)])
        del answers
    what = "one system's turn of one sample" if "turn" in units else "one system's output on one sample"
    text = [f"A unit is {what}. Krippendorff's alpha is {level} "
            f"({'slider values' if slider else 'the scale codes in order'}); "
            + ("Fleiss' kappa is not computed for a slider (no categories)." if slider else
               "interval alpha (the codes' values as numbers, the level SummEval reports) is beside it; Fleiss' "
               "kappa treats the codes as categories, over the units with the most common number of "
               "ratings.")]  # fmt: skip
    shared = agreement.shared_reason_of(found)
    if shared:
        return Finding("Agreement", [f"No agreement statistics: {shared}."])
    reasons = agreement.reasons_of(aspects, found)
    table = agreement.table_frame([r[:2 + len(agreement.COLUMNS)] for r in rows], ["aspect", "level"])
    if not slider:  # both levels for a scale of codes
        table.insert(table.columns.get_loc("Krippendorff alpha") + 1, "Krippendorff alpha (interval)",
                     [r[-1] for r in rows])  # fmt: skip
    tables = [Table("ratings_agreement", "Agreement per aspect", table),
              Table("ratings_agreement_annotators", "Each annotator against the others, per aspect",
                    pd.DataFrame(each, columns=["aspect", *agreement.EACH_COLUMNS]), agreement.EACH_NOTE),
              Table("ratings_system_agreement", "Do the annotators order the systems alike?",
                    pd.DataFrame(on_systems, columns=["aspect", *agreement.SYSTEM_COLUMNS]),
                    agreement.SYSTEM_NOTE)]  # fmt: skip
    if "turn" in units:
        tables.insert(1, turn_agreement(frame, spec, aspects))
        text.append("Per turn position: the same statistics over the units of one turn position (each "
                    "sample's turn of that number); overall, every turn's units together.")  # fmt: skip
    return Finding("Agreement", text + reasons, tables)


def turn_agreement(frame: pd.DataFrame, spec: Any, aspects: list[str]) -> Table:
    """Agreement per aspect and turn position, then overall: Krippendorff's alpha (ordinal for a scale of codes,
    with the interval alpha beside it; interval for a slider) and Fleiss' kappa, a unit being one system's turn
    of one sample."""
    slider = spec.scale == "slider"
    level = "interval" if slider else "ordinal"
    rows = []
    for aspect in aspects:
        mine = frame[frame["aspect"].to_numpy() == aspect]
        turns = [int(t) for t in sorted(mine["turn"].dropna().unique())]
        for turn in [*turns, None]:
            part = mine if turn is None else mine[mine["turn"].to_numpy() == turn]
            row = _agreement_row(part, ["task_key", "system", "turn"], spec)[2]
            rows.append([aspect, "all" if turn is None else str(turn), level, *row])
    table = agreement.table_frame([r[:3 + len(agreement.COLUMNS)] for r in rows], ["aspect", "turn", "level"])
    if not slider:
        table.insert(table.columns.get_loc("Krippendorff alpha") + 1, "Krippendorff alpha (interval)",
                     [r[-1] for r in rows])  # fmt: skip
    return Table("ratings_agreement_turns", "Agreement per aspect and turn position (unit: a system's turn of one "
                 "sample; all: every turn)", table)  # fmt: skip


def _agreement_row(part: pd.DataFrame, units: list[str], spec: Any) -> tuple[np.ndarray, np.ndarray, list[Any],
                                                                             np.ndarray]:
    """One row of an agreement table over ``part`` (the ratings of one aspect, a unit per distinct ``units``):
    the unit codes, the ratings, the row (agreement.COLUMNS; a scale of codes adds the interval alpha) and the
    units' counts that agreement.why_not reads. Krippendorff's alpha is interval for a slider (no Fleiss' kappa:
    no categories), ordinal for a scale of codes."""
    if spec.scale != "slider":  # the counts' statistics first, while the unit codes and ratings are not held yet
        codes = [str(a.code) for a in spec.answers]
        counts = agreement.unit_counts(part, units, "code", codes)
        row = agreement.fleiss_and_alpha(counts, "ordinal", [float(c) for c in codes])
    unit = _unit_codes(part, units)
    values = part["rating"].to_numpy(dtype=float)
    interval = agreement.interval_alpha(unit, values)
    if spec.scale == "slider":
        counts = _same_or_not(unit, values)
        return unit, values, [int((counts.sum(axis=1) >= 2).sum()), interval, 0, pd.NA, np.nan], counts
    return unit, values, [*row, interval], counts


def _unit_codes(part: pd.DataFrame, units: list[str]) -> np.ndarray:
    """``pd.factorize(pd.MultiIndex.from_frame(part[units]))``'s codes (the units numbered in the order they
    first appear), from each column's codes combined into one integer: a MultiIndex of 1.2 million rows took
    about a second an aspect at 20,000 tasks."""
    key = np.zeros(len(part), dtype=np.int64)
    for name in units:
        codes, seen = pd.factorize(part[name], use_na_sentinel=False)
        key *= len(seen) + 1
        key += codes
        del codes
    return _first_seen_codes(key)


def _first_seen_codes(key: np.ndarray) -> np.ndarray:
    """``pd.factorize(key)[0]`` (each distinct integer numbered by its first row) from a stable sort, not a hash
    table: 67 MB -> about 40 MB for 1.2 million rows."""
    if not len(key):
        return np.zeros(0, dtype=np.intp)
    new = np.empty(len(key), dtype=bool)
    new[0] = True
    np.not_equal(key[1:], key[:-1], out=new[1:])
    if len(np.unique(key[new])) == int(new.sum()):  # each key one run of rows (rows sorted by unit): its run's number
        codes = np.cumsum(new, dtype=np.intp)
        codes -= 1
        return codes
    del new
    order = np.argsort(key, kind="stable")  # equal keys in row order: a group's first row first
    ordered = key[order]
    new = np.empty(len(key), dtype=bool)
    new[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    del ordered
    group = np.cumsum(new, dtype=np.int32 if len(key) < 2**31 else np.intp) - 1  # each sorted row's group
    rank = np.empty(int(group[-1]) + 1, dtype=np.intp)
    rank[np.argsort(order[new], kind="stable")] = np.arange(len(rank))  # groups by their first row
    del new
    codes = np.empty(len(key), dtype=np.intp)
    codes[order] = rank[group]
    return codes


def _same_or_not(unit: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Units x 2: ratings equal to one pairable rating, and the others. What agreement.why_not needs to
    tell one value from several, without a column per distinct slider value."""
    counts = np.zeros((int(unit.max()) + 1 if len(unit) else 0, 2), dtype=np.int64)
    pairable = np.bincount(unit, minlength=len(counts))[unit] >= 2 if len(unit) else np.zeros(0, dtype=bool)
    reference = values[pairable][0] if pairable.any() else np.nan
    np.add.at(counts, (unit, (values != reference).astype(np.int64)), 1)
    return counts


def _plot(table: Table) -> Figure:
    frame = table.frame
    answers = list(dict.fromkeys(frame["answer"]))
    panels = []
    for aspect, part in frame.groupby("aspect", observed=True, sort=False):
        wide = part.pivot(index="system", columns="answer", values="ratings %").reindex(columns=answers)
        panels.append(Panel(str(aspect), list(wide.index), [list(wide[a]) for a in answers]))
    return stacked_bars("ratings_distribution", "Ratings per system and aspect", panels, answers)
