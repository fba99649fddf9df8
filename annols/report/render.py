"""Writing a report: tables as CSV, plots as PNG, report.md, and a self-contained report.html.

report.md links the PNGs in ``plots/``; report.html embeds them as base64 ``data:`` URIs
and carries its own style sheet, so it is one file that opens anywhere. The HTML is
built as an lxml tree, so every text (annotator e-mails, system names, labels) is
escaped by the serializer; nothing user-given is formatted into markup. Markdown cells
escape the characters that would end a cell or start markup.

Both show a table's cells as :func:`annols.report.model.shown_rows` gives them (whole
numbers without zero decimals; an aspect by its name, as in the CSVs); the legend of the names'
texts is a section of its own after the introduction.
"""

from __future__ import annotations

import base64
import csv
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from lxml import etree, html
from lxml.html import builder as E

from annols import files
from annols.analysis.results import Finding, Table
from annols.report.model import NO_LEGEND, Legend, displayed, header, rows, shown_rows

TABLES_DIR = "tables"
PLOTS_DIR = "plots"
MARKDOWN = "report.md"
HTML = "report.html"
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|#])")
STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 72rem;
       padding: 0 1rem; color: #222; line-height: 1.45; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.3rem; margin-top: 2.2rem; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 0.8rem 0 1.2rem; font-size: 0.88rem; }
caption { text-align: left; font-weight: 600; padding-bottom: 0.3rem; }
th, td { border: 1px solid #d0d0d0; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f4f4f4; } figure { margin: 1rem 0; } img { max-width: 100%; height: auto; }
figcaption, .note { color: #555; font-size: 0.85rem; }
"""


def write_csv(table: Table, out_dir: Path) -> Path:
    path = out_dir / TABLES_DIR / f"{table.name}.csv"
    with files.atomic_open(path) as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(header(table))
        writer.writerows(rows(table))
    return path


def write_plot_png(name: str, png: bytes, out_dir: Path) -> Path:
    path = out_dir / PLOTS_DIR / f"{name}.png"
    files.write_bytes(path, png)
    return path


def md_cell(text: str) -> str:
    """A markdown table cell: markup characters escaped, line breaks as spaces."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(text.split("\n"))).strip() or " "


LEGEND_TITLE = "Aspects"
LEGEND_TEXT = ("The tables name each aspect, dimension and question by its name; each is followed by the text "
               "annotators were asked.")


def _md_table(table: Table, legend: Legend) -> list[str]:
    cells = shown_rows(table, legend.labels)
    shown = displayed(table, cells)
    lines = [f"**{md_cell(table.title)}** (`{TABLES_DIR}/{table.name}.csv`)", ""]
    # The scores table has a column per aspect: its header names them by their label too.
    lines.append("| " + " | ".join(md_cell(legend.label(h)) for h in header(table)) + " |")
    lines.append("|" + "|".join("---" for _ in header(table)) + "|")
    lines += ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in shown]
    if len(shown) < len(cells):
        lines += ["", f"({len(shown)} of {len(cells)} rows shown; the CSV has all.)"]
    if table.note:
        lines += ["", md_cell(table.note)]
    return [*lines, ""]


def markdown(title: str, intro: Sequence[str], sections: Sequence[Finding], legend: Legend = NO_LEGEND) -> str:
    lines = [f"# {md_cell(title)}", ""]
    for paragraph in intro:
        lines += [md_cell(paragraph), ""]
    if legend.entries:
        lines += [f"## {LEGEND_TITLE}", "", LEGEND_TEXT, ""]
        lines += [f"- **{md_cell(label)}**: {md_cell(text)}" for label, text in legend.entries] + [""]
    for section in sections:
        lines += [f"## {md_cell(section.title)}", ""]
        for paragraph in section.text:
            lines += [md_cell(paragraph), ""]
        for table in section.tables:
            lines += _md_table(table, legend)
        for figure in section.figures:
            lines += [f"![{md_cell(figure.title)}]({PLOTS_DIR}/{figure.name}.png)", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _html_table(table: Table, legend: Legend) -> list[etree._Element]:
    cells = shown_rows(table, legend.labels)
    shown = displayed(table, cells)
    body = [E.TR(*[E.TD(c, E.CLASS("n")) if _is_number(c) else E.TD(c) for c in row]) for row in shown]
    out = [E.TABLE(
        E.CAPTION(table.title, " ", E.SPAN(f"({TABLES_DIR}/{table.name}.csv)", E.CLASS("note"))),
        E.THEAD(E.TR(*[E.TH(legend.label(h)) for h in header(table)])),
        E.TBODY(*body),
    )]  # fmt: skip
    if len(shown) < len(cells):
        out.append(E.P(f"{len(shown)} of {len(cells)} rows shown; the CSV has all.", E.CLASS("note")))
    if table.note:
        out.append(E.P(table.note, E.CLASS("note")))
    return out


def html_document(title: str, intro: Sequence[str], sections: Sequence[Finding], pngs: Mapping[str, bytes],
                  legend: Legend = NO_LEGEND) -> str:  # fmt: skip
    """The page; ``pngs``: each figure's PNG by its name (drawn once, for ``plots/`` and for this page)."""
    body: list[etree._Element] = [E.H1(title), *[E.P(p) for p in intro]]
    if legend.entries:
        items = [E.LI(E.STRONG(label), ": ", text) for label, text in legend.entries]
        body.append(E.SECTION(E.H2(LEGEND_TITLE), E.P(LEGEND_TEXT), E.UL(*items)))
    for section in sections:
        parts: list[etree._Element] = [E.H2(section.title), *[E.P(p) for p in section.text]]
        for table in section.tables:
            parts += _html_table(table, legend)
        for figure in section.figures:
            src = "data:image/png;base64," + base64.b64encode(pngs[figure.name]).decode("ascii")
            parts.append(E.FIGURE(E.IMG(src=src, alt=figure.title), E.FIGCAPTION(figure.title)))
        body.append(E.SECTION(*parts))
    document = E.HTML(
        E.HEAD(E.META(charset="utf-8"), E.META(name="viewport", content="width=device-width, initial-scale=1"),
               E.TITLE(title), E.STYLE(STYLE)),
        E.BODY(*body),
        lang="en",
    )  # fmt: skip
    return html.tostring(document, doctype="<!DOCTYPE html>", encoding="unicode", pretty_print=True)
