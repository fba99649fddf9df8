"""Issue 28 item 8: every p-value a report prints stands beside an effect size and its 95% interval, and the
methods paragraphs of report.md and paper.tex (and docs/statistics.md) say each test's unit, test and what it
generalises to.

Reports of a representative set of studies (every style of the planted own studies with two
judges beside the humans, a shipped ranking protocol, the best-worst example, a ratings
definition with a per-candidate choice and slider) are built here (no server); every table of
every section is read from the report's Table objects (:mod:`annols.analysis.results`), and a
table with a p column must have an effect column and a "CI low" / "CI high" pair, filled
wherever its p is. paper.tex's tables with a p say the same (the comparisons and the pairwise
results table)."""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from annols import protocols
from annols.analysis.inference import methods
from annols.analysis.results import Table
from annols.protocols import parse_definition
from annols.report import METHODS_LEAD, ReportOptions, ReportResult
from annols.report import paper as paper_module
from tests.conftest import ROOT
from tests.judges_study import judge_truths, write_judges
from tests.own_study import ANNOTATORS, ITEMS, STUDIES
from tests.report import examples, study
from tests.report import test_asked_report as asked
from tests.report.build import build_report
from tests.report.test_style_reports import definition_of, export

P = re.compile(r"^p( |$)")  # "p", "p (Holm)", "p (sign test)": not "P(order holds)", a share of resamples
# The effect each kind of test reports: a difference in the test's own units, a correlation, an association.
EFFECTS = {"win - loss %", "mean difference", "difference", "advantage", "Cramér's V"}
OPTIONS = ReportOptions(bootstrap=60, seed=3)


def own(style: str, folder: Path) -> ReportResult:
    tasks, _ = export(style)
    pull = study.write_pull(folder / "pull", tasks)
    judges = folder / "judges"
    judges.mkdir()
    files = write_judges(STUDIES[style], {i: f"{style}:{i:03d}" for i in range(ITEMS)}, judges)
    return build_report(definition_of(style), [pull], folder / "report", OPTIONS, judges=list(files.values()))


def shipped_ranking(folder: Path) -> ReportResult:
    pull = study.write_pull(folder / "pull", study.ranking().tasks)
    return build_report(protocols.load("extractive-ranking"), [pull], folder / "report", OPTIONS)


def best_worst(folder: Path) -> ReportResult:
    pull = examples.pull("summary-best-worst", folder / "pull")
    return build_report(examples.definition("summary-best-worst"), [pull], folder / "report", OPTIONS)


def questions(folder: Path) -> ReportResult:
    definition = parse_definition(tomllib.loads(asked.DEFINITION), "kinds.toml")
    return build_report(definition, [study.write_pull(folder / "pull", asked.export())], folder / "report", OPTIONS)


STUDIES_BUILT: dict[str, Callable[[Path], ReportResult]] = {
    **{f"own-{style}": (lambda folder, style=style: own(style, folder)) for style in STUDIES},  # type: ignore[misc]
    "extractive-ranking": shipped_ranking,
    "summary-best-worst": best_worst,
    "questions per candidate": questions,
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ReportResult]:
    """Every study's report, built once for the module's tests."""
    return {name: build(tmp_path_factory.mktemp(name.replace(" ", "-"))) for name, build in STUDIES_BUILT.items()}


def p_tables(result: ReportResult) -> list[Table]:
    return [t for s in result.sections for t in s.tables if any(P.match(str(c)) for c in t.frame.columns)]


def missing(table: Table) -> list[str]:
    """What a table with a p lacks: an effect column, its interval's columns, or their values where p is."""
    columns = [str(c) for c in table.frame.columns]
    effect = [c for c in columns if c in EFFECTS]
    low = [c for c in columns if c.startswith("CI low")]
    high = [c for c in columns if c.startswith("CI high")]
    if not (effect and low and high):
        return [f"{table.name}: columns {columns} have a p without an effect size and its interval"]
    out = []
    for row in table.frame.to_dict("records"):
        ps = [row[c] for c in columns if P.match(c)]
        if not any(isinstance(p, float) and math.isfinite(p) for p in ps):
            continue
        values = [row[effect[0]], row[low[0]], row[high[0]]]
        if not all(isinstance(v, int | float) and math.isfinite(v) for v in values):
            out.append(f"{table.name}: a row with a p has no effect or interval: {row}")
        elif not values[1] <= values[0] + 1e-9 or not values[0] <= values[2] + 1e-9:
            if table.name.endswith("association"):  # Cramér's V of the study may sit outside a bootstrap's tails
                continue
            out.append(f"{table.name}: the effect is outside its interval: {row}")
    return out


