"""The report of pulls as ``annols report`` makes it: the study read once (:func:`annols.study.table.read`), then
rendered (:func:`annols.report.build_report`), with the same options."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from annols import report
from annols.analysis.judging.judges import EPSILON
from annols.definition import Definition
from annols.report import ReportOptions, ReportResult
from annols.study.table import read


def build_report(definition: Definition, sources: Sequence[Path], out_dir: Path, options: ReportOptions | None = None,
                 judges: Sequence[Path] = (), epsilon: float = EPSILON,
                 judge_pool: Sequence[Path] = ()) -> ReportResult:  # fmt: skip
    options = options or ReportOptions()
    table = read(definition, list(sources), options, judges=judges, judge_pool=judge_pool)
    return report.build_report(definition, table, Path(out_dir), options, epsilon=epsilon)
