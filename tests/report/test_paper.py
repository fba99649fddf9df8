"""report/paper.tex and paper.bib: compiled by Debian's pdflatex, every table number equal to the report's CSV,
every table within the page, every bibliography entry cited and every citation in the bibliography.

The planted studies are tests/own_study.py's (through tests/report/test_style_reports.py's
export) and two examples' (tests/report/examples.py); pdflatex and bibtex come from
texlive-latex-base and texlive-latex-recommended (booktabs), which scripts/test installs."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from annols.report import ReportOptions, paper
from tests.report import examples, study
from tests.report.build import build_report
from tests.report.test_report_files import assert_shown, legend_of, read_csv
from tests.report.test_style_reports import SECTIONS, definition_of, export

MARK = re.compile(r"\\textsuperscript\{(\*{1,3})\}")
OVERFULL = re.compile(r"^Overfull \\hbox \(([0-9.]+)pt too wide\)", re.M)
PAPERS = [*SECTIONS, *examples.PLANTED]  # every style's planted study; the chat-arena and best-worst examples
MAIN = {"ratings": "ratings_summary", "pairwise": "pairwise_win_tie_loss", "ranking": "ranking_mean_rank_intervals",
        "summary-best-worst": "best_worst_scores"}  # fmt: skip


def build(tmp: Path, name: str) -> Path:
    """The report of a style's planted study or of an example (a key of examples.PLANTED)."""
    out = tmp / name / "report"
    if name in examples.PLANTED:
        sources, definition = [examples.pull(name, tmp / name / "pull")], examples.definition(name)
    else:
        sources, definition = [study.write_pull(tmp / name / "pull", export(name)[0])], definition_of(name)
    build_report(definition, sources, out, ReportOptions(bootstrap=100))
    return out


def labels_of(out: Path) -> dict[str, str]:
    """report.md's legend (full text -> short label), as paper.tex writes both."""
    legend = legend_of((out / "report.md").read_text(encoding="utf-8"))
    return {paper.escape(text): paper.escape(label) for text, label in legend.items()}


def overfull(log: str) -> list[float]:
    """How far each overfull box of a pdflatex log sticks out, in points (a table wider than the page)."""
    return [float(x) for x in OVERFULL.findall(log)]


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


@pytest.mark.parametrize("style", list(MAIN))
def test_paper_compiles_and_its_numbers_are_the_reports(tmp_path: Path, style: str) -> None:
    out = build(tmp_path, style)
    tex = (out / "paper.tex").read_text(encoding="utf-8")
    log = pdflatex(out)
    assert (out / "paper.pdf").stat().st_size > 1000
    assert "undefined" not in log  # every citation and label resolved on the second pass
    labels = labels_of(out)
    name = labels.get  # an aspect's label in the paper, by its escaped CSV text
    columns = paper.MAIN[MAIN[style]]
    header, rows = table_rows(tex, "results")
    expected = csv_rows(out, MAIN[style], columns)
    assert header[: len(columns)] == [paper.escape(c) for c in columns]
    assert_shown([r[: len(columns)] for r in rows], expected, labels)
    # Comparisons: every number and its mark from detectable.csv.
    header, rows = table_rows(tex, "comparisons")
    assert header == [paper.escape(c) for c in paper.COMPARISON_COLUMNS]
    detectable = csv_rows(out, "detectable", paper.COMPARISON_COLUMNS)
    assert len(rows) == len(detectable) > 0
    at = paper.COMPARISON_COLUMNS.index("p (corrected)")
    for got, want in zip(rows, detectable, strict=True):
        p = MARK.sub("", got[at])
        assert_shown([[*got[:at], p, *got[at + 1 :]]], [want], labels)
        mark = MARK.search(got[at])
        assert (mark.group(1) if mark else "") == stars(want[at])
    if style == "pairwise":  # the main table's last columns: the comparison's effect [interval] and p with its mark
        ps = {(name(r[0], r[0]), r[1], r[2]): r for r in detectable}
        for row in table_rows(tex, "results")[1]:
            want = ps[(row[0], row[1], row[2])]
            assert MARK.sub("", row[-1]) == want[at]
            assert row[-2] == (f"{want[4]} [{want[5]}, {want[6]}]" if want[5] else want[4])
    else:  # "better than": exactly the significant comparisons it won
        wins: dict[tuple[str, str], set[str]] = {}
        head, *body = read_csv(out / "tables" / "detectable.csv")
        column = {c: i for i, c in enumerate(head)}
        for r in body:
            aspect, system, opponent = r[0], r[1], r[2]
            p, conclusion = r[column["p (corrected)"]], r[column["conclusion"]]
            if p and float(p) < 0.05:
                better = system if conclusion.startswith(f"{system} better than") else opponent
                worse = opponent if better == system else system
                wins.setdefault((name(paper.escape(aspect), paper.escape(aspect)), better), set()).add(worse)
        assert wins  # the planted studies have significant comparisons
        for row in table_rows(tex, "results")[1]:
            named = {MARK.sub("", n) for n in row[-1].split(", ")} - {"--"}
            assert named == wins.get((row[0], row[1]), set()), row
    if style == "summary-best-worst":  # its reliability is the split-half of its own table, in the method
        rho = read_csv(out / "tables" / "best_worst_split_half.csv")
        assert all(f"{r[0]}: {r[4]}" in block(tex, "methods") for r in rho[1:]) and len(rho) == 3
        return
    header, rows = table_rows(tex, "reliability")
    want = [r for r in csv_rows(out, "reliability", paper.RELIABILITY_COLUMNS) if r[3]]
    assert len(rows) > 0
    assert_shown(rows, want, labels)


