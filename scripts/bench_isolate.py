#!/usr/bin/env python3
"""Isolated mode's costs: what one annotator's instance costs, and how much visiting the instances side by side
(``--jobs``) saves.

By default, per run, a fresh data dir: the first start (database migrations, the admin made)
until ``/health`` answers, the resident memory (RSS) of the server's whole process tree (the
``label-studio start`` wrapper and the Django server it runs) once idle and after a small
push and a status, then a stop and a restart on the same data dir (what every later
``annols server start`` costs). Medians over ``--runs``; every run's figures in the JSON.

    .venv/bin/python scripts/bench_isolate.py --runs 3 --out docs/benchmarks-isolate.json

With ``--jobs 1 2 3``: ``--instances`` embedded servers (one per annotator, as ``annols server
start --annotator`` starts them), a summary-flaws study of ``--tasks`` tasks pushed to every
one (``push --isolate``) and each task annotated on each instance by its annotator; then per
run, for each ``--jobs`` value in turn (the order rotated from run to run), a full ``pull
--isolate`` into a new folder and a ``status --isolate``, each timed (wall clock). Medians
over ``--runs`` and each value's ratio to ``--jobs 1``; every run's figures in the JSON.

    .venv/bin/python scripts/bench_isolate.py --jobs 1 2 3 --instances 3 --tasks 300 --runs 5 \
        --out docs/benchmarks-isolate-jobs.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import bench

from annols import protocols
from annols.labelstudio import server
from annols.labelstudio.client import LabelStudioClient
from annols.study import isolate, push, status


def _tree(pid: int) -> list[int]:
    """``pid`` and every descendant, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        todo.extend(children.get(p, []))
    return found


def _field_kb(path: str, name: str) -> int:
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(name):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_memory_mb(pid: int) -> tuple[float, float]:
    """RSS (shared pages counted in every process, as top shows) and PSS (shared pages split between the
    processes that share them: what the tree adds to the machine) of ``pid``'s process tree."""
    tree = _tree(pid)
    rss = sum(_field_kb(f"/proc/{p}/status", "VmRSS:") for p in tree)
    pss = sum(_field_kb(f"/proc/{p}/smaps_rollup", "Pss:") for p in tree)
    return rss / 1024, pss / 1024


def one_run(work: Path) -> dict[str, float]:
    data_dir = work / "instance"
    began = time.monotonic()
    state, _ = server.start(data_dir, port=server.free_port(), timeout=900)
    first = time.monotonic() - began
    time.sleep(5)  # let the first requests' caches settle before reading memory
    idle, idle_pss = tree_memory_mb(state.pid)
    client = LabelStudioClient(state.url, server.api_token(data_dir))
    definition = protocols.load("qa-feedback")
    inputs = [ROOT / "annols" / "protocols" / "examples" / "input" / "qa-feedback.json"]
    options = push.PushOptions(title="bench isolate", manifest_dir=work / ".annols")
    push.push(client, definition, inputs, options)
    status.status(client, definition, options.title)
    used, used_pss = tree_memory_mb(state.pid)
    server.stop(data_dir)
    began = time.monotonic()
    state, _ = server.start(data_dir, port=server.free_port(), timeout=900)
    restart = time.monotonic() - began
    server.stop(data_dir)
    return {"first_start_s": round(first, 1), "restart_s": round(restart, 1), "idle_rss_mb": round(idle, 1),
            "idle_pss_mb": round(idle_pss, 1), "after_push_status_rss_mb": round(used, 1),
            "after_push_status_pss_mb": round(used_pss, 1)}  # fmt: skip


