"""Example projects: each shipped protocol's example input, pushed like a user would.

``examples/<name>[-<variant>].json`` are example Label Studio tasks (what a config
expects); ``examples/input/`` holds the same studies in each protocol's native input
format, which is what the demo pushes, through the same path as ``annols push``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from annols import protocols
from annols.definition import Definition
from annols.labelstudio.client import LabelStudioClient
from annols.study import push

EXAMPLES = Path(protocols.HERE) / "examples"
INPUTS = EXAMPLES / "input"


@dataclass(frozen=True)
class DemoProject:
    title: str
    project_id: int
    created: int
    present: int


def example_inputs(d: Definition) -> tuple[list[Path], list[Path]]:
    """The example input files (or folder) of a protocol, and its example predictions if any."""
    stem = f"{d.name}-{d.variant}" if d.variant else d.name
    inputs = sorted(p for p in INPUTS.iterdir() if p.name.split(".")[0] == stem)
    predictions = sorted(INPUTS.glob(f"{stem}-critic.*"))
    return inputs, predictions


def push_demo_projects(
    client: LabelStudioClient, prefix: str = "annols demo", manifest_dir: Path = Path(".annols")
) -> Iterator[DemoProject]:
    """Push every protocol's example input into its own project; safe to run again."""
    for d in protocols.all_definitions():
        title = f"{prefix}: {d.name}" + (f" {d.variant}" if d.variant else "")
        inputs, predictions = example_inputs(d)
        options = push.PushOptions(title=title, predictions=tuple(predictions), manifest_dir=manifest_dir)
        report = push.push(client, d, inputs, options)
        yield DemoProject(title, report.project.id, report.created, report.present)
