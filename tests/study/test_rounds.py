"""next-round's choices without a server: which items a round pushes, the record, the comparisons."""

from __future__ import annotations

from pathlib import Path

import pandas as pd  # type: ignore[import-untyped, unused-ignore]
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
    is needed) and records the round. With --overlap 3 the item one annotator judged alone is waiting: the
    comparisons count the 12 complete items."""
    from annols.analysis.planning import sequential
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
    assert len(found) == 6 and all(c.items == len(keys) - 1 for c in found.values())
    # 4.2 against 2.0 on 12 complete items of a 1-5 scale: the exact betting sequence at 0.05 / 6 leans far towards
    # good but needs more items to decide (each item can at most about multiply a bet's wealth by 1.5 here); the
    # plug-in variance it replaced decided on 12
    good_poor = found[("coherence", "good", "poor")]
    assert good_poor.decision == sequential.UNDECIDED and good_poor.mean > 1.4 and -1 < good_poor.low < 0
    record = rounds.read_rounds(result.record)
    assert len(record) == 1 and record[0]["reason"] == "budget" and record[0]["tests"] == 6
    assert record[0]["judgments"] == len(tidy[["task_key", "annotator"]].drop_duplicates())  # 12 x 3 + 1
    assert record[0]["waiting"] == 1  # the judgments read still count the waiting item's


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
    from annols.analysis.planning import sequential
    from annols.errors import OptionError

    result, _ = planted_rounds(tmp_path, monkeypatch, goal="best")
    assert result.goal == sequential.BEST  # type: ignore[attr-defined]
    assert result.conclusions == sequential.conclusions(result.comparisons)  # type: ignore[attr-defined]
    # Coherence: good and fair both above poor (4.2, 2.0), but 12 complete items of a 1-5 scale are too few for the
    # exact sequence at 0.05 / 6 to put poor out (the plug-in variance it replaced did): all three still open.
    assert result.conclusions["coherence"] == "undecided between fair, good, poor"  # type: ignore[attr-defined]
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
    from annols.analysis.planning import sequential
    from tests.analysis import rounds_planted as rp

    tasks = rp.best_worst(40)
    systems = {key: tuple(rp.BW_SYSTEMS[i] for i in rp.LAYOUT[int(key.rsplit("-", 1)[1])]) for _, key, _ in tasks}
    result, asked = by_item_round(tmp_path, monkeypatch, rp.example("summary-best-worst"), tasks, systems, 30.0, 20)
    found = {(c.question, c.first, c.second): c for c in result.comparisons}  # type: ignore[attr-defined]
    assert len(found) == 12 and all(c.items == 20 for c in found.values())
    assert found[("fluency", "A", "D")].decision == sequential.FIRST
    assert found[("informativeness", "A", "D")].decision == sequential.FIRST
    assert found[("fluency", "B", "C")].decision != sequential.FIRST  # B and C alike: no difference decided
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
    """Forty items judged, their budget spent or all decided: sys-a, scored 85 against 50 (ESA) or erring far less
    (MQM), is decided better than sys-b; nothing is pushed. (Fifteen were enough for the plug-in variance the
    exact betting sequence replaced; at 0.05 / 3 its bets gain at most about a third (ESA) or a half (MQM) of the
    wealth an item here, so it needs twenty to thirty.)"""
    from annols.analysis.planning import sequential
    from tests.analysis import rounds_planted as rp

    tasks, system_of = rp.esa(40) if name == "esa" else rp.mqm(40)[:2]
    effect = 10.0 if name == "esa" else 2.0  # points of the score; of the error score
    systems = {key: (system,) for key, system in system_of.items()}
    result, asked = by_item_round(tmp_path, monkeypatch, rp.example(name), tasks, systems, effect, 40, budget=40)
    question = "score" if name == "esa" else "error score"
    found = {(c.question, c.first, c.second): c for c in result.comparisons}  # type: ignore[attr-defined]
    assert set(found) == {(question, a, b) for a, b in [("sys-a", "sys-b"), ("sys-a", "sys-c"), ("sys-b", "sys-c")]}
    assert found[(question, "sys-a", "sys-b")].decision == sequential.FIRST
    assert found[(question, "sys-a", "sys-b")].items == 40
    # budget spent, or every comparison decided (all three pairs clear on 40 items): nothing pushed either way
    assert result.reason in (rounds.BUDGET, rounds.DECIDED) and asked == []  # type: ignore[attr-defined]
    assert result.judgments == 40 * 3 * 3  # type: ignore[attr-defined]  # per candidate and annotator


def test_an_mqm_studys_error_cap_is_fixed_at_round_one_recorded_and_a_different_one_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--error-cap 50: the error scores (sys-c's non-translation with a major: 30) are clipped at 50, not 25, the
    bound is 50, and the record keeps it; later rounds use it without the option, refuse another one in one line;
    a study without it records nothing new and keeps the largest weight."""
    from annols.analysis.planning import sequential
    from annols.errors import OptionError
    from tests.analysis import rounds_planted as rp

    definition = rp.example("mqm")
    tasks, system_of = rp.mqm(15)[:2]
    systems = {key: (system,) for key, system in system_of.items()}

    def run(folder: str, **given: object) -> object:
        return by_item_round(tmp_path / folder, monkeypatch, definition, tasks, systems, 2.0, 15, budget=15,
                             **given)[0]  # fmt: skip

    capped, plain = run("capped", error_cap=50.0), run("plain")
    assert rounds.read_rounds(capped.record)[0]["error_cap"] == 50.0  # type: ignore[attr-defined]
    assert "error_cap" not in rounds.read_rounds(plain.record)[0]  # type: ignore[attr-defined]  # as before
    tidy = rp.frame(tasks, system_of)
    for result, cap in ((capped, 50.0), (plain, None)):
        found = sequential.observations("spans", sequential.frame_of(definition, tidy, cap))
        expected = sequential.comparisons(found, sequential.bounds_of(definition, cap), 2.0,
                                          sequential.eta_for(15), tests=3)  # fmt: skip
        assert result.comparisons == expected  # type: ignore[attr-defined]
    key = ("error score", "sys-a", "sys-c")
    high, low = ({(c.question, c.first, c.second): c for c in r.comparisons} for r in (capped, plain))  # type: ignore
    assert high[key].mean > low[key].mean  # sys-c's 30s count as 30, not 25
    # Later rounds: the cap fixed at round 1 is kept; the same one again is fine; another is refused.
    assert run("capped").comparisons == capped.comparisons  # type: ignore[attr-defined]
    run("capped", error_cap=50.0)
    with pytest.raises(OptionError) as e:
        run("capped", error_cap=25.0)
    assert "--error-cap 25" in str(e.value) and "error cap is 50, fixed at round 1" in str(e.value)
    assert "\n" not in str(e.value) and "rounds.jsonl" in str(e.value)
    run("plain", error_cap=25.0)  # the default, said out loud
    with pytest.raises(OptionError, match="error cap is 25, fixed at round 1"):
        run("plain", error_cap=30.0)
    # Below the largest weight, or a definition without an error score: refused before anything.
    with pytest.raises(OptionError, match="at least the largest weight declared, 25"):
        run("low", error_cap=10.0)
    assert not (tmp_path / "low").exists() or not list((tmp_path / "low").glob("*.rounds.jsonl"))
    esa_tasks, esa_systems = rp.esa(15)
    with pytest.raises(OptionError, match=r"only a spans definition with \[\[spans\.weights\]\]"):
        by_item_round(tmp_path / "esa", monkeypatch, rp.example("esa"), esa_tasks,
                      {k: (s,) for k, s in esa_systems.items()}, 10.0, 15, error_cap=30.0)  # fmt: skip
    with pytest.raises(OptionError, match="style ratings"):
        planted_rounds(tmp_path / "ratings", monkeypatch, error_cap=30.0)


