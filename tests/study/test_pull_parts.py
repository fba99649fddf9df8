"""``convert`` of a large export in parts side by side: the same files, byte for byte, as in one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from annols import protocols
from annols.study import pull
from annols.study.push import build_tasks
from tests.conftest import QA_DEV

DEV = QA_DEV
SUMMARY_FLAWS_INPUT = Path(protocols.__file__).parent / "examples" / "input" / "summary-flaws-critic.jsonl"


def load(protocol: str) -> Any:
    return protocols.load(protocol, "abstract" if protocol == "sentence-errors" else None)


def raw_export(protocol: str, inputs: list[Path], copies: int = 1, extra_data: Any = None) -> list[dict[str, Any]]:
    """A raw JSON export as Label Studio writes one, of the inputs' tasks with their judgments."""
    definition = load(protocol)
    tasks: list[dict[str, Any]] = []
    for copy in range(copies):
        for key, _systems, task, repeat in build_tasks(definition, inputs, with_annotations=True):
            if repeat:
                continue
            task_id = len(tasks) + 1
            data = dict(task["data"])
            if extra_data is not None:
                data["extra"] = extra_data
            annotations = [
                {"id": task_id * 10 + i, "completed_by": 1 + i, "result": a["result"], "was_cancelled": False,
                 "lead_time": 1.5, "created_at": "2026-11-21T10:00:00Z", "task": task_id}
                for i, a in enumerate(task.get("annotations", []))
            ]  # fmt: skip
            meta = {**task["meta"], "annols_key": f"{key}-{copy}"}
            tasks.append({"id": task_id, "annotations": annotations, "drafts": [], "predictions": [],
                          "data": data, "meta": meta, "created_at": "2026-11-21T09:00:00Z"})  # fmt: skip
    return tasks


def sentence_errors_input(path: Path) -> Path:
    """Abstract records, each judged by two annotators (a special case for some sentences)."""
    records = []
    for i in range(5):
        rows = [
            {"special": "OK"},
            {"mapping": "Omission", "meaning": "Ungrammatical", "explanation": f"č. {i}"},
            {"mapping": "Fabrication", "meaning": "Pragmatic meaning changed", "explanation": 'x, "y"\nz'},
        ]
        records.append(
            {
                "id": i,
                "variant": "abstract",
                "input_text": f"Článek {i}.",
                "gold": "Zlato.",
                "generated": "• Jedna. • Dvě. • Tři.",
                "annotations": [{"annotator": a, "rows": rows[k:] + rows[:k]} for k, a in enumerate("AB")],
            }
        )
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path  # fmt: skip


def write_export(path: Path, tasks: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps(tasks, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
    return path


def same_files(a: Path, b: Path) -> None:
    names = sorted(p.name for p in a.iterdir())
    assert names == sorted(p.name for p in b.iterdir())  # no part folder left behind either
    for name in names:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


@pytest.mark.parametrize(
    ("protocol", "inputs", "copies"),
    [
        ("qa-feedback", [DEV], 1),
        ("summary-flaws", [SUMMARY_FLAWS_INPUT], 40),
        ("sentence-errors", ["sentence-errors.jsonl"], 40),
    ],
)
@pytest.mark.parametrize("workers", [2, 3, 7])
def test_parts_give_the_files_of_one_pass(tmp_path: Path, protocol: str, inputs: list[Path], copies: int,
                                          workers: int) -> None:  # fmt: skip
    definition = load(protocol)
    if inputs == ["sentence-errors.jsonl"]:
        inputs = [sentence_errors_input(tmp_path / "sentence-errors.jsonl")]
    export = write_export(tmp_path / "export.json", raw_export(protocol, inputs, copies))
    assert len(pull._parts(export, workers)) == workers  # really split
    one = pull.convert(export, definition, tmp_path / "one", {1: "a@x", 2: "b@x"}, workers=1)
    parts = pull.convert(export, definition, tmp_path / "parts", {1: "a@x", 2: "b@x"}, workers=workers)
    assert parts.counts == one.counts and parts.violations == one.violations
    assert [p.name for p in parts.files] == [p.name for p in one.files]
    same_files(tmp_path / "one", tmp_path / "parts")


def test_qa_feedback_in_parts_is_still_the_dataset(tmp_path: Path) -> None:
    definition = protocols.load("qa-feedback")
    export = write_export(tmp_path / "export.json", raw_export("qa-feedback", [DEV]))
    pull.convert(export, definition, tmp_path / "out", workers=4)
    assert (tmp_path / "out" / "qa-feedback.json").read_bytes() == DEV.read_bytes().removeprefix(b"\xef\xbb\xbf")


def test_a_split_inside_a_task_falls_back_to_one_pass(tmp_path: Path) -> None:
    """Task data holding what looks like the start of a task: the part does not parse, one pass does it."""
    definition = protocols.load("summary-flaws")
    decoy = [{"id": 1, "annotations": [{"id": 2, "annotations": []}]}] * 200  # nested, not a task
    export = write_export(tmp_path / "export.json", raw_export("summary-flaws", [SUMMARY_FLAWS_INPUT], 2, decoy))
    one = pull.convert(export, definition, tmp_path / "one", workers=1)
    assert pull._convert_in_parts(export, definition, tmp_path / "x", {}, pull.format_for(definition),
                                  pull.format_for(definition).joins, 4) is None  # fmt: skip
    parts = pull.convert(export, definition, tmp_path / "parts", workers=4)
    assert parts.counts == one.counts
    same_files(tmp_path / "one", tmp_path / "parts")


def test_a_broken_export_is_reported_as_in_one_pass(tmp_path: Path) -> None:
    definition = protocols.load("summary-flaws")
    tasks = raw_export("summary-flaws", [SUMMARY_FLAWS_INPUT], 20)
    text = json.dumps(tasks, ensure_ascii=False, separators=(",", ":"))
    broken = tmp_path / "export.json"
    broken.write_text(text[: len(text) * 3 // 4], encoding="utf-8")  # cut off
    with pytest.raises(pull.InputError) as e:
        pull.convert(broken, definition, tmp_path / "out", workers=3)
    assert "export.json" in str(e.value) and "not a Label Studio JSON export" in str(e.value)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_a_missing_export_is_a_one_line_input_error(tmp_path: Path) -> None:
    with pytest.raises(pull.InputError) as e:
        pull.convert(tmp_path / "export.json", load("summary-flaws"), tmp_path / "out")
    assert str(e.value) == f"{tmp_path / 'export.json'}: file not found"
