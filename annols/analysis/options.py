"""What the analyses read besides the judgments: the bootstrap's resamples and seed; a report's options."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class AnalysisOptions:
    seed: int = 0  # of the bootstrap
    bootstrap: int = 1000  # resamples; 0 turns intervals off


@dataclass(frozen=True)
class ReportOptions(AnalysisOptions):
    """The analyses' options (the bootstrap's), and what the study table is read with (:mod:`annols.study.table`)
    and the report sections read (defined here, below both, so that the reader and the report share them)."""

    overlap: int | None = None  # annotators asked per item, where project.json does not say
    gold: tuple[Path, ...] = ()  # the gold input pushed with --gold (annols.analysis.raters.quality_findings)
    rating_tolerance: float = 0.0  # a rating within this of the gold one matches
    min_gold_accuracy: float | None = None  # flag annotators below it
    exclude_annotators: tuple[str, ...] = ()  # left out of every table; "flagged": those flagged
    adjudicated: tuple[Path, ...] = ()  # pulls of the adjudication project (annols.study.adjudicate)
    models: bool = False  # the annotator models' section (annols.analysis.raters.models)
    rounds: Path | None = None  # the record of annols next-round: the sequential study's section