@pytest.mark.parametrize("name", list(STUDIES_BUILT))
def test_every_p_stands_beside_an_effect_and_its_interval(built: dict[str, ReportResult], name: str) -> None:
    tables = p_tables(built[name])
    assert tables, f"{name}: the study prints no test, so it audits nothing"
    problems = [m for t in tables for m in missing(t)]
    assert not problems, "\n".join(problems)


def test_the_audit_covers_every_kind_of_test(built: dict[str, ReportResult]) -> None:
    """The studies above print every test table a report has: a new kind of test needs a study here."""
    found = {re.sub(r"^q_[a-z]+_", "q_", t.name) for result in built.values() for t in p_tables(result)}
    kinds = {"pairwise_sign_test", "detectable", "ranking_paired_tests", "ratings_paired_tests",
             "best_worst_paired_tests", "judges_alt_test", "q_association", "q_paired_tests"}  # fmt: skip
    assert kinds <= found, found


def paper_table(tex: str, name: str) -> tuple[list[str], list[list[str]]]:
    body = tex.split(f"\\label{{tab:{name}}}", 1)[1].split("\\bottomrule", 1)[0]
    lines = [line.removesuffix(" \\\\") for line in body.splitlines() if line.endswith("\\\\")]
    return lines[0].split(" & "), [line.split(" & ") for line in lines[1:]]


@pytest.mark.parametrize("name", list(STUDIES_BUILT))
def test_paper_tables_with_a_p_give_the_effect_and_its_interval(built: dict[str, ReportResult], name: str) -> None:
    result = built[name]
    tex = (result.out_dir / paper_module.TEX).read_text(encoding="utf-8")
    if "\\label{tab:comparisons}" in tex:
        header, rows = paper_table(tex, "comparisons")
        assert header[4:7] == ["difference", "CI low", "CI high"], header
        assert all(row[5] and row[6] for row in rows if row[4]), rows  # a pair with no decided item has none
    if "pairwise" in name:
        header, rows = paper_table(tex, "results")
        assert header[-2:] == [paper_module.PAIRWISE_EFFECT, "p (Holm)"]
        tested = [row for row in rows if row[-1]]  # a pair with no decided item has no test
        assert tested and all(re.fullmatch(r"-?[\d.]+ \[-?[\d.]+, -?[\d.]+\]", row[-2]) for row in tested), rows


# Which methods each study's report must state (its styles, its questions, its judges).
STATED = {
    "own-pairwise": {"pairwise", "judges"},
    "own-ranking": {"ranking", "judges"},
    "own-ratings": {"ratings", "judges"},
    "own-spans": {"spans", "judges"},
    "own-sentences": {"sentences", "judges"},
    "extractive-ranking": {"ranking"},
    "summary-best-worst": {"best-worst"},
    "questions per candidate": {"ratings", "numeric questions", "choice questions per candidate"},
}


@pytest.mark.parametrize("name", list(STUDIES_BUILT))
def test_the_methods_name_unit_test_and_generalisation_of_each_style(built: dict[str, ReportResult],
                                                                        name: str) -> None:  # fmt: skip
    result = built[name]
    tables = [t.name for s in result.sections for t in s.tables]
    found = methods.present(tables)
    assert {m.name for m in found} == STATED[name]
    report = (result.out_dir / "report.md").read_text(encoding="utf-8")
    (line,) = [p for p in report.split("\n\n") if p.startswith(METHODS_LEAD)]
    tex = (result.out_dir / paper_module.TEX).read_text(encoding="utf-8")
    block = tex.split("% annols:begin methods", 1)[1].split("% annols:end methods", 1)[0]
    bib = (result.out_dir / paper_module.BIB).read_text(encoding="utf-8")
    for m in found:
        for said in (m.unit, m.test, m.generalises):
            assert said in line, (m.name, said)
            assert paper_module.escape(said) in block, (m.name, said)
        if not m.test.startswith("none"):
            assert m.correction in line and m.effect in line and m.interval in line, m.name
        assert all(f"{{{key}," in bib for key in m.cites), m.cites  # each reference in paper.bib
    if any(not m.test.startswith("none") for m in found):
        assert "riezler2024" in bib and methods.ANNOTATORS_NOTE in line


