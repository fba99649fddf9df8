"""Against a real Label Studio: every config is accepted, a realistic task imports, and an
annotation in the protocol's result shape is stored and comes back in the raw JSON export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annols import protocols
from annols.definition import Definition
from annols.errors import ServerError
from annols.labelstudio.client import LabelStudioClient
from annols.protocols import config
from tests.conftest import DATA

DEFINITIONS = protocols.all_definitions()
IDS = [config.config_filename(d) for d in DEFINITIONS]
EXAMPLES = Path(protocols.HERE) / "examples"


def _stem(d: Definition) -> str:
    return config.config_filename(d).removesuffix(".xml")


@pytest.mark.parametrize("d", DEFINITIONS, ids=IDS)
def test_config_task_and_annotation_round_trip(client: LabelStudioClient, d: Definition) -> None:
    title = f"cfg {_stem(d)}"
    project, _ = client.create_project(title, config.label_config(d), config.instructions(d))
    tasks = json.loads((EXAMPLES / f"{_stem(d)}.json").read_text("utf-8"))
    ids = client.import_tasks(project.id, tasks)
    assert len(ids) == len(tasks)

    result = json.loads((DATA / "example_annotations" / f"{_stem(d)}.json").read_text("utf-8"))
    me = client.whoami()
    client.create_annotation(ids[0], result, completed_by=me["id"], lead_time=12.5)

    exported = client.export_tasks(project.id)
    assert [t["id"] for t in exported] == ids
    assert exported[0]["data"] == tasks[0]["data"]
    (annotation,) = exported[0]["annotations"]
    assert annotation["result"] == result
    assert annotation["completed_by"] == me["id"]
    assert annotation["lead_time"] == 12.5

    stored = client.find_project(title)
    assert stored is not None and stored.id == project.id
    assert stored.label_config.strip() == config.label_config(d).strip()


def test_server_rejects_a_broken_config_with_a_one_line_reason(client: LabelStudioClient) -> None:
    broken = '<View><Labels name="x" toName="nope"><Label value="A"/></Labels><Text name="t" value="$t"/></View>'
    with pytest.raises(ServerError) as info:
        client.create_project("broken config", broken)
    message = str(info.value)
    assert "label_config" in message and "nope" in message
    assert "\n" not in message and "headers" not in message.lower()


def test_wrong_key_and_dead_server_give_one_line_errors(label_studio) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ServerError) as info:
        LabelStudioClient(label_studio.url, "not-a-valid-token").whoami()
    assert "401" in str(info.value) and "not-a-valid-token" not in str(info.value)
    from annols.labelstudio.server import free_port

    dead = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(ServerError) as info:
        LabelStudioClient(dead, "whatever-token").whoami()
    assert f"cannot reach Label Studio at {dead}" in str(info.value)
