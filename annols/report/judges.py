"""The report's "Judges and humans" section: judges' answers set beside a study's humans.

The judges come from ``report --judge FILE`` (and from ``judges.jsonl`` in a pull folder,
written by a pull of a project pushed with ``--judge``). While the exports stream, the
humans' annotations are decoded as the style collector does, and each task a judge
answered is kept (its key, data and blinding) so that the judge's answers are decoded
for the same task with the same code; the statistics are :mod:`annols.analysis.judges`.
The study's own tables never see a judge.

A judge that answered items no human did (a hybrid study, ``push --human-share``, whose
judge-only items a pull keeps in ``judges/pool.jsonl``, or ``report --judge-pool INPUT``)
adds "Judge-assisted estimates": every system score and difference as a PPI++ estimate
beside the humans' own (:mod:`annols.analysis.ppi`).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols.analysis import asked, ppi, sequential
from annols.analysis import judges as analysis
from annols.analysis.results import Finding
from annols.definition import Definition
from annols.formats.answers import is_judge
from annols.report.common import ReportOptions
from annols.report.sources import Study
from annols.report.style import StyleCollector
from annols.study.judges import Judges, record_id
from annols.styles import decode
from annols.styles.answers import ExportedAnnotation, ExportedTask
from annols.styles.judgments import TIDY_COLUMNS, tidy


class JudgeCollector:
    def __init__(self, definition: Definition, judges: Judges, epsilon: float,
                 options: ReportOptions | None = None, pool: Sequence[ExportedTask] = ()) -> None:  # fmt: skip
        self.definition = definition
        self.pool = pool  # items only the judge answered (a hybrid study)
        self.judges = judges
        self.epsilon = epsilon
        self.options = options or ReportOptions()
        self.record_ids: dict[str, str] = {}  # task key -> the input record's id, for the disagreements
        self.humans = StyleCollector(definition, ReportOptions())
        self.judged: list[tuple[str, str, int]] = []  # task key, judge, its uid (negative: no human's)
        self.rows: list[list[object]] = []
        self.units: dict[str, str] = {}  # task key -> item, for the styles whose item holds several tasks
        self.done: set[str] = set()
        self.task_systems: dict[str, str] = {}  # the system of each one-output task
        spec = definition.spec
        self.none_question = f"{spec.labels_name}_none" if definition.style == "spans" else None

    def add(self, task: ExportedTask, annotation: ExportedAnnotation, uid: int) -> None:
        self.humans.add(task, annotation, uid)
        if task.key in self.done:
            return
        self._judged(task)

    def _judged(self, task: ExportedTask) -> None:
        """The judges' answers on a task, decoded as the humans' are."""
        self.done.add(task.key)
        self.record_ids[task.key] = record_id(task)
        if len(task.systems) == 1:
            self.task_systems[task.key] = task.systems[0]
        if self.definition.style in sequential.BY_ITEM:
            self.units[task.key] = asked.unit_of(self.definition.spec, task.data, task.key)
        for found in self.judges.annotations(task):
            uid = -1 - len(self.judged)
            self.judged.append((task.key, found.annotator, uid))
            for row in tidy(decode(self.definition, task, found)):
                if row[0] == "choice" and row[1] == self.none_question:
                    continue  # spans: "none found" is in the span F1 (no spans on both sides)
                self.rows.append([task.key, found.annotator, uid, *row])

    def _with_uid(self, study: Study) -> pd.DataFrame:
        """The judgments rows of the humans and the judges (the pool's items too), each with its annotation's uid."""
        for task in self.pool:
            if task.key not in self.done:
                self._judged(task)
        self.judges.check_used()
        humans = self.humans.frame(study)
        mine = pd.DataFrame(self.rows, columns=["task_key", "annotator", "uid", *TIDY_COLUMNS])
        frame = pd.concat([humans, mine[humans.columns]], ignore_index=True)
        if self.none_question is not None:
            frame = frame[~((frame["kind"] == "choice") & (frame["question"] == self.none_question))]
        return frame

    def frame(self, study: Study) -> pd.DataFrame:
        """The judgments rows of the humans and the judges (the pool's items too)."""
        return self._with_uid(study).drop(columns=["uid"])

    def assisted_frame(self, study: Study, frame: pd.DataFrame | None = None) -> pd.DataFrame:
        """:meth:`frame` as the judge-assisted estimates read it: each row's item (best-worst, spans), and for spans
        with weights (MQM) a row of kind :data:`annols.analysis.ppi.ERROR_SCORE` per judged candidate, the sum of
        its spans' weights (0 without spans), as the report's "Error score" section counts it. ``frame``: what
        :meth:`_with_uid` gave, if taken already."""
        frame = self._with_uid(study) if frame is None else frame
        units = {**(self.humans.units or {}), **self.units}
        if units:
            frame = frame.assign(**{ppi.UNIT: frame["task_key"].astype(str).map(units)})
        if not getattr(self.definition.spec, "weights", ()):
            return frame.drop(columns=["uid"])
        kept = study.kept[["uid", "task_key", "annotator"]]
        humans = kept.assign(system=[self.humans.judged_system.get(u, "") for u in kept["uid"]])
        mine = pd.DataFrame(self.judged, columns=["task_key", "annotator", "uid"])
        mine["system"] = mine["task_key"].map(self.task_systems).fillna("")
        judged = pd.concat([humans, mine], ignore_index=True).astype({"task_key": str, "annotator": str})
        judged[ppi.UNIT] = judged["task_key"].map(units) if units else judged["task_key"]
        rows = ppi.error_score_rows(frame, judged, self.definition.spec)
        frame = pd.DataFrame({c: frame[c].astype(object) for c in frame.columns if c != "uid"})
        return pd.concat([frame, rows], ignore_index=True)

    @property
    def names(self) -> list[str]:
        return [f"judge:{n}" for n in self.judges.names]

    def sections(self, study: Study) -> list[Finding]:
        full = self._with_uid(study)
        frame = full.drop(columns=["uid"])
        mine_judged = pd.DataFrame([(k, a) for k, a, _ in self.judged], columns=["task_key", "annotator"])
        judged = pd.concat([study.kept[["task_key", "annotator"]], mine_judged], ignore_index=True)
        spec = self.definition.spec
        special = spec.special.name if self.definition.style == "sentences" else "special"
        names = self.names
        return [*analysis.sections(
            frame,
            judged,
            names,
            self.epsilon,
            special,
            spans=self.definition.style == "spans",
            task_systems=self.task_systems,
            options=self.options,
            tolerance=self.options.rating_tolerance,
            record_ids=self.record_ids,
            ranges=ppi.ranges_of(self.definition),
        ), *assisted_section(self.assisted_frame(study, full), names, ppi.ranges_of(self.definition))]


def assisted_section(frame: pd.DataFrame, names: Sequence[str],
                     ranges: dict[str, tuple[float, float]] | None = None) -> list[Finding]:  # fmt: skip
    """Judge-assisted estimates, where a judge answered items no human did; [] where none did. ``ranges``: each
    question's range of values (:func:`annols.analysis.ppi.ranges_of`), for the bounded intervals."""
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
