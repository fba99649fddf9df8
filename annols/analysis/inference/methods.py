"""What each test a report prints is: its unit, test, correction family, effect size, interval, and what it
generalises to, said once here for report.md's methods paragraph and paper.tex's (docs/statistics.md, "Per
style", says the same).

:func:`present` finds the methods a report used from its tables' names; :func:`sentence` writes one method as
a sentence, its references cited by a function the caller gives (report.md names author and year, paper.tex
``\\citep``).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable
from dataclasses import dataclass

GENERALISES = "new items judged by these annotators"


@dataclass(frozen=True)
class Method:
    name: str  # what it is about: a style, a kind of question, the judges
    unit: str
    test: str
    correction: str
    effect: str
    interval: str
    tables: tuple[str, ...]  # a report that has a table of one of these names (fnmatch patterns) used the method
    cites: tuple[str, ...]  # keys of annols.report.paper.CITATIONS, in the order cited
    generalises: str = GENERALISES


ITEMS_BOOTSTRAP = "its 95% percentile bootstrap interval resampling items"
ITEMS_BETTING = ("its 95% bounded interval over items (betting, Waudby-Smith & Ramdas 2024: it holds with few items "
                 "and at a scale's ceiling)")  # fmt: skip
RATIO_BETTING = ("its 95% bounded interval of the share with the item as the unit (betting, Waudby-Smith & Ramdas "
                 "2024)")  # fmt: skip
METHODS = (
    Method("pairwise", "the item (its net preference: wins minus losses over its judgments)",
           "the exact two-sided sign test of the items won against the items lost, items even set aside",
           "Holm across the aspects of a system pair; with more than two systems, across every pair of systems of "
           "an aspect", "wins minus losses as a share of the decided judgments", RATIO_BETTING,
           ("pairwise_sign_test",), ("dixon1946", "holm1979", "efron1993")),
    Method("ratings", "the item (each system's mean rating on it)",
           "the Wilcoxon signed-rank test over items of the per-item mean differences",
           "Holm across the pairs of systems of an aspect",
           "the mean difference of ratings (the rank-biserial correlation beside it)", ITEMS_BETTING,
           ("ratings_paired_tests",), ("wilcoxon1945", "holm1979", "efron1993")),
    Method("numeric questions", "the item (each system's mean answer on it)",
           "the Wilcoxon signed-rank test over items of the per-item mean differences",
           "Holm across the pairs of systems of a question",
           "the mean difference of answers (the rank-biserial correlation beside it)", ITEMS_BOOTSTRAP,
           ("q_*_paired_tests", "error_score_paired_tests"), ("wilcoxon1945", "holm1979", "efron1993")),
    Method("ranking", "the item (each system's mean rank on it)",
           "the Wilcoxon signed-rank test over items of the per-item mean-rank differences",
           "Holm across the pairs of systems of a dimension",
           "the mean rank difference (the rank-biserial correlation beside it)", ITEMS_BETTING,
           ("ranking_paired_tests",), ("wilcoxon1945", "holm1979", "efron1993")),
    Method("best-worst",
           "the item (a pool of candidates with one context, never an answer; without context panes, the tuple)",
           "the Wilcoxon signed-rank test over items of the differences of the candidates' per-item scores "
           "(best minus worst over times shown)", "Holm across the pairs of candidates of an aspect",
           "the mean per-item score difference (the rank-biserial correlation beside it)", ITEMS_BETTING,
           ("best_worst_paired_tests",), ("wilcoxon1945", "holm1979", "efron1993")),
    Method("spans", "the candidate (one item's output: its spans per judgment)",
           "none: span counts and agreement describe the study", "none", "spans per label and system; agreement "
           "by exact and overlap F1 and token-level Krippendorff's alpha", "none",
           ("spans_counts", "qa_errors", "flaws_labels"), ("krippendorff2004",),
           "these items and annotators only (descriptive)"),
    Method("sentences", "the candidate's sentence row",
           "none: answer distributions and agreement describe the study", "none",
           "the share of rows with each answer; agreement by Krippendorff's alpha and Fleiss' kappa per column",
           "none", ("sentences_distribution", "sentence_errors_distribution"), ("krippendorff2004",),
           "these items and annotators only (descriptive)"),
    Method("choice questions per candidate", "the item (its judgments' most common answer for each system)",
           "Pearson's chi-square statistic of system and answer, its p-value from permutations of the systems "
           "within each item (an item's answers are paired)", "none: one test per question", "Cramér's V",
           "its 95% interval, the least and largest V over betting intervals of each system's and answer's share "
           "(Waudby-Smith & Ramdas 2024; Bonferroni over them): it holds with few items and can hold 0",
           ("q_*_association",), ("efron1993",)),
    Method("judges", "the question's unit (an item's answer) of each annotator with two or more others",
           "the alternative annotator test: per annotator, a one-sided one-sample t-test that the judge's advantage "
           "exceeds -epsilon", "Benjamini-Yekutieli across the annotators",
           "the judge's advantage (rho judge - rho annotator)",
           "its 95% bounded interval over the units (betting, Waudby-Smith & Ramdas 2024)",
           ("judges_alt_test",), ("calderon2025",)),
)
ANNOTATORS_NOTE = ("The annotators are taken as given: whether other annotators would judge alike is a separate "
                   "question, which treats annotators as a random factor too")  # fmt: skip
ANNOTATORS_CITES = ("riezler2024",)
# Where a report has the second result (annols.analysis.inference.sampled): what it is, said once for report.md and
# paper.tex.
SAMPLED_NOTE = ("Where five or more annotators judged a pair, a second test treats items and annotators both as "
                "random: Clark's min F' {cite} on min(items, annotators) - 1 degrees of freedom, Holm over the same "
                "family as the items' test, the cells' mean difference with the 95% t interval the test inverts; "
                "its result holds for new items judged by new annotators")  # fmt: skip
SAMPLED_CITES = ("clark1973",)
SAMPLED_TABLES = "*_annotators_sampled"
POWER_CITES = ("card2020",)
# How report.md names a reference (paper.tex cites the same keys from paper.bib).
SHORT = {"dixon1946": "Dixon & Mood 1946", "holm1979": "Holm 1979", "efron1993": "Efron & Tibshirani 1993",
         "wilcoxon1945": "Wilcoxon 1945", "krippendorff2004": "Krippendorff 2004",
         "calderon2025": "Calderon, Reichart & Dror 2025", "riezler2024": "Riezler & Hagmann 2024",
         "card2020": "Card et al. 2020", "clark1973": "Clark 1973"}  # fmt: skip


def cite_text(keys: tuple[str, ...]) -> str:
    """report.md's citation: "(Holm 1979; Efron & Tibshirani 1993)"."""
    return f"({'; '.join(SHORT[k] for k in keys)})"


