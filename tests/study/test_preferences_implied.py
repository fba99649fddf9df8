"""Preference data out of ranking and best-worst studies: the pairs their judgments imply, each export rule on
planted studies whose every expected row is written out by hand below, never a gold, attention or excluded
annotator's judgment, the card saying the pairs are implied and from which style, and the files loading with
Hugging Face ``datasets`` in TRL's documented columns.

A ranking of n candidates implies its n(n-1)/2 pairs (equal ranks: a tie); a best-worst tuple implies its best
over each other candidate and each other over its worst (best over worst once, nothing between the others). An
annotator votes once on a pair of an item however many of its tuples hold the pair; tuples of one annotator that
imply opposite outcomes give that annotator no vote on the pair (self-contradicting; never a tie).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from annols import protocols
from annols.definition import Definition, blinding
from annols.errors import AnnolsError
from annols.formats.answers import answer_items, controls
from annols.study.preferences import CARD_FILE, PREFERENCE_FILE, UNPAIRED_FILE, Rule, export_preferences, rows

ROOT = Path(__file__).resolve().parents[2]
BEST_WORST = ROOT / "examples" / "summary-best-worst.toml"  # tuples of 4, aspects informativeness and fluency

RANKING = """name = "rank-three"
style = "ranking"
summary = "Rank three outputs."
guideline = "Rank the outputs."
positions = ["A", "B", "C"]

[[context]]
name = "document"
title = "Document"

