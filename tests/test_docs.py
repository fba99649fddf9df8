"""The README and the documentation site (docs/, mkdocs.yml) say what the code does.

The README stays a five-minute page; every page of docs/ is in the site's navigation (mkdocs build --strict,
run by scripts/test, refuses a broken link); every annols command line the README and the pages show exists
with the options shown; every command block of the tutorial and the how-to guides is run by a test, or marked
as an illustration; the worked definitions load; and no code reads the folder ../shared beside the repository.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
import yaml
from label_studio_sdk.label_interface import LabelInterface

from annols.protocols import config, load_definition
from tests.conftest import ROOT
from tests.docs_pages import blocks

DOCS = ROOT / "docs"
README = ROOT / "README.md"
GUIDES = [DOCS / "tutorial.md", *sorted((DOCS / "howto").glob("*.md"))]
PAGES = sorted(DOCS.rglob("*.md"))


def test_the_readme_is_read_in_five_minutes_and_links_into_the_docs() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    links = re.findall(r"\]\((docs/[^)#]+)(?:#[^)]*)?\)", text)
    assert {"docs/tutorial.md", "docs/reference/cli.md", "docs/reference/definition.md"} <= set(links)
    missing = [link for link in links if not (ROOT / link).exists()]
    assert not missing, missing
    # The README's tour and the tutorial define the same study.
    (tour,) = re.findall(r"```toml\n(.*?)```", text, flags=re.S)
    (tutorial,) = [b.body for b in blocks(DOCS / "tutorial.md") if b.title == "headlines.toml"]
    assert tour == tutorial


def _nav_pages(nav: object) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [p for item in nav for p in _nav_pages(item)]
    if isinstance(nav, dict):
        return [p for value in nav.values() for p in _nav_pages(value)]
    return []


def test_every_page_is_in_the_navigation_once() -> None:
    site = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    nav = _nav_pages(site["nav"])
    assert len(nav) == len(set(nav))
    assert sorted(nav) == sorted(str(p.relative_to(DOCS)) for p in PAGES)
    assert site["strict"] is True and site["theme"]["font"] is False  # nothing fetched at build time


def test_the_site_builds_strict_without_fetching(tmp_path: Path) -> None:
    """No broken link or anchor, no page outside the navigation (scripts/test builds it too, before pytest)."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site" / "tutorial" / "index.html").is_file()
    assert "fonts.googleapis" not in (tmp_path / "site" / "index.html").read_text(encoding="utf-8")


def _shown_commands(text: str) -> list[str]:
    """Every annols command line a page shows: in command blocks and in inline code."""
    lines = []
    for block in re.findall(r"```(?:bash|sh)\n(.*?)```", text, flags=re.S):
        lines += [line.split("#")[0].strip() for line in block.splitlines()]
    lines += re.findall(r"`((?:\.venv/bin/)?annols [^`]+)`", text)
    return [line.removeprefix(".venv/bin/") for line in lines if re.match(r"(\.venv/bin/)?annols ", line)]


def _check_command(line: str, where: str) -> None:
    from annols.cli import main

    tokens = line.split()[1:]
    group: click.Command = main
    i = 0
    while i < len(tokens) and isinstance(group, click.Group) and re.fullmatch(r"[a-z|-]+", tokens[i]):
        names = tokens[i].split("|")
        for name in names:
            assert name in group.commands, f"{where}: {line!r}: no command {name!r}"
        found = [group.commands[n] for n in names]
        if len(found) > 1 or not isinstance(found[0], click.Group):
            options = {o.strip("[]").split("=")[0] for o in tokens[i + 1 :] if o.strip("[]").startswith("--")}
            for command in found:
                known = {opt for p in command.params for opt in p.opts}
                assert options <= known, f"{where}: {line!r}: {sorted(options - known)} not options of it"
            return
        group = found[0]
        i += 1


def test_every_command_shown_exists_with_the_options_shown() -> None:
    checked = 0
    for path in [README, *PAGES]:
        if path.parent.name == "reference" and path.name == "cli.md":
            continue  # generated from the commands themselves
        for line in _shown_commands(path.read_text(encoding="utf-8")):
            _check_command(line, str(path.relative_to(ROOT)))
            checked += 1
    assert checked > 60


@pytest.mark.parametrize("page", GUIDES, ids=lambda p: p.name)
def test_every_command_block_of_a_guide_is_run_by_a_test_or_marked_an_illustration(page: Path) -> None:
    for block in blocks(page):
        if not block.is_command:
            continue
        where = f"{page.relative_to(ROOT)} line {block.line}"
        assert block.marker is not None, f"{where}: a command block needs <!-- docs: run|run by TEST|illustration -->"
        if block.marker == "run":
            assert page.name == "tutorial.md", f"{where}: only tests/test_tutorial.py runs blocks marked run"
        elif block.marker.startswith("run by "):
            test = ROOT / block.marker.removeprefix("run by ")
            assert test.is_file(), f"{where}: no {test.relative_to(ROOT)}"
            named = str(page.relative_to(ROOT)) in test.read_text(encoding="utf-8")
            assert named, f"{where}: {test.name} never reads it"
        else:
            assert block.marker == "illustration" or block.marker.startswith("in "), f"{where}: {block.marker!r}"


def test_the_worked_definition_of_own_protocol_works(tmp_path: Path) -> None:
    (block,) = [b.body for b in blocks(DOCS / "howto" / "own-protocol.md") if b.lang == "toml"]
    path = tmp_path / "translation-errors.toml"
    path.write_text(block, encoding="utf-8")
    d = load_definition(path)
    assert (d.name, d.style) == ("translation-errors", "spans")
    xml = config.label_config(d)
    LabelInterface(xml).validate()
    assert config.data_fields(d) == ["original", "translation"]
    assert "Mistranslation" in xml and 'value="No errors"' in xml


def test_the_docs_agree_with_the_cli_on_defaults_and_the_readme_on_where_annols_is() -> None:
    from click.testing import CliRunner

    from annols.cli import main
    from annols.study import push

    study = (DOCS / "howto" / "study.md").read_text(encoding="utf-8")
    assert re.findall(r"--batch-size`, default (\d+)", study) == [str(push.DEFAULT_BATCH_SIZE)]
    assert f"[default: {push.DEFAULT_BATCH_SIZE}]" in CliRunner().invoke(main, ["push", "--help"]).output
    # scripts/demo installs annols into .venv only: the README says how to reach it before calling it bare.
    readme = README.read_text(encoding="utf-8")
    first_bare = min(readme.index(f"\n{c}") for c in _shown_commands(readme) if f"\n{c}" in readme)
    assert readme.index(". .venv/bin/activate") < first_bare


SHARED_IN_CODE = re.compile(r"""(["']\.\./shared|parent\s*/\s*["']shared["']|parents\[3\])""")


def test_no_code_reads_the_folder_beside_the_repository() -> None:
    """../shared (the team's notes and the seeds' sources) is a source, never a requirement: the tests' data is
    in tests/data with its licence and origin. Comments may name it as a source; code may not reach it."""
    found = []
    for path in [*ROOT.glob("annols/**/*.py"), *ROOT.glob("tests/**/*.py"), *ROOT.glob("scripts/*")]:
        if path.is_dir() or path == Path(__file__):
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#")[0] if path.suffix == ".py" or not path.suffix else line
            if SHARED_IN_CODE.search(code):
                found.append(f"{path.relative_to(ROOT)}:{n}")
    assert not found, found
    assert SHARED_IN_CODE.search('DEV = ROOT.parent / "shared" / "data"')  # the pattern finds what it is for
