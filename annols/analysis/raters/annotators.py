"""What every study reports before any style: each annotator's annotations and lead time."""

from __future__ import annotations

import pandas as pd  # type: ignore[import-untyped, unused-ignore]


def annotator_table(annotations: pd.DataFrame, kept: pd.DataFrame) -> pd.DataFrame:
    """One row per annotator (sorted): submitted and skipped annotations, items with a counted judgment, and
    the median lead time of the submitted ones. ``annotations``: annotator, cancelled, lead_time per annotation;
    ``kept``: annotator, task_key per counted judgment."""
    submitted = annotations[~annotations["cancelled"]]
    table = pd.DataFrame({"annotator": sorted(annotations["annotator"].unique())})
    by = table["annotator"]
    table["annotations"] = by.map(submitted.groupby("annotator").size()).fillna(0).astype(int)
    table["skipped"] = by.map(annotations[annotations["cancelled"]].groupby("annotator").size()).fillna(0).astype(int)
    table["items"] = by.map(kept.groupby("annotator")["task_key"].nunique()).fillna(0).astype(int)
    table["median lead time (s)"] = by.map(submitted.groupby("annotator")["lead_time"].median())
    return table
