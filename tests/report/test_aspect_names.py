"""One name per aspect across every table (issue 41, Deliver 4): every CSV, report.md, report.html and paper.tex
names an aspect, ranking dimension or question by its name in the definition, never by its display text, and the
report's legend gives each name's text.

Built here (no server) on studies whose texts differ from their names: the planted own studies with two judges
beside the humans (ratings ``coherence`` / "Coherence", pairwise ``helpful`` / "Which response is more helpful?"
and a ``confidence`` question, ranking ``quality`` / "Overall quality"), and the pairwise-aspects study with a judge
on items beyond the humans' (judge-assisted estimates; ``factual_consistency`` / "factual consistency")."""

from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from lxml import html

from annols import protocols
from annols.cli import main
from annols.definition import Definition
from tests.own_study import STUDIES
from tests.report.test_effects_audit import own
from tests.report.test_judge_assisted_report import judged_pull
from tests.report.test_report_files import UNESCAPE, legend_of, markdown_tables
from tests.report.test_style_reports import definition_of

NAMED = ("aspect", "question", "dimension")  # the columns that name what a style asks about
LEGEND_NOTE = re.compile(r"Aspects: (.*?)\.?$", re.M)  # paper.tex: under a table, each name and its text
EMPH = re.compile(r"\\emph\{(.*)\}")


def named(definition: Definition) -> dict[str, str]:
    """Each aspect's, dimension's and analysed question's name -> its display text, from the definition."""
    spec = definition.spec
    questions = [q for q in getattr(spec, "questions", ()) if q.kind != "text"]
    return {a.name: a.text for a in (*getattr(spec, "aspects", ()), *getattr(spec, "dimensions", ()), *questions)}


def judge_assisted(folder: Path) -> Path:
    _, pull, pool, judge = judged_pull(folder)
    out = folder / "report"
    result = CliRunner().invoke(main, ["report", "pairwise-aspects", str(pull), "-o", str(out), "--bootstrap", "0",
                                       "--judge", str(judge), "--judge-pool", str(pool)])  # fmt: skip
    assert result.exit_code == 0, result.output
    return out


STYLES = ("ratings", "pairwise", "ranking")


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Definition, Path]]:
    out: dict[str, tuple[Definition, Path]] = {}
    for style in STYLES:
        folder = tmp_path_factory.mktemp(f"own-{style}")
        own(style, folder)
        out[f"own-{style}"] = (definition_of(style), folder / "report")
    out["judge-assisted"] = (protocols.load("pairwise-aspects"), judge_assisted(tmp_path_factory.mktemp("assisted")))
    return out


def test_the_studies_name_their_aspects_other_than_by_their_text() -> None:
    """The test means something only where texts differ from names: in every study, for every aspect."""
    for style in STYLES:
        texts = named(definition_of(style))
        assert len(texts) >= 2 and all(t and t != n for n, t in texts.items()), (style, texts)
    assert named(protocols.load("pairwise-aspects"))["factual_consistency"] == "factual consistency"
    assert set(STYLES) <= set(STUDIES)


def _csvs(report: Path) -> dict[str, list[dict[str, Any]]]:
    out = {}
    for path in sorted((report / "tables").glob("*.csv")):
        with path.open(encoding="utf-8", newline="") as f:
            out[path.stem] = list(csv.DictReader(f))
    return out


@pytest.mark.parametrize("study", [*(f"own-{s}" for s in STYLES), "judge-assisted"])
def test_every_table_names_an_aspect_by_its_name_and_the_legend_gives_its_text(
    reports: dict[str, tuple[Definition, Path]], study: str
) -> None:
    definition, report = reports[study]
    texts = named(definition)
    shown = {t for n, t in texts.items() if t != n}  # a display text that is not also its name
    tables = _csvs(report)
    must = {"own-ratings": ("ratings_summary", "ratings_paired_tests", "ratings_agreement", "detectable",
                            "reliability", "judges_agreement", "judges_systems"),
            "own-pairwise": ("pairwise_sign_test", "pairwise_agreement", "detectable", "reliability",
                             "questions_agreement", "judges_agreement"),
            "own-ranking": ("ranking_mean_rank", "ranking_paired_tests", "detectable", "reliability",
                            "judges_agreement"),
            "judge-assisted": ("judge_assisted", "pairwise_sign_test", "detectable", "reliability")}[study]  # fmt: skip
    assert set(must) <= set(tables), sorted(set(must) - set(tables))
    seen: set[str] = set()
    for name, rows in tables.items():
        for column in (c for c in NAMED if rows and c in rows[0]):
            values = {r[column] for r in rows} - {""}
            assert values <= set(texts), (name, column, sorted(values - set(texts)))
            seen |= values
        for row in rows:  # nowhere a display text: not in a cell, not as a header (scores.csv: systems x aspects)
            assert not shown & {*row, *row.values()}, (name, sorted(shown & {*row, *row.values()}))
    assert set(texts) <= seen, sorted(set(texts) - seen)  # every aspect (and question) is in some table
    # The legend: each name once, with its text, in report.md and report.html, and under paper.tex's tables.
    md = (report / "report.md").read_text(encoding="utf-8")
    assert {v: k for k, v in legend_of(md).items()} == {n: t for n, t in texts.items() if t != n}
    page = html.fromstring((report / "report.html").read_bytes())
    items = [" ".join(li.text_content().split()) for li in page.xpath("//section[h2='Aspects']/ul/li")]
    assert items == [f"{n}: {t}" for n, t in texts.items() if t != n]
    # report.md and report.html show the CSVs' cells: no display text in any rendered table cell.
    for name, rendered in markdown_tables(md).items():
        assert not shown & {c for row in rendered for c in row}, name
    assert not shown & {td.text_content().strip() for td in page.xpath("//table//td|//table//th")}
    tex = (report / "paper.tex").read_text(encoding="utf-8")
    cells = {UNESCAPE.sub(r"\1", c.strip()) for line in tex.splitlines() if line.rstrip().endswith("\\\\")
             for c in line.rstrip()[:-2].split("&")}  # fmt: skip
    assert not shown & cells
    notes = LEGEND_NOTE.findall(tex)
    assert notes, "paper.tex has no legend under its tables"
    for note in notes:
        entries = dict(e.split(": ", 1) for e in note.split("; "))
        assert {EMPH.sub(r"\1", k).replace("\\_", "_"): v for k, v in entries.items()} == {
            n: t for n, t in texts.items() if t != n
        }
