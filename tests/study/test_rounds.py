"""next-round's choices without a server: which items a round pushes, the record, the comparisons."""

from __future__ import annotations

from pathlib import Path

import pytest

from annols.errors import AnnolsError, InputError
from annols.study import rounds
from tests.analysis import planted

POOL = {f"k{i}": (("a", "b") if i % 3 == 0 else ("a", "c") if i % 3 == 1 else ("b", "c")) for i in range(30)}


def test_a_round_takes_unpushed_items_of_undecided_pairs_in_a_seeded_order() -> None:
    pushed = {"k0", "k3"}
    chosen = rounds._choose(POOL, pushed, {("a", "b")}, 5, seed=1)
    assert len(chosen) == 5 and not set(chosen) & pushed
    assert all(POOL[k] == ("a", "b") for k in chosen)
    assert chosen == rounds._choose(POOL, pushed, {("a", "b")}, 5, seed=1)  # seeded
    assert chosen != rounds._choose(POOL, pushed, {("a", "b")}, 5, seed=2)
    # Only the pair's items are of use: 10 in the pool, 2 pushed.
    assert len(rounds._choose(POOL, pushed, {("a", "b")}, 50, seed=1)) == 8
    assert rounds._choose(POOL, set(POOL), {("a", "b")}, 5, seed=1) == []  # the pool is exhausted


def test_items_bearing_on_more_undecided_pairs_come_first() -> None:
    pool = {"all": ("a", "b", "c"), "ab": ("a", "b"), "bc": ("b", "c")}
    assert rounds._choose(pool, set(), {("a", "b"), ("b", "c")}, 3, seed=0)[0] == "all"


def test_the_record_sits_beside_the_manifest_and_a_damaged_line_is_named(tmp_path: Path) -> None:
    path = rounds.rounds_path(tmp_path, "My study: 1")
    assert path == tmp_path / "My-study-1.rounds.jsonl"
    assert rounds.read_rounds(path) == []
    path.write_text('{"round": 1}\nnot json\n', encoding="utf-8")
    with pytest.raises(InputError) as e:
        rounds.read_rounds(path)
    assert "line 2" in str(e.value)


def test_the_comparisons_are_every_pair_per_question_and_need_systems() -> None:
    definition = planted.definition(planted.RATINGS)
    found = rounds.study_comparisons(definition, {"k1": ("good", "fair", "poor")})
    questions = {q for q, _, _ in found}
    assert len(found) == 3 * len(questions) and ("fair", "good") in {(a, b) for _, a, b in found}
    with pytest.raises(AnnolsError, match="name no systems"):
        rounds.study_comparisons(definition, {"k1": ()})


def test_the_mixture_width_is_set_by_the_items_a_pair_can_get() -> None:
    assert rounds._items_per_pair(POOL) == 10  # 30 pairwise items over three pairs
    assert rounds._items_per_pair({f"k{i}": ("a", "b", "c") for i in range(30)}) == 30  # every item every pair