[[dimensions]]
name = "quality"
text = "Overall quality"
"""

Planted = dict[str, tuple[tuple[str, ...], str, dict[str, dict[str, Any]]]]

# Ranking: key -> (systems shown, role, {annotator: ranks of the positions shown}).
RANKED: Planted = {
    "r1": (("x", "y", "z"), "study", {"ann1": {"quality": {"A": 1, "B": 2, "C": 3}},    # x > y > z
                                      "ann2": {"quality": {"A": 1, "B": 3, "C": 2}},    # x > z > y
                                      "ann3": {"quality": {"A": 2, "B": 1, "C": 3}},    # y > x > z
                                      "bad": {"quality": {"A": 3, "B": 2, "C": 1}}}),   # z > y > x
    "r2": (("z", "x", "y"), "study", {"ann1": {"quality": {"A": 1, "B": 2, "C": 2}},    # z > x = y
                                      "ann2": {"quality": {"A": 1, "B": 2, "C": 2}}}),  # z > x = y
    "g1": (("x", "y", "z"), "gold", {"ann1": {"quality": {"A": 3, "B": 2, "C": 1}}}),
    "c1": (("x", "y", "z"), "attention", {"ann2": {"quality": {"A": 3, "B": 1, "C": 2}}}),
}  # fmt: skip


def _both(best: str, worst: str) -> dict[str, str]:
    return {"informativeness_best": best, "informativeness_worst": worst, "fluency_best": best,
            "fluency_worst": worst}  # fmt: skip


# Best-worst: one pool (one article) of five systems p..t; tuples b1 and b2 with the same context.
TUPLES: Planted = {
    "b1": (("p", "q", "r", "s"), "study", {"ann1": _both("A", "D"),     # p best, s worst
                                           "ann2": _both("B", "D")}),   # q best, s worst
    "b2": (("q", "r", "s", "t"), "study", {"ann1": _both("B", "D"),     # r best, t worst
                                           "ann3": _both("A", "A"),     # best = worst: a violation, not counted
                                           "bad": _both("D", "C")}),    # t best, s worst
    "g1": (("p", "q", "r", "s"), "gold", {"ann1": _both("D", "A")}),
    "c1": (("p", "q", "r", "s"), "attention", {"ann2": _both("D", "A")}),
}  # fmt: skip


def _ranking_data(key: str, systems: tuple[str, ...]) -> dict[str, Any]:
    return {"document": f"document of {key}", **{f"output_{'abc'[i]}": f"{s} on {key}" for i, s in enumerate(systems)}}


def _tuple_data(key: str, systems: tuple[str, ...]) -> dict[str, Any]:
    return {"document": "the article", **{f"summary_{i + 1}": f"summary by {s}" for i, s in enumerate(systems)}}


def _pull(folder: Path, definition: Definition, planted: Planted, data: Callable[[str, tuple[str, ...]], Any],
          *, verdicts: bool = False) -> Path:  # fmt: skip
    """A pull folder as pull writes it (export.json, blinding.jsonl); ``verdicts``: an adjudication pull."""
    known = controls(definition)
    tasks, blind = [], []
    for n, (key, (systems, role, votes)) in enumerate(sorted(planted.items()), start=1):
        annotations = []
        for m, (who, answers) in enumerate(sorted(votes.items()), start=1):
            result, _ = answer_items(answers, known, lambda f, p: AnnolsError(f"{f}: {p}"), origin="manual")
            annotations.append({"id": 100 * n + m, "completed_by": {"email": who}, "result": result,
                                "created_at": f"2026-01-01T00:00:{m:02d}Z", "was_cancelled": False})  # fmt: skip
        meta: dict[str, Any] = {"annols_key": key}
        if verdicts:
            meta.update({"annols_adjudication": True, "annols_systems": blinding.encode_systems(systems)})
        tasks.append({"id": n, "data": data(key, systems), "meta": meta, "annotations": annotations})
        blind.append({"task_id": n, "key": key, "systems": list(systems), "order": list(range(len(systems))),
                      "role": role})  # fmt: skip
    folder.mkdir(parents=True)
    (folder / "export.json").write_text(json.dumps(tasks), encoding="utf-8")
    if not verdicts:
        (folder / "blinding.jsonl").write_text("".join(json.dumps(b) + "\n" for b in blind), encoding="utf-8")
    return folder


@pytest.fixture
def ranking(tmp_path: Path) -> tuple[Definition, Path]:
    (tmp_path / "rank-three.toml").write_text(RANKING, encoding="utf-8")
    definition = protocols.load(str(tmp_path / "rank-three.toml"))
    return definition, _pull(tmp_path / "pull", definition, RANKED, _ranking_data)


@pytest.fixture
def tuples(tmp_path: Path) -> tuple[Definition, Path]:
    definition = protocols.load(str(BEST_WORST))
    return definition, _pull(tmp_path / "pull", definition, TUPLES, _tuple_data)


def _found(out: Path, aspect: str) -> dict[tuple[str, str, str], tuple[str, int, Any]]:
    """(key, pair in name order) -> (chosen system, votes, tie) of the preference file's rows of ``aspect``."""
    found = {}
    for r in rows(out / PREFERENCE_FILE):
        if r["aspect"] == aspect:
            pair = tuple(sorted((r["chosen_system"], r["rejected_system"])))
            found[(r["key"], *pair)] = (r["chosen_system"], r["votes"], r.get("tie"))
    return found


# --- ranking ----------------------------------------------------------------------------------------------


def test_ranking_majority_of_the_implied_pairs(ranking: tuple[Definition, Path], tmp_path: Path) -> None:
    definition, pull = ranking
    done = export_preferences(definition, [pull], tmp_path / "out", Rule("majority", exclude=("bad",)))
    assert _found(tmp_path / "out", "quality") == {
        ("r1", "x", "y"): ("x", 3, None),  # x, x, y
        ("r1", "x", "z"): ("x", 3, None),  # x, x, x
        ("r1", "y", "z"): ("y", 3, None),  # y, z, y
        ("r2", "x", "z"): ("z", 2, None),
        ("r2", "y", "z"): ("z", 2, None),
    }  # r2's x = y is a tie: dropped
    assert done.no_verdict == 0 and done.ties == 0
    assert done.left_out == {"gold item": 1, "attention item": 1, "excluded annotator": 1}
    assert all(r["implied_from"] == "ranking" for r in rows(tmp_path / "out" / PREFERENCE_FILE))
    row = next(r for r in rows(tmp_path / "out" / PREFERENCE_FILE) if r["key"] == "r2" and r["chosen_system"] == "z"
               and r["rejected_system"] == "y")  # fmt: skip
    assert (row["prompt"], row["chosen"], row["rejected"]) == ("document of r2", "z on r2", "y on r2")


