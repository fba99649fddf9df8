"""``report/paper.tex`` and ``paper.bib``: the study's evaluation section, written from the report's numbers.

``paper.tex`` is a standalone LaTeX document (``article``, ``booktabs``) that compiles as it
is with pdflatex; each block sits between ``% annols:begin NAME`` and ``% annols:end NAME``
lines so it can be lifted into a manuscript:

- ``methods``: items, annotators, overlap, judgments, agreement, the tests and correction
  used, what the study could detect (80% power) and the split-half reliability;
- ``scores``: the systems x aspects table of the style's main score (the report's "Scores at a glance");
- ``results`` (the style's main table: pairwise win / tie / loss with the corrected p
  marked; ratings mean, median and mean z-score; ranking mean rank; best-worst counting
  score; each system's "better than" after correction), ``comparisons`` (every system pair
  and aspect: difference, corrected p marked, smallest detectable difference) and
  ``reliability`` tables;
- ``limitations``: inconclusive comparisons with what they could detect, agreement below
  Krippendorff's 0.667, items short of their overlap;
- ``bibliography``: exactly the works the text cites (:func:`cited`, in the order first
  cited), also in ``paper.bib`` (BibTeX) for the manuscript's own bibliography; the
  document's ``thebibliography`` lets it compile without BibTeX.

Every number is the report's cell text as report.md shows it
(:func:`annols.report.model.shown_rows`: the CSV's, whole numbers without zero
decimals), an aspect is named by its short label with the full text once, in the legend
under the results table, and every user string (system, aspect, annotator, protocol
names) goes through :func:`escape`. A table must fit the text width: a test compiles every
style's paper and fails on an overfull box.
Significance marks after the report's correction (Holm): * p < 0.05, ** p < 0.01,
*** p < 0.001.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols import files
from annols.analysis.inference import detectable, methods
from annols.analysis.leaderboard import reliability
from annols.analysis.results import Finding, Table, cell_text
from annols.analysis.table import Study
from annols.definition import Definition
from annols.report import model
from annols.report.model import NO_LEGEND, Legend

TEX = "paper.tex"
BIB = "paper.bib"
LOW_ALPHA = 0.667  # Krippendorff (2004): the lowest alpha from which tentative conclusions are drawn

_SPECIAL = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#", "%": r"\%",
            "_": r"\_", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"\textless{}",
            ">": r"\textgreater{}", "|": r"\textbar{}", '"': "''"}  # fmt: skip
_SYMBOLS = {"≥": r"$\geq$", "≤": r"$\leq$", "±": r"$\pm$", "×": r"$\times$", "–": "--", "—": "---", "‘": "`",
            "’": "'", "“": "``", "”": "''", "…": r"\ldots{}", "−": "-", "\u00a0": "~", "°": r"$^\circ$",
            "ß": r"\ss{}", "æ": r"\ae{}", "Æ": r"\AE{}", "ø": r"\o{}", "Ø": r"\O{}", "å": r"\aa{}", "Å": r"\AA{}",
            "œ": r"\oe{}", "Œ": r"\OE{}", "ł": r"\l{}", "Ł": r"\L{}", "ı": r"\i{}"}  # fmt: skip
_ACCENTS = {"\u0301": "'", "\u0300": "`", "\u0302": "^", "\u0308": '"', "\u0303": "~", "\u0327": "c", "\u030c": "v",
            "\u030a": "r", "\u0304": "=", "\u0306": "u", "\u0307": ".", "\u030b": "H", "\u0328": "k"}  # fmt: skip

CITATIONS: dict[str, str] = {
    "card2020": """@inproceedings{card2020,
  author = {Card, Dallas and Henderson, Peter and Khandelwal, Urvashi and Jia, Robin and Mahowald, Kyle and Jurafsky, Dan},
  title = {With Little Power Comes Great Responsibility},
  booktitle = {Proceedings of the 2020 Conference on Empirical Methods in Natural Language Processing (EMNLP)},
  pages = {9263--9274},
  year = {2020}
}""",  # noqa: E501
    "clark1973": """@article{clark1973,
  author = {Clark, Herbert H.},
  title = {The Language-as-Fixed-Effect Fallacy: A Critique of Language Statistics in Psychological Research},
  journal = {Journal of Verbal Learning and Verbal Behavior},
  volume = {12}, number = {4}, pages = {335--359},
  year = {1973}
}""",
    "holm1979": """@article{holm1979,
  author = {Holm, Sture},
  title = {A Simple Sequentially Rejective Multiple Test Procedure},
  journal = {Scandinavian Journal of Statistics},
  volume = {6}, number = {2}, pages = {65--70},
  year = {1979}
}""",
    "dixon1946": """@article{dixon1946,
  author = {Dixon, Wilfrid J. and Mood, Alexander M.},
  title = {The Statistical Sign Test},
  journal = {Journal of the American Statistical Association},
  volume = {41}, number = {236}, pages = {557--566},
  year = {1946}
}""",
    "wilcoxon1945": """@article{wilcoxon1945,
  author = {Wilcoxon, Frank},
  title = {Individual Comparisons by Ranking Methods},
  journal = {Biometrics Bulletin},
  volume = {1}, number = {6}, pages = {80--83},
  year = {1945}
}""",
    "noether1955": """@article{noether1955,
  author = {Noether, Gottfried E.},
  title = {On a Theorem of {Pitman}},
  journal = {The Annals of Mathematical Statistics},
  volume = {26}, number = {1}, pages = {64--68},
  year = {1955}
}""",
    "fleiss1971": """@article{fleiss1971,
  author = {Fleiss, Joseph L.},
  title = {Measuring Nominal Scale Agreement among Many Raters},
  journal = {Psychological Bulletin},
  volume = {76}, number = {5}, pages = {378--382},
  year = {1971}
}""",
    "krippendorff2004": """@book{krippendorff2004,
  author = {Krippendorff, Klaus},
  title = {Content Analysis: An Introduction to Its Methodology},
  edition = {2}, publisher = {Sage}, address = {Thousand Oaks, CA},
  year = {2004}
}""",
    "cohen1960": """@article{cohen1960,
  author = {Cohen, Jacob},
  title = {A Coefficient of Agreement for Nominal Scales},
  journal = {Educational and Psychological Measurement},
  volume = {20}, number = {1}, pages = {37--46},
  year = {1960}
}""",
    "kendall1939": """@article{kendall1939,
  author = {Kendall, Maurice G. and Babington Smith, B.},
  title = {The Problem of $m$ Rankings},
  journal = {The Annals of Mathematical Statistics},
  volume = {10}, number = {3}, pages = {275--287},
  year = {1939}
}""",
    "bradley1952": """@article{bradley1952,
  author = {Bradley, Ralph Allan and Terry, Milton E.},
  title = {Rank Analysis of Incomplete Block Designs: {I}. The Method of Paired Comparisons},
  journal = {Biometrika},
  volume = {39}, number = {3/4}, pages = {324--345},
  year = {1952}
}""",
    "davidson1970": """@article{davidson1970,
  author = {Davidson, Roger R.},
  title = {On Extending the {Bradley-Terry} Model to Accommodate Ties in Paired Comparison Experiments},
  journal = {Journal of the American Statistical Association},
  volume = {65}, number = {329}, pages = {317--328},
  year = {1970}
}""",
    "koo2016": """@article{koo2016,
  author = {Koo, Terry K. and Li, Mae Y.},
  title = {A Guideline of Selecting and Reporting Intraclass Correlation Coefficients for Reliability Research},
  journal = {Journal of Chiropractic Medicine},
  volume = {15}, number = {2}, pages = {155--163},
  year = {2016}
}""",
    "piepho2004": """@article{piepho2004,
  author = {Piepho, Hans-Peter},
  title = {An Algorithm for a Letter-Based Representation of All-Pairwise Comparisons},
  journal = {Journal of Computational and Graphical Statistics},
  volume = {13}, number = {2}, pages = {456--466},
  year = {2004}
}""",
    "efron1993": """@book{efron1993,
  author = {Efron, Bradley and Tibshirani, Robert J.},
  title = {An Introduction to the Bootstrap},
  publisher = {Chapman \\& Hall}, address = {New York},
  year = {1993}
}""",
    "spearman1910": """@article{spearman1910,
  author = {Spearman, Charles},
  title = {Correlation Calculated from Faulty Data},
  journal = {British Journal of Psychology},
  volume = {3}, number = {3}, pages = {271--295},
  year = {1910}
}""",
    "louviere2015": """@book{louviere2015,
  author = {Louviere, Jordan J. and Flynn, Terry N. and Marley, A. A. J.},
  title = {Best-Worst Scaling: Theory, Methods and Applications},
  publisher = {Cambridge University Press}, address = {Cambridge},
  year = {2015}
}""",
    "kiritchenko2017": """@inproceedings{kiritchenko2017,
  author = {Kiritchenko, Svetlana and Mohammad, Saif M.},
  title = {Best-Worst Scaling More Reliable than Rating Scales: A Case Study on Sentiment Intensity Annotation},
  booktitle = {Proceedings of the 55th Annual Meeting of the Association for Computational Linguistics (Volume 2: Short Papers)},
  pages = {465--470},
  year = {2017}
}""",  # noqa: E501
    "orme2009": """@techreport{orme2009,
  author = {Orme, Bryan},
  title = {{MaxDiff} Analysis: Simple Counting, Individual-Level Logit, and {HB}},
  institution = {Sawtooth Software}, type = {Research Paper Series}, address = {Sequim, WA},
  year = {2009}
}""",
    "riezler2024": """@book{riezler2024,
  author = {Riezler, Stefan and Hagmann, Michael},
  title = {Validity, Reliability, and Significance: Empirical Methods for {NLP} and Data Science},
  edition = {2}, series = {Synthesis Lectures on Human Language Technologies},
  publisher = {Springer}, address = {Cham},
  year = {2024}
}""",
    "calderon2025": """@inproceedings{calderon2025,
  author = {Calderon, Nitay and Reichart, Roi and Dror, Rotem},
  title = {The Alternative Annotator Test for {LLM}-as-a-Judge: How to Statistically Justify Replacing Human Annotators with {LLMs}},
  booktitle = {Proceedings of the 63rd Annual Meeting of the Association for Computational Linguistics (ACL)},
  year = {2025}
}""",  # noqa: E501
    "brown1910": """@article{brown1910,
  author = {Brown, William},
  title = {Some Experimental Results in the Correlation of Mental Abilities},
  journal = {British Journal of Psychology},
  volume = {3}, number = {3}, pages = {296--322},
  year = {1910}
}""",
}
_BIBITEMS = {
    "card2020": "D. Card, P. Henderson, U. Khandelwal, R. Jia, K. Mahowald and D. Jurafsky. With little power comes "
                "great responsibility. In \\emph{Proceedings of EMNLP}, pages 9263--9274, 2020.",
    "clark1973": "H. H. Clark. The language-as-fixed-effect fallacy: a critique of language statistics in "
                 "psychological research. \\emph{Journal of Verbal Learning and Verbal Behavior}, 12(4):335--359, "
                 "1973.",
    "holm1979": "S. Holm. A simple sequentially rejective multiple test procedure. \\emph{Scandinavian Journal of "
                "Statistics}, 6(2):65--70, 1979.",
    "dixon1946": "W. J. Dixon and A. M. Mood. The statistical sign test. \\emph{Journal of the American Statistical "
                 "Association}, 41(236):557--566, 1946.",
    "wilcoxon1945": "F. Wilcoxon. Individual comparisons by ranking methods. \\emph{Biometrics Bulletin}, "
                    "1(6):80--83, 1945.",
    "noether1955": "G. E. Noether. On a theorem of Pitman. \\emph{The Annals of Mathematical Statistics}, "
                   "26(1):64--68, 1955.",
    "fleiss1971": "J. L. Fleiss. Measuring nominal scale agreement among many raters. \\emph{Psychological "
                  "Bulletin}, 76(5):378--382, 1971.",
    "krippendorff2004": "K. Krippendorff. \\emph{Content Analysis: An Introduction to Its Methodology}. Sage, 2nd "
                        "edition, 2004.",
    "cohen1960": "J. Cohen. A coefficient of agreement for nominal scales. \\emph{Educational and Psychological "
                 "Measurement}, 20(1):37--46, 1960.",
    "kendall1939": "M. G. Kendall and B. Babington Smith. The problem of $m$ rankings. \\emph{The Annals of "
                   "Mathematical Statistics}, 10(3):275--287, 1939.",
    "bradley1952": "R. A. Bradley and M. E. Terry. Rank analysis of incomplete block designs: I. The method of "
                   "paired comparisons. \\emph{Biometrika}, 39(3/4):324--345, 1952.",
    "davidson1970": "R. R. Davidson. On extending the Bradley-Terry model to accommodate ties in paired "
                    "comparison experiments. \\emph{Journal of the American Statistical Association}, "
                    "65(329):317--328, 1970.",
    "koo2016": "T. K. Koo and M. Y. Li. A guideline of selecting and reporting intraclass correlation coefficients "
               "for reliability research. \\emph{Journal of Chiropractic Medicine}, 15(2):155--163, 2016.",
    "piepho2004": "H.-P. Piepho. An algorithm for a letter-based representation of all-pairwise comparisons. "
                  "\\emph{Journal of Computational and Graphical Statistics}, 13(2):456--466, 2004.",
    "efron1993": "B. Efron and R. J. Tibshirani. \\emph{An Introduction to the Bootstrap}. Chapman \\& Hall, 1993.",
    "spearman1910": "C. Spearman. Correlation calculated from faulty data. \\emph{British Journal of Psychology}, "
                    "3(3):271--295, 1910.",
    "louviere2015": "J. J. Louviere, T. N. Flynn and A. A. J. Marley. \\emph{Best-Worst Scaling: Theory, Methods "
                    "and Applications}. Cambridge University Press, 2015.",
    "kiritchenko2017": "S. Kiritchenko and S. M. Mohammad. Best-worst scaling more reliable than rating scales: a "
                       "case study on sentiment intensity annotation. In \\emph{Proceedings of ACL (Volume 2: Short "
                       "Papers)}, pages 465--470, 2017.",
    "orme2009": "B. Orme. MaxDiff analysis: simple counting, individual-level logit, and HB. \\emph{Sawtooth "
                "Software Research Paper Series}, 2009.",
    "riezler2024": "S. Riezler and M. Hagmann. \\emph{Validity, Reliability, and Significance: Empirical Methods "
                   "for NLP and Data Science}. Springer, 2nd edition, 2024.",
    "calderon2025": "N. Calderon, R. Reichart and R. Dror. The alternative annotator test for LLM-as-a-judge: how to "
                    "statistically justify replacing human annotators with LLMs. In \\emph{Proceedings of ACL}, 2025.",
    "brown1910": "W. Brown. Some experimental results in the correlation of mental abilities. \\emph{British "
                 "Journal of Psychology}, 3(3):296--322, 1910.",
}  # fmt: skip


def escape(text: Any) -> str:
    """``text`` as LaTeX that prints it: the special characters, common symbols and accented letters written
    out; any other character outside ASCII as its code point ([U+XXXX]), so nothing breaks the document."""
    out = []
    for ch in str(text):
        if ch in _SPECIAL:
            out.append(_SPECIAL[ch])
        elif ch in _SYMBOLS:
            out.append(_SYMBOLS[ch])
        elif ch in "\n\r\t":
            out.append(" ")
        elif 32 <= ord(ch) < 127:
            out.append(ch)
        else:
            out.append(_accented(ch))
    return "".join(out)


def _accented(ch: str) -> str:
    parts = unicodedata.normalize("NFD", ch)
    base, marks = parts[0], parts[1:]
    if marks and base.isascii() and base.isalpha() and all(m in _ACCENTS for m in marks):
        text = base if base not in "ij" else "\\" + base
        for mark in marks:
            text = f"\\{_ACCENTS[mark]}{{{text}}}"
        return text
    return f"[U+{ord(ch):04X}]"


def _mark(p: Any) -> str:
    if p != p or p is None:
        return ""
    p = float(p)
    stars = "***" if p < 0.001 else "**" if p < 0.01 else "*" if p < detectable.ALPHA else ""
    return f"\\textsuperscript{{{stars}}}" if stars else ""


def _tables(sections: list[Finding]) -> dict[str, Table]:
    return {t.name: t for s in sections for t in s.tables}


def _cells(table: Table, columns: list[str], legend: Legend) -> tuple[list[str], list[list[str]]]:
    """The report's cell texts of some columns, as report.md shows them."""
    at = [model.header(table).index(c) for c in columns]
    return columns, [[row[i] for i in at] for row in model.shown_rows(table, legend.labels)]


