"""read_study keeps the annotations column by column (for memory at scale): the table and the calls to
``add`` must be what one tuple per annotation gave, on an export with every case of who counts;
the judgments table's annotator join by codes must equal the join by strings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from annols.analysis.raters.quality_findings import without
from annols.analysis.table import ANNOTATION_COLUMNS, annotators_of
from annols.study.exports import load_annotators, read_export
from annols.study.table import read_study, resolve
from tests.own_study import ANNOTATORS
from tests.report import study
from tests.report.test_style_reports import EMAILS, export


def lead_times() -> list[Any]:
    return [5.0, 7, None, "12.5", "soon", True, 3.25]


def tasks() -> list[dict[str, Any]]:
    """The planted ratings export with a repeated annotation id (same annotator and time: once; another
    annotator or time: both count), a cancelled annotation, and lead times of every JSON type."""
    out, _ = export("ratings")
    times = lead_times()
    for i, task in enumerate(out):
        for j, a in enumerate(task["annotations"]):
            a["lead_time"] = times[(i + j) % len(times)]
    out[1]["annotations"].append(dict(out[1]["annotations"][0]))  # the same annotation again: counts once
    other = dict(out[2]["annotations"][0], completed_by=study.USER_IDS[EMAILS[ANNOTATORS[1]]])
    out[2]["annotations"].append(other)  # an id seen before, another annotator: a row of its own
    later = dict(out[2]["annotations"][0], created_at="2024-05-02T10:00:00.000000Z")
    out[3]["annotations"].extend([later, dict(later)])  # another time (a row), then that again (nothing)
    out[4]["annotations"][1]["was_cancelled"] = True
    return out


def by_tuples(paths: list[Path]) -> tuple[pd.DataFrame, list[int]]:
    """The annotations table and the uids given to ``add`` as one tuple per annotation made them."""
    rows: list[tuple[Any, ...]] = []
    seen: set[tuple[int, str, str]] = set()
    added = []
    for index, path in enumerate(paths):
        for task in read_export(path / "export.json", load_annotators(path / "export.json")):
            for a in task.annotations:
                ident = (a.id, a.annotator, a.created_at)
                if a.id and ident in seen:
                    continue
                seen.add(ident)
                rows.append((len(rows), index, task.key, task.id, a.annotator, a.id, a.created_at, a.lead_time,
                             a.cancelled, task.role))  # fmt: skip
                if not a.cancelled:
                    added.append(len(rows) - 1)
    frame = pd.DataFrame(rows, columns=ANNOTATION_COLUMNS).astype(
        {"uid": "int64", "source": "int64", "task_id": "int64", "annotation_id": "int64", "cancelled": "bool"}
    )
    frame["lead_time"] = pd.to_numeric(frame["lead_time"], errors="coerce").astype("float64")
    return frame, added


@pytest.fixture(scope="module")
def pulls(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    tmp = tmp_path_factory.mktemp("columns")
    first = study.write_pull(tmp / "one", tasks())
    second = study.write_pull(tmp / "two", json.loads((first / "export.json").read_text(encoding="utf-8")))
    return [first, second]  # the same pull twice: every annotation of the second is seen before


def test_the_columns_are_the_table_of_one_tuple_per_annotation(pulls: list[Path]) -> None:
    added: list[int] = []
    got = read_study([resolve(p) for p in pulls], lambda task, a, uid: added.append(uid), None)
    expected, expected_added = by_tuples(pulls)
    pd.testing.assert_frame_equal(got.annotations[ANNOTATION_COLUMNS], expected)
    assert added == expected_added
    # The cases are there: rows only for the first pull plus the two new idents, a nan and a parsed lead time.
    assert len(expected) == sum(len(t["annotations"]) for t in tasks()) - 2
    assert expected["lead_time"].isna().sum() > 0 and 12.5 in set(expected["lead_time"])
    assert len(expected_added) == len(expected) - 1


def test_the_annotator_join_by_codes_is_the_join_by_strings(pulls: list[Path]) -> None:
    whole = read_study([resolve(p) for p in pulls], lambda task, a, uid: None, None)
    for part in (whole, without(whole, [study.ANNOTATORS[0]])):
        uids = part.kept["uid"].to_numpy()[::-1]  # any order
        expected = pd.Categorical(pd.Series(uids).map(part.annotator_of()))
        got = annotators_of(part, uids)
        pd.testing.assert_extension_array_equal(got, expected)
        assert len(got.categories) == (3 if part is whole else 2)
    assert len(annotators_of(whole, np.zeros(0, dtype=np.int64))) == 0
