"""Every command's --help, as a newcomer reads it: golden files under tests/data/help/.

Regenerate them after a deliberate change with ``ANNOLS_UPDATE_HELP=1`` and read the diff.
Beside the golden files, rules that hold for any help text: examples keep their own lines
(Click rewraps a docstring unless a paragraph starts with ``\\b``) and every option says what
it is for.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Iterator

import click
import pytest
from click.testing import CliRunner

from annols.cli import main
from tests.conftest import DATA

HELP = DATA / "help"
UPDATE = os.environ.get("ANNOLS_UPDATE_HELP") == "1"
WIDTH = 100  # fixed, so the golden files do not depend on the terminal the tests run in


def commands(group: click.Group = main, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    yield path, group
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            yield from commands(command, (*path, name))
        else:
            yield (*path, name), command


ALL = list(commands())


def help_text(path: tuple[str, ...]) -> str:
    result = CliRunner().invoke(main, [*path, "--help"], prog_name="annols", terminal_width=WIDTH)
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("path", [p for p, _ in ALL], ids=lambda p: " ".join(p) or "annols")
def test_help_matches_its_golden_file(path: tuple[str, ...]) -> None:
    golden = HELP / ("-".join(("annols", *path)) + ".txt")
    text = help_text(path)
    if UPDATE:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text, encoding="utf-8")
    assert golden.exists(), f"no {golden.name}: run with ANNOLS_UPDATE_HELP=1 to write it"
    assert text == golden.read_text("utf-8"), f"--help changed: regenerate with ANNOLS_UPDATE_HELP=1 ({golden.name})"


def test_no_golden_file_without_its_command() -> None:
    expected = {"-".join(("annols", *p)) + ".txt" for p, _ in ALL}
    assert {p.name for p in HELP.glob("*.txt")} == expected


@pytest.mark.parametrize("path,command", ALL, ids=[" ".join(p) or "annols" for p, _ in ALL])
def test_examples_keep_their_lines(path: tuple[str, ...], command: click.Command) -> None:
    """Each line of the docstring that shows a command is a line of --help, not glued into prose."""
    shown = [line.strip() for line in inspect.cleandoc(command.help or "").splitlines()
             if line.strip().startswith("annols ")]  # fmt: skip
    lines = [line.strip() for line in help_text(path).splitlines()]
    for example in shown:
        assert example in lines, f"{' '.join(path)}: example {example!r} is rewrapped; start its paragraph with \\b"


@pytest.mark.parametrize("path,command", ALL, ids=[" ".join(p) or "annols" for p, _ in ALL])
def test_every_option_says_what_it_is_for(path: tuple[str, ...], command: click.Command) -> None:
    for param in command.params:
        if isinstance(param, click.Option) and param.name not in ("help", "version"):
            assert param.help, f"{' '.join(path)}: {'/'.join(param.opts)} has no help"


def test_the_csv_systems_separator_is_in_push_and_tasks_help() -> None:
    for command in ("push", "tasks"):
        text = " ".join(help_text((command,)).split())
        assert "in a CSV cell the names separated by | (bart|pegasus)" in text, command