WRAPPED = ">{\\raggedright\\arraybackslash}p{0.24\\linewidth}"  # a list of systems wraps, not widening the table


def _tabular(name: str, caption: str, header: list[str], rows: list[list[str]], note: str = "",
             keys: int = 3, size: str = "\\small") -> list[str]:  # fmt: skip
    """A booktabs table: header and rows are LaTeX already (cells escaped by the caller). The first ``keys``
    columns are left-aligned names, the rest right-aligned numbers; a "better than" column wraps."""
    wrapped = bool(header) and header[-1] == "better than"
    numbers = len(header) - min(keys, len(header)) - wrapped
    spec = "l" * min(keys, len(header)) + "r" * numbers + (WRAPPED if wrapped else "")
    # Columns 4pt apart (LaTeX's default is 6pt): a results table of nine columns fits the text width.
    lines = ["\\begin{table}[ht]", "\\centering", size, "\\setlength{\\tabcolsep}{4pt}",
             f"\\caption{{{caption}}}", f"\\label{{tab:{name}}}", f"\\begin{{tabular}}{{{spec}}}", "\\toprule",
             " & ".join(header) + " \\\\", "\\midrule"]  # fmt: skip
    lines += [" & ".join(row) + " \\\\" for row in rows]
    lines += ["\\bottomrule", "\\end{tabular}"]
    if note:
        lines += ["\\par\\smallskip\\footnotesize " + note]
    return [*lines, "\\end{table}"]


