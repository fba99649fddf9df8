"""report/paper.tex and paper.bib: compiled by Debian's pdflatex, every table number equal to the report's CSV.

The planted studies are tests/own_study.py's (through tests/report/test_style_reports.py's
export); pdflatex and bibtex come from texlive-latex-base and texlive-latex-recommended
(booktabs), which scripts/test installs."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from annols.report import ReportOptions, build_report, paper
from tests.report import study
from tests.report.test_report_files import read_csv
from tests.report.test_style_reports import definition_of, export

MARK = re.compile(r"\\textsuperscript\{(\*{1,3})\}")


def build(tmp: Path, style: str) -> Path:
    tasks, _ = export(style)
    out = tmp / style / "report"
    build_report(definition_of(style), [study.write_pull(tmp / style / "pull", tasks)], out,
                 ReportOptions(bootstrap=100))  # fmt: skip
    return out


def pdflatex(folder: Path, name: str = "paper.tex") -> str:
    assert shutil.which("pdflatex"), "pdflatex is missing: scripts/test installs texlive-latex-base"
    log = ""
    for _ in range(2):  # the second pass resolves the citations
        run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", name], cwd=folder,
                             capture_output=True, text=True, timeout=300)  # fmt: skip
        assert run.returncode == 0, run.stdout[-3000:]
        log = run.stdout
    return log


def block(tex: str, name: str) -> str:
    found = re.search(rf"^% annols:begin {name}\n(.*?)^% annols:end {name}$", tex, re.S | re.M)
    assert found, name
    return found.group(1)


def table_rows(tex: str, name: str) -> tuple[list[str], list[list[str]]]:
    """A block's table: its header and rows as cell texts, significance marks kept apart."""
    body = block(tex, name)
    inner = body.split("\\midrule\n")[1].split("\\bottomrule")[0]
    header = body.split("\\toprule\n")[1].split("\\midrule")[0].strip().removesuffix(" \\\\").split(" & ")
    rows = [line.removesuffix(" \\\\").split(" & ") for line in inner.strip().splitlines()]
    return header, rows


def csv_rows(out: Path, name: str, columns: list[str]) -> list[list[str]]:
    rows = read_csv(out / "tables" / f"{name}.csv")
    at = [rows[0].index(c) for c in columns]
    return [[paper.escape(r[i]) for i in at] for r in rows[1:]]


def stars(p: str) -> str:
    if not p:
        return ""
    value = float(p)
    return "***" if value < 0.001 else "**" if value < 0.01 else "*" if value < 0.05 else ""


@pytest.mark.parametrize("style", ["ratings", "pairwise", "ranking"])
def test_paper_compiles_and_its_numbers_are_the_reports(tmp_path: Path, style: str) -> None:
    out = build(tmp_path, style)
    tex = (out / "paper.tex").read_text(encoding="utf-8")
    log = pdflatex(out)
    assert (out / "paper.pdf").stat().st_size > 1000
    assert "undefined" not in log  # every citation and label resolved on the second pass
    main = {"ratings": "ratings_summary", "pairwise": "pairwise_win_tie_loss",
            "ranking": "ranking_mean_rank_intervals"}[style]  # fmt: skip
    columns = paper.MAIN[main]
    header, rows = table_rows(tex, "results")
    expected = csv_rows(out, main, columns)
    assert header[: len(columns)] == [paper.escape(c) for c in columns]
    assert [r[: len(columns)] for r in rows] == expected
    # Comparisons: every number and its mark from detectable.csv.
    header, rows = table_rows(tex, "comparisons")
    assert header == [paper.escape(c) for c in paper.COMPARISON_COLUMNS]
    detectable = csv_rows(out, "detectable", paper.COMPARISON_COLUMNS)
    assert len(rows) == len(detectable) > 0
    for got, want in zip(rows, detectable, strict=True):
        p = MARK.sub("", got[5])
        assert [*got[:5], p, got[6]] == want
        mark = MARK.search(got[5])
        assert (mark.group(1) if mark else "") == stars(want[5])
    if style == "pairwise":  # the p column of the main table is the comparison's p with its mark
        ps = {tuple(r[:3]): r[5] for r in detectable}
        for row in table_rows(tex, "results")[1]:
            assert MARK.sub("", row[-1]) == ps[tuple(row[:3])]
    else:  # "better than": exactly the significant comparisons it won
        wins: dict[tuple[str, str], set[str]] = {}
        for r in read_csv(out / "tables" / "detectable.csv")[1:]:
            aspect, system, opponent, p, conclusion = r[0], r[1], r[2], r[7], r[10]
            if p and float(p) < 0.05:
                better = system if conclusion.startswith(f"{system} better than") else opponent
                worse = opponent if better == system else system
                wins.setdefault((aspect, better), set()).add(worse)
        for row in table_rows(tex, "results")[1]:
            named = {MARK.sub("", n) for n in row[-1].split(", ")} - {"--"}
            assert named == wins.get((row[0], row[1]), set()), row
    header, rows = table_rows(tex, "reliability")
    want = [r for r in csv_rows(out, "reliability", paper.RELIABILITY_COLUMNS) if r[3]]
    assert rows == want and len(rows) > 0