def side_by_side(work: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The ``--jobs`` benchmark (see the module's docstring) in ``work``; its servers stopped at the end."""
    annotators = [f"bench-{n}@example.org" for n in range(args.instances)]
    bench.log(f"starting {args.instances} instances")
    began = time.monotonic()
    instances: list[isolate.Instance] = []
    try:
        for email in annotators:  # one at a time: those started are stopped below should a later one fail
            ((instance, _),) = isolate.start_local(work / "servers", [email], timeout=900)
            instances.append(instance)
        first_starts = round(time.monotonic() - began, 1)
        definition = protocols.load("summary-flaws")
        inputs = work / "input.jsonl"
        bench.summary_flaws_input(inputs, args.tasks, annotated=False)
        title = "bench isolate jobs"
        manifest_dir = work / ".annols"
        bench.log(f"pushing {args.tasks} tasks to each")
        isolate.push(instances, definition, [inputs], push.PushOptions(title=title, manifest_dir=manifest_dir))
        for instance in instances:
            bench.log(f"annotating on {instance.annotator}'s instance")
            client = instance.connect()
            project = client.find_project(title)
            assert project is not None
            annotator = client.users()[instance.annotator]
            for task_id, _ in client.task_meta(project.id):
                result = [{"id": "m", "from_name": "missing_key_information", "to_name": "summary",
                           "type": "choices", "value": {"choices": ["No"]}, "origin": "manual"}]  # fmt: skip
                client.create_annotation(task_id, result, completed_by=annotator, lead_time=3.0)
        runs: list[dict[str, Any]] = []
        for r in range(args.runs):
            order = args.jobs[r % len(args.jobs) :] + args.jobs[: r % len(args.jobs)]
            run: dict[str, Any] = {"order": order}
            for jobs in order:
                out_dir = work / f"pulled-{jobs}"
                start = time.perf_counter()
                merged = isolate.pull(instances, definition, title, out_dir, manifest_dir, jobs=jobs)
                run[f"pull_jobs{jobs}_s"] = round(time.perf_counter() - start, 3)
                expected = (args.tasks, args.tasks * args.instances)
                got = (merged.convert.counts.tasks, merged.convert.counts.annotations)
                if got != expected:
                    raise SystemExit(f"bench: the merged pull holds {got} (tasks, annotations), not {expected}")
                shutil.rmtree(out_dir)  # the next pull of this --jobs is a full one again
                start = time.perf_counter()
                summed = isolate.status(instances, definition, title, manifest_dir=manifest_dir, jobs=jobs)
                run[f"status_jobs{jobs}_s"] = round(time.perf_counter() - start, 3)
                if summed.annotations != args.tasks * args.instances:
                    raise SystemExit(f"bench: status counts {summed.annotations} annotations")
            bench.log(f"run {r + 1}: {run}")
            runs.append(run)
    finally:
        for instance in instances:
            if instance.data_dir is not None:
                server.stop(instance.data_dir)
    medians = {key: statistics.median(run[key] for run in runs) for key in runs[0] if key != "order"}
    ratios = {f"{what}_jobs1_over_jobs{jobs}": round(medians[f"{what}_jobs1_s"] / medians[f"{what}_jobs{jobs}_s"], 2)
              for what in ("pull", "status") for jobs in args.jobs if jobs != 1 and 1 in args.jobs}  # fmt: skip
    return {"instances": args.instances, "tasks_each": args.tasks, "first_starts_s": first_starts, "runs": runs,
            "median": medians, "ratio": ratios}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--jobs", type=int, nargs="+", help="time pull and status --isolate with these --jobs")
    parser.add_argument("--instances", type=int, default=3, help="with --jobs: embedded instances started")
    parser.add_argument("--tasks", type=int, default=300, help="with --jobs: tasks on each instance")
    args = parser.parse_args()
    if args.jobs:
        with tempfile.TemporaryDirectory(prefix="annols-bench-isolate-jobs-") as tmp:
            result = side_by_side(Path(tmp), args)
        result |= {"cpus": os.cpu_count(), "load": os.getloadavg()}
    else:
        runs = []
        for n in range(args.runs):
            with tempfile.TemporaryDirectory(prefix="annols-bench-isolate-") as tmp:
                runs.append(one_run(Path(tmp)))
            print(f"run {n + 1}: {runs[-1]}", file=sys.stderr)
        medians = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
        result = {"runs": runs, "median": medians, "cpus": os.cpu_count(), "load": os.getloadavg()}
    text = json.dumps(result, indent=2) + "\n"
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    print(text, end="")


if __name__ == "__main__":
    main()
