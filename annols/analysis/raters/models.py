"""Annotator models: Dawid-Skene and MACE on every categorical answer, beside majority vote.

Pure: a judgments table in (:func:`annols.styles.judgments.tidy` rows with ``uid``, ``task_key``
and ``annotator``), findings out (plain data). The models come from crowd-kit (Toloka's
``crowdkit.aggregation``: ``DawidSkene``, ``MACE``), an optional extra
(``pip install 'annols[models]'``): it brings transformers, scikit-learn, pyarrow and
nltk; without it the section says how to get it.

What is a categorical answer (:func:`answers`), one *unit* being what several annotators
label alike:

==============  ==========================================  ==================================
rows            unit                                         label
==============  ==========================================  ==================================
preference      item, aspect (the pair in name order)        win / tie / loss of the first
rank            item, dimension, system                      the rank (ordered)
rating          item, aspect, system                         the scale code (ordered; a slider
                                                             with more than :data:`MAX_LABELS`
                                                             values is left out)
cell / row      item, column, sentence row, system           the code / the special case
choice          item, question, system                       the code (single-choice answers)
best-worst      item, aspect, "best" or "worst"              the candidate chosen
span            item, labels control, token                  the token's label, "O" outside
==============  ==========================================  ==================================

Neither model knows an order: ranks and scale codes are fitted as categories (the order
is kept only for the means of the recomputed tables).

Per question (each row's ``question``; a best-worst aspect is two, its best and its
worst), each model's fit gives every unit a posterior label and its probability, and
every annotator a competence: Dawid-Skene's accuracy (its confusion matrix's diagonal
weighted by the class priors), MACE's probability of not spamming. No interval is printed
for the competence (the low and high columns are empty, :data:`NO_INTERVAL` says why): an interval
with the posteriors held fixed is one for the model's own expected accuracy, and on planted studies
it missed the annotators' true accuracy far more than 5 % of the time (refitting per resample would
cost a fit each). With ``known`` labels (gold units), Dawid-Skene is fitted
with them fixed, and each method's accuracy on them is reported.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols.analysis.raters import agreement
from annols.analysis.results import Finding, Table

NO_INTERVAL = ("No interval for the competence: with the model's posteriors held fixed it is an interval for the "
               "model's own expected accuracy, not the annotator's, and on planted studies at a ceiling it held the "
               "true accuracy in as few as 67 % of them (a bootstrap that refits the model would cost a fit per "
               "resample).")
MAX_LABELS = 20  # a question with more distinct labels is not categorical (a slider's values)
METHODS = ("majority", "Dawid-Skene", "MACE")
INSTALL = "pip install 'annols[models]'"
UNIT_SEP = " | "
DS_ITERATIONS = 100  # crowd-kit's default; it stops earlier when the evidence bound rises by under 1e-5
MACE_RESTARTS = 1  # crowd-kit's default is 10; each costs as much as a fit (docs/benchmarks.md)


def available() -> bool:
    """Whether crowd-kit is installed."""
    return importlib.util.find_spec("crowdkit") is not None


def answers(tidy: pd.DataFrame, tokens: Mapping[str, tuple[np.ndarray, np.ndarray]] | None = None,
            judged: pd.DataFrame | None = None) -> pd.DataFrame:  # fmt: skip
    """The categorical answers: (question, unit, system, annotator, label, value), ``value`` the
    label as a number where the labels are ordered (ranks, scale codes), else NaN.

    ``tokens`` (spans: each item's whitespace token starts and ends) and ``judged`` (every
    counted annotation: uid, task_key, annotator) give spans per-token labels, "O" where no
    span of the annotator covers a token.

    With ``push --share-identical`` (the table's ``copy`` column: rows that credit a judgment to another system
    that produced the same text), a column ``of`` names each row's unit of the judgment itself: a copy's unit is
    its own system's, ``of`` the unit of the judgment it copies (the same task, question and row; a shared task
    shows one candidate); a row that is no copy has ``of`` equal to its unit.
    """
    parts: list[pd.DataFrame] = []
    key = tidy["task_key"].astype(str)
    copied = tidy[agreement.COPY].to_numpy(dtype=bool) if agreement.COPY in tidy.columns else None

    def add(mask: Any, question: Any, unit: Any, system: Any, label: Any, ordered: bool, base: Any = None) -> None:
        if not bool(np.any(mask)):
            return
        frame = pd.DataFrame({
            "question": np.asarray(question, dtype=object)[mask] if not isinstance(question, str) else question,
            "unit": np.asarray(unit, dtype=object)[mask],
            "system": np.asarray(system, dtype=object)[mask],
            "annotator": tidy["annotator"].to_numpy()[mask],
            "label": np.asarray(label, dtype=object)[mask],
        })  # fmt: skip
        frame["label"] = frame["label"].astype(str)
        frame["value"] = pd.to_numeric(frame["label"], errors="coerce") if ordered else np.nan
        if copied is not None:
            frame["base"] = np.asarray(base if base is not None else unit, dtype=object)[mask]
            frame[agreement.COPY] = copied[mask]
        parts.append(frame)

    kind = tidy["kind"].to_numpy()
    q = tidy["question"].astype(str).to_numpy()
    system = tidy["system"].astype(str).to_numpy()
    opponent = tidy["opponent"].astype(str).to_numpy()
    value = tidy["value"].astype(str).to_numpy()
    row = tidy["row"].astype(str).to_numpy()
    k = key.to_numpy()

    pair = np.array([f"{s} vs {o}" for s, o in zip(system, opponent, strict=True)], dtype=object)
    add(kind == "preference", q, _join(k, q), pair, value, False)
    add(kind == "rank", q, _join(k, q, system), system, value, True, _join(k, q))
    add(kind == "rating", q, _join(k, q, system), system, value, True, _join(k, q))
    add(kind == "cell", q, _join(k, q, row, system), system, value, False, _join(k, q, row))
    add(kind == "row", q, _join(k, q, row, system), system, np.where(value == "", "none", value), False,
        _join(k, q, row))  # fmt: skip
    choice = kind == "choice"
    if choice.any():  # single-choice answers only: one code per annotation and question
        counts = tidy[choice].groupby(["uid", "question"])["value"].transform("size")
        single = np.zeros(len(tidy), dtype=bool)
        single[np.flatnonzero(choice)[counts.to_numpy() == 1]] = True
        add(single, q, _join(k, q, system), system, value, False, _join(k, q))
    code = tidy["code"].astype(str).to_numpy()
    for end in ("best", "worst"):
        mask = (kind == "best-worst") & (code == end)
        question = np.array([f"{x} ({end})" for x in q], dtype=object)
        add(mask, question, _join(k, question), np.full(len(tidy), "", dtype=object), system, False)
    if tokens is not None and judged is not None:
        spans = _token_labels(tidy, tokens, judged)  # the judged annotations only: no copy among them
        if not spans.empty:
            if copied is not None:
                spans = spans.assign(base=spans["unit"], **{agreement.COPY: False})
            parts.append(spans)
    columns = ["question", "unit", "system", "annotator", "label", "value"]
    if not parts:
        return pd.DataFrame(columns=columns + (["of"] if copied is not None else []))
    out = pd.concat(parts, ignore_index=True)
    if copied is not None:
        copies = out[agreement.COPY].to_numpy(dtype=bool)
        own = out[~copies].drop_duplicates(["question", "base"]).set_index(["question", "base"])["unit"]
        at = pd.MultiIndex.from_arrays([out["question"], out["base"]])
        out["of"] = np.where(copies, own.reindex(at).to_numpy(), out["unit"].to_numpy())
        columns.append("of")
    out = out[columns]
    labels = out.groupby("question", sort=False)["label"].transform("nunique")
    return out[labels <= MAX_LABELS].reset_index(drop=True)


def _join(*columns: Any) -> np.ndarray:
    out = np.asarray(columns[0], dtype=object).astype(str)
    for c in columns[1:]:
        out = np.char.add(np.char.add(out.astype(str), UNIT_SEP), np.asarray(c).astype(str))
    return out.astype(object)


def _token_labels(tidy: pd.DataFrame, tokens: Mapping[str, tuple[np.ndarray, np.ndarray]],
                  judged: pd.DataFrame) -> pd.DataFrame:  # fmt: skip
    """Per token of each judged item, the label of the annotator's span covering it ("O" if none)."""
    spans = tidy[tidy["kind"] == "span"]
    controls = sorted(spans["question"].astype(str).unique())
    rows: list[tuple[str, str, str, str, str]] = []
    by_uid = {uid: part for uid, part in spans.groupby("uid")}
    for uid, item, annotator in judged[["uid", "task_key", "annotator"]].itertuples(index=False, name=None):
        starts, ends = tokens.get(str(item), (np.zeros(0), np.zeros(0)))
        mine = by_uid.get(uid)
        for control in controls:
            labels = np.full(len(starts), "O", dtype=object)
            if mine is not None:
                for s, e, label in mine[mine["question"] == control][["start", "end", "value"]].itertuples(
                        index=False, name=None):  # fmt: skip
                    labels[(starts < int(e)) & (ends > int(s))] = str(label)
            rows += [(control, f"{item}{UNIT_SEP}{control}{UNIT_SEP}{i}", "", annotator, str(lab))
                     for i, lab in enumerate(labels)]  # fmt: skip
    out = pd.DataFrame(rows, columns=["question", "unit", "system", "annotator", "label"])
    out["value"] = np.nan
    return out


