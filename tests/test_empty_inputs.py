"""An input without records is a mistake, not a study of none: tasks and push refuse it in one
line naming the file, and write or send nothing (no tasks file, no manifest, no project)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from annols.cli import main
from annols.labelstudio.client import LabelStudioClient
from tests.conftest import ROOT, LiveServer
from tests.study.test_push_pull import cli

PROBLEM = "holds no records (an empty file or folder, or a header without rows): nothing was written or sent"


def _xlsx_header_only(path: Path) -> None:
    import openpyxl

    book = openpyxl.Workbook()
    book.active.append(["url", "reference", "ex44", "ex46", "ex47", "ex48"])
    book.save(path)


def empty_inputs(tmp_path: Path) -> list[tuple[list[str], Path]]:
    """(protocol arguments, an input of that protocol holding no records), one per reader."""
    csv = tmp_path / "empty.csv"
    csv.write_text("input_text,gold,generated,variant\n", encoding="utf-8")
    jsonl = tmp_path / "empty.jsonl"
    jsonl.write_text("\n", encoding="utf-8")
    array = tmp_path / "empty.json"
    array.write_text("[]\n", encoding="utf-8")
    sheet = tmp_path / "empty.xlsx"
    _xlsx_header_only(sheet)
    own_csv = tmp_path / "own.csv"
    own_csv.write_text("prompt,response_a,response_b,systems\n", encoding="utf-8")
    return [
        (["sentence-errors", "--variant", "headline"], csv),
        (["sentence-errors", "--variant", "headline"], jsonl),
        (["qa-feedback"], array),
        (["summary-flaws"], jsonl),
        (["pairwise-aspects"], jsonl),
        (["extractive-ranking"], sheet),
        ([str(ROOT / "examples" / "chat-arena.toml")], own_csv),
    ]


def test_tasks_refuses_every_empty_input_and_writes_nothing(tmp_path: Path) -> None:
    for protocol, source in empty_inputs(tmp_path):
        out, manifests = tmp_path / "tasks.json", tmp_path / "manifests"
        result = CliRunner().invoke(main, ["tasks", protocol[0], str(source), *protocol[1:], "-o", str(out),
                                           "--manifest-dir", str(manifests)])  # fmt: skip
        assert result.exit_code == 1, (protocol, source, result.output)
        assert result.stdout == "" and result.stderr == f"Error: {source}: {PROBLEM}\n", (protocol, source)
        assert not out.exists() and not manifests.exists(), (protocol, source)
        assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tasks.json")], "a temporary file was left"


def test_two_empty_inputs_are_named_together(tmp_path: Path) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text("", encoding="utf-8")
    second.write_text("\n\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["tasks", "summary-flaws", str(first), str(second), "-o",
                                       str(tmp_path / "t.json")])  # fmt: skip
    assert result.exit_code == 1 and result.stderr == f"Error: {first}, {second}: {PROBLEM}\n"


def test_records_in_one_of_two_inputs_are_a_study(tmp_path: Path) -> None:
    """The check is on the inputs together: it refuses nothing that holds a record."""
    empty, full = tmp_path / "empty.jsonl", tmp_path / "full.jsonl"
    empty.write_text("", encoding="utf-8")
    full.write_text('{"summary": "A cat sat.", "document": "The cat sat on the mat."}\n', encoding="utf-8")
    out = tmp_path / "t.json"
    result = CliRunner().invoke(main, ["tasks", "summary-flaws", str(empty), str(full), "-o", str(out),
                                       "--manifest-dir", str(tmp_path / "m")])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"Wrote 1 tasks to {out}")


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
def test_push_of_an_empty_input_creates_no_project(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path, kind: str
) -> None:
    source = tmp_path / f"empty.{kind}"
    source.write_text("input_text,gold,generated,variant\n" if kind == "csv" else "", encoding="utf-8")
    title = f"empty {kind} input"
    code, out, err = cli(label_studio, "push", "sentence-errors", str(source), "--variant", "headline",
                         "--project", title, "--overlap", "2", cwd=tmp_path)  # fmt: skip
    assert code == 1 and out == ""
    assert err == f"Error: {source}: {PROBLEM}\n"
    assert client.find_project(title) is None
    assert not (tmp_path / ".annols").exists()
