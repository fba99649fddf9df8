"""summary-flaws: flaw labels, summaries without flaws, missing key information, span agreement.

Each annotation is read with :func:`annols.formats.summary_flaws.judgment` (spans with
their labels, "None identified", the Yes/No answer on missing key information).

- Label counts: spans per label and the share of judged summaries with at least one.
- Summaries with none: judgments without any flaw span (and, apart, those that ticked
  "None identified").
- Missing-information rate: "Yes" among the judgments that answered the question.
- Span agreement over the flaw spans (see :mod:`annols.report.spans`) when items have
  two or more annotators.
"""

from __future__ import annotations

import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols.analysis import results
from annols.analysis.results import Finding, Table, percent
from annols.definition import Definition
from annols.formats.summary_flaws import judgment, names_for
from annols.report import spans
from annols.report.common import ReportOptions, kept_rows
from annols.report.sources import Study
from annols.styles.answers import ExportedAnnotation, ExportedTask

ANY = "any flaw"


class SummaryFlawsCollector:
    def __init__(self, definition: Definition, options: ReportOptions) -> None:
        self.names = names_for(definition)
        self.labels: list[tuple[int, str]] = []  # uid, label: one row per span
        self.judgments: list[tuple[int, int, bool, str]] = []  # uid, spans, none identified, missing answer
        self.spans = spans.SpanRows(labels=self.names.labels)

    def add(self, task: ExportedTask, annotation: ExportedAnnotation, uid: int) -> None:
        found = judgment(annotation.result, self.names)
        self.labels.extend((uid, s.label) for s in found.spans)
        self.judgments.append((uid, len(found.spans), found.none_identified, found.missing or ""))
        summary = str(task.data.get(self.names.summary, ""))
        self.spans.add(uid, task.key, summary, [(s.label, s.start, s.end) for s in found.spans])

    def sections(self, study: Study) -> list[Finding]:
        labels = kept_rows(self.labels, ["uid", "label"], study)
        judged = kept_rows(self.judgments, ["uid", "spans", "none identified", "missing"], study)
        n = len(judged)
        rows = [(label, int((labels["label"] == label).sum()), labels.loc[labels["label"] == label, "uid"].nunique())
                for label in self.names.labels]  # fmt: skip
        rows.append((ANY, len(labels), labels["uid"].nunique()))
        table = pd.DataFrame(rows, columns=["label", "spans", "summaries"])
        table["summaries %"] = percent(table["summaries"], n)
        answered = judged[judged["missing"] != ""]
        yes = answered["missing"] == (self.names.answers[0] if self.names.answers else "Yes")
        overview = pd.DataFrame({
            "measure": ["summaries judged", "with no flaw span", f"{self.names.none_answer!r} ticked",
                        "missing key information answered", "missing key information: Yes"],
            "count": [n, int((judged["spans"] == 0).sum()), int(judged["none identified"].sum()), len(answered),
                      int(yes.sum())],
            "of": [n, n, n, n, len(answered)],
        })  # fmt: skip
        overview["%"] = percent(overview["count"], overview["of"])
        text = [
            f"{n} summaries judged (one per item and annotator). The missing-information rate is the share of "
            "'Yes' among judgments that answered the question ('of' gives each percentage's base)."
        ]
        counts = table[table["label"] != ANY]
        plot = results.bars("summary_flaws_labels", "Flaw spans per label", list(counts["label"]),
                            list(counts["spans"]), "spans")  # fmt: skip
        out = [Finding("Flaws", text, [Table("flaws_overview", "Summaries", overview),
                                       Table("flaws_labels", "Flaw labels", table)], [plot])]  # fmt: skip
        if (study.kept.groupby("task_key").size() >= 2).any():
            out.append(
                Finding(
                    "Span agreement",
                    [spans.AGREEMENT_NOTE],
                    [spans.agreement_table("flaws_span_agreement", self.spans, study.kept)],
                )
            )
        return out


COLLECTOR = SummaryFlawsCollector