def fittable(part: pd.DataFrame) -> bool:
    """Whether a question's answers can be fitted: two annotators and two labels at least."""
    return bool(part["annotator"].nunique() >= 2 and part["label"].nunique() >= 2)


@dataclass
class Fit:
    """One question's fits: per unit the label of each method and its probability, per annotator
    each model's competence and the expected accuracy's interval."""

    question: str
    units: pd.DataFrame  # unit, system, majority, Dawid-Skene, Dawid-Skene p, MACE, MACE p
    annotators: pd.DataFrame  # annotator, units, Dawid-Skene, DS low, DS high, MACE, MACE low, MACE high
    known: dict[str, float] = field(default_factory=dict)  # method -> accuracy on the known units


def majority(data: pd.DataFrame) -> pd.Series:
    """Each unit's most common label; a tie goes to the label first in sorted order."""
    counts = data.groupby(["unit", "label"], sort=True).size().rename("n").reset_index()
    counts = counts.sort_values(["unit", "n", "label"], ascending=[True, False, True], kind="stable")
    return counts.drop_duplicates("unit").set_index("unit")["label"]


def fit_question(data: pd.DataFrame, question: str, *, known: Mapping[str, str] | None = None,
                 reps: int = 1000, seed: int = 0) -> Fit:  # fmt: skip
    """Fit Dawid-Skene and MACE to one question's answers (unit, annotator, label, system)."""
    from crowdkit.aggregation import MACE, DawidSkene  # type: ignore[import-untyped, import-not-found, unused-ignore]

    frame = data[["unit", "annotator", "label"]].rename(columns={"unit": "task", "annotator": "worker"})
    frame = frame.sort_values(["task", "worker"], kind="stable").reset_index(drop=True)
    gold = pd.Series(dict(known or {}), dtype=object)
    gold = gold[gold.index.isin(frame["task"])]
    ds = DawidSkene(n_iter=DS_ITERATIONS)
    ds.fit(frame, true_labels=gold if len(gold) else None)
    mace = MACE(n_restarts=MACE_RESTARTS, n_iter=50, random_state=seed)
    mace.fit(frame)
    units = pd.DataFrame({"majority": majority(data)})
    fitted: tuple[tuple[str, Any], ...] = (("Dawid-Skene", ds), ("MACE", mace))
    for name, model in fitted:
        units[name] = model.labels_.reindex(units.index).astype(str)
        units[f"{name} p"] = model.probas_.reindex(units.index).max(axis=1).to_numpy()
    units["system"] = data.drop_duplicates("unit").set_index("unit")["system"].reindex(units.index)
    units = units.reset_index(names="unit")

    workers = list(pd.factorize(frame["worker"])[1])
    priors: Any = ds.priors_
    ds_skill = {}
    for worker in workers:
        errors = ds.errors_.loc[worker]  # type: ignore[union-attr, unused-ignore]
        ds_skill[worker] = float(sum(priors[c] * errors.loc[c, c] for c in priors.index
                                     if c in errors.index and c in errors.columns))  # fmt: skip
    mace_skill = dict(zip(workers, mace.spamming_[:, 1], strict=True))  # column 0: spamming, 1: knowing
    table = []
    for worker, part in frame.groupby("worker", sort=True):
        row: list[Any] = [worker, len(part)]
        for skill in (ds_skill, mace_skill):
            row += [skill[worker], np.nan, np.nan]  # no interval (NO_INTERVAL says why; #41): the columns stay, empty
        table.append(row)
    annotators = pd.DataFrame(table, columns=["annotator", "units", "Dawid-Skene", "Dawid-Skene low",
                                              "Dawid-Skene high", "MACE", "MACE low", "MACE high"])  # fmt: skip
    accuracy = {}
    if len(gold):
        indexed = units.set_index("unit")
        for method in METHODS:
            accuracy[method] = float((indexed.loc[gold.index, method] == gold.astype(str)).mean())
    return Fit(question, units, annotators, accuracy)


