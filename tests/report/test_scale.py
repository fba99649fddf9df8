"""Reports that scale: a 16-system ratings study (tests/report/scaled.py) lists systems in natural order
and stays within the bounds the README gives."""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd
import pytest

from annols.analysis import results
from annols.analysis.naming import natural, natural_systems
from annols.report import ReportOptions, plots
from tests.report import scaled
from tests.report.build import build_report


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def number(system: str) -> int:
    return int(system.removeprefix("M"))


PLANTED: dict[tuple[str, str], list[int]] = {}


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("scaled")
    pull, planted = scaled.pull(folder / "pull")
    PLANTED.update(planted)
    build_report(scaled.definition(), [pull], folder / "report", ReportOptions(bootstrap=50))
    return folder / "report"


def test_natural_order_reads_digits_as_numbers_and_keeps_text_order_otherwise() -> None:
    assert natural(["M10", "M2", "M1", "M2"]) == ["M1", "M2", "M10"]
    assert natural(["sys-1-b", "sys-10-a", "sys-2-c"]) == ["sys-1-b", "sys-2-c", "sys-10-a"]
    words = ["pegasus", "JGR", "bart", "Zeta"]
    assert natural(words) == sorted(words)  # no digits: the text order, case included
    frame = pd.DataFrame({"question": ["b", "a", "a", "a"], "system": ["M10", "M2", "M10", "M1"]})
    ordered = frame.sort_values(["question", "system"], kind="stable", key=natural_systems)
    assert ordered.to_numpy().tolist() == [["a", "M1"], ["a", "M2"], ["a", "M10"], ["b", "M10"]]


def test_systems_in_natural_order_in_every_table_that_lists_them(out: Path) -> None:
    by_number = sorted(scaled.SYSTEMS, key=number)
    for name in ("ratings_summary", "ratings_distribution"):
        rows = read_csv(out / "tables" / f"{name}.csv")
        for aspect in dict.fromkeys(r["aspect"] for r in rows):
            listed = list(dict.fromkeys(r["system"] for r in rows if r["aspect"] == aspect))
            assert listed == by_number, name
    for name in ("ratings_paired_tests", "detectable", "reliability_order"):
        rows = read_csv(out / "tables" / f"{name}.csv")
        pairs = [(r["system"], r["opponent"]) for r in rows if r["aspect"] == rows[0]["aspect"]]
        expected = [(a, b) for i, a in enumerate(by_number) for b in by_number[i + 1 :]]
        assert pairs == expected, name


def _text(name: str) -> str:
    """The aspect's text, which the plant keys its ratings by (the tables name it by its name)."""
    return next(a.text for a in scaled.definition().spec.aspects if a.name == name)


def test_one_compact_table_of_systems_by_aspect_near_the_top(out: Path) -> None:
    rows = read_csv(out / "tables" / "scores.csv")
    aspects = [a.name for a in scaled.definition().spec.aspects]
    assert list(rows[0]) == ["system", *aspects]
    assert [r["system"] for r in rows] == sorted(scaled.SYSTEMS, key=number)
    for row in rows:
        for aspect in aspects:
            values = PLANTED[(row["system"], _text(aspect))]
            assert float(row[aspect]) == pytest.approx(sum(values) / len(values), abs=5e-5)
    md = (out / "report.md").read_text(encoding="utf-8")
    sections = [line for line in md.splitlines() if line.startswith("## ")]
    assert sections.index("## Scores at a glance") < sections.index("## Ratings")
    for page in (md, (out / "report.html").read_text(encoding="utf-8")):
        assert "tables/scores.csv" in page


def test_tables_of_pairs_show_the_pairs_adjacent_in_rank_and_the_csv_keeps_all(out: Path) -> None:
    md = (out / "report.md").read_text(encoding="utf-8")
    aspects = [a.name for a in scaled.definition().spec.aspects]
    pairs = len(scaled.SYSTEMS) * (len(scaled.SYSTEMS) - 1) // 2
    adjacent = len(scaled.SYSTEMS) - 1
    for name in ("ratings_paired_tests", "detectable", "reliability_order"):
        assert len(read_csv(out / "tables" / f"{name}.csv")) == pairs * len(aspects)
        assert f"({adjacent * len(aspects)} of {pairs * len(aspects)} rows shown; the CSV has all.)" in md
    # The planted centres fall with the system's number: adjacent in rank is M<k> against M<k+1>.
    block = md.split("tables/ratings_paired_tests.csv")[1].split("rows shown")[0]
    shown = {tuple(line.split(" | ")[1:3]) for line in block.splitlines() if line.startswith("| ")}
    assert shown - {("system", "opponent")} == {(f"M{k}", f"M{k + 1}") for k in range(adjacent)}


