"""sentence-errors: the distribution of special cases, mapping and meaning per variant, and agreement per column.

Read from the judgments table (``row`` and ``cell`` rows), as the answer table of the
result files shows them (:func:`annols.formats.sentence_errors.result_rows`): one row per
sentence row of a judgment, as the annotator saw it (a special case hides Mapping and
Meaning).

- Distribution per variant and column: every row falls in exactly one answer of each
  column, with "(no special case)", "(special case)" (Mapping and Meaning are hidden)
  and "(unanswered)" as answers where the column has none, so each column sums to 100%.
  Two answers in one column (a rule violation) count as their joined text.
- Agreement per column, when sentence rows have two or more judgments: Krippendorff's
  alpha (nominal) and the observed agreement (share of agreeing annotator pairs). The
  special-case column counts "(no special case)" as a value; Mapping and Meaning count
  only rows without a special case. Fleiss' kappa over the rows with the most common
  number of judgments.
"""

from __future__ import annotations

import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols.analysis import results
from annols.analysis.by_style.sentences import EACH_TEXT, HIDDEN, NO_SPECIAL, UNANSWERED, each_annotator
from annols.analysis.raters import agreement as agreeing
from annols.analysis.results import Finding, Table, percent
from annols.definition import Definition
from annols.formats.sentence_errors import JOIN, _column, _groups

COLUMNS = ["uid", "task_key", "variant", "sentence", "special case", "mapping", "meaning", "meaning group"]
JUDGED = ("special case", "mapping", "meaning")
# The style's sections these tables restate (the same statistics): left out of the report.
RESTATED = ("Answers", "Agreement per column")


def sections(definition: Definition, tidy: pd.DataFrame, judged: pd.DataFrame | None = None,
             tokens: object = None) -> list[Finding]:  # fmt: skip
    """The sections; ``judged`` and ``tokens`` (of the spans protocols) are not read."""
    frame = rows_frame(definition, tidy)
    if not len(frame):
        return [Finding("Answers", ["No judgments to count."])]
    table = distribution(frame)
    text = [
        f"{len(frame)} sentence rows judged ({frame['uid'].nunique()} judgments). Percentages are of the "
        "rows of the variant; each column sums to 100%."
    ]
    panels = []
    for (variant, column), part in table.frame.groupby(["variant", "column"], sort=False):
        panels.append(results.Panel(f"{variant}: {column}", list(part["answer"]), [list(part["rows %"])]))
    plot = results.stacked_bars("sentence_errors_distribution", "Answers per column", panels, ["rows %"])
    out = [Finding("Answers", text, [table], [plot])]
    annotators = tidy.drop_duplicates("uid").set_index("uid")["annotator"]
    counts = frame.groupby(["task_key", "sentence"]).size()
    if (counts >= 2).any():
        out.append(Finding(
            "Agreement per column",
            ["Units are sentence rows of an item. The special-case column counts '(no special case)' as a "
             "value; Mapping and Meaning count only rows without a special case, and unanswered cells not "
             "at all. Observed agreement: the share of agreeing pairs of annotators.", EACH_TEXT],
            [agreement(frame), each_annotator(frame.assign(annotator=frame["uid"].map(annotators)), list(JUDGED),
                                              "special case", "sentence", "sentence_errors_agreement_annotators")],
        ))  # fmt: skip
    return out


def rows_frame(definition: Definition, tidy: pd.DataFrame) -> pd.DataFrame:
    """One line per judgment and sentence row (:data:`COLUMNS`), in the order of the judgments table."""
    groups = _groups(_column(definition.spec, "meaning"))  # meaning code -> its group's title
    rows = tidy[tidy["kind"] == "row"]
    cells = tidy[(tidy["kind"] == "cell") & tidy["question"].isin(["mapping", "meaning"])]
    given: dict[tuple[int, int, str], list[str]] = {}
    for uid, row, column, code in zip(cells["uid"], cells["row"], cells["question"], cells["value"], strict=True):
        given.setdefault((int(uid), int(row), str(column)), []).append(str(code))
    out = []
    for uid, key, row, special in zip(rows["uid"], rows["task_key"], rows["row"], rows["value"], strict=True):
        uid, row, special = int(uid), int(row), str(special)
        if special:
            mapping = meaning = group = HIDDEN
        else:
            meanings = given.get((uid, row, "meaning"), [])
            mapping = JOIN.join(given.get((uid, row, "mapping"), [])) or UNANSWERED
            meaning = JOIN.join(meanings) or UNANSWERED
            group = JOIN.join(groups.get(m, "") for m in meanings) or UNANSWERED
        out.append((uid, str(key), definition.variant or "", row, special or NO_SPECIAL, mapping, meaning, group))
    return pd.DataFrame(out, columns=COLUMNS)


def distribution(frame: pd.DataFrame) -> Table:
    parts = []
    for column in JUDGED:
        counts = frame.groupby(["variant", column]).size().rename("rows").reset_index()
        counts = counts.rename(columns={column: "answer"})
        counts.insert(1, "column", column)
        if column == "meaning":
            groups = frame.drop_duplicates("meaning").set_index("meaning")["meaning group"]
            counts.insert(2, "group", counts["answer"].map(groups))
        parts.append(counts)
    table = pd.concat(parts, ignore_index=True)
    table["group"] = table["group"].where(table["group"] != table["answer"], "").fillna("")
    table = table[["variant", "column", "group", "answer", "rows"]]
    totals = frame.groupby("variant").size()
    table["rows %"] = percent(table["rows"], table["variant"].map(totals))
    order = {c: i for i, c in enumerate(JUDGED)}
    table = table.assign(_c=table["column"].map(order)).sort_values(["variant", "_c", "rows", "answer"],
                                                                   ascending=[True, True, False, True],
                                                                   kind="stable").drop(columns="_c")  # fmt: skip
    return Table("sentence_errors_distribution", "Answers per variant and column", table.reset_index(drop=True))


def agreement(frame: pd.DataFrame) -> Table:
    rows = []
    for column in JUDGED:
        part = frame if column == "special case" else frame[~frame[column].isin([HIDDEN, UNANSWERED])]
        counts = part.groupby(["task_key", "sentence", column]).size().unstack(column).fillna(0).to_numpy()
        rows.append((column, *agreeing.observed_and_chance(counts)))
    columns = ["column", "units", "observed agreement %", "Krippendorff alpha", "units (Fleiss)", "Fleiss kappa"]
    return Table("sentence_errors_agreement", "Agreement per column", pd.DataFrame(rows, columns=columns))