def test_ranking_an_excluded_annotator_changes_nothing_and_appears_nowhere(ranking: tuple[Definition, Path],
                                                                         tmp_path: Path) -> None:  # fmt: skip
    definition, pull = ranking
    export_preferences(definition, [pull], tmp_path / "with", Rule("majority"))
    found = _found(tmp_path / "with", "quality")
    assert found[("r1", "x", "z")] == ("x", 4, None)  # x, x, x and bad's z
    assert ("r1", "x", "y") not in found  # x, x, y, y: no majority
    done = export_preferences(definition, [pull], tmp_path / "out", Rule("majority", exclude=("bad",)))
    assert "bad" not in done.annotators


def test_ranking_ties_in_rank_are_kept_as_tie_rows(ranking: tuple[Definition, Path], tmp_path: Path) -> None:
    definition, pull = ranking
    done = export_preferences(definition, [pull], tmp_path / "out", Rule("majority", ties="keep", exclude=("bad",)))
    found = _found(tmp_path / "out", "quality")
    assert found[("r2", "x", "y")] == ("x", 2, True)  # the tie, its candidates in name order
    assert found[("r1", "x", "y")] == ("x", 3, False)
    assert done.ties == 1
    unpaired = list(rows(tmp_path / "out" / UNPAIRED_FILE))
    assert len(unpaired) == 2 * (done.rows - done.ties)
    assert sum(r["key"] == "r2" for r in unpaired) == 2 * 2  # r2's (x, z) and (y, z); its tie never


def test_ranking_unanimous(ranking: tuple[Definition, Path], tmp_path: Path) -> None:
    definition, pull = ranking
    export_preferences(definition, [pull], tmp_path / "one", Rule("unanimous", exclude=("bad",)))
    assert set(_found(tmp_path / "one", "quality")) == {("r1", "x", "z"), ("r2", "x", "z"), ("r2", "y", "z")}
    export_preferences(definition, [pull], tmp_path / "three", Rule("unanimous", min_votes=3, exclude=("bad",)))
    assert set(_found(tmp_path / "three", "quality")) == {("r1", "x", "z")}


def test_ranking_adjudicated_gives_the_pairs_of_the_adjudicated_ranking(ranking: tuple[Definition, Path],
                                                                        tmp_path: Path) -> None:  # fmt: skip
    definition, pull = ranking
    verdicts = _pull(tmp_path / "adjudication", definition, {
        "r1": (("x", "y", "z"), "study", {"lead": {"quality": {"A": 2, "B": 1, "C": 3}}}),  # y > x > z
        "g1": (("x", "y", "z"), "study", {"lead": {"quality": {"A": 1, "B": 2, "C": 3}}}),
    }, _ranking_data, verdicts=True)  # fmt: skip
    export_preferences(definition, [pull], tmp_path / "out", Rule("adjudicated"), [verdicts])
    assert _found(tmp_path / "out", "quality") == {
        ("r1", "x", "y"): ("y", 1, None), ("r1", "x", "z"): ("x", 1, None), ("r1", "y", "z"): ("y", 1, None),
    }  # r2 was not adjudicated; g1 is a gold item of the study  # fmt: skip


# --- best-worst --------------------------------------------------------------------------------------------

# Every pair the planted tuples imply, by hand, one vote per annotator (b1: p best, s worst by ann1; q best, s worst
# by ann2; b2: r best, t worst by ann1; bad's b2: t best, s worst). (p, t) are never in one tuple.
TUPLE_VOTES = {
    ("p", "q"): ["p", "q"], ("p", "r"): ["p"], ("p", "s"): ["p", "p"],  # (p, r): b1 ann2 has both in the middle
    ("q", "r"): ["q", "r"],  # b1 ann1: both in the middle, nothing; b1 ann2: q; b2 ann1: r
    ("q", "s"): ["q", "q"],  # b1 ann1, b1 ann2 (b2 ann1: both in the middle)
    ("r", "s"): ["r", "r"],  # ann1 (r over s in b1 and in b2: one vote), ann2
    ("q", "t"): ["q"], ("r", "t"): ["r"], ("s", "t"): ["s"],
}  # fmt: skip


