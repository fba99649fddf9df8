#!/usr/bin/env python3
"""``annols report`` of an own definition at scale: wall time and peak memory (a benchmark, not a test).

For each style measured, a pull folder (export.json, annotators.json, project.json) of N
tasks with three annotators each is generated from the shipped examples, no code of
their own: ``examples/summeval-ratings.toml`` (four summaries x four aspects, 1 to 5: 16
ratings per annotation) and ``examples/chat-arena.toml`` (two responses, two aspects).
Answers are drawn at random with a fixed seed (three systems of different strength), the
order shown is shuffled per task as push does. Then ``annols report`` runs as a
subprocess under the same launcher as scripts/bench (wall time, its own peak RSS).

    scripts/bench-report                      100,000 tasks, both styles, 1 run
    scripts/bench-report --sizes 20000 --runs 3
    scripts/bench-report --quick              a smoke check (1,000 tasks)

Results: a JSON file (--out, default bench-results/report.json) and a table on stdout.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench import machine, median, run

from annols import protocols
from annols.definition import blinding

EXAMPLES = ROOT / "examples"
STYLES = {"ratings": "summeval-ratings.toml", "pairwise": "chat-arena.toml"}
SYSTEMS = ("strong", "mid", "weak", "other")
ANNOTATORS = 3


def item(kind: str, name: str, to: str, code: str) -> dict[str, Any]:
    return {"id": f"{name}", "from_name": name, "to_name": to, "type": kind, "value": {"choices": [code]},
            "origin": "manual"}  # fmt: skip


def ratings_result(spec: Any, shown: list[str], rng: random.Random) -> list[dict[str, Any]]:
    out = []
    for i, candidate in enumerate(spec.candidates):
        centre = 4.5 - SYSTEMS.index(shown[i])
        for aspect in spec.aspects:
            value = min(5, max(1, round(rng.gauss(centre, 1))))
            out.append(item("choices", spec.cell(aspect, candidate), candidate.name, str(value)))
    return out


def pairwise_result(spec: Any, shown: list[str], rng: random.Random) -> list[dict[str, Any]]:
    better = 0 if SYSTEMS.index(shown[0]) < SYSTEMS.index(shown[1]) else 1
    out = []
    for aspect in spec.aspects:
        draw = rng.random()
        answer = better if draw < 0.6 else (1 - better if draw < 0.85 else None)
        code = next(a.code for a, p in zip(spec.answers, spec.prefers, strict=True) if p == answer)
        out.append(item("choices", aspect.name, spec.candidates[0].name, code))
    return out


def write_pull(folder: Path, style: str, n: int, seed: int = 1) -> Path:
    """A pull folder of n tasks x 3 annotations of the style's example definition."""
    definition = protocols.load(str(EXAMPLES / STYLES[style]))
    spec = definition.spec
    fields = blinding.candidate_fields(definition)
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "export.json", "w", encoding="utf-8") as f:
        f.write("[")
        for t in range(n):
            systems = rng.sample(SYSTEMS, len(fields))
            data = {name: f"{name} of task {t}" for name in (p.name for p in spec.context)}
            data.update({name: f"Output of {s} for task {t}" for name, s in zip(fields, systems, strict=True)})
            meta = {blinding.META_KEY: f"{definition.name}:{t:08d}",
                    blinding.META_SYSTEMS: blinding.encode_systems(tuple(systems))}  # fmt: skip
            result = ratings_result if style == "ratings" else pairwise_result
            annotations = [{"id": t * ANNOTATORS + a + 1, "completed_by": a + 1, "result": result(spec, systems, rng),
                            "lead_time": 20.0 + a, "created_at": "2026-11-23T10:00:00.000000Z",
                            "was_cancelled": False} for a in range(ANNOTATORS)]  # fmt: skip
            task = {"id": t + 1, "data": data, "meta": meta, "annotations": annotations, "predictions": []}
            f.write(("," if t else "") + json.dumps(task, ensure_ascii=False))
        f.write("]")
    users = {str(a + 1): f"annotator{a + 1}@bench.annols" for a in range(ANNOTATORS)}
    (folder / "annotators.json").write_text(json.dumps(users), encoding="utf-8")
    project = {"title": f"bench {style}", "id": 1, "protocol": definition.name, "variant": None, "overlap": 3}
    (folder / "project.json").write_text(json.dumps(project), encoding="utf-8")
    return EXAMPLES / STYLES[style]


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="scripts/bench-report", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1,000 tasks, one run: a smoke check")
    parser.add_argument("--sizes", help="comma-separated task counts [100000; quick: 1000]")
    parser.add_argument("--runs", type=int, default=1, help="runs per measurement, median reported [1]")
    parser.add_argument("--styles", default=",".join(STYLES), help=f"comma-separated [{','.join(STYLES)}]")
    parser.add_argument("--out", type=Path, default=Path("bench-results/report.json"), help="results JSON file")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    sizes = [int(s) for s in (args.sizes or ("1000" if args.quick else "100000")).split(",")]
    results: list[dict[str, Any]] = []
    annols = str(Path(sys.executable).parent / "annols")
    with tempfile.TemporaryDirectory(prefix="annols-bench-report-") as work:
        for style in args.styles.split(","):
            for n in sizes:
                folder = Path(work) / f"{style}-{n}"
                definition = write_pull(folder / "pull", style, n)
                runs = [run([annols, "report", str(definition), str(folder / "pull"), "-o", str(folder / "report")],
                            folder) for _ in range(args.runs)]  # fmt: skip
                judgments = n * ANNOTATORS
                row = {"style": style, "definition": STYLES[style], "tasks": n, "annotations": judgments,
                       "export_mb": round((folder / "pull" / "export.json").stat().st_size / 2**20, 1),
                       "seconds": [round(r.seconds, 1) for r in runs],
                       "median_seconds": round(median([r.seconds for r in runs]), 1),
                       "cpu_seconds": [round(r.cpu_seconds, 1) for r in runs],
                       "max_rss_mb": round(max(r.max_rss_mb for r in runs), 1)}  # fmt: skip
                results.append(row)
                print(f"{style:9} {n:>7} tasks  {row['export_mb']:>7} MB export  {row['median_seconds']:>7} s  "
                      f"{median(row['cpu_seconds']):>7} s CPU  "
                      f"{row['max_rss_mb']:>7} MB peak RSS", flush=True)  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    report = {"command": " ".join(["scripts/bench-report", *(sys.argv[1:] if argv is None else argv)]),
              "machine": machine(),
              "results": results}  # fmt: skip
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
