#!/usr/bin/env python3
"""What each annotator's instance costs in isolated mode: start time and memory of one embedded server.

Per run, a fresh data dir: the first start (database migrations, the admin made) until
``/health`` answers, the resident memory (RSS) of the server's whole process tree (the
``label-studio start`` wrapper and the Django server it runs) once idle and after a small
push and a status, then a stop and a restart on the same data dir (what every later
``annols server start`` costs). Medians over ``--runs``; every run's figures in the JSON.

    .venv/bin/python scripts/bench_isolate.py --runs 3 --out docs/benchmarks-isolate.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from annols import protocols
from annols.labelstudio import server
from annols.labelstudio.client import LabelStudioClient
from annols.study import push, status


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
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
