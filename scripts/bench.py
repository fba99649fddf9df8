#!/usr/bin/env python3
"""annols against the raw Label Studio API, at scale (a benchmark, not a test).

Measured side by side in one run, each the median of several runs:

- push: one raw SDK bulk import (``projects.import_tasks``) of the tasks annols would send,
  prebuilt by ``annols tasks``, vs ``annols push`` from the input file; a re-push of the same
  input; the per-task loop (``tasks.create``, one request per task) as the naive baseline;
- pull: the raw JSON export (``projects.exports.download_sync``) to a file vs ``annols pull``
  (export + conversion + results.csv) of a project of annotated tasks;
- convert: ``annols convert`` vs label-studio-sdk's own converter to CSV on the same export;
- peak memory (max RSS) of every annols command, each run as a subprocess.

Inputs are generated into a work folder: summary-flaws JSONL (~1.5 KB a record) and
qa-feedback JSON arrays (the 500 dev records of tests/data/qa_feedback/dev, varied so that
every record has its own key). Without --url/--api-key a Label Studio is started for the
run on a free loopback port (SQLite, in the work folder) and stopped at the end.

    scripts/bench                        the full run (20,000 and 100,000 tasks; long)
    scripts/bench --quick                a smoke check with small N
    scripts/bench --sizes 20000 --runs 3 --protocols summary-flaws

Results: a JSON file (--out, default bench-results/bench.json) and a table on stdout.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from annols import protocols
from annols.errors import AnnolsError
from annols.jsonstream import iter_json_array
from annols.labelstudio import server
from annols.labelstudio.client import NO_RETRY, LabelStudioClient
from annols.protocols import config

QA_DEV = ROOT / "tests" / "data" / "qa_feedback" / "dev" / "dev_feedback.json"  # Apache-2.0: see its README
SF_EXAMPLES = ROOT / "annols" / "protocols" / "examples" / "input" / "summary-flaws-critic.jsonl"
PROTOCOLS = ("summary-flaws", "qa-feedback")
PRIVATE_ARGS = {"runs_for", "api_key"}
RAW_REQUEST_BYTES = 200_000_000  # the server refuses requests over 250 MiB: raw imports stay under this
TARGETS = {
    "push_vs_raw": ("annols push throughput / raw bulk import throughput", ">=", 0.9),
    "push_vs_loop": ("annols push throughput / per-task loop throughput", ">=", 100.0),
    "repush_speedup": ("first push time / re-push time", ">=", 5.0),
    "pull_vs_raw": ("annols pull time / raw export time", "<=", 1.25),
    "convert_speedup": ("SDK converter time / annols convert time", ">=", 3.0),
    "max_rss_mb": ("peak RSS of annols push, pull, convert at the largest N (MB)", "<", 300.0),
}


# ---------------------------------------------------------------------------- measuring


@dataclass
class Run:
    seconds: float
    max_rss_mb: float
    output: str
    cpu_seconds: float = 0.0  # user + system: steadier than wall time on a shared machine


# The command runs as the child of this small launcher, not of the bench: Linux carries a
# parent's peak RSS over into a forked child's ru_maxrss, and the bench itself is large.
LAUNCHER = """
import os, sys, time, subprocess
start = time.perf_counter()
child = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(child.pid, 0)
seconds = time.perf_counter() - start
with open(sys.argv[1], "w") as f:
    f.write(f"{seconds} {usage.ru_maxrss} {usage.ru_utime + usage.ru_stime}")
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> Run:
    """Run a command to completion: its wall time and its own peak RSS (wait4 in a small launcher)."""
    log_file, measured = cwd / ".bench-command.log", cwd / ".bench-command.rusage"
    with open(log_file, "w+b") as out:
        code = subprocess.call(
            [sys.executable, "-c", LAUNCHER, str(measured), *command],
            cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    if code != 0:
        raise SystemExit(f"bench: {' '.join(command[:4])} ... failed ({code}):\n{text[-3000:]}")
    seconds, maxrss_kib, cpu = measured.read_text().split()
    return Run(float(seconds), int(maxrss_kib) / 1024, text, float(cpu))


@contextlib.contextmanager
def timed() -> Iterator[list[float]]:
    box: list[float] = []
    start = time.perf_counter()
    yield box
    box.append(time.perf_counter() - start)


def median(values: list[float]) -> float:
    return float(statistics.median(values)) if values else float("nan")


# ---------------------------------------------------------------------------- inputs


def summary_flaws_input(path: Path, n: int, annotated: bool) -> None:
    """n records of ~1.5 KB (the example TL;DR posts, each post varied so every key differs)."""
    base = [json.loads(line) for line in SF_EXAMPLES.read_text("utf-8").splitlines() if line.strip()]
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            record = {"id": f"bench-{i}", **base[i % len(base)]}
            record["post"] = f"{record['post']} (post {i})"
            if annotated:
                record["annotator"] = "ABC"[i % 3]
            else:
                del record["critique"]
            f.write(json.dumps(record, ensure_ascii=False) + "\n")


def qa_feedback_input(path: Path, n: int) -> None:
    """A JSON array of n QA-Feedback records: the 500 dev records, questions varied past the first 500."""
    with open(QA_DEV, encoding="utf-8") as f:
        base = json.load(f)
    with open(path, "w", encoding="utf-8") as f:
        f.write("[")
        for i in range(n):
            record = dict(base[i % len(base)])
            if i >= len(base):
                record["question"] = f"{record['question']} (variant {i // len(base)})"
            f.write(("\n" if i == 0 else ",\n") + json.dumps(record))
        f.write("\n]\n")


# ---------------------------------------------------------------------------- the bench


class Bench:
    def __init__(self, args: argparse.Namespace, url: str, api_key: str, work: Path) -> None:
        from label_studio_sdk import LabelStudio  # the raw API, as a script would use it

        self.args = args
        self.work = work
        self.client = LabelStudioClient(url, api_key)
        self.sdk = LabelStudio(base_url=url, api_key=api_key, timeout=3600)
        self.env = {**os.environ, "LABEL_STUDIO_URL": url, "LABEL_STUDIO_API_KEY": api_key}
        self.results: dict[str, Any] = {}
        self.titles: list[str] = []
        self.stamp = f"{os.getpid() % 10000}"

    def annols(self, *args: str, cwd: Path | None = None) -> Run:
        return run([sys.executable, "-m", "annols.cli", *args], cwd or self.work, self.env)

    def title(self, what: str) -> str:
        title = f"bench {self.stamp} {what}"[:50]
        self.titles.append(title)
        return title

    def drop(self, title: str) -> None:
        """Delete a project of this run (keeps the database small); a slow delete is not fatal."""
        try:
            project = self.client.find_project(title)
            if project is not None:
                self.client.delete_project(project.id)
        except AnnolsError as e:
            log(f"  (could not delete project {title!r}: {e})")

    # --- inputs

    def inputs(self, protocol: str, n: int) -> tuple[Path, Path, Path]:
        """(input, annotated input, prebuilt tasks) for n tasks."""
        folder = self.work / f"{protocol}-{n}"
        folder.mkdir(exist_ok=True)
        if protocol == "summary-flaws":
            plain, annotated = folder / "input.jsonl", folder / "annotated.jsonl"
            summary_flaws_input(plain, n, annotated=False)
            summary_flaws_input(annotated, n, annotated=True)
        else:
            plain = annotated = folder / "input.json"
            qa_feedback_input(plain, n)
        tasks = folder / "tasks.json"
        self.annols("tasks", protocol, str(plain), "-o", str(tasks), "--manifest-dir", str(folder / "manifests"))
        return plain, annotated, tasks

    # --- push

    def raw_import(self, protocol: str, tasks_file: Path, title: str) -> float:
        """Seconds spent in import_tasks calls (as few as the server's request limit allows)."""
        definition = protocols.load(protocol)
        project, _ = self.client.create_project(title, config.label_config(definition))
        seconds = 0.0
        for chunk in chunks(tasks_file):
            with timed() as t:
                self.sdk.projects.import_tasks(id=project.id, request=cast(Any, chunk), request_options=NO_RETRY)
            seconds += t[0]
            del chunk
        return seconds

    def per_task_loop(self, protocol: str, tasks_file: Path, count: int) -> float:
        """Tasks per second creating tasks one request at a time."""
        definition = protocols.load(protocol)
        title = self.title(f"loop {protocol}")
        project, _ = self.client.create_project(title, config.label_config(definition))
        tasks = []
        with open(tasks_file, encoding="utf-8") as f:
            for task in iter_json_array(f):
                tasks.append(task)
                if len(tasks) >= count:
                    break
        with timed() as t:
            for task in tasks:
                self.sdk.tasks.create(project=project.id, data=task["data"], meta=task["meta"])
        self.drop(title)
        return len(tasks) / t[0]

    def push(self, protocol: str, n: int, plain: Path, tasks_file: Path) -> dict[str, Any]:
        raw: list[float] = []
        first: list[Run] = []
        again: list[Run] = []

        def raw_run(r: int) -> None:
            title = self.title(f"raw {protocol} {n} r{r}")
            raw.append(self.raw_import(protocol, tasks_file, title))
            self.drop(title)

        def annols_run(r: int) -> None:
            title = self.title(f"push {protocol} {n} r{r}")
            first.append(self.annols("push", protocol, str(plain), "--project", title))
            again.append(self.annols("push", protocol, str(plain), "--project", title))
            last = again[-1].output.strip().splitlines()[-1]
            if last != f"created 0, already present {n}, total {n}":
                raise SystemExit(f"bench: unexpected re-push answer {last!r}")
            self.drop(title)

        for r in range(1, self.args.runs_for(n) + 1):
            for step in (raw_run, annols_run) if r % 2 else (annols_run, raw_run):  # alternate who goes first
                step(r)
            log(f"  push {protocol} {n} run {r}: raw {raw[-1]:.2f}s, annols {first[-1].seconds:.2f}s, "
                f"re-push {again[-1].seconds:.2f}s")  # fmt: skip
        return {
            "raw_import_s": summary(raw),
            "annols_push_s": summary([x.seconds for x in first]),
            "annols_repush_s": summary([x.seconds for x in again]),
            "annols_push_max_rss_mb": max(x.max_rss_mb for x in first),
            "annols_repush_max_rss_mb": max(x.max_rss_mb for x in again),
        }

    # --- pull and convert

    def pull_and_convert(self, protocol: str, n: int, annotated: Path) -> dict[str, Any]:
        title = self.title(f"pull {protocol} {n}")
        setup = self.annols("push", protocol, str(annotated), "--project", title, "--with-annotations")
        project = self.client.find_project(title)
        assert project is not None
        folder = self.work / f"{protocol}-{n}"
        raw: list[float] = []
        pulled: list[Run] = []
        converted: list[Run] = []
        sdk: list[Run] = []

        def raw_run() -> None:
            raw_file = folder / "raw-export.json"
            with timed() as t, open(raw_file, "wb") as f:
                for chunk in self.sdk.projects.exports.download_sync(
                    id=project.id, export_type="JSON", download_all_tasks=True
                ):
                    f.write(chunk)
            raw.append(t[0])
            raw_file.unlink()

        def annols_run() -> None:
            out = folder / "pulled"
            shutil.rmtree(out, ignore_errors=True)
            pulled.append(self.annols("pull", protocol, "--project", title, "-o", str(out)))
            if "Counts match the server" not in pulled[-1].output:
                raise SystemExit(f"bench: pull did not reconcile:\n{pulled[-1].output}")

        for r in range(1, self.args.runs_for(n) + 1):
            for step in (raw_run, annols_run) if r % 2 else (annols_run, raw_run):
                step()
            log(f"  pull {protocol} {n} run {r}: raw export {raw[-1]:.2f}s, annols pull {pulled[-1].seconds:.2f}s")
        export = folder / "pulled" / "export.json"
        config_file = folder / "config.xml"
        config_file.write_text(config.label_config(protocols.load(protocol)), encoding="utf-8")

        def annols_convert() -> None:
            again = folder / "converted"
            shutil.rmtree(again, ignore_errors=True)
            converted.append(self.annols("convert", protocol, str(export), "-o", str(again)))

        def sdk_convert() -> None:
            csv_dir = folder / "sdk-csv"
            shutil.rmtree(csv_dir, ignore_errors=True)
            sdk.append(run([sys.executable, "-c", SDK_CONVERT, str(config_file), str(export), str(csv_dir)], folder))

        for r in range(1, self.args.runs_for(n) + 1):
            for step in (sdk_convert, annols_convert) if r % 2 else (annols_convert, sdk_convert):
                step()
            log(f"  convert {protocol} {n} run {r}: annols {converted[-1].seconds:.2f}s, sdk {sdk[-1].seconds:.2f}s")
        self.drop(title)
        return {
            "annols_push_with_annotations_s": round(setup.seconds, 3),
            "export_bytes": export.stat().st_size,
            "raw_export_s": summary(raw),
            "annols_pull_s": summary([x.seconds for x in pulled]),
            "annols_convert_s": summary([x.seconds for x in converted]),
            "sdk_convert_s": summary([x.seconds for x in sdk]),
            "annols_pull_max_rss_mb": max(x.max_rss_mb for x in pulled),
            "annols_convert_max_rss_mb": max(x.max_rss_mb for x in converted),
            "sdk_convert_max_rss_mb": max(x.max_rss_mb for x in sdk),
        }

    # --- everything

    def save_partial(self, protocol: str, out: dict[str, Any]) -> None:
        """What is measured so far, so that a run stopped late keeps its figures."""
        self.results[protocol] = out
        partial = self.args.out.with_suffix(".partial.json")
        partial.parent.mkdir(parents=True, exist_ok=True)
        partial.write_text(json.dumps(self.results, indent=2) + "\n", encoding="utf-8")

    def protocol(self, protocol: str) -> dict[str, Any]:
        out: dict[str, Any] = {"sizes": {}}
        for n in self.args.sizes:
            log(f"{protocol}, N = {n}: generating inputs")
            plain, annotated, tasks_file = self.inputs(protocol, n)
            size: dict[str, Any] = {"input_bytes": plain.stat().st_size, "tasks_bytes": tasks_file.stat().st_size}
            if n == min(self.args.sizes):
                loop = [self.per_task_loop(protocol, tasks_file, self.args.loop) for _ in range(self.args.loop_runs)]
                out["per_task_loop_tasks_per_s"] = summary(loop)
                out["per_task_loop_tasks"] = self.args.loop
                log(f"  per-task loop {protocol}: {median(loop):.1f} tasks/s")
            size |= self.push(protocol, n, plain, tasks_file)
            size |= self.pull_and_convert(protocol, n, annotated)
            size["ratios"] = ratios(n, size, out["per_task_loop_tasks_per_s"]["median"])
            out["sizes"][str(n)] = size
            self.save_partial(protocol, out)
            if not self.args.keep:
                shutil.rmtree(self.work / f"{protocol}-{n}", ignore_errors=True)
        return out


SDK_CONVERT = """
import sys
from label_studio_sdk.converter import Converter
config, export, out = sys.argv[1:4]
Converter(config=config, project_dir=None, download_resources=False).convert_to_csv(export, out, is_dir=False, sep=",")
"""


def chunks(tasks_file: Path) -> Iterator[list[dict[str, Any]]]:
    """The prebuilt tasks in lists of at most RAW_REQUEST_BYTES of JSON."""
    chunk: list[dict[str, Any]] = []
    size = 0
    with open(tasks_file, encoding="utf-8") as f:
        for task in iter_json_array(f):
            bytes_ = len(json.dumps(task, ensure_ascii=False).encode("utf-8")) + 1
            if chunk and size + bytes_ > RAW_REQUEST_BYTES:
                yield chunk
                chunk, size = [], 0
            chunk.append(task)
            size += bytes_
    if chunk:
        yield chunk


def summary(values: list[float]) -> dict[str, Any]:
    return {"median": round(median(values), 3), "runs": [round(v, 3) for v in values]}


def ratios(n: int, size: dict[str, Any], loop_rate: float) -> dict[str, float]:
    """The targets' ratios, from medians measured in this run."""
    push = size["annols_push_s"]["median"]
    return {
        "push_vs_raw": round(size["raw_import_s"]["median"] / push, 3),
        "push_vs_loop": round(n / push / loop_rate, 1),
        "repush_speedup": round(push / size["annols_repush_s"]["median"], 2),
        "pull_vs_raw": round(size["annols_pull_s"]["median"] / size["raw_export_s"]["median"], 3),
        "convert_speedup": round(size["sdk_convert_s"]["median"] / size["annols_convert_s"]["median"], 2),
    }


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------- report


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    cpu = next(
        (line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
         if line.startswith("model name")),
        platform.processor(),
    )  # fmt: skip
    mem_kb = next(
        (int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
         if line.startswith("MemTotal:")),
        0,
    )  # fmt: skip
    return {
        "cpus": os.cpu_count(),
        "cpu_model": cpu,
        "memory_gb": round(mem_kb / 1024 / 1024, 1),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "label_studio": version("label-studio"),
        "label_studio_sdk": version("label-studio-sdk"),
        "annols": version("annols"),
    }


def version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def evaluate(results: dict[str, Any], largest: int) -> dict[str, Any]:
    """Each target with the values it was judged on and whether every one meets it."""
    out: dict[str, Any] = {}
    for name, (what, op, limit) in TARGETS.items():
        values: dict[str, float] = {}
        for protocol, data in results.items():
            for n, size in data["sizes"].items():
                if name == "max_rss_mb":
                    if int(n) == largest:
                        for command in ("push", "pull", "convert"):
                            values[f"{protocol} {n} {command}"] = round(size[f"annols_{command}_max_rss_mb"], 1)
                else:
                    values[f"{protocol} {n}"] = size["ratios"][name]
        ok = [v >= limit if op == ">=" else v <= limit if op == "<=" else v < limit for v in values.values()]
        out[name] = {"target": f"{what} {op} {limit}", "values": values, "met": bool(ok) and all(ok)}
    return out


def table(report: dict[str, Any]) -> str:
    """The figures as a Markdown table (medians; ratios from this run)."""
    rows = [
        "| protocol | N | raw import s | annols push s | re-push s | raw export s | annols pull s | "
        "SDK convert s | annols convert s | push/raw | re-push x | pull/raw | convert x | "
        "RSS push/pull/convert MB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for protocol, data in report["results"].items():
        for n, s in data["sizes"].items():
            r = s["ratios"]
            rss = "/".join(f"{s[f'annols_{c}_max_rss_mb']:.0f}" for c in ("push", "pull", "convert"))
            rows.append(
                f"| {protocol} | {int(n):,} | {s['raw_import_s']['median']:.2f} | {s['annols_push_s']['median']:.2f} | "
                f"{s['annols_repush_s']['median']:.2f} | {s['raw_export_s']['median']:.2f} | "
                f"{s['annols_pull_s']['median']:.2f} | {s['sdk_convert_s']['median']:.2f} | "
                f"{s['annols_convert_s']['median']:.2f} | {r['push_vs_raw']:.2f} | {r['repush_speedup']:.1f} | "
                f"{r['pull_vs_raw']:.2f} | {r['convert_speedup']:.2f} | {rss} |"
            )
    loops = ", ".join(
        f"{p}: {d['per_task_loop_tasks_per_s']['median']:.1f} tasks/s" for p, d in report["results"].items()
    )
    targets = "\n".join(
        f"- {'met' if t['met'] else 'NOT met'}: {t['target']} ({', '.join(f'{k} {v}' for k, v in t['values'].items())})"
        for t in report["targets"].values()
    )
    return "\n".join(rows) + f"\n\nPer-task loop ({report['args']['loop']} tasks): {loops}\n\n{targets}\n"


# ---------------------------------------------------------------------------- main


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="scripts/bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small N, one run: a smoke check (about a minute)")
    parser.add_argument("--sizes", help="comma-separated task counts [20000,100000; quick: 300]")
    parser.add_argument("--runs", type=int, help="runs per measurement, median reported [3; quick: 1]")
    parser.add_argument(
        "--large-runs", type=int, help="runs per measurement at N >= 100,000 [1; the full run takes hours otherwise]"
    )
    parser.add_argument("--loop", type=int, help="tasks in the per-task loop baseline [500; quick: 10]")
    parser.add_argument("--loop-runs", type=int, default=1, help="runs of the per-task loop [1]")
    parser.add_argument("--protocols", default=",".join(PROTOCOLS), help=f"comma-separated [{','.join(PROTOCOLS)}]")
    parser.add_argument("--url", help="use this Label Studio instead of starting one (with --api-key)")
    parser.add_argument("--api-key", help="its API key")
    parser.add_argument(
        "--work",
        type=Path,
        help="work folder for inputs, outputs and the started server's data, kept for the next run "
        "(a restart takes seconds) [a temporary folder, removed]",
    )
    parser.add_argument("--keep", action="store_true", help="keep the generated inputs and outputs too")
    parser.add_argument("--out", type=Path, default=Path("bench-results/bench.json"), help="results JSON file")
    args = parser.parse_args(argv)
    default_sizes = "300" if args.quick else "20000,100000"
    args.sizes = sorted(int(x) for x in (args.sizes or default_sizes).split(","))
    args.runs = args.runs or (1 if args.quick else 3)
    args.large_runs = args.large_runs or (1 if not args.quick else args.runs)
    args.loop = args.loop or (10 if args.quick else 500)
    args.protocols = [p for p in args.protocols.split(",") if p]
    unknown = set(args.protocols) - set(PROTOCOLS)
    if unknown:
        parser.error(f"unknown protocol(s) {', '.join(sorted(unknown))}: choose from {', '.join(PROTOCOLS)}")
    if bool(args.url) != bool(args.api_key):
        parser.error("--url and --api-key go together")
    args.runs_for = lambda n: args.large_runs if n >= 100_000 else args.runs
    return args


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="annols-bench-"))
    work = work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    started = datetime.datetime.now(datetime.UTC)
    report: dict[str, Any] = {
        "date": started.isoformat(timespec="seconds"),
        "command": command_line(argv if argv is not None else sys.argv[1:]),
        "machine": machine(),
        "load_average_start": load(),
        "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items() if k not in PRIVATE_ARGS},
    }
    data_dir = work / "label-studio"
    own_server = not args.url
    try:
        if own_server:
            log(f"starting Label Studio in {data_dir} (a first start takes a minute or two)")
            state, _ = server.start(data_dir, port=server.free_port(), timeout=600)
            url, api_key = state.url, server.api_token(data_dir)
        else:
            url, api_key = args.url, args.api_key
        bench = Bench(args, url, api_key, work)
        report["server"] = {"url": url if not own_server else "started by the bench (loopback, SQLite)",
                            "version": server_version(bench)}  # fmt: skip
        results: dict[str, Any] = {}
        try:
            for protocol in args.protocols:
                results[protocol] = bench.protocol(protocol)
        finally:
            for title in bench.titles:  # whatever stopped the run, leave no project behind
                with contextlib.suppress(Exception):
                    bench.drop(title)
        report["results"] = results
        report["targets"] = evaluate(results, max(args.sizes))
        report["load_average_end"] = load()
        report["seconds"] = round((datetime.datetime.now(datetime.UTC) - started).total_seconds())
    finally:
        if own_server:
            server.stop(data_dir)
        if not args.keep and not args.work:
            shutil.rmtree(work, ignore_errors=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    args.out.with_suffix(".partial.json").unlink(missing_ok=True)
    print(table(report))
    if args.quick:
        print("(--quick: at this N start-up and request overhead dominate; the targets are for the full run)")
    print(f"results: {args.out}")
    return 0


def command_line(argv: list[str]) -> str:
    """The command as run, without the API key."""
    shown = []
    for i, arg in enumerate(argv):
        secret = i > 0 and argv[i - 1] == "--api-key"
        shown.append("***" if secret else "--api-key=***" if arg.startswith("--api-key=") else arg)
    return " ".join(["scripts/bench", *shown])


def server_version(bench: Bench) -> str:
    with contextlib.suppress(Exception):
        return str(bench.client._request("GET", "api/version").json().get("release", "unknown"))
    return "unknown"


if __name__ == "__main__":
    sys.exit(main())