def present(table_names: Iterable[str]) -> list[Method]:
    """The methods whose tables the report has, in :data:`METHODS` order."""
    names = set(table_names)

    return [m for m in METHODS if any(fnmatch.fnmatchcase(n, t) for t in m.tables for n in names)]


def sentence(method: Method, cite: Callable[[tuple[str, ...]], str]) -> str:
    """One method as one sentence naming unit, test, correction, effect, interval and generalisation."""
    if method.test.startswith("none"):
        return (f"{method.name.capitalize()}: the unit is {method.unit}; test: {method.test}; "
                f"reported: {method.effect} {cite(method.cites)}; it generalises to {method.generalises}.")  # fmt: skip
    return (f"{method.name.capitalize()}: the unit is {method.unit}; the test is {method.test} {cite(method.cites)}; "
            f"correction: {method.correction}; effect size: {method.effect}, with {method.interval}; it generalises "
            f"to {method.generalises}.")  # fmt: skip


def paragraph(table_names: Iterable[str], cite: Callable[[tuple[str, ...]], str] = cite_text,
              power: bool = True) -> str:  # fmt: skip
    """The methods paragraph of a report with these tables: a sentence per method present, then what the tests do
    not generalise to, and (``power``) the detectable differences where the report has them; "" when none is
    present."""
    names = set(table_names)
    methods = present(names)
    if not methods:
        return ""
    text = " ".join(sentence(m, cite) for m in methods)
    if any(not m.test.startswith("none") for m in methods):
        text += f" {ANNOTATORS_NOTE} {cite(ANNOTATORS_CITES)}."
    if any(fnmatch.fnmatchcase(n, SAMPLED_TABLES) for n in names):
        text += f" {SAMPLED_NOTE.format(cite=cite(SAMPLED_CITES))}."
    if power and "detectable" in names:
        text += (" Beside each inconclusive comparison the report gives the smallest difference its test could "
                 f"detect with 80% power {cite(POWER_CITES)}.")  # fmt: skip
    return text


def markdown_table() -> str:
    """:data:`METHODS` as docs/statistics.md's table (a test keeps the document's copy equal to it)."""
    lines = ["| about | unit | test | correction family | effect size | interval | generalises to | references |",
             "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for m in METHODS:
        cells = [m.name, m.unit, m.test, m.correction, m.effect, m.interval, m.generalises, cite_text(m.cites)[1:-1]]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)
