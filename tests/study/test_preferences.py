"""Preference data out: each export rule on a planted study, never a gold, attention, judge or excluded
annotator's judgment, and the folder loads with Hugging Face ``datasets`` in TRL's documented columns.

TRL's documented columns (docs "Dataset formats and types"): preference ``prompt``, ``chosen``,
``rejected`` (text, or lists of ``{"role", "content"}`` messages in the conversational format);
unpaired preference ``prompt``, ``completion``, ``label`` (a boolean).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from annols import protocols
from annols.cli import main
from annols.definition import Definition, blinding
from annols.errors import AnnolsError, OptionError
from annols.formats.answers import answer_items, controls
from annols.study import arena
from annols.study.preferences import PREFERENCE_FILE, UNPAIRED_FILE, Rule, export_preferences, rows
from tests.conftest import DATA

ROOT = Path(__file__).resolve().parents[2]
CHAT = ROOT / "examples" / "chat-arena.toml"  # text prompt and responses, two aspects
ARENA = ROOT / "examples" / "arena.toml"  # two conversations
FIXTURE = DATA / "arena" / "mt_bench_sample.jsonl"

# key -> (systems shown, role, {annotator: {aspect: code}}); codes A / B / tie on the task as shown.
PLANTED: dict[str, tuple[tuple[str, str], str, dict[str, dict[str, str]]]] = {
    "t1": (("x", "y"), "study", {"ann1": {"helpfulness": "A", "harmlessness": "A"},
                                 "ann2": {"helpfulness": "A", "harmlessness": "tie"},
                                 "ann3": {"helpfulness": "B", "harmlessness": "tie"}}),
    "t2": (("y", "x"), "study", {"ann1": {"helpfulness": "B", "harmlessness": "A"},
                                 "ann2": {"helpfulness": "B", "harmlessness": "A"}}),
    "t3": (("x", "y"), "study", {"ann1": {"helpfulness": "A", "harmlessness": "B"},
                                 "ann2": {"helpfulness": "B", "harmlessness": "tie"}}),
    "t4": (("x", "y"), "study", {"bad": {"helpfulness": "B", "harmlessness": "B"},
                                 "ann1": {"helpfulness": "A", "harmlessness": "A"}}),
    "g1": (("x", "y"), "gold", {"ann1": {"helpfulness": "A", "harmlessness": "A"}}),
    "c1": (("x", "y"), "attention", {"ann2": {"helpfulness": "B", "harmlessness": "B"}}),
}  # fmt: skip


def _pull(folder: Path, definition: Definition, planted: dict[str, Any], *, verdicts: bool = False) -> Path:
    """A pull folder as pull writes it: export.json, blinding.jsonl (keys, systems, roles), annotators.json."""
    known = controls(definition)
    tasks, blind = [], []
    for n, (key, (systems, role, votes)) in enumerate(sorted(planted.items()), start=1):
        annotations = []
        for m, (who, answers) in enumerate(sorted(votes.items()), start=1):
            result, _ = answer_items(answers, known, lambda f, p: AnnolsError(f"{f}: {p}"), origin="manual")
            annotations.append({"id": 100 * n + m, "completed_by": {"email": who}, "result": result,
                                "created_at": f"2026-01-01T00:00:{m:02d}Z", "was_cancelled": False})  # fmt: skip
        data = {"prompt": f"prompt of {key}", "response_a": f"{systems[0]} answers {key}",
                "response_b": f"{systems[1]} answers {key}"}  # fmt: skip
        meta: dict[str, Any] = {"annols_key": key}
        if verdicts:
            meta.update({"annols_adjudication": True, "annols_systems": blinding.encode_systems(systems)})
        tasks.append({"id": n, "data": data, "meta": meta, "annotations": annotations})
        blind.append({"task_id": n, "key": key, "systems": list(systems), "order": [0, 1], "role": role})
    folder.mkdir(parents=True)
    (folder / "export.json").write_text(json.dumps(tasks), encoding="utf-8")
    if not verdicts:
        (folder / "blinding.jsonl").write_text("".join(json.dumps(b) + "\n" for b in blind), encoding="utf-8")
    return folder


@pytest.fixture
def chat(tmp_path: Path) -> tuple[Definition, Path]:
    definition = protocols.load(str(CHAT))
    return definition, _pull(tmp_path / "pull", definition, PLANTED)


def _verdicts(out: Path) -> dict[tuple[str, str], tuple[str, str, Any]]:
    return {(r["key"], r["aspect"]): (r["chosen_system"], r["rejected_system"], r.get("tie"))
            for r in rows(out / PREFERENCE_FILE)}  # fmt: skip


def test_majority_gives_the_outcome_more_than_half_give(chat: tuple[Definition, Path], tmp_path: Path) -> None:
    definition, pull = chat
    done = export_preferences(definition, [pull], tmp_path / "out", Rule("majority"))
    assert _verdicts(tmp_path / "out") == {
        ("t1", "helpfulness"): ("x", "y", None),  # A, A, B: x
        ("t2", "helpfulness"): ("x", "y", None),  # shown y, x: B, B is x
        ("t2", "harmlessness"): ("y", "x", None),
    }  # t1 harmlessness is a tie (dropped); t3 and t4 split evenly; g1 and c1 never
    assert done.ties == 0 and done.no_verdict == 4
    assert done.left_out == {"gold item": 1, "attention item": 1}


def test_ties_kept_are_marked_and_never_unpaired(chat: tuple[Definition, Path], tmp_path: Path) -> None:
    definition, pull = chat
    done = export_preferences(definition, [pull], tmp_path / "out", Rule("majority", ties="keep"))
    found = _verdicts(tmp_path / "out")
    assert found[("t1", "harmlessness")] == ("x", "y", True)
    assert found[("t1", "helpfulness")] == ("x", "y", False)
    assert done.ties == 1
    unpaired = list(rows(tmp_path / "out" / UNPAIRED_FILE))
    assert len(unpaired) == 2 * (done.rows - done.ties)
    assert not any(r["key"] == "t1" and r["aspect"] == "harmlessness" for r in unpaired)


def test_unanimous_needs_every_vote_and_the_fewest(chat: tuple[Definition, Path], tmp_path: Path) -> None:
    definition, pull = chat
    export_preferences(definition, [pull], tmp_path / "one", Rule("unanimous"))
    assert set(_verdicts(tmp_path / "one")) == {("t2", "helpfulness"), ("t2", "harmlessness")}
    export_preferences(definition, [pull], tmp_path / "three", Rule("unanimous", min_votes=3))
    assert _verdicts(tmp_path / "three") == {}


def test_an_excluded_annotator_is_never_exported(chat: tuple[Definition, Path], tmp_path: Path) -> None:
    definition, pull = chat
    export_preferences(definition, [pull], tmp_path / "with", Rule("majority"))
    assert ("t4", "helpfulness") not in _verdicts(tmp_path / "with")  # bad (B) and ann1 (A) split
    done = export_preferences(definition, [pull], tmp_path / "out", Rule("majority", exclude=("bad",)))
    found = _verdicts(tmp_path / "out")
    assert found[("t4", "helpfulness")] == ("x", "y", None) and found[("t4", "harmlessness")] == ("x", "y", None)
    assert "bad" not in done.annotators and done.left_out["excluded annotator"] == 1
    card = (tmp_path / "out" / "README.md").read_text(encoding="utf-8")
    assert "excluded annotators (bad)" in card


def test_gold_and_attention_items_never_reach_any_file(chat: tuple[Definition, Path], tmp_path: Path) -> None:
    definition, pull = chat
    for n, rule in enumerate([Rule("majority", ties="keep"), Rule("unanimous", ties="keep")]):
        export_preferences(definition, [pull], tmp_path / f"out{n}", rule)
        for name in (PREFERENCE_FILE, UNPAIRED_FILE):
            text = (tmp_path / f"out{n}" / name).read_text(encoding="utf-8")
            assert "g1" not in text and "c1" not in text


def test_adjudicated_only_takes_the_verdicts(chat: tuple[Definition, Path], tmp_path: Path) -> None:
    definition, pull = chat
    verdicts = _pull(tmp_path / "adjudication", definition, {
        "t3": (("x", "y"), "study", {"lead": {"helpfulness": "B", "harmlessness": "tie"}}),
        "g1": (("x", "y"), "study", {"lead": {"helpfulness": "A", "harmlessness": "A"}}),
    }, verdicts=True)  # fmt: skip
    with pytest.raises(OptionError, match="--adjudicated"):
        export_preferences(definition, [pull], tmp_path / "none", Rule("adjudicated"))
    export_preferences(definition, [pull], tmp_path / "out", Rule("adjudicated"), [verdicts])
    # only t3's helpfulness: its harmlessness verdict is a tie (dropped), and g1 is a gold item of the study
    assert _verdicts(tmp_path / "out") == {("t3", "helpfulness"): ("y", "x", None)}


def test_texts_are_the_winners_in_the_standard_format(chat: tuple[Definition, Path], tmp_path: Path) -> None:
    definition, pull = chat
    export_preferences(definition, [pull], tmp_path / "out", Rule("majority"))
    row = next(r for r in rows(tmp_path / "out" / PREFERENCE_FILE) if r["key"] == "t2" and r["aspect"] == "helpfulness")
    assert (row["prompt"], row["chosen"], row["rejected"]) == ("prompt of t2", "x answers t2", "y answers t2")


def test_the_folder_loads_with_datasets_in_trl_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE"):  # local files only: no traffic to the hub
        monkeypatch.setenv(name, "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    import datasets  # type: ignore[import-untyped, unused-ignore]

    definition = protocols.load(str(ARENA))
    arena.import_arena(definition, FIXTURE, tmp_path / "pull")
    done = export_preferences(definition, [tmp_path / "pull"], tmp_path / "out", Rule("majority"))
    assert done.conversational and done.rows > 0
    assert done.left_out == {}  # the judge's votes are in judges/, never in the export
    paired = datasets.load_dataset("json", data_files=str(tmp_path / "out" / PREFERENCE_FILE), split="train",
                                   cache_dir=str(tmp_path / "cache"))
    assert {"prompt", "chosen", "rejected"} <= set(paired.column_names) and len(paired) == done.rows
    for row in paired:
        for column in ("prompt", "chosen", "rejected"):
            assert row[column] and all(set(m) == {"role", "content"} for m in row[column])
        assert row["prompt"][0]["role"] == "user" and row["chosen"][0]["role"] == "assistant"
        assert row["chosen"] != row["rejected"]
    unpaired = datasets.load_dataset("json", data_files=str(tmp_path / "out" / UNPAIRED_FILE), split="train",
                                     cache_dir=str(tmp_path / "cache"))
    assert {"prompt", "completion", "label"} <= set(unpaired.column_names) and len(unpaired) == done.unpaired
    assert set(unpaired["label"]) == {True, False}
    # the folder as a dataset: the card's configs name the files
    whole = datasets.load_dataset(str(tmp_path / "out"), "unpaired", split="train", cache_dir=str(tmp_path / "cache"))
    assert len(whole) == done.unpaired
    card = (tmp_path / "out" / "README.md").read_text(encoding="utf-8")
    assert "arena" in card and "Annotators: 5" in card and "Rule: majority" in card and "agreement" in card


def test_a_turn_two_battle_keeps_the_whole_conversation_after_the_shared_question(tmp_path: Path) -> None:
    definition = protocols.load(str(ARENA))
    arena.import_arena(definition, FIXTURE, tmp_path / "pull")
    export_preferences(definition, [tmp_path / "pull"], tmp_path / "out", Rule("majority"))
    two = [r for r in rows(tmp_path / "out" / PREFERENCE_FILE) if ":turn-2:" in r["key"]]
    assert two
    for r in two:  # the first answers differ, so only the first question is shared
        assert [m["role"] for m in r["prompt"]] == ["user"]
        assert [m["role"] for m in r["chosen"]] == ["assistant", "user", "assistant"]
        assert r["chosen"][0]["content"].startswith(f"[{r['chosen_system']}]")


def test_a_failed_export_leaves_no_folder(chat: tuple[Definition, Path], tmp_path: Path) -> None:
    _, pull = chat
    with pytest.raises(AnnolsError):
        export_preferences(protocols.load(str(ROOT / "examples" / "summeval-ratings.toml")), [pull],
                           tmp_path / "out", Rule())  # fmt: skip
    assert not (tmp_path / "out").exists()


def test_the_command_says_what_it_wrote(chat: tuple[Definition, Path], tmp_path: Path) -> None:
    _, pull = chat
    result = CliRunner().invoke(main, ["export", str(CHAT), str(pull), "-o", str(tmp_path / "out"),
                                       "--ties", "keep", "--exclude-annotator", "bad"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "ties" in result.output and "never exported: 1 of attention items, 1 of excluded annotators" in result.output
