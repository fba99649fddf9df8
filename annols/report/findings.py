"""The report's section of what pull found the server holds that the manifest contradicts (annols.study.findings)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols.analysis.results import Finding, Table
from annols.study import findings as checks


def findings_section(folders: Sequence[Path]) -> Finding | None:
    """Every finding of the pulls in ``folders``, one row each; None when there is none (the report is as before)."""
    rows = []
    for folder in folders:
        for f in checks.read(folder / checks.FINDINGS_FILE):
            rows.append([str(folder), f.task_id if f.task_id is not None else "", f.task_key,
                         f.annotation_id if f.annotation_id is not None else "", f.kind, f.detail])  # fmt: skip
    if not rows:
        return None
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
