"""Adjudicate's disagreements come from the one reader's study table (no server here; the round trips through
a real Label Studio are in test_adjudicate_live.py and tests/browser/test_adjudicate.py).

Each fixture's disagreements through the table (:func:`annols.study.adjudicate.disagreeing`: the export staged
as a pull folder, read by :func:`annols.study.table.read`, compared by
:func:`annols.analysis.raters.quality_findings.disagreements`) are checked against two computations that do not
go through the table: the path adjudicate took before (each task's latest submitted annotation per annotator,
decoded by the style, two by two through :func:`annols.analysis.raters.quality.score_item`), and, for pairwise and
ranking, the planted truth of the generated study itself (what each annotator meant, compared here directly).
"""

from __future__ import annotations

import json
import stat
import tempfile
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest

from annols import protocols
from annols.analysis.raters.quality import score_item
from annols.analysis.raters.quality_findings import Rules, span_controls
from annols.definition import Definition
from annols.labelstudio.client import Project
from annols.study.adjudicate import disagreeing, latest
from annols.study.exports import item_key, read_export
from annols.study.pull import ProtocolMismatch
from annols.study.roles import STUDY
from annols.styles import decode
from annols.styles.judgments import Judgment
from tests.report import study
from tests.report.test_style_reports import definition_of, export

URL = "http://127.0.0.1:8080"
PROJECT = Project(id=7, title="study", label_config="")
USERS = {uid: email for email, uid in study.USER_IDS.items()}


def old_disagree(definition: Definition, judgments: Sequence[Sequence[Judgment]], rules: Rules) -> bool:
    """Adjudicate's rule as it was written before the table (on the decoded judgments, two by two)."""
    controls = span_controls(definition)
    for a, b in combinations(judgments, 2):
        for aspect, score in score_item(a, b, rules.tolerance, controls).items():
            if score < (rules.span_f1 if aspect in controls else 1.0) - 1e-9:
                return True
    return False


def old_path(definition: Definition, tasks: list[dict[str, Any]], folder: Path, rules: Rules) -> tuple[int, list[str]]:
    """(items with two or more annotators, the keys of those that disagree) as adjudicate found them before."""
    study.write_pull(folder, tasks)
    items, keys = 0, []
    for task in read_export(folder / "export.json", USERS, shares=False):
        if task.role != STUDY:
            continue
        by_annotator = latest(task)
        if len(by_annotator) < 2:
            continue
        items += 1
        if old_disagree(definition, [decode(definition, task, a) for a in by_annotator.values()], rules):
            keys.append(item_key(task, 0))
    return items, sorted(keys)


def through_table(definition: Definition, tasks: list[dict[str, Any]], rules: Rules) -> tuple[int, list[str]]:
    found = disagreeing(definition, PROJECT, URL, tasks, USERS, {}, rules)
    return found.items, found.keys


RULES = [Rules(), Rules(tolerance=1.0), Rules(span_f1=0.5), Rules(tolerance=2.0, span_f1=0.0)]
GENERATED = {
    "pairwise-aspects": (lambda: study.pairwise().tasks, None),
    "extractive-ranking": (lambda: study.ranking().tasks, None),
    "qa-feedback": (lambda: study.qa_feedback().tasks, None),
    "summary-flaws": (lambda: study.summary_flaws().tasks, None),
    "sentence-errors": (lambda: study.sentence_errors().tasks, "abstract"),
}


@pytest.mark.parametrize("name", list(GENERATED))
def test_disagreements_through_the_table_are_the_old_paths_on_the_generated_studies(name: str, tmp_path: Path) -> None:
    make, variant = GENERATED[name]
    tasks = make()
    definition = protocols.load(name, variant)
    for n, rules in enumerate(RULES):
        items, keys = through_table(definition, tasks, rules)
        assert (items, keys) == old_path(definition, tasks, tmp_path / str(n), rules), rules
        assert items == 99  # sample 99 has one annotator
        assert 0 < len(keys) <= items or rules.span_f1 == 0.0


@pytest.mark.parametrize("style", ["pairwise", "ratings", "spans", "sentences"])
def test_disagreements_through_the_table_are_the_old_paths_on_the_planted_studies(style: str, tmp_path: Path) -> None:
    tasks, _ = export(style)
    definition = definition_of(style)
    for n, rules in enumerate(RULES):
        found = through_table(definition, tasks, rules)
        assert found == old_path(definition, tasks, tmp_path / str(n), rules), rules
        assert found[0] == len(tasks)


def test_ratings_tolerance_counts_as_before(tmp_path: Path) -> None:
    tasks, _ = export("ratings")
    definition = definition_of("ratings")
    exact, loose = through_table(definition, tasks, Rules()), through_table(definition, tasks, Rules(tolerance=4.0))
    assert set(loose[1]) <= set(exact[1]) and len(loose[1]) < len(exact[1])  # a wide tolerance: fewer disagree


def test_pairwise_disagreements_are_the_planted_ones() -> None:
    """Independent of annols' decoding: the generated study's truth, what each annotator meant."""
    generated = study.pairwise()
    expected = []
    for sample in range(study.SAMPLES):
        annotators = study.annotators_of(sample)
        if len(annotators) < 2:
            continue
        answers = [generated.truth[(sample, a)]["answers"] for a in annotators]
        if any(a != b for a, b in combinations(answers, 2)):  # a different winner, or one left unanswered
            expected.append(generated.keys[sample])
    items, keys = through_table(protocols.load("pairwise-aspects"), generated.tasks, Rules())
    assert items == 99 and keys == sorted(expected) and 0 < len(expected) < 99


