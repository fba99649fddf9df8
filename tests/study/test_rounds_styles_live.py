"""Studies in rounds of best-worst, ESA and MQM through the real server, the shipped definitions on pools of 20 items
(an item: every task sharing a context; best-worst's five tuples of an article, a source's three translations).

Each: next-round pushes 10 whole items (blinded: nothing the server holds names a system); one annotator answers
every task through the API; pull; next-round reads the 10 items (mean as planted, undecided) and pushes 10 more;
answered and pulled, the next round decides and pushes nothing, a repeat adds no round; the report's sequential
section and table state the decisions. The answers depend on an item's place in its round, so both rounds hold the
same observations: 10 of them leave the intervals around 0 (ESA and MQM: every pair's; best-worst: the best system
against its close rival's), 20 exclude it. The sequence is an exact betting one (its wealth grows at most by a
factor 1 + bet an item), so the planted differences are large for the scale: at 10 items no wealth can reach the
level yet, at 20 the planted ones do. Means and counts are checked against those of the planted answers."""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from annols.definition import fields
from annols.labelstudio.client import LabelStudioClient
from annols.study import manifest
from tests import live_answers
from tests.conftest import ROOT, LiveServer
from tests.study.test_push_pull import cli

ITEMS, BATCH = 20, 10  # ESA and MQM; best-worst's pool and rounds are twice these (its 20 comparisons need more)
# An item's difference by its place in its round (ESA: 5 points of 100 a step; MQM: error points of the cap 25):
# large for the scale, so that the exact sequence at 0.05 / 3 excludes 0 for every pair after 20 such items and for
# none after 10 (checked offline against analysis.sequential).
SPREAD = (0, 6, 8, 9, 10, 10, 10, 10, 10, 10)
MQM_SPREAD = (0, 7, 10, 11, 12, 12, 12, 12, 12, 12)
BW = ("alderbrook", "birchwood", "cedarhill", "dunmoreton", "elmsworth")  # in name order; alderbrook best
MT = ("alphamt", "betamt", "gammamt")  # in name order: alphamt best, gammamt worst
LINE = re.compile(r"^(?P<q>.+): (?P<first>\S+) vs (?P<second>\S+): (?P<items>\d+) items(?:, mean (?P<mean>\S+), "
                  r"interval \[\S+, \S+\])?: (?P<decision>.+)$")  # fmt: skip


@dataclass
class Style:
    name: str  # the example's
    systems: tuple[str, ...]
    context: str  # the field whose content makes the item
    tasks: int  # tasks per item
    effect: str
    goal: tuple[str, ...]
    write: Callable[[Path], None]  # the pool
    # (place in the round, {task id: systems shown}, {task id: task data}) -> {task id: result}, and the item's
    # observation per (question, first, second), as the planted answers make it
    answer: Callable[[int, dict[int, tuple[str, ...]], dict[int, dict[str, Any]]],
                     tuple[dict[int, list[dict[str, Any]]], dict[tuple[str, str, str], float]]]  # fmt: skip
    batch: int = BATCH  # items a round; the pool holds two rounds'
    rivals: tuple[str, ...] = ()  # goal best: the systems still undecided against the best at the first look


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")


# ----------------------------------------------------------------------------- best-worst


def bw_pool(path: Path) -> None:
    write_jsonl(path, [{"document": f"Article {i}: the council of town {i} met on day {i} about its bridge.",
                        "id": system, "summary": f"Summary {n} of article {i}: the council met about a bridge."}
                       for i in range(2 * ITEMS) for n, system in enumerate(BW)])  # fmt: skip


def bw_answer(place: int, shown: dict[int, tuple[str, ...]],
              data: dict[int, dict[str, Any]]) -> tuple[dict[int, list[dict[str, Any]]],
                                                        dict[tuple[str, str, str], float]]:  # fmt: skip
    """alderbrook best of every tuple, cedarhill second, birchwood third; but on the first item of a round birchwood
    is best and alderbrook second. Both aspects alike. The observation: 100 x (best - worst) / shown of the first
    system in the item minus the second's, counted here from the picks."""
    a, b, c, d, e = BW
    order = [b, a, c, d, e] if place == 0 else [a, c, b, d, e]
    results, count = {}, {s: Counter[str]() for s in BW}
    for task, systems in shown.items():
        ranks = [order.index(s) for s in systems]
        best, worst = ranks.index(min(ranks)), ranks.index(max(ranks))
        results[task] = live_answers.best_worst({"informativeness": (best, worst), "fluency": (best, worst)})
        for i, s in enumerate(systems):
            count[s]["shown"] += 1
            count[s]["net"] += (i == best) - (i == worst)
    score = {s: 100 * count[s]["net"] / count[s]["shown"] for s in BW}
    observed = {(q, x, y): score[x] - score[y] for q in ("informativeness", "fluency") for i, x in enumerate(BW)
                for y in BW[i + 1 :]}  # fmt: skip
    return results, observed


