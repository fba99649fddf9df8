"""What every report has: the sources, the annotators, items short of their overlap."""

from __future__ import annotations

import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols.analysis import results
from annols.analysis.raters.annotators import annotator_table
from annols.analysis.results import SHOWN_ROWS, Finding, Table
from annols.analysis.table import Study
from annols.report.render import TABLES_DIR


def overview_sections(study: Study) -> list[Finding]:
    return [_sources_section(study), _annotators_section(study), _coverage_section(study)]


def _sources_section(study: Study) -> Finding:
    ann = study.annotations
    rows = []
    for i, source in enumerate(study.sources):
        mine = ann[ann["source"] == i]
        overlap, origin = study.overlaps[i]
        rows.append((str(source.given), source.title, source.project.get("id", ""), overlap, origin,
                     study.source_tasks[i], int((~mine["cancelled"]).sum()), int(mine["cancelled"].sum())))  # fmt: skip
    columns = ["source", "project", "project id", "overlap asked", "overlap from", "tasks", "annotations", "skipped"]
    kept = study.kept
    text = [
        f"{len(study.items)} items (tasks with the same key in several sources are one item), "
        f"{len(kept)} judgments counted: one per item and annotator (the latest, if an annotator submitted twice); "
        "skipped annotations do not count.",
    ]
    if study.shared:
        text.append(f"{sum(study.shared.values())} outputs share {len(study.shared)} tasks: identical texts of "
                    "several systems were shown once (push --share-identical) and each judgment of such a task is "
                    "credited to every system that produced the text, in every table by system; agreement between "
                    "annotators counts it once.")  # fmt: skip
    return Finding("Sources", text, [Table("sources", "Sources", pd.DataFrame(rows, columns=columns))])


def _annotators_section(study: Study) -> Finding:
    table = annotator_table(study.annotations, study.kept)
    text = ["Annotations are the submitted ones (skipped ones apart); lead time is Label Studio's time "
            "spent on the annotation, in seconds."]  # fmt: skip
    section = Finding("Annotators", text, [Table("annotators", "Annotations per annotator", table)])
    if len(table):
        section.figures.append(results.bars("annotators", "Annotations per annotator", list(table["annotator"]),
                                            list(table["annotations"]), "annotations"))  # fmt: skip
    return section


def _all_short(study: Study) -> bool:
    items = study.items
    return bool(len(items)) and bool((items["annotators"] < items["overlap"]).all())


def csv_only_tables(study: Study) -> list[Table]:
    """Tables written as CSV but not shown: the items short of their overlap when every item is."""
    if not _all_short(study):
        return []
    listing = study.items[["task_key", "task_id", "annotators", "overlap"]].rename(columns={"overlap": "overlap asked"})
    return [Table("under_annotated", "Items with fewer annotators than asked", listing.reset_index(drop=True))]


def _coverage_section(study: Study) -> Finding:
    items = study.items
    short = items[items["annotators"] < items["overlap"]]
    summary = items.groupby("overlap").agg(items=("task_key", "size")).reset_index()
    summary = summary.rename(columns={"overlap": "overlap asked"})
    summary["complete"] = summary["overlap asked"].map(
        items[items["annotators"] >= items["overlap"]].groupby("overlap").size()).fillna(0).astype(int)  # fmt: skip
    summary["fewer than asked"] = summary["overlap asked"].map(short.groupby("overlap").size()).fillna(0).astype(int)
    summary["none"] = summary["overlap asked"].map(
        items[items["annotators"] == 0].groupby("overlap").size()).fillna(0).astype(int)  # fmt: skip
    listing = short[["task_key", "task_id", "annotators", "overlap"]].rename(columns={"overlap": "overlap asked"})
    listed = Table("under_annotated", "Items with fewer annotators than asked", listing.reset_index(drop=True),
                   shown=SHOWN_ROWS)  # fmt: skip
    if _all_short(study):  # one line says it all; the CSV (csv_only_tables) still lists them
        asked = ", ".join(str(o) for o in sorted(items["overlap"].unique()))
        return Finding("Items short of their overlap", [
            f"All {len(items)} items have fewer annotators than the overlap asked for ({asked}); "
            f"{TABLES_DIR}/under_annotated.csv lists them."])  # fmt: skip
    text = [f"{len(short)} of {len(items)} items have fewer annotators than the overlap asked for."]
    if len(short) > SHOWN_ROWS:
        text.append(f"The list shows the first {SHOWN_ROWS}; tables/under_annotated.csv has all {len(short)}.")
    return Finding("Items short of their overlap", text, [
        Table("coverage", "Items by overlap asked", summary),
        listed,
    ])  # fmt: skip
