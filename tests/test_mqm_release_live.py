"""A public MQM release (a subset of the WMT TED talks English-German MQM annotations, tests/data/mqm_ted_ende/)
imported with `annols push --with-annotations` into the real server, pulled and reported: each system's mean error
score in the report must be the paper's rule computed here with pandas on the release's own rows (per segment,
the mean over its raters of the sum of its errors' weights; then the mean over segments)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd  # type: ignore[import-untyped, unused-ignore]
import pytest

from tests.conftest import ROOT, LiveServer
from tests.formats.test_mqm_tsv import SUBSET, paper_scores, release, release_toml
from tests.study.test_push_pull import cli

VENDOR = ROOT / "examples" / "mqm-vendor.tsv"
DECIMALS = 5e-5  # the report's tables hold 4 decimals


def imported(server: LiveServer, tmp: Path, inputs: Path, title: str,
             definition: Path | None = None) -> tuple[Path, Path, str]:  # fmt: skip
    """Pushed with --with-annotations, pulled and reported with ``definition``, by default examples/mqm.toml
    without its reference pane (the release has none)."""
    if definition is None:
        definition = tmp / "mqm.toml"
        definition.write_text(release_toml(), encoding="utf-8")
    code, out, err = cli(server, "push", str(definition), str(inputs), "--project", title, "--with-annotations",
                         cwd=tmp)  # fmt: skip
    assert code == 0, err
    pushed = out
    folder = tmp / "pulled"
    code, out, err = cli(server, "pull", str(definition), "--project", title, "-o", str(folder), cwd=tmp)
    assert code == 0, err
    report = tmp / "report"
    code, _, err = cli(server, "report", str(definition), str(folder), "-o", str(report), "--bootstrap", "0")
    assert code == 0, err
    return folder, report, pushed


def test_the_release_subset_through_label_studio_scores_by_the_papers_rule(
        label_studio: LiveServer, tmp_path: Path) -> None:  # fmt: skip
    rows = release(SUBSET)
    folder, report, pushed = imported(label_studio, tmp_path, SUBSET, "mqm ted subset")
    outputs = rows.groupby(["system", "doc", "seg_id"]).ngroups
    judgments = rows.groupby(["system", "doc", "seg_id", "rater"]).ngroups
    created = f"created {outputs}, already present 0, total {outputs}"
    assert any(line.startswith(created) for line in pushed.splitlines())
    # The one omission of the subset marks no words of the target: placed on the whole target, and push says so.
    assert "1 input warning(s)" in pushed
    lines = [json.loads(line) for line in (folder / "mqm.jsonl").read_text("utf-8").splitlines()]
    assert len(lines) == judgments
    spans = [j for line in lines for j in line["judgments"] if j["kind"] == "span"]
    assert len(spans) == int((rows["severity"] != "No-error").sum())
    table = pd.read_csv(report / "tables" / "scores_and_spans.csv").set_index("system")
    expected = paper_scores(rows)
    assert sorted(table.index) == sorted(expected.index)
    for system, score in expected.items():
        assert table.loc[system, "mean error score"] == pytest.approx(score, abs=DECIMALS), system


def test_the_howto_example_scores_minor_1_plus_major_5_on_the_same_words_as_6(
        label_studio: LiveServer, tmp_path: Path) -> None:  # fmt: skip
    # docs/howto/import-judgments.md's commands, examples/mqm.toml as it is (its reference pane optional).
    _, report, _ = imported(label_studio, tmp_path, VENDOR, "mqm vendor example", ROOT / "examples" / "mqm.toml")
    table = pd.read_csv(report / "tables" / "scores_and_spans.csv").set_index("system")
    # sys-b: segment 1 rated 5 (rater1) and 1 + 5 = 6 (rater2), mean 5.5; segment 2: 0; segment 3: 5.
    assert table.loc["sys-b", "mean error score"] == pytest.approx(3.5, abs=DECIMALS)
    assert table.loc["sys-a", "mean error score"] == pytest.approx(0.1 / 3, abs=DECIMALS)
    assert table.loc["sys-b", "mean error score"] == pytest.approx(
        paper_scores(release(VENDOR)).loc["sys-b"], abs=DECIMALS)
