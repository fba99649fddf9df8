"""The "Judges and humans" findings: judges' answers set beside a study's humans, from the study table.

The judges come from ``report --judge FILE`` (and from ``judges.jsonl`` in a pull folder,
written by a pull of a project pushed with ``--judge``). While the reader streams the exports
(:mod:`annols.study.table`), the humans' annotations are decoded into their judgments table, and
the judge's answers on each task are decoded for the same task with the same code
(:class:`annols.analysis.table.JudgeRows`); the statistics are :mod:`annols.analysis.judging.judges`.
The study's own tables never see a judge.

A judge that answered items no human did (a hybrid study, ``push --human-share``, whose
judge-only items a pull keeps in ``judges/pool.jsonl``, or ``report --judge-pool INPUT``)
adds "Judge-assisted estimates": every system score and difference as a PPI++ estimate
beside the humans' own (:mod:`annols.analysis.judging.ppi`).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols.analysis.judging import judges as analysis
from annols.analysis.judging import ppi
from annols.analysis.options import ReportOptions
from annols.analysis.results import Finding
from annols.analysis.table import JudgeRows, StudyTable
from annols.formats.answers import is_judge
from annols.styles.judgments import TIDY_COLUMNS


def _rows(table: StudyTable) -> JudgeRows:
    if table.judges is None:
        raise ValueError("the study table holds no judge")
    return table.judges


def with_uid(table: StudyTable) -> pd.DataFrame:
    """The judgments rows of the humans and the judges (the pool's items too), each with its annotation's uid."""
    rows = _rows(table)
    humans = rows.humans.frame(table.study)
    mine = pd.DataFrame(rows.rows, columns=["task_key", "annotator", "uid", *TIDY_COLUMNS])
    frame = pd.concat([humans, mine[humans.columns]], ignore_index=True)
    if rows.none_question is not None:
        frame = frame[~((frame["kind"] == "choice") & (frame["question"] == rows.none_question))]
    return frame


def assisted_frame(table: StudyTable, frame: pd.DataFrame | None = None) -> pd.DataFrame:
    """The judgments rows as the judge-assisted estimates read them: each row's item (best-worst, spans), and for
    spans with weights (MQM) a row of kind :data:`annols.analysis.judging.ppi.ERROR_SCORE` per judged candidate, the sum
    of its spans' weights (0 without spans), as the report's "Error score" section counts it. ``frame``: what
    :func:`with_uid` gave, if taken already."""
    rows, study, definition = _rows(table), table.study, table.definition
    frame = with_uid(table) if frame is None else frame
    units = {**(rows.humans.units or {}), **rows.units}
    if units:
        frame = frame.assign(**{ppi.UNIT: frame["task_key"].astype(str).map(units)})
    if not getattr(definition.spec, "weights", ()):
        return frame.drop(columns=["uid"])
    kept = study.kept[["uid", "task_key", "annotator"]]
    humans = kept.assign(system=[rows.humans.judged_system.get(u, "") for u in kept["uid"]])
    mine = pd.DataFrame(rows.judged, columns=["task_key", "annotator", "uid"])
    mine["system"] = mine["task_key"].map(rows.task_systems).fillna("")
    judged = pd.concat([humans, mine], ignore_index=True).astype({"task_key": str, "annotator": str})
    judged[ppi.UNIT] = judged["task_key"].map(units) if units else judged["task_key"]
    error_rows = ppi.error_score_rows(frame, judged, definition.spec)
    frame = pd.DataFrame({c: frame[c].astype(object) for c in frame.columns if c != "uid"})
    return pd.concat([frame, error_rows], ignore_index=True)


def judge_sections(table: StudyTable, epsilon: float, options: ReportOptions) -> list[Finding]:
    """"Judges and humans" and, where a judge answered items no human did, the judge-assisted estimates."""
    rows, study, definition = _rows(table), table.study, table.definition
    full = with_uid(table)
    frame = full.drop(columns=["uid"])
    mine_judged = pd.DataFrame([(k, a) for k, a, _ in rows.judged], columns=["task_key", "annotator"])
    judged = pd.concat([study.kept[["task_key", "annotator"]], mine_judged], ignore_index=True)
    spec = definition.spec
    special = spec.special.name if definition.style == "sentences" else "special"
    names = rows.names
    return [*analysis.sections(
        frame,
        judged,
        names,
        epsilon,
        special,
        spans=definition.style == "spans",
        task_systems=rows.task_systems,
        options=options,
        tolerance=options.rating_tolerance,
        record_ids=rows.record_ids,
        ranges=ppi.ranges_of(definition),
    ), *assisted_section(assisted_frame(table, full), names, ppi.ranges_of(definition))]


def assisted_section(frame: pd.DataFrame, names: Sequence[str],
                     ranges: dict[str, tuple[float, float]] | None = None) -> list[Finding]:  # fmt: skip
    """Judge-assisted estimates, where a judge answered items no human did; [] where none did. ``ranges``: each
    question's range of values (:func:`annols.analysis.judging.ppi.ranges_of`), for the bounded intervals."""
    items = ppi.item_of(frame).astype(str)
    humans = set(items[~frame["annotator"].map(is_judge).astype(bool)])
    alone = set(items[frame["annotator"].isin(names)]) - humans
    if len(alone) < 2:
        return []
    title = "Judge-assisted estimates (PPI++)"
    if not ppi.available():
        missing = (f"{len(alone)} items have the judge's answers only: judge-assisted estimates need ppi-python, "
                   f"which is not installed ({ppi.INSTALL}).")  # fmt: skip
        return [Finding(title, [missing], summary=[missing])]  # in the headline too; the CLI warns on the terminal
    table = ppi.estimates(frame, names, is_judge, ranges=ranges)
    text = [f"{len(alone)} items have the judge's answers only, {len(humans)} the humans' (and the judge's). "
            "Each system score and each difference of two systems is estimated from the humans alone and with "
            "the judge (prediction-powered inference, PPI++: the judge's bias is measured on the humans' items "
            "and removed; lambda weighs the judge by its correlation with the humans, 0 when it does not help). "
            "95% intervals."]  # fmt: skip
    if not len(ppi.item_values(frame)):
        text.append(f"This definition has no system score to estimate: {ppi.COVERED}. Its spans, choices and "
                    "sentence rows are not a mean per system, so no judge-assisted estimate is made.")  # fmt: skip
    elif not len(table):
        text.append("No score has at least two items with the humans' answers and two with the judge's only.")
    said = ppi.interval_lines(table)
    text += said + ppi.gain_lines(table)
    headline = [line for line in said if line.startswith("No interval")]  # at the top of the report too
    return [Finding(title, text, [ppi.table(table)], summary=headline)]