# The bounds the README gives (report section) for a study of 16 systems x 4 aspects x 100 items x 3 annotators.
MD_LINES = 600  # 500 until rank intervals, per-annotator and system-level agreement joined the report
HTML_BYTES = 1_000_000
PLOT_PIXELS = 1600


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def test_the_report_of_16_systems_stays_within_its_bounds(out: Path) -> None:
    assert len((out / "report.md").read_text(encoding="utf-8").splitlines()) < MD_LINES
    assert (out / "report.html").stat().st_size < HTML_BYTES
    plots = sorted((out / "plots").glob("*.png"))
    assert {p.stem for p in plots} >= {"ratings_distribution", "reliability_order"}
    for plot in plots:
        width, height = png_size(plot)
        assert height <= PLOT_PIXELS and width <= PLOT_PIXELS, plot.name


def test_the_distribution_plot_has_a_panel_per_aspect_in_a_grid(out: Path) -> None:
    # Two panels a row: the figure is wider than one column of panels (900 pixels) and not as tall as four.
    width, height = png_size(out / "plots" / "ratings_distribution.png")
    assert width > 900 and height < 2 * width


def test_paper_has_the_compact_table_and_the_comparisons_next_in_rank(out: Path) -> None:
    tex = (out / "paper.tex").read_text(encoding="utf-8")

    def block(name: str) -> list[str]:
        body = tex.split(f"% annols:begin {name}\n")[1].split(f"% annols:end {name}")[0]
        return [line for line in body.splitlines() if line.endswith("\\\\") and "midrule" not in line]

    scores = block("scores")
    assert [row.split(" & ")[0] for row in scores[1:]] == sorted(scaled.SYSTEMS, key=number)
    aspects = len(scaled.definition().spec.aspects)
    assert len(block("comparisons")) - 1 == (len(scaled.SYSTEMS) - 1) * aspects


def test_plots_of_120_pairs_per_aspect_stay_within_the_height(tmp_path: Path) -> None:
    # A pairwise study of 16 systems: a bar per pair and aspect, 4 x 120 bars.
    pairs = [f"M{a} vs M{b}" for a in range(16) for b in range(a + 1, 16)]
    panels = [results.Panel(f"aspect {k}", pairs, [[30.0] * len(pairs), [70.0] * len(pairs)]) for k in range(4)]
    estimates = [results.Estimates(f"aspect {k}", pairs, [0.5] * len(pairs), [0.4] * len(pairs), [0.6] * len(pairs))
                 for k in range(4)]  # fmt: skip
    for n, figure in enumerate([results.stacked_bars("a", "A", panels, ["win", "loss"]),
                                results.intervals("b", "B", estimates, "score"),
                                results.bars("c", "C", pairs * 4, [1.0] * len(pairs) * 4, "n")]):  # fmt: skip
        path = tmp_path / f"{n}.png"
        path.write_bytes(plots.png(figure))
        width, height = png_size(path)
        assert height <= PLOT_PIXELS and width <= PLOT_PIXELS, figure.name


def parse_rank(cell: str) -> tuple[int, int, int, str]:
    """ "3 [2, 4] bc" -> (3, 2, 4, "bc")."""
    rank, rest = cell.split(" [")
    interval, group = rest.split("] ")
    low, high = interval.split(", ")
    return int(rank), int(low), int(high), group


def test_16_systems_get_rank_intervals_and_letter_groups(out: Path) -> None:
    rows = read_csv(out / "tables" / "rankings.csv")
    tests = read_csv(out / "tables" / "detectable.csv")
    aspects = [a.name for a in scaled.definition().spec.aspects]
    assert [r["system"] for r in rows] == sorted(scaled.SYSTEMS, key=number)
    assert list(rows[0]) == ["system", *aspects]
    for aspect in aspects:
        parsed = {r["system"]: parse_rank(r[aspect]) for r in rows}
        means = {s: sum(PLANTED[(s, _text(aspect))]) / len(PLANTED[(s, _text(aspect))]) for s in scaled.SYSTEMS}
        for s, (rank, low, high, letters) in parsed.items():
            assert 1 <= low <= rank <= high <= 16 and letters
            assert rank == 1 + sum(m > means[s] for m in means.values())  # ranked by the planted ratings' means
        group = {s: set(p[3]) for s, p in parsed.items()}
        pairs = [t for t in tests if t["aspect"] == aspect]
        assert len(pairs) == 120 and {t["tests corrected for"] for t in pairs} == {"120"}  # one Holm family
        for t in pairs:  # a letter in common exactly when the corrected test cannot tell the two apart
            apart = t["p (corrected)"] != "" and float(t["p (corrected)"]) < 0.05
            assert (not group[t["system"]] & group[t["opponent"]]) == apart, (t["system"], t["opponent"])
        assert not group["M0"] & group["M15"]  # 3.75 points apart
