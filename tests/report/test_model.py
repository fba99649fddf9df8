"""How a cell is written: the same text in the CSV, report.md and report.html, but for whole numbers and aspect
labels, which only the rendered reports shorten."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pandas as pd

from annols.analysis import naming
from annols.analysis.results import Table, cell_text
from annols.definition import Aspect
from annols.report.model import rows, shown_rows, whole_text


def test_cells_are_rounded_by_column_and_small_p_values_keep_their_size() -> None:
    assert cell_text(12.3456, "win %") == "12.35"
    assert cell_text(7.25, "median lead time (s)") == "7.2"
    assert cell_text(0.123456, "Fleiss kappa") == "0.1235"
    assert cell_text(-0.00001, "mean z") == "0.0000"
    assert cell_text(0.0123456, "p (Holm)") == "0.0123"
    assert cell_text(1.41e-5, "p (Wilcoxon)") == "1.41e-05"
    assert float(cell_text(1.41e-5, "p (Wilcoxon)")) == 1.41e-5
    assert cell_text(1.41e-5, "mean difference") == "0.0000"  # only p-values
    assert cell_text(0.0, "p (sign test)") == "0.0000"
    assert cell_text(math.nan, "p (Holm)") == "" and cell_text(None) == "" and cell_text(3, "x") == "3"


def test_whole_number_statistics_are_shown_without_zero_decimals_and_the_csv_keeps_them() -> None:
    frame = pd.DataFrame({"aspect": ["Which response is more helpful?", "Brief"], "median": [5.0, 4.5],
                          "mean": [5.0, 4.25], "ratings": [3, 4]})  # fmt: skip
    table = Table("t", "T", frame, whole=("median",))
    assert rows(table) == [["Which response is more helpful?", "5.0000", "5.0000", "3"],
                            ["Brief", "4.5000", "4.2500", "4"]]  # fmt: skip
    labels = {"Which response is more helpful?": "helpful"}
    assert shown_rows(table, labels) == [["helpful", "5", "5.0000", "3"], ["Brief", "4.5", "4.2500", "4"]]
    assert [whole_text(t) for t in ("-2.0000", "0.0000", "12", "", "1.41e-05")] == ["-2", "0", "12", "", "1.41e-05"]


def test_every_aspect_is_named_by_its_name_and_the_legend_gives_each_text_that_is_not_its_name() -> None:
    spec = SimpleNamespace(aspects=[Aspect("helpful", "Which response is more helpful?"), Aspect("brief", "Brevity"),
                                    Aspect("plain", ""), Aspect("same", "same")],
                           questions=[SimpleNamespace(name="sure", text="How sure are you?", kind="choice"),
                                      SimpleNamespace(name="why", text="Why?", kind="text")])  # fmt: skip
    assert naming.aspect_names(spec.aspects) == ["helpful", "brief", "plain", "same"]
    entries, labels = naming.legend(spec)
    assert labels == {}  # the tables' cells are the names already: nothing to relabel
    # A free-text question is in no table: not in the legend.
    assert entries == (("helpful", "Which response is more helpful?"), ("brief", "Brevity"),
                       ("sure", "How sure are you?"))  # fmt: skip
    # A short text that is another aspect's name no longer matters: the cells are names, each text in the legend.
    clash = SimpleNamespace(aspects=[Aspect("a", "b"), Aspect("b", "A question longer than twenty-four characters")])
    assert naming.legend(clash) == ((("a", "b"), ("b", "A question longer than twenty-four characters")), {})
    ranking = SimpleNamespace(dimensions=[SimpleNamespace(name="quality", text="Overall quality")])
    assert naming.legend(ranking) == ((("quality", "Overall quality"),), {})
