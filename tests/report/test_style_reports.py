"""Reports of own definitions, one per style, from exports built here (no server): the whole path from
annotation to table (decode, the kept judgments, analysis, files), on tests/own_study.py's plants.

The numbers of each style's tables are tested on planted frames in tests/analysis; here a
few are checked against the plant's truth, and report.md against the CSVs."""

from __future__ import annotations

import csv
import random
import statistics
import tomllib
from pathlib import Path
from typing import Any

import pytest
from lxml import html

from annols.definition.blinding import META_KEY, META_SYSTEMS, encode_systems
from annols.protocols import parse_definition
from annols.report import ReportOptions
from tests import own_study
from tests.report import study
from tests.report.build import build_report
from tests.report.test_report_files import assert_shown, legend_of, markdown_tables, read_csv, split

EMAILS = dict(zip(own_study.ANNOTATORS, study.ANNOTATORS, strict=True))
CONCLUSIONS = ["What the study could detect", "Reliability of the conclusion"]
GLANCE = "Scores at a glance"  # the systems x aspects table of the main score, before the style's own sections
SECTIONS = {
    "pairwise": [GLANCE, "Win / tie / loss", "Agreement", "Bradley-Terry with ties", *CONCLUSIONS, "Questions"],
    "ranking": [GLANCE, "Ranks", "Agreement", *CONCLUSIONS, "Ranks and groups"],  # rank intervals (issue 28)
    "ratings": [GLANCE, "Ratings", "Agreement", *CONCLUSIONS, "Ranks and groups"],
    "spans": ["Spans", "Span agreement", "Questions"],
    "sentences": ["Answers", "Agreement per column"],
}


def export(style: str) -> tuple[list[dict[str, Any]], dict[int, tuple[str, ...]]]:
    """The raw export of the planted study: systems shuffled per task and recorded as the blinding does."""
    plant = own_study.STUDIES[style]
    rng = random.Random(5)
    tasks, shown, next_id = [], {}, 1000
    for item in range(own_study.ITEMS):
        record = plant.record(item)
        systems = list(record.pop("systems"))
        rng.shuffle(systems)
        shown[item] = tuple(systems)
        task = {"id": 500 + item, "data": {**record, "record": {"item": item}},
                "meta": {META_KEY: f"{style}:{item:03d}", META_SYSTEMS: encode_systems(shown[item])},
                "annotations": []}  # fmt: skip
        for annotator in own_study.ANNOTATORS:
            next_id += 1
            task["annotations"].append({
                "id": next_id, "completed_by": study.USER_IDS[EMAILS[annotator]], "lead_time": 5.0,
                "result": plant.result(plant.truth(item, annotator), shown[item]),
                "created_at": "2024-05-01T10:00:00.000000Z", "was_cancelled": False,
            })  # fmt: skip
        tasks.append(task)
    return tasks, shown


def definition_of(style: str) -> Any:
    return parse_definition(tomllib.loads(own_study.STUDIES[style].definition), f"own-{style}.toml")


