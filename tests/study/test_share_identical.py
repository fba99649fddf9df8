"""push --share-identical (issue #38 item 1): records of identical outputs of different systems share one
task, shown once and credited to every system that produced the text. Offline: push's task building,
the manifest's and a pull's rows, the result files and the report built from a saved export."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pandas as pd  # type: ignore[import-untyped, unused-ignore]
import pytest

from annols import protocols
from annols.analysis.by_style.spans import ALL_SYSTEMS
from annols.errors import AnnolsError
from annols.study import exports, push
from annols.study.manifest import Keys, Shown, write_manifest

ROOT = Path(__file__).resolve().parents[2]
DA = ROOT / "examples" / "wmt-da.toml"
SOURCE = "Danke."


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def _records() -> list[dict[str, Any]]:
    return [
        {"id": "seg-1", "source_text": SOURCE, "translation": "Thank you.", "systems": ["sys-a"]},
        {"id": "seg-1", "source_text": SOURCE, "translation": "Thank you.", "systems": ["sys-b"]},
        {"id": "seg-1", "source_text": SOURCE, "translation": "Thanks.", "systems": ["sys-c"]},
        {"id": "seg-1", "source_text": SOURCE, "translation": "Thank you.", "systems": ["sys-a"]},  # exact repeat
    ]


def test_identical_outputs_share_one_task_credited_to_each_system(tmp_path: Path) -> None:
    definition = protocols.load(DA)
    path = _write(tmp_path / "in.jsonl", _records())
    found = push.scan(definition, [path], keys=Keys.new(), share=True)
    assert len(found.keys) == 2  # "Thank you." once for sys-a and sys-b, "Thanks." for sys-c
    assert found.duplicates == 1  # the exact repeat of sys-a's record
    assert found.shares[found.keys[0]] == [("sys-a",), ("sys-b",)]
    assert found.shares[found.keys[1]] == [("sys-c",)]
    assert found.sharing == (2, 1)  # two outputs share one task
    shown: dict[str, Shown] = {}
    built = [(key, systems, task, repeat) for key, systems, task, repeat in push.build_tasks(
        definition, [path], keys=Keys.new(), shown=shown, share=True)]  # fmt: skip
    assert [repeat for *_, repeat in built] == [False, True, False, True]
    assert built[0][0] == built[1][0] != built[2][0]
    sent = built[0][2]
    # Blinding: the shared task shows the text once and carries nothing of the other system (only its key).
    assert sent["data"]["translation"] == "Thank you." and set(sent["meta"]) == {"annols_key"}
    assert "sys-b" not in json.dumps(sent) and "sys-a" not in json.dumps(sent)
    assert shown[built[0][0]].systems == ("sys-a",) and shown[built[2][0]].systems == ("sys-c",)


def test_without_the_option_each_output_is_its_own_task(tmp_path: Path) -> None:
    definition = protocols.load(DA)
    found = push.scan(definition, [_write(tmp_path / "in.jsonl", _records())], keys=Keys.new())
    assert len(found.keys) == 3 and found.duplicates == 1 and found.shares == {} and found.sharing == (0, 0)


def test_multi_candidate_styles_refuse_the_option() -> None:
    pairwise = protocols.load(ROOT / "examples" / "chat-arena.toml")
    with pytest.raises(AnnolsError, match="--share-identical is for definitions whose tasks show one candidate"):
        push.check_sharing(pairwise, True)
    push.check_sharing(pairwise, False)
    push.check_sharing(protocols.load(DA), True)
    push.check_sharing(protocols.load(ROOT / "examples" / "esa.toml"), True)


def test_manifest_and_pull_credit_every_share(tmp_path: Path) -> None:
    definition = protocols.load(DA)
    path = _write(tmp_path / "in.jsonl", _records())
    keys = Keys.new()
    found = push.scan(definition, [path], spool=(tmp_path / "spool").open("w+b"), keys=keys, share=True)
    manifest = tmp_path / "m.manifest.jsonl"
    present = {k: (i + 1, ()) for i, k in enumerate(found.keys)}
    write_manifest(manifest, {"protocol": definition.name}, present, (), found.shown_with_shares(), {}, keys)
    rows = [json.loads(line) for line in manifest.read_text(encoding="utf-8").splitlines()[1:]]
    assert rows[0]["shares"] == [["sys-a"], ["sys-b"]] and "shares" not in rows[1]
    # A pull: the export beside the manifest's rows; the shared task read once per system.
    pull = tmp_path / "pull"
    pull.mkdir()
    exports.write_blinding(pull, rows)
    rating = [{"id": "r", "from_name": "translation_rating", "to_name": "translation", "type": "number",
               "value": {"number": 70}}]  # fmt: skip
    raw = [{"id": 1, "data": {"source_text": SOURCE, "translation": "Thank you."}, "meta": {},
            "annotations": [{"id": 11, "completed_by": 1, "result": rating}]},
           {"id": 2, "data": {"source_text": SOURCE, "translation": "Thanks."}, "meta": {},
            "annotations": []}]  # fmt: skip
    (pull / exports.EXPORT_FILE).write_text(json.dumps(raw), encoding="utf-8")
    tasks = list(exports.read_export(pull / exports.EXPORT_FILE))
    assert [(t.id, t.systems, t.share) for t in tasks] == [(1, ("sys-a",), 0), (1, ("sys-b",), 1), (2, ("sys-c",), 0)]
    assert [a.id for a in tasks[0].annotations] == [a.id for a in tasks[1].annotations] == [11]
    once = list(exports.read_export(pull / exports.EXPORT_FILE, shares=False))
    assert [(t.id, t.systems) for t in once] == [(1, ("sys-a",)), (2, ("sys-c",))]


def test_judgments_made_apart_cannot_be_shared(tmp_path: Path) -> None:
    options = push.PushOptions(title="t", with_annotations=True, share_identical=True, manifest_dir=tmp_path)
    with pytest.raises(AnnolsError, match="judgments already made of each system's output cannot come with it"):
        push.push(None, protocols.load(DA), [tmp_path / "in.jsonl"], options)  # type: ignore[arg-type]


def _span(text: str, word: str, label: str, n: int) -> dict[str, Any]:
    start = text.index(word)
    return {"id": f"s{n}", "from_name": "errors", "to_name": "hypothesis", "type": "labels", "origin": "manual",
            "value": {"start": start, "end": start + len(word), "text": word, "labels": [label]}}  # fmt: skip


def test_spans_report_credits_each_system_and_counts_agreement_once(tmp_path: Path) -> None:
    """An ESA pull of a shared task (sys-a and sys-b wrote "The train is late.") and sys-c's own: the spans
    per system count the shared task's spans for both, the span agreement its judgments once."""
    from tests.study.test_push_pull import invoke

    shared, own = "The train is late.", "The train late is."
    blinding_rows = [{"task_id": 1, "key": "esa:1", "systems": ["sys-a"], "order": [0], "role": "study",
                      "shares": [["sys-a"], ["sys-b"]]},
                     {"task_id": 2, "key": "esa:2", "systems": ["sys-c"], "order": [0], "role": "study"}]  # fmt: skip
    marks = {  # annotator -> task id -> spans
        1: {1: [_span(shared, "late", "minor", 0)], 2: [_span(own, "late is", "major", 0)]},
        2: {1: [_span(shared, "late", "minor", 0), _span(shared, "train", "major", 1)],
            2: [_span(own, "late is", "major", 0)]},
    }  # fmt: skip
    score = {"id": "score", "from_name": "score", "to_name": "hypothesis", "type": "number", "value": {"number": 50}}
    raw = [{"id": t, "data": {"source": "Der Zug ist spät.", "hypothesis": text}, "meta": {},
            "annotations": [{"id": 10 * t + who, "completed_by": who, "created_at": f"2026-01-0{who}",
                             "result": [*marks[who][t], score]} for who in (1, 2)]}
           for t, text in ((1, shared), (2, own))]  # fmt: skip
    pull = tmp_path / "pull"
    pull.mkdir()
    (pull / exports.EXPORT_FILE).write_text(json.dumps(raw), encoding="utf-8")
    (pull / exports.ANNOTATORS_FILE).write_text(json.dumps({"1": "a@x.org", "2": "b@x.org"}), encoding="utf-8")
    exports.write_blinding(pull, blinding_rows)
    code, out, err = invoke({}, "report", str(ROOT / "examples" / "esa.toml"), str(pull), "-o", str(tmp_path / "r"))
    assert code == 0, err
    assert "2 items, 4 judgments" in out
    with open(tmp_path / "r" / "tables" / "spans_counts.csv", encoding="utf-8", newline="") as f:
        counts = {(r["label"], r["system"]): (int(r["spans"]), int(r["judgments"])) for r in csv.DictReader(f)}
    assert counts[("minor", "sys-a")] == counts[("minor", "sys-b")] == (2, 2)  # the shared task's, for both
    assert counts[("major", "sys-a")] == counts[("major", "sys-b")] == (1, 2)
    assert counts[("major", "sys-c")] == (2, 2) and counts[("minor", "sys-c")] == (0, 2)
    assert counts[("minor", ALL_SYSTEMS)][1] == 6  # every credit (4 judgments, 2 of them for two systems)
    with open(tmp_path / "r" / "tables" / "spans_agreement.csv", encoding="utf-8", newline="") as f:
        agreement = {r["label"]: r for r in csv.DictReader(f)}
    # Once each: one pair of annotators per task (2, not 3), the 5 spans marked (not 8), 8 tokens (2 tasks of 4).
    every = agreement["all labels"]
    assert [every[c] for c in ("annotator pairs", "spans", "exact matches", "token units")] == ["2", "5", "2", "8"]
    # major: 1 exact match, of a's 1 span and b's 2
    assert float(agreement["major"]["exact F1"]) == pytest.approx(2 * 1 / (2 + 1), abs=1e-4)
    report = (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
    assert "2 outputs share 1 tasks" in report


RATED = """name = "rated"
style = "ratings"
summary = "Rate a translation from 1 to 5."
guideline = "Rate the translation."

[[context]]
name = "source_text"
title = "Source"

[[candidates]]
name = "translation"
title = "Translation"

[[answers]]
code = "1"

[[answers]]
code = "2"

[[answers]]
code = "3"

[[answers]]
code = "4"

[[answers]]
code = "5"

[[aspects]]
name = "quality"
text = "Quality"
"""
# task id -> (its text, the systems that produced it: the first the task's own, the others credited)
SHARED = {1: ("A1", ["sys-a", "sys-b"]), 2: ("A2", ["sys-a", "sys-b"]), 3: ("C1", ["sys-c"]), 4: ("B1", ["sys-b"]),
          5: ("C2", ["sys-c", "sys-a"]), 6: ("B2", ["sys-b"])}  # fmt: skip
CODES = {1: {1: "4", 2: "5", 3: "2", 4: "3", 5: "2", 6: "4"},  # annotator -> task id -> the code given
         2: {1: "4", 2: "4", 3: "1", 4: "3", 5: "2", 6: "5"},
         3: {1: "5", 2: "5", 3: "2", 4: "2", 5: "1", 6: "4"}}  # fmt: skip


def test_annotator_models_fit_each_judgment_once_and_credit_every_system(tmp_path: Path) -> None:
    """report --models on a study pushed with --share-identical: Dawid-Skene and MACE are fitted to the 18
    judgments (6 tasks, 3 annotators) once, not to their copies for the other systems (each annotator 6 units,
    not 9); the per-unit and per-system tables credit a shared task's labels to every system that wrote its text."""
    from crowdkit.aggregation import DawidSkene  # type: ignore[import-untyped, import-not-found, unused-ignore]

    from annols.analysis.raters import models
    from tests.study.test_push_pull import invoke

    definition = tmp_path / "rated.toml"
    definition.write_text(RATED, encoding="utf-8")
    rows, raw = [], []
    for t, (text, systems) in SHARED.items():
        row: dict[str, Any] = {"task_id": t, "key": f"rated:{t}", "systems": [systems[0]], "order": [0],
                               "role": "study"}  # fmt: skip
        if len(systems) > 1:
            row["shares"] = [[s] for s in systems]
        rows.append(row)
        result = [lambda code: [{"id": "q", "from_name": "quality_translation", "to_name": "translation",
                                 "type": "choices", "value": {"choices": [code]}}]][0]  # fmt: skip
        raw.append({"id": t, "data": {"source_text": f"source {text}", "translation": text}, "meta": {},
                    "annotations": [{"id": 10 * t + who, "completed_by": who, "created_at": f"2026-01-0{who}",
                                     "result": result(CODES[who][t])} for who in CODES]})  # fmt: skip
    pull = tmp_path / "pull"
    pull.mkdir()
    (pull / exports.EXPORT_FILE).write_text(json.dumps(raw), encoding="utf-8")
    emails = {str(who): f"r{who}@x.org" for who in CODES}
    (pull / exports.ANNOTATORS_FILE).write_text(json.dumps(emails), encoding="utf-8")
    exports.write_blinding(pull, rows)
    code, out, err = invoke({}, "report", str(definition), str(pull), "-o", str(tmp_path / "r"), "--models",
                            "--bootstrap", "0")  # fmt: skip
    assert code == 0, err
    assert "6 items, 18 judgments" in out

    def table(name: str) -> list[dict[str, str]]:
        with open(tmp_path / "r" / "tables" / f"{name}.csv", encoding="utf-8", newline="") as f:
            return list(csv.DictReader(f))

    # The fit, computed apart with crowd-kit on each judgment once (task, worker, label).
    once = pd.DataFrame([(f"t{t}", emails[str(who)], CODES[who][t]) for who in CODES for t in SHARED],
                        columns=["task", "worker", "label"])  # fmt: skip
    once = once.sort_values(["task", "worker"], ignore_index=True)
    ds = DawidSkene(n_iter=models.DS_ITERATIONS).fit(once)
    competence = {r["annotator"]: r for r in table("models_competence")}
    assert sorted(competence) == sorted(emails.values())
    for worker, r in competence.items():
        assert r["units"] == "6"  # each judgment once: 6 tasks, not 9 units with the copies
        errors = ds.errors_.loc[worker]
        accuracy = sum(ds.priors_[c] * errors.loc[c, c] for c in ds.priors_.index
                       if c in errors.index and c in errors.columns)  # fmt: skip
        assert float(r["Dawid-Skene"]) == pytest.approx(accuracy, abs=1e-4), worker
    # Every system that produced a text has its unit, with the labels of the one judged task.
    units = {(r["unit"].split(" | ")[0], r["system"]): r for r in table("models_items")}
    assert sorted(units) == sorted((f"rated:{t}", s) for t, (_, systems) in SHARED.items() for s in systems)
    for t, (_, systems) in SHARED.items():
        mine = [units[(f"rated:{t}", s)] for s in systems]
        assert all({k: v for k, v in r.items() if k not in ("unit", "system")} ==
                   {k: v for k, v in mine[0].items() if k not in ("unit", "system")} for r in mine)  # fmt: skip
        assert float(mine[0]["Dawid-Skene"]) == float(ds.labels_[f"t{t}"])
    # Majority vote by system, apart: a system's units are the tasks of the texts it produced.
    majority = {t: max(sorted({CODES[w][t] for w in CODES}), key=[CODES[w][t] for w in CODES].count) for t in SHARED}
    means = {r["system"]: float(r["majority"]) for r in table("models_tables") if r["label"] == "mean"}
    for system in ("sys-a", "sys-b", "sys-c"):
        mine = [int(majority[t]) for t, (_, systems) in SHARED.items() if system in systems]
        assert means[system] == pytest.approx(sum(mine) / len(mine), abs=1e-4), system


def test_the_tasks_file_shares_identical_outputs_as_push_does(tmp_path: Path) -> None:
    """annols tasks --share-identical: the import file holds each shared text once, the manifest's rows and header
    say which systems share it (what pull credits after `annols manifest import`), and the line says how many."""
    from tests.study.test_push_pull import invoke

    path = _write(tmp_path / "in.jsonl", _records())
    out, manifests = tmp_path / "tasks.json", tmp_path / "m"
    code, said, err = invoke({}, "tasks", str(DA), str(path), "-o", str(out), "--manifest-dir", str(manifests),
                             "--share-identical")  # fmt: skip
    assert code == 0, err
    assert said.splitlines()[:2] == ["Wrote 2 tasks to " + str(out) + " (1 duplicates skipped)",
                                     "2 outputs share 1 tasks (identical texts of several systems, shown once and "
                                     "credited to each)"]  # fmt: skip
    sent = json.loads(out.read_text(encoding="utf-8"))
    assert sorted(t["data"]["translation"] for t in sent) == ["Thank you.", "Thanks."]
    assert "sys-" not in out.read_text(encoding="utf-8")
    header, *rows = [json.loads(line) for line in (manifests / "tasks.manifest.jsonl").read_text("utf-8").splitlines()]
    assert header["share_identical"] is True
    shares = {tuple(r["systems"]): r.get("shares") for r in rows}
    assert shares == {("sys-a",): [["sys-a"], ["sys-b"]], ("sys-c",): None}
    # The same as push's scan: its keys and shares.
    found = push.scan(protocols.load(DA), [path], keys=Keys.new(), share=True)
    assert len(found.keys) == len(sent) and found.sharing == (2, 1)
    # Without the option, each output its own task, and no shares.
    code, said, err = invoke({}, "tasks", str(DA), str(path), "-o", str(tmp_path / "apart.json"), "--manifest-dir",
                             str(manifests))  # fmt: skip
    assert code == 0, err
    assert said.splitlines()[0].startswith("Wrote 3 tasks") and "outputs share" not in said
    apart = [json.loads(line) for line in (manifests / "apart.manifest.jsonl").read_text("utf-8").splitlines()]
    assert "share_identical" not in apart[0] and not any("shares" in r for r in apart[1:])


def test_the_tasks_file_refuses_sharing_where_push_does(tmp_path: Path) -> None:
    from tests.study.test_push_pull import invoke

    path = _write(tmp_path / "in.jsonl", _records())
    code, _, err = invoke({}, "tasks", str(DA), str(path), "-o", str(tmp_path / "t.json"), "--share-identical",
                          "--with-annotations", "--manifest-dir", str(tmp_path / "m"))  # fmt: skip
    assert code != 0 and "judgments already made of each system's output cannot come with it" in err
    arena = ROOT / "examples" / "chat-arena.toml"
    code, _, err = invoke({}, "tasks", str(arena), str(path), "-o", str(tmp_path / "t.json"), "--share-identical",
                          "--manifest-dir", str(tmp_path / "m"))  # fmt: skip
    assert code != 0 and "--share-identical is for definitions whose tasks show one candidate" in err
    assert not (tmp_path / "t.json").exists()
