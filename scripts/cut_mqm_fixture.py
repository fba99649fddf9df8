"""Cut the MQM test fixture (tests/data/mqm_ted_ende/mqm_ted_ende.subset.tsv) from Google's WMT MQM release.

    fetch github.com/google/wmt-mqm-human-evaluation (commit 7fadea281aff8db61cc72fc3d469a4dca78b82a6), then
    python scripts/cut_mqm_fixture.py <repo>/ted/ende/mqm_ted_ende.tsv tests/data/mqm_ted_ende/mqm_ted_ende.subset.tsv

Keeps every row (all 14 systems, their raters) of the segments in SEGMENTS, byte for byte, header first. The
segments are chosen for what the tests need: translations identical across systems, segments rated clean
(no-error rows), a rater who marks two errors on the same words (eTranslation 278: two majors; metricsystem5
139: a minor punctuation and a minor style error), and an omission that marks no words (metricsystem2 278).
"""

from __future__ import annotations

import sys
from pathlib import Path

SEGMENTS = {"137", "138", "139", "140", "141", "276", "277", "278", "279", "280"}  # seg_id, the 4th column


def cut(source: Path, out: Path) -> int:
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [lines[0]] + [line for line in lines[1:] if line.split("\t")[3] in SEGMENTS]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(kept), encoding="utf-8")
    return len(kept) - 1


if __name__ == "__main__":
    print(f"{cut(Path(sys.argv[1]), Path(sys.argv[2]))} rows")
