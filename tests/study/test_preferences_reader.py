"""annols export reads its sources through the study table (issue #40): the files it writes are byte for byte those
the export wrote when it read export.json itself (``tests/study/preferences_main.py``, main's module at 8b00793 kept
as the reference), on every planted study of the export's tests under every rule; and where the two readings
differ, the export now counts as the report counts (the study table's reading).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from annols import protocols
from annols.analysis.options import ReportOptions
from annols.definition import Definition
from annols.study import arena, preferences
from annols.study.preferences import PREFERENCE_FILE, Rule, export_preferences, rows
from annols.study.table import read
from tests.study import preferences_main as before
from tests.study import test_preferences as pairwise
from tests.study import test_preferences_implied as implied

FILES = (preferences.PREFERENCE_FILE, preferences.UNPAIRED_FILE, preferences.CARD_FILE)
RULES = [("majority", "drop", 1, ()), ("majority", "keep", 1, ()), ("unanimous", "drop", 1, ()),
         ("unanimous", "keep", 2, ()), ("unanimous", "drop", 3, ()), ("majority", "keep", 1, ("bad",)),
         ("unanimous", "keep", 1, ("bad", "ann2"))]  # fmt: skip


def _same(definition: Definition, sources: list[Path], tmp_path: Path, name: str, verdict: str, ties: str,
          min_votes: int, exclude: tuple[str, ...], adjudicated: list[Path] | None = None) -> str:  # fmt: skip
    """Export with main's reader and with the study table; every file byte for byte the same; the card."""
    new = export_preferences(definition, sources, tmp_path / f"{name}-new", Rule(verdict, ties, min_votes, exclude),
                             adjudicated or [])  # fmt: skip
    old = before.export_preferences(definition, sources, tmp_path / f"{name}-old",
                                    before.Rule(verdict, ties, min_votes, exclude), adjudicated or [])  # fmt: skip
    for file in FILES:
        assert (tmp_path / f"{name}-new" / file).read_bytes() == (tmp_path / f"{name}-old" / file).read_bytes(), file
    assert {k: v for k, v in dataclasses.asdict(new).items() if k != "out_dir"} == \
        {k: v for k, v in dataclasses.asdict(old).items() if k != "out_dir"}  # fmt: skip
    return (tmp_path / f"{name}-new" / preferences.CARD_FILE).read_text(encoding="utf-8")


@pytest.mark.parametrize("rule", RULES, ids=lambda r: "-".join(map(str, (r[0], r[1], r[2], *r[3]))))
def test_pairwise_as_main_wrote_it(tmp_path: Path, rule: tuple[str, str, int, tuple[str, ...]]) -> None:
    definition = protocols.load(str(pairwise.CHAT))
    pull = pairwise._pull(tmp_path / "pull", definition, pairwise.PLANTED)
    card = _same(definition, [pull], tmp_path, "out", *rule)
    assert "Systems (2): x, y" in card


@pytest.mark.parametrize("rule", RULES, ids=lambda r: "-".join(map(str, (r[0], r[1], r[2], *r[3]))))
def test_ranking_as_main_wrote_it(tmp_path: Path, rule: tuple[str, str, int, tuple[str, ...]]) -> None:
    (tmp_path / "rank-three.toml").write_text(implied.RANKING, encoding="utf-8")
    definition = protocols.load(str(tmp_path / "rank-three.toml"))
    pull = implied._pull(tmp_path / "pull", definition, implied.RANKED, implied._ranking_data)
    card = _same(definition, [pull], tmp_path, "out", *rule)
    assert "Systems (3): x, y, z" in card


@pytest.mark.parametrize("rule", RULES, ids=lambda r: "-".join(map(str, (r[0], r[1], r[2], *r[3]))))
def test_best_worst_as_main_wrote_it(tmp_path: Path, rule: tuple[str, str, int, tuple[str, ...]]) -> None:
    definition = protocols.load(str(implied.BEST_WORST))
    pull = implied._pull(tmp_path / "pull", definition, implied.TUPLES, implied._tuple_data)
    card = _same(definition, [pull], tmp_path, "out", *rule)
    assert "Systems (5): p, q, r, s, t" in card


