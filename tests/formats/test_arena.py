"""The arena layout as push --with-annotations reads it (through the generic format): one task per battle, the
people's votes as its annotations on the side they meant, the model judges apart as judge files, and the
messy-file rules (one line naming file, line and field; the harmless said)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from annols import protocols
from annols.errors import DefinitionError, InputError
from annols.formats import arena, format_for
from annols.study import arena as study_arena
from annols.study import hidden_judges
from annols.study.judges import Judges
from tests.study.test_arena import EXAMPLE, FIXTURE, rows

JUDGE = "gpt4_pair"


def _read(path: Path) -> list[Any]:
    d = protocols.load(str(EXAMPLE))
    return list(format_for(d).read([path], d))


def _write(path: Path, data: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in data), encoding="utf-8")
    return path


def test_the_layout_is_told_from_other_inputs(tmp_path: Path) -> None:
    assert arena.is_arena(FIXTURE)
    assert not arena.is_arena(EXAMPLE.with_suffix(".jsonl"))  # the example's own records: the generic layout
    array = tmp_path / "battles.json"
    array.write_text(json.dumps(rows()[:3]), encoding="utf-8")
    assert arena.is_arena(array)
    (tmp_path / "bad.jsonl").write_text("{not json\n", encoding="utf-8")
    assert not arena.is_arena(tmp_path / "bad.jsonl")  # left to the generic reader's own message
    (tmp_path / "x.parquet").write_bytes(b"")
    assert arena.is_arena(tmp_path / "x.parquet")


def test_each_battle_is_one_task_with_the_peoples_votes_on_the_side_they_meant() -> None:
    data = rows()
    tasks = _read(FIXTURE)
    battles = {(str(r["question_id"]), r["turn"], *sorted((r["model_a"], r["model_b"]))) for r in data}
    assert len(tasks) == len({t.key for t in tasks}) == len(battles)
    assert sum(len(t.annotations) for t in tasks) == sum(r["judge"] != JUDGE for r in data)
    # Every person's vote, counted again from the file: the winning system (or the tie), never the judge's.
    expected: Counter[tuple[str, str, str]] = Counter()
    for r in data:
        if r["judge"] == JUDGE:
            continue
        won = {"model_a": r["model_a"], "model_b": r["model_b"]}.get(r["winner"], r["winner"].replace("tie (bothbad)",
                                                                                                         "bothbad"))
        expected[(f"arena:{r['question_id']}:turn-{r['turn']}:{'|'.join(sorted((r['model_a'], r['model_b'])))}",
                  r["judge"], won)] += 1  # fmt: skip
    found: Counter[tuple[str, str, str]] = Counter()
    for t in tasks:
        assert list(t.systems) == sorted(t.systems)  # candidate A is the system first in name order
        battle = t.data["record"]["id"]
        for a in t.annotations:
            code = a.result[0]["value"]["choices"][0]
            found[(battle, a.annotator, t.systems["AB".index(code)] if code in "AB" else code)] += 1
    assert found == expected
    assert not any(a.annotator == JUDGE for t in tasks for a in t.annotations)


def test_the_model_judges_become_judge_files_that_name_the_tasks(tmp_path: Path) -> None:
    d = protocols.load(str(EXAMPLE))
    written = study_arena.hidden_judges(d, [FIXTURE], tmp_path)
    assert [p.name for p in written] == [f"arena-{JUDGE}.jsonl"]
    lines = [json.loads(x) for x in written[0].read_text(encoding="utf-8").splitlines()]
    assert len(lines) == sum(r["judge"] == JUDGE for r in rows())
    judges = Judges.read(d, written)
    assert hidden_judges.check_against_inputs(d, judges, [FIXTURE]) == len(lines)  # every line answers a task
    assert study_arena.hidden_judges(d, [EXAMPLE.with_suffix(".jsonl")], tmp_path / "none") == []


@pytest.mark.parametrize(("change", "field", "message"), [
    (lambda r: r.update(winner="model_c"), "winner", "'model_c' is not one of"),
    (lambda r: r.pop("model_b"), "model_b", "missing"),
    (lambda r: r.update(conversation_b=[{"role": "user"}]), "conversation_b[0]", "role and content"),
    (lambda r: r.update(turn="two"), "turn", "not a turn number"),
])  # fmt: skip
def test_a_bad_row_is_refused_in_one_line_naming_file_line_and_field(tmp_path: Path, change: Any, field: str,
                                                                     message: str) -> None:  # fmt: skip
    data = rows()[:5]
    change(data[3])
    source = _write(tmp_path / "battles.jsonl", data)
    assert arena.is_arena(source)  # the first row tells the layout; the fourth is refused
    with pytest.raises(InputError) as e:
        _read(source)
    text = str(e.value)
    assert text.startswith(f"{source}, line 4, field {field!r}: ") and message in text and "\n" not in text


def test_the_harmless_is_said_with_the_file(tmp_path: Path) -> None:
    data = rows()[:6]
    for r in data:
        r["tstamp"] = 1.0
    tasks = _read(_write(tmp_path / "battles.jsonl", [*data, data[0]]))
    said = [str(w) for t in tasks for w in t.warnings]
    assert any("tstamp" in w and str(tmp_path / "battles.jsonl") in w for w in said)
    assert any("line 7 repeats line 1" in w for w in said)
    assert sum(len(t.annotations) for t in tasks) == sum(r["judge"] != JUDGE for r in data)


def test_a_definition_without_the_arena_answers_is_refused() -> None:
    d = protocols.load("pairwise-aspects")
    with pytest.raises(DefinitionError, match="pairwise definition with one aspect"):
        list(arena.records(FIXTURE, d))
