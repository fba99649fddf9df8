"""The one way the scripts write a generated table into docs/statistics.md: between its two markers."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "statistics.md"


def splice(text: str, start: str, end: str, doc: Path = DOC) -> None:
    """Replace what ``doc`` holds between the lines ``start`` and ``end`` with ``text`` (markers kept), atomically."""
    from annols.files import write_text

    before, rest = doc.read_text(encoding="utf-8").split(start, 1)
    _, after = rest.split(end, 1)
    write_text(doc, f"{before}{start}\n{text}\n{end}{after}")