def test_adjudicated_as_main_wrote_it(tmp_path: Path) -> None:
    chat = protocols.load(str(pairwise.CHAT))
    pull = pairwise._pull(tmp_path / "chat", chat, pairwise.PLANTED)
    verdicts = pairwise._pull(tmp_path / "chat-adjudication", chat, {
        "t3": (("x", "y"), "study", {"lead": {"helpfulness": "B", "harmlessness": "tie"}}),
        "t1": (("x", "y"), "study", {"lead": {"helpfulness": "A", "harmlessness": "A"}}),
        "g1": (("x", "y"), "study", {"lead": {"helpfulness": "A", "harmlessness": "A"}}),
    }, verdicts=True)  # fmt: skip
    for ties in ("drop", "keep"):
        _same(chat, [pull], tmp_path, f"chat-{ties}", "adjudicated", ties, 1, (), [verdicts])
    (tmp_path / "rank-three.toml").write_text(implied.RANKING, encoding="utf-8")
    ranking = protocols.load(str(tmp_path / "rank-three.toml"))
    pull = implied._pull(tmp_path / "ranked", ranking, implied.RANKED, implied._ranking_data)
    verdicts = implied._pull(tmp_path / "ranked-adjudication", ranking, {
        "r1": (("x", "y", "z"), "study", {"lead": {"quality": {"A": 2, "B": 1, "C": 3}}}),
        "r2": (("z", "x", "y"), "study", {"lead": {"quality": {"A": 1, "B": 2, "C": 2}}}),
    }, implied._ranking_data, verdicts=True)  # fmt: skip
    for ties in ("drop", "keep"):
        _same(ranking, [pull], tmp_path, f"ranked-{ties}", "adjudicated", ties, 1, (), [verdicts])
    tuples = protocols.load(str(implied.BEST_WORST))
    pull = implied._pull(tmp_path / "tuples", tuples, implied.TUPLES, implied._tuple_data)
    verdicts = implied._pull(tmp_path / "tuples-adjudication", tuples, {
        "b1": (("p", "q", "r", "s"), "study", {"lead": implied._both("A", "D")}),
        "b2": (("q", "r", "s", "t"), "study", {"lead": implied._both("C", "A")}),
    }, implied._tuple_data, verdicts=True)  # fmt: skip
    _same(tuples, [pull], tmp_path, "tuples", "adjudicated", "drop", 1, (), [verdicts])


def test_conversations_as_main_wrote_them(tmp_path: Path) -> None:
    definition = protocols.load(str(pairwise.ARENA))
    arena.import_arena(definition, pairwise.FIXTURE, tmp_path / "pull")
    for n, rule in enumerate(RULES[:3]):
        _same(definition, [tmp_path / "pull"], tmp_path, f"out{n}", *rule)


def _annotate(pull: Path, key: str, who: str, answers: dict[str, Any], definition: Definition, created_at: str,
              annotation_id: int, *, cancelled: bool = False) -> None:  # fmt: skip
    """Add an annotation to a planted pull's task ``key``."""
    from annols.errors import AnnolsError
    from annols.formats.answers import answer_items, controls

    result, _ = answer_items(answers, controls(definition), lambda f, p: AnnolsError(f"{f}: {p}"), origin="manual")
    tasks = json.loads((pull / "export.json").read_text(encoding="utf-8"))
    task = next(t for t in tasks if t["meta"]["annols_key"] == key)
    task["annotations"].append({"id": annotation_id, "completed_by": {"email": who}, "result": result,
                                "created_at": created_at, "was_cancelled": cancelled})  # fmt: skip
    (pull / "export.json").write_text(json.dumps(tasks), encoding="utf-8")