# What a results caption may promise, and the column that keeps the promise.
PROMISES = {"mean z-score": ("mean z",), "median": ("median",), "interval": ("CI low", "score low", "95\\% CI"),
            "mean rank": ("mean rank",), "win / tie / loss": ("win \\%",),
            "best-worst score": ("score \\%",)}  # fmt: skip


@pytest.mark.parametrize("style", list(MAIN))
def test_the_results_caption_promises_only_columns_the_table_has(tmp_path: Path, style: str) -> None:
    tex = (build(tmp_path, style) / "paper.tex").read_text(encoding="utf-8")
    caption = re.search(r"\\caption\{(.*)\}", block(tex, "results"))
    assert caption
    header = table_rows(tex, "results")[0]
    promised = {phrase for phrase in PROMISES if phrase in caption.group(1).lower()}
    kept = {phrase for phrase, columns in PROMISES.items() if any(c in h for c in columns for h in header)}
    assert promised == kept and promised, (promised, kept)
    if style == "ratings":  # the defect this guards: a "mean z-score" in the caption, no column of it
        assert "mean z" in header


@pytest.mark.parametrize("name", PAPERS)
def test_every_paper_cites_all_of_its_bibliography_and_its_tables_fit_the_page(tmp_path: Path, name: str) -> None:
    out = build(tmp_path, name)
    tex = (out / "paper.tex").read_text(encoding="utf-8")
    bib = (out / "paper.bib").read_text(encoding="utf-8")
    text = tex.split("% annols:begin bibliography")[0].split("\\begin{document}")[1]
    cited = list(dict.fromkeys(k.strip() for group in re.findall(r"\\cite[pt]?\{([^}]*)\}", text)
                               for k in group.split(",")))  # fmt: skip
    items = re.findall(r"^\\bibitem\{(\w+)\}", block(tex, "bibliography"), re.M)
    entries = re.findall(r"^@\w+\{(\w+),", bib, re.M)
    assert items == entries == cited and cited  # each entry cited, each citation an entry, in the order cited
    assert set(cited) <= set(paper.CITATIONS)
    log = pdflatex(out)
    assert "undefined" not in log
    assert overfull(log) == [], f"a box of paper.tex is wider than the page: {overfull(log)} pt"
    if name == "chat-arena":  # every statistic its tables report is cited, nothing more
        # the sign test's effect has a bootstrap interval (Efron); the tests generalise to these annotators (Riezler)
        assert cited == ["krippendorff2004", "fleiss1971", "cohen1960", "dixon1946", "holm1979", "efron1993",
                         "riezler2024", "card2020"]  # fmt: skip
    if name == "summary-best-worst":
        assert {"louviere2015", "kiritchenko2017", "orme2009", "wilcoxon1945", "holm1979"} <= set(cited)


def test_the_fit_check_finds_a_table_wider_than_the_page(tmp_path: Path) -> None:
    """The check above can fail: one row of long names is reported by pdflatex and found by overfull()."""
    wide = paper._tabular("wide", "Too wide", [f"column {i}" for i in range(8)],
                          [[f"a-rather-long-system-name-{i}" for i in range(8)]])  # fmt: skip
    (tmp_path / "wide.tex").write_text("\n".join(["\\documentclass{article}", "\\usepackage{booktabs}",
                                                   "\\usepackage{array}", "\\usepackage[margin=2cm]{geometry}",
                                                   "\\begin{document}", *wide, "\\end{document}", ""]),
                                       encoding="utf-8")  # fmt: skip
    assert overfull(pdflatex(tmp_path, "wide.tex"))


def test_aspects_are_named_by_their_label_and_their_text_is_in_the_legend_once(tmp_path: Path) -> None:
    out = build(tmp_path, "pairwise")
    tex = (out / "paper.tex").read_text(encoding="utf-8")
    assert labels_of(out) == {"Which response is more helpful?": "helpful",
                              "Which response is more harmless?": "harmless",
                              "How sure are you?": "confidence"}  # fmt: skip
    for text, label in labels_of(out).items():
        assert tex.count(text) == 1 and f"\\emph{{{label}}}: {text}" in block(tex, "results")
        for table in ("results", "comparisons", "reliability"):
            assert {r[0] for r in table_rows(tex, table)[1]} == {"helpful", "harmless"}


@pytest.mark.parametrize("name", list(MAIN))  # between them every entry of paper.CITATIONS
def test_every_citation_is_in_the_bibliography_and_bibtex_reads_it(tmp_path: Path, name: str) -> None:
    out = build(tmp_path, name)
    tex = (out / "paper.tex").read_text(encoding="utf-8")
    bib = (out / "paper.bib").read_text(encoding="utf-8")
    cited = {k for group in re.findall(r"\\cite[pt]?\{([^}#]*)\}", tex) for k in group.split(",")}
    entries = set(re.findall(r"^@\w+\{(\w+),", bib, re.M))
    assert cited == entries and {"holm1979", "card2020"} <= cited
    for name in ("methods", "results", "comparisons", "reliability", "limitations", "bibliography"):
        block(tex, name)
    if name == "ratings":
        assert {"wilcoxon1945", "krippendorff2004"} <= cited
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
    head, *detectable = read_csv(out / "tables" / "detectable.csv")
    at = head.index("p (corrected)")
    inconclusive = [r for r in detectable if not (r[at] and float(r[at]) < 0.05)]
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
