"""Example projects: one per shipped protocol and variant, with its example tasks."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from annols import config, protocols
from annols.labelstudio import LabelStudioClient

EXAMPLES = Path(protocols.HERE) / "examples"


@dataclass(frozen=True)
class DemoProject:
    title: str
    project_id: int
    tasks: int
    created: bool


def load_examples(protocol: str, variant: str | None = None) -> list[dict]:
    stem = f"{protocol}-{variant}" if variant else protocol
    return list(json.loads((EXAMPLES / f"{stem}.json").read_text(encoding="utf-8")))


def create_demo_projects(client: LabelStudioClient, prefix: str = "annols demo") -> Iterator[DemoProject]:
    """Create the example projects that do not exist yet; existing ones are left as they are."""
    for d in protocols.all_definitions():
        title = f"{prefix}: {d.name}" + (f" {d.variant}" if d.variant else "")
        existing = client.find_project(title)
        if existing is not None:
            yield DemoProject(title, existing.id, existing.task_count or 0, created=False)
            continue
        project = client.create_project(title, config.label_config(d), config.instructions(d))
        ids = client.import_tasks(project.id, load_examples(d.name, d.variant))
        yield DemoProject(title, project.id, len(ids), created=True)