def _significance(tables: dict[str, Table]) -> pd.DataFrame:
    frame = tables["detectable"].frame if "detectable" in tables else pd.DataFrame(columns=detectable.COLUMNS)
    return frame


def _better_than(comparisons: pd.DataFrame, aspect: str, system: str) -> str:
    """The systems this one is significantly better than after correction, each with its mark."""
    out = []
    for row in comparisons.to_dict("records"):
        p = row["p (corrected)"]
        if str(row["aspect"]) != aspect or not (p == p and p < detectable.ALPHA):
            continue
        conclusion = str(row["conclusion"])
        for me, other in ((row["system"], row["opponent"]), (row["opponent"], row["system"])):
            if str(me) == system and conclusion.startswith(f"{me} better than {other}"):
                out.append(escape(other) + _mark(p))
    return ", ".join(out) if out else "--"


def effect_text(difference: Any, low: Any, high: Any) -> str:
    """A comparison's effect with its 95% interval, as the report writes each number: "12.50 [3.10, 20.00]"."""
    interval = f" [{cell_text(low, 'difference')}, {cell_text(high, 'difference')}]" if low == low else ""
    return cell_text(difference, "difference") + interval


MAIN = {  # style table -> the columns shown, the key columns (aspect, system[, opponent])
    "pairwise_win_tie_loss": ["aspect", "system", "opponent", "judgments", "win %", "tie %", "loss %"],
    "ratings_summary": ["aspect", "system", "ratings", "mean", "mean CI low", "mean CI high", "median", "mean z"],
    "ranking_mean_rank_intervals": ["dimension", "system", "rankings", "mean rank", "CI low", "CI high"],
    "best_worst_scores": ["aspect", "system", "shown", "score %", "score low %", "score high %"],
}
# Each main table's caption names exactly the columns MAIN shows, then "better than".
CAPTIONS = {
    "ratings_summary": "Mean rating with its 95\\% bounded interval (betting, over items), median rating and mean "
    "z-score (each "
    "annotator's ratings standardised) per system and aspect",
    "ranking_mean_rank_intervals": "Mean rank (1 is best) with its 95\\% bounded interval (betting, over items) per "
    "system and dimension",
    "best_worst_scores": "Best-worst score (\\% chosen best $-$ \\% chosen worst of the times shown) with its 95\\% "
    "bounded interval (betting) over items per system and aspect",
}
INTERVALS = {
    "ratings_summary": "mean CI low",
    "ranking_mean_rank_intervals": "CI low",
    "best_worst_scores": "score low %",
}  # a main table's bootstrap interval (empty without resamples)
MARKS_NOTE = "Marks: after Holm's correction, * p $<$ 0.05, ** p $<$ 0.01, *** p $<$ 0.001."


