"""The "Annotator models" section of every report (:mod:`annols.analysis.models`).

A definition reported by its style shares the style's judgments table; a protocol with its
own collector (qa-feedback, summary-flaws, sentence-errors) gets a :class:`ModelsCollector`
beside it, which decodes each annotation by its style (:func:`annols.judgments.decode`) as
the style collector does.
"""

from __future__ import annotations

from annols.analysis import models
from annols.report.model import Section
from annols.report.sources import Study
from annols.report.style import StyleCollector


class ModelsCollector(StyleCollector):
    """The judgments table of any definition, for the models only."""

    def sections(self, study: Study) -> list[Section]:
        return model_sections(self, study)


def model_sections(collector: StyleCollector, study: Study) -> list[Section]:
    judged = study.kept[["uid", "task_key", "annotator"]]
    return models.sections(collector.frame(study), collector.options, tokens=collector.tokens, judged=judged)
