"""An optional pane in Label Studio's editor in Chromium: examples/mqm.toml's reference is optional; a record
without one shows no reference pane (no title, no note, no empty frame); a record with one shows it, blank
lines and all."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from annols.labelstudio.client import LabelStudioClient
from tests.browser.conftest import LabelingView, push
from tests.conftest import ROOT, LiveServer

EXAMPLES = ROOT / "examples"
RECORD = json.loads((EXAMPLES / "mqm.jsonl").read_text("utf-8").splitlines()[1])
REFERENCE = ("Reference translation", "for help only: do not judge it")


def _open(labeling: LabelingView, label_studio: LiveServer, record: dict[str, Any], title: str,
          tmp_path: Path) -> dict[str, Any]:  # fmt: skip
    path = tmp_path / f"{title}.jsonl"
    path.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    project = push(label_studio, [str(EXAMPLES / "mqm.toml"), str(path)], title, tmp_path)
    return labeling.open(project)


def test_an_optional_reference_left_out_shows_nothing(
    label_studio: LiveServer, client: LabelStudioClient, labeling: LabelingView, tmp_path: Path
) -> None:
    page = labeling.page
    task = _open(labeling, label_studio, {k: v for k, v in RECORD.items() if k != "reference"}, "optional none",
                 tmp_path)  # fmt: skip
    assert task["data"]["reference"] == ""
    labeling.screenshot("optional-pane-empty")
    assert page.get_by_text("Source (German)").is_visible()
    assert page.get_by_text(RECORD["hypothesis"]).is_visible()
    assert page.locator(".annols-optional").count() == 1 and not page.locator(".annols-optional").is_visible()
    assert not any(page.get_by_text(text).is_visible() for text in REFERENCE)

    two_paragraphs = "The train to Hamburg is cancelled today.\n\nA strike is the reason."
    task = _open(labeling, label_studio, {**RECORD, "reference": two_paragraphs}, "optional given", tmp_path)
    assert task["data"]["reference"] == two_paragraphs
    labeling.screenshot("optional-pane-given")
    assert all(page.get_by_text(text).is_visible() for text in REFERENCE)
    assert page.get_by_text("A strike is the reason.").is_visible()