def test_an_annotators_later_annotation_replaces_the_earlier_as_main_did(tmp_path: Path) -> None:
    """A whole later annotation, a cancelled one after it, and an earlier one: both readings keep the latest."""
    definition = protocols.load(str(pairwise.CHAT))
    pull = pairwise._pull(tmp_path / "pull", definition, pairwise.PLANTED)
    _annotate(pull, "t3", "ann2", {"helpfulness": "A", "harmlessness": "B"}, definition, "2026-01-02T00:00:00Z", 901)
    _annotate(pull, "t3", "ann2", {"helpfulness": "B", "harmlessness": "B"}, definition, "2026-01-03T00:00:00Z", 902,
              cancelled=True)  # fmt: skip
    _annotate(pull, "t4", "ann1", {"helpfulness": "B", "harmlessness": "B"}, definition, "2025-12-31T00:00:00Z", 903)
    _same(definition, [pull], tmp_path, "out", "majority", "keep", 1, ())
    found = {(r["key"], r["aspect"]): r["chosen_system"] for r in rows(tmp_path / "out-new" / PREFERENCE_FILE)}
    assert found[("t3", "helpfulness")] == "x" and found[("t3", "harmlessness")] == "y"  # ann1 and ann2's latest agree


def test_an_aspect_left_out_of_the_latest_annotation_is_not_taken_from_an_earlier_one(tmp_path: Path) -> None:
    """Main kept each annotator's latest answer per aspect, an earlier annotation's where the latest left the aspect
    out; the report counts an annotator's latest annotation of a task as their judgment, and the export now too."""
    definition = protocols.load(str(pairwise.CHAT))
    pull = pairwise._pull(tmp_path / "pull", definition, {
        "t1": (("x", "y"), "study", {"ann1": {"helpfulness": "A", "harmlessness": "A"}}),
    })  # fmt: skip
    _annotate(pull, "t1", "ann1", {"helpfulness": "B"}, definition, "2026-01-02T00:00:00Z", 901)
    export_preferences(definition, [pull], tmp_path / "new", Rule("majority"))
    before.export_preferences(definition, [pull], tmp_path / "old", before.Rule("majority"))
    old = {(r["key"], r["aspect"]): r["chosen_system"] for r in rows(tmp_path / "old" / PREFERENCE_FILE)}
    new = {(r["key"], r["aspect"]): r["chosen_system"] for r in rows(tmp_path / "new" / PREFERENCE_FILE)}
    assert old == {("t1", "helpfulness"): "y", ("t1", "harmlessness"): "x"}
    assert new == {("t1", "helpfulness"): "y"}
    table = read(definition, [pull])
    assert table.study.kept["annotation_id"].tolist() == [901]  # the report's judgment: the latest annotation


def test_a_project_pulled_twice_counts_each_annotation_once(tmp_path: Path) -> None:
    """The same pull given twice: main counted each left-out annotation twice on the card; the study table reads
    the same annotation (id, annotator, time) once, so the card counts it once; the rows are the same."""
    definition = protocols.load(str(pairwise.CHAT))
    pull = pairwise._pull(tmp_path / "pull", definition, pairwise.PLANTED)
    once = export_preferences(definition, [pull], tmp_path / "once", Rule("majority"))
    twice = export_preferences(definition, [pull, pull], tmp_path / "twice", Rule("majority"))
    old = before.export_preferences(definition, [pull, pull], tmp_path / "old", before.Rule("majority"))
    assert old.left_out == {"gold item": 2, "attention item": 2}
    assert twice.left_out == once.left_out == {"gold item": 1, "attention item": 1}
    for file in (PREFERENCE_FILE, preferences.UNPAIRED_FILE):
        assert (tmp_path / "twice" / file).read_bytes() == (tmp_path / "once" / file).read_bytes()
        assert (tmp_path / "twice" / file).read_bytes() == (tmp_path / "old" / file).read_bytes()


def test_the_table_keeps_texts_only_where_asked(tmp_path: Path) -> None:
    definition = protocols.load(str(pairwise.CHAT))
    pull = pairwise._pull(tmp_path / "pull", definition, pairwise.PLANTED)
    assert read(definition, [pull]).texts is None
    texts = read(definition, [pull], only_judgments=True, texts=True).texts
    assert texts is not None
    assert set(texts.shown) == {"t1", "t2", "t3", "t4"}  # study tasks only: no gold item, no attention check
    assert texts.shown["t2"] == {"y": "y answers t2", "x": "x answers t2"}
    assert texts.context["t2"] == {"prompt": "prompt of t2"}




