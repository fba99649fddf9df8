"""Against a real Label Studio: every config is accepted, a realistic task imports, and an
annotation in the protocol's result shape is stored and comes back in the raw JSON export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lxml import etree

from annols import protocols
from annols.definition import Definition
from annols.definition import fields as fields_module
from annols.errors import ServerError
from annols.labelstudio.client import LabelStudioClient
from annols.protocols import config
from annols.styles import STYLE_MODULES
from tests.conftest import DATA
from tests.styles.test_question_kinds import STYLES as KIND_STYLES
from tests.styles.test_question_kinds import style_definition as kind_definition

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


@pytest.mark.parametrize("style", list(KIND_STYLES))
def test_questions_of_every_kind_per_item_and_candidate_are_accepted(
    client: LabelStudioClient, tmp_path: Path, style: str
) -> None:
    """Sliders, numbers, scales, choices and text, per item and per candidate, in each style's config: the server
    takes the config and a task, and stores a per-candidate slider's answer as the editor saves it."""
    d = kind_definition(tmp_path, style)
    project, _ = client.create_project(f"kinds {style}", config.label_config(d), config.instructions(d))
    fields = STYLE_MODULES[d.style].data_fields(d.spec)
    [task_id] = client.import_tasks(
        project.id, [{"data": fields_module.to_label_studio({f: "Ein Satz." for f in fields})}]
    )
    name, to_name = first_slider(d)
    number = {"id": "n1", "from_name": name, "to_name": to_name, "type": "number", "value": {"number": 64},
              "origin": "manual"}  # fmt: skip
    client.create_annotation(task_id, [number], completed_by=client.whoami()["id"])
    (exported,) = client.export_tasks(project.id)
    assert exported["annotations"][0]["result"] == [number]
    stored = client.find_project(f"kinds {style}")
    assert stored is not None and stored.label_config.strip() == config.label_config(d).strip()


def first_slider(d: Definition) -> tuple[str, str]:
    """The first slider's control name and the object it is asked of."""
    slider = next(etree.fromstring(config.label_config(d).encode()).iter("Number"))
    return str(slider.get("name")), str(slider.get("toName"))
