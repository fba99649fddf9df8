"""The "Annotator models" section of every report (:mod:`annols.analysis.models`), on the style's
judgments table (:class:`annols.report.style.StyleCollector`).

Gold items (``annols report --gold``) are known labels: the annotators' judgments on them
join the fit (they tell the models how reliable each annotator is), the gold answers are
fixed in Dawid-Skene, each method's accuracy on them is shown, and they stay out of the
recomputed tables as they stay out of every table of the study.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols.analysis import models
from annols.analysis.results import Finding
from annols.report.sources import Study, _kept
from annols.report.style import KEPT, StyleCollector, judgment_rows
from annols.study.gold import GoldItem
from annols.study.roles import GOLD

GOLD_ANNOTATOR = "gold"


def model_sections(
    collector: StyleCollector, study: Study, gold: Mapping[str, GoldItem] | None = None
) -> list[Finding]:
    """The models' section; with ``gold``, its items' judgments are fitted with their answers known."""
    known: dict[str, str] = {}
    if gold:
        study = with_gold(study, set(gold))
        known = known_labels(collector, gold)
    judged = study.kept[["uid", "task_key", "annotator"]]
    return models.sections(collector.frame(study), collector.options, tokens=collector.tokens, judged=judged,
                           known=known)  # fmt: skip


def with_gold(study: Study, keys: set[str]) -> Study:
    """The study with each annotator's latest judgment on a known gold item counted too."""
    annotations = study.annotations.copy()
    on_gold = (annotations["role"] == GOLD) & annotations["task_key"].isin(keys)
    annotations["kept"] = annotations["kept"] | (on_gold & _kept(annotations))
    return Study(study.sources, annotations, study.items, study.overlaps, study.source_tasks, study.shared)


def known_labels(collector: StyleCollector, gold: Mapping[str, GoldItem]) -> dict[str, str]:
    """unit -> the gold answer's label, units as :func:`annols.analysis.models.answers` names them."""
    rows = []
    for uid, item in enumerate(gold.values(), start=1):
        rows += [[-uid, item.key, GOLD_ANNOTATOR, *row]
                 for row in judgment_rows(collector.definition, item.task, item.annotation)]  # fmt: skip
    if not rows:
        return {}
    frame = pd.DataFrame(rows, columns=["uid", "task_key", "annotator", *KEPT])
    judged = frame.drop_duplicates("uid")[["uid", "task_key", "annotator"]]
    answers = models.answers(frame, collector.tokens, judged)
    return dict(zip(answers["unit"].astype(str), answers["label"].astype(str), strict=True))
