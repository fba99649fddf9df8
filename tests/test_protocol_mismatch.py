"""A wrong protocol never passes silently: pull, convert, validate and report find the protocol
from the task keys or the project and refuse a mismatch in one line naming both."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annols import protocols
from annols.labelstudio.client import LabelStudioClient
from annols.study import demo
from annols.study import push as push_lib
from tests.conftest import DATA, ROOT, LiveServer
from tests.study.test_push_pull import cli
from tests.test_cli import run


def summary_flaws_export(tmp_path: Path, annotated: bool = True) -> Path:
    """A raw export of the summary-flaws example tasks, as Label Studio writes it."""
    d = protocols.load("summary-flaws")
    inputs, _ = demo.example_inputs(d)
    result = json.loads((DATA / "example_annotations" / "summary-flaws.json").read_text("utf-8"))
    tasks = []
    for i, (_, _, payload, _) in enumerate(push_lib.build_tasks(d, inputs), start=1):
        annotations = [{"id": 100 + i, "completed_by": 1, "result": result, "was_cancelled": False}]
        tasks.append({"id": i, "annotations": annotations if annotated else [], "data": payload["data"],
                      "meta": payload["meta"]})  # fmt: skip
    path = tmp_path / "export.json"
    path.write_text(json.dumps(tasks, ensure_ascii=False), encoding="utf-8")
    return path


def one_line(err: str) -> str:
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err.strip()


@pytest.mark.parametrize("annotated", [True, False])
def test_validate_convert_and_report_refuse_an_export_of_another_protocol(tmp_path: Path, annotated: bool) -> None:
    export = summary_flaws_export(tmp_path, annotated)
    expected = f"{export} holds summary-flaws tasks (task 1), not qa-feedback: give the protocol they were pushed as"
    for args in (("validate", "qa-feedback", str(export)),
                 ("convert", "qa-feedback", str(export), "-o", str(tmp_path / "out")),
                 ("report", "qa-feedback", str(export), "-o", str(tmp_path / "report"))):  # fmt: skip
        code, out, err = run(*args)
        assert code == 1, (args, out, err)
        assert one_line(err) == f"Error: {expected}", args
    assert not (tmp_path / "out" / "qa-feedback.json").exists()
    # The right protocol passes.
    code, out, err = run("convert", "summary-flaws", str(export), "-o", str(tmp_path / "out"))
    assert code == 0, err


def test_a_user_definition_is_told_apart_too(tmp_path: Path) -> None:
    export = summary_flaws_export(tmp_path)
    code, _, err = run("validate", "pairwise-aspects", str(export))
    assert code == 1 and "holds summary-flaws tasks (task 1), not pairwise-aspects" in one_line(err)


@pytest.mark.parametrize("annotate", [False, True])
def test_pull_refuses_a_project_of_another_protocol(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path, annotate: bool
) -> None:
    d = protocols.load("summary-flaws")
    inputs, _ = demo.example_inputs(d)
    title = f"mismatch summary-flaws {annotate}"
    code, _, err = cli(label_studio, "push", "summary-flaws", *map(str, inputs), "--project", title, cwd=tmp_path)
    assert code == 0, err
    if annotate:
        project = client.find_project(title)
        assert project is not None
        result = json.loads((DATA / "example_annotations" / "summary-flaws.json").read_text("utf-8"))
        task = client.export_tasks(project.id)[0]
        client.create_annotation(task["id"], result, completed_by=client.whoami()["id"])
    out_dir = tmp_path / "out"
    # qa-feedback's manifest of this title does not exist (the push kept chat-arena's): pull refuses that first
    # unless asked for a blind-only pull, which then meets the other protocol's task keys.
    for args in (("pull", "qa-feedback", "--project", title, "-o", str(out_dir), "--blind-only"),
                 ("validate", "qa-feedback", "--project", title)):  # fmt: skip
        code, out, err = cli(label_studio, *args, cwd=tmp_path)
        assert code == 1, (args, out)
        assert one_line(err) == (f"Error: project {title!r} holds summary-flaws tasks, not qa-feedback: "
                                 "give the protocol it was pushed as")  # fmt: skip
    assert not out_dir.exists()
    code, out, err = cli(label_studio, "pull", "sentence-errors", "--variant", "abstract", "--project", title,
                         "-o", str(out_dir), cwd=tmp_path)  # fmt: skip
    assert code == 1 and "holds summary-flaws tasks, not sentence-errors abstract" in one_line(err)


def test_pull_names_the_project_not_its_staging_folder_when_the_task_keys_disagree(
    label_studio: LiveServer, tmp_path: Path
) -> None:
    """A project whose config annols does not know (here: a definition of the user's own) is told
    apart by its task keys, found in the export staged beside -o: the error names the project."""
    own = ROOT / "examples" / "chat-arena.toml"
    title = "mismatch by task keys"
    code, _, err = cli(label_studio, "push", str(own), str(own.with_suffix(".jsonl")), "--project", title,
                       cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    out_dir = tmp_path / "out"
    # qa-feedback's manifest of this title does not exist (the push kept chat-arena's): pull refuses that first
    # unless asked for a blind-only pull, which then meets the other protocol's task keys.
    code, out, err = cli(label_studio, "pull", "qa-feedback", "--project", title, "-o", str(out_dir), "--blind-only",
                         cwd=tmp_path)  # fmt: skip
    assert code == 1, out
    assert one_line(err) == (f"Error: project {title!r} holds chat-arena tasks (task 1), not qa-feedback: "
                             "give the protocol it was pushed as")  # fmt: skip
    code, out, err = cli(label_studio, "validate", "qa-feedback", "--project", title, cwd=tmp_path)
    assert code == 1, out
    assert one_line(err).startswith(f"Error: no manifest of project {title!r} was found or given: it alone says "
                                    "which system is shown where")  # fmt: skip
    assert not out_dir.exists() and [p.name for p in tmp_path.iterdir() if "annols-pull" in p.name] == []