def legend_note(legend: Legend) -> str:
    """The full text of each aspect a table names by its short label."""
    if not legend.entries:
        return ""
    text = "; ".join(f"\\emph{{{escape(label)}}}: {escape(text)}" for label, text in legend.entries)
    return f" Aspects: {text}" + ("" if text.endswith((".", "?", "!")) else ".")


def results_block(tables: dict[str, Table], legend: Legend = NO_LEGEND) -> list[str]:
    comparisons = _significance(tables)
    for name, columns in MAIN.items():
        if name not in tables:
            continue
        header, rows = _cells(tables[name], columns, legend)
        table = tables[name]
        if name == "pairwise_win_tie_loss":
            found = {(str(r["aspect"]), str(r["system"]), str(r["opponent"])): r
                     for r in comparisons.to_dict("records")}  # fmt: skip
            frame = table.frame
            shown = []
            for row, a, s, o in zip(rows, frame["aspect"], frame["system"], frame["opponent"], strict=True):
                test = found.get((str(a), str(s), str(o)), {})
                nan = float("nan")
                shown.append([escape(c) for c in row]
                             + [effect_text(test.get("difference", nan), test.get("CI low", nan),
                                            test.get("CI high", nan)),
                                cell_text(test.get("p (corrected)", nan), "p (corrected)")
                                + _mark(test.get("p (corrected)"))])  # fmt: skip
            head = [escape(h) for h in header] + [PAIRWISE_EFFECT, "p (Holm)"]
            caption = ("Win / tie / loss of each pair of systems per aspect over all judgments; the sign test over "
                       "items: its effect, wins minus losses as a share of the decided judgments with its 95\\% "
                       "bootstrap interval over items, and its p after correction.")
        else:
            frame = table.frame
            shown = [[escape(c) for c in row] + [_better_than(comparisons, str(a), str(s))]
                     for row, a, s in zip(rows, frame[columns[0]], frame["system"], strict=True)]  # fmt: skip
            head = [escape(h) for h in header] + ["better than"]
            caption = (f"{CAPTIONS[name]}; the systems each is significantly better than after correction (each "
                       "difference with its interval in Table~\\ref{tab:comparisons}).")
        keys = 3 if name == "pairwise_win_tie_loss" else 2  # aspect, system[, opponent]: the rest are numbers
        return _tabular("results", caption, head, shown, MARKS_NOTE + legend_note(legend), keys)
    generic = next((t for t in tables.values() if t.name not in _OVERVIEW and t.name != "detectable"), None)
    if generic is None:
        return ["No result table."]
    rows = model.shown_rows(generic, legend.labels)[:30]
    note = f"The first 30 of {len(generic.frame)} rows (tables/{generic.name}.csv)." if len(generic.frame) > 30 else ""
    return _tabular("results", escape(generic.title), [escape(h) for h in model.header(generic)],
                    [[escape(c) for c in row] for row in rows], escape(note) + legend_note(legend))  # fmt: skip


