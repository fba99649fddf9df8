"""Lossless round trips through a real Label Studio: input -> push -> server -> pull -> the
protocol's own result files, equal to what went in; and `annols convert` on the saved
export reproducing pull's files byte for byte."""

from __future__ import annotations

import csv
import json
import random
import re
from collections import Counter
from pathlib import Path

import pytest

from annols import protocols
from annols.formats import summary_flaws
from annols.labelstudio.client import LabelStudioClient
from tests.conftest import QA_DEV, ROOT, LiveServer
from tests.formats.seed001_fixture import make_seed001_study
from tests.study.test_push_pull import cli, shown_by_task

DEV_FEEDBACK = QA_DEV


def pull_and_convert(server: LiveServer, protocol_args: list[str], title: str, tmp_path: Path) -> Path:
    """Pull, then convert the saved export elsewhere: every file must come out the same."""
    out = tmp_path / "pulled"
    code, stdout, err = cli(server, "pull", *protocol_args, "--project", title, "-o", str(out), "--strict",
                            cwd=tmp_path)  # the manifest push wrote there; nothing to find  # fmt: skip
    assert code == 0, err
    assert "Counts match the server" in stdout
    again = tmp_path / "converted"
    code, _, err = cli(server, "convert", *protocol_args, str(out / "export.json"), "-o", str(again))
    assert code == 0, err
    produced = sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    assert produced, "convert wrote nothing"
    for rel in produced:
        assert (again / rel).read_bytes() == (out / rel).read_bytes(), f"convert differs from pull in {rel}"
    return out


