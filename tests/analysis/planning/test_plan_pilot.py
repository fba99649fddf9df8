"""``annols plan --pilot``: variance components estimated from a planted pilot with known variances, and the two
claims' recommendations following them."""

from __future__ import annotations

import json
import math
import re
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from annols.analysis.planning import plan
from annols.cli import main
from annols.definition import Definition, blinding
from annols.protocols import parse_definition
from annols.study.table import read_judgments

PILOT_TOML = """
name = "pilot"
style = "ratings"
scale = "slider"
summary = "Planted."
guideline = "Judge."

[[context]]
name = "source"
title = "Source"

[[candidates]]
name = "first"
title = "First"

[[candidates]]
name = "second"
title = "Second"

[slider]
min = 0
max = 100

[[aspects]]
name = "adequacy"
text = "Adequacy"
"""

ITEMS, ANNOTATORS = 60, 12
EFFECT, ITEM_SD, RESIDUAL_SD = 8.0, 6.0, 5.0


def definition(tmp_path: Path) -> tuple[Definition, Path]:
    path = tmp_path / "pilot.toml"
    path.write_text(PILOT_TOML, encoding="utf-8")
    return parse_definition(tomllib.loads(PILOT_TOML), str(path)), path


def planted_pilot(folder: Path, d: Definition, annotator_sd: float, seed: int) -> dict[str, Any]:
    """A pull folder: every item rated by every annotator, system B = A + effect + u_item + b_annotator + e (points
    of the 0-100 slider). Returns the planted draws, the truth the test compares with."""
    rng = np.random.default_rng(seed)
    spec = d.spec
    fields = blinding.candidate_fields(d)
    u = rng.normal(0, ITEM_SD, ITEMS)
    b = rng.normal(0, annotator_sd, ANNOTATORS) if annotator_sd else np.zeros(ANNOTATORS)
    base = rng.uniform(30, 50, ITEMS)
    tasks, differences = [], np.zeros((ITEMS, ANNOTATORS))
    users = {str(k + 1): f"rater-{k}@example.org" for k in range(ANNOTATORS)}
    for i in range(ITEMS):
        shown = ("A", "B") if i % 2 else ("B", "A")  # blinding: the order shown alternates
        data = {"source": f"source {i}", **{f: f"output of {s} on {i}" for f, s in zip(fields, shown, strict=True)}}
        meta = {blinding.META_KEY: f"pilot:{i:03d}", blinding.META_SYSTEMS: blinding.encode_systems(shown)}
        annotations = []
        for k in range(ANNOTATORS):
            a_value = base[i] + rng.normal(0, RESIDUAL_SD / math.sqrt(2))
            b_value = base[i] + EFFECT + u[i] + b[k] + rng.normal(0, RESIDUAL_SD / math.sqrt(2))
            value = {"A": round(a_value, 2), "B": round(b_value, 2)}
            differences[i, k] = value["B"] - value["A"]
            aspect = spec.aspects[0]
            result = [{"id": f"r{i}-{k}-{n}", "from_name": spec.cell(aspect, c), "to_name": c.name, "type": "number",
                       "value": {"number": value[s]}, "origin": "manual"}
                      for n, (c, s) in enumerate(zip(spec.candidates, shown, strict=True))]  # fmt: skip
            annotations.append({"id": 1000 + i * ANNOTATORS + k, "completed_by": k + 1, "result": result,
                                "lead_time": 20.0, "created_at": "2026-11-23T10:00:00.000000Z",
                                "was_cancelled": False})  # fmt: skip
        tasks.append({"id": i + 1, "data": data, "meta": meta, "annotations": annotations, "predictions": []})
    folder.mkdir(parents=True)
    (folder / "export.json").write_text(json.dumps(tasks), encoding="utf-8")
    (folder / "annotators.json").write_text(json.dumps(users), encoding="utf-8")
    (folder / "project.json").write_text(json.dumps({"title": "pilot", "id": 3, "url": "http://127.0.0.1:8080",
                                                     "overlap": ANNOTATORS}), encoding="utf-8")  # fmt: skip
    return {"u": u, "b": b, "differences": differences}