def test_best_worst_majority_of_the_implied_pairs(tuples: tuple[Definition, Path], tmp_path: Path) -> None:
    definition, pull = tuples
    done = export_preferences(definition, [pull], tmp_path / "out", Rule("majority", exclude=("bad",)))
    expected = {}
    for pair, votes in TUPLE_VOTES.items():
        top = max(set(votes), key=votes.count)
        if votes.count(top) * 2 > len(votes):
            expected[("b1", *pair)] = (top, len(votes), None)
    assert expected == {("b1", "p", "s"): ("p", 2, None), ("b1", "q", "s"): ("q", 2, None),
                        ("b1", "p", "r"): ("p", 1, None), ("b1", "r", "s"): ("r", 2, None),
                        ("b1", "q", "t"): ("q", 1, None), ("b1", "r", "t"): ("r", 1, None),
                        ("b1", "s", "t"): ("s", 1, None)}  # fmt: skip
    for aspect in ("informativeness", "fluency"):
        assert _found(tmp_path / "out", aspect) == expected
    assert done.tasks == 1  # the two tuples of the article are one item
    assert done.no_verdict == 2 * 2  # (p, q) and (q, r) split, in both aspects
    assert done.left_out == {"gold item": 1, "attention item": 1, "excluded annotator": 1}
    row = next(r for r in rows(tmp_path / "out" / PREFERENCE_FILE) if r["chosen_system"] == "r"
               and r["rejected_system"] == "s")  # fmt: skip
    assert (row["prompt"], row["chosen"], row["rejected"], row["implied_from"]) == (
        "the article", "summary by r", "summary by s", "best-worst")


def test_best_worst_unanimous_and_the_fewest_votes(tuples: tuple[Definition, Path], tmp_path: Path) -> None:
    definition, pull = tuples
    export_preferences(definition, [pull], tmp_path / "two", Rule("unanimous", min_votes=2, exclude=("bad",)))
    assert _found(tmp_path / "two", "fluency") == {("b1", "p", "s"): ("p", 2, None), ("b1", "q", "s"): ("q", 2, None),
                                                   ("b1", "r", "s"): ("r", 2, None)}  # fmt: skip
    export_preferences(definition, [pull], tmp_path / "three", Rule("unanimous", min_votes=3, exclude=("bad",)))
    assert set(_found(tmp_path / "three", "fluency")) == set()  # two annotators: no pair has three votes


def test_best_worst_an_excluded_annotator_counts_only_when_not_excluded(tuples: tuple[Definition, Path],
                                                                        tmp_path: Path) -> None:  # fmt: skip
    definition, pull = tuples
    export_preferences(definition, [pull], tmp_path / "with", Rule("majority"))
    found = _found(tmp_path / "with", "fluency")
    # bad's b2 (t best, s worst): t over q, r and s, and q, r over s
    assert found[("b1", "r", "s")] == ("r", 3, None) and found[("b1", "q", "s")] == ("q", 3, None)
    assert not {("b1", "q", "t"), ("b1", "r", "t"), ("b1", "s", "t")} & set(found)  # now split one to one


def test_best_worst_one_annotator_in_two_tuples_is_one_vote(tmp_path: Path) -> None:
    # ann1 alone judged both tuples of the article: r over s in each (p best, s worst; r best, t worst).
    definition = protocols.load(str(BEST_WORST))
    pull = _pull(tmp_path / "pull", definition, {
        "b1": (("p", "q", "r", "s"), "study", {"ann1": _both("A", "D")}),
        "b2": (("q", "r", "s", "t"), "study", {"ann1": _both("B", "D")}),
    }, _tuple_data)  # fmt: skip
    done = export_preferences(definition, [pull], tmp_path / "two", Rule("unanimous", min_votes=2))
    assert done.rows == 0 and list(rows(tmp_path / "two" / PREFERENCE_FILE)) == []  # one annotator: one vote
    export_preferences(definition, [pull], tmp_path / "one", Rule("unanimous", min_votes=1))
    found = _found(tmp_path / "one", "fluency")
    assert found[("b1", "r", "s")] == ("r", 1, None) and found[("b1", "q", "s")] == ("q", 1, None)
    assert {votes for _, votes, _ in found.values()} == {1}


