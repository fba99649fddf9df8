"""Gold items in a study of each shipped protocol: a careless annotator found and left out.

Each planted study (:mod:`tests.report.study`: annotators A, B, C x 100 samples) gets 20
gold items: copies of samples 20..39 under new keys, tagged gold in meta, mixed in among
the study's tasks. Their gold judgment is A's on the original sample (an expert's pull,
``gold/export.json``). A and B answer every gold item as the gold judgment says; C, the
careless one, answers each with what C said on another sample (random answers of the
right shape).

Independent computations in the test:

- accuracy: A and B 1, C near chance (for pairwise-aspects exactly the share of C's codes
  equal to the gold codes, counted here from the raw results);
- the study's tables with gold items in the pulls are those of the study without them;
- ``--exclude-annotators flagged`` gives the tables of the study whose export never held
  C's annotations (filtered here, before any annols code reads it), and they differ from
  the tables with C.
"""

from __future__ import annotations

import copy
import csv
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from annols.protocols import load
from annols.report import ReportOptions
from annols.study.roles import GOLD, META_TAG, STUDY, decode_tag, encode_tag
from tests.report import study
from tests.report.build import build_report
from tests.report.study import ANNOTATORS, USER_IDS, Generated

A, B, C = ANNOTATORS
GOLD_SAMPLES = range(20, 40)
OTHER = 37  # C's answer on gold copy of sample s is C's answer on sample s + OTHER

GENERATORS: dict[str, tuple[Callable[[], Generated], str | None]] = {
    "pairwise-aspects": (study.pairwise, None),
    "extractive-ranking": (study.ranking, None),
    "qa-feedback": (study.qa_feedback, None),
    "summary-flaws": (study.summary_flaws, None),
    "sentence-errors": (study.sentence_errors, "abstract"),
}


def _result(task: dict[str, Any], annotator: str) -> list[dict[str, Any]]:
    """The annotator's latest submitted result on a task."""
    found = [a for a in task["annotations"] if a["completed_by"] == USER_IDS[annotator] and not a["was_cancelled"]]
    return copy.deepcopy(max(found, key=lambda a: (a["created_at"], a["id"]))["result"])


def _tag(task: dict[str, Any], role: str) -> dict[str, Any]:
    task["meta"][META_TAG] = encode_tag(task["meta"]["annols_key"], role)
    return task


class Planted:
    def __init__(self, protocol: str, tmp: Path) -> None:
        generate, self.variant = GENERATORS[protocol]
        self.protocol = protocol
        self.definition = load(protocol, self.variant)
        gen = generate()
        self.plain = [copy.deepcopy(t) for t in gen.tasks]  # the study as if there were no gold items
        by_sample = {int(t["meta"]["annols_key"].rsplit(":", 1)[1]): t for t in gen.tasks}
        mixed = [_tag(copy.deepcopy(t), STUDY) for t in gen.tasks]
        gold_tasks, self.expected_c = [], []
        for n, s in enumerate(GOLD_SAMPLES):
            original = by_sample[s]
            task = copy.deepcopy(original)
            task["id"] = 900 + n
            task["meta"]["annols_key"] = f"{protocol}:gold{n:04d}"
            _tag(task, GOLD)
            known = _result(original, A)
            careless = _result(by_sample[s + OTHER], C)
            task["annotations"] = [
                {"id": 5000 + 3 * n + i, "completed_by": USER_IDS[who], "result": copy.deepcopy(result),
                 "lead_time": 9.0, "created_at": "2024-06-01T10:00:00.000000Z", "was_cancelled": False}
                for i, (who, result) in enumerate(((A, known), (B, known), (C, careless)))
            ]  # fmt: skip
            expert = {**copy.deepcopy(task), "annotations": [{**task["annotations"][0], "completed_by": 99}]}
            gold_tasks.append(expert)
            mixed.insert(7 + 5 * n, task)  # spread through the queue
            self.expected_c.append((known, careless))
        self.pulls = study.write_pull(tmp / "pull", mixed)
        self.gold = tmp / "gold"
        self.gold.mkdir()
        (self.gold / "export.json").write_text(json.dumps(gold_tasks), encoding="utf-8")
        self.without_gold = study.write_pull(tmp / "plain", self.plain)
        without_c = copy.deepcopy(self.plain)
        for t in without_c:
            t["annotations"] = [a for a in t["annotations"] if a["completed_by"] != USER_IDS[C]]
        self.without_c = study.write_pull(tmp / "no-c", without_c)
        self.tmp = tmp

    def report(self, name: str, source: Path, **options: Any) -> Path:
        out = self.tmp / name
        build_report(self.definition, [source], out, ReportOptions(seed=3, bootstrap=200, **options))
        return out


