"""Gold items of a definition that ships with no code: records in the generic format, each with
a ``result`` (Label Studio result items), read like study records."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from annols.errors import InputError
from annols.formats.generic import GenericFormat
from annols.protocols import parse_definition
from annols.study.gold import read_gold
from tests.definition.test_definition import MINIMAL
from tests.labelstudio.test_incremental import vote

DEFINITION = parse_definition(tomllib.loads(MINIMAL), "headlines.toml")


def write(path: Path, *records: dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_a_gold_record_is_its_study_task_with_the_known_answer(tmp_path: Path) -> None:
    record = {"headline_1": "A", "headline_2": "B", "systems": ["x", "y"], "result": vote("2"), "source": "pilot"}
    gold = write(tmp_path / "gold.jsonl", record)
    (task,) = read_gold(DEFINITION, [gold])
    study = {k: v for k, v in record.items() if k != "result"}
    (same,) = GenericFormat().read([write(tmp_path / "study.jsonl", study)], DEFINITION)
    # The same task as the study reader makes of the record without its answer: key, data, systems.
    assert (task.key, task.data, task.systems) == (same.key, same.data, same.systems)
    assert task.data["record"] == {"source": "pilot"}  # carried through; the answer is not
    assert [(a.annotator, a.result) for a in task.annotations] == [("gold", vote("2"))]


@pytest.mark.parametrize(
    ("record", "field"),
    [
        ({"headline_1": "A", "result": vote("1")}, "headline_2"),
        ({"headline_1": "A", "headline_2": "B"}, "result"),
        ({"headline_1": "A", "headline_2": "B", "result": "2"}, "result"),
        ({"headline_1": "A", "headline_2": "B", "systems": 3, "result": vote("1")}, "systems"),
    ],
)
def test_a_gold_record_without_what_it_needs_is_refused_by_line_and_field(
    tmp_path: Path, record: dict[str, Any], field: str
) -> None:
    gold = write(tmp_path / "gold.jsonl", {"headline_1": "A", "headline_2": "B", "result": vote("1")}, record)
    with pytest.raises(InputError) as caught:
        list(read_gold(DEFINITION, [gold]))
    assert str(caught.value).startswith(f"{gold}, line 2, field {field!r}: "), caught.value
