"""The findings beside a study's own tables: rule violations, gold items and attention checks, the annotators
left out, agreement before and after adjudication; each a function of the study table
(:mod:`annols.analysis.table`) and the options.

Judgments on gold items (and attention checks) were decoded by the definition's style and scored against the
gold judgments read from ``--gold`` while the pulls were read (:mod:`annols.study.table`; the scores are
:mod:`annols.analysis.raters.quality`'s): one row per annotator in ``tables/gold_accuracy.csv``. They never count in the
study's tables. ``--min-gold-accuracy`` flags annotators below it; ``--exclude-annotators`` (names, or ``flagged``)
removes annotators from the study before any other table is computed (:func:`without`).

Adjudication (``annols report --adjudicated DIR``): one submitted judgment per item, by annotator
``adjudicated``. Agreement is the unit score of :func:`annols.analysis.raters.quality.score_item` (the rule adjudication
uses to find disagreements): before, the mean over an item's other annotators of the score between the two;
after, the score against the verdict; each averaged over the annotator's adjudicated items.

Disagreements (``annols adjudicate``, :func:`disagreements`): the study items two of whose annotators' counted
judgments disagree by the same unit scores, read from the judgments table
(:func:`annols.analysis.raters.quality.row_units`): choices, codes, ranks, special cases when they differ; ratings
further apart than ``tolerance``; spans when the F1 of their exact (label, start, end) matches is under ``span_f1``.
Text answers are not compared; gold items and attention checks are no study items.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols.analysis.options import ReportOptions
from annols.analysis.raters import quality as scoring
from annols.analysis.results import Finding, Table, percent
from annols.analysis.table import ATTENTION, ATTENTION_ASPECT, COPY, GOLD, Study, StudyTable
from annols.analysis.table import latest as latest_of
from annols.definition import Definition
from annols.styles import decode
from annols.styles.judgments import Judgment

FLAGGED = "flagged"


@dataclass(frozen=True)
class Rules:
    """When two judgments of an item disagree (``annols adjudicate``)."""

    tolerance: float = 0.0  # ratings this close agree
    span_f1: float = 1.0  # spans agree when the F1 of their exact matches reaches this


@dataclass
class Disagreements:
    items: int = 0  # study items with two or more annotators
    keys: list[str] = field(default_factory=list)  # the items' keys whose annotators disagree, in key order


_UNIT_COLUMNS = ["kind", "question", "system", "opponent", "value", "row", "start", "end"]


def disagreements(table: StudyTable, rules: Rules = Rules()) -> Disagreements:
    """The study items (of two or more annotators) on which two annotators' counted judgments disagree by
    ``rules``: :func:`annols.analysis.raters.quality.disagree` of each annotator's units of the judgments table
    (an annotation without rows, an empty one, has no units: it disagrees with any that has some)."""
    study = table.study
    kept = study.kept
    uids_of: dict[str, list[int]] = defaultdict(list)
    for key, uid in zip(kept["task_key"].astype(str), kept["uid"].astype(int), strict=True):
        uids_of[key].append(uid)
    judged = {key: uids for key, uids in uids_of.items() if len(uids) >= 2}
    frame = table.judgments.frame(study)
    if COPY in frame.columns:  # push --share-identical: a judgment credited to another system too is the same one
        frame = frame[~frame[COPY].astype(bool)]
    frame = frame[frame["kind"].isin(scoring.UNIT_KINDS) & frame["task_key"].astype(str).isin(list(judged))]
    rows: dict[int, list[tuple[object, ...]]] = defaultdict(list)
    columns = [frame[c].astype(object).tolist() for c in _UNIT_COLUMNS]
    for uid, *row in zip(frame["uid"].astype(int).tolist(), *columns, strict=True):
        rows[uid].append(tuple(row))
    controls = span_controls(table.definition)
    found = Disagreements(items=len(judged))
    for key in sorted(judged):
        units = [scoring.row_units(rows.get(uid, [])) for uid in judged[key]]
        if scoring.disagree(units, rules.tolerance, rules.span_f1, controls):
            found.keys.append(key)
    return found


def span_controls(definition: Definition) -> list[str]:
    """The spans controls whose spans score by F1 (none but for spans)."""
    if definition.style != "spans":
        return []
    from annols.styles.spans import span_controls as controls

    return list(controls(definition.spec))


def violations_sections(table: StudyTable) -> list[Finding]:
    """The protocol's own rules (``Format.check``), counted per rule over the judgments counted."""
    study = table.study
    frame = pd.DataFrame(table.violations, columns=["uid", "rule"])
    frame = frame[frame["uid"].isin(study.kept["uid"])]
    judged = len(study.kept)
    counts = (
        frame.groupby("rule").agg(violations=("uid", "size"), annotations=("uid", "nunique")).reset_index()
        if len(frame)
        else pd.DataFrame({"rule": [], "violations": [], "annotations": []})
    )
    counts["annotations %"] = percent(counts["annotations"], judged)
    counts = counts.sort_values(["violations", "rule"], ascending=[False, True], kind="stable")
    text = [f"Rules of the protocol that Label Studio does not check (annols validate), over the {judged} "
            "judgments counted. Every violation is listed in violations.csv of a pull."]  # fmt: skip
    if not len(frame):
        text.append("No rule violations.")
    return [Finding("Rule violations", text, [Table("violations", "Rule violations", counts)])]


