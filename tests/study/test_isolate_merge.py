"""The merge of an isolated pull, from pull folders written here (no server): one blinding serves the merged
tasks, so instances that show a task's systems in different orders are refused, not merged wrongly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annols import protocols
from annols.errors import AnnolsError
from annols.study import isolate
from annols.study import pull as pull_lib
from annols.study.exports import ANNOTATORS_FILE, BLINDING_FILE, EXPORT_FILE
from tests.definition.test_definition import MINIMAL, write
from tests.labelstudio.test_incremental import vote

KEY = "headline-check:0123456789abcdef0123"


def _instance_pull(folder: Path, email: str, systems: list[str], key: str = KEY) -> isolate.InstancePull:
    """A pull folder of one instance: one task, annotated by its annotator (user 1 there), shown as ``systems``."""
    folder.mkdir(parents=True)
    task = {"id": 1, "data": {"headline_1": "a", "headline_2": "b"}, "meta": {"annols_key": "sent"},
            "annotations": [{"id": 1, "completed_by": 1, "result": vote("1")}]}  # fmt: skip
    (folder / EXPORT_FILE).write_text(json.dumps([task]), encoding="utf-8")
    (folder / ANNOTATORS_FILE).write_text(json.dumps({"1": email}), encoding="utf-8")
    row = {"task_id": 1, "key": key, "sent": "sent", "systems": systems, "role": "study",
           "order": [0, 1] if systems == ["sysa", "sysb"] else [1, 0]}  # fmt: skip
    (folder / BLINDING_FILE).write_text(json.dumps(row) + "\n", encoding="utf-8")
    convert = pull_lib.ConvertReport(pull_lib.Counts(1, 1, 0), [], 0)
    report = pull_lib.PullReport(convert, folder / EXPORT_FILE, 1, 1, 0)
    return isolate.InstancePull(isolate.Instance(email), report)


def test_merge_refuses_instances_that_show_a_task_in_another_order(tmp_path: Path) -> None:
    definition = protocols.load(str(write(tmp_path, MINIMAL)))
    a = _instance_pull(tmp_path / "a", "a@example.org", ["sysa", "sysb"])
    same = _instance_pull(tmp_path / "same", "b@example.org", ["sysa", "sysb"])
    (tmp_path / "ok").mkdir()
    assert isolate._merge([a, same], tmp_path / "ok", definition, "t") == {1: "a@example.org", 2: "b@example.org"}
    # Answer "1" on the other instance meant sysb: merged under the first one's order, it would count for sysa.
    other = _instance_pull(tmp_path / "other", "b@example.org", ["sysb", "sysa"])
    (tmp_path / "bad").mkdir()
    with pytest.raises(AnnolsError, match=r"task 1 \(key .+\) shows its systems in another order on b@example\.org's"):
        isolate._merge([a, other], tmp_path / "bad", definition, "t")
