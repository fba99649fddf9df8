"""annols export reads its sources through the study table (issue #40): the files it writes are byte for byte those
the export wrote when it read export.json itself, main's module at 8b00793 (``annols/study/preferences.py`` there),
on every planted study of the export's tests under every rule; and where the two readings differ, the export now
counts as the report counts (the study table's reading).

Main's outputs are golden files under ``tests/data/preferences/``, one folder per case: the three files the export
writes (``preference.jsonl``, ``unpaired.jsonl``, ``README.md``) and ``counts.json``, the returned counts
(``dataclasses.asdict`` of :class:`Exported` without ``out_dir``). They were written once by main's module at
8b00793 on exactly these tests' inputs. The one part of a file that depends on the test's ``tmp_path`` is the card's
line naming the adjudication pulls: in the goldens and in the files compared to them, ``tmp_path`` is replaced by
``<tmp_path>``; nothing else is normalised, every other byte is compared as written.

``ANNOLS_UPDATE_PREFERENCES=1`` rewrites the goldens of the cases where the export must write what main wrote, from
the current code, and the diff shows what changed. Since those goldens are main's reading at 8b00793, a regeneration
is a change of the export's output and must be justified in its commit (a fix, named): it is not a way to make a
failing test pass. The folders ``main-*`` hold main's output where the export now deliberately differs from it; they
are never rewritten from the current code (they would no longer be main's), only from main's module at 8b00793.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import pytest

from annols import protocols
from annols.analysis.options import ReportOptions
from annols.definition import Definition
from annols.study import arena, preferences
from annols.study.preferences import PREFERENCE_FILE, Exported, Rule, export_preferences, rows
from annols.study.table import read
from tests.conftest import DATA
from tests.study import test_preferences as pairwise
from tests.study import test_preferences_implied as implied

GOLDEN = DATA / "preferences"
UPDATE = os.environ.get("ANNOLS_UPDATE_PREFERENCES") == "1"
TMP = b"<tmp_path>"  # what tmp_path becomes in a golden file and in the file compared to it
COUNTS = "counts.json"
FILES = (preferences.PREFERENCE_FILE, preferences.UNPAIRED_FILE, preferences.CARD_FILE)
RULES = [("majority", "drop", 1, ()), ("majority", "keep", 1, ()), ("unanimous", "drop", 1, ()),
         ("unanimous", "keep", 2, ()), ("unanimous", "drop", 3, ()), ("majority", "keep", 1, ("bad",)),
         ("unanimous", "keep", 1, ("bad", "ann2"))]  # fmt: skip


def _rule_id(rule: tuple[str, str, int, tuple[str, ...]]) -> str:
    return "-".join(map(str, (rule[0], rule[1], rule[2], *rule[3])))


# every golden folder, by the test that reads it (test_no_golden_folder_without_its_case checks the list)
CASES = {*(f"{study}-{_rule_id(r)}" for study in ("pairwise", "ranking", "best-worst") for r in RULES),
         *(f"conversations-{_rule_id(r)}" for r in RULES[:3]),
         *(f"adjudicated-{study}-{ties}" for study in ("chat", "ranked") for ties in ("drop", "keep")),
         "adjudicated-tuples-drop", "later-annotation",
         "main-aspect-left-out", "main-pulled-twice", "main-tasks-without-annols"}  # fmt: skip


def _normal(data: bytes, tmp_path: Path) -> bytes:
    """A written file with the test's tmp_path replaced by a placeholder (only the card names a path: the
    adjudication pulls)."""
    return data.replace(str(tmp_path).encode(), TMP)


def _counts(done: Exported) -> dict[str, Any]:
    """The returned counts as the golden ``counts.json`` holds them (JSON's lists and keys)."""
    return json.loads(json.dumps({k: v for k, v in dataclasses.asdict(done).items() if k != "out_dir"}))


def _write_golden(case: str, out: Path, done: Exported, tmp_path: Path) -> None:
    golden = GOLDEN / case
    golden.mkdir(parents=True, exist_ok=True)
    for file in FILES:
        (golden / file).write_bytes(_normal((out / file).read_bytes(), tmp_path))
    (golden / COUNTS).write_text(json.dumps(_counts(done), indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _main(case: str) -> Path:
    """The golden folder of main's output for ``case``."""
    golden = GOLDEN / case
    assert all((golden / f).exists() for f in (*FILES, COUNTS)), f"no golden {golden}: see this module's docstring"
    return golden


def _same(definition: Definition, sources: list[Path], tmp_path: Path, case: str, verdict: str, ties: str,
          min_votes: int, exclude: tuple[str, ...], adjudicated: list[Path] | None = None) -> str:  # fmt: skip
    """Export with the study table; every file byte for byte main's golden one (tmp_path normalised) and the same
    counts; the card."""
    out = tmp_path / f"{case}-out"
    done = export_preferences(definition, sources, out, Rule(verdict, ties, min_votes, exclude), adjudicated or [])
    if UPDATE:
        _write_golden(case, out, done, tmp_path)
    golden = _main(case)
    for file in FILES:
        assert _normal((out / file).read_bytes(), tmp_path) == (golden / file).read_bytes(), f"{case}: {file}"
    assert _counts(done) == json.loads((golden / COUNTS).read_text(encoding="utf-8")), case
    return (out / preferences.CARD_FILE).read_text(encoding="utf-8")


@pytest.mark.parametrize("rule", RULES, ids=_rule_id)
def test_pairwise_as_main_wrote_it(tmp_path: Path, rule: tuple[str, str, int, tuple[str, ...]]) -> None:
    definition = protocols.load(str(pairwise.CHAT))
    pull = pairwise._pull(tmp_path / "pull", definition, pairwise.PLANTED)
    card = _same(definition, [pull], tmp_path, f"pairwise-{_rule_id(rule)}", *rule)
    assert "Systems (2): x, y" in card


@pytest.mark.parametrize("rule", RULES, ids=_rule_id)
def test_ranking_as_main_wrote_it(tmp_path: Path, rule: tuple[str, str, int, tuple[str, ...]]) -> None:
    (tmp_path / "rank-three.toml").write_text(implied.RANKING, encoding="utf-8")
    definition = protocols.load(str(tmp_path / "rank-three.toml"))
    pull = implied._pull(tmp_path / "pull", definition, implied.RANKED, implied._ranking_data)
    card = _same(definition, [pull], tmp_path, f"ranking-{_rule_id(rule)}", *rule)
    assert "Systems (3): x, y, z" in card


@pytest.mark.parametrize("rule", RULES, ids=_rule_id)
def test_best_worst_as_main_wrote_it(tmp_path: Path, rule: tuple[str, str, int, tuple[str, ...]]) -> None:
    definition = protocols.load(str(implied.BEST_WORST))
    pull = implied._pull(tmp_path / "pull", definition, implied.TUPLES, implied._tuple_data)
    card = _same(definition, [pull], tmp_path, f"best-worst-{_rule_id(rule)}", *rule)
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
        _same(chat, [pull], tmp_path, f"adjudicated-chat-{ties}", "adjudicated", ties, 1, (), [verdicts])
    (tmp_path / "rank-three.toml").write_text(implied.RANKING, encoding="utf-8")
    ranking = protocols.load(str(tmp_path / "rank-three.toml"))
    pull = implied._pull(tmp_path / "ranked", ranking, implied.RANKED, implied._ranking_data)
    verdicts = implied._pull(tmp_path / "ranked-adjudication", ranking, {
        "r1": (("x", "y", "z"), "study", {"lead": {"quality": {"A": 2, "B": 1, "C": 3}}}),
        "r2": (("z", "x", "y"), "study", {"lead": {"quality": {"A": 1, "B": 2, "C": 2}}}),
    }, implied._ranking_data, verdicts=True)  # fmt: skip
    for ties in ("drop", "keep"):
        _same(ranking, [pull], tmp_path, f"adjudicated-ranked-{ties}", "adjudicated", ties, 1, (), [verdicts])
    tuples = protocols.load(str(implied.BEST_WORST))
    pull = implied._pull(tmp_path / "tuples", tuples, implied.TUPLES, implied._tuple_data)
    verdicts = implied._pull(tmp_path / "tuples-adjudication", tuples, {
        "b1": (("p", "q", "r", "s"), "study", {"lead": implied._both("A", "D")}),
        "b2": (("q", "r", "s", "t"), "study", {"lead": implied._both("C", "A")}),
    }, implied._tuple_data, verdicts=True)  # fmt: skip
    _same(tuples, [pull], tmp_path, "adjudicated-tuples-drop", "adjudicated", "drop", 1, (), [verdicts])


def test_conversations_as_main_wrote_them(tmp_path: Path) -> None:
    definition = protocols.load(str(pairwise.ARENA))
    arena.import_arena(definition, pairwise.FIXTURE, tmp_path / "pull")
    for rule in RULES[:3]:
        _same(definition, [tmp_path / "pull"], tmp_path, f"conversations-{_rule_id(rule)}", *rule)


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
    _same(definition, [pull], tmp_path, "later-annotation", "majority", "keep", 1, ())
    out = tmp_path / "later-annotation-out"
    found = {(r["key"], r["aspect"]): r["chosen_system"] for r in rows(out / PREFERENCE_FILE)}
    assert found[("t3", "helpfulness")] == "x" and found[("t3", "harmlessness")] == "y"  # ann1 and ann2's latest agree


def test_an_aspect_left_out_of_the_latest_annotation_is_not_taken_from_an_earlier_one(tmp_path: Path) -> None:
    """Main kept each annotator's latest answer per aspect, an earlier annotation's where the latest left the aspect
    out (golden ``main-aspect-left-out``: harmlessness from the earlier annotation); the report counts an annotator's
    latest annotation of a task as their judgment, and the export now too: main's rows without harmlessness."""
    definition = protocols.load(str(pairwise.CHAT))
    pull = pairwise._pull(tmp_path / "pull", definition, {
        "t1": (("x", "y"), "study", {"ann1": {"helpfulness": "A", "harmlessness": "A"}}),
    })  # fmt: skip
    _annotate(pull, "t1", "ann1", {"helpfulness": "B"}, definition, "2026-01-02T00:00:00Z", 901)
    export_preferences(definition, [pull], tmp_path / "new", Rule("majority"))
    main = _main("main-aspect-left-out")
    old = {(r["key"], r["aspect"]): r["chosen_system"] for r in rows(main / PREFERENCE_FILE)}
    new = {(r["key"], r["aspect"]): r["chosen_system"] for r in rows(tmp_path / "new" / PREFERENCE_FILE)}
    assert old == {("t1", "helpfulness"): "y", ("t1", "harmlessness"): "x"}
    assert new == {("t1", "helpfulness"): "y"}
    for file in (PREFERENCE_FILE, preferences.UNPAIRED_FILE):  # main's helpfulness rows, byte for byte
        lines = (main / file).read_text(encoding="utf-8").splitlines(keepends=True)
        kept = "".join(line for line in lines if json.loads(line)["aspect"] != "harmlessness")
        assert (tmp_path / "new" / file).read_text(encoding="utf-8") == kept, file
    table = read(definition, [pull])
    assert table.study.kept["annotation_id"].tolist() == [901]  # the report's judgment: the latest annotation


def test_a_project_pulled_twice_counts_each_annotation_once(tmp_path: Path) -> None:
    """The same pull given twice: main counted each left-out annotation twice on the card (golden
    ``main-pulled-twice``); the study table reads the same annotation (id, annotator, time) once, so the card counts
    it once; the rows, the other counts and the rest of the card are main's."""
    definition = protocols.load(str(pairwise.CHAT))
    pull = pairwise._pull(tmp_path / "pull", definition, pairwise.PLANTED)
    once = export_preferences(definition, [pull], tmp_path / "once", Rule("majority"))
    twice = export_preferences(definition, [pull, pull], tmp_path / "twice", Rule("majority"))
    main = _main("main-pulled-twice")
    old = json.loads((main / COUNTS).read_text(encoding="utf-8"))
    assert old["left_out"] == {"gold item": 2, "attention item": 2}
    assert twice.left_out == once.left_out == {"gold item": 1, "attention item": 1}
    assert _counts(twice) == {**old, "left_out": {"gold item": 1, "attention item": 1}}
    for file in (PREFERENCE_FILE, preferences.UNPAIRED_FILE):
        assert (tmp_path / "twice" / file).read_bytes() == (tmp_path / "once" / file).read_bytes()
        assert (tmp_path / "twice" / file).read_bytes() == (main / file).read_bytes()
    card = (main / preferences.CARD_FILE).read_text(encoding="utf-8")
    twice_over, once_over = (f"left out here: {n} judgment(s) of attention items, {n} judgment(s) of gold items"
                             for n in (2, 1))  # fmt: skip
    assert twice_over in card
    written = (tmp_path / "twice" / preferences.CARD_FILE).read_text(encoding="utf-8")
    assert written == card.replace(twice_over, once_over)


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
    new = {(r["key"], r["aspect"]): r for r in rows(tmp_path / "new" / PREFERENCE_FILE)}
    old = {(r["key"], r["aspect"]): r for r in rows(_main("main-tasks-without-annols") / PREFERENCE_FILE)}
    assert {k: r["votes"] for k, r in old.items()} == {("task-1", "harmlessness"): 2}  # merged; helpfulness split
    assert {k: r["votes"] for k, r in new.items()} == {
        ("source-1:task-1", "helpfulness"): 1, ("source-1:task-1", "harmlessness"): 1,
        ("source-2:task-1", "helpfulness"): 1, ("source-2:task-1", "harmlessness"): 1}  # fmt: skip
    merged = old["task-1", "harmlessness"]
    for source in ("source-1", "source-2"):  # main's merged row, once per source with its one vote
        assert new[f"{source}:task-1", "harmlessness"] == {**merged, "key": f"{source}:task-1", "votes": 1}


def test_an_adjudication_task_with_two_verdicts_is_refused_as_the_report_refuses_it(tmp_path: Path) -> None:
    """Main's export took every submitted annotation of an adjudication task: here two that disagreed, so it wrote
    one row (harmlessness, both a tie: rows = ties = 1) and left helpfulness (B against A) without a verdict. The
    report refused such a task by name; the export now reads the verdicts as the report does (read_verdicts) and
    refuses it too, writing nothing (so there is no output of main's to compare to: no golden)."""
    from annols.errors import InputError

    definition = protocols.load(str(pairwise.CHAT))
    pull = pairwise._pull(tmp_path / "pull", definition, pairwise.PLANTED)
    verdicts = pairwise._pull(tmp_path / "adjudication", definition, {
        "t3": (("x", "y"), "study", {"lead": {"helpfulness": "B", "harmlessness": "tie"},
                                     "second": {"helpfulness": "A", "harmlessness": "tie"}}),
    }, verdicts=True)  # fmt: skip
    with pytest.raises(InputError, match=r"task 1.*one submitted annotation"):
        export_preferences(definition, [pull], tmp_path / "new", Rule("adjudicated", ties="keep"), [verdicts])
    assert not (tmp_path / "new").exists()
    with pytest.raises(InputError, match=r"task 1.*one submitted annotation"):
        read(definition, [pull], ReportOptions(adjudicated=(verdicts,)))


def test_no_golden_folder_without_its_case() -> None:
    """Every folder under tests/data/preferences is a case of this module (CASES), and holds the four files."""
    assert {p.name for p in GOLDEN.iterdir()} == CASES
    for case in CASES:
        assert {p.name for p in (GOLDEN / case).iterdir()} == {*FILES, COUNTS}, case
