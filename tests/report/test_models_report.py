"""``annols report --models``: the annotator models' section for an own definition of every style
and for the protocols with tables of their own (qa-feedback, summary-flaws, sentence-errors),
from exports built here (no server). The numbers are tested in tests/analysis/raters/test_models.py;
here every report gets the section, each table names every annotator, and without the option
nothing changes."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from annols.protocols import load
from annols.report import ReportOptions
from tests.report import study
from tests.report.build import build_report
from tests.report.test_style_reports import SECTIONS, definition_of, export

MODEL_TABLES = ["models_competence", "models_items", "models_tables"]


def read(out: Path, name: str) -> list[dict[str, str]]:
    with (out / "tables" / f"{name}.csv").open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def check(result_sections: list[object], out: Path, annotators: set[str]) -> None:
    titles = [s.title for s in result_sections]  # type: ignore[attr-defined]
    assert titles[-2:] == ["Annotator models", "Rule violations"], titles
    for name in MODEL_TABLES:
        assert (out / "tables" / f"{name}.csv").is_file(), name
    competence = read(out, "models_competence")
    assert competence and {r["annotator"] for r in competence} <= annotators
    for r in competence:
        assert 0 <= float(r["Dawid-Skene"]) <= 1 and 0 <= float(r["MACE"]) <= 1
        assert r["Dawid-Skene low"] == r["Dawid-Skene high"] == ""  # no interval: the section says why
    items = read(out, "models_items")
    assert all(0 < float(r["Dawid-Skene p"]) <= 1 for r in items)
    md = (out / "report.md").read_text("utf-8")
    assert "No conclusion changes" in md or "Conclusions that change" in md
    assert "No interval for the competence" in md


@pytest.mark.parametrize("style", list(SECTIONS))
def test_every_style_gets_the_models_section(style: str, tmp_path: Path) -> None:
    tasks, _ = export(style)
    pull = study.write_pull(tmp_path / "pull", tasks)
    result = build_report(definition_of(style), [pull], tmp_path / "report", ReportOptions(bootstrap=50, models=True))
    check(result.sections, tmp_path / "report", set(study.ANNOTATORS))
    plain = build_report(definition_of(style), [pull], tmp_path / "plain", ReportOptions(bootstrap=50))
    assert "Annotator models" not in [s.title for s in plain.sections]


@pytest.mark.parametrize(("protocol", "variant", "make"), [
    ("qa-feedback", None, study.qa_feedback),
    ("summary-flaws", None, study.summary_flaws),
    ("sentence-errors", "abstract", study.sentence_errors),
])  # fmt: skip
def test_protocols_with_tables_of_their_own_get_it_too(protocol: str, variant: str | None, make: object,
                                                         tmp_path: Path) -> None:  # fmt: skip
    gen = make()  # type: ignore[operator]
    pull = study.write_pull(tmp_path / "pull", gen.tasks)
    options = ReportOptions(bootstrap=50, models=True)
    result = build_report(load(protocol, variant), [pull], tmp_path / "report", options)
    check(result.sections, tmp_path / "report", set(study.ANNOTATORS))