def tables(report: Path) -> dict[str, str]:
    return {p.stem: p.read_text(encoding="utf-8") for p in sorted((report / "tables").glob("*.csv"))}


def accuracy(report: Path) -> dict[str, dict[str, str]]:
    with open(report / "tables" / "gold_accuracy.csv", encoding="utf-8", newline="") as f:
        return {row["annotator"]: row for row in csv.DictReader(f)}


COUNTS = {"sources", "annotators"}  # count gold annotations (or tasks) too: the rest must not


@pytest.mark.parametrize("protocol", list(GENERATORS))
def test_careless_annotator_found_and_left_out(protocol: str, tmp_path: Path) -> None:
    planted = Planted(protocol, tmp_path)
    gold = (planted.gold,)

    flagged = planted.report("flagged", planted.pulls, gold=gold, min_gold_accuracy=0.8,
                             exclude_annotators=("flagged",))  # fmt: skip
    found = accuracy(flagged)
    assert set(found) == {A, B, C}
    assert all(found[x]["gold items"] == str(len(GOLD_SAMPLES)) for x in found)
    assert float(found[A]["accuracy"]) == 1.0 and float(found[B]["accuracy"]) == 1.0
    assert float(found[C]["accuracy"]) < 0.6, found[C]
    assert (found[A]["flagged"], found[B]["flagged"], found[C]["flagged"]) == ("no", "no", "yes")
    if protocol == "pairwise-aspects":  # chance, counted from the raw codes
        same = total = 0
        for known, careless in planted.expected_c:
            codes = {i["from_name"]: i["value"]["choices"][0] for i in known}
            for item in careless:
                same += codes[item["from_name"]] == item["value"]["choices"][0]
                total += 1
        assert float(found[C]["accuracy"]) == pytest.approx(same / total, abs=5e-5)
        assert 0.15 < same / total < 0.6
        assert {f"accuracy {a}" for a in ("informative", "factual_consistency", "readability")} <= set(found[C])

    # Excluding C: every table as if C's annotations were never in the export.
    reference = tables(planted.report("reference", planted.without_c))
    excluded = tables(flagged)
    for name in set(reference) - COUNTS:
        assert excluded[name] == reference[name], f"{name} differs from the study without C"
    assert "gold_accuracy" in excluded and C not in excluded["annotators"]
    intro = (flagged / "report.md").read_text(encoding="utf-8")
    assert f"leaves out the judgments of {C}" in intro.split("## ", 1)[0]

    # With C, the tables are those of the study without gold items, and they moved.
    with_c = tables(planted.report("with-c", planted.pulls, gold=gold))
    plain = tables(planted.report("plain", planted.without_gold))
    for name in set(plain) - COUNTS:
        assert with_c[name] == plain[name], f"{name}: gold items counted in the study's tables"
    assert any(with_c[name] != reference[name] for name in set(reference) - COUNTS)
    assert "flagged" not in accuracy(planted.report("unflagged", planted.pulls, gold=gold))[C]


def test_tag_is_the_same_length_for_every_role_and_reads_back() -> None:
    tags = {role: encode_tag("qa-feedback:0123456789abcdef0123", role) for role in ("study", "gold", "attention")}
    assert len(set(map(len, tags.values()))) == 1 and len(set(tags.values())) == 3
    for role, tag in tags.items():
        assert decode_tag("qa-feedback:0123456789abcdef0123", tag) == (role, 0)
        assert role not in tag
    # Another task's tag, or none, says nothing: a study task.
    assert decode_tag("qa-feedback:other", tags["gold"])[0] == STUDY
    assert decode_tag("x", None) == (STUDY, 0)


