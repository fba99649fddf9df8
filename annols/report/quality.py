"""The report's gold section, and the annotators it leaves out of every other table.

Judgments on gold items (and attention checks) are decoded by the definition's style
(:func:`annols.styles.decode`) and scored against the gold judgments read from
``--gold`` (:mod:`annols.analysis.quality`): one row per annotator in
``tables/gold_accuracy.csv``. They never count in the study's tables
(:mod:`annols.report.sources` keeps study items only). ``--min-gold-accuracy`` flags
annotators below it; ``--exclude-annotators`` (names, or ``flagged``) removes annotators
from the study before any other table is computed.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols.analysis import quality as scoring
from annols.analysis.results import Finding, Table
from annols.definition import Definition
from annols.report.sources import Study
from annols.study import attention
from annols.study.gold import GoldItem, gold_items
from annols.study.roles import ATTENTION, GOLD, STUDY
from annols.styles import decode
from annols.styles.answers import ExportedAnnotation, ExportedTask
from annols.styles.judgments import Judgment

FLAGGED = "flagged"


class QualityCollector:
    """Keeps the judgments on gold items while the exports stream by."""

    def __init__(self, definition: Definition, gold: Sequence[Path] = (), tolerance: float = 0.0,
                 minimum: float | None = None) -> None:  # fmt: skip
        self.definition = definition
        self.gold: dict[str, GoldItem] = gold_items(definition, gold) if gold else {}
        self.known: dict[str, list[Judgment]] = {}
        self.tolerance = tolerance
        self.minimum = minimum
        self.given: list[tuple[int, str, dict[str, float]]] = []  # uid, item key, aspect -> score
        self.roles: set[str] = set()
        controls: list[str] = []
        if definition.style == "spans":
            from annols.styles.spans import span_controls

            controls = list(span_controls(definition.spec))
        self.controls = controls

    def add(self, task: ExportedTask, annotation: ExportedAnnotation, uid: int) -> None:
        if task.role == STUDY:
            return
        self.roles.add(task.role)
        if task.role == ATTENTION:  # the right answer follows from the task itself
            judged = decode(self.definition, task, annotation)
            self.given.append((uid, task.key, attention.score(self.definition, task, judged, self.tolerance)))
            return
        item = self.gold.get(task.key)
        if item is None:
            return
        if task.key not in self.known:
            self.known[task.key] = decode(self.definition, item.task, item.annotation)
        given = decode(self.definition, task, annotation)
        self.given.append((uid, task.key, scoring.score_item(self.known[task.key], given, self.tolerance,
                                                             self.controls)))  # fmt: skip

    def scores(self, study: Study) -> pd.DataFrame:
        """annotator, task_key, aspect, score: the latest submitted judgment of each annotator on each gold item."""
        latest = _latest(study.annotations)
        annotator = latest.set_index("uid")["annotator"]
        rows = []
        for uid, key, scored in self.given:
            if uid in annotator.index:
                rows += [(annotator[uid], key, aspect, score) for aspect, score in scored.items()]
        return pd.DataFrame(rows, columns=["annotator", "task_key", "aspect", "score"])

    def section(self, study: Study) -> tuple[Finding | None, pd.DataFrame]:
        """The gold section (None when the study has no gold items and none were given) and the accuracy table."""
        table = scoring.accuracy_table(self.scores(study), self.minimum)
        if not self.gold and not self.roles:
            return None, table
        ann = study.annotations
        gold_tasks = ann.loc[ann["role"] == GOLD, "task_key"].nunique()
        checks = ann.loc[ann["role"] == ATTENTION, "task_key"].nunique()
        text = [f"{gold_tasks} gold items and {checks} attention checks in the pulls (tasks pushed with --gold and "
                "--attention, judged like any other and left out of every other table). An attention check shows "
                f"two identical candidates: its '{attention.ASPECT}' score is the share of aspects on which the "
                "annotator judged them alike (a tie, the same rank, the same rating). "
                "Gold accuracy is the share of each gold judgment an annotator matched, "
                "averaged over their gold items: choices, ranks and codes exactly"
                f"{f', ratings within {self.tolerance:g}' if self.definition.style == 'ratings' else ''}"
                ", spans by F1 of exact (label, start, end) matches."]  # fmt: skip
        if not self.gold and gold_tasks:
            text.append("No gold judgments were given (annols report --gold GOLD, the file pushed with --gold): "
                        "accuracy cannot be computed.")  # fmt: skip
        missing = {k for k in ann.loc[ann["role"] == GOLD, "task_key"]} - set(self.gold)
        if self.gold and missing:
            text.append(f"{len(missing)} gold item(s) in the pulls are not in the gold input given: not scored.")
        if self.minimum is not None and len(table):
            flagged = sorted(table.loc[table[FLAGGED], "annotator"])
            text.append(f"Annotators under a gold accuracy of {self.minimum:g}: "
                        f"{', '.join(flagged) if flagged else 'none'}.")  # fmt: skip
        return Finding("Gold items and attention checks", text,
                       [Table("gold_accuracy", "Accuracy on gold items and attention checks", table)]), table


def _latest(annotations: pd.DataFrame) -> pd.DataFrame:
    submitted = annotations[~annotations["cancelled"]]
    return submitted.sort_values(["created_at", "annotation_id", "uid"], kind="stable").drop_duplicates(
        ["task_key", "annotator"], keep="last"
    )


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


class AdjudicationCollector:
    """Each annotator's agreement on the adjudicated items: with the others before, with the verdict after.

    The verdicts are the pull of the adjudication project (``annols report --adjudicated DIR``):
    one submitted judgment per item, by annotator ``adjudicated``. Agreement is the unit
    score of :func:`annols.analysis.quality.score_item` (the rule adjudication uses to find
    disagreements): before, the mean over an item's other annotators of the score between
    the two; after, the score against the verdict; each averaged over the annotator's
    adjudicated items.
    """

    def __init__(self, definition: Definition, adjudicated: Sequence[Path] = (), tolerance: float = 0.0) -> None:
        self.definition = definition
        self.verdicts: dict[str, GoldItem] = gold_items(definition, adjudicated) if adjudicated else {}
        self.tolerance = tolerance
        self.given: list[tuple[int, str, list[Judgment]]] = []
        self.controls = QualityCollector(definition).controls

    def add(self, task: ExportedTask, annotation: ExportedAnnotation, uid: int) -> None:
        if task.role == STUDY and task.key in self.verdicts:
            self.given.append((uid, task.key, decode(self.definition, task, annotation)))

    def section(self, study: Study) -> Finding | None:
        if not self.verdicts:
            return None
        latest = _latest(study.annotations).set_index("uid")["annotator"]
        by_item: dict[str, dict[str, list[Judgment]]] = {}
        for uid, key, judged in self.given:
            if uid in latest.index:
                by_item.setdefault(key, {})[latest[uid]] = judged
        items = ((key, decode(self.definition, self.verdicts[key].task, self.verdicts[key].annotation), judged)
                 for key, judged in sorted(by_item.items()))  # fmt: skip
        table = scoring.adjudication_agreement(items, self.tolerance, self.controls)
        text = [f"{len(self.verdicts)} adjudicated items ({len(by_item)} of them judged in these pulls). "
                "Agreement is the share of each judgment's units that match (choices, ranks and codes exactly"
                f"{f', ratings within {self.tolerance:g}' if self.definition.style == 'ratings' else ''}"
                ", spans by F1): before, with each other annotator of the item; after, with the adjudicated "
                "judgment."]  # fmt: skip
        return Finding("Adjudication", text, [Table("adjudication_agreement", "Agreement before and after "
                                                    "adjudication", table)])  # fmt: skip
