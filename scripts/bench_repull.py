#!/usr/bin/env python3
"""A study in progress, at scale: the re-pull after a share of the tasks changed, against the
raw full export, side by side; and ``annols status``. On the embedded server (SQLite) or on
the team stack (PostgreSQL with the app settings of docker-compose.yml, as tests/labelstudio/test_team.py
starts it).

One round per size: push N summary-flaws tasks (``--protocol qa-feedback``: QA-Feedback dev
records, varied) each with one annotation (``annols push
--with-annotations``), a first ``annols pull`` (full) right after it, then per run: annotate
``--changed`` of the tasks (a new annotation each, by another user), and right after that
``annols pull`` into the same folder (incremental) and the raw full export
(``projects.exports.download_sync``, into a file) side by side, then ``annols status``.
``--settle S`` waits S seconds after the push and after each run's annotations instead. Every
annols command runs as a process; its wall time and peak RSS are recorded.

    scripts/bench --repull --sizes 100000                   the embedded server
    scripts/bench --repull --stack postgres --sizes 100000  the team stack
    scripts/bench --repull --quick                          300 tasks, a smoke check
    scripts/bench --repull --protocol qa-feedback --sizes 20000 --runs 3

``--before CHECKOUT`` (another annols checkout with its own ``.venv``, e.g. main's): its first pull and
its re-pulls too, into a folder of their own beside this checkout's, against the same server and the same
changes, the side going first alternating; after each run every file of the two pull folders is compared
(``identical`` in the JSON: the files that differ, none expected).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import random
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import bench

from annols.labelstudio import server
from annols.labelstudio.client import LabelStudioClient

COMPOSE = ROOT / "docker-compose.yml"
POSTGRES = ROOT / "scripts" / "postgres"
ANNOTATOR = "bench-repull@example.org"
# The new annotation each changed task gets, per protocol (run r).
ANSWER = {
    "summary-flaws": lambda r: [{"id": "m", "from_name": "missing_key_information", "to_name": "summary",
                                 "type": "choices", "value": {"choices": ["Yes" if r % 2 else "No"]},
                                 "origin": "manual"}],
    "qa-feedback": lambda r: [{"id": "c", "from_name": "corrected_prediction", "to_name": "prediction",
                               "type": "textarea", "value": {"text": [f"A corrected answer (run {r + 1})."]},
                               "origin": "manual"}],
}  # fmt: skip


# ---------------------------------------------------------------------------- the servers


@contextlib.contextmanager
def sqlite_stack(work: Path) -> Iterator[tuple[str, str, str]]:
    data_dir = work / "label-studio"
    state, _ = server.start(data_dir, port=server.free_port(), timeout=600)
    try:
        yield state.url, server.api_token(data_dir), "embedded: `label-studio start` (Django's server), SQLite"
    finally:
        server.stop(data_dir)


def compose_app_env(values: dict[str, str]) -> dict[str, str]:
    """The app service's environment in docker-compose.yml, its ${...} filled from ``values``."""
    import yaml

    app = yaml.safe_load(COMPOSE.read_text("utf-8"))["services"]["app"]["environment"]

    def fill(text: str) -> str:
        def one(m: re.Match[str]) -> str:
            name, op, rest = m.group(1), m.group(2), m.group(3) or ""
            if name in values:
                return values[name]
            if op == ":-":
                return rest
            raise SystemExit(f"bench: {name} is not set for docker-compose.yml")

        return re.sub(r"\$\{([A-Z_]+)(?:(:-|:\?)([^}]*))?\}", one, text)

    return {k: fill(str(v)) for k, v in app.items()}