def test_qa_feedback_dev_set_500_of_500(label_studio: LiveServer, tmp_path: Path) -> None:
    title = "round trip qa-feedback"
    code, out, err = cli(label_studio, "push", "qa-feedback", str(DEV_FEEDBACK), "--project", title,
                         "--with-annotations", cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    assert out.splitlines()[-1] == "created 500, already present 0, total 500 (500 annotations)"
    pulled = pull_and_convert(label_studio, ["qa-feedback"], title, tmp_path)

    original = json.loads(DEV_FEEDBACK.read_text("utf-8"))
    rebuilt = [json.loads(line) for line in (pulled / "qa-feedback.jsonl").read_text("utf-8").splitlines()]
    assert len(rebuilt) == 500
    same = sum(a == b and list(a) == list(b) for a, b in zip(original, rebuilt, strict=True))
    assert same == 500, f"only {same} of 500 records came back equal"
    # The dataset's own file layout, byte for byte.
    assert (pulled / "qa-feedback.json").read_bytes() == DEV_FEEDBACK.read_bytes()

    counts = Counter(e["error type"] for r in rebuilt for e in r["feedback"]["errors"])
    counts.update(m["error type"] for r in rebuilt for m in r["feedback"]["missing-info"])
    assert counts == {
        "Irrelevant": 909, "Redundant": 133, "Wrong-Grounding": 163, "Unverifiable": 152, "Incoherent": 16,
        "Missing-Answer": 240, "Missing-Major-Auxiliary": 283, "Missing-Minor-Auxiliary": 319,
    }  # fmt: skip
    assert sum(bool(r["feedback"]["corrected-prediction"]) for r in rebuilt) == 487


def test_pairwise_seed001_layout_300_of_300(label_studio: LiveServer, tmp_path: Path) -> None:
    study = make_seed001_study(tmp_path / "human_evaluation", samples=100, seed=3, gaps=False)
    title = "round trip pairwise"
    code, out, err = cli(label_studio, "push", "pairwise-aspects", str(tmp_path / "human_evaluation"),
                         "--project", title, "--with-annotations", cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    assert out.splitlines()[-1] == "created 100, already present 0, total 100 (300 annotations)"
    pulled = pull_and_convert(label_studio, ["pairwise-aspects"], title, tmp_path)

    annotators = sorted(study.answers)
    assert annotators == ["A", "B", "C"]
    identical = 0
    for annotator in annotators:
        for n in range(100):
            written = (pulled / annotator / f"{n}.txt").read_text("utf-8")
            identical += written == study.canonical(annotator, n)
    assert identical == 300, f"{identical} of 300 files identical"
    assert (pulled / "index_marker.json").read_bytes() == study.index_marker
    with open(pulled / "judgments.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 900
    assert any(re.search(r"[ěščřžýáíéůú]", s.document) for s in study.samples)


def test_summary_flaws_seed_examples_as_predictions_then_annotations(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path
) -> None:
    from annols.study import demo

    d = protocols.load("summary-flaws")
    inputs, predictions = demo.example_inputs(d)
    title = "round trip summary-flaws"
    code, _, err = cli(label_studio, "push", "summary-flaws", *map(str, inputs), "--predictions",
                         str(predictions[0]), "--project", title, cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    project = client.find_project(title)
    assert project is not None
    me = client.whoami()["id"]
    for task in client.export_tasks(project.id):
        assert "model" not in task["data"]  # annotators see task data in the Data Manager: the model stays in meta
        (prediction,) = client.task_predictions(task["id"])  # the annotator accepts the critic's answer as is
        client.create_annotation(task["id"], prediction["result"], completed_by=me)
    pulled = pull_and_convert(label_studio, ["summary-flaws"], title, tmp_path)

    seed = (ROOT / "tests" / "data" / "summary_flaws" / "seed-examples.txt").read_text("utf-8")
    expected = re.findall(r"(Problematic Spans Identified in the Summary:\n.*?\n\nIs the summary missing key "
                          r"information\?\n(?:Yes|No))", seed, flags=re.S)  # fmt: skip
    assert len(expected) == 3
    models = {json.loads(line)["model"] for line in inputs[0].read_text("utf-8").splitlines() if line.strip()}
    lines = [json.loads(line) for line in (pulled / "summary-flaws.jsonl").read_text("utf-8").splitlines()]
    assert {line["model"] for line in lines} == models and len(lines) == 3
    written = (pulled / "summary-flaws.txt").read_text("utf-8")
    for block in expected:
        assert block in written
        spans = [m.group(1) for m in re.finditer(summary_flaws.SPAN_REGEX, block.split("\n", 1)[1])]
        assert spans == [m.group(1) for m in re.finditer(r"Span \d+: (.*?)( \(Label: .*?\))?(\n|$)", block)]


SPECIAL = ["OK", "Repetitive", "Sentence missing"]
MAPPING = ["Omission", "Wrong combination", "Fabrication", "Lack of rewriting"]
MEANING = ["Ungrammatical", "Semantically implausible", "No meaning can be inferred",
           "Meaning changed, not entailed", "Meaning changed, contradiction", "Pragmatic meaning changed"]  # fmt: skip


@pytest.mark.parametrize("variant", ["abstract", "headline"])
def test_sentence_errors_every_answer_value(label_studio: LiveServer, tmp_path: Path, variant: str) -> None:
    rows_per_summary = 3 if variant == "abstract" else 1
    rng = random.Random(7)
    records, expected = [], set()
    for i in range(24):
        sentences = [f"Věta {i}.{n} o přežití v Premiere League 🏆." for n in range(1, rows_per_summary + 1)]
        annotations = []
        for annotator in ("ann1", "ann2"):
            rows = []
            for n in range(1, rows_per_summary + 1):
                k = (i * rows_per_summary + n + (annotator == "ann2")) % 9
                if k < 3:
                    row = {"special": SPECIAL[k]}
                else:
                    row = {"mapping": MAPPING[k % 4], "meaning": MEANING[(i + n) % 6],
                           "explanation": f"vysvětlení {i}/{n} – „{rng.random():.3f}“ ✓"}  # fmt: skip
                rows.append(row)
                expected.add((annotator, i, n, row.get("special", ""), row.get("mapping", ""),
                              row.get("meaning", ""), row.get("explanation", "")))  # fmt: skip
            annotations.append({"annotator": annotator, "rows": rows})
        records.append({"id": i, "variant": variant, "input_text": f"Článek {i}: Leicester prohrál.", "gold": "Zlato.",
                        "generated": " ".join(f"• {s}" for s in sentences), "annotations": annotations})  # fmt: skip
    used = {r[3] for r in expected} | {r[4] for r in expected} | {r[5] for r in expected}
    assert set(SPECIAL) | set(MAPPING) | set(MEANING) <= used, "every answer value must be used"
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    title = f"round trip sentence-errors {variant}"
    args = ["sentence-errors", "--variant", variant]
    code, _, err = cli(label_studio, "push", *args, str(path), "--project", title, "--with-annotations",
                         cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    pulled = pull_and_convert(label_studio, args, title, tmp_path)
    with open(pulled / "sentence-errors.csv", encoding="utf-8", newline="") as f:
        got = {
            (r["annotator"].split("@")[0], int(r["record_id"]), int(r["sentence"]), r["special_case"], r["mapping"],
             r["meaning"], r["explanation"])
            for r in csv.DictReader(f)
        }  # fmt: skip
    assert got == expected


def test_extractive_ranking_blinded_ranks_with_ties(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path
) -> None:
    systems = ["lead3", "bertsumext", "matchsum", "oracle"]
    path = tmp_path / "sheet.csv"
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["url", "reference", *systems])
        for i in range(30):
            writer.writerow([f"https://example.org/{i}", f"Reference {i} – ž 🙂",
                             *[f"{s} sentence {i}.1 .</s>{s} sentence {i}.2 ." for s in systems]])  # fmt: skip
    title = "round trip ranking"
    code, _, err = cli(label_studio, "push", "extractive-ranking", str(path), "--project", title, "--seed", "11",
                         cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    project = client.find_project(title)
    assert project is not None
    d = protocols.load("extractive-ranking")
    dims = [x.name for x in d.spec.dimensions]
    rng = random.Random(5)
    expected: dict[tuple[str, str, str, str], int] = {}  # (url, annotator, dimension, system) -> rank
    users = client.users()
    ids = {e: users.get(e) or client.create_user(e) for e in ("r1@example.org", "r2@example.org")}
    shuffled = 0
    manifest = shown_by_task(tmp_path / ".annols", title)
    for task in client.export_tasks(project.id):
        shown = tuple(manifest[task["id"]]["systems"])
        shuffled += list(shown) != systems
        for email, user_id in ids.items():
            result = []
            for dim in dims:
                ranks = [rng.randint(1, 4) for _ in systems]  # ties on purpose
                for position, system in enumerate(shown):
                    expected[(task["data"]["url"], email, dim, system)] = ranks[position]
                    cell = f"{dim}_{'abcd'[position]}"
                    result.append({"id": cell, "from_name": cell, "to_name": f"output_{'abcd'[position]}",
                                   "type": "choices", "value": {"choices": [str(ranks[position])]}})  # fmt: skip
            client.create_annotation(task["id"], result, completed_by=user_id)
    assert shuffled > 10
    pulled = pull_and_convert(label_studio, ["extractive-ranking"], title, tmp_path)
    with open(pulled / "extractive-ranking.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 30
    got: dict[tuple[str, str, str, str], int] = {}
    for row in rows:
        assert [row[s] for s in systems] == [f"{s} sentence {row['url'].rsplit('/', 1)[1]}.1 .</s>{s} sentence "
                                             f"{row['url'].rsplit('/', 1)[1]}.2 ." for s in systems]  # fmt: skip
        for column, value in row.items():
            if column.count(":") == 2 and "@" in column:
                email, dim, system = column.split(":")
                got[(row["url"], email, dim, system)] = int(value)
    assert got == expected
    assert sum(1 for v in Counter((k[0], k[1], k[2], r) for k, r in expected.items()).values() if v > 1) > 0


def test_a_record_annotated_twice_is_one_task_with_two_annotations(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path
) -> None:
    first = json.loads(DEV_FEEDBACK.read_text("utf-8"))[0]
    second = json.loads(json.dumps(first))
    second["feedback"]["errors"] = second["feedback"]["errors"][:1]
    second["feedback"]["corrected-prediction"] = "Jiná oprava 🙂"
    path = tmp_path / "twice.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in (first, second)), encoding="utf-8")
    title = "record annotated twice"
    code, out, err = cli(label_studio, "push", "qa-feedback", str(path), "--project", title, "--with-annotations",
                         cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    assert out.splitlines()[-1] == (
        "created 1, already present 0, total 1 (1 repeated input record(s) merged into their first task; 2 annotations)"
    )
    pulled = pull_and_convert(label_studio, ["qa-feedback"], title, tmp_path)
    lines = [json.loads(line) for line in (pulled / "qa-feedback.jsonl").read_text("utf-8").splitlines()]
    assert [r["feedback"] for r in lines] == [first["feedback"], second["feedback"]]
