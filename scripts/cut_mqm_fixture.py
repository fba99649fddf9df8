"""Cut the MQM test fixture (tests/data/mqm_ted_ende/) from Google's WMT MQM release.

    fetch github.com/google/wmt-mqm-human-evaluation (commit 7fadea281aff8db61cc72fc3d469a4dca78b82a6), then
    python scripts/cut_mqm_fixture.py <repo>/ted/ende/mqm_ted_ende.tsv tests/data/mqm_ted_ende/mqm_ted_ende.subset.tsv
    python scripts/cut_mqm_fixture.py <repo>/ted/ende/mqm_ted_ende.avg_seg_scores.tsv \
        tests/data/mqm_ted_ende/mqm_ted_ende.avg_seg_scores.subset.tsv

Keeps every row (all 14 systems, their raters) of the segments in SEGMENTS, byte for byte, header first. The
segments are chosen for what the tests need: translations identical across systems, segments rated clean
(no-error rows), a rater who marks two errors on the same words (eTranslation 278: two majors; metricsystem5
139: a minor punctuation and a minor style error), and an omission that marks no words (metricsystem2 278).
The release's own per-segment score file (``*.avg_seg_scores.tsv``: a tab after the system, then the score and the
seg_id separated by a space; "None" for a segment not rated) is cut to the same segments.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

SEGMENTS = {"137", "138", "139", "140", "141", "276", "277", "278", "279", "280"}  # seg_id, the 4th column


def seg_id(line: str, scores: bool) -> str:
    return re.split(r"[\t ]", line.rstrip("\n"))[2] if scores else line.split("\t")[3]


def cut(source: Path, out: Path) -> int:
    scores = source.name.endswith(".avg_seg_scores.tsv")
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [lines[0]] + [line for line in lines[1:] if seg_id(line, scores) in SEGMENTS]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(kept), encoding="utf-8")
    return len(kept) - 1


if __name__ == "__main__":
    print(f"{cut(Path(sys.argv[1]), Path(sys.argv[2]))} rows")