@contextlib.contextmanager
def postgres_stack(work: Path) -> Iterator[tuple[str, str, str]]:
    port = server.free_port()
    url = f"http://127.0.0.1:{port}"
    values = {
        "POSTGRES_PASSWORD": secrets.token_urlsafe(24), "LABEL_STUDIO_HOST": url,
        "LABEL_STUDIO_ADMIN_EMAIL": "admin@bench.example.org", "LABEL_STUDIO_ADMIN_PASSWORD": secrets.token_urlsafe(16),
        "LABEL_STUDIO_API_KEY": secrets.token_hex(20),
    }  # fmt: skip
    app_env = compose_app_env(values)
    db_env = {"POSTGRES_PASSWORD": values["POSTGRES_PASSWORD"], "POSTGRES_USER": app_env["POSTGRE_USER"],
              "POSTGRES_DB": app_env["POSTGRE_NAME"]}  # fmt: skip
    subprocess.run([str(POSTGRES), "install"], check=True)
    started = subprocess.run([str(POSTGRES), "start"], env={**os.environ, **db_env}, check=True,
                             capture_output=True, text=True)  # fmt: skip
    pg = dict(line.split("=", 1) for line in started.stdout.split())
    data_dir = work / "label-studio-pg"
    data_dir.mkdir(parents=True, exist_ok=True)
    ours = {k: v for k, v in os.environ.items()
            if not k.startswith(("LABEL_STUDIO_", "HEARTEX_", "POSTGRE", "DJANGO_DB"))}  # fmt: skip
    env = {**ours, **app_env, "POSTGRE_HOST": "127.0.0.1", "POSTGRE_PORT": pg["PGPORT"],
           "SENTRY_DSN": "", "FRONTEND_SENTRY_DSN": "", "COLLECT_ANALYTICS": "false"}  # fmt: skip
    command = [sys.executable, "-m", "label_studio.server", "start", "--no-browser", "-p", str(port),
               "--internal-host", "127.0.0.1", "--data-dir", str(data_dir)]  # fmt: skip
    log = open(work / "label-studio-pg.log", "ab")  # noqa: SIM115 - closed below
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                               cwd=data_dir, env=env, start_new_session=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 600
        while not server.healthy(url):
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"bench: Label Studio on PostgreSQL did not start; see {work / 'label-studio-pg.log'}")
            time.sleep(1)
        yield (
            url,
            values["LABEL_STUDIO_API_KEY"],
            (
                "team stack: `label-studio start` (Django's server) with docker-compose.yml's app settings, "
                "Debian's PostgreSQL (scripts/postgres)"
            ),
        )
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=60)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        log.close()
        subprocess.run([str(POSTGRES), "stop", pg["PGDATA"]], check=False)


# ---------------------------------------------------------------------------- the round


def annols(env: dict[str, str], cwd: Path, *args: str, python: str = sys.executable) -> bench.Run:
    return bench.run([python, "-m", "annols.cli", *args], cwd, env)


# What only one side's pull writes beside the files a pull is compared by (kept rows, a record).
NOT_COMPARED = {"pull-state.json", ".annols-rows.json"}


def differing(a: Path, b: Path) -> list[str]:
    """The files of pull folders ``a`` and ``b`` that differ (or are in only one), by relative path."""

    def listing(root: Path) -> set[str]:
        return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and p.name not in NOT_COMPARED}

    names = listing(a) | listing(b)
    return sorted(n for n in names if not ((a / n).is_file() and (b / n).is_file()
                                           and (a / n).read_bytes() == (b / n).read_bytes()))  # fmt: skip


def raw_export(url: str, api_key: str, project_id: int, path: Path) -> float:
    from label_studio_sdk import LabelStudio

    sdk = LabelStudio(base_url=url, api_key=api_key, timeout=3600)
    start = time.perf_counter()
    with open(path, "wb") as f:
        for chunk in sdk.projects.exports.download_sync(id=project_id, export_type="JSON", download_all_tasks=True):
            f.write(chunk)
    return time.perf_counter() - start