def test_best_worst_an_annotator_whose_tuples_contradict_gives_no_vote_on_the_pair(tmp_path: Path) -> None:
    # ann1: q best, s worst in b1 (q over s, r over s, q over r) and s best, q worst in b2 (s over q, s over r,
    # r over q): on (q, s), (r, s) and (q, r) ann1 contradicts itself. ann2: q best, p worst in b1.
    definition = protocols.load(str(BEST_WORST))
    pull = _pull(tmp_path / "pull", definition, {
        "b1": (("p", "q", "r", "s"), "study", {"ann1": _both("B", "D"), "ann2": _both("B", "A")}),
        "b2": (("q", "r", "s", "t"), "study", {"ann1": _both("C", "A")}),
    }, _tuple_data)  # fmt: skip
    done = export_preferences(definition, [pull], tmp_path / "out", Rule("majority", ties="keep"))
    expected = {
        ("b1", "p", "q"): ("q", 2, False),  # ann1 (b1), ann2
        ("b1", "p", "r"): ("r", 1, False),  # ann2 (ann1's b1 has both in the middle)
        ("b1", "q", "r"): ("q", 1, False),  # ann2; ann1 dropped (q in b1, r in b2)
        ("b1", "q", "s"): ("q", 1, False),  # ann2; ann1 dropped (q in b1, s in b2)
        ("b1", "s", "t"): ("s", 1, False),  # ann1 (b2)
        ("b1", "q", "t"): ("t", 1, False),  # ann1 (b2)
    }  # (p, s): ann1 p, ann2 s, split; (r, s): ann1 dropped, nobody else: no verdict; never a tie row
    for aspect in ("informativeness", "fluency"):
        assert _found(tmp_path / "out", aspect) == expected
    assert done.contradicting == 3 * 2 and done.no_verdict == 2 * 2 and done.ties == 0
    assert "6 vote(s) dropped here" in (tmp_path / "out" / CARD_FILE).read_text(encoding="utf-8")


def test_best_worst_ties_kept_changes_nothing_without_ties(tuples: tuple[Definition, Path], tmp_path: Path) -> None:
    definition, pull = tuples
    done = export_preferences(definition, [pull], tmp_path / "out", Rule("majority", ties="keep", exclude=("bad",)))
    assert done.ties == 0 and all(r["tie"] is False for r in rows(tmp_path / "out" / PREFERENCE_FILE))


def test_best_worst_adjudicated_tuples_that_disagree_give_no_verdict(tuples: tuple[Definition, Path],
                                                                     tmp_path: Path) -> None:  # fmt: skip
    definition, pull = tuples
    verdicts = _pull(tmp_path / "adjudication", definition, {
        "b1": (("p", "q", "r", "s"), "study", {"lead": _both("A", "D")}),  # p best, s worst
        "b2": (("q", "r", "s", "t"), "study", {"lead": _both("C", "A")}),  # s best, q worst
    }, _tuple_data, verdicts=True)  # fmt: skip
    export_preferences(definition, [pull], tmp_path / "out", Rule("adjudicated"), [verdicts])
    assert {k[1:]: v[0] for k, v in _found(tmp_path / "out", "informativeness").items()} == {
        ("p", "q"): "p", ("p", "r"): "p", ("p", "s"): "p",  # b1
        ("q", "r"): "r", ("s", "t"): "s", ("q", "t"): "t",  # b2
    }  # (q, s) and (r, s): b1 says q and r, b2 says s: no verdict  # fmt: skip