@pytest.fixture(scope="module", params=list(SECTIONS))
def report(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    style = request.param
    tmp = tmp_path_factory.mktemp(style)
    tasks, _ = export(style)
    definition = definition_of(style)
    result = build_report(definition, [study.write_pull(tmp / "pull", tasks)], tmp / "report",
                          ReportOptions(bootstrap=100))  # fmt: skip
    assert [s.title for s in result.sections] == ["Sources", "Annotators", "Items short of their overlap",
                                                  *SECTIONS[style], "Rule violations"]  # fmt: skip
    return style, tmp / "report"


def table(out: Path, name: str) -> list[dict[str, str]]:
    with (out / "tables" / f"{name}.csv").open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def test_markdown_tables_and_plots_agree_with_the_files(report: tuple[str, Path]) -> None:
    _, out = report
    md_text = (out / "report.md").read_text(encoding="utf-8")
    md = markdown_tables(md_text)
    csvs = sorted((out / "tables").glob("*.csv"))
    assert {p.stem for p in csvs} == set(md)
    labels = legend_of(md_text)
    for path in csvs:
        rows = read_csv(path)
        shown = md[path.stem]
        assert_shown(shown[:1], rows[:1], labels)  # a header names an aspect (tables/scores.csv) by its label too
        assert_shown(shown[1:], rows[1 : len(shown)], labels)
    plots = sorted(p.name for p in (out / "plots").glob("*.png"))
    assert plots and all(f"(plots/{p})" in md_text for p in plots)


def test_a_number_of_each_style_from_the_truth(report: tuple[str, Path]) -> None:
    style, out = report
    items, annotators = range(own_study.ITEMS), own_study.ANNOTATORS
    if style == "pairwise":
        compared = [i for i in items if set(own_study.pairwise_systems(i)) == {"strong", "weak"}]
        picks = {i: [own_study.pairwise_truth(i, a)["helpful"] for a in annotators] for i in compared}
        nets = [p.count("strong") - p.count("weak") for p in picks.values()]
        row = next(r for r in table(out, "pairwise_sign_test")
                   if r["aspect"] == "helpful" and r["system"] == "strong")  # fmt: skip
        assert (row["opponent"], int(row["items won"]), int(row["items lost"]), int(row["items"])) == (
            "weak", sum(n > 0 for n in nets), sum(n < 0 for n in nets), len(nets))  # fmt: skip
        all_picks = [x for p in picks.values() for x in p]
        assert (int(row["judgments"]), int(row["ties"])) == (len(all_picks), all_picks.count("tie"))
    elif style == "ranking":
        ranks = [own_study.ranking_truth(i, a)["quality"]["strong"] for i in items for a in annotators]
        row = next(r for r in table(out, "ranking_mean_rank_intervals")
                   if (r["dimension"], r["system"]) == ("quality", "strong"))  # fmt: skip
        assert float(row["mean rank"]) == pytest.approx(statistics.mean(ranks), abs=5e-5)
    elif style == "ratings":
        values = [own_study.ratings_truth(i, a)["coherence"]["strong"] for i in items for a in annotators]
        row = next(r for r in table(out, "ratings_summary") if (r["aspect"], r["system"]) == ("coherence", "strong"))
        assert float(row["mean"]) == pytest.approx(statistics.mean(values), abs=5e-5)
        assert float(row["median"]) == pytest.approx(statistics.median(values), abs=5e-5)
    elif style == "spans":
        wrong = sum(s[0] == "Wrong" for i in items for a in annotators for s in own_study.spans_truth(i, a)["spans"])
        row = next(r for r in table(out, "spans_counts") if (r["label"], r["system"]) == ("Wrong", "(all)"))
        assert int(row["spans"]) == wrong
    else:
        major = sum(r.get("severity") == "major" for i in items for a in annotators
                    for r in own_study.sentences_truth(i, a))  # fmt: skip
        rows = table(out, "sentences_distribution")
        row = next(r for r in rows if (r["column"], r["answer"]) == ("severity", "major"))
        assert int(row["rows"]) == major


def test_two_sources_give_the_tables_of_one(report: tuple[str, Path], tmp_path: Path) -> None:
    style, merged = report
    first, second = split(export(style)[0], 10)
    sources = [study.write_pull(tmp_path / "b1", first), study.write_pull(tmp_path / "b2", second, project_id=8)]
    build_report(definition_of(style), sources, tmp_path / "split", ReportOptions(bootstrap=100))
    names = sorted(p.name for p in (merged / "tables").glob("*.csv"))
    assert names == sorted(p.name for p in (tmp_path / "split" / "tables").glob("*.csv"))
    for name in names:
        if name != "sources.csv":
            assert (tmp_path / "split" / "tables" / name).read_bytes() == (merged / "tables" / name).read_bytes(), name


# report.md's legend, text -> name: every aspect, dimension and (analysed) question whose text is not its name.
LEGENDS = {"pairwise": {"Which response is more helpful?": "helpful", "Which response is more harmless?": "harmless",
                        "How sure are you?": "confidence"},
           "ranking": {"Overall quality": "quality", "Brevity": "brevity"},
           "ratings": {"Coherence": "coherence", "Fluency": "fluency"},
           "spans": {"How adequate is the answer?": "adequacy"}}  # fmt: skip


def test_aspects_by_their_label_the_text_once_in_the_legend_and_whole_numbers_without_decimals(
    report: tuple[str, Path],
) -> None:
    style, out = report
    md_text = (out / "report.md").read_text(encoding="utf-8")
    assert legend_of(md_text) == LEGENDS.get(style, {})
    assert md_text.count("## Aspects") == (style in LEGENDS)
    page = html.fromstring((out / "report.html").read_bytes())
    items = [li.text_content().strip() for li in page.xpath("//section[h2='Aspects']//li")]
    assert items == [f"{label}: {text}" for text, label in LEGENDS.get(style, {}).items()]
    cells = {c.text_content() for c in page.xpath("//td")} | {c for t in markdown_tables(md_text).values()
                                                                for row in t for c in row}  # fmt: skip
    assert not cells & set(LEGENDS.get(style, {}))  # no table shows a full text
    if style == "ratings":  # medians of the 1-5 scale: whole in report.md and report.html, the CSV unchanged
        csv_rows = read_csv(out / "tables" / "ratings_summary.csv")
        shown = markdown_tables(md_text)["ratings_summary"]
        at = [csv_rows[0].index(c) for c in ("median", "median CI low", "median CI high")]
        medians = [(row[i], csv_row[i]) for row, csv_row in zip(shown[1:], csv_rows[1:], strict=True) for i in at]
        assert all(c.endswith(".0000") or c.endswith(".5000") for _, c in medians if c)
        # a median every resample agrees on has no interval (empty cells: a point is not a 95% interval): Fluency
        # mid is 4 from every annotator on every item; the report's headline names it
        refused = {(r[0], r[1]) for r in csv_rows[1:] if r[at[1]] == "" and r[at[2]] == ""}
        assert ("fluency", "mid") in refused and ("fluency", "strong") not in refused
        assert all(c != "" for _, c in medians[::3])  # every median itself is there
        assert "No median interval for" in md_text.split("\n## ", 1)[0]  # the headline, before the first section
        assert [s for s, _ in medians] == [c.removesuffix(".0000").removesuffix("000") for _, c in medians]
        assert any(s == "5" for s, _ in medians) and any(s.endswith(".5") for s, _ in medians)
        mean = csv_rows[0].index("mean")
        assert [r[mean] for r in shown[1:]] == [r[mean] for r in csv_rows[1:]]  # a mean keeps its 4 decimals