def test_a_ratings_study_whose_budget_is_spent_decides_and_pushes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The planted ratings study (good clearly above poor) as the latest pull of a project whose manifest holds its
    13 items: next-round decides from the report's judgments table and, its budget spent, sends nothing (no client
    is needed) and records the round."""
    from annols.analysis import sequential
    from annols.study import manifest

    definition = planted.definition(planted.RATINGS)
    tidy, _ = planted.frames(planted.ratings())
    keys = sorted(tidy["task_key"].unique())
    monkeypatch.setattr(rounds, "pool", lambda d, inputs: {k: ("good", "fair", "poor") for k in keys})
    path = manifest.manifest_path(tmp_path, "ratings in rounds")
    manifest.write_manifest(path, {"protocol": definition.name}, {k: (i, ("good", "fair", "poor"))
                                                                   for i, k in enumerate(keys)})  # fmt: skip
    options = rounds.RoundOptions(title="ratings in rounds", effect=0.5, budget=len(keys), overlap=3,
                                  manifest_dir=tmp_path)  # fmt: skip
    result = rounds.next_round(None, definition, [], tidy, options)  # type: ignore[arg-type]
    assert result.pushed == [] and result.reason == rounds.BUDGET and result.push is None
    found = {(c.question, c.first, c.second): c for c in result.comparisons}
    assert len(found) == 6 and all(c.items == len(keys) for c in found.values())
    assert found[("Coherence", "good", "poor")].decision == sequential.FIRST  # 4.2 against 2.0
    record = rounds.read_rounds(result.record)
    assert len(record) == 1 and record[0]["reason"] == "budget" and record[0]["tests"] == 6
    assert record[0]["judgments"] == len(tidy[["task_key", "annotator"]].drop_duplicates())  # 12 x 3 + 1


def planted_rounds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **given: object) -> tuple[object, object]:
    """The planted ratings study as the pull of a project whose manifest holds its items, budget spent."""
    from annols.study import manifest

    definition = planted.definition(planted.RATINGS)
    tidy, _ = planted.frames(planted.ratings())
    keys = sorted(tidy["task_key"].unique())
    monkeypatch.setattr(rounds, "pool", lambda d, inputs: {k: ("good", "fair", "poor") for k in keys})
    path = manifest.manifest_path(tmp_path, "ratings in rounds")
    if not path.exists():
        manifest.write_manifest(path, {"protocol": definition.name}, {k: (i, ("good", "fair", "poor"))
                                                                       for i, k in enumerate(keys)})  # fmt: skip
    options = rounds.RoundOptions(title="ratings in rounds", effect=0.5, budget=len(keys), overlap=3,
                                  manifest_dir=tmp_path, **given)  # type: ignore[arg-type]
    return rounds.next_round(None, definition, [], tidy, options), tidy  # type: ignore[arg-type]


def test_goal_best_is_recorded_concludes_per_question_and_a_changed_goal_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from annols.analysis import sequential
    from annols.errors import OptionError

    result, _ = planted_rounds(tmp_path, monkeypatch, goal="best")
    assert result.goal == sequential.BEST  # type: ignore[attr-defined]
    assert result.conclusions == sequential.conclusions(result.comparisons)  # type: ignore[attr-defined]
    # Coherence: good and fair both above poor (4.2, 2.0): poor is out, good against fair still open.
    assert result.conclusions["Coherence"] == "undecided between fair, good"  # type: ignore[attr-defined]
    assert set(result.conclusions) == {c.question for c in result.comparisons}  # type: ignore[attr-defined]
    record = rounds.read_rounds(result.record)  # type: ignore[attr-defined]
    assert record[0]["goal"] == "best"
    # A later round without --goal keeps it; another goal is refused in one line naming the option and the record.
    assert planted_rounds(tmp_path, monkeypatch)[0].goal == sequential.BEST  # type: ignore[attr-defined]
    with pytest.raises(OptionError) as e:
        planted_rounds(tmp_path, monkeypatch, goal="all")
    assert "--goal all" in str(e.value) and "'best', fixed at round 1" in str(e.value)
    assert "\n" not in str(e.value) and "rounds.jsonl" in str(e.value)
    with pytest.raises(OptionError, match="one of all, best"):
        planted_rounds(tmp_path / "other", monkeypatch, goal="first")


def test_goal_all_records_no_goal_and_refuses_best_later(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from annols.errors import OptionError

    result, _ = planted_rounds(tmp_path, monkeypatch)
    assert result.goal == "all" and result.conclusions is None  # type: ignore[attr-defined]
    assert "goal" not in rounds.read_rounds(result.record)[0]  # type: ignore[attr-defined]  # records as before
    with pytest.raises(OptionError, match="goal is 'all'"):
        planted_rounds(tmp_path, monkeypatch, goal="best")