def test_docs_statistics_state_the_reports_methods() -> None:
    """docs/statistics.md's table of methods is the one the reports write their paragraphs from."""
    doc = (ROOT / "docs" / "statistics.md").read_text(encoding="utf-8")
    block = doc.split("<!-- methods: start -->\n", 1)[1].split("\n<!-- methods: end -->", 1)[0]
    assert block == methods.markdown_table()


@pytest.mark.parametrize(("style", "question", "count"), [
    ("spans", "errors: spans per item", lambda truth: len(truth["spans"])),
    ("sentences", "severity: rows with a code per item", lambda truth: sum("severity" in row for row in truth)),
])  # fmt: skip
def test_judges_on_codes_get_per_item_error_count_correlations(built: dict[str, ReportResult], style: str,
                                                                 question: str, count: Any) -> None:  # fmt: skip
    """Issue 28 item 7 on codes: each judge's error count per item against the humans' mean, recomputed from the
    plant (tests/judges_study.py: one judge copies the majority, one answers at random)."""
    from scipy import stats

    plant = STUDIES[style]
    tables = {t.name: t.frame for s in built[f"own-{style}"].sections for t in s.tables}
    found = tables["judges_count_correlation"]
    humans = np.array([np.mean([count(plant.truth(i, a)) for a in ANNOTATORS]) for i in range(ITEMS)])
    for judge, truths in judge_truths(plant).items():
        mine = np.array([count(truths[i]) for i in range(ITEMS)], dtype=float)
        (row,) = found[(found["judge"] == f"judge:{judge}") & (found["question"] == question)].to_dict("records")
        assert (row["units"], row["items"]) == (ITEMS, ITEMS)
        want = [stats.pearsonr(mine, humans).statistic, stats.spearmanr(mine, humans).statistic,
                stats.kendalltau(mine, humans).statistic]  # fmt: skip
        got = [row["Pearson r"], row["Spearman rho"], row["Kendall tau"]]
        assert got == pytest.approx(want, nan_ok=True)
        assert row["mean bias"] == pytest.approx(float(np.mean(mine - humans)))
        assert row["bias CI low"] <= row["mean bias"] <= row["bias CI high"]
    agreed = tables["judges_count_agreement"]
    assert set(agreed["question"]) == {question} and agreed["alpha (interval)"].notna().any()


@pytest.mark.parametrize(("protocol", "variant", "generate", "name", "key"), [
    ("qa-feedback", None, "qa_feedback", "qa_span_agreement_annotators", "label"),
    ("summary-flaws", None, "summary_flaws", "flaws_span_agreement_annotators", "label"),
    ("sentence-errors", "abstract", "sentence_errors", "sentence_errors_agreement_annotators", "column"),
])  # fmt: skip
def test_the_protocols_through_spans_and_sentences_have_each_annotator_against_the_rest(
        tmp_path: Path, protocol: str, variant: str | None, generate: str, name: str, key: str) -> None:  # fmt: skip
    """qa-feedback and summary-flaws report spans, sentence-errors sentences, through tables of their own: each
    has the per-annotator table too (its numbers: tests/analysis/by_style/test_spans_sentences.py, the same
    function)."""
    pull = study.write_pull(tmp_path / "pull", getattr(study, generate)().tasks)
    result = build_report(protocols.load(protocol, variant), [pull], tmp_path / "report", ReportOptions(bootstrap=0))
    (table,) = [t.frame for s in result.sections for t in s.tables if t.name == name]
    assert set(table["annotator"]) == set(study.ANNOTATORS)
    assert not table.duplicated([key, "annotator"]).any() and len(table) >= 2 * len(study.ANNOTATORS)
    assert table["agreement %"].between(0, 100).all() and table["Krippendorff alpha"].notna().any()
    assert (tmp_path / "report" / "tables" / f"{name}.csv").exists()
