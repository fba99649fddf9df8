"""``annols report``: the tables a study of a shipped protocol reports, from its pulls.

Label Studio's open-source edition computes no agreement statistics; this turns one or
several pulls of one protocol into ``REPORTDIR/report.md``, a self-contained
``report.html`` (plots embedded), ``plots/*.png`` and ``tables/*.csv``.

The report arranges and renders; it computes no statistic. Every number comes from
:mod:`annols.analysis`, which returns plain data (findings of tables and figures,
:mod:`annols.analysis.results`); the report writes each table as CSV, in report.md,
report.html and paper.tex (:mod:`annols.report.model` writes the cells), and draws each
figure to a PNG (:mod:`annols.report.plots`) once the analyses are done.

The study comes read (:func:`annols.study.table.read`: the pulls into one study table,
:mod:`annols.analysis.table`); the report reads no pull. Every report has the sources,
annotations and median lead time per annotator, items with fewer annotators than the
overlap asked for, and the protocol's rule violations. Then every definition is reported
by its style (:func:`annols.analysis.by_style.style_findings.style_sections`: the judgments table's
findings from :mod:`annols.analysis`). This covers definitions of one's own and every
shipped protocol; qa-feedback, summary-flaws and sentence-errors have tables of their own
besides, read from the same judgments (:func:`annols.analysis.protocol_sections`).
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from annols import __version__, files
from annols.analysis import naming
from annols.analysis.by_style.style_findings import adjudicated_sections, model_sections, rounds_section, style_sections
from annols.analysis.inference import methods
from annols.analysis.judging.judge_findings import judge_sections
from annols.analysis.judging.judges import EPSILON
from annols.analysis.options import ReportOptions
from annols.analysis.raters.quality_findings import (
    adjudication_section,
    excluded,
    gold_section,
    violations_sections,
    without,
)
from annols.analysis.results import Finding
from annols.analysis.table import Source, Study, StudyTable
from annols.definition import Definition
from annols.report import paper, plots, render
from annols.report.common import csv_only_tables, overview_sections
from annols.report.findings import findings_section
from annols.report.model import Legend, header, rows

__all__ = ["ReportOptions", "ReportResult", "build_report"]


@dataclass(frozen=True)
class ReportResult:
    out_dir: Path
    files: list[Path]
    items: int
    annotations: int  # judgments counted: one per item and annotator
    sections: list[Finding]


def build_report(definition: Definition, table: StudyTable, out_dir: Path, options: ReportOptions | None = None,
                 epsilon: float = EPSILON) -> ReportResult:  # fmt: skip
    """Write the report of a study read into ``table`` (:func:`annols.study.table.read`, with the same options).

    The judges read beside the humans (``table.judges``) add the "Judges and humans" section and nothing else
    (``epsilon``: their tie margin); a judge that answered items beyond the humans' adds the judge-assisted
    estimates.
    """
    options = options or ReportOptions()
    study = table.study
    if table.blind:  # no system is known: the panes are no systems to compare, gold and attention no roles
        sections = [blind_section(study.sources), *overview_sections(study), *violations_sections(table)]
        found = findings_section(table.findings)
        return _write(definition, study, sections + ([found] if found is not None else []), options, Path(out_dir))
    gold, accuracy = gold_section(table, options)
    left_out = excluded(options.exclude_annotators, accuracy)
    table = replace(table, study=without(study, left_out))
    study = table.study
    # Before the style's sections, which take the judgments table over.
    rounds = rounds_section(table) if table.rounds is not None else None
    sections = overview_sections(study) + style_sections(table, options)
    if rounds is not None:
        sections.append(rounds)
    if options.models:
        sections += model_sections(table, options)
    sections += violations_sections(table)
    found = findings_section(table.findings)
    if found is not None:  # only then: a pull without findings gives the report it always gave
        sections.append(found)
    if gold is not None:
        sections.insert(3, gold)
    if table.judges is not None:
        sections += judge_sections(table, epsilon, options)
    adjudicated = adjudication_section(table, options)
    if adjudicated is not None:
        sections.append(adjudicated)
        sections += adjudicated_sections(table, options)
    return _write(definition, study, sections, options, Path(out_dir), left_out)


def blind_section(sources: Sequence[Source]) -> Finding:
    """What a report of a blind-only pull is, and is not."""
    names = ", ".join(str(s.given) for s in sources)
    text = [f"{names} was pulled without the study's manifest (pull --blind-only): no task is unblinded, so this "
            "report compares no systems (the panes are positions, shuffled per task, not systems) and tells no "
            "gold item or attention check from a study item. It counts judgments and annotators only. Import the "
            "manifest (annols manifest import) and pull again for the study's report."]  # fmt: skip
    return Finding("Blind-only pull", text, summary=["Blind-only pull: no system comparison (no manifest)."])


METHODS_LEAD = "Methods."  # report.md's methods paragraph opens with it (paper.tex's "methods" block says the same)


def _title(definition: Definition) -> str:
    return f"{definition.name}" + (f" ({definition.variant})" if definition.variant else "") + ": report"


def _intro(definition: Definition, study: Study, options: ReportOptions, left_out: list[str]) -> list[str]:
    names = ", ".join(str(s.given) for s in study.sources)
    # Only the pairwise tables have bootstrap intervals: elsewhere the line would name what is not used.
    uses_bootstrap = definition.format == "pairwise-aspects" and options.bootstrap > 0
    bootstrap = f"Bootstrap: {options.bootstrap} resamples, seed {options.seed}. " if uses_bootstrap else ""
    return [
        f"Protocol {definition.name}{f' ({definition.variant})' if definition.variant else ''}: {definition.summary}",
        f"Sources: {names}. {len(study.items)} items, {len(study.kept)} judgments counted. "
        f"{bootstrap}Made by annols {__version__}.",
    ] + ([f"Every table leaves out the judgments of {', '.join(left_out)} (--exclude-annotators); "
          "the gold items section shows them."] if left_out else [])  # fmt: skip


def _write(definition: Definition, study: Study, sections: list[Finding], options: ReportOptions,
           out_dir: Path, left_out: list[str] | None = None) -> ReportResult:  # fmt: skip
    written: list[Path] = []
    pngs: dict[str, bytes] = {}  # drawn here, after the analyses have let their tables go; embedded below
    for section in sections:
        written += [render.write_csv(table, out_dir) for table in section.tables]
        for figure in section.figures:
            pngs[figure.name] = plots.png(figure)
            written.append(render.write_plot_png(figure.name, pngs[figure.name], out_dir))
    written += [render.write_csv(table, out_dir) for table in csv_only_tables(study)]
    legend = Legend(*naming.legend(definition.spec))
    written += paper.write(definition, study, sections, out_dir, legend)
    title, intro = _title(definition), _intro(definition, study, options, left_out or [])
    used = methods.paragraph(t.name for section in sections for t in section.tables)
    intro += [f"{METHODS_LEAD} {used}"] if used else []
    intro += [line for section in sections for line in section.summary]
    md, page = out_dir / render.MARKDOWN, out_dir / render.HTML
    files.write_text(md, render.markdown(title, intro, sections, legend))
    files.write_text(page, render.html_document(title, intro, sections, pngs, legend))
    return ReportResult(out_dir, [md, page, *written], len(study.items), len(study.kept), sections)


AGREEMENT_WORDS = ("agreement", "alpha", "kappa", "kendall")


def agreement_tables(definition: Definition, table: StudyTable) -> list[dict[str, Any]]:
    """The agreement tables of the report of a pull read into ``table`` (title, columns, rows): ``status --pull``."""
    with tempfile.TemporaryDirectory(prefix="annols-status-report-") as tmp:
        result = build_report(definition, table, Path(tmp))
    out = []
    for section in result.sections:
        for found in section.tables:
            if any(word in f"{section.title} {found.title}".lower() for word in AGREEMENT_WORDS):
                out.append({"title": found.title, "columns": header(found), "rows": rows(found)})
    return out