def with_credits(fit: Fit, credited: pd.DataFrame) -> Fit:
    """``fit`` with a unit for each other system a shared task's text is credited to (``push --share-identical``):
    the fit is of each judgment once; such a unit takes its judgment's unit's labels and probabilities."""
    mine = credited[credited["question"] == fit.question].drop_duplicates("unit")
    fitted = fit.units.set_index("unit")
    mine = mine[mine["of"].isin(fitted.index)]
    if mine.empty:
        return fit
    extra = fitted.loc[mine["of"]].reset_index(drop=True)
    extra["system"] = mine["system"].to_numpy()
    extra.insert(0, "unit", mine["unit"].to_numpy())
    units = pd.concat([fit.units, extra[fit.units.columns]], ignore_index=True)
    return replace(fit, units=units.sort_values("unit", kind="stable").reset_index(drop=True))


def recomputed(data: pd.DataFrame, fit: Fit) -> pd.DataFrame:
    """The question's table by each method's labels: per system the share of each label (and the
    mean label where labels are numbers), one column per method."""
    ordered = data["value"].notna().all()
    units = fit.units
    rows = []
    labels = sorted(units[list(METHODS)].stack().unique(), key=_label_order)
    for system, part in units.groupby("system", sort=True):
        for label in labels:
            rows.append([fit.question, system, label, *[100 * float((part[m] == label).mean()) for m in METHODS]])
        if ordered:
            rows.append([fit.question, system, "mean", *[float(pd.to_numeric(part[m]).mean()) for m in METHODS]])
    return pd.DataFrame(rows, columns=["question", "system", "label", "majority", "Dawid-Skene", "MACE"])


