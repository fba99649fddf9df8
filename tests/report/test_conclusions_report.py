"""The report of a planted pairwise study (tests/own_study.py) through the whole path: its inconclusive
comparisons say so in report.md with the detectable difference, which equals an independent brute-force
power computation of the sign test over the comparison's decided items."""

from __future__ import annotations

from pathlib import Path

import pytest

from annols.report import ReportOptions
from tests.analysis.leaderboard.test_conclusions import items_detectable_brute
from tests.report import study
from tests.report.build import build_report
from tests.report.test_report_files import read_csv
from tests.report.test_style_reports import definition_of, export


def test_an_inconclusive_comparison_says_what_the_study_could_detect(tmp_path: Path) -> None:
    tasks, _ = export("pairwise")
    out = tmp_path / "report"
    build_report(definition_of("pairwise"), [study.write_pull(tmp_path / "pull", tasks)], out,
                 ReportOptions(bootstrap=100))  # fmt: skip
    md = (out / "report.md").read_text(encoding="utf-8")
    rows = read_csv(out / "tables" / "detectable.csv")
    header, rows = rows[0], rows[1:]
    at = {name: header.index(name) for name in header}
    sign_rows = read_csv(out / "tables" / "pairwise_sign_test.csv")
    sign_header, sign = sign_rows[0], {(r[0], r[1], r[2]): r for r in sign_rows[1:]}
    checked = 0
    for row in rows:
        p = row[at["p (corrected)"]]
        if p and float(p) < 0.05:
            continue
        conclusion = row[at["conclusion"]]
        assert conclusion.startswith("inconclusive at this size (")
        assert conclusion in md.replace("\\", "")  # the table in report.md (markdown escapes removed)
        tested = dict(zip(sign_header, sign[(row[0], row[1], row[2])], strict=True))
        decided, m = int(tested["items won"]) + int(tested["items lost"]), int(row[at["tests corrected for"]])
        assert int(row[at["units"]]) == decided
        if not row[at["detectable difference"]]:
            continue
        judgments, items = int(tested["judgments"]), int(tested["items"])
        x = 100 * items_detectable_brute(decided, int(tested["ties"]) / judgments, round(judgments / items), 0.05 / m)
        assert float(row[at["detectable difference"]]) == pytest.approx(x, abs=1e-4)
        assert conclusion == f"inconclusive at this size (could detect ≥ {x:.4g} points)"
        checked += 1
    assert checked >= 1
    assert "no difference" not in md.lower()
