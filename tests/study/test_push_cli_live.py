"""Against the real server: a re-push never changes a project's overlap unasked, and push's progress
on a terminal ends its line."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from annols.labelstudio.client import LabelStudioClient
from tests.conftest import LiveServer
from tests.study.test_push_pull import cli, study  # noqa: F401  (the fixture)


def overlap(client: LabelStudioClient, title: str) -> int:
    project = client.find_project(title)
    assert project is not None
    return int(client.project(project.id)["maximum_annotations"])


def test_a_re_push_with_another_overlap_is_refused_unless_asked(
    label_studio: LiveServer, client: LabelStudioClient, study: tuple[Path, Path], tmp_path: Path  # noqa: F811
) -> None:
    definition, inputs = study
    title = "overlap kept"
    push = ["push", str(definition), str(inputs), "--project", title]
    code, _, err = cli(label_studio, *push, "--overlap", "2", cwd=tmp_path)
    assert code == 0, err
    manifest = tmp_path / ".annols" / "overlap-kept.manifest.jsonl"
    before = manifest.read_bytes()

    code, out, err = cli(label_studio, *push, "--overlap", "3", cwd=tmp_path)
    assert code == 1 and out == ""
    assert err == (f"Error: project {title!r} asks for 2 annotator(s) per task, this push for 3 (--overlap): "
                   "nothing was sent; add --change-overlap to change the project's overlap, or give --overlap 2 "
                   "to keep it\n")  # fmt: skip
    assert overlap(client, title) == 2 and manifest.read_bytes() == before

    code, out, err = cli(label_studio, *push, "--overlap", "2", cwd=tmp_path)  # the same overlap: nothing to say
    assert code == 0 and "overlap" not in err and out.splitlines()[-1] == "created 0, already present 40, total 40"
    code, out, err = cli(label_studio, *push, cwd=tmp_path)  # none given: the project's stays
    assert code == 0 and overlap(client, title) == 2

    code, out, err = cli(label_studio, *push, "--overlap", "3", "--change-overlap", cwd=tmp_path)
    assert code == 0, err
    assert f"Changed the overlap of project {title!r} from 2 to 3\n" in err
    assert overlap(client, title) == 3


def test_push_progress_on_a_terminal_ends_its_line(
    label_studio: LiveServer, study: tuple[Path, Path], tmp_path: Path  # noqa: F811
) -> None:
    definition, inputs = study
    env = {**os.environ, "LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": label_studio.api_key}
    command = [sys.executable, "-m", "annols.cli", "push", str(definition), str(inputs), "--project", "progress tty"]
    terminal, child = pty.openpty()  # stderr a terminal: the bar is drawn in place, as a user sees it
    process = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=child)
    os.close(child)
    drawn = b""
    while True:
        try:
            chunk = os.read(terminal, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        drawn += chunk
    os.close(terminal)
    out, _ = process.communicate(timeout=600)
    assert process.returncode == 0, drawn
    assert b"Importing 40 task(s)" in drawn and b"100%" in drawn
    assert drawn.endswith(b"\n"), drawn[-80:]  # nothing left on an unfinished line after the command
    assert out.decode().splitlines()[-1] == "created 40, already present 0, total 40"


def test_push_progress_off_a_terminal_is_one_whole_line(
    label_studio: LiveServer, study: tuple[Path, Path], tmp_path: Path  # noqa: F811
) -> None:
    definition, inputs = study
    code, _, err = cli(label_studio, "push", str(definition), str(inputs), "--project", "progress pipe", cwd=tmp_path)
    assert code == 0, err
    assert err == "Importing 40 task(s)\n"