def test_error_cap_on_the_command_line_is_refused_for_a_definition_without_an_error_score(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from annols.cli import main

    pool = tmp_path / "pool.jsonl"
    pool.write_text("{}\n", encoding="utf-8")
    result = CliRunner(env={"LABEL_STUDIO_URL": None, "LABEL_STUDIO_API_KEY": None}).invoke(
        main, ["next-round", "pairwise-aspects", str(pool), "--project", "p", "--effect", "0.3", "--overlap", "1",
               "--error-cap", "30", "--data-dir", str(tmp_path / "no-server")])  # fmt: skip
    assert result.exit_code == 1 and len(result.stderr.splitlines()) == 1, result.output
    assert "--error-cap 30: only a spans definition with [[spans.weights]]" in result.stderr
    result = CliRunner().invoke(main, ["next-round", "pairwise-aspects", str(pool), "--project", "p", "--effect",
                                       "0.3", "--overlap", "1", "--error-cap", "0"])  # fmt: skip
    assert result.exit_code == 2 and "--error-cap" in result.stderr


def test_a_spans_definition_without_a_bounded_comparison_is_refused_before_anything_is_read(tmp_path: Path) -> None:
    from tests.analysis import planted

    options = rounds.RoundOptions(title="spans", effect=1.0, manifest_dir=tmp_path)
    with pytest.raises(AnnolsError, match="bounded scale"):
        rounds.next_round(None, planted.definition(planted.SPANS), [], None, options)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- passes


def sent_overlaps(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, int]]:
    """What each round asks the server to set (task key -> overlap); the server's side is the live test's."""
    sent: list[dict[str, int]] = []
    monkeypatch.setattr(rounds.passes_lib, "apply", lambda client, title, rows, targets: sent.append(dict(targets)))
    return sent