# --- both ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("style", ["ranking", "best-worst"])
def test_gold_attention_and_excluded_never_reach_any_file(style: str, tmp_path: Path) -> None:
    if style == "ranking":
        (tmp_path / "rank-three.toml").write_text(RANKING, encoding="utf-8")
        definition = protocols.load(str(tmp_path / "rank-three.toml"))
        pull = _pull(tmp_path / "pull", definition, RANKED, _ranking_data)
    else:
        definition = protocols.load(str(BEST_WORST))
        pull = _pull(tmp_path / "pull", definition, TUPLES, _tuple_data)
    for n, rule in enumerate([Rule("majority", ties="keep", exclude=("bad",)),
                              Rule("unanimous", ties="keep", exclude=("bad",))]):  # fmt: skip
        done = export_preferences(definition, [pull], tmp_path / f"out{n}", rule)
        assert "bad" not in done.annotators
        for name in (PREFERENCE_FILE, UNPAIRED_FILE):
            text = (tmp_path / f"out{n}" / name).read_text(encoding="utf-8")
            assert '"g1"' not in text and '"c1"' not in text and "bad" not in text
        # every row's votes: counted again from the planted study's study items, the excluded left out
        for r in rows(tmp_path / f"out{n}" / PREFERENCE_FILE):
            assert r["key"] in ("r1", "r2", "b1")


@pytest.mark.parametrize("style", ["ranking", "best-worst"])
def test_the_card_says_the_pairs_are_implied_and_the_files_load_with_datasets(
    style: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE"):  # local files only: no traffic to the hub
        monkeypatch.setenv(name, "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    import datasets  # type: ignore[import-untyped, unused-ignore]

    if style == "ranking":
        (tmp_path / "rank-three.toml").write_text(RANKING, encoding="utf-8")
        definition = protocols.load(str(tmp_path / "rank-three.toml"))
        pull = _pull(tmp_path / "pull", definition, RANKED, _ranking_data)
    else:
        definition = protocols.load(str(BEST_WORST))
        pull = _pull(tmp_path / "pull", definition, TUPLES, _tuple_data)
    done = export_preferences(definition, [pull], tmp_path / "out", Rule("majority", exclude=("bad",)))
    card = (tmp_path / "out" / CARD_FILE).read_text(encoding="utf-8")
    assert f"implied by {'rankings' if style == 'ranking' else 'best-worst choices'}" in card
    assert f"implied_from = {style}" in card
    paired = datasets.load_dataset(str(tmp_path / "out"), "preference", split="train",
                                   cache_dir=str(tmp_path / "cache"))  # fmt: skip
    assert {"prompt", "chosen", "rejected", "implied_from"} <= set(paired.column_names) and len(paired) == done.rows
    assert set(paired["implied_from"]) == {style}
    assert all(isinstance(r["chosen"], str) and r["chosen"] != r["rejected"] for r in paired)
    unpaired = datasets.load_dataset(str(tmp_path / "out"), "unpaired", split="train",
                                     cache_dir=str(tmp_path / "cache"))  # fmt: skip
    assert {"prompt", "completion", "label"} <= set(unpaired.column_names) and len(unpaired) == done.unpaired
    assert set(unpaired["label"]) == {True, False}


def test_a_ratings_study_is_still_refused_in_one_line(tmp_path: Path) -> None:
    definition = protocols.load(str(ROOT / "examples" / "summeval-ratings.toml"))
    with pytest.raises(AnnolsError, match="pairwise, ranking and best-worst") as e:
        export_preferences(definition, [tmp_path], tmp_path / "out", Rule())
    assert "\n" not in str(e.value) and not (tmp_path / "out").exists()


def test_a_ranking_without_systems_names_the_positions_shown(ranking: tuple[Definition, Path], tmp_path: Path) -> None:
    definition, pull = ranking
    (pull / "blinding.jsonl").unlink()  # an export without annols' blinding: no systems, no roles
    export_preferences(definition, [pull], tmp_path / "out", Rule("majority", exclude=("bad",)))
    row = next(r for r in rows(tmp_path / "out" / PREFERENCE_FILE) if r["key"] == "r2" and r["chosen_system"] == "A"
               and r["rejected_system"] == "C")  # fmt: skip
    assert (row["chosen"], row["rejected"]) == ("z on r2", "y on r2")  # r2 shows z, x, y
