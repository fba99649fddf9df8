"""How a cell is written: the same text in the CSV, report.md and report.html."""

from __future__ import annotations

import math

from annols.report.model import cell_text


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
