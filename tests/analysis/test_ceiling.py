"""Coverage at the ceiling, seeded and small (scripts/ceiling_coverage.py runs the full size): the report's bounded
judge-assisted intervals cover at least 93% (within Monte Carlo error) where the CLT intervals fail, and the report
never prints a zero-width interval for an all-equal study."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from annols.analysis import ceiling, ppi
from annols.report import judges as report_judges

STUDIES = 30
SEED = 41


@pytest.mark.parametrize(("items", "annotators"), [(10, 1), (25, 3)])
def test_bounded_intervals_cover_at_the_ceiling(items: int, annotators: int) -> None:
    found = ceiling.coverage(0.9, items, annotators, STUDIES, SEED)
    assert {(c.estimate, c.interval) for c in found} == {(e, i) for e in ("systems", "difference")
                                                          for i in ("humans", "PPI++")}  # fmt: skip
    for c in found:
        # 93% or more, within three Monte Carlo standard errors at this size
        assert c.bounded >= 0.93 - 3 * math.sqrt(0.93 * 0.07 / c.tested), c
        assert c.bounded_width > 0
    if items == 10:  # the failure the bounded intervals fix: the CLT's coverage far below 95%, some of zero width
        systems = [c for c in found if c.estimate == "systems"]
        assert all(c.clt < 0.85 for c in systems), systems
        assert all(c.zero_width > 0 for c in systems)


def all_equal_study() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    rows = [(f"i{i}", f"a{a}", s, 5.0) for i in range(10) for a in range(3) for s in ("A", "B")]
    rows += [(f"i{i}", ceiling.JUDGE, s, float(rng.choice([4.0, 5.0]))) for i in range(40) for s in ("A", "B")]
    frame = pd.DataFrame(rows, columns=["task_key", "annotator", "system", "value"])
    return frame.assign(kind="rating", question=ceiling.QUESTION, opponent="")


def test_an_all_equal_study_gets_no_zero_width_interval() -> None:
    frame = all_equal_study()
    bounded = ppi.estimates(frame, [ceiling.JUDGE], lambda n: n == ceiling.JUDGE, ranges=ceiling.RANGES)
    assert len(bounded) == 3
    assert (bounded["humans high"] - bounded["humans low"] > 0.1).all()
    assert (bounded["PPI++ high"] - bounded["PPI++ low"] > 0.1).all()
    assert (bounded["interval"] == "bounded").all()
    # the scale's range unknown: no interval rather than a point called 95%
    clt = ppi.estimates(frame, [ceiling.JUDGE], lambda n: n == ceiling.JUDGE)
    assert clt[["humans low", "humans high", "PPI++ low", "PPI++ high"]].isna().all().all()
    text = ppi.interval_lines(clt)
    assert any(line.startswith("No interval for quality A, quality B, quality A - B") for line in text)


def test_the_report_section_says_so_in_its_headline() -> None:
    frame = all_equal_study()
    [finding] = report_judges.assisted_section(frame, [ceiling.JUDGE])
    assert any("No interval for" in line for line in finding.text)
    assert any("No interval for" in line for line in finding.summary)  # the headline
    [finding] = report_judges.assisted_section(frame, [ceiling.JUDGE], ceiling.RANGES)
    assert any("bounded 95% intervals" in line for line in finding.text)
    table = finding.tables[0].frame
    assert (table["humans high"] > table["humans low"]).all()


def test_without_ppi_python_the_headline_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """The report's headline (the finding's summary, which the CLI also turns into a warning on the terminal)."""
    monkeypatch.setattr(ppi, "available", lambda: False)
    [finding] = report_judges.assisted_section(all_equal_study(), [ceiling.JUDGE], ceiling.RANGES)
    assert finding.summary == finding.text and ppi.INSTALL in finding.summary[0]
