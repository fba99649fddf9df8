"""The report's section of what pull found the server holds that the manifest contradicts (annols.study.findings;
the rows of the pulls' findings.csv, read into the study table by annols.study.table)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols.analysis.results import Finding, Table


def findings_section(rows: Sequence[Sequence[Any]]) -> Finding | None:
    """Every finding of the pulls, one row each (``StudyTable.findings``); None when there is none (the report
    is as before)."""
    if not rows:
        return None
    rows = [list(r) for r in rows]
    frame = pd.DataFrame(rows, columns=["source", "task id", "task key", "annotation id", "finding", "detail"])
    text = [
        f"Pull found {len(rows)} thing(s) on the server that are not as the push left them: tasks added, deleted or "
        "whose meta was changed, annotations saved by another account than the one they are credited to, "
        "annotations gone since an earlier pull. The tables above unblind from the coordinator's manifest, not "
        "from the server's meta; the judgments themselves are counted as the server holds them. See "
        "docs/security.md.",
    ]
    summary = [f'Pull findings: {len(rows)} (see the section "Pull findings").']
    return Finding("Pull findings", text, [Table("findings", "Pull findings", frame)], summary=summary)
