#!/usr/bin/env python3
"""What a coordinator waits for a push while annotators save (a benchmark, not a test).

On the embedded server (SQLite), every write takes the database's one write lock, and
Label Studio's ``DatabaseIsLockedRetryMiddleware`` replays a request that hit "database is
locked" (up to 15 times, from 1 s, growing by half each time). This measures ``annols push``
of N QA-Feedback tasks (default 5,000) on an idle server and while K processes (default 3)
save annotations as annotators do (one save, then an edit of it, every ``--pace`` seconds on
average each), the two alternating, each the median of ``--runs``. It also counts what each
push said (retries, heartbeats, duplicate projects removed) and checks that every push made
exactly one project holding every task once.

    scripts/bench --busy                       5,000 tasks, 3 annotators, 3 runs each
    scripts/bench --busy --tasks 1000 --runs 1 a quick look

Results: a JSON file (--out, default bench-results/busy.json) and a table on stdout.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench import load, machine, qa_feedback_input

from annols.definition import blinding
from annols.labelstudio import server
from annols.labelstudio.client import LabelStudioClient

# One annotator: save an annotation on a random task, edit it, wait; until the stop file appears.
ANNOTATOR = """
import json, os, random, sys, time
import httpx
url, key, stop, tasks, me, pace = sys.argv[1:7]
tasks, pace, saved = json.loads(tasks), float(pace), 0
value = {"start": 0, "end": 3, "text": "abc", "labels": ["Irrelevant"]}
with httpx.Client(base_url=url, headers={"Authorization": f"Token {key}"}, timeout=3600) as web:
    while not os.path.exists(stop):
        result = [{"id": f"r{saved}", "from_name": "errors", "to_name": "prediction", "type": "labels", "value": value}]
        r = web.post(f"/api/tasks/{random.choice(tasks)}/annotations/",
                     json={"result": result, "completed_by": int(me), "lead_time": 30})
        if r.status_code == 201:
            saved += 1
            web.patch(f"/api/annotations/{r.json()['id']}/", json={"lead_time": 31})
        time.sleep(random.uniform(0, 2 * pace))
print(saved)
"""


def push(url: str, key: str, inputs: Path, title: str, cwd: Path) -> dict[str, Any]:
    cwd.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "LABEL_STUDIO_URL": url, "LABEL_STUDIO_API_KEY": key}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "annols.cli", "push", "qa-feedback", str(inputs), "--project", title],
                          cwd=cwd, env=env, capture_output=True, text=True, check=False)  # fmt: skip
    seconds = time.perf_counter() - start
    lines = done.stderr.splitlines()
    return {
        "seconds": round(seconds, 2),
        "exit": done.returncode,
        "last_line": (done.stdout.splitlines() or [""])[-1],
        "retries": sum("retrying in" in line or "listing the tasks that arrived" in line for line in lines),
        "heartbeats": sum("is still importing" in line for line in lines),
        "duplicate_projects_removed": sum("empty duplicate project" in line for line in lines),
        "replayed_tasks_removed": sum(
            int(line.split()[1]) for line in lines if line.startswith("Removed ") and "made twice" in line
        ),
        "error": next((line for line in lines if line.startswith("Error:")), ""),
    }


def check(client: LabelStudioClient, title: str, n: int) -> str:
    """'ok' when exactly one project has the title and it holds every task once."""
    projects = client._titled(title)
    if len(projects) != 1:
        return f"{len(projects)} projects"
    keys = [meta.get(blinding.META_KEY) for _, meta in client.task_meta(int(projects[0]["id"]))]
    return "ok" if len(keys) == n == len(set(keys)) else f"{len(keys)} tasks, {len(set(keys))} keys"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=5000, help="tasks per push [5000]")
    parser.add_argument("--annotators", type=int, default=3, help="processes saving annotations [3]")
    parser.add_argument("--pace", type=float, default=2.0, help="mean seconds between one annotator's saves [2]")
    parser.add_argument("--runs", type=int, default=3, help="runs per condition, median reported [3]")
    parser.add_argument("--out", type=Path, default=Path("bench-results/busy.json"), help="results JSON file")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="annols-bench-busy-"))
    started = datetime.datetime.now(datetime.UTC)
    report: dict[str, Any] = {
        "date": started.isoformat(timespec="seconds"),
        "command": "scripts/bench --busy " + " ".join(sys.argv[1:]),
        "machine": machine(),
        "load_average_start": load(),
        "args": {k: str(v) for k, v in vars(args).items()},
    }
    data_dir = work / "label-studio"
    try:
        print(f"starting Label Studio in {data_dir}", file=sys.stderr)
        state, _ = server.start(data_dir, port=server.free_port(), timeout=600)
        url, key = state.url, server.api_token(data_dir)
        client = LabelStudioClient(url, key)
        inputs = work / "qa.json"
        qa_feedback_input(inputs, args.tasks)
        # The project annotators work in: 500 tasks.
        first = push(url, key, ROOT / "tests" / "data" / "qa_feedback" / "dev" / "dev_feedback.json",
                     "busy annotated", work / "annotated")  # fmt: skip
        assert first["exit"] == 0, first
        annotated = client.find_project("busy annotated")
        assert annotated is not None
        tasks = [task_id for task_id, _ in client.task_meta(annotated.id)]
        me = client.whoami()["id"]

        runs: dict[str, list[dict[str, Any]]] = {"idle": [], "busy": []}
        saved: list[int] = []
        for r in range(args.runs):
            for condition in ("idle", "busy") if r % 2 == 0 else ("busy", "idle"):
                stop = work / f"stop-{r}-{condition}"
                annotators = []
                if condition == "busy":
                    annotators = [
                        subprocess.Popen([sys.executable, "-c", ANNOTATOR, url, key, str(stop), json.dumps(tasks),
                                          str(me), str(args.pace)], stdout=subprocess.PIPE, text=True)
                        for _ in range(args.annotators)
                    ]  # fmt: skip
                    time.sleep(2 * args.pace)  # let them get going
                title = f"busy {condition} {r} {random.randrange(10**6)}"
                try:
                    outcome = push(url, key, inputs, title, work / title.replace(" ", "-"))
                finally:
                    stop.touch()
                    saved += [int(a.communicate(timeout=3600)[0] or 0) for a in annotators]
                outcome["check"] = check(client, title, args.tasks)
                runs[condition].append(outcome)
                print(f"{condition} run {r}: {outcome}", file=sys.stderr)
                for project in client._titled(title):
                    client.delete_project(int(project["id"]))
        report["runs"] = runs
        report["annotations_saved_per_busy_run"] = saved
        report["median_seconds"] = {c: round(statistics.median(o["seconds"] for o in v), 2) for c, v in runs.items()}
        report["load_average_end"] = load()
    finally:
        server.stop(data_dir)
        shutil.rmtree(work, ignore_errors=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"push of {args.tasks} tasks, median of {args.runs}: idle {report['median_seconds']['idle']} s, "
          f"{args.annotators} annotators saving {report['median_seconds']['busy']} s")  # fmt: skip
    print(f"results: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