def _label_order(label: str) -> tuple[int, float, str]:
    try:
        return (0, float(label), label)
    except ValueError:
        return (1, 0.0, label)


def conclusions(table: pd.DataFrame) -> list[str]:
    """What changes from majority vote: per question, each system's most common label (and, with
    numbered labels, the systems' order by mean label)."""
    changes = []
    for question, part in table.groupby("question", sort=False):
        shares = part[part["label"] != "mean"]
        means = part[part["label"] == "mean"]
        for method in METHODS[1:]:
            for system, mine in shares.groupby("system", sort=True):
                top_mv = mine.sort_values(["majority", "label"], ascending=[False, True])["label"].iloc[0]
                top = mine.sort_values([method, "label"], ascending=[False, True])["label"].iloc[0]
                if top != top_mv:
                    where = f" for {system}" if system else ""
                    changes.append(f"{question}{where}: {method}'s most common label is {top}, "
                                   f"majority vote's {top_mv}")  # fmt: skip
            if len(means) > 1:
                order_mv = list(means.sort_values(["majority", "system"], ascending=[False, True])["system"])
                order = list(means.sort_values([method, "system"], ascending=[False, True])["system"])
                if order != order_mv:
                    changes.append(f"{question}: {method} orders the systems {', '.join(order)}; "
                                   f"majority vote {', '.join(order_mv)}")  # fmt: skip
    return changes


