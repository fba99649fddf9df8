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


def test_an_item_of_several_tasks_is_one_item_of_the_union_of_their_systems() -> None:
    tasks = {"t1": ("a", "b", "c"), "t2": ("a", "c", "d"), "t3": ("a", "b", "d"), "solo": ("x", "y")}
    items, keys = rounds.grouped(tasks, {"t1": "u", "t2": "u", "t3": "u"})
    assert items == {"u": ("a", "b", "c", "d"), "solo": ("x", "y")}
    assert keys == {"u": ["t1", "t2", "t3"], "solo": ["solo"]}
    assert rounds.grouped(POOL, {}) == (POOL, {k: [k] for k in POOL})  # the other styles: a task is its item


def by_item_round(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, definition: object, tasks: list,
                  systems: dict[str, tuple[str, ...]], effect: float, pushed: int,
                  **given: object) -> tuple[object, list[list[str]]]:  # fmt: skip
    """next-round on a planted best-worst or spans study (:mod:`tests.analysis.rounds_planted`; ``systems``: each
    task's) whose first ``pushed`` items (all their tasks) are in the project and judged; the pool holds every item.
    Returns the result and the keys each push was asked for (the push to the server itself is the live test's)."""
    from annols.study import manifest
    from tests.analysis import rounds_planted as rp

    item_of = {key: rp.unit(item) for item, key, _ in tasks}
    monkeypatch.setattr(rounds, "pool", lambda d, inputs: systems)
    monkeypatch.setattr(rounds, "units", lambda d, inputs: item_of)
    asked: list[list[str]] = []
    monkeypatch.setattr(rounds.push_lib, "push", lambda client, d, inputs, o: asked.append(sorted(o.only)))
    shown = [t for t in tasks if t[0] < pushed]
    path = manifest.manifest_path(tmp_path, "by item")
    manifest.write_manifest(path, {"protocol": definition.name},  # type: ignore[attr-defined]
                            {key: (i, systems[key]) for i, (_, key, _) in enumerate(shown)})  # fmt: skip
    system_of = {key: s[0] for key, s in systems.items()} if definition.style == "spans" else None  # type: ignore
    tidy = rp.frame(shown, system_of)
    options = rounds.RoundOptions(title="by item", effect=effect, overlap=3, manifest_dir=tmp_path, batch=4,
                                  **given)  # type: ignore[arg-type]
    return rounds.next_round(None, definition, [], tidy, options), asked  # type: ignore[arg-type]


def test_a_best_worst_round_decides_the_clear_pairs_and_pushes_whole_items(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Twenty of forty items judged: A (best of every tuple it is in, but for a fifth of random answers) is decided
    above D on both aspects; the next batch is four whole items (all of each one's tuples), not yet pushed."""
    from annols.analysis import sequential
    from tests.analysis import rounds_planted as rp

    tasks = rp.best_worst(40)
    systems = {key: tuple(rp.BW_SYSTEMS[i] for i in rp.LAYOUT[int(key.rsplit("-", 1)[1])]) for _, key, _ in tasks}
    result, asked = by_item_round(tmp_path, monkeypatch, rp.example("summary-best-worst"), tasks, systems, 30.0, 20)
    found = {(c.question, c.first, c.second): c for c in result.comparisons}  # type: ignore[attr-defined]
    assert len(found) == 12 and all(c.items == 20 for c in found.values())
    assert found[("Fluency", "A", "D")].decision == sequential.FIRST
    assert found[("Informativeness", "A", "D")].decision == sequential.FIRST
    assert found[("Fluency", "B", "C")].decision != sequential.FIRST  # B and C alike: no difference decided
    assert len(asked) == 1 and len(asked[0]) == 4 * len(rp.LAYOUT)
    items = {key.rsplit("-", 1)[0] for key in asked[0]}
    assert len(items) == 4 and all(int(i.split("-")[1]) >= 20 for i in items)
    assert result.items == 24  # type: ignore[attr-defined]  # items, not tasks
    assert result.pushed_items == 4  # type: ignore[attr-defined]  # what the CLI says a round pushed
    record = rounds.read_rounds(result.record)  # type: ignore[attr-defined]
    assert record[0]["pushed_items"] == 4 and len(record[0]["pushed"]) == 4 * len(rp.LAYOUT)
    assert record[0]["fixed"] == {"items": None, "judgments": None, "annotators": 3, "plan": False}


@pytest.mark.parametrize("name", ["esa", "mqm"])
def test_a_spans_round_decides_the_clear_pair_of_esa_and_mqm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """Fifteen items judged, their budget spent: sys-a, scored 85 against 50 (ESA) or erring far less (MQM), is
    decided better than sys-b; nothing is pushed."""
    from annols.analysis import sequential
    from tests.analysis import rounds_planted as rp

    tasks, system_of = rp.esa(15) if name == "esa" else rp.mqm(15)[:2]
    effect = 10.0 if name == "esa" else 2.0  # points of the score; of the error score
    systems = {key: (system,) for key, system in system_of.items()}
    result, asked = by_item_round(tmp_path, monkeypatch, rp.example(name), tasks, systems, effect, 15, budget=15)
    question = "score" if name == "esa" else "error score"
    found = {(c.question, c.first, c.second): c for c in result.comparisons}  # type: ignore[attr-defined]
    assert set(found) == {(question, a, b) for a, b in [("sys-a", "sys-b"), ("sys-a", "sys-c"), ("sys-b", "sys-c")]}
    assert found[(question, "sys-a", "sys-b")].decision == sequential.FIRST
    assert found[(question, "sys-a", "sys-b")].items == 15
    assert result.reason == rounds.BUDGET and asked == []  # type: ignore[attr-defined]
    assert result.judgments == 15 * 3 * 3  # type: ignore[attr-defined]  # per candidate and annotator


def test_a_spans_definition_without_a_bounded_comparison_is_refused_before_anything_is_read(tmp_path: Path) -> None:
    from tests.analysis import planted

    options = rounds.RoundOptions(title="spans", effect=1.0, manifest_dir=tmp_path)
    with pytest.raises(AnnolsError, match="bounded scale"):
        rounds.next_round(None, planted.definition(planted.SPANS), [], None, options)  # type: ignore[arg-type]
