"""A task is a record and its systems: identical outputs of different systems are separate tasks,
each credited to its own systems, in every style; only exact duplicates merge (issue #38, item 1).
Offline: the formats' reading and push's task building (what the manifest records per task)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from annols import protocols
from annols.definition import blinding
from annols.formats import content_key, format_for
from annols.study import push
from annols.study.manifest import Keys, Shown
from tests.own_study import STUDIES

ROOT = Path(__file__).resolve().parents[2]


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def _built(definition: Any, path: Path) -> tuple[list[tuple[str, bool]], dict[str, Shown]]:
    shown: dict[str, Shown] = {}
    built = [(key, repeat) for key, _, _, repeat in push.build_tasks(definition, [path], seed=3, keys=Keys.new(),
                                                                    shown=shown)]  # fmt: skip
    return built, shown


def _credited(shown: Shown) -> list[str]:
    """The systems a task is credited to, in the input's order of its candidates."""
    return list(blinding.source_order(shown.systems, shown.order) if shown.order else shown.systems)


@pytest.mark.parametrize("style", sorted(STUDIES))
def test_identical_outputs_of_different_systems_are_tasks_of_their_own_systems(style: str, tmp_path: Path) -> None:
    study = STUDIES[style]
    definition_path = tmp_path / f"{study.name}.toml"
    definition_path.write_text(study.definition, encoding="utf-8")
    definition = protocols.load(definition_path)
    first = study.record(0)
    systems = list(first["systems"])
    # The same texts by other systems: the candidates' systems reversed (one candidate: another system).
    other = [*reversed(systems)] if len(systems) > 1 else ["someone-else"]
    records = [
        first,
        {**first, "systems": other},  # identical outputs, other systems
        {**first, "item": "elsewhere"},  # the same texts and systems, another record id
        dict(first),  # an exact duplicate of the first: merged
        {**first, "systems": other},  # an exact duplicate of the second: merged into it
    ]
    built, shown = _built(definition, _write(tmp_path / "in.jsonl", records))
    keys = [key for key, _ in built]
    assert [repeat for _, repeat in built] == [False, False, False, True, True]
    assert len(set(keys[:3])) == 3 and keys[3] == keys[0] and keys[4] == keys[1]
    assert _credited(shown[keys[0]]) == systems and _credited(shown[keys[1]]) == other
    assert _credited(shown[keys[2]]) == systems
    # The first record keeps the key of its texts alone: a study pushed before finds it again.
    fields = {k: v for k, v in first.items() if k not in ("systems", "item")}
    assert keys[0] == content_key(definition.name, fields)

    found = push.scan(definition, [tmp_path / "in.jsonl"])
    assert found.keys == keys[:3] and found.duplicates == 2


def test_the_same_segment_in_another_document_is_its_own_task(tmp_path: Path) -> None:
    """A talk's "(Applause)" in two documents, by the same system: two records, two tasks."""
    definition = protocols.load(ROOT / "examples" / "esa.toml")
    applause = {"source": "(Applaus)", "hypothesis": "(Applause)", "systems": ["sys-a"]}
    records = [{**applause, "id": "talk-1-7", "document": "talk-1"},
               {**applause, "id": "talk-2-3", "document": "talk-2"}]  # fmt: skip
    built, shown = _built(definition, _write(tmp_path / "in.jsonl", records))
    assert [repeat for _, repeat in built] == [False, False] and len({k for k, _ in built}) == 2
    assert [_credited(shown[k]) for k, _ in built] == [["sys-a"], ["sys-a"]]


def test_pairwise_with_swapped_systems_and_identical_outputs(tmp_path: Path) -> None:
    """Both responses the same text: the task of (x, y) and of (y, x) are two, each with its order of systems."""
    definition = protocols.load(ROOT / "examples" / "chat-arena.toml")
    same = {"prompt": "Say hi.", "response_a": "Hi!", "response_b": "Hi!"}
    records = [{**same, "systems": ["model-x", "model-y"]}, {**same, "systems": ["model-y", "model-x"]},
               {**same, "systems": ["model-x", "model-z"]}]  # fmt: skip
    built, shown = _built(definition, _write(tmp_path / "in.jsonl", records))
    assert not any(repeat for _, repeat in built) and len({k for k, _ in built}) == 3
    assert [_credited(shown[k]) for k, _ in built] == [r["systems"] for r in records]


def test_predictions_name_the_record_they_pre_annotate(tmp_path: Path) -> None:
    """A prediction file in the input's order finds each record's own task, identical outputs included."""
    study = STUDIES["spans"]
    definition_path = tmp_path / "own-spans.toml"
    definition_path.write_text(study.definition, encoding="utf-8")
    definition = protocols.load(definition_path)
    first = study.record(0)
    records = [first, {**first, "systems": ["other"]}]
    inputs = _write(tmp_path / "in.jsonl", records)
    keys = [t.key for t in format_for(definition).read([inputs], definition)]
    result: list[dict[str, Any]] = []
    predictions = _write(tmp_path / "pred.jsonl", [{**r, "result": result, "model_version": f"m{n}"}
                                                   for n, r in enumerate(records)])  # fmt: skip
    by_key = dict(format_for(definition).read_predictions([predictions], definition))
    assert [by_key[k].model_version for k in keys] == ["m0", "m1"]


def test_best_worst_pools_keep_identical_candidates_of_different_ids_apart(tmp_path: Path) -> None:
    definition = protocols.load(ROOT / "examples" / "summary-best-worst.toml")
    document = "An article."
    texts = {"a": "Same summary.", "b": "Same summary.", "c": "Another summary.", "d": "A third one.", "e": "Fifth."}
    path = _write(tmp_path / "pool.jsonl", [{"document": document, "id": i, "summary": t} for i, t in texts.items()])
    tasks = list(format_for(definition).read([path], definition))
    appearances: dict[str, int] = {}
    for task in tasks:
        for position, system in enumerate(task.systems):
            assert task.data[definition.spec.field(position)] == texts[system]
            appearances[system] = appearances.get(system, 0) + 1
    assert set(appearances) == set(texts) and len(set(appearances.values())) == 1  # a and b each theirs
    assert len({t.key for t in tasks}) == len(tasks)


def test_groups_credit_identical_outputs_to_each_system(tmp_path: Path) -> None:
    definition = protocols.load(ROOT / "examples" / "da-groups.toml")
    records = [json.loads(line) for line in (ROOT / "examples" / "da-groups.jsonl").read_text("utf-8").splitlines()]
    first = records[0]["source_text"]
    mine = [r for r in records if r["source_text"] == first]
    twin = next(r for r in mine if r["system"] != "human")
    rest = [r for r in mine if r is not twin and r["system"] != "human"]
    rest[0] = {**rest[0], "translation": twin["translation"]}  # two systems, one translation
    path = _write(tmp_path / "groups.jsonl", [r for r in mine if r["system"] == "human"] + [twin, *rest])
    tasks = list(format_for(definition).read([path], definition))
    shown_by = {}
    for task in tasks:
        for position, system in enumerate(task.systems):
            shown_by.setdefault(system, set()).add(task.data[definition.spec.candidates[position].name])
    assert shown_by[twin["system"]] == shown_by[rest[0]["system"]] == {twin["translation"]}
    assert {r["system"] for r in mine} == set(shown_by)
