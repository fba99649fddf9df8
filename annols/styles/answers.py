"""The answers a style decodes: tasks and annotations as pulled back from Label Studio's raw JSON export.

:mod:`annols.study.exports` reads them from an export (blinding undone, roles known);
each style turns an annotation into judgments (:mod:`annols.styles.judgments`), and each
format (:mod:`annols.formats`) into the protocol's own result files.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ExportedAnnotation:
    """One annotation as pulled back from Label Studio's raw JSON export."""

    id: int
    annotator: str  # the user's email
    result: list[dict[str, Any]]
    lead_time: float | None = None
    created_at: str = ""
    cancelled: bool = False  # skipped by the annotator
    source: str = "human"  # "judge" for a judge's answers set beside the humans (annols.study.judges)


@dataclass(frozen=True)
class ExportedTask:
    """One task as pulled back, with blinding undone."""

    id: int
    key: str
    data: dict[str, Any]
    systems: tuple[str, ...]  # system shown at each candidate position (empty if not blinded)
    annotations: tuple[ExportedAnnotation, ...]
    source_systems: tuple[str, ...] = ()  # the same systems in the input's order (empty if unknown)
    read_warnings: tuple[str, ...] = ()  # what push's reader tolerated in this task's input (manifest or task meta)
    role: str = "study"  # "study", "gold" or "attention" (annols.study.gold): from the task's meta tag
    # push --share-identical: 0 for the task itself, i > 0 for its copy credited to the i-th other system that
    # produced its text (the same annotations: count them once wherever judgments, not credits, are counted)
    share: int = 0
