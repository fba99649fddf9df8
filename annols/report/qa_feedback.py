"""qa-feedback: error types, missing information, evidence sizes, span agreement.

Each annotation is read back into the dataset's own ``feedback`` object with
:func:`annols.formats.qa_feedback.feedback_from_result` (so the report counts exactly
what the result files hold), with the dataset's error type names (``Redundant`` for
Repetitive, ``Wrong-Grounding`` for Inconsistent Fact, ...). A response is one
counted judgment of one task's prediction.

- Error types: spans per type and the share of responses with at least one.
- Missing information: entries per type, the sentences they cite, responses with one.
- Evidence sizes: sentences cited by each Wrong-Grounding error and each missing-info entry.
- Span agreement over the error spans in the prediction (see :mod:`annols.report.spans`),
  when items have two or more annotators.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols.analysis import results
from annols.analysis.results import Finding, Table, percent
from annols.definition import Definition
from annols.formats.qa_feedback import ERROR_LABELS, MISSING_LABELS, feedback_from_result
from annols.report import spans
from annols.report.common import ReportOptions, kept_rows
from annols.report.sources import Study
from annols.styles.answers import ExportedAnnotation, ExportedTask

ANY_ERROR = "any error"
ANY_MISSING = "any missing information"


def _evidence_size(explanation: str) -> int:
    """Sentences cited by a Wrong-Grounding explanation ({"passage_id":2,"sentence_id":[4]}); 0 if none."""
    try:
        value = json.loads(explanation) if explanation else {}
    except json.JSONDecodeError:
        return 0
    sentences = value.get("sentence_id") if isinstance(value, dict) else None
    return len(sentences) if isinstance(sentences, list) else 0


class QaFeedbackCollector:
    def __init__(self, definition: Definition, options: ReportOptions) -> None:
        self.errors: list[tuple[int, str, int]] = []  # uid, error type, evidence sentences
        self.missing: list[tuple[int, str, int]] = []  # uid, error type, sentences
        self.corrected: list[tuple[int, bool]] = []
        self.spans = spans.SpanRows(labels=tuple(ERROR_LABELS))

    def add(self, task: ExportedTask, annotation: ExportedAnnotation, uid: int) -> None:
        feedback = feedback_from_result(task.data, annotation.result)
        found = []
        for error in feedback["errors"]:
            kind = error["error type"]
            size = _evidence_size(error["explanation"]) if kind == "Wrong-Grounding" else 0
            self.errors.append((uid, kind, size))
            found.append((kind, int(error["start"]), int(error["end"])))
        for entry in feedback["missing-info"]:
            self.missing.append((uid, entry["error type"], len(entry["sentence_id"])))
        self.corrected.append((uid, bool(feedback["corrected-prediction"])))
        self.spans.add(uid, task.key, str(task.data.get("prediction", "")), found)

    def sections(self, study: Study) -> list[Finding]:
        responses = len(study.kept)
        errors = kept_rows(self.errors, ["uid", "type", "evidence"], study)
        missing = kept_rows(self.missing, ["uid", "type", "sentences"], study)
        corrected = kept_rows(self.corrected, ["uid", "corrected"], study)
        error_table = _by_type(errors, ERROR_LABELS, ANY_ERROR, responses, "spans", "qa_error_types",
                               "Error spans per type")  # fmt: skip
        missing_table = _by_type(missing, MISSING_LABELS, ANY_MISSING, responses, "entries", "qa_missing_info",
                                 "Missing information per type")  # fmt: skip
        missing_table.frame.insert(3, "sentences", [
            int(missing.loc[missing["type"] == t, "sentences"].sum()) if t != ANY_MISSING
            else int(missing["sentences"].sum()) for t in missing_table.frame["type"]])  # fmt: skip
        overview = pd.DataFrame({
            "measure": ["responses judged", "with at least one error span", "with missing information",
                        "with a corrected prediction"],
            "responses": [responses, errors["uid"].nunique(), missing["uid"].nunique(),
                          int(corrected["corrected"].sum())],
        })  # fmt: skip
        overview["responses %"] = percent(overview["responses"], responses)
        text = [
            f"{responses} responses judged (one per item and annotator). Types use the dataset's names "
            "(label: the name annotators saw). A response counts once per type however many spans it has."
        ]
        counts = error_table.frame[error_table.frame["type"] != ANY_ERROR]
        gaps = missing_table.frame[missing_table.frame["type"] != ANY_MISSING]
        plot = results.bars(
            "qa_feedback_counts",
            "Error spans and missing-information entries per type",
            [*counts["type"], *gaps["type"]],
            [*counts["spans"], *gaps["entries"]],
            "count",
        )
        out = [
            Finding("Feedback", text, [Table("qa_responses", "Responses", overview), error_table, missing_table],
                    [plot]),
            Finding("Evidence sizes", ["Sentences cited as evidence: by each Wrong-Grounding (Inconsistent Fact) "
                                       "error, and by each missing-information entry."],
                    [_evidence(errors, missing)]),
        ]  # fmt: skip
        if (study.kept.groupby("task_key").size() >= 2).any():
            out.append(
                Finding(
                    "Span agreement",
                    [spans.AGREEMENT_NOTE],
                    [spans.agreement_table("qa_span_agreement", self.spans, study.kept)],
                )
            )
        return out


def _by_type(frame: pd.DataFrame, labels: dict[str, str], any_row: str, responses: int, count: str, name: str,
             title: str) -> Table:  # fmt: skip
    rows = []
    for kind, label in labels.items():
        part = frame[frame["type"] == kind]
        rows.append((kind, label, len(part), part["uid"].nunique()))
    rows.append((any_row, "", len(frame), frame["uid"].nunique()))
    table = pd.DataFrame(rows, columns=["type", "label", count, "responses"])
    table["responses %"] = percent(table["responses"], responses)
    return Table(name, title, table)


def _evidence(errors: pd.DataFrame, missing: pd.DataFrame) -> Table:
    groups = [("Wrong-Grounding evidence", errors.loc[errors["type"] == "Wrong-Grounding", "evidence"])]
    groups += [(kind, missing.loc[missing["type"] == kind, "sentences"]) for kind in MISSING_LABELS]
    rows = []
    for kind, sizes in groups:
        values = sizes.to_numpy(dtype=float)
        has = len(values) > 0
        rows.append((kind, len(values), int((values == 0).sum()), float(values.mean()) if has else np.nan,
                     float(np.median(values)) if has else np.nan, int(values.max()) if has else 0))  # fmt: skip
    columns = ["cited by", "entries", "without evidence", "mean sentences", "median sentences", "max sentences"]
    return Table("qa_evidence_sizes", "Evidence sizes (sentences cited)", pd.DataFrame(rows, columns=columns),
                 whole=("median sentences",))  # fmt: skip


COLLECTOR = QaFeedbackCollector
