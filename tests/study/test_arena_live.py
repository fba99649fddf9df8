"""Arena battles through ``push --with-annotations``, against a real Label Studio, as docs/howto/chat.md's
block shows it (each line of the block run as written, in a folder holding examples/arena.toml and the arena
fixture as battles.jsonl): the fixture (tests/data/arena/mt_bench_sample.jsonl, the public MT-Bench human
judgments layout) goes in as it is,
the people's votes as annotations on the server, the model judge ``gpt4_pair`` kept off the server as a
hidden judge; then pull and report give the Bradley-Terry strengths of choix on the same votes, and the
same strengths and agreement as the offline path (``annols arena``)."""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path
from typing import Any

import choix  # type: ignore[import-untyped, unused-ignore]
import numpy as np
import pandas as pd

from annols import protocols
from annols.labelstudio.client import LabelStudioClient
from annols.report import ReportOptions
from tests.conftest import ROOT, LiveServer
from tests.docs_pages import blocks
from tests.report.build import build_report
from tests.study.test_arena import EXAMPLE, FIXTURE, _fastchat_agreement, _wins_and_ties, rows
from tests.study.test_push_pull import cli

JUDGE = "gpt4_pair"
PAGE = ROOT / "docs" / "howto" / "chat.md"
MARKER = "run by tests/study/test_arena_live.py"


def _tables(source: Path, out: Path) -> dict[str, pd.DataFrame]:
    result = build_report(protocols.load(str(EXAMPLE)), [source], out, ReportOptions(seed=3, bootstrap=50))
    return {t.name: t.frame for s in result.sections for t in s.tables}


def test_arena_file_pushed_with_annotations_reports_as_offline(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path
) -> None:
    data = rows()
    people = [r for r in data if r["judge"] != JUDGE]
    battles = {(r["question_id"], r["turn"], *sorted((r["model_a"], r["model_b"]))) for r in data}
    (block,) = [b for b in blocks(PAGE) if b.marker == MARKER]
    push, pull, report = (shlex.split(line) for line in block.body.splitlines())
    assert push[:2] == ["annols", "push"] and "--with-annotations" in push and pull[1] == "pull"
    (tmp_path / "examples").mkdir()
    shutil.copy(EXAMPLE, tmp_path / "examples" / "arena.toml")
    shutil.copy(FIXTURE, tmp_path / "battles.jsonl")
    title = push[push.index("--project") + 1]
    code, out, err = cli(label_studio, *push[1:], cwd=tmp_path)
    assert code == 0, err
    assert f"judges {JUDGE} kept in" in out and "(not on the server)" in out
    assert f"created {len(battles)}, already present 0, total {len(battles)} ({len(people)} annotations)" in out
    code, out, err = cli(label_studio, *push[1:], cwd=tmp_path)
    assert code == 0, err
    assert f"created 0, already present {len(battles)}, total {len(battles)}" in out  # re-runnable, no duplicates

    project = client.find_project(title)
    assert project is not None
    exported: list[dict[str, Any]] = client.export_tasks(project.id)
    assert len(exported) == len(battles)
    assert sum(len(t["annotations"]) for t in exported) == len(people)
    assert JUDGE not in json.dumps(exported)  # the judge never reaches the server, nor its account
    assert not any(JUDGE in email for email in client.users())
    assert not any(t.get("predictions") for t in exported)

    code, out, err = cli(label_studio, *pull[1:], cwd=tmp_path)
    assert code == 0, err
    pulled = tmp_path / pull[pull.index("-o") + 1]
    assert (pulled / "judges" / f"arena-{JUDGE}.jsonl").is_file()
    code, out, err = cli(label_studio, *report[1:], cwd=tmp_path)
    assert code == 0, err
    assert "as MT-Bench counts it" in (tmp_path / report[report.index("-o") + 1] / "report.md").read_text("utf-8")

    code, out, err = cli(label_studio, "arena", str(EXAMPLE), str(FIXTURE), "-o", str(tmp_path / "offline"))
    assert code == 0, err
    live, offline = _tables(pulled, tmp_path / "r1"), _tables(tmp_path / "offline", tmp_path / "r2")

    systems = sorted({r["model_a"] for r in people} | {r["model_b"] for r in people})
    wins, ties = _wins_and_ties(people, systems)
    theta = choix.ilsr_pairwise_dense(wins + ties / 2, alpha=0.01, max_iter=10_000)
    expected = np.exp(theta) / np.exp(theta).sum()
    got = live["pairwise_bradley_terry"].set_index("system").loc[systems]
    np.testing.assert_allclose(got["strength"].to_numpy(dtype=float), expected, rtol=1e-6)
    same = offline["pairwise_bradley_terry"].set_index("system").loc[systems]
    np.testing.assert_allclose(got["strength"].to_numpy(dtype=float), same["strength"].to_numpy(dtype=float),
                               rtol=1e-9)  # fmt: skip
    assert list(got["judgments"]) == list(same["judgments"]) and list(got["wins"]) == list(same["wins"])

    agreement = live["judges_mt_bench_agreement"].set_index("raters")
    pd.testing.assert_frame_equal(agreement, offline["judges_mt_bench_agreement"].set_index("raters"))
    for raters, judge in (("humans with each other", None), (f"judge:{JUDGE} with humans", JUDGE)):
        assert (agreement.loc[raters, "agree"], agreement.loc[raters, "pairs"]) == \
            _fastchat_agreement(data, judge, ban_ties=False)  # fmt: skip
        assert (agreement.loc[raters, "agree w/o tie"], agreement.loc[raters, "pairs w/o tie"]) == \
            _fastchat_agreement(data, judge, ban_ties=True)  # fmt: skip