def test_passes_reopen_pushed_items_once_no_new_item_can_be_pushed_and_only_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The planted study's 13 items are all pushed (its budget of items spent), three annotators each: with two
    passes the round re-opens the items of undecided pairs for three more (6 each) instead of stopping; the record
    keeps the passes, the overlap, the round's pass and what it re-opened; the same pull read again re-opens
    nothing, and another --passes is refused in one line."""
    from annols.errors import OptionError

    sent = sent_overlaps(monkeypatch)
    result, tidy = planted_rounds(tmp_path, monkeypatch, passes=2)
    assert result.pushed == [] and result.reason == "" and result.stage == 2  # type: ignore[attr-defined]
    reopened = result.reopened  # type: ignore[attr-defined]
    assert reopened and set(reopened.values()) == {6} and set(reopened) <= set(tidy["task_key"])  # type: ignore
    assert sent == [reopened]
    record = rounds.read_rounds(result.record)  # type: ignore[attr-defined]
    assert (record[0]["passes"], record[0]["overlap"], record[0]["pass"]) == (2, 3, 2)
    assert record[0]["reopened"] == reopened and all(c["pass"] == 1 for c in record[0]["comparisons"])
    with pytest.raises(AnnolsError, match="re-opened for pass 2 is complete for it in the pull"):
        planted_rounds(tmp_path, monkeypatch)
    with pytest.raises(OptionError) as e:
        planted_rounds(tmp_path, monkeypatch, passes=3)
    assert "--passes 3" in str(e.value) and "fixed at round 1" in str(e.value) and "\n" not in str(e.value)
    from tests.analysis import planted

    other = rounds.RoundOptions(title="ratings in rounds", effect=0.5, overlap=1, manifest_dir=tmp_path)
    with pytest.raises(OptionError, match="overlap is 3, fixed at round 1"):
        rounds.next_round(None, planted.definition(planted.RATINGS), [], tidy, other)  # type: ignore[arg-type]
    assert len(rounds.read_rounds(result.record)) == 1 and len(sent) == 1  # type: ignore[attr-defined]


def test_one_pass_records_as_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sent = sent_overlaps(monkeypatch)
    result, _ = planted_rounds(tmp_path, monkeypatch)
    record = rounds.read_rounds(result.record)[0]  # type: ignore[attr-defined]
    assert not {"passes", "pass", "overlap", "reopened", "budget_judgments"} & set(record)
    assert not any("pass" in c for c in record["comparisons"]) and sent == []
    assert result.reason == rounds.BUDGET  # type: ignore[attr-defined]


def test_a_later_pass_reads_its_own_items_and_keeps_the_earlier_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One annotator an item, three passes: round 1 reads annotator a's judgments alone (pass 1) and re-opens the
    items; round 2's pull adds c's, judged later: pass 1 is unchanged (a's alone), pass 2 is the 12 items c judged,
    each the mean of a's and c's, and the round keeps round 1's overlaps on the server."""
    from annols.analysis.planning import sequential
    from annols.study import manifest
    from tests.analysis import planted

    sent = sent_overlaps(monkeypatch)
    _, tidy = planted_rounds(tmp_path / "probe", monkeypatch)  # the planted pool, patched in
    when = {"a": "2026-01-01T00:00:01", "c": "2026-01-02T00:00:01", "b": "2026-01-03T00:00:01"}
    tidy = tidy.assign(created_at=tidy["annotator"].map(when))  # type: ignore[attr-defined]
    keys = sorted(tidy["task_key"].unique())
    definition = planted.definition(planted.RATINGS)
    manifest.write_manifest(manifest.manifest_path(tmp_path, "ratings in rounds"), {"protocol": definition.name},
                            {k: (i, ("good", "fair", "poor")) for i, k in enumerate(keys)})  # fmt: skip

    def run(annotators: set[str], **given: object) -> rounds.RoundResult:
        options = rounds.RoundOptions(title="ratings in rounds", effect=0.5, budget=13, overlap=1,
                                      manifest_dir=tmp_path, **given)  # type: ignore[arg-type]
        part = tidy[tidy["annotator"].isin(annotators)]
        return rounds.next_round(None, definition, [], part, options)  # type: ignore[arg-type]

    first = run({"a"}, passes=3)
    assert first.stage == 2 and first.reopened and set(first.reopened.values()) == {2}
    second = run({"a", "c"})
    key = ("coherence", "fair", "good")
    before = {(c.question, c.first, c.second): c for c in first.comparisons}[key]
    after = {(c.question, c.first, c.second): c for c in second.comparisons}[key]
    assert (before.items, before.pass_) == (13, 1) and (after.items, after.pass_) == (12, 2)
    by = sequential.pass_series(definition, tidy[tidy["annotator"].isin({"a", "c"})], set(keys), [key], 3, 1)
    assert by[0][key].mean() == pytest.approx(before.mean) and after.mean == pytest.approx(by[1][key].mean())
    record = rounds.read_rounds(second.record)
    assert [r["pass"] for r in record] == [2, second.stage] and second.stage in (2, 3)
    assert len(sent) == 2 and all(sent[1][k] >= 2 for k in sent[0])  # round 2 keeps round 1's overlaps