def sections(tidy: pd.DataFrame, options: Any, *, tokens: Mapping[str, tuple[np.ndarray, np.ndarray]] | None = None,
             judged: pd.DataFrame | None = None, known: Mapping[str, str] | None = None) -> list[Finding]:  # fmt: skip
    """The "Annotator models" section for a judgments table (any style).

    ``known`` maps units (the items table's ``unit``: ``"<task key> | <question> | ..."``,
    as :func:`answers` builds them) to their known label, e.g. gold items.
    """
    title = "Annotator models"
    if not available():
        return [Finding(title, [f"Dawid-Skene and MACE need crowd-kit, not installed here: {INSTALL}"])]
    data = answers(tidy, tokens, judged)
    credited = None  # push --share-identical: a judgment's copies for the other systems of its text
    if "of" in data.columns:
        copies = (data["unit"] != data["of"]).to_numpy()
        credited = data[copies & data["of"].notna().to_numpy()]
        data = data[~copies].drop(columns="of")
    fits = []
    for question, part in data.groupby("question", sort=False):
        if not fittable(part):
            continue
        fit = fit_question(part, str(question), known=known, reps=options.bootstrap, seed=options.seed)
        fits.append((part, fit if credited is None else with_credits(fit, credited)))
    if not fits:
        return [Finding(title, ["No categorical answer with two annotators and two labels to fit a model to."])]
    competence = pd.concat([f.annotators.assign(question=f.question) for _, f in fits], ignore_index=True)
    competence = competence[["question", *[c for c in competence.columns if c != "question"]]]
    # Known (gold) units inform the fit and are scored below; the study's tables leave them out.
    study_fits = [(part[~part["unit"].isin(known or {})], replace(f, units=f.units[~f.units["unit"].isin(known or {})]))
                  for part, f in fits]  # fmt: skip
    items = pd.concat([f.units.assign(question=f.question) for _, f in study_fits], ignore_index=True)
    items = items[["question", "unit", "system", "majority", "Dawid-Skene", "Dawid-Skene p", "MACE", "MACE p"]]
    tables = pd.concat([recomputed(part, f) for part, f in study_fits], ignore_index=True)
    changes = conclusions(tables)
    verdict = ("No conclusion changes: by Dawid-Skene's and MACE's labels every system's most common label "
               "(and the order of systems by mean label) is the one majority vote gives." if not changes else
               "Conclusions that change from majority vote: " + "; ".join(changes) + ".")  # fmt: skip
    text = [
        "Dawid-Skene and MACE (crowd-kit) fitted to every categorical answer; ranks and scale codes as "
        "categories (neither model knows an order). Competence: Dawid-Skene's accuracy (its confusion "
        "matrix's diagonal weighted by the class priors), MACE's probability of not spamming.", NO_INTERVAL,
        verdict,
    ]
    out = [Table("models_competence", "Annotator competence", competence),
           Table("models_items", "Each unit's label by majority vote and by each model's posterior", items, shown=20),
           Table("models_tables", "The main tables by majority vote and by each model's labels (% of units; mean)",
                 tables)]  # fmt: skip
    known_rows = [[f.question, m, a] for _, f in fits for m, a in f.known.items()]
    if known_rows:
        out.append(Table("models_known", "Accuracy on the known labels",
                         pd.DataFrame(known_rows, columns=["question", "method", "accuracy"])))  # fmt: skip
    return [Finding(title, text, out)]