# ----------------------------------------------------------------------------- ESA and MQM


def mt_pool(path: Path) -> None:
    write_jsonl(path, [{"id": f"seg-{i}-{n}", "source": f"Satz {i}: Der Zug nach Hamburg fällt heute aus.",
                        "reference": f"Sentence {i}: the train to Hamburg is cancelled today.",
                        "hypothesis": f"Sentence {i} version {n}: the train to Hamburg is cancelled today.",
                        "systems": [system]} for i in range(ITEMS) for n, system in enumerate(MT)])  # fmt: skip


def mt_observed(question: str, value: dict[str, float], sign: float) -> dict[tuple[str, str, str], float]:
    return {(question, x, y): sign * (value[x] - value[y]) for i, x in enumerate(MT) for y in MT[i + 1 :]}


def esa_answer(place: int, shown: dict[int, tuple[str, ...]],
               data: dict[int, dict[str, Any]]) -> tuple[dict[int, list[dict[str, Any]]],
                                                         dict[tuple[str, str, str], float]]:  # fmt: skip
    """Scores 50 + 5d, 50, 50 - 5d (d by the item's place); a minor error marked in betamt's, a major and a minor
    in gammamt's."""
    d = SPREAD[place]
    score = {MT[0]: 50.0 + 5 * d, MT[1]: 50.0, MT[2]: 50.0 - 5 * d}
    marks: dict[str, list[tuple[str, str | None]]] = {MT[0]: [], MT[1]: [("minor", None)],
                                                      MT[2]: [("major", None), ("minor", None)]}  # fmt: skip
    results = {task: [*live_answers.span_items(data[task]["hypothesis"], marks[s]), live_answers.number("score",
                                                                                                          score[s])]
               for task, (s,) in shown.items()}  # fmt: skip
    return results, mt_observed("score", score, 1.0)


