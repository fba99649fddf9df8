"""The README's worked example of a user definition is real: it loads and makes a valid config."""

from __future__ import annotations

import re
from pathlib import Path

from label_studio_sdk.label_interface import LabelInterface

from annols.protocols import config, load_definition
from tests.conftest import ROOT


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


def _readme_commands(readme: str) -> list[str]:
    """Every annols command line the README shows: in bash blocks and in inline code."""
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", readme, flags=re.S):
        lines += [line.split("#")[0].strip() for line in block.splitlines()]
    lines += re.findall(r"`((?:\.venv/bin/)?annols [^`]+)`", readme)
    return [line.removeprefix(".venv/bin/") for line in lines if re.match(r"(\.venv/bin/)?annols ", line)]


def test_readme_commands_and_options_exist_as_shown() -> None:
    import click

    from annols.cli import main

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = _readme_commands(readme)
    assert len(commands) > 20
    checked = 0
    for line in commands:
        tokens = line.split()[1:]
        group: click.Command = main
        i = 0
        while i < len(tokens) and isinstance(group, click.Group) and re.fullmatch(r"[a-z|-]+", tokens[i]):
            names = tokens[i].split("|")
            for name in names:
                assert name in group.commands, f"README: {line!r}: no command {name!r}"
            found = [group.commands[n] for n in names]
            if len(found) > 1 or not isinstance(found[0], click.Group):
                options = {o.strip("[]").split("=")[0] for o in tokens[i + 1 :] if o.strip("[]").startswith("--")}
                for command in found:
                    known = {opt for p in command.params for opt in p.opts}
                    assert options <= known, f"README: {line!r}: {sorted(options - known)} not options of it"
                    checked += 1
                break
            group = found[0]
            i += 1
    assert checked >= len(commands) - 2  # "annols" alone or a group without a command


def test_readme_agrees_with_the_cli_on_defaults_and_where_annols_is() -> None:
    from annols.study import push

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    defaults = re.findall(r"--batch-size`, default (\d+)", readme)
    assert defaults == [str(push.DEFAULT_BATCH_SIZE)]
    from click.testing import CliRunner

    from annols.cli import main

    help_text = CliRunner().invoke(main, ["push", "--help"]).output
    assert f"[default: {push.DEFAULT_BATCH_SIZE}]" in help_text
    # scripts/demo installs annols into .venv only: the README says how to reach it before calling it bare.
    assert ". .venv/bin/activate" in readme
    first_bare = min(readme.index(f"\n{c}") for c in _readme_commands(readme) if f"\n{c}" in readme)
    assert readme.index(". .venv/bin/activate") < first_bare