def test_every_citation_is_in_the_bibliography_and_bibtex_reads_it(tmp_path: Path) -> None:
    out = build(tmp_path, "ratings")
    tex = (out / "paper.tex").read_text(encoding="utf-8")
    bib = (out / "paper.bib").read_text(encoding="utf-8")
    cited = {k for group in re.findall(r"\\cite[pt]?\{([^}#]*)\}", tex) for k in group.split(",")}
    entries = set(re.findall(r"^@\w+\{(\w+),", bib, re.M))
    assert cited == entries and {"wilcoxon1945", "holm1979", "card2020", "krippendorff2004"} <= cited
    for name in ("methods", "results", "comparisons", "reliability", "limitations", "bibliography"):
        block(tex, name)
    # The .bib is valid BibTeX: plain.bst formats every entry.
    (out / "bibcheck.tex").write_text("\\documentclass{article}\\begin{document}\\nocite{*}\\bibliographystyle{plain}"
                                      "\\bibliography{paper}\\end{document}\n", encoding="utf-8")  # fmt: skip
    subprocess.run(["pdflatex", "-interaction=nonstopmode", "bibcheck.tex"], cwd=out, capture_output=True, timeout=300)
    run = subprocess.run(["bibtex", "bibcheck"], cwd=out, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout
    bbl = (out / "bibcheck.bbl").read_text(encoding="utf-8")
    assert set(re.findall(r"\\bibitem\{(\w+)\}", bbl)) == entries


def test_limitations_give_the_real_numbers(tmp_path: Path) -> None:
    out = build(tmp_path, "ratings")
    text = block((out / "paper.tex").read_text(encoding="utf-8"), "limitations")
    agreement = read_csv(out / "tables" / "ratings_agreement.csv")
    at = agreement[0].index("Krippendorff alpha")
    low = [r for r in agreement[1:] if r[at] and float(r[at]) < 0.667]
    for r in low:
        assert f"{paper.escape(r[0])} ({r[at]})" in text
    detectable = read_csv(out / "tables" / "detectable.csv")[1:]
    inconclusive = [r for r in detectable if not (r[7] and float(r[7]) < 0.05)]
    if inconclusive:
        assert f"{len(inconclusive)} of {len(detectable)} comparisons are inconclusive at this size" in text
    else:
        assert f"All {len(detectable)} comparisons are significant after correction." in text
    items = read_csv(out / "tables" / "sources.csv")
    assert "items" in text and items


@pytest.mark.parametrize("style", ["spans", "sentences"])
def test_styles_without_system_tests_still_compile(tmp_path: Path, style: str) -> None:
    out = build(tmp_path, style)
    pdflatex(out)
    tex = (out / "paper.tex").read_text(encoding="utf-8")
    assert "\\begin{tabular}" in block(tex, "results")


@pytest.mark.parametrize(("given", "latex"), [
    ("a_b & c", "a\\_b \\& c"), ("50% {x} $y$ #1", "50\\% \\{x\\} \\$y\\$ \\#1"),
    ("back\\slash ~^", "back\\textbackslash{}slash \\textasciitilde{}\\textasciicircum{}"),
    ("<gpt-4> | \"q\"", "\\textless{}gpt-4\\textgreater{} \\textbar{} ''q''"),
    ("Müller café ≥ 0.5", "M\\\"{u}ller caf\\'{e} $\\geq$ 0.5"), ("naïve ı", "na\\\"{\\i}ve \\i{}"),
    ("模型", "[U+6A21][U+578B]"), ("\\end{document}", "\\textbackslash{}end\\{document\\}"),
])  # fmt: skip
def test_escape(given: str, latex: str) -> None:
    assert paper.escape(given) == latex


def test_escaped_strings_compile_and_print_as_given(tmp_path: Path) -> None:
    hostile = ["a_b & c", "50% {x} $y$ #1", "back\\slash ~^", "<gpt-4> | \"q\"", "Müller café ≥ 0.5", "naïve",
               "模型", "\\end{document}", "\\input{/etc/passwd}"]  # fmt: skip
    body = "\n\n".join(paper.escape(h) for h in hostile)
    (tmp_path / "t.tex").write_text("\\documentclass{article}\\begin{document}\n" + body + "\n\\end{document}\n",
                                    encoding="utf-8")  # fmt: skip
    pdflatex(tmp_path, "t.tex")
    assert (tmp_path / "t.pdf").is_file()