def test_ranking_disagreements_are_the_planted_ones() -> None:
    generated = study.ranking()
    expected = []
    for sample in range(study.SAMPLES):
        annotators = study.annotators_of(sample)
        if len(annotators) < 2:
            continue
        ranks = [generated.truth[(sample, a)] for a in annotators]
        if any(a != b for a, b in combinations(ranks, 2)):
            expected.append(generated.keys[sample])
    items, keys = through_table(protocols.load("extractive-ranking"), generated.tasks, Rules())
    assert items == 99 and keys == sorted(expected) and len(expected) > 0


def test_an_empty_annotation_disagrees_with_one_that_answers() -> None:
    tasks = json.loads(json.dumps(study.pairwise().tasks[:3]))
    for task in tasks:
        for annotation in task["annotations"]:
            annotation["result"] = []  # every one empty: nobody disagrees
    definition = protocols.load("pairwise-aspects")
    assert through_table(definition, tasks, Rules()) == (3, [])
    tasks[1]["annotations"][-1]["result"] = study.pairwise().tasks[1]["annotations"][-1]["result"]
    assert through_table(definition, tasks, Rules()) == (3, [tasks[1]["meta"]["annols_key"]])


def test_an_export_of_another_protocol_is_refused_naming_the_project() -> None:
    """The reader refuses what adjudicate used to take: tasks pushed as another protocol (before, only the
    project's labeling config was checked)."""
    tasks = json.loads(json.dumps(study.pairwise().tasks[:3]))
    definition = protocols.load("pairwise-aspects")
    tasks[0]["meta"]["annols_key"] = "pairwise-aspects:" + "0" * 20  # a key as push writes it (protocol:digest)
    assert through_table(definition, tasks, Rules())[0] == 3
    tasks[0]["meta"]["annols_key"] = "summeval-ratings:" + "1" * 20  # the first task annols pushed decides
    with pytest.raises(ProtocolMismatch, match="project 'study'"):
        disagreeing(definition, PROJECT, URL, tasks, USERS, {})


def test_the_staged_pull_is_owner_only_and_gone_after(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    seen: list[tuple[int, list[str]]] = []
    import annols.study.table as table_module

    real = table_module.read

    def spying(definition: Definition, sources: Sequence[Path], *args: Any, **kwargs: Any) -> Any:
        folder = Path(sources[0])
        seen.append((stat.S_IMODE(folder.stat().st_mode), sorted(p.name for p in folder.iterdir())))
        return real(definition, sources, *args, **kwargs)

    monkeypatch.setattr(table_module, "read", spying)
    through_table(protocols.load("pairwise-aspects"), study.pairwise().tasks[:5], Rules())
    assert seen == [(0o700, ["annotators.json", "export.json", "project.json"])]
    assert list(tmp_path.iterdir()) == []


def test_the_manifest_rows_say_the_roles(tmp_path: Path) -> None:
    """With the manifest's rows (staged as the pull's blinding.jsonl), a task the manifest calls a gold item is no
    study item, whatever its meta says; the others are found as without the rows."""
    from annols.definition.blinding import META_SYSTEMS, decode_systems

    tasks = study.pairwise().tasks
    definition = protocols.load("pairwise-aspects")
    rows = {}
    for n, task in enumerate(tasks):
        key = task["meta"]["annols_key"]
        rows[key] = {"task_id": task["id"], "key": key, "systems": list(decode_systems(task["meta"][META_SYSTEMS])),
                     "role": "gold" if n < 3 else STUDY}  # fmt: skip
    found = disagreeing(definition, PROJECT, URL, tasks, USERS, rows)
    items, keys = through_table(definition, tasks, Rules())
    gold = {t["meta"]["annols_key"] for t in tasks[:3]}
    assert found.items == items - 3 and found.keys == [k for k in keys if k not in gold]


def test_ratings_per_turn_are_compared_turn_by_turn(tmp_path: Path) -> None:
    """A deliberate difference from the old path: two annotators who differ on the first turn only disagree (the
    decoded judgments' unit was (aspect, system), so the last turn's rating hid the first's)."""
    from annols.definition.blinding import META_KEY, META_SYSTEMS, encode_systems
    from tests.analysis.by_style.test_ratings_turns import EXAMPLE, conversation, result

    definition = protocols.load(str(EXAMPLE))
    scores = {"a": {("helpfulness", 0): 2, ("helpfulness", 1): 4}, "b": {("helpfulness", 0): 5, ("helpfulness", 1): 4}}
    tasks = [{"id": 1, "data": {"conversation": conversation(2)}, "annotations": [
        {"id": 10 + n, "completed_by": uid, "result": result(scores["ab"[n]]), "created_at": "2024-05-01T10:00:00Z",
         "was_cancelled": False} for n, uid in enumerate((1, 2))],
        "meta": {META_KEY: "chat-per-turn:0001", META_SYSTEMS: encode_systems(("model-x",))}}]  # fmt: skip
    assert through_table(definition, tasks, Rules()) == (1, ["chat-per-turn:0001"])
    assert old_path(definition, tasks, tmp_path / "old", Rules()) == (1, [])
    assert through_table(definition, tasks, Rules(tolerance=3.0)) == (1, [])