def anova(y: np.ndarray) -> tuple[float, float, float]:
    """Independent: item, annotator and residual sd from the expected mean squares of the two-way crossed design,
    one observation per cell (items x annotators)."""
    n, k = y.shape
    grand = y.mean()
    ms_item = k * ((y.mean(axis=1) - grand) ** 2).sum() / (n - 1)
    ms_annotator = n * ((y.mean(axis=0) - grand) ** 2).sum() / (k - 1)
    resid = y - y.mean(axis=1, keepdims=True) - y.mean(axis=0, keepdims=True) + grand
    ms_resid = (resid**2).sum() / ((n - 1) * (k - 1))
    return (math.sqrt(max(ms_item - ms_resid, 0) / k), math.sqrt(max(ms_annotator - ms_resid, 0) / n),
            math.sqrt(ms_resid))  # fmt: skip


@pytest.mark.parametrize("annotator_sd", [0.0, 12.0])
def test_pilot_estimates_the_planted_variance_components(tmp_path: Path, annotator_sd: float) -> None:
    d, _ = definition(tmp_path)
    truth = planted_pilot(tmp_path / "pull", d, annotator_sd, seed=11)
    a = plan.from_pilot(d, *read_judgments(d, [tmp_path / "pull"]), plan.assumptions(d))
    item_sd, annotator, residual = anova(truth["differences"])
    # statsmodels' REML MixedLM equals the ANOVA (method of moments) estimates on a balanced design ...
    assert a.item_sd == pytest.approx(item_sd, rel=0.02)
    assert a.annotator_sd == pytest.approx(annotator, rel=0.02, abs=0.3)
    assert a.residual_sd == pytest.approx(residual, rel=0.1)
    # ... and both are near the planted truth: the sds of the draws this pilot holds, within sampling error
    assert a.item_sd == pytest.approx(float(np.std(truth["u"], ddof=1)), rel=0.25)
    assert a.annotator_sd == pytest.approx(float(np.std(truth["b"], ddof=1)), rel=0.25, abs=1.0)
    assert a.residual_sd == pytest.approx(RESIDUAL_SD, rel=0.1)
    assert a.effect == pytest.approx(float(truth["differences"].mean()))
    assert a.effect == pytest.approx(EFFECT + float(truth["u"].mean() + truth["b"].mean()), abs=1.0)


def test_a_large_planted_annotator_variance_changes_the_recommendation(tmp_path: Path) -> None:
    d, toml = definition(tmp_path)
    quiet = planted_pilot(tmp_path / "quiet", d, 0.0, seed=5)
    loud = planted_pilot(tmp_path / "loud", d, 12.0, seed=5)
    assert quiet and loud
    outputs = {}
    for name in ("quiet", "loud"):
        result = CliRunner().invoke(main, ["plan", str(toml), "--pilot", str(tmp_path / name), "--effect", "3",
                                           "--items", "25,50,100", "--annotators", "1,2,3,10,40",
                                           "--simulations", "200"])  # fmt: skip
        assert result.exit_code == 0, result.output
        lines = result.output.splitlines()
        assert lines[-2].startswith("For new items, these annotators (the items' test): ")
        assert lines[-1].startswith("For new items and new annotators (the crossed test, min F'): ")
        outputs[name] = lines[-2:]
    # Annotators hardly vary: the crossed claim has a design in the grid. They vary a lot (sd 12 points against an
    # effect of 3): both claims cost more, the crossed one more than the grid's 40 annotators can give.
    def judgments(line: str) -> int:
        return int(line.split(" annotator(s) = ")[1].split(" ")[0])

    assert judgments(outputs["loud"][0]) > judgments(outputs["quiet"][0])
    assert re.search(r": \d+ items x \d+ annotator\(s\)", outputs["quiet"][1]), outputs["quiet"]
    assert "no design of the grid reaches power 0.8; the most, 40 annotators" in outputs["loud"][1], outputs["loud"]
