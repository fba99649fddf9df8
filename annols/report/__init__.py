"""``annols report``: the tables a study of a shipped protocol reports, from its pulls.

Label Studio's open-source edition computes no agreement statistics; this turns one or
several pulls of one protocol into ``REPORTDIR/report.md``, a self-contained
``report.html`` (plots embedded), ``plots/*.png`` and ``tables/*.csv``.

The report arranges and renders; it computes no statistic. Every number comes from
:mod:`annols.analysis`, which returns plain data (findings of tables and figures,
:mod:`annols.analysis.results`); the report writes each table as CSV, in report.md,
report.html and paper.tex (:mod:`annols.report.model` writes the cells), and draws each
figure to a PNG (:mod:`annols.report.plots`) once the analyses are done.

The sources are streamed once (:mod:`annols.report.sources`); while they stream, a
collector keeps compact rows of each submitted annotation. Every report has the sources,
annotations and median lead time per annotator, items with fewer annotators than the
protocol               module
=====================  =========================================================
qa-feedback            :mod:`annols.report.qa_feedback`
summary-flaws          :mod:`annols.report.summary_flaws`
sentence-errors        :mod:`annols.report.sentence_errors`
=====================  =========================================================
=======
overlap asked for, and the protocol's rule violations. Then every definition is reported
by its style (:mod:`annols.report.style`): each annotation is decoded into judgments
(:func:`annols.styles.decode`) and the style's tables come from :mod:`annols.analysis`.
This covers definitions of one's own and every shipped protocol; qa-feedback,
summary-flaws and sentence-errors have tables of their own besides, read from the same
judgments (:func:`annols.analysis.protocol_sections`).
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols import __version__, files
from annols.analysis import methods, naming
from annols.analysis.judges import EPSILON
from annols.analysis.results import Finding
from annols.definition import Definition
from annols.errors import InputError
from annols.report import paper, plots, render
from annols.report.adjudicated import adjudicated_sections
from annols.report.common import ReportOptions, ViolationCollector, csv_only_tables, overview_sections
from annols.report.findings import findings_section
from annols.report.judges import JudgeCollector
from annols.report.model import Legend, header, rows
from annols.report.models import model_sections
from annols.report.quality import AdjudicationCollector, QualityCollector, excluded, without
from annols.report.sources import Source, Study, check_protocol, read_study, resolve
from annols.report.style import StyleCollector
from annols.study import exports, hidden_judges, hybrid
from annols.study.judges import Judges
from annols.study.manifest import NoManifest
from annols.study.pull import check_export_protocol
from annols.styles.answers import ExportedAnnotation, ExportedTask

__all__ = ["ReportOptions", "ReportResult", "build_report"]


@dataclass(frozen=True)
class ReportResult:
    out_dir: Path
    files: list[Path]
    items: int
    annotations: int  # judgments counted: one per item and annotator
    sections: list[Finding]


def build_report(definition: Definition, sources: list[Path], out_dir: Path,
                 options: ReportOptions | None = None, judges: Sequence[Path] = (),
                 epsilon: float = EPSILON, judge_pool: Sequence[Path] = ()) -> ReportResult:  # fmt: skip
    """Read the sources (pull folders or export.json files) as one study and write its report.

    ``judges``: judge files (:mod:`annols.study.judges`) to set beside the humans, with a pull
    folder's own ``judges/`` (hidden judges, :mod:`annols.study.hidden_judges`); they add the
    "Judges and humans" section and nothing else. ``judge_pool``: input files of items the
    judges answered beyond the humans' (as a pull folder's ``judges/pool.jsonl`` of a hybrid
    study): they add the judge-assisted estimates.
    """
    options = options or ReportOptions()
    resolved = [resolve(Path(s)) for s in sources]
    for source in resolved:
        check_protocol(source, definition.name, definition.variant)
        check_export_protocol(source.export, definition)  # a bare export: its task keys name the protocol
    blind = _blind_only(resolved)
    judge_files = [*(p for s in resolved for p in hidden_judges.pulled(s.export.parent)), *judges]
    pool = [*(t for s in resolved if (f := hidden_judges.pool(s.export.parent / hidden_judges.PULL_DIR))
              for t in hybrid.read_pool(f)), *(hybrid.input_pool(definition, judge_pool) if judge_pool else [])]
    judge_set = Judges.read(definition, judge_files, hybrid=bool(pool)) if judge_files else None
    protocol = StyleCollector(definition, options)
    violations = ViolationCollector(definition)
    quality = QualityCollector(definition, options.gold, options.rating_tolerance, options.min_gold_accuracy)
    beside = JudgeCollector(definition, judge_set, epsilon, options, pool) if judge_set else None
    adjudication = AdjudicationCollector(definition, options.adjudicated, options.rating_tolerance)

    def add(task: ExportedTask, annotation: ExportedAnnotation, uid: int) -> None:
        if task.share:  # push --share-identical: a judgment credited to another system too, checked once
            protocol.add(task, annotation, uid)
            return
        violations.add(task, annotation, uid)
        protocol.add(task, annotation, uid)
        quality.add(task, annotation, uid)
        if beside is not None:
            beside.add(task, annotation, uid)
        adjudication.add(task, annotation, uid)

    study = read_study(resolved, add, options.overlap)
    if blind:  # no system is known: the panes are no systems to compare, gold and attention no roles
        sections = [blind_section(resolved), *overview_sections(study), *violations.sections(study)]
        found = findings_section([s.export.parent for s in resolved])
        return _write(definition, study, sections + ([found] if found is not None else []), options, Path(out_dir))
    gold, accuracy = quality.section(study)
    left_out = excluded(options.exclude_annotators, accuracy)
    study = without(study, left_out)
    # Before the style's sections, which take the judgments table over.
    rounds = _sequential(definition, protocol, study, options.rounds) if options.rounds is not None else None
    sections = overview_sections(study) + protocol.sections(study)
    if rounds is not None:
        sections.append(rounds)
    if options.models:
        sections += model_sections(protocol, study, quality.gold)
    sections += violations.sections(study)
    found = findings_section([s.export.parent for s in resolved])
    if found is not None:  # only then: a pull without findings gives the report it always gave
        sections.append(found)
    if gold is not None:
        sections.insert(3, gold)
    if beside is not None:
        sections += beside.sections(study)
    adjudicated = adjudication.section(study)
    if adjudicated is not None:
        sections.append(adjudicated)
        sections += adjudicated_sections(protocol, adjudication, study)
    return _write(definition, study, sections, options, Path(out_dir), left_out)


def _blind_only(sources: Sequence[Source]) -> bool:
    """Whether the sources are blind-only pulls (``pull --blind-only``); a pull made without the study's manifest
    otherwise (by an annols that only warned) is refused, as is a blind-only pull beside unblinded ones."""
    blind = [exports.is_blind_only(s.export.parent) for s in sources]
    for source in sources:
        if exports.pulled_without_manifest(source.export.parent):
            raise NoManifest(f"{source.given} was pulled without the study's manifest (its findings.csv: "
                             "no-manifest); pull it again with the manifest")  # fmt: skip
    if any(blind) and not all(blind):
        raise InputError(next(s.given for s, b in zip(sources, blind, strict=True) if b), "", "",
                         "a blind-only pull (no systems) cannot be reported with unblinded ones; report it "
                         "alone")  # fmt: skip
    return any(blind)


def blind_section(sources: Sequence[Source]) -> Finding:
    """What a report of a blind-only pull is, and is not."""
    names = ", ".join(str(s.given) for s in sources)
    text = [f"{names} was pulled without the study's manifest (pull --blind-only): no task is unblinded, so this "
            "report compares no systems (the panes are positions, shuffled per task, not systems) and tells no "
            "gold item or attention check from a study item. It counts judgments and annotators only. Import the "
            "manifest (annols manifest import) and pull again for the study's report."]  # fmt: skip
    return Finding("Blind-only pull", text, summary=["Blind-only pull: no system comparison (no manifest)."])


METHODS_LEAD = "Methods."  # report.md's methods paragraph opens with it (paper.tex's "methods" block says the same)


def _sequential(definition: Definition, protocol: StyleCollector, study: Study, record: Path) -> Finding:
    from annols.analysis import sequential
    from annols.study import rounds

    found = rounds.read_rounds(record)
    if not found:
        raise InputError(record, "", "", "no round recorded (the PROJECT.rounds.jsonl annols next-round writes)")
    pushed = {k for r in found for k in r.get("pushed", [])}
    if len(study.items) and not pushed.intersection(study.items["task_key"].astype(str)):
        raise InputError(record, "", "pushed", "none of its rounds' items is in the sources: the record of "
                         "another project?")  # fmt: skip
    return sequential.section(definition, protocol.rounds_frame(study), found)


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


def read_judgments(definition: Definition, sources: Sequence[Path], rounds: bool = False) -> tuple[pd.DataFrame, str]:
    """The judgments table of pulls (a pilot's, for ``annols plan --pilot``) as the report reads it, and the
    pulls named for errors; ``rounds``: as a study in rounds reads it (:meth:`StyleCollector.rounds_frame`)."""
    resolved = [resolve(Path(s)) for s in sources]
    for source in resolved:
        check_protocol(source, definition.name, definition.variant)
    if _blind_only(resolved):
        raise InputError(resolved[0].given, "", "", "a blind-only pull names no systems: pull again with the study's "
                         "manifest")  # fmt: skip
    collector = StyleCollector(definition, ReportOptions())
    study = read_study(resolved, collector.add, None)
    frame = collector.rounds_frame(study) if rounds else collector.frame(study)
    return frame, ", ".join(str(s.given) for s in resolved)


def read_judged(definition: Definition, sources: Sequence[Path]) -> tuple[pd.DataFrame, list[str]]:
    """The judgments table of pulls with their hidden judges (``plan --pilot`` of a hybrid pilot), as the
    judge-assisted estimates read it, and the judges' annotator names ([] and the humans' rows when the pulls hold
    no judge)."""
    resolved = [resolve(Path(s)) for s in sources]
    for source in resolved:
        check_protocol(source, definition.name, definition.variant)
    judge_files = [p for s in resolved for p in hidden_judges.pulled(s.export.parent)]
    if not judge_files:
        return read_judgments(definition, sources)[0], []
    pool = [t for s in resolved if (f := hidden_judges.pool(s.export.parent / hidden_judges.PULL_DIR))
            for t in hybrid.read_pool(f)]  # fmt: skip
    beside = JudgeCollector(definition, Judges.read(definition, judge_files, hybrid=bool(pool)), EPSILON,
                            ReportOptions(), pool)  # fmt: skip
    study = read_study(resolved, beside.add, None)
    return beside.assisted_frame(study), beside.names  # r on the estimates' items and scores (MQM's error score)


AGREEMENT_WORDS = ("agreement", "alpha", "kappa", "kendall")


def agreement_tables(definition: Definition, pull_dir: Path) -> list[dict[str, Any]]:
    """The agreement tables of the report of the pull in ``pull_dir`` (title, columns, rows): ``status --pull``."""
    with tempfile.TemporaryDirectory(prefix="annols-status-report-") as tmp:
        result = build_report(definition, [pull_dir], Path(tmp))
    out = []
    for section in result.sections:
        for table in section.tables:
            if any(word in f"{section.title} {table.title}".lower() for word in AGREEMENT_WORDS):
                out.append({"title": table.title, "columns": header(table), "rows": rows(table)})
    return out