def round_of(
    n: int, args: argparse.Namespace, url: str, api_key: str, work: Path, out: dict[str, Any], save: Any
) -> None:
    """One round into ``out``, saved (``save()``) after every measurement: a run cut short keeps its figures."""
    env = {**os.environ, "LABEL_STUDIO_URL": url, "LABEL_STUDIO_API_KEY": api_key, "PYTHONPATH": str(ROOT)}
    folder = work / f"n{n}"
    folder.mkdir(parents=True, exist_ok=True)
    protocol = args.protocol
    if protocol == "qa-feedback":  # the dev records carry their feedback: each task gets one annotation
        inputs = folder / "input.json"
        bench.qa_feedback_input(inputs, n)
    else:
        inputs = folder / "input.jsonl"
        bench.summary_flaws_input(inputs, n, annotated=True)
    title = f"bench repull {n} {secrets.token_hex(3)}"
    out.update(n=n, protocol=protocol, changed_share=args.changed, settle_s=args.settle)
    bench.log(f"[{n}] push")
    pushed = annols(env, folder, "push", protocol, str(inputs), "--project", title, "--with-annotations")
    pushed_at = time.monotonic()
    out["push_s"], out["push_rss_mb"] = pushed.seconds, pushed.max_rss_mb
    save()
    client = LabelStudioClient(url, api_key, timeout=3600)
    project = client.find_project(title)
    assert project is not None
    out["raw_export_s"] = []
    time.sleep(args.settle)
    bench.log(f"[{n}] first pull (full)")
    before = args.before
    if before is not None:
        env_before = {**env, "PYTHONPATH": str(before)}
        python_before = str(before / ".venv" / "bin" / "python")
        out.update(before=str(before), pull_before_s=None, repull_before_s=[], identical=[])
    first = ["after", "before"] if before is not None else ["after"]
    for side in first:
        if side == "after":
            pulled = annols(env, folder, "pull", protocol, "--project", title, "-o", "pulled")
            out["pull_s"], out["pull_rss_mb"] = pulled.seconds, pulled.max_rss_mb
        else:
            bench.log(f"[{n}] first pull (full), {before}")
            pulled = annols(env_before, folder, "pull", protocol, "--project", title, "-o", "pulled-before",
                            python=python_before)  # fmt: skip
            out["pull_before_s"] = pulled.seconds
        save()
    users = client.users()
    annotator = users.get(ANNOTATOR) or client.create_user(ANNOTATOR)
    ids = sorted(t for t, _ in client.task_meta(project.id))
    rng = random.Random(n)
    out.update(repull_s=[], repull_rss_mb=[], status_s=[], status_rss_mb=[], changed_tasks=[], annotate_s=[],
               repull_since_push_s=[])  # fmt: skip
    for r in range(args.runs):
        changed = rng.sample(ids, max(1, round(len(ids) * args.changed)))
        bench.log(f"[{n}] run {r + 1}: annotating {len(changed)} tasks")
        start = time.perf_counter()
        for task_id in changed:
            result = ANSWER[protocol](r)
            client.create_annotation(task_id, result, completed_by=annotator)
        out["annotate_s"].append(time.perf_counter() - start)
        time.sleep(args.settle)
        order = ["repull", "raw"] if r % 2 == 0 else ["raw", "repull"]
        if before is not None:
            order = ["repull", "before", "raw"] if r % 2 == 0 else ["before", "repull", "raw"]
        for side in order:
            if side == "before":
                bench.log(f"[{n}] run {r + 1}: re-pull, {before}")
                again = annols(env_before, folder, "pull", protocol, "--project", title, "-o", "pulled-before",
                               python=python_before)  # fmt: skip
                out["repull_before_s"].append(again.seconds)
                save()
                continue
            if side == "repull":
                bench.log(f"[{n}] run {r + 1}: re-pull")
                out["repull_since_push_s"].append(round(time.monotonic() - pushed_at, 1))
                again = annols(env, folder, "pull", protocol, "--project", title, "-o", "pulled")
                found = re.search(r"Incremental: (\d+) changed", again.output)
                if found is None:
                    raise SystemExit(f"bench: the re-pull was not incremental:\n{again.output[-2000:]}")
                out["changed_tasks"].append(int(found.group(1)))
                out["repull_s"].append(again.seconds)
                out["repull_rss_mb"].append(again.max_rss_mb)
                save()
            else:
                bench.log(f"[{n}] run {r + 1}: raw export")
                out["raw_export_s"].append(raw_export(url, api_key, project.id, folder / "raw.json"))
                save()
        if before is not None:
            out["identical"].append(differing(folder / "pulled", folder / "pulled-before"))
        bench.log(f"[{n}] run {r + 1}: status")
        status = annols(env, folder, "status", protocol, "--project", title, "--json")
        out["status_s"].append(status.seconds)
        out["status_rss_mb"].append(status.max_rss_mb)
        out["status_exported"] = json.loads(status.output[status.output.index("{") :])["exported"]
        save()
    med = bench.median
    out["median"] = {k: med(out[k]) for k in ("raw_export_s", "repull_s", "status_s")}
    out["repull_speedup"] = out["median"]["raw_export_s"] / out["median"]["repull_s"]
    if before is not None:
        out["median"]["repull_before_s"] = med(out["repull_before_s"])
        out["repull_before_speedup"] = out["median"]["raw_export_s"] / out["median"]["repull_before_s"]
    out["max_rss_mb"] = max([out["push_rss_mb"], out["pull_rss_mb"], *out["repull_rss_mb"], *out["status_rss_mb"]])
    save()
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True)


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="scripts/bench --repull", description=__doc__.split("\n\n")[0])
    parser.add_argument("--stack", choices=["sqlite", "postgres"], default="sqlite", help="the server [sqlite]")
    parser.add_argument("--protocol", choices=sorted(ANSWER), default="summary-flaws",
                        help="the protocol pushed [summary-flaws]")  # fmt: skip
    parser.add_argument(
        "--before", type=Path, help="another annols checkout (with its .venv) pulled side by side, into pulled-before"
    )
    parser.add_argument("--sizes", default="100000", help="comma-separated task counts [100000; quick: 300]")
    parser.add_argument("--runs", type=int, default=1, help="re-pull runs per size (median reported) [1]")
    parser.add_argument("--changed", type=float, default=0.01, help="share of the tasks annotated before each re-pull")
    parser.add_argument("--settle", type=float, default=0.0,
                        help="seconds waited after the push and after each run's annotations [0: the first pull right "
                        "after the push, each re-pull right after the annotations]")  # fmt: skip
    parser.add_argument("--quick", action="store_true", help="300 tasks, one run")
    parser.add_argument("--work", type=Path, help="work folder [a temporary one]")
    parser.add_argument("--keep", action="store_true", help="keep the work folder's inputs and outputs")
    parser.add_argument("--out", type=Path, default=Path("bench-results/bench-repull.json"), help="results JSON")
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes, args.runs = "300", 1
    return args


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="annols-bench-repull-"))
    work.mkdir(parents=True, exist_ok=True)
    started = datetime.datetime.now(datetime.UTC)
    report: dict[str, Any] = {"machine": bench.machine(), "load_before": bench.load(), "stack": args.stack,
                              "command": "scripts/bench --repull " + " ".join(argv or sys.argv[1:]),
                              "started": started.isoformat(timespec="seconds"), "rounds": []}  # fmt: skip
    stack = postgres_stack if args.stack == "postgres" else sqlite_stack
    with stack(work) as (url, api_key, what):
        report["server"] = what
        args.out.parent.mkdir(parents=True, exist_ok=True)

        def save() -> None:
            report["load_now"] = bench.load()
            args.out.write_text(json.dumps(report, indent=2) + "\n")

        for n in (int(s) for s in args.sizes.split(",")):
            report["rounds"].append({})
            round_of(n, args, url, api_key, work, report["rounds"][-1], save)
    report["load_after"] = bench.load()
    report["minutes"] = round((datetime.datetime.now(datetime.UTC) - started).total_seconds() / 60, 1)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    for r in report["rounds"]:
        m = r["median"]
        print(f"{args.stack} N={r['n']}: raw export {m['raw_export_s']:.2f} s, re-pull {m['repull_s']:.2f} s "
              f"({r['repull_speedup']:.1f}x), status {m['status_s']:.2f} s, push {r['push_s']:.1f} s, "
              f"first pull {r['pull_s']:.1f} s, peak RSS {r['max_rss_mb']:.0f} MB")  # fmt: skip
        if "repull_before_speedup" in r:
            print(f"  before ({r['before']}): re-pull {m['repull_before_s']:.2f} s "
                  f"({r['repull_before_speedup']:.1f}x), "
                  f"first pull {r['pull_before_s']:.1f} s; files that differ: {r['identical']}")  # fmt: skip
    if not args.work and not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