CITE_MARK = re.compile(r"\[\[cite:([a-z0-9,]+)\]\]")  # methods.paragraph's citations, kept through escape()
EACH_ANNOTATOR = "_agreement_annotators"  # analysis.agreement's per-annotator tables, in every style
_OVERVIEW = {"sources", "annotators", "coverage", "under_annotated", "violations", "violations_by_rule"}
COMPARISON_COLUMNS = ["aspect", "system", "opponent", "units", "difference", "CI low", "CI high", "p (corrected)",
                      "detectable difference"]  # fmt: skip
PAIRWISE_EFFECT = "win $-$ loss \\% [95\\% CI]"  # the pairwise results table's effect column
RELIABILITY_COLUMNS = ["aspect", "systems", "split", "split-half r", "low", "high", "distinct splits", "verdict"]


def scores_block(tables: dict[str, Table], legend: Legend = NO_LEGEND) -> list[str]:
    """The systems x aspects table of the main score (:func:`annols.analysis.leaderboard.scores.scores_section`)."""
    if "scores" not in tables:
        return []
    table = tables["scores"]
    rows = [[escape(c) for c in row] for row in model.shown_rows(table, legend.labels)]
    # The aspects' legend is under the results table that follows: the paper gives each text once.
    return _tabular("scores", escape(table.title) + ".", [escape(legend.label(h)) for h in model.header(table)], rows,
                    keys=1)  # fmt: skip


