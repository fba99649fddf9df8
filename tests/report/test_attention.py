"""Attention checks: made at push (two identical candidates), scored in the report.

A seed-001 pairwise study of 12 samples pushed (as tasks, through ``push.build_tasks``)
with ``attention=4``: 4 copies of study items whose two summaries are the same text, with
the role ``attention`` in the manifest (nothing in their meta tells them apart), among the
study's tasks. In a planted pull of those tasks, A ties every
aspect of every check; C answers with random codes: C's score is the share of C's codes
that are the tie code, counted here from the raw results. Ranking and ratings are scored
by :func:`annols.study.attention.score` from planted judgments below.
"""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path
from typing import Any

import pytest

from annols.errors import AnnolsError
from annols.protocols import load
from annols.report import ReportOptions
from annols.study import attention, push
from annols.study.exports import write_blinding
from annols.study.manifest import Shown
from annols.study.roles import ATTENTION, STUDY
from annols.styles.answers import ExportedTask
from annols.styles.judgments import Rank
from tests.formats.seed001_fixture import make_seed001_study
from tests.report import study
from tests.report.build import build_report
from tests.report.study import ANNOTATORS, USER_IDS

ASPECTS = ("informative", "factual_consistency", "readability")
A, C = ANNOTATORS[0], ANNOTATORS[2]


def test_checks_made_mixed_in_and_scored(tmp_path: Path) -> None:
    definition = load("pairwise-aspects")
    seed001 = make_seed001_study(tmp_path / "study", samples=12, seed=5, gaps=False)
    manifest: dict[str, Shown] = {}
    built = list(push.build_tasks(definition, [seed001.root], seed=2, attention=4, shown=manifest))
    roles = [manifest[key].role for key, _, _, _ in built]
    assert roles.count(ATTENTION) == 4 and roles.count(STUDY) == 12
    assert roles[-4:] != [ATTENTION] * 4
    assert {tuple(p["meta"]) for _, _, p, _ in built} == {("annols_key",)}  # the role is not on the server
    assert len({len(p["meta"]["annols_key"]) for _, _, p, _ in built}) == 1
    checks = [p["data"] for (_, _, p, _), r in zip(built, roles, strict=True) if r == ATTENTION]
    assert all("sample" not in data for data in checks)  # no study item's record id on a check
    study_docs = {p["data"]["document"] for (_, _, p, _), r in zip(built, roles, strict=True) if r == STUDY}
    for (_, _, payload, _), role in zip(built, roles, strict=True):
        if role == ATTENTION:
            assert payload["data"]["summary_1"] == payload["data"]["summary_2"]
            assert payload["data"]["document"] in study_docs

    rng = random.Random(9)
    tasks, careless = [], []
    for n, ((_, _, payload, _), role) in enumerate(zip(built, roles, strict=True)):
        task: dict[str, Any] = {"id": n + 1, "data": payload["data"], "meta": payload["meta"], "annotations": []}
        for i, who in enumerate((A, C)):
            codes = ["0"] * 3 if role == ATTENTION and who == A else [rng.choice("120") for _ in ASPECTS]
            if role == ATTENTION and who == C:
                careless += codes
            result = [{"id": f"r{n}{i}{a}", "from_name": a, "to_name": "summary_1", "type": "choices",
                       "value": {"choices": [c]}} for a, c in zip(ASPECTS, codes, strict=True)]  # fmt: skip
            task["annotations"].append({"id": 10 * n + i, "completed_by": USER_IDS[who], "result": result,
                                        "lead_time": 4.0, "created_at": f"2024-06-01T10:{n:02d}:00.000000Z",
                                        "was_cancelled": False})  # fmt: skip
        tasks.append(task)
    pulled = study.write_pull(tmp_path / "pull", tasks, overlap=2)
    write_blinding(pulled, [{"task_id": n + 1, "key": key, "systems": list(manifest[key].systems),
                             "order": manifest[key].order, "role": manifest[key].role}
                            for n, (key, _, _, _) in enumerate(built)])  # fmt: skip
    out = tmp_path / "report"
    build_report(definition, [pulled], out, ReportOptions(bootstrap=0, min_gold_accuracy=0.9))
    with open(out / "tables" / "gold_accuracy.csv", encoding="utf-8", newline="") as f:
        found = {row["annotator"]: row for row in csv.DictReader(f)}
    assert float(found[A]["accuracy"]) == 1.0
    assert float(found[C]["accuracy"]) == pytest.approx(careless.count("0") / len(careless), abs=5e-5)
    assert (found[A]["flagged"], found[C]["flagged"]) == ("no", "yes")
    assert found[A]["gold items"] == "4"
    items = json.loads((pulled / "export.json").read_text("utf-8"))
    assert len(items) == 16


def test_ranking_and_ratings_checks_scored() -> None:
    ranking = load("extractive-ranking")
    data = {"url": "u", "reference": "r", "output_a": "same", "output_b": "same", "output_c": "x", "output_d": "y"}
    task = ExportedTask(1, "extractive-ranking:x", data, ("s1", "s1", "s3", "s4"), ())
    dims = ("informative", "coherence", "overall")
    alike = [Rank(d, p, "", r) for d in dims for p, r in (("A", 2), ("B", 2), ("C", 1), ("D", 4))]
    apart = [Rank(d, p, "", r) for d in dims for p, r in (("A", 1 if d == "overall" else 2), ("B", 2), ("C", 3),
                                                          ("D", 4))]  # fmt: skip
    assert attention.score(ranking, task, alike) == {attention.ASPECT: 1.0}
    assert attention.score(ranking, task, apart) == {attention.ASPECT: pytest.approx(2 / 3)}
    assert attention.score(ranking, task, alike[:6]) == {attention.ASPECT: pytest.approx(2 / 3)}  # one unranked
    with pytest.raises(AnnolsError, match="no two candidates"):
        attention.check_possible(load("qa-feedback"))
