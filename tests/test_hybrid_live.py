"""A hybrid study through the real server: `annols push --judge J --human-share 0.5` sends only the drawn half of a
planted own study (tests/own_study.py) to Label Studio, keeps the draw in the manifest and the judge and the other
half off the server; a re-push draws the same half, and another seed or none at all is refused; three annotators
judge the half through the API; the pull brings the judge-only items back; the report gives judge-assisted (PPI++)
estimates beside the humans' own, and states the gain. The same for the shipped best-worst, ESA and MQM definitions
on small generated inputs, two annotators: an item there is an article's tuples or a source's translations, drawn
whole; the estimates are the best-worst scores, ESA's score and MQM's error score."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from annols.definition import design
from annols.labelstudio.client import LabelStudioClient
from annols.study import manifest
from tests import judges_expected as expect
from tests.conftest import ROOT, LiveServer
from tests.judges_study import answers, majority_truth
from tests.live_answers import LETTERS, best_worst, best_worst_picks, judge_spans, span_items
from tests.own_study import ANNOTATORS, ITEMS, STUDIES
from tests.study.test_push_pull import cli, shown_by_task

pytestmark = pytest.mark.server

JUDGE = "copycat"


@pytest.mark.parametrize("style", ["ratings", "pairwise", "ranking"])
def test_hybrid_push_pull_report(style: str, label_studio: LiveServer, client: LabelStudioClient,
                                 tmp_path: Path) -> None:  # fmt: skip
    study = STUDIES[style]
    definition = tmp_path / f"{study.name}.toml"
    definition.write_text(study.definition, encoding="utf-8")
    inputs = tmp_path / "inputs.jsonl"
    records = [{**study.record(i), "id": f"rec-{i}"} for i in range(ITEMS)]
    inputs.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    judge = tmp_path / "judge.jsonl"
    lines = [{"id": f"rec-{i}", "judge": JUDGE, "answers": answers(study, i, majority_truth(study, i))}
             for i in range(ITEMS)]  # fmt: skip
    judge.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    title = f"hybrid {study.name}"
    push = ["push", str(definition), str(inputs), "--project", title, "--overlap", "3", "--judge", str(judge),
            "--human-share", "0.5"]  # fmt: skip

    code, out, err = cli(label_studio, *push, "--seed", "5", cwd=tmp_path)
    assert code == 0, err
    assert "humans get 12 of 24 items (share 0.5, seed 5); the other 12 are the judge's only" in out
    project = client.find_project(title)
    assert project is not None
    tasks = client.export_tasks(project.id)
    assert len(tasks) == ITEMS // 2
    header, rows = manifest.read_rows(manifest.manifest_path(tmp_path / ".annols", title))
    assert header["hybrid"] == {"share": 0.5, "seed": 5, "items": ITEMS, "humans": ITEMS // 2}
    human_keys = {r["key"] for r in rows}
    assert len(human_keys) == ITEMS // 2
    store = tmp_path / ".annols" / f"hybrid-{study.name}.judges"
    pool = [json.loads(line) for line in (store / "pool.jsonl").read_text("utf-8").splitlines()]
    assert len(pool) == ITEMS // 2 and not human_keys & {p["key"] for p in pool}
    on_server = json.dumps(tasks)
    assert JUDGE not in on_server  # the judge stays off the server
    assert not any(p["data"]["record"]["id"] in on_server for p in pool)  # so do the judge-only items

    code, out, err = cli(label_studio, *push, "--seed", "5", cwd=tmp_path)  # the same draw: nothing new
    assert code == 0, err
    assert "created 0, already present 12, total 12" in out
    code, out, err = cli(label_studio, *push, "--seed", "6", cwd=tmp_path)
    assert code != 0 and "records a hybrid draw of share 0.5 with seed 5" in err + out
    assert "Traceback" not in err + out
    plain = push[: push.index("--judge")]  # a re-push that forgot the judge would send humans every item
    code, out, err = cli(label_studio, *plain, cwd=tmp_path)
    assert code != 0 and "has no --human-share" in err and "Traceback" not in err + out
    assert len(client.export_tasks(project.id)) == ITEMS // 2  # nothing sent

    users = client.users()
    ids = {a: users.get(expect.email(a)) or client.create_user(expect.email(a)) for a in ANNOTATORS}
    shown = shown_by_task(tmp_path / ".annols", title)
    for task in tasks:
        assert "record" not in task["data"]  # the record's other fields stay in the manifest
        item = shown[task["id"]]["extra"]["record"]["item"]
        for a in ANNOTATORS:
            result = study.result(study.truth(item, a), tuple(shown[task["id"]]["systems"]))
            client.create_annotation(task["id"], result, completed_by=ids[a])

    folder = tmp_path / "pulled"
    code, _, err = cli(label_studio, "pull", str(definition), "--project", title, "-o", str(folder), cwd=tmp_path)
    assert code == 0, err
    assert (folder / "judges" / "pool.jsonl").is_file()
    # convert reads the pull's judges as pull did: the judge's lines on judge-only items are no error
    code, _, err = cli(label_studio, "convert", str(definition), str(folder / "export.json"), "-o",
                       str(tmp_path / "converted"))  # fmt: skip
    assert code == 0, err
    report = tmp_path / "report"
    code, _, err = cli(label_studio, "report", str(definition), str(folder), "-o", str(report), "--bootstrap", "0")
    assert code == 0, err
    text = (report / "report.md").read_text("utf-8")
    assert "Judge-assisted estimates (PPI++)" in text
    assert "12 items have the judge's answers only, 12 the humans'" in text
    with (report / "tables" / "judge_assisted.csv").open(encoding="utf-8", newline="") as f:
        table = list(csv.DictReader(f))
    assert table and {r["judge"] for r in table} == {f"judge:{JUDGE}"}
    for r in table:  # ratings: every item holds every system; pairwise: an item holds one pair
        assert 2 <= int(r["items with humans"]) <= 12 and 2 <= int(r["judge-only items"]) <= 12
    if style == "ratings":
        assert {r["items with humans"] for r in table} == {"12"} and {r["judge-only items"] for r in table} == {"12"}
    assert any(" - " in r["estimate"] for r in table) and any(" - " not in r["estimate"] for r in table)
    for r in table:
        assert float(r["PPI++ low"]) <= float(r["PPI++"]) <= float(r["PPI++ high"])
        assert float(r["width ratio"]) <= 1 + 1e-9  # never wider than the humans' own
    assert "the judge made 12 human items worth" in text or "the judge did not help" in text


# --- best-worst, ESA and MQM: the shipped examples' definitions on small generated inputs --------------------------

EXAMPLES = ROOT / "examples"
SOURCES = 10  # ESA, MQM: ten sources, two systems' translations of each; best-worst: six articles of five summaries
ARTICLES = 6
PEOPLE = ("hy1@example.org", "hy2@example.org")
TRANSLATIONS = {"sys-a": "The train to Hamburg is cancelled today because of a strike number {n}.",
                "sys-b": "The train to Hamburg falls out today, because strike number {n}."}  # fmt: skip
SUMMARIZERS = ("abstractive-a", "lead-extract", "keyword-dump", "fragmenter", "hallucinator")
# Each rater's order of the summarizers, best first; the judge's is the first annotator's.
TASTE = {PEOPLE[0]: list(SUMMARIZERS), PEOPLE[1]: ["lead-extract", *SUMMARIZERS[:1], *SUMMARIZERS[2:]],
         "judge": list(SUMMARIZERS)}  # fmt: skip


def esa_score(who: int, system: str, n: int) -> float:
    """Annotator ``who`` (2: the judge, a point lower than the humans) scores translation ``n`` of a system."""
    return float((85 if system == "sys-a" else 55) + (n * 7 + who * 3) % 11 - (who == 2))


def mqm_marks(who: int, system: str, n: int) -> list[tuple[str, str | None]]:
    marks: list[tuple[str, str | None]] = [("Accuracy", "major")] if system == "sys-b" else []
    if (n + who) % 3 == 0:
        marks.append(("Fluency/Punctuation", "minor"))
    if system == "sys-b" and n % 4 == who:
        marks.append(("Style", "minor"))
    return marks


def spans_records(name: str) -> list[dict[str, Any]]:
    records = []
    for n in range(SOURCES):
        for system, text in TRANSLATIONS.items():
            record = {"id": f"seg-{n}-{system}", "source": f"Der Zug nach Hamburg fällt heute aus ({n}).",
                      "hypothesis": text.format(n=n), "systems": [system]}  # fmt: skip
            if name == "mqm":
                record["reference"] = f"The train to Hamburg is cancelled today ({n})."
            records.append(record)
    return records


def spans_answers(name: str, who: int, system: str, n: int, hypothesis: str) -> Any:
    """(the LS result of a human, the judge's answers) for translation n of a system."""
    if name == "esa":
        marks: list[tuple[str, str | None]] = [("major", None)] if system == "sys-b" else []
        score = esa_score(who, system, n)
        result = [*span_items(hypothesis, marks), {"id": "score", "from_name": "score", "to_name": "hypothesis",
                                                    "type": "number", "value": {"number": score}, "origin": "manual"}]
        return result, {"score": score, "spans": judge_spans(hypothesis, marks)}
    marks = mqm_marks(who, system, n)
    return span_items(hypothesis, marks), {"spans": judge_spans(hypothesis, marks)}


def source_number(source: str) -> int:
    return int(source.split("(")[1].split(")")[0])


def best_worst_records() -> list[dict[str, Any]]:
    return [{"document": f"Article {n}: the council voted to close the bridge for {n + 2} months.", "id": system,
             "summary": f"Summary of article {n} by {system}."} for n in range(ARTICLES) for system in SUMMARIZERS]


@pytest.mark.parametrize("name", ["summary-best-worst", "esa", "mqm"])
def test_hybrid_best_worst_esa_and_mqm(name: str, label_studio: LiveServer, client: LabelStudioClient,
                                       tmp_path: Path) -> None:  # fmt: skip
    """The judge answers every item before the push (best-worst: the tuples as annols made them, read off the input
    here as `annols tasks` makes them), humans half the items (an item: a source's translations, an article's
    tuples); two annotators through the API; pull; report: PPI++ beside the humans' for every system and difference
    of the comparison (ESA: the score; MQM: the error score; best-worst: the score of each aspect)."""
    from annols import protocols
    from annols.definition import fields
    from annols.formats import format_for

    definition = EXAMPLES / f"{name}.toml"
    d = protocols.load(str(definition))
    records = best_worst_records() if name == "summary-best-worst" else spans_records(name)
    inputs = tmp_path / "inputs.jsonl"
    inputs.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    title = f"hybrid {name}"
    # The tuples are drawn with the study's secret: the judge answers them as this study's push makes them, from a
    # manifest made before the push (as `annols tasks` and `annols manifest import` would leave it).
    keys = manifest.Keys(b"j" * 32)
    manifest.write_manifest(manifest.manifest_path(tmp_path / ".annols", title),
                            {"protocol": d.name, "variant": d.variant, "project": title}, {}, keys=keys)  # fmt: skip
    with design.drawn_with(keys.design_secret()):
        made = {t.key: t for t in format_for(d).read([inputs], d)}
    lines = []
    for key, task in made.items():
        if name == "summary-best-worst":
            picks = {a.name: best_worst_picks(task.systems, TASTE["judge"], a.name) for a in d.spec.aspects}
            answers = {f"{a}_{end}": LETTERS[p] for a, (b, w) in picks.items()
                       for end, p in (("best", b), ("worst", w))}  # fmt: skip
        else:
            n = source_number(task.data["source"])
            answers = spans_answers(name, 2, task.systems[0], n, task.data["hypothesis"])[1]
        lines.append({"task": key, "judge": JUDGE, "answers": answers})
    judge = tmp_path / "judge.jsonl"
    judge.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    items = ARTICLES if name == "summary-best-worst" else SOURCES
    code, out, err = cli(label_studio, "push", str(definition), str(inputs), "--project", title, "--overlap", "2",
                         "--judge", str(judge), "--human-share", "0.5", "--seed", "3", cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    assert f"humans get {items // 2} of {items} items (share 0.5, seed 3)" in out

    # Only the drawn items' tasks reach the server, every task of each; neither the judge nor the rest does.
    project = client.find_project(title)
    assert project is not None
    tasks = client.export_tasks(project.id)
    for t in tasks:  # a field the server would take as its own goes under another name: the user's, here
        t["data"] = fields.from_label_studio(t["data"])
    header = manifest.read_rows(manifest.manifest_path(tmp_path / ".annols", title))[0]
    assert header["hybrid"] == {"share": 0.5, "seed": 3, "items": items, "humans": items // 2}
    store = tmp_path / ".annols" / f"hybrid-{name}.judges"
    pool = [json.loads(line) for line in (store / "pool.jsonl").read_text("utf-8").splitlines()]
    assert len(tasks) + len(pool) == len(made) and len(tasks) == len(made) // 2
    unit = "document" if name == "summary-best-worst" else "source"
    human_items = {t["data"][unit] for t in tasks}
    assert len(human_items) == items // 2 and not human_items & {p["data"][unit] for p in pool}
    on_server = json.dumps(tasks, ensure_ascii=False)
    assert JUDGE not in on_server and not any(t["annotations"] or t["predictions"] for t in tasks)
    assert not any(p["data"][unit] in on_server for p in pool)  # nor any judge-only item

    users = client.users()
    ids = [users.get(e) or client.create_user(e) for e in PEOPLE]
    shown = shown_by_task(tmp_path / ".annols", title)
    for task in tasks:
        systems = tuple(shown[task["id"]]["systems"])
        for who, user in enumerate(ids):
            if name == "summary-best-worst":
                picks = {a.name: best_worst_picks(systems, TASTE[PEOPLE[who]], a.name) for a in d.spec.aspects}
                result = best_worst(picks)
            else:
                n = source_number(task["data"]["source"])
                result = spans_answers(name, who, systems[0], n, task["data"]["hypothesis"])[0]
            client.create_annotation(task["id"], result, completed_by=user, lead_time=4.0)

    folder, report = tmp_path / "pulled", tmp_path / "report"
    code, out, err = cli(label_studio, "pull", str(definition), "--project", title, "-o", str(folder), cwd=tmp_path)
    assert code == 0, err
    assert (folder / "judges" / "pool.jsonl").is_file()
    code, _, err = cli(label_studio, "report", str(definition), str(folder), "-o", str(report), "--bootstrap", "0")
    assert code == 0, err
    text = (report / "report.md").read_text("utf-8")
    assert "Judge-assisted estimates (PPI++)" in text
    assert f"{items - items // 2} items have the judge's answers only, {items // 2} the humans'" in text
    with (report / "tables" / "judge_assisted.csv").open(encoding="utf-8", newline="") as f:
        table = list(csv.DictReader(f))
    systems = sorted({s for t in made.values() for s in t.systems})
    measure, questions = {"summary-best-worst": ("best-worst score %", ["informativeness", "fluency"]),
                          "esa": ("mean rating", ["score"]), "mqm": ("mean error score", ["error score"])}[name]
    expected = {*systems, *(f"{a} - {b}" for i, a in enumerate(systems) for b in systems[i + 1:])}
    for question in questions:
        mine = {r["estimate"]: r for r in table if r["question"] == question and r["measure"] == measure}
        assert set(mine) == expected, (question, sorted(mine))
        for r in mine.values():
            assert r["judge"] == f"judge:{JUDGE}"
            assert (int(r["items with humans"]), int(r["judge-only items"])) == (items // 2, items - items // 2)
            assert float(r["humans low"]) <= float(r["humans"]) <= float(r["humans high"])
            assert float(r["PPI++ low"]) <= float(r["PPI++"]) <= float(r["PPI++ high"])
            assert float(r["width ratio"]) <= 1 + 1e-9
        gain = [line for line in text.splitlines() if line.startswith(f"judge:{JUDGE} on {question} (")]
        assert len(gain) == 2 and all("the judge made" in g or "the judge did not help" in g for g in gain), gain
    if name == "summary-best-worst":  # the judge's letters, the tuple as annols made it, were read so
        with (report / "tables" / "judges_agreement.csv").open(encoding="utf-8", newline="") as f:
            found = [r for r in csv.DictReader(f) if r["rater 1"] == f"judge:{JUDGE}" and PEOPLE[0] in r["rater 2"]]
        assert len(found) == 4 and {float(r["agreement %"]) for r in found} == {100.0}, found
    # The humans' own estimate is the report's per-item mean: for ESA the score each system got on the humans' items.
    if name == "esa":
        scores = {r["estimate"]: float(r["humans"]) for r in table}
        human_n = sorted({source_number(t["data"]["source"]) for t in tasks})
        for system in systems:
            assert scores[system] == pytest.approx(sum(esa_score(w, system, n) for w in (0, 1) for n in human_n)
                                                   / (2 * len(human_n)), abs=1e-4)  # fmt: skip