def comparisons_block(tables: dict[str, Table], legend: Legend = NO_LEGEND) -> list[str]:
    if "detectable" not in tables or not len(tables["detectable"].frame):
        return []
    table = tables["detectable"]
    header, rows = _cells(table, COMPARISON_COLUMNS, legend)
    frame = table.frame
    shown = [[escape(c) for c in row[:7]] + [escape(row[7]) + _mark(p), escape(row[8])]
             for row, p in zip(rows, frame["p (corrected)"], strict=True)]  # fmt: skip
    units = escape(", ".join(sorted({str(m) for m in frame["measure"]})))
    what = "Every comparison"
    if table.picked is not None:  # many systems: the pairs next in rank, as report.md shows them
        shown = model.displayed(table, shown)
        what = (f"The {len(shown)} comparisons of systems next to each other in rank "
                f"({escape('tables/detectable.csv')} has all {len(frame)})")  # fmt: skip
    caption = (
        f"{what}: difference ({units}) with its 95\\% interval over items (CI low, CI high), p after "
        "Holm's correction and the smallest difference the "
        "test could detect with 80\\% power; a comparison without a mark is inconclusive at this size."
    )
    # Nine columns, two of them the interval: a size smaller than the other tables, so long names fit the page.
    return _tabular("comparisons", caption, [escape(h) for h in header], shown, MARKS_NOTE, size="\\footnotesize")


def reliability_block(tables: dict[str, Table], legend: Legend = NO_LEGEND) -> list[str]:
    if "reliability" not in tables or tables["reliability"].frame["split-half r"].isna().all():
        return []
    header, rows = _cells(tables["reliability"], RELIABILITY_COLUMNS, legend)
    rows = [r for r, v in zip(rows, tables["reliability"].frame["split-half r"], strict=True) if v == v]
    return _tabular("reliability", "Split-half reliability of the system scores (median over splits, Spearman-Brown "
                    "corrected where positive; low and high: the spread over the splits).", [escape(h) for h in header],
                    [[escape(c) for c in r] for r in rows])  # fmt: skip


def _agreement(tables: dict[str, Table]) -> list[tuple[str, str, float]]:
    """(what, key, alpha) of every Krippendorff alpha the report gives."""
    out = []
    for table in tables.values():
        if "Krippendorff alpha" not in table.frame.columns or table.name in _OVERVIEW:
            continue
        if table.name.endswith(EACH_ANNOTATOR):  # one annotator against the others: not the study's agreement
            continue
        key = table.frame.columns[0]
        for row in table.frame.itertuples(index=False):
            value = row[list(table.frame.columns).index("Krippendorff alpha")]
            if value == value:
                out.append((table.name, str(row[0]) if key else "", float(value)))
    return out


