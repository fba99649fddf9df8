"""scripts/bench --quick end to end against the session's Label Studio: a smoke check that the
benchmark runs and records every measurement (the figures themselves are in docs/benchmarks.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from annols.labelstudio.client import LabelStudioClient
from tests.conftest import ROOT, LiveServer

PROTOCOLS = ("summary-flaws", "qa-feedback")
TIMINGS = (
    "raw_import_s", "annols_push_s", "annols_repush_s", "raw_export_s", "annols_pull_s",
    "annols_convert_s", "sdk_convert_s",
)  # fmt: skip
MEMORY = ("annols_push_max_rss_mb", "annols_repush_max_rss_mb", "annols_pull_max_rss_mb",
          "annols_convert_max_rss_mb", "sdk_convert_max_rss_mb")  # fmt: skip
RATIOS = ("push_vs_raw", "push_vs_loop", "repush_speedup", "pull_vs_raw", "convert_speedup")
TARGETS = (*RATIOS, "max_rss_mb")


def test_bench_quick_records_every_measurement(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path
) -> None:
    out = tmp_path / "bench.json"
    command = [
        sys.executable, str(ROOT / "scripts" / "bench.py"), "--quick", "--sizes", "200",
        "--url", label_studio.url, "--api-key", label_studio.api_key,
        "--work", str(tmp_path / "work"), "--out", str(out),
    ]  # fmt: skip
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=170)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]

    text = out.read_text("utf-8")
    assert label_studio.api_key not in text + result.stdout + result.stderr
    report = json.loads(text)
    assert report["machine"]["cpus"] >= 1 and report["machine"]["label_studio"].startswith("1.")
    assert report["server"]["version"] != "unknown"
    for protocol in PROTOCOLS:
        data = report["results"][protocol]
        assert data["per_task_loop_tasks"] == 10 and data["per_task_loop_tasks_per_s"]["median"] > 0
        size = data["sizes"]["200"]
        for name in TIMINGS:
            assert size[name]["median"] > 0 and len(size[name]["runs"]) == 1, (protocol, name)
        for name in MEMORY:
            assert 10 < size[name] < 2000, (protocol, name)
        assert sorted(size["ratios"]) == sorted(RATIOS)
        assert all(value > 0 for value in size["ratios"].values())
        assert size["export_bytes"] > 0 and size["input_bytes"] > 0
    assert sorted(report["targets"]) == sorted(TARGETS)
    assert all(isinstance(t["met"], bool) and t["values"] for t in report["targets"].values())
    assert "| summary-flaws | 200 |" in result.stdout and "| qa-feedback | 200 |" in result.stdout

    # The bench leaves no project behind on the server it was given.
    projects = client._request("GET", "api/projects", params={"page_size": 1000}).json()["results"]
    assert not [p["title"] for p in projects if p["title"].startswith("bench ")]


def test_bench_report_quick_records_time_and_memory_per_style(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    command = [sys.executable, str(ROOT / "scripts" / "bench_report.py"), "--sizes", "300", "--out", str(out)]
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    report = json.loads(out.read_text("utf-8"))
    assert report["command"] == f"scripts/bench-report --sizes 300 --out {out}"
    assert [(r["style"], r["tasks"], r["annotations"]) for r in report["results"]] == [
        ("ratings", 300, 900), ("pairwise", 300, 900),
    ]  # fmt: skip
    for row in report["results"]:
        assert row["median_seconds"] > 0 and 10 < row["max_rss_mb"] < 2000 and row["export_mb"] > 0