def test_a_budget_of_judgments_reopens_what_fits_then_stops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """13 tasks of 3 annotators: 39 judgments asked. A budget of 45 re-opens two items (3 judgments each); of 41,
    none: the budget is spent."""
    sent_overlaps(monkeypatch)
    result, _ = planted_rounds(tmp_path / "a", monkeypatch, passes=2, budget_judgments=45)
    assert len(result.reopened) == 2  # type: ignore[attr-defined]
    assert rounds.read_rounds(result.record)[0]["budget_judgments"] == 45  # type: ignore[attr-defined]
    spent, _ = planted_rounds(tmp_path / "b", monkeypatch, passes=2, budget_judgments=41)
    assert spent.reopened == {} and spent.reason == rounds.BUDGET  # type: ignore[attr-defined]


def test_a_best_worst_pass_reopens_whole_items(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every item of the planted best-worst pool pushed and judged, two passes: the round re-opens --batch whole
    items (every tuple of each) for three more annotators, B against C (alike) still undecided."""
    from tests.analysis import rounds_planted as rp

    sent = sent_overlaps(monkeypatch)
    tasks = rp.best_worst(12)
    systems = {key: tuple(rp.BW_SYSTEMS[i] for i in rp.LAYOUT[int(key.rsplit("-", 1)[1])]) for _, key, _ in tasks}
    result, asked = by_item_round(tmp_path, monkeypatch, rp.example("summary-best-worst"), tasks, systems, 30.0, 12,
                                  passes=2)  # fmt: skip
    reopened = result.reopened  # type: ignore[attr-defined]
    assert asked == [] and set(reopened.values()) == {6} and sent == [reopened]
    items = {key.rsplit("-", 1)[0] for key in reopened}
    assert len(items) == 4 and len(reopened) == 4 * len(rp.LAYOUT)  # whole items, --batch 4 of them
    assert all(c.pass_ == 1 for c in result.comparisons)  # type: ignore[attr-defined]


# ----------------------------------------------------------------------------- an item counts once complete


def test_a_round_needs_a_complete_item_of_the_last_round_and_counts_only_complete_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Overlap 3. Round 1 reads six complete items and pushes four more. A pull where each of the four has one
    judgment of three is refused in one line (rounds would pile up, deciding nothing new); once two are complete the
    round goes on, counting eight items, and says (and records) that two wait."""
    from annols.study import manifest

    definition = planted.definition(planted.RATINGS)
    tidy, _ = planted.frames(planted.ratings())
    counts = tidy.groupby("task_key")["annotator"].nunique()
    keys = sorted(str(k) for k in counts[counts == 3].index)  # the twelve items judged by a, b and c
    monkeypatch.setattr(rounds, "pool", lambda d, inputs: {k: ("good", "fair", "poor") for k in keys})
    monkeypatch.setattr(rounds.push_lib, "push", lambda client, d, inputs, o: None)
    path = manifest.manifest_path(tmp_path, "waiting")

    def run(pushed: list[str], part: object) -> rounds.RoundResult:
        manifest.write_manifest(path, {"protocol": definition.name},
                                {k: (i, ("good", "fair", "poor")) for i, k in enumerate(pushed)})  # fmt: skip
        options = rounds.RoundOptions(title="waiting", effect=0.1, batch=4, overlap=3, manifest_dir=tmp_path)
        return rounds.next_round(None, definition, [], part, options)  # type: ignore[arg-type]

    first = keys[:6]
    result = run(first, tidy[tidy["task_key"].isin(first)])
    assert result.waiting == 0 and len(result.pushed) == 4
    pushed = [*first, *result.pushed]
    one_each = tidy[tidy["task_key"].isin(first) | (tidy["task_key"].isin(result.pushed) & (tidy["annotator"] == "a"))]
    with pytest.raises(AnnolsError) as e:
        run(pushed, one_each)
    said = "none of the 4 item(s) round 1 pushed has all its judgments in the pull (4 of them have some)"
    assert said in str(e.value)
    assert "\n" not in str(e.value) and len(rounds.read_rounds(result.record)) == 1
    two_done = pd.concat([one_each, tidy[tidy["task_key"].isin(result.pushed[:2]) & (tidy["annotator"] != "a")]])
    later = run(pushed, two_done)
    assert later.waiting == 2 and all(c.items == 8 for c in later.comparisons)
    assert rounds.read_rounds(later.record)[-1]["waiting"] == 2


def test_a_best_worst_item_waits_for_every_tuple_and_the_record_keeps_the_tasks_of_each_item(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Twenty best-worst items pushed: item 0 has a tuple nobody has judged yet, item 1 a tuple with two answers of
    three. Both wait; the comparisons count the other eighteen; the round's record keeps how many tasks each item it
    pushed holds, so that the report knows an item's unjudged tuples."""
    from tests.analysis import rounds_planted as rp

    tasks = rp.best_worst(40)
    systems = {key: tuple(rp.BW_SYSTEMS[i] for i in rp.LAYOUT[int(key.rsplit("-", 1)[1])]) for _, key, _ in tasks}
    looked = [(item, key, {} if key == "bw-0-0" else {a: j for a, j in answers.items() if a != "c"}
               if key == "bw-1-1" else answers) for item, key, answers in tasks]  # fmt: skip
    result, asked = by_item_round(tmp_path, monkeypatch, rp.example("summary-best-worst"), looked, systems, 30.0, 20)
    assert result.waiting == 2  # type: ignore[attr-defined]
    assert all(c.items == 18 for c in result.comparisons)  # type: ignore[attr-defined]
    record = rounds.read_rounds(result.record)[0]  # type: ignore[attr-defined]
    assert record["waiting"] == 2 and record["item_tasks"] == [len(rp.LAYOUT)] * 4
    assert sum(record["item_tasks"]) == len(record["pushed"]) == len(asked[0])


def test_next_round_says_how_many_items_wait(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The command line: the planted ratings study as the pull, --overlap 3: the item judged by one annotator of
    three is named as waiting (the server and the pull's reading are the live tests')."""
    from click.testing import CliRunner

    from annols import cli
    from annols.study import manifest
    from annols.study import table as study_table

    definition = planted.definition(planted.RATINGS)
    tidy, _ = planted.frames(planted.ratings())
    keys = sorted(tidy["task_key"].unique())
    monkeypatch.setattr(rounds, "pool", lambda d, inputs: {k: ("good", "fair", "poor") for k in keys})
    monkeypatch.setattr(cli, "_load", lambda protocol, variant: definition)
    monkeypatch.setattr(cli, "_connect", lambda url, api_key, data_dir: None)
    monkeypatch.setattr(study_table, "read_judgments", lambda d, sources, rounds=False: (tidy, ""))
    manifest.write_manifest(manifest.manifest_path(tmp_path, "waiting"), {"protocol": definition.name},
                            {k: (i, ("good", "fair", "poor")) for i, k in enumerate(keys)})  # fmt: skip
    pool = tmp_path / "pool.jsonl"
    pool.write_text("{}\n", encoding="utf-8")
    result = CliRunner().invoke(cli.main, ["next-round", "pairwise-aspects", str(pool), "--project", "waiting",
                                           "--effect", "0.5", "--overlap", "3", "--budget", str(len(keys)),
                                           "--pull", str(tmp_path), "--manifest-dir", str(tmp_path)])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "1 item(s) waiting for judgments: judged but not complete, left out until they are" in result.output
    assert "coherence: good vs poor: 12 items" in result.output


# ----------------------------------------------------------------------------- adaptive pairs


FOUR = {f"p{i}": pair for i, pair in enumerate([("a", "b"), ("a", "c"), ("a", "d"), ("b", "c"), ("b", "d"),
                                                ("c", "d")] * 10)}  # fmt: skip


def test_adaptive_pairs_push_the_sampler_s_pairs_each_in_the_seeded_order_of_its_items() -> None:
    """The observations so far: a and b alike, both far above c and d. The adaptive chooser pushes items of the pairs
    :func:`annols.analysis.planning.pair_sampler.next_pairs` picks, as often as it picks them, each pair's items the
    first unpushed ones of the uniform chooser's seeded order; never a pushed item, never a decided pair's."""
    from annols.analysis.planning import pair_sampler

    found = {("q", "a", "b"): pd.Series([0.0, 1 / 3, -1 / 3, 0.0]), ("q", "a", "c"): pd.Series([1.0, 1.0, 1 / 3]),
             ("q", "a", "d"): pd.Series([1.0, 1.0, 1.0]), ("q", "b", "c"): pd.Series([1.0, 1 / 3, 1.0]),
             ("q", "b", "d"): pd.Series([1.0, 1.0]), ("q", "c", "d"): pd.Series([1 / 3, -1 / 3])}  # fmt: skip
    pushed = {"p0", "p1", "p2"}
    open_pairs = {("a", "b"), ("a", "c"), ("b", "c"), ("c", "d")}  # a-d and b-d decided
    chosen = rounds._adaptive(found)(FOUR, pushed, open_pairs, 8, 5)
    battles = {"q": [(a, b, (1 + v) / 2) for (_, a, b), x in found.items() for v in x]}
    order = rounds._choose(FOUR, pushed, open_pairs, len(FOUR), 5)
    room = {p: sum(FOUR[k] == p for k in order) for p in open_pairs}
    pairs = pair_sampler.next_pairs(["a", "b", "c", "d"], battles, sorted(open_pairs), 8, 5, room=room)
    assert [FOUR[k] for k in chosen] == pairs and len(chosen) == 8 == len(set(chosen))
    assert not set(chosen) & pushed and {FOUR[k] for k in chosen} <= open_pairs
    for pair in set(pairs):
        assert [k for k in chosen if FOUR[k] == pair] == [k for k in order if FOUR[k] == pair][: pairs.count(pair)]
    assert chosen == rounds._adaptive(found)(FOUR, pushed, open_pairs, 8, 5)  # seeded


def test_adaptive_pairs_are_fixed_at_round_1_and_need_a_pairwise_study_of_three_systems(tmp_path: Path) -> None:
    from annols.errors import OptionError

    pairwise = planted.definition(planted.PAIRWISE)
    record = tmp_path / "x.rounds.jsonl"
    assert rounds.pairs_of_study(pairwise, FOUR, record, {}, None) == rounds.UNIFORM
    assert rounds.pairs_of_study(pairwise, FOUR, record, {}, "adaptive") == rounds.ADAPTIVE
    assert rounds.pairs_of_study(pairwise, FOUR, record, {"pairs": "adaptive"}, None) == rounds.ADAPTIVE
    assert rounds.pairs_of_study(pairwise, FOUR, record, {"round": 1}, None) == rounds.UNIFORM  # a record before
    with pytest.raises(OptionError) as e:
        rounds.pairs_of_study(pairwise, FOUR, record, {"round": 1}, "adaptive")
    assert "--pairs adaptive" in str(e.value) and "'uniform', fixed at round 1" in str(e.value)
    assert "\n" not in str(e.value) and "rounds.jsonl" in str(e.value)
    with pytest.raises(OptionError, match="at least 3 systems"):
        rounds.pairs_of_study(pairwise, {"k": ("a", "b")}, record, {}, "adaptive")
    with pytest.raises(OptionError, match="style ratings"):
        rounds.pairs_of_study(planted.definition(planted.RATINGS), FOUR, record, {}, "adaptive")


def test_a_ratings_study_refuses_adaptive_pairs_and_uniform_records_no_pairs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from annols.errors import OptionError

    with pytest.raises(OptionError, match="--pairs adaptive"):
        planted_rounds(tmp_path / "a", monkeypatch, pairs="adaptive")
    result, _ = planted_rounds(tmp_path / "b", monkeypatch, pairs="uniform")
    assert "pairs" not in rounds.read_rounds(result.record)[0]  # type: ignore[attr-defined]


def test_adaptive_pairs_are_recorded_at_round_1_of_a_pairwise_study(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The planted pairwise study (three systems) as the pull of a project whose budget is spent: round 1 records
    --pairs adaptive; a later round keeps it without the option and refuses uniform."""
    from annols.errors import OptionError
    from annols.study import manifest

    definition = planted.definition(planted.PAIRWISE)
    tidy, _ = planted.frames(planted.pairwise())
    shown = {str(k): tuple(sorted({str(s) for s in part["system"].dropna()}))
             for k, part in tidy.groupby("task_key")}  # fmt: skip
    monkeypatch.setattr(rounds, "pool", lambda d, inputs: shown)
    path = manifest.manifest_path(tmp_path, "pairs")
    manifest.write_manifest(path, {"protocol": definition.name}, {k: (i, s) for i, (k, s) in enumerate(shown.items())})

    def run(pairs: str | None) -> rounds.RoundResult:
        options = rounds.RoundOptions(title="pairs", effect=0.3, budget=len(shown), overlap=3, manifest_dir=tmp_path,
                                      pairs=pairs)  # fmt: skip
        return rounds.next_round(None, definition, [], tidy, options)  # type: ignore[arg-type]

    result = run("adaptive")
    assert result.reason == rounds.BUDGET and rounds.read_rounds(result.record)[0]["pairs"] == "adaptive"
    assert run(None).reason == rounds.BUDGET
    with pytest.raises(OptionError, match="'adaptive', fixed at round 1"):
        run("uniform")