def methods_block(definition: Definition, study: Study, tables: dict[str, Table],
                  legend: Legend = NO_LEGEND) -> list[str]:  # fmt: skip
    kept = study.kept
    items = len(study.items)
    annotators = int(kept["annotator"].nunique()) if len(kept) else 0
    overlaps = sorted({int(o) for o in study.items["overlap"]}) if items else []
    per_item = kept.groupby("task_key").size() if len(kept) else pd.Series(dtype=int)
    text = [f"We collected {len(kept)} judgments of {items} items from {annotators} annotators with the "
            f"{escape(definition.style)} protocol {escape(definition.name)}"
            + (f", each item asked of {' or '.join(str(o) for o in overlaps)} annotators" if overlaps else "")
            + (f" (median {float(per_item.median()):g} judgments per item)" if len(per_item) else "")
            + "."]  # fmt: skip
    if "best_worst_scores" in tables:
        text.append("Annotators chose the best and the worst candidate of each tuple (best-worst scaling "
                    "\\citep{louviere2015}, as \\citet{kiritchenko2017} use it for annotation in NLP); a candidate's "
                    "score is the percentage of the times it was shown that it was chosen best minus the percentage "
                    "it was chosen worst, by counting \\citep{orme2009}.")  # fmt: skip
    main = next((n for n in MAIN if n in tables), "")
    if main in INTERVALS and tables[main].frame[INTERVALS[main]].notna().any():
        text.append("Intervals are 95\\% percentile bootstrap intervals resampling the items \\citep{efron1993}."
                    if main.startswith("pairwise") else
                    "Intervals are 95\\% betting confidence intervals for means bounded by the scale (Waudby-Smith "
                    "and Ramdas, 2024), over items: they hold with few items and at the scale's ends.")  # fmt: skip
    alphas = _agreement(tables)
    if alphas:
        values = [a for _, _, a in alphas]
        text.append(
            "Agreement was measured by Krippendorff's alpha \\citep{krippendorff2004}"
            + (
                " and Fleiss' kappa \\citep{fleiss1971}"
                if any("Fleiss kappa" in t.frame.columns for t in tables.values())
                else ""
            )
            + f"; alpha ranged from {cell_text(min(values), 'a')} to {cell_text(max(values), 'a')}."
        )
    if "pairwise_cohen" in tables and tables["pairwise_cohen"].frame["Cohen kappa"].notna().any():
        text.append("Each pair of annotators' agreement is Cohen's kappa \\citep{cohen1960}.")
    if "ranking_agreement" in tables and tables["ranking_agreement"].frame["mean Kendall W"].notna().any():
        text.append("The agreement of the rankings of an item is Kendall's W \\citep{kendall1939}.")
    # report.md's methods paragraph, its references cited from paper.bib; the detectable differences have their
    # own sentence below, with the numbers.
    used = methods.paragraph(tables, lambda keys: f"[[cite:{','.join(keys)}]]", power=False)
    if used:
        text.append(CITE_MARK.sub(lambda m: f"\\citep{{{m.group(1)}}}", escape(used)))
    if "pairwise_bradley_terry" in tables and tables["pairwise_bradley_terry"].frame["strength"].notna().any():
        text.append("System strengths were also fitted by the Bradley-Terry model \\citep{bradley1952} (a tie as "
                    "half a win for each system), with simultaneous 95\\% intervals of strengths from the pairs' "
                    "betting confidence intervals of win shares (Waudby-Smith and Ramdas, 2024; Bonferroni over "
                    "the pairs), 95\\% intervals of ranks by the bootstrap over items \\citep{efron1993}, and "
                    "groups of systems the tests cannot tell apart by a compact letter display "
                    "\\citep{piepho2004}.")  # fmt: skip
    if "detectable" in tables and len(tables["detectable"].frame):
        frame = tables["detectable"].frame
        finite = frame["detectable difference"][frame["detectable difference"].abs() < float("inf")].dropna()
        if len(finite):
            wilcoxon = any(n in tables for n in ("ranking_paired_tests", "ratings_paired_tests",
                                                 "best_worst_paired_tests"))  # fmt: skip
            text.append("Following \\citet{card2020}, we report the smallest difference each comparison could detect "
                        "with 80\\% power at the corrected level: from "
                        f"{cell_text(float(finite.min()), 'detectable difference')} to "
                        f"{cell_text(float(finite.max()), 'detectable difference')} "
                        f"({escape(', '.join(sorted({str(m) for m in frame['measure']})))})"
                        + (" (for the Wilcoxon test through its asymptotic relative efficiency 3/$\\pi$ "
                           "\\citep{noether1955})" if wilcoxon else "") + ".")  # fmt: skip
        elif (frame["detectable difference"] == float("inf")).any():  # too few units to be significant: say so
            text.append("Following \\citet{card2020}, we computed the smallest difference each comparison could "
                        "detect with 80\\% power at the corrected level: on this study's units no comparison could "
                        "be significant at all.")  # fmt: skip
    if "reliability" in tables:
        rel = tables["reliability"].frame.dropna(subset=["split-half r"])
        if len(rel):
            parts = [f"{escape(legend.label(a))}: {cell_text(r, 'r')} [{cell_text(lo, 'r')}, {cell_text(hi, 'r')}]"
                     for a, r, lo, hi in zip(rel["aspect"], rel["split-half r"], rel["low"], rel["high"],
                                             strict=True)]  # fmt: skip
            text.append("The reliability of the system ranking is the split-half correlation of the system scores "
                        "over halves of the items (or of the annotators, where they can be halved in many distinct "
                        "ways), Spearman-Brown corrected where positive \\citep{spearman1910,brown1910} and read by "
                        "the bands of \\citet{koo2016}, with the bootstrap \\citep{efron1993} probability that each "
                        f"pair's order holds; split-half r was {'; '.join(parts)} (the spread over the splits).")
    if "best_worst_split_half" in tables:
        rel = tables["best_worst_split_half"].frame.dropna(subset=["Spearman-Brown"])
        if len(rel):
            parts = [f"{escape(legend.label(a))}: {cell_text(r, 'r')}" for a, r in zip(rel["aspect"],
                                                                                      rel["Spearman-Brown"],
                                                                                      strict=True)]  # fmt: skip
            text.append("The reliability of the scores is their split-half correlation \\citep{kiritchenko2017}: the "
                        "answers to each tuple split at random into two halves, Spearman's rho between the halves' "
                        "scores averaged over the splits and Spearman-Brown corrected \\citep{spearman1910,brown1910}; "
                        f"it was {'; '.join(parts)}.")  # fmt: skip
    return [" ".join(text)]


