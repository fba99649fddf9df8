"""The judgments a study in rounds reads of an MQM pull (an export built here, no server): each task's item is its
source, every counted annotation is a judgment (one without spans scores 0), and ``report --rounds`` gives the
sequential section on the same observations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from annols.analysis.planning import sequential
from annols.definition.blinding import META_KEY, META_SYSTEMS, encode_systems
from annols.report import ReportOptions
from annols.study.table import read_judgments
from tests.analysis import rounds_planted as rp
from tests.report import study
from tests.report.build import build_report

ITEMS, SYSTEMS = 6, ("sys-a", "sys-b")
HYPOTHESIS = "The train to Hamburg is cancelled today"


def errors(item: int, a: int, system: str) -> list[tuple[str, str]]:
    """(label, severity) annotator ``a`` marks: none on sys-a's text but for one in six; sys-b a major and a minor."""
    if system == "sys-a":
        return [("Style", "minor")] if (item + a) % 6 == 0 else []
    return [("Accuracy", "major"), ("Fluency", "minor")]


def export() -> list[dict[str, Any]]:
    tasks, next_id = [], 100
    for item in range(ITEMS):
        for system in SYSTEMS:
            data = {"source": f"Satz {item}.", "reference": "ref", "hypothesis": HYPOTHESIS}
            task: dict[str, Any] = {"id": len(tasks) + 1, "data": data, "annotations": [],
                                    "meta": {META_KEY: f"mqm:{item}:{system}", META_SYSTEMS: encode_systems((system,))}}
            for a, email in enumerate(study.ANNOTATORS):
                result: list[dict[str, Any]] = []
                for n, (label, severity) in enumerate(errors(item, a, system)):
                    span = {"start": 4 * n, "end": 4 * n + 3, "text": HYPOTHESIS[4 * n: 4 * n + 3]}
                    result += [{"id": f"r{n}", "from_name": "errors", "to_name": "hypothesis", "type": "labels",
                                "value": {**span, "labels": [label]}},
                               {"id": f"r{n}", "from_name": "severity", "to_name": "hypothesis", "type": "choices",
                                "value": {**span, "choices": [severity]}}]  # fmt: skip
                next_id += 1
                task["annotations"].append({"id": next_id, "completed_by": study.USER_IDS[email], "lead_time": 3.0,
                                            "result": result, "created_at": "2024-05-01T10:00:00.000000Z",
                                            "was_cancelled": False})  # fmt: skip
            tasks.append(task)
    return tasks


def test_mqm_rounds_read_items_by_source_and_annotations_without_spans_as_zero(tmp_path: Path) -> None:
    definition = rp.example("mqm")
    pull = study.write_pull(tmp_path / "pull", export())
    tidy, _ = read_judgments(definition, [pull], rounds=True)
    assert (tidy["kind"] == sequential.JUDGED).sum() == ITEMS * len(SYSTEMS) * 3
    found = sequential.observations("spans", sequential.frame_of(definition, tidy))
    x = found[("error score", "sys-a", "sys-b")]
    assert len(x) == ITEMS  # an item per source, its two tasks together
    for item in range(ITEMS):
        a = np.mean([sum(5 if s == "major" else 1 for _, s in errors(item, n, "sys-a")) for n in range(3)])
        unit = json.dumps([f"Satz {item}.", "ref"], ensure_ascii=False)
        assert x[next(u for u in x.index if json.loads(u) == json.loads(unit))] == pytest.approx(6.0 - a)
    plain, _ = read_judgments(definition, [pull])
    assert "unit" not in plain.columns and sequential.JUDGED not in set(plain["kind"].astype(str))  # as before

    keys = sorted(f"mqm:{i}:{s}" for i in range(ITEMS) for s in SYSTEMS)
    record = tmp_path / "study.rounds.jsonl"
    record.write_text(json.dumps({"round": 1, "time": "t", "pushed": keys, "items": ITEMS, "judgments": 0,
                                  "reason": "budget", "comparisons": [{"key": ["error score", "sys-a", "sys-b"],
                                                                       "decision": "undecided"}],
                                  "eta": sequential.eta_for(ITEMS), "tests": 1, "alpha": 0.05, "effect": 2.0,
                                  "fixed": {"items": None, "judgments": None, "annotators": 3, "plan": False}})
                      + "\n", encoding="utf-8")  # fmt: skip
    result = build_report(definition, [pull], tmp_path / "report", ReportOptions(bootstrap=0, rounds=record))
    section = next(s for s in result.sections if s.title == "Sequential study")
    row = section.tables[0].frame.iloc[0]
    assert row["items"] == ITEMS and row["mean"] == pytest.approx(float(x.mean()))
    assert f"{ITEMS * 2 * 3} human judgments" in section.summary[0]
