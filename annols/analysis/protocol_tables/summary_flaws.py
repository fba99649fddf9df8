"""summary-flaws: flaw labels, summaries without flaws, missing key information, span agreement.

Read from the judgments table: the ``span`` rows of the summary's labels, the "None
identified" answer and the Yes/No answer on missing key information (``choice`` rows),
as :func:`annols.formats.summary_flaws.judgment` reads them for the result files.

- Label counts: spans per label and the share of judged summaries with at least one.
- Summaries with none: judgments without any flaw span (and, apart, those that ticked
  "None identified").
- Missing-information rate: "Yes" among the judgments that answered the question.
- Span agreement over the flaw spans (:mod:`annols.analysis.raters.span_agreement`) when items
  have two or more annotators.
"""

from __future__ import annotations

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols.analysis import results
from annols.analysis.by_style.spans import EACH_NOTE, each_annotator
from annols.analysis.raters import span_agreement
from annols.analysis.results import Finding, Table, percent
from annols.definition import Definition
from annols.formats.summary_flaws import names_for

ANY = "any flaw"
# The style's sections these tables restate (the same statistics): left out of the report.
RESTATED = ("Span agreement",)


def sections(definition: Definition, tidy: pd.DataFrame, judged: pd.DataFrame | None,
             tokens: dict[str, tuple[np.ndarray, np.ndarray]] | None) -> list[Finding]:  # fmt: skip
    """``judged``: every counted annotation (uid, task_key, annotator); ``tokens``: each summary's
    whitespace tokens by item key, for token alpha."""
    if judged is None:
        raise ValueError("the summary-flaws sections need the counted annotations (judged)")
    names = names_for(definition)
    part = tidy[(tidy["kind"] == "span") & (tidy["question"] == names.flaws)]
    labels = pd.DataFrame({"uid": part["uid"].to_numpy(), "task_key": part["task_key"].astype(str).to_numpy(),
                           "label": part["value"].astype(str).to_numpy(), "start": part["start"].astype(int).to_numpy(),
                           "end": part["end"].astype(int).to_numpy()})  # fmt: skip
    choices = tidy[tidy["kind"] == "choice"]
    ticked = set(choices.loc[(choices["question"] == names.none_name) & (choices["value"] == names.none_answer), "uid"])
    answered = choices[(choices["question"] == names.question) & choices["value"].isin(names.answers)]
    first = answered.drop_duplicates("uid").set_index("uid")["value"].astype(str)  # the answer given
    uids = judged["uid"]
    judgments = pd.DataFrame({"spans": uids.map(labels.groupby("uid").size()).fillna(0).to_numpy(),
                              "none identified": uids.isin(ticked).to_numpy(),
                              "missing": uids.map(first).fillna("").to_numpy()})  # fmt: skip
    n = len(judgments)
    rows = [(label, int((labels["label"] == label).sum()), labels.loc[labels["label"] == label, "uid"].nunique())
            for label in names.labels]  # fmt: skip
    rows.append((ANY, len(labels), labels["uid"].nunique()))
    table = pd.DataFrame(rows, columns=["label", "spans", "summaries"])
    table["summaries %"] = percent(table["summaries"], n)
    given = judgments[judgments["missing"] != ""]
    yes = given["missing"] == (names.answers[0] if names.answers else "Yes")
    overview = pd.DataFrame({
        "measure": ["summaries judged", "with no flaw span", f"{names.none_answer!r} ticked",
                    "missing key information answered", "missing key information: Yes"],
        "count": [n, int((judgments["spans"] == 0).sum()), int(judgments["none identified"].sum()), len(given),
                  int(yes.sum())],
        "of": [n, n, n, n, len(given)],
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
    if (judged.groupby("task_key").size() >= 2).any():
        rows_ = span_agreement.SpanRows(labels=names.labels, tokens=dict(tokens or {}))
        # each judgment's spans by offsets then label, as the result files list them
        found = labels[(labels["start"] >= 0) & (labels["start"] < labels["end"])]
        found = found.sort_values(["uid", "start", "end", "label"], kind="stable")
        rows_.spans = list(found[["uid", "task_key", "label", "start", "end"]].itertuples(index=False, name=None))
        spans = pd.DataFrame(rows_.spans, columns=span_agreement.SPAN_COLUMNS)
        each = each_annotator(spans, judged, list(names.labels), "flaws_span_agreement_annotators")
        out.append(Finding("Span agreement", [span_agreement.AGREEMENT_NOTE, EACH_NOTE],
                           [span_agreement.agreement_table("flaws_span_agreement", rows_, judged), each]))  # fmt: skip
    return out
