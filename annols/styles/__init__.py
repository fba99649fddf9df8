"""The six guideline styles, one module each.

Each style module has ``parse(table) -> Spec`` (reads its part of a definition),
``build_config(definition) -> lxml element``, ``data_fields(spec) -> list`` (the task
fields its config shows), ``decode(spec, task, annotation) -> list[Judgment]`` (what an
annotation says, systems unblinded: :mod:`annols.styles.judgments`) and ``system_of(spec, task,
from_name, answer) -> str`` (the system one answer of results.csv is about). Styles know
nothing about any one protocol.
"""

from __future__ import annotations

from types import ModuleType

from annols.definition import Definition, keys
from annols.styles import best_worst, pairwise, ranking, ratings, sentences, spans
from annols.styles.answers import ExportedAnnotation, ExportedTask
from annols.styles.judgments import Judgment

STYLE_MODULES: dict[str, ModuleType] = {
    "spans": spans,
    "pairwise": pairwise,
    "sentences": sentences,
    "ranking": ranking,
    "ratings": ratings,
    "best-worst": best_worst,
}

# Every key a definition may hold: the shared sections, each style's top-level keys and its own tables.
CATALOGUE = keys.catalogue(
    section for style, module in STYLE_MODULES.items()
    for section in (keys.style_keys(style, module.KEYS), *module.SECTIONS)
)  # fmt: skip


def decode(definition: Definition, task: ExportedTask, annotation: ExportedAnnotation) -> list[Judgment]:
    """The judgments of one annotation, by the definition's style."""
    judgments: list[Judgment] = STYLE_MODULES[definition.style].decode(definition.spec, task, annotation)
    return judgments
