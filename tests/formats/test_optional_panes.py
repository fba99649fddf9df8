"""Optional panes (issue #38, item 4): a context pane declared ``optional = true`` takes records that leave
it empty or out (sent as "", hidden in the editor: tests/browser/test_optional_panes.py); any other pane
cannot be optional, and a required context pane still refuses a missing value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annols import protocols
from annols.errors import DefinitionError, InputError
from annols.formats import format_for
from annols.protocols import config
from annols.study import push
from tests.own_study import SPANS

ROOT = Path(__file__).resolve().parents[2]
MQM = ROOT / "examples" / "mqm.toml"


def test_mqm_takes_records_without_a_reference(tmp_path: Path) -> None:
    definition = protocols.load(MQM)
    records = [json.loads(line) for line in (ROOT / "examples" / "mqm.jsonl").read_text("utf-8").splitlines()[:3]]
    records[0].pop("reference")
    records[1]["reference"] = ""
    records[2]["reference"] = None
    path = tmp_path / "mqm.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    tasks = list(format_for(definition).read([path], definition))
    assert [t.data["reference"] for t in tasks] == ["", "", ""]
    assert [t.data["hypothesis"] for t in tasks] == [r["hypothesis"] for r in records]
    built = list(push.build_tasks(definition, [path], seed=1))
    assert [payload["data"]["reference"] for _, _, payload, _ in built] == ["", "", ""]

    # The source is not optional: a record without it is refused, naming the field.
    records[0].pop("source")
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    with pytest.raises(InputError) as e:
        list(format_for(definition).read([path], definition))
    assert str(e.value) == f"{path}, line 1, field 'source': missing; every task needs it"


def test_the_optional_pane_hides_itself_in_the_config() -> None:
    definition = protocols.load(MQM)
    assert config.optional_fields(definition) == {"reference"}
    xml = config.label_config(definition)
    assert xml.count('className="annols-optional"') == 1
    reference = xml[xml.index('className="annols-optional"'):]
    assert reference.index("<Style>") < reference.index('name="reference"') < reference.index("</View>")
    style = reference[reference.index("<Style>") + len("<Style>"):reference.index("</Style>")]
    assert "display: none" in style and "&" not in style  # the editor shows an escaped '>' as it is: no CSS


def test_only_a_context_pane_can_be_optional(tmp_path: Path) -> None:
    path = tmp_path / "own-spans.toml"
    path.write_text(SPANS.replace('[target]\nname = "answer"', '[target]\nname = "answer"\noptional = true'))
    with pytest.raises(DefinitionError) as e:
        protocols.load(path)
    assert "target.optional: only a context pane can be optional" in str(e.value)
    path.write_text(SPANS.replace('name = "question"\ntitle = "Question"', 'name = "question"\ntitle = "Question"\n'
                                  "optional = 1"))  # fmt: skip
    with pytest.raises(DefinitionError) as e:
        protocols.load(path)
    assert "optional: expected true or false" in str(e.value)