def test_agreement_before_and_after_adjudication(tmp_path: Path) -> None:
    """Pairwise-aspects: A's judgment is the verdict on samples 0..9; agreement counted here from the codes."""
    planted = Planted("pairwise-aspects", tmp_path)
    by_sample = {int(t["meta"]["annols_key"].rsplit(":", 1)[1]): t for t in planted.plain}
    verdicts, codes = [], {}
    for s in range(10):
        task = copy.deepcopy(by_sample[s])
        task["meta"]["annols_adjudication"] = 1
        codes[s] = {}
        for who in (A, B, C):
            codes[s][who] = {i["from_name"]: i["value"]["choices"][0] for i in _result(task, who)}
        task["annotations"] = [{"id": 7000 + s, "completed_by": 99, "result": _result(task, A), "lead_time": 5.0,
                                "created_at": "2024-07-01T10:00:00.000000Z", "was_cancelled": False}]  # fmt: skip
        verdicts.append(task)
    adjudicated = tmp_path / "adjudicated"
    adjudicated.mkdir()
    (adjudicated / "export.json").write_text(json.dumps(verdicts), encoding="utf-8")
    out = planted.report("adjudicated-report", planted.pulls, adjudicated=(adjudicated,))
    with open(out / "tables" / "adjudication_agreement.csv", encoding="utf-8", newline="") as f:
        found = {row["annotator"]: row for row in csv.DictReader(f)}

    def share(x: dict[str, str], y: dict[str, str]) -> float:
        return sum(x[k] == y[k] for k in x) / len(x)

    for who in (A, B, C):
        others = [o for o in (A, B, C) if o != who]
        before = sum(sum(share(codes[s][who], codes[s][o]) for o in others) / 2 for s in codes) / len(codes)
        after = sum(share(codes[s][A], codes[s][who]) for s in codes) / len(codes)
        assert found[who]["items adjudicated"] == "10"
        assert float(found[who]["agreement with the others (before)"]) == pytest.approx(before, abs=5e-5)
        assert float(found[who]["agreement with the verdict (after)"]) == pytest.approx(after, abs=5e-5)
    assert float(found[A]["agreement with the verdict (after)"]) == 1.0
    assert "## Adjudication" in (out / "report.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("protocol", ["pairwise-aspects", "qa-feedback"])
def test_gold_items_are_the_annotator_models_known_labels(protocol: str, tmp_path: Path) -> None:
    """With --gold and --models the gold items join the fit with their answers known: Dawid-Skene
    (given them fixed) matches every one; majority vote does too, as A and B answer each gold item
    as the gold does; C, careless on them, gets the lowest competence; and the models' study tables
    leave the gold items out (majority vote's column is the study's without gold items)."""
    planted = Planted(protocol, tmp_path)
    with_gold = planted.report("models-gold", planted.pulls, gold=(planted.gold,), models=True)
    plain = planted.report("models-plain", planted.without_gold, models=True)

    def rows(report: Path, name: str) -> list[dict[str, str]]:
        with open(report / "tables" / f"{name}.csv", encoding="utf-8", newline="") as f:
            return list(csv.DictReader(f))

    known = rows(with_gold, "models_known")
    assert known and {r["method"] for r in known} == {"majority", "Dawid-Skene", "MACE"}
    for r in known:
        if r["method"] != "MACE":
            assert float(r["accuracy"]) == 1.0, r
    assert not (plain / "tables" / "models_known.csv").exists()
    gold_keys = {f"{protocol}:gold{n:04d}" for n in range(len(GOLD_SAMPLES))}
    assert not any(r["unit"].split(" | ")[0] in gold_keys for r in rows(with_gold, "models_items"))
    assert [(r["question"], r["system"], r["label"], r["majority"]) for r in rows(with_gold, "models_tables")] == [
        (r["question"], r["system"], r["label"], r["majority"]) for r in rows(plain, "models_tables")
    ]
    competence: dict[str, list[float]] = {}
    for r in rows(with_gold, "models_competence"):
        competence.setdefault(r["annotator"], []).append(float(r["Dawid-Skene"]))
    mean = {a: sum(v) / len(v) for a, v in competence.items()}
    assert min(mean, key=mean.__getitem__) == C, mean
