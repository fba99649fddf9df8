"""The report's files: report.md and the CSVs agree, HTML escapes and embeds, a browser shows it, sources merge."""

from __future__ import annotations

import copy
import csv
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from lxml import html
from playwright.sync_api import Browser

from annols.cli import main
from annols.definition.blinding import decode_systems, encode_systems
from annols.errors import InputError
from annols.protocols import load
from annols.report import ReportOptions
from tests.report import study
from tests.report.build import build_report

CELL_SPLIT = re.compile(r"(?<!\\)\|")
UNESCAPE = re.compile(r"\\(.)")
TITLE = re.compile(r"^\*\*.*\*\* \(`tables/(?P<name>[a-z_]+)\.csv`\)$")


def read_csv(path: Path) -> list[list[str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.reader(f))


def markdown_tables(text: str) -> dict[str, list[list[str]]]:
    """Every table of report.md by its CSV name: header and rows, cells unescaped."""
    lines = text.split("\n")
    tables: dict[str, list[list[str]]] = {}
    for i, line in enumerate(lines):
        match = TITLE.match(line)
        if not match:
            continue
        rows = []
        for row in lines[i + 2 :]:
            if not row.startswith("|"):
                break
            if row.startswith("|---"):
                continue
            cells = CELL_SPLIT.split(row.strip()[1:-1])
            rows.append([UNESCAPE.sub(r"\1", c.strip()) for c in cells])
        tables[match["name"]] = rows
    return tables


LEGEND_ITEM = re.compile(r"^- \*\*(?P<label>.+?)\*\*: (?P<text>.+)$", re.M)


def legend_of(md_text: str) -> dict[str, str]:
    """report.md's legend of aspects: full text -> the short label the tables show (markdown escapes removed)."""
    return {UNESCAPE.sub(r"\1", m["text"]): UNESCAPE.sub(r"\1", m["label"]) for m in LEGEND_ITEM.finditer(md_text)}


def assert_shown(shown: list[list[str]], rows: list[list[str]], labels: dict[str, str] | None = None) -> None:
    """Rendered rows (report.md, report.html or paper.tex cells) against the CSV's: every cell the same text, the
    aspect's short label (``labels``: full text -> label) or the same number without its zero decimals (a
    whole-number statistic: ``5.0000`` shown ``5``, ``4.5000`` shown ``4.5``)."""
    assert len(shown) == len(rows)
    for got, want in zip(shown, rows, strict=True):
        assert len(got) == len(want), (got, want)
        for g, w in zip(got, want, strict=True):
            if g == w or (labels or {}).get(w) == g:
                continue
            assert re.fullmatch(r"-?\d+\.\d*0", w) and w.startswith(g) and float(g) == float(w), (g, w)


def build(folder: Path, protocol: str, tasks: list[dict[str, Any]], variant: str | None = None,
          **options: Any) -> Path:  # fmt: skip
    source = study.write_pull(folder / "pull", tasks)
    out = folder / "report"
    build_report(load(protocol, variant), [source], out, ReportOptions(bootstrap=200, **options))
    return out


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("reports")
    return {
        "pairwise-aspects": build(base / "p", "pairwise-aspects", study.pairwise().tasks),
        "extractive-ranking": build(base / "r", "extractive-ranking", study.ranking().tasks),
        "qa-feedback": build(base / "q", "qa-feedback", study.qa_feedback().tasks),
        "summary-flaws": build(base / "f", "summary-flaws", study.summary_flaws().tasks),
        "sentence-errors": build(base / "s", "sentence-errors", study.sentence_errors().tasks, "abstract"),
    }


@pytest.mark.parametrize("protocol", ["pairwise-aspects", "extractive-ranking", "qa-feedback", "summary-flaws",
                                      "sentence-errors"])  # fmt: skip
def test_markdown_and_html_tables_equal_the_csvs(reports: dict[str, Path], protocol: str) -> None:
    out = reports[protocol]
    md = markdown_tables((out / "report.md").read_text(encoding="utf-8"))
    page = html.fromstring((out / "report.html").read_bytes())
    csvs = sorted((out / "tables").glob("*.csv"))
    assert {p.stem for p in csvs} == set(md) and len(csvs) >= 6
    for path in csvs:
        rows = read_csv(path)
        shown = md[path.stem]
        assert shown[0] == rows[0], path.name
        assert_shown(shown[1:], rows[1 : len(shown)])  # the first rows, in order (long lists are cut)
        assert len(shown) == len(rows) or path.stem == "under_annotated"
        caption = page.xpath(f"//table[caption/span[text()='(tables/{path.stem}.csv)']]")
        assert len(caption) == 1, path.name
        cells = [[c.text_content() for c in tr.xpath("./th|./td")] for tr in caption[0].xpath(".//tr")]
        assert cells[0] == rows[0] and cells[1:] == shown[1:], path.name
        for row in rows[1:]:
            for header, cell in zip(rows[0], row, strict=True):  # numbers are written one way: integers or fixed
                if header.startswith("p (") and re.fullmatch(r"\d\.\d\de-\d+", cell):  # decimals; a p under
                    assert float(cell) < 1e-4, (path.name, cell)  # 0.0001 keeps its size (model.cell_text)
                    continue
                assert not re.fullmatch(r"-?\d+\.\d*e[-+]\d+|nan|inf", cell), (path.name, cell)


def test_report_lists_plots_and_embeds_them(reports: dict[str, Path]) -> None:
    for out in reports.values():
        md = (out / "report.md").read_text(encoding="utf-8")
        linked = re.findall(r"!\[[^\]]*\]\(plots/([a-z_]+\.png)\)", md)
        assert linked and sorted(linked) == sorted(p.name for p in (out / "plots").glob("*.png"))
        page = html.fromstring((out / "report.html").read_bytes())
        sources = page.xpath("//img/@src")
        assert len(sources) == len(linked) and all(s.startswith("data:image/png;base64,iVBOR") for s in sources)
        assert not page.xpath("//script|//link|//*[@src and not(starts-with(@src, 'data:'))]")


def test_user_strings_are_escaped(tmp_path: Path) -> None:
    hostile = {"JGR": "<b>JGR</b>", "bart": "ba|rt*_", "pegasus": "<script>alert(1)</script>"}
    tasks = copy.deepcopy(study.pairwise().tasks)
    for task in tasks:
        shown = decode_systems(task["meta"]["annols_systems"])
        task["meta"]["annols_systems"] = encode_systems(tuple(hostile[s] for s in shown))
    source = study.write_pull(tmp_path / "pull", tasks)
    (source / "annotators.json").write_text(json.dumps({"1": "<i>a</i>@x.org", "2": "b|b@x.org", "3": "c"}))
    out = tmp_path / "report"
    build_report(load("pairwise-aspects"), [source], out, ReportOptions(bootstrap=10))
    page_text = (out / "report.html").read_text(encoding="utf-8")
    page = html.fromstring(page_text)
    assert not page.xpath("//script|//body//b|//body//i")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page_text and "&lt;i&gt;a&lt;/i&gt;@x.org" in page_text
    rows = read_csv(out / "tables" / "pairwise_win_tie_loss.csv")[1:]
    assert {r[1] for r in rows} | {r[2] for r in rows} == set(hostile.values())
    md_text = (out / "report.md").read_text(encoding="utf-8")
    md = markdown_tables(md_text)
    for name in ("pairwise_win_tie_loss", "pairwise_cohen", "annotators"):
        assert md[name] == read_csv(out / "tables" / f"{name}.csv"), name
    assert "ba\\|rt\\*\\_" in md_text and "<script>" not in md_text


def split(tasks: list[dict[str, Any]], at: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Samples before ``at`` and ``at`` itself with only annotator A's annotations; ``at`` (B, C) and after."""
    first = copy.deepcopy(tasks[: at + 1])
    second = copy.deepcopy(tasks[at:])
    a = study.USER_IDS[study.ANNOTATORS[0]]
    first[-1]["annotations"] = [x for x in first[-1]["annotations"] if x["completed_by"] == a]
    second[0]["annotations"] = [x for x in second[0]["annotations"] if x["completed_by"] != a]
    return first, second


@pytest.mark.parametrize("protocol, make, variant", [
    ("pairwise-aspects", study.pairwise, None),
    ("extractive-ranking", study.ranking, None),
    ("qa-feedback", study.qa_feedback, None),
    ("summary-flaws", study.summary_flaws, None),
    ("sentence-errors", study.sentence_errors, "abstract"),
])  # fmt: skip
def test_two_sources_give_the_numbers_of_one(tmp_path: Path, protocol: str, make: Any, variant: str | None) -> None:
    tasks = make().tasks
    merged = build(tmp_path / "merged", protocol, tasks, variant)
    first, second = split(tasks, 50)
    sources = [study.write_pull(tmp_path / "b1", first, title="batch 1"),
               study.write_pull(tmp_path / "b2", second, title="batch 2", project_id=8)]  # fmt: skip
    result = build_report(load(protocol, variant), sources, tmp_path / "split", ReportOptions(bootstrap=200))
    assert result.items == 100 and result.annotations == 294
    names = sorted(p.name for p in (merged / "tables").glob("*.csv"))
    assert names == sorted(p.name for p in (tmp_path / "split" / "tables").glob("*.csv"))
    for name in names:
        if name != "sources.csv":
            assert (tmp_path / "split" / "tables" / name).read_bytes() == (merged / "tables" / name).read_bytes(), name
    rows = read_csv(tmp_path / "split" / "tables" / "sources.csv")
    assert [r[1] for r in rows[1:]] == ["batch 1", "batch 2"] and [r[5] for r in rows[1:]] == ["51", "50"]


def test_overlap_from_project_option_or_most_seen(tmp_path: Path) -> None:
    tasks = study.pairwise().tasks
    source = study.write_pull(tmp_path / "pull", tasks, overlap=None)
    d = load("pairwise-aspects")
    build_report(d, [source], tmp_path / "seen", ReportOptions(bootstrap=0))
    row = read_csv(tmp_path / "seen" / "tables" / "sources.csv")[1]
    assert (row[3], row[4]) == ("3", "most annotators seen on an item")
    build_report(d, [source], tmp_path / "option", ReportOptions(bootstrap=0, overlap=4))
    row = read_csv(tmp_path / "option" / "tables" / "sources.csv")[1]
    assert (row[3], row[4]) == ("4", "--overlap")
    assert len(read_csv(tmp_path / "option" / "tables" / "under_annotated.csv")) == 101
    with_project = study.write_pull(tmp_path / "pull2", tasks, overlap=2)
    build_report(d, [with_project], tmp_path / "project", ReportOptions(bootstrap=0, overlap=4))
    row = read_csv(tmp_path / "project" / "tables" / "sources.csv")[1]
    assert (row[3], row[4]) == ("2", "project.json")
    # Without bootstrap the intervals are empty cells, not invented numbers.
    wtl = read_csv(tmp_path / "project" / "tables" / "pairwise_win_tie_loss.csv")
    assert {r[-1] for r in wtl[1:]} == {""}


def test_export_file_as_source_and_bad_sources(tmp_path: Path) -> None:
    folder = study.write_pull(tmp_path / "pull", study.summary_flaws().tasks)
    result = build_report(load("summary-flaws"), [folder / "export.json"], tmp_path / "out", ReportOptions())
    assert result.items == 100
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"no export\.json in this folder"):
        build_report(load("summary-flaws"), [tmp_path / "empty"], tmp_path / "out2")
    (folder / "project.json").write_text('{"overlap": "three"}', encoding="utf-8")
    with pytest.raises(InputError, match="field 'overlap'"):
        build_report(load("summary-flaws"), [folder], tmp_path / "out3")
    (folder / "project.json").write_text('{"protocol": "qa-feedback", "variant": null}', encoding="utf-8")
    with pytest.raises(InputError, match=r"field 'protocol': this folder is a pull of 'qa-feedback'"):
        build_report(load("summary-flaws"), [folder], tmp_path / "out5")
    (tmp_path / "bad.json").write_text('{"not": "an export"}', encoding="utf-8")
    with pytest.raises(InputError, match=r"not a Label Studio JSON export"):
        build_report(load("summary-flaws"), [tmp_path / "bad.json"], tmp_path / "out4")


def test_own_definition_gets_its_style_sections(tmp_path: Path) -> None:
    toml = tmp_path / "mine.toml"
    toml.write_text(
        'name = "flaws-of-mine"\nstyle = "spans"\nsummary = "Mark flaws."\nguideline = "Mark flaws."\n'
        '[[context]]\nname = "document"\ntitle = "Document"\n[target]\nname = "summary"\ntitle = "Summary"\n'
        '[spans]\nname = "flaws"\n[[spans.labels]]\nvalue = "Irrelevant"\n',
        encoding="utf-8",
    )
    gen = study.summary_flaws()
    source = study.write_pull(tmp_path / "pull", gen.tasks)
    result = build_report(load(str(toml)), [source], tmp_path / "out")
    assert [s.title for s in result.sections] == ["Sources", "Annotators", "Items short of their overlap", "Spans",
                                                  "Span agreement", "Rule violations"]  # fmt: skip
    counted = list(gen.truth.values())  # the judgments that count
    counts = {r[0]: r for r in read_csv(tmp_path / "out" / "tables" / "spans_counts.csv")[1:]}
    irrelevant = [s for t in counted for s in t["spans"] if s[0] == "Irrelevant"]
    with_it = sum(any(s[0] == "Irrelevant" for s in t["spans"]) for t in counted)
    assert counts["Irrelevant"][1:5] == ["(all)", str(len(irrelevant)), str(with_it), str(len(counted))]
    header, *rows = read_csv(tmp_path / "out" / "tables" / "spans_agreement.csv")
    assert "token alpha" in header and [r[0] for r in rows] == ["Irrelevant", "all labels"]
    assert "no native format" not in (tmp_path / "out" / "report.md").read_text(encoding="utf-8")


def test_cli_report(tmp_path: Path) -> None:
    source = study.write_pull(tmp_path / "pull", study.ranking().tasks)
    runner = CliRunner()
    ok = runner.invoke(main, ["report", "extractive-ranking", str(source), "-o", str(tmp_path / "out")])
    assert ok.exit_code == 0, ok.output
    assert "100 items, 294 judgments from 1 source(s)" in ok.output
    assert (tmp_path / "out" / "report.html").is_file() and (tmp_path / "out" / "tables" / "ranking_agreement.csv")
    (tmp_path / "empty").mkdir()
    bad = runner.invoke(main, ["report", "extractive-ranking", str(tmp_path / "empty"), "-o", str(tmp_path / "x")])
    assert bad.exit_code == 1
    assert bad.output.strip().startswith("Error: ") and "no export.json" in bad.output
    assert len(bad.output.strip().splitlines()) == 1


def test_report_opens_in_a_browser(reports: dict[str, Path], tmp_path: Path, browser: Browser) -> None:
    out = reports["pairwise-aspects"]
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    try:
        page.goto((out / "report.html").resolve().as_uri())
        page.wait_for_load_state("load")
        images = page.evaluate("() => Array.from(document.images).map(i => [i.complete, i.naturalWidth])")
        assert len(images) == 3  # two pairwise plots and reliability_order
        assert all(done and width > 0 for done, width in images)
        assert page.locator("h1").inner_text() == "pairwise-aspects: report"
        assert page.locator("table").count() >= 8
        shot = tmp_path / "report.png"
        page.locator("figure").first.scroll_into_view_if_needed()
        page.screenshot(path=str(shot), full_page=True)
    finally:
        page.close()
    assert shot.stat().st_size > 20_000