def limitations_block(study: Study, tables: dict[str, Table], legend: Legend = NO_LEGEND) -> list[str]:
    text = []
    if "detectable" in tables and len(tables["detectable"].frame):
        frame = tables["detectable"].frame
        open_ = frame[~(frame["p (corrected)"] < detectable.ALPHA)]
        if len(open_):
            shown = [
                f"{escape(s)} vs.\\ {escape(o)} on {escape(legend.label(a))} "
                f"(difference {cell_text(d, 'difference')}, "
                + (
                    f"could detect $\\geq$ {cell_text(x, 'detectable difference')})"
                    if x == x and x < float("inf")
                    else "too few units to detect any difference)"
                )
                for a, s, o, d, x in zip(
                    open_["aspect"],
                    open_["system"],
                    open_["opponent"],
                    open_["difference"],
                    open_["detectable difference"],
                    strict=True,
                )
            ][:10]
            more = f" and {len(open_) - 10} more" if len(open_) > 10 else ""
            text.append(f"{len(open_)} of {len(frame)} comparisons are inconclusive at this size: "
                        f"{'; '.join(shown)}{more}. They do not show that the systems are equal.")  # fmt: skip
        else:
            text.append(f"All {len(frame)} comparisons are significant after correction.")
    low = [(name, key, a) for name, key, a in _agreement(tables) if a < LOW_ALPHA]
    if low:
        shown = [f"{escape(legend.label(key))} ({cell_text(a, 'a')})" for _, key, a in low[:10]]
        text.append(f"Agreement is below Krippendorff's alpha of {LOW_ALPHA} \\citep{{krippendorff2004}} for "
                    f"{len(low)} of {len(_agreement(tables))}: {', '.join(shown)}.")  # fmt: skip
    items = study.items
    if len(items):
        short = int((items["annotators"] < items["overlap"]).sum())
        text.append(f"{short} of {len(items)} items have fewer annotators than the overlap asked for."
                    if short else f"Every one of the {len(items)} items has the overlap asked for.")  # fmt: skip
    if "reliability" in tables:
        weak = tables["reliability"].frame
        weak = weak[weak["low"] < reliability.BANDS[1][0]]
        if len(weak):
            text.append(f"The system ranking is less than reliable (split-half spread reaching below "
                        f"{reliability.BANDS[1][0]}) for "
                        f"{', '.join(escape(legend.label(a)) for a in weak['aspect'])}.")  # fmt: skip
    return [" ".join(text) if text else "None found in the report's tables."]


def _block(name: str, lines: Iterable[str]) -> list[str]:
    return [f"% annols:begin {name}", *lines, f"% annols:end {name}"]


CITE = re.compile(r"\\cite[pt]?\{([^}#]*)\}")  # not the \\cite{#1} of the commands defined


def cited(tex: str) -> list[str]:
    """The keys the text cites, in the order first cited; each must be one of :data:`CITATIONS`."""
    keys = list(dict.fromkeys(k.strip() for group in CITE.findall(tex) for k in group.split(",")))
    unknown = [k for k in keys if k not in CITATIONS]
    if unknown:
        raise ValueError(f"paper.tex cites {unknown}, which have no bibliography entry")
    return keys


def bibliography(keys: list[str]) -> str:
    return "\n\n".join(CITATIONS[k] for k in keys) + "\n"


def document(definition: Definition, study: Study, sections: list[Finding],
             legend: Legend = NO_LEGEND) -> tuple[str, str]:  # fmt: skip
    """paper.tex and paper.bib: the bibliography is what the text cites, nothing more."""
    tables = _tables(sections)
    title = escape(f"{definition.name}" + (f" ({definition.variant})" if definition.variant else ""))
    lines = [
        "% paper.tex: written by annols report from the report's tables; each block between its markers.",
        "\\documentclass{article}",
        "\\usepackage{booktabs}",
        "\\usepackage{array}",
        "\\usepackage[margin=2cm]{geometry}",
        "\\providecommand{\\citep}[1]{(\\cite{#1})}",
        "\\providecommand{\\citet}[1]{\\cite{#1}}",
        "\\begin{document}",
        f"\\section*{{Human evaluation: {title}}}",
        "",
        "\\paragraph{Method.}",
        *_block("methods", methods_block(definition, study, tables, legend)),
        "",
        *_block("scores", scores_block(tables, legend)),
        "",
        *_block("results", results_block(tables, legend)),
        "",
        *_block("comparisons", comparisons_block(tables, legend)),
        "",
        *_block("reliability", reliability_block(tables, legend)),
        "",
        "\\paragraph{Limitations.}",
        *_block("limitations", limitations_block(study, tables, legend)),
        "",
    ]
    keys = cited("\n".join(lines))
    lines += [*_block("bibliography", ["\\begin{thebibliography}{99}",
                                       *[f"\\bibitem{{{k}}} {_BIBITEMS[k]}" for k in keys],
                                       "\\end{thebibliography}"] if keys else []),
              "\\end{document}", ""]  # fmt: skip
    return "\n".join(lines), bibliography(keys)


def write(definition: Definition, study: Study, sections: list[Finding], out_dir: Path,
          legend: Legend = NO_LEGEND) -> list[Path]:  # fmt: skip
    tex, bib = document(definition, study, sections, legend)
    paths = [Path(out_dir) / TEX, Path(out_dir) / BIB]
    files.write_text(paths[0], tex)
    files.write_text(paths[1], bib)
    return paths