def by_weight(score: int) -> list[tuple[str, str | None]]:
    """Major errors (5) and minor ones (1) that weigh ``score``."""
    major: list[tuple[str, str | None]] = [("Accuracy", "major")]
    return major * (score // 5) + [("Fluency", "minor")] * (score % 5)


def mqm_answer(place: int, shown: dict[int, tuple[str, ...]],
               data: dict[int, dict[str, Any]]) -> tuple[dict[int, list[dict[str, Any]]],
                                                         dict[tuple[str, str, str], float]]:  # fmt: skip
    """Error scores 12 - d, 12, 12 + d (d by the item's place), but gammamt's is a non-translation and a major error
    where d is 12: 30, which the study clips to 25 (the largest weight). The observation: second minus first."""
    d = MQM_SPREAD[place]
    worst: list[tuple[str, str | None]] = [("Non-translation", "major"), ("Accuracy", "major")]
    marks = {MT[0]: by_weight(12 - d), MT[1]: by_weight(12), MT[2]: worst if d == 12 else by_weight(12 + d)}
    raw = {s: sum(live_answers.mqm_weight(label, str(severity)) for label, severity in m) for s, m in marks.items()}
    results = {task: live_answers.span_items(data[task]["hypothesis"], marks[s]) for task, (s,) in shown.items()}
    return results, mt_observed("error score", {s: min(v, 25.0) for s, v in raw.items()}, -1.0)


STYLES = {
    # 20 items leave alderbrook undecided against cedarhill (second in every tuple) and birchwood (never best nor
    # worst, but best on each round's first item); 40 decide them (checked offline against analysis.sequential)
    "best-worst": Style("summary-best-worst", BW, "document", 5, "30", ("--goal", "best"), bw_pool, bw_answer,
                        2 * BATCH, BW[1:3]),
    "esa": Style("esa", MT, "source", 3, "10", (), mt_pool, esa_answer),
    "mqm": Style("mqm", MT, "source", 3, "2", (), mt_pool, mqm_answer),
}


def looked(out: str) -> dict[tuple[str, str, str], dict[str, Any]]:
    """next-round's line per comparison: items, mean, decision."""
    found = {}
    for line in out.splitlines():
        m = LINE.match(line)
        if m:
            mean = float(m["mean"]) if m["mean"] else None
            found[(m["q"], m["first"], m["second"])] = {"items": int(m["items"]), "mean": mean,
                                                        "decision": m["decision"]}  # fmt: skip
    return found


def means(observed: list[dict[tuple[str, str, str], float]]) -> dict[tuple[str, str, str], float]:
    return {key: sum(o[key] for o in observed) / len(observed) for key in observed[0]}


@pytest.mark.parametrize("style", list(STYLES))
def test_a_study_in_rounds_of_whole_items_decides_through_the_server(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path, style: str
) -> None:
    s = STYLES[style]
    definition, pool = ROOT / "examples" / f"{s.name}.toml", tmp_path / "pool.jsonl"
    s.write(pool)
    title = f"rounds {style}"
    rounds = ["next-round", str(definition), str(pool), "--project", title, "--effect", s.effect, "--overlap", "1",
              "--batch", str(s.batch), *s.goal]  # fmt: skip
    manifest_dir, pulled = tmp_path / ".annols", tmp_path / "pulled"
    record = manifest_dir / f"rounds-{style}.rounds.jsonl"
    user = client.users().get(f"rounds-{style}@example.org") or client.create_user(f"rounds-{style}@example.org")
    context = fields.data_key(s.context)
    observed: list[dict[tuple[str, str, str], float]] = []  # per item answered, in the order of the rounds
    items_seen: set[str] = set()

    def annotate(round_: int) -> None:
        """Checks what the round put on the server (whole items, blinded), answers every task of it, pulls."""
        pushed = [json.loads(line) for line in record.read_text("utf-8").splitlines()][round_ - 1]["pushed"]
        rows = {r["key"]: r for r in manifest.read_rows(manifest.manifest_path(manifest_dir, title))[1]}
        systems = {int(r["task_id"]): tuple(r["systems"]) for r in rows.values()}  # the manifest's: not on the server
        project = client.find_project(title)
        assert project is not None
        tasks = {t["id"]: t for t in client.export_tasks(project.id)}
        assert len(tasks) == len(rows) == round_ * s.batch * s.tasks
        assert live_answers.named_systems(list(tasks.values()), s.systems) == []  # blinded
        by_item: dict[str, list[int]] = {}
        for key in pushed:
            task = tasks[int(rows[key]["task_id"])]
            by_item.setdefault(task["data"][context], []).append(task["id"])
        # Whole items, none pushed before: each with its every task (every system of the item shown).
        assert len(by_item) == s.batch and not items_seen & set(by_item)
        items_seen.update(by_item)
        for ids in by_item.values():
            assert len(ids) == s.tasks and {x for i in ids for x in systems[i]} == set(s.systems)
        for place, ids in enumerate(by_item.values()):
            shown = {i: systems[i] for i in ids}
            results, seen = s.answer(place, shown, {i: tasks[i]["data"] for i in ids})
            for task_id, result in results.items():
                client.create_annotation(task_id, result, completed_by=user, lead_time=2.0)
            observed.append(seen)
        code, out, err = cli(label_studio, "pull", str(definition), "--project", title, "-o", str(pulled),
                             cwd=tmp_path)  # fmt: skip
        assert code == 0, err
        assert f"Counts match the server: {len(tasks)} tasks, {len(tasks)} annotations, 0 skipped." in out

    code, out, err = cli(label_studio, *rounds, cwd=tmp_path)
    assert code == 0, err
    tasks = s.batch * s.tasks  # a round's: whole items
    assert f"round 1: pushed {s.batch} item(s) of {tasks} task(s) ({tasks} new), {s.batch} study items in the" in out
    first = looked(out)
    assert first and all(c == {"items": 0, "mean": None, "decision": "undecided"} for c in first.values())
    annotate(1)

    # The first look: 10 items, each comparison's mean as planted, every interval still around 0 for the pairs
    # that matter; round 2 pushes 10 more items.
    code, out, err = cli(label_studio, *rounds, "--pull", str(pulled), cwd=tmp_path)
    assert code == 0, err
    second = looked(out)
    assert set(second) == set(first) and all(c["items"] == s.batch for c in second.values())
    for key, mean in means(observed).items():
        assert second[key]["mean"] == pytest.approx(mean, abs=5e-4), key
    assert f"round 2: pushed {s.batch} item(s) of {tasks} task(s) ({tasks} new), {2 * s.batch} study items in" in out
    top = s.systems[0]
    if s.goal:  # best-worst, goal best: the best system against its close rival is what is left open
        for q in ("informativeness", "fluency"):
            assert all(second[(q, top, x)]["decision"] == "undecided" for x in s.rivals)
            decided = [x for x in s.systems if x not in (top, *s.rivals)]
            assert all(second[(q, top, x)]["decision"] == "first better" for x in decided)
            assert f"{q}: undecided between {', '.join(sorted((top, *s.rivals)))}" in out
    else:
        assert all(c["decision"] == "undecided" for c in second.values())
    annotate(2)

    # The final look: 20 items, decided; nothing pushed.
    code, out, err = cli(label_studio, *rounds, "--pull", str(pulled), cwd=tmp_path)
    assert code == 0, err
    third = looked(out)
    for key, mean in means(observed).items():
        assert third[key]["items"] == 2 * s.batch and third[key]["mean"] == pytest.approx(mean, abs=5e-4), key
    judgments = 2 * s.batch * s.tasks  # one annotator, every task
    if s.goal:
        for q in ("informativeness", "fluency"):
            assert all(third[(q, top, x)]["decision"] == "first better" for x in s.systems[1:])
            assert f"{q}: best: {top}" in out
        why = "the comparisons that decide the best system are decided"
    else:
        assert all(c["decision"] == "first better" for c in third.values())
        why = "every comparison is decided"
    stop = f"round 3: nothing pushed: {why} ({2 * s.batch} study items, {judgments} judgments)"
    assert stop in out
    project = client.find_project(title)
    assert project is not None and project.task_count == 2 * s.batch * s.tasks
    code, out, err = cli(label_studio, *rounds, "--pull", str(pulled), cwd=tmp_path)
    assert code == 0 and stop in out
    recorded = [json.loads(line) for line in record.read_text("utf-8").splitlines()]
    assert [r["items"] for r in recorded] == [s.batch, 2 * s.batch, 2 * s.batch]
    assert recorded[-1]["judgments"] == judgments

    report = tmp_path / "report"
    code, out, err = cli(label_studio, "report", str(definition), str(pulled), "-o", str(report), "--rounds",
                         str(record), "--bootstrap", "0")  # fmt: skip
    assert code == 0, err
    md = (report / "report.md").read_text("utf-8")
    section = md.split("## Sequential study")[1].split("\n## ")[0]
    assert f"ran in 3 round(s) of annols next-round, {2 * s.batch} study items pushed" in section
    assert f"the report reads {judgments} human judgments of them" in section
    assert f"({len(third)} comparison(s))" in section
    assert ("the comparisons that decide the best system were decided" if s.goal else
            "every comparison was decided") in section  # fmt: skip
    assert "annols plan has no simulation of this style" in section  # no fixed design to save against
    if style == "mqm":
        assert "so its decisions are about the mean clipped score" in section
    with open(report / "tables" / "sequential_rounds.csv", encoding="utf-8", newline="") as f:
        history = list(csv.DictReader(f))
    assert [(r["items pushed"], r["study items"], r["judgments read"]) for r in history] == [
        (str(s.batch), str(s.batch), "0"), (str(s.batch), str(2 * s.batch), str(judgments // 2)),
        ("0", str(2 * s.batch), str(judgments))]  # fmt: skip  # items, not tasks
    with open(report / "tables" / "sequential_comparisons.csv", encoding="utf-8", newline="") as f:
        table = {(r["question"], r["first"], r["second"]): r for r in csv.DictReader(f)}
    assert set(table) == set(third)
    for key, c in third.items():
        row = table[key]
        assert (int(row["items"]), row["decision"]) == (2 * s.batch, c["decision"])
        assert float(row["mean"]) == pytest.approx(c["mean"], abs=5e-4)
        if c["decision"] != "undecided":  # decided at the round that first showed it
            assert row["decided at round"] == ("2" if second[key]["decision"] != "undecided" else "3")
