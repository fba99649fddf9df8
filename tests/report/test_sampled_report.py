"""The second result, annotators as sampled, through the whole report: the own planted studies (tests/own_study.py)
judged by six annotators get ``<style>_annotators_sampled.csv`` beside the items' tests, its words in report.md and
a headline that names both; with the usual three annotators the report says why it is not given."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from annols.report import ReportOptions
from tests import own_study
from tests.report import study, test_style_reports
from tests.report.build import build_report
from tests.report.test_report_files import read_csv
from tests.report.test_style_reports import definition_of, export

SIX = ("a", "b", "c", "d", "e", "f")
LIKE = {"d": "a", "e": "b", "f": "a"}  # the planted truths know a, b and c: the others judge as one of them
ITEMS_P = {"pairwise": "pairwise_sign_test", "ratings": "ratings_paired_tests", "ranking": "ranking_paired_tests"}


def six_annotators(monkeypatch: pytest.MonkeyPatch) -> None:
    emails = tuple(f"ann-{a}@example.org" for a in SIX)
    monkeypatch.setattr(own_study, "ANNOTATORS", SIX)
    monkeypatch.setattr(study, "ANNOTATORS", emails)
    monkeypatch.setattr(study, "USER_IDS", {e: i + 1 for i, e in enumerate(emails)})
    monkeypatch.setattr(test_style_reports, "EMAILS", dict(zip(SIX, emails, strict=True)))
    for style, plant in own_study.STUDIES.items():
        monkeypatch.setitem(own_study.STUDIES, style, replace(plant, truth=alias(plant.truth)))


def alias(truth: Any) -> Any:
    return lambda item, annotator: truth(item, LIKE.get(annotator, annotator))


def report(style: str, folder: Path) -> tuple[Path, str]:
    tasks, _ = export(style)
    out = folder / "report"
    build_report(definition_of(style), [study.write_pull(folder / "pull", tasks)], out, ReportOptions(bootstrap=50))
    return out, (out / "report.md").read_text(encoding="utf-8")


def as_dicts(path: Path) -> list[dict[str, str]]:
    rows = read_csv(path)
    return [dict(zip(rows[0], r, strict=True)) for r in rows[1:]]


@pytest.mark.parametrize("style", sorted(ITEMS_P))
def test_six_annotators_get_the_second_result_beside_the_items_one(
    style: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    six_annotators(monkeypatch)
    out, md = report(style, tmp_path)
    second = as_dicts(out / "tables" / f"{style}_annotators_sampled.csv")
    items = {(r.get("aspect") or r.get("dimension"), r["system"], r["opponent"]): r
             for r in as_dicts(out / "tables" / f"{ITEMS_P[style]}.csv")}  # fmt: skip
    assert len(second) == len(items) >= 3  # three systems: three pairs a question
    for row in second:
        key = (row.get("aspect") or row.get("dimension"), row["system"], row["opponent"])
        assert row["annotators"] == "6" and row["df"] == "5"
        if items[key]["p (Holm)"]:
            assert float(row["p (items, Holm)"]) == pytest.approx(float(items[key]["p (Holm)"]))
        else:  # every item even: no items' test
            assert row["p (items, Holm)"] == ""
        assert row["reading"].replace(",", "") in md.replace("\\", "").replace(",", "")
    assert "Annotators as sampled (Clark's min F'" in md
    assert "for new items and new annotators (the crossed test, min F', 6 annotators) p = " in md
    # The methods paragraph of report.md and paper.tex names the second test and what it generalises to.
    said = ("Where five or more annotators judged a pair, a second test treats items and annotators both as random: "
            "Clark's min F' (Clark 1973) on min(items, annotators) - 1 degrees of freedom, Holm over the same family "
            "as the items' test, the cells' mean difference with the 95% t interval the test inverts; its result "
            "holds for new items judged by new annotators.")  # fmt: skip
    assert said in next(line for line in md.splitlines() if line.startswith("Methods."))
    paper = (out / "paper.tex").read_text(encoding="utf-8")
    assert "Clark's min F' \\citep{clark1973} on min(items, annotators)" in paper and "{clark1973," in (
        out / "paper.bib").read_text(encoding="utf-8")


@pytest.mark.parametrize("style", ["pairwise", "ratings"])
def test_three_annotators_are_told_why_there_is_no_second_result(style: str, tmp_path: Path) -> None:
    out, md = report(style, tmp_path)
    assert not (out / "tables" / f"{style}_annotators_sampled.csv").exists()
    assert "Annotators as sampled: not given, as at most 3 distinct annotator(s)" in md
    assert "min F'" not in md.split("Annotators as sampled: not given")[0]  # the headlines nor the methods