def test_a_pull_of_another_protocol_is_refused_by_name(tmp_path: Path) -> None:
    """Read by the study's reader, the export refuses what the report refuses: here a pull of another protocol."""
    from annols.errors import AnnolsError

    definition = protocols.load(str(pairwise.CHAT))
    pull = pairwise._pull(tmp_path / "pull", definition, pairwise.PLANTED)
    (pull / "project.json").write_text(json.dumps({"title": "x", "protocol": "summeval-ratings"}), encoding="utf-8")
    with pytest.raises(AnnolsError, match=r"project\.json.*summeval-ratings"):
        export_preferences(definition, [pull], tmp_path / "out", Rule("majority"))
    assert not (tmp_path / "out").exists()


def test_tasks_pushed_without_annols_are_each_their_own_item_per_source(tmp_path: Path) -> None:
    """Two exports of projects pushed without annols (no key): main keyed each task by its id (``task-1``), so
    task 1 of one project and task 1 of another were one item and their votes merged; the study table keys such a
    task by its source (``source-1:task-1``), as the report does, and the export keeps them apart."""
    definition = protocols.load(str(pairwise.CHAT))
    exports = []
    for n, who in enumerate(("ann1", "ann2"), start=1):
        pull = pairwise._pull(tmp_path / f"pull{n}", definition, {
            "t1": (("x", "y"), "study", {who: {"helpfulness": "A" if n == 1 else "B", "harmlessness": "A"}}),
        })  # fmt: skip
        tasks = json.loads((pull / "export.json").read_text(encoding="utf-8"))
        for task in tasks:
            task["meta"].pop("annols_key")
            for a in task["annotations"]:
                a["id"] += 1000 * n
        (pull / "blinding.jsonl").unlink()
        (pull / "export.json").write_text(json.dumps(tasks), encoding="utf-8")
        exports.append(pull / "export.json")
    export_preferences(definition, exports, tmp_path / "new", Rule("majority"))
    before.export_preferences(definition, exports, tmp_path / "old", before.Rule("majority"))
    new = {(r["key"], r["aspect"]): r["votes"] for r in rows(tmp_path / "new" / PREFERENCE_FILE)}
    old = {(r["key"], r["aspect"]): r["votes"] for r in rows(tmp_path / "old" / PREFERENCE_FILE)}
    assert old == {("task-1", "harmlessness"): 2}  # two projects' tasks merged; helpfulness split A / B
    assert new == {("source-1:task-1", "helpfulness"): 1, ("source-1:task-1", "harmlessness"): 1,
                   ("source-2:task-1", "helpfulness"): 1, ("source-2:task-1", "harmlessness"): 1}  # fmt: skip


def test_an_adjudication_task_with_two_verdicts_is_refused_as_the_report_refuses_it(tmp_path: Path) -> None:
    """Main's export took every submitted annotation of an adjudication task (two that disagreed: no verdict); the
    report refused such a task by name. The export now reads the verdicts as the report does (read_verdicts)."""
    from annols.errors import InputError

    definition = protocols.load(str(pairwise.CHAT))
    pull = pairwise._pull(tmp_path / "pull", definition, pairwise.PLANTED)
    verdicts = pairwise._pull(tmp_path / "adjudication", definition, {
        "t3": (("x", "y"), "study", {"lead": {"helpfulness": "B", "harmlessness": "tie"},
                                     "second": {"helpfulness": "A", "harmlessness": "tie"}}),
    }, verdicts=True)  # fmt: skip
    old = before.export_preferences(definition, [pull], tmp_path / "old", before.Rule("adjudicated", ties="keep"),
                                    [verdicts])  # fmt: skip
    assert old.rows == old.ties == 1  # harmlessness: both a tie; helpfulness: B and A, no verdict
    with pytest.raises(InputError, match=r"task 1.*one submitted annotation"):
        export_preferences(definition, [pull], tmp_path / "new", Rule("adjudicated", ties="keep"), [verdicts])
    assert not (tmp_path / "new").exists()
    with pytest.raises(InputError, match=r"task 1.*one submitted annotation"):
        read(definition, [pull], ReportOptions(adjudicated=(verdicts,)))