def gold_scores(table: StudyTable) -> pd.DataFrame:
    """annotator, task_key, aspect, score: the latest submitted judgment of each annotator on each gold item."""
    latest = latest_of(table.study.annotations)
    annotator = latest.set_index("uid")["annotator"]
    rows = []
    for uid, key, scored in table.gold.given:
        if uid in annotator.index:
            rows += [(annotator[uid], key, aspect, score) for aspect, score in scored.items()]
    return pd.DataFrame(rows, columns=["annotator", "task_key", "aspect", "score"])


def gold_section(table: StudyTable, options: ReportOptions) -> tuple[Finding | None, pd.DataFrame]:
    """The gold section (None when the study has no gold items and none were given) and the accuracy table."""
    study, gold, roles = table.study, table.gold.gold, table.gold.roles
    tolerance, minimum = options.rating_tolerance, options.min_gold_accuracy
    accuracy = scoring.accuracy_table(gold_scores(table), minimum)
    if not gold and not roles:
        return None, accuracy
    ann = study.annotations
    gold_tasks = ann.loc[ann["role"] == GOLD, "task_key"].nunique()
    checks = ann.loc[ann["role"] == ATTENTION, "task_key"].nunique()
    text = [f"{gold_tasks} gold items and {checks} attention checks in the pulls (tasks pushed with --gold and "
            "--attention, judged like any other and left out of every other table). An attention check shows "
            f"two identical candidates: its '{ATTENTION_ASPECT}' score is the share of aspects on which the "
            "annotator judged them alike (a tie, the same rank, the same rating). "
            "Gold accuracy is the share of each gold judgment an annotator matched, "
            "averaged over their gold items: choices, ranks and codes exactly"
            f"{f', ratings within {tolerance:g}' if table.definition.style == 'ratings' else ''}"
            ", spans by F1 of exact (label, start, end) matches."]  # fmt: skip
    if not gold and gold_tasks:
        text.append("No gold judgments were given (annols report --gold GOLD, the file pushed with --gold): "
                    "accuracy cannot be computed.")  # fmt: skip
    missing = {k for k in ann.loc[ann["role"] == GOLD, "task_key"]} - set(gold)
    if gold and missing:
        text.append(f"{len(missing)} gold item(s) in the pulls are not in the gold input given: not scored.")
    if minimum is not None and len(accuracy):
        flagged = sorted(accuracy.loc[accuracy[FLAGGED], "annotator"])
        text.append(f"Annotators under a gold accuracy of {minimum:g}: "
                    f"{', '.join(flagged) if flagged else 'none'}.")  # fmt: skip
    return Finding("Gold items and attention checks", text,
                   [Table("gold_accuracy", "Accuracy on gold items and attention checks", accuracy)]), accuracy


def excluded(names: Sequence[str], accuracy: pd.DataFrame) -> list[str]:
    """The annotators ``--exclude-annotators`` names: the names given, ``flagged`` for those flagged."""
    out: set[str] = set()
    for name in names:
        if name == FLAGGED:
            if FLAGGED in accuracy.columns:
                out.update(accuracy.loc[accuracy[FLAGGED].astype(bool), "annotator"])
        elif name:
            out.add(name)
    return sorted(out)


def without(study: Study, annotators: Sequence[str]) -> Study:
    """The study as if ``annotators`` had never annotated: every table computed from it leaves them out."""
    if not annotators:
        return study
    annotations = study.annotations[~study.annotations["annotator"].isin(annotators)].copy()
    per_item = annotations[annotations["kept"]].groupby("task_key")["annotator"].nunique()
    items = study.items.copy()
    items["annotators"] = items["task_key"].map(per_item).fillna(0).astype(int)
    return Study(study.sources, annotations, items, study.overlaps, study.source_tasks, study.shared)


def adjudication_section(table: StudyTable, options: ReportOptions) -> Finding | None:
    """Each annotator's agreement on the adjudicated items: with the others before, with the verdict after."""
    verdicts, tolerance = table.adjudication.verdicts, options.rating_tolerance
    definition = table.definition
    if not verdicts:
        return None
    latest = latest_of(table.study.annotations).set_index("uid")["annotator"]
    by_item: dict[str, dict[str, list[Judgment]]] = {}
    for uid, key, judged in table.adjudication.given:
        if uid in latest.index:
            by_item.setdefault(key, {})[latest[uid]] = judged
    items = ((key, decode(definition, verdicts[key].task, verdicts[key].annotation), judged)
             for key, judged in sorted(by_item.items()))  # fmt: skip
    agreement = scoring.adjudication_agreement(items, tolerance, span_controls(definition))
    text = [f"{len(verdicts)} adjudicated items ({len(by_item)} of them judged in these pulls). "
            "Agreement is the share of each judgment's units that match (choices, ranks and codes exactly"
            f"{f', ratings within {tolerance:g}' if definition.style == 'ratings' else ''}"
            ", spans by F1): before, with each other annotator of the item; after, with the adjudicated "
            "judgment."]  # fmt: skip
    return Finding("Adjudication", text, [Table("adjudication_agreement", "Agreement before and after "
                                                "adjudication", agreement)])  # fmt: skip
