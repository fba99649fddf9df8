"""The README's worked example of a user definition is real: it loads and makes a valid config."""

from __future__ import annotations

import re
from pathlib import Path

from label_studio_sdk.label_interface import LabelInterface

from annols import config
from annols.definition import load_definition

from .conftest import ROOT


def test_readme_definition_example_works(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```toml\n(.*?)```", readme, flags=re.S)
    assert len(blocks) == 1
    path = tmp_path / "translation-errors.toml"
    path.write_text(blocks[0], encoding="utf-8")
    d = load_definition(path)
    assert (d.name, d.style) == ("translation-errors", "spans")
    xml = config.label_config(d)
    LabelInterface(xml).validate()
    assert config.data_fields(d) == ["original", "translation"]
    assert "Mistranslation" in xml and 'value="No errors"' in xml
