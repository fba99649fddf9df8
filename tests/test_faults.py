"""Faults between annols and Label Studio, against the real server: a proxy failing requests
(tests/faultproxy.py), a creation made twice, wrong and expired keys, a URL that is not the
API, a full disk. The tests assert the server's end state (projects by title, tasks per
key) and the files, never how long anything took."""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import jwt
import pytest
from click.testing import CliRunner

from annols.cli import main
from annols.definition import blinding
from annols.errors import AnnolsError, ServerError
from annols.labelstudio.client import CREATION_MARK, TIMEOUT_ENV, LabelStudioClient, timeout_from_env
from annols.labelstudio.incremental import STATE_FILE
from annols.study.manifest import manifest_path
from tests.conftest import QA_DEV, LiveServer
from tests.faultproxy import LABEL_STUDIO_ERROR_PAGE, FaultProxy
from tests.labelstudio.test_server import personal_access_token

DEV = QA_DEV
EXAMPLE = Path(__file__).resolve().parent.parent / "annols" / "protocols" / "examples" / "input" / "qa-feedback.json"
SUMMARY_FLAWS = EXAMPLE.with_name("summary-flaws.jsonl")
CRITIC = EXAMPLE.with_name("summary-flaws-critic.jsonl")
RETRY_NOTICE = re.compile(r"^.+; (retrying|listing the tasks that arrived|exporting again) in \d+ s \(\d/5\)$")


def cli(url: str, api_key: str, *args: str, cwd: Path) -> tuple[int, str, str]:
    old = os.getcwd()
    os.chdir(cwd)
    try:
        result = CliRunner(env={"LABEL_STUDIO_URL": url, "LABEL_STUDIO_API_KEY": api_key}).invoke(main, list(args))
    finally:
        os.chdir(old)
    return result.exit_code, result.stdout, result.stderr


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file below ``folder`` (hidden ones too), by relative path; a pull's record of when it was
    made (pull-state.json: the server's clock) aside, the one file two pulls of one state differ in."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != STATE_FILE}  # fmt: skip


def projects_titled(client: LabelStudioClient, title: str) -> list[dict]:  # type: ignore[type-arg]
    return client._titled(title)


def keys_of(client: LabelStudioClient, project_id: int) -> list[str]:
    return [meta.get(blinding.META_KEY) for _, meta in client.task_meta(project_id)]


def annotate(client: LabelStudioClient, project_id: int, count: int) -> None:
    """``count`` annotations by the admin, on the first tasks: something for a pull to carry."""
    me = client.whoami()["id"]
    for task_id, _ in list(client.task_meta(project_id))[:count]:
        value = {"start": 0, "end": 3, "text": "abc", "labels": ["Irrelevant"]}
        result = [{"id": "c1", "from_name": "errors", "to_name": "prediction", "type": "labels", "value": value}]
        client.create_annotation(task_id, result, completed_by=me, lead_time=4.0)


@pytest.fixture
def proxy(label_studio: LiveServer) -> Iterator[FaultProxy]:
    with FaultProxy(label_studio.url) as p:
        yield p


@pytest.fixture(scope="module")
def earlier_pull(label_studio: LiveServer, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """A small annotated project and a good pull of it: what a failed pull must leave as it was."""
    work = tmp_path_factory.mktemp("earlier")
    title = "faults earlier pull"
    code, _, err = cli(label_studio.url, label_studio.api_key, "push", "qa-feedback", str(DEV), "--project", title,
                       cwd=work)  # fmt: skip
    assert code == 0, err
    client = label_studio.client()
    project = client.find_project(title)
    assert project is not None
    annotate(client, project.id, 3)
    code, _, err = cli(label_studio.url, label_studio.api_key, "pull", "qa-feedback", "--project", title,
                       "-o", str(work / "pulled"), cwd=work)  # fmt: skip
    assert code == 0, err
    return title, work / "pulled"


def copy_of(earlier: Path, where: Path) -> Path:
    target = where / "results"
    shutil.copytree(earlier, target)
    return target


# --- one request in five failing -------------------------------------------------------------


@pytest.mark.parametrize("mode", ["502-before", "502-after", "drop-after"])
def test_push_and_pull_through_a_proxy_failing_one_request_in_five(
    mode: str, label_studio: LiveServer, client: LabelStudioClient, proxy: FaultProxy, tmp_path: Path
) -> None:
    title = f"faults 1 in 5 {mode}"
    # The 2nd request is the project's creation (the 1st looks the title up): it fails too.
    rule = proxy.fail(mode, every=5, start=2)
    code, out, err = cli(proxy.url, label_studio.api_key, "push", "qa-feedback", str(DEV), "--project", title,
                         "--batch-size", "50", cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    assert rule.hits[0] == "POST /api/projects/" and len(rule.hits) >= 3
    assert any(h.startswith("POST /api/projects/") and h.endswith("/import?return_task_ids=true") for h in rule.hits)
    assert out.splitlines()[-1] == "created 500, already present 0, total 500"
    notices = [line for line in err.splitlines() if RETRY_NOTICE.match(line)]
    assert notices and all(line.startswith(("Label Studio answered 502", "the connection")) for line in notices)

    (project,) = projects_titled(client, title)  # one project, whatever happened to its creation
    keys = keys_of(client, project["id"])
    assert len(keys) == 500 and len(set(keys)) == 500
    annotate(client, project["id"], 4)

    proxy.fail()
    clean, faulty = tmp_path / "clean", tmp_path / "faulty"
    code, _, err = cli(proxy.url, label_studio.api_key, "pull", "qa-feedback", "--project", title, "-o", str(clean),
                       cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    rule = proxy.fail(mode, every=5)
    code, out, err = cli(proxy.url, label_studio.api_key, "pull", "qa-feedback", "--project", title, "-o", str(faulty),
                         cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    assert len(rule.hits) >= 2 and "Counts match the server: 500 tasks, 4 annotations, 0 skipped." in out
    assert snapshot(faulty) == snapshot(clean)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == [".annols"]  # no staging left


EXPORT = re.compile(r"^/api/projects/\d+/export\?")


@pytest.mark.parametrize(
    ("mode", "every", "export_only"),
    [("cut", 2, True), ("cut-unannounced", 2, True), ("cut-unannounced", 5, False), ("cut", 5, False)],
)
def test_a_body_cut_short_is_fetched_again(
    mode: str,
    every: int,
    export_only: bool,
    label_studio: LiveServer,
    proxy: FaultProxy,
    earlier_pull: tuple[str, Path],
    tmp_path: Path,
) -> None:
    title, earlier = earlier_pull
    shutil.copytree(earlier.parent / ".annols", tmp_path / ".annols")  # the push's manifest: pull unblinds from it
    match = (lambda method, path: bool(EXPORT.match(path))) if export_only else None
    rule = proxy.fail(mode, every=every, match=match)
    code, _, err = cli(proxy.url, label_studio.api_key, "pull", "qa-feedback", "--project", title,
                       "-o", str(tmp_path / "out"), cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    assert any(EXPORT.match(h.split(" ", 1)[1]) for h in rule.hits) or not export_only
    assert rule.hits and any(RETRY_NOTICE.match(line) for line in err.splitlines())
    # Byte for byte the earlier pull, but for the URL annols was given.
    pulled = snapshot(tmp_path / "out")
    pulled["project.json"] = pulled["project.json"].replace(proxy.url.encode(), label_studio.url.encode())
    assert pulled == snapshot(earlier)


def test_a_truncated_export_never_replaces_a_good_one(
    label_studio: LiveServer, proxy: FaultProxy, earlier_pull: tuple[str, Path], tmp_path: Path
) -> None:
    title, earlier = earlier_pull
    out = copy_of(earlier, tmp_path)
    before = snapshot(out)
    # Every export comes back cut short without a Content-Length: it never ends as a JSON array.
    rule = proxy.fail("cut-unannounced", every=1, match=lambda method, path: bool(EXPORT.match(path)))
    notices: list[str] = []
    client = LabelStudioClient(proxy.url, label_studio.api_key, on_notice=notices.append, retries=2, delay=0.05)
    from annols import protocols
    from annols.study import pull as pull_lib

    with pytest.raises(ServerError) as info:
        pull_lib.pull(client, protocols.load("qa-feedback"), title, out,
                      manifest=manifest_path(earlier.parent / ".annols", title))  # the study's, where it was pushed
    project = client.find_project(title)
    assert project is not None
    assert str(info.value) == f"exporting project {project.id}: the export from {proxy.url} was cut short"
    assert len(rule.hits) == 3 and len(notices) == 2 and notices[0].startswith("the export was cut short; retrying")
    assert snapshot(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["results"]


def test_a_creation_the_server_runs_three_times_ends_as_one_project(
    label_studio: LiveServer, client: LabelStudioClient, proxy: FaultProxy, tmp_path: Path
) -> None:
    """The shape of SQLite's replays: the whole POST runs again, and one answer comes back."""
    title = "faults creation replayed"
    rule = proxy.fail("replay", every=1, match=lambda method, path: method == "POST" and path == "/api/projects/")
    code, out, err = cli(proxy.url, label_studio.api_key, "push", "qa-feedback", str(DEV), "--project", title,
                         cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    assert rule.hits == ["POST /api/projects/"]
    (project,) = projects_titled(client, title)
    removed = re.search(r"^Removed 2 empty duplicate project\(s\) this push made \((\d+), (\d+)\): "
                        r"Label Studio ran the creation again$", err, re.M)  # fmt: skip
    assert removed is not None, err
    assert int(removed[1]) == project["id"] + 1 and int(removed[2]) == project["id"] + 2
    assert out.splitlines()[-1] == "created 500, already present 0, total 500"
    keys = keys_of(client, project["id"])
    assert len(keys) == 500 and len(set(keys)) == 500


def test_an_import_the_server_runs_three_times_leaves_every_task_once(
    label_studio: LiveServer, client: LabelStudioClient, proxy: FaultProxy, tmp_path: Path
) -> None:
    """SQLite's replays of an import that was committed: the project holds three copies of
    the batch's tasks; the push keeps the first of each key, annotated ones untouched."""
    title = "faults import replayed"
    code, _, err = cli(label_studio.url, label_studio.api_key, "push", "qa-feedback", str(DEV), "--project", title,
                       "--batch-size", "200", cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    project = client.find_project(title)
    assert project is not None
    annotate(client, project.id, 2)  # earlier tasks, annotated: never touched
    more = tmp_path / "more.json"
    records = json.loads(DEV.read_text("utf-8"))
    for r in records:
        r["question"] += " (again)"
    more.write_text(json.dumps(records), encoding="utf-8")
    rule = proxy.fail("replay", start=2, every=100, match=lambda method, path: "/import" in path)
    code, out, err = cli(proxy.url, label_studio.api_key, "push", "qa-feedback", str(DEV), str(more),
                         "--project", title, "--batch-size", "200", cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    assert len(rule.hits) == 1  # the second of three imports ran three times
    removed = "Removed 400 task(s) made twice (a replayed import, or another push of this input at the same moment)"
    assert f"{removed}: each is there once" in err.splitlines()
    assert out.splitlines()[-1] == "created 500, already present 500, total 1000"
    keys = keys_of(client, project.id)
    assert len(keys) == 1000 and len(set(keys)) == 1000
    assert client.project(project.id)["total_annotations_number"] == 2
    code, out, err = cli(label_studio.url, label_studio.api_key, "push", "qa-feedback", str(DEV), str(more),
                         "--project", title, cwd=tmp_path)  # fmt: skip
    assert code == 0 and out.splitlines()[-1] == "created 0, already present 1000, total 1000"  # the manifest holds


def test_a_slow_server_is_not_silence(
    label_studio: LiveServer, proxy: FaultProxy, earlier_pull: tuple[str, Path], tmp_path: Path
) -> None:
    title, earlier = earlier_pull
    proxy.fail("delay", every=1, match=lambda method, path: bool(EXPORT.match(path)), delay=3)
    notices: list[str] = []
    client = LabelStudioClient(proxy.url, label_studio.api_key, on_notice=notices.append, heartbeat=0.5)
    from annols import protocols
    from annols.study import pull as pull_lib
    from annols.study.manifest import manifest_path

    manifest = manifest_path(earlier.parent / ".annols", title)  # the push's: pull unblinds from it
    pull_lib.pull(client, protocols.load("qa-feedback"), title, tmp_path / "out", manifest=manifest)
    pulled = snapshot(tmp_path / "out")
    pulled["project.json"] = pulled["project.json"].replace(proxy.url.encode(), label_studio.url.encode())
    assert pulled == snapshot(earlier)
    project = client.find_project(title)
    assert project is not None
    assert notices and notices[0] == f"Label Studio is still exporting project {project.id} (0.5 s so far)"


def test_two_pushes_creating_one_title_at_once_end_with_one_project(
    label_studio: LiveServer, client: LabelStudioClient, proxy: FaultProxy, tmp_path: Path
) -> None:
    """Both look the title up before either has made it (the proxy holds each creation back), so
    both create; the lowest id is kept and the other push removes its own, still empty. That
    push, from another folder, has no manifest of the project kept, so it cannot know its task
    keys (made with the secret in the first push's manifest): it is refused, nothing sent."""
    title = "faults two coordinators"
    proxy.fail("delay", every=1, match=lambda method, path: method == "POST" and path == "/api/projects/", delay=3)
    env = {**os.environ, "LABEL_STUDIO_URL": proxy.url, "LABEL_STUDIO_API_KEY": label_studio.api_key}
    pushes = []
    for i in range(2):
        folder = tmp_path / f"coordinator{i}"
        folder.mkdir()
        command = [sys.executable, "-m", "annols.cli", "push", "qa-feedback", str(EXAMPLE), "--project", title]
        pushes.append(subprocess.Popen(command, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       text=True))  # fmt: skip
    outcomes = [p.communicate(timeout=300) for p in pushes]
    assert sorted(p.returncode for p in pushes) == [0, 1], outcomes
    (project,) = projects_titled(client, title)
    # The later push removes its own; the embedded server may also have replayed a creation
    # (SQLite's "database is locked" replay), which the push that made it removes as well.
    lost = [err for _, err in outcomes if "this push made" in err and "another push made it first" in err]
    assert len(lost) == 1, outcomes
    assert lost[0].splitlines()[-1].startswith("Error: ") and "annols manifest import" in lost[0].splitlines()[-1]
    assert all("Removed" not in line or line.endswith(("another push made it first", "ran the creation again"))
               for _, err in outcomes for line in err.splitlines()), outcomes  # fmt: skip
    assert all(f"/projects/{project['id']}/data" in out for out, _ in outcomes)
    assert CREATION_MARK in project["description"]
    assert len(keys_of(client, project["id"])) == 1  # the example's one task, once


# --- one line for each failure a user can meet -------------------------------------------------


def assert_one_line(code: int, out: str, err: str, *secrets: str) -> str:
    assert code == 1 and out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), err
    assert "unexpected" not in err and "report it" not in err and "Traceback" not in err
    assert not any(s in err for s in secrets)
    return lines[0]


def test_an_expired_personal_access_token_says_so_and_how_to_get_a_new_one(
    label_studio: LiveServer, earlier_pull: tuple[str, Path], tmp_path: Path
) -> None:
    title, earlier = earlier_pull
    out = copy_of(earlier, tmp_path)
    expired = datetime(2026, 1, 2, 3, 4, tzinfo=UTC)
    # Shaped as Label Studio's own refresh tokens; the SDK reads the expiry before sending it.
    issued = expired - timedelta(days=1)
    claims = {"token_type": "refresh", "exp": int(expired.timestamp()), "iat": int(issued.timestamp()),
              "jti": "0123456789abcdef", "user_id": 1}  # fmt: skip
    token = jwt.encode(claims, "not-the-server-key-" + "x" * 16, algorithm="HS256")
    code, stdout, err = cli(label_studio.url, token, "pull", "qa-feedback", "--project", title, "-o", str(out),
                            cwd=tmp_path)  # fmt: skip
    line = assert_one_line(code, stdout, err, token)
    assert line == (
        "Error: connecting: the personal access token expired on 2026-01-02 03:04 UTC; create a new one in "
        "Label Studio under Account & Settings and pass it with --api-key or LABEL_STUDIO_API_KEY"
    )
    assert snapshot(out) == snapshot(earlier)


def test_a_revoked_personal_access_token_says_so(
    label_studio: LiveServer, earlier_pull: tuple[str, Path], tmp_path: Path
) -> None:
    title, earlier = earlier_pull
    out = copy_of(earlier, tmp_path)
    old = personal_access_token(label_studio)
    assert personal_access_token(label_studio) != old  # a new one, and the old one revoked
    code, stdout, err = cli(label_studio.url, old, "pull", "qa-feedback", "--project", title, "-o", str(out),
                            cwd=tmp_path)  # fmt: skip
    line = assert_one_line(code, stdout, err, old)
    assert f"Label Studio at {label_studio.url} refused the personal access token (401" in line
    assert line.endswith("revoked, rotated or expired); create a new one in Label Studio under Account & Settings "
                         "and pass it with --api-key or LABEL_STUDIO_API_KEY")  # fmt: skip
    assert snapshot(out) == snapshot(earlier)


@contextlib.contextmanager
def other_web_server(folder: Path) -> Iterator[str]:
    """A web server that is not Label Studio (Python's file server), on loopback."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
            super().__init__(*args, directory=str(folder), **kwargs)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_url_that_is_not_a_label_studio_api_asks_for_the_base_url(
    label_studio: LiveServer, earlier_pull: tuple[str, Path], tmp_path: Path
) -> None:
    title, earlier = earlier_pull
    out = copy_of(earlier, tmp_path)
    (tmp_path / "site").mkdir()
    with other_web_server(tmp_path / "site") as other:
        for url in (f"{label_studio.url}/label-studio", other):
            code, stdout, err = cli(url, label_studio.api_key, "pull", "qa-feedback", "--project", title,
                                    "-o", str(out), cwd=tmp_path)  # fmt: skip
            line = assert_one_line(code, stdout, err, label_studio.api_key)
            start = f"Error: looking up project {title!r}: {url} does not answer as a Label Studio API ("
            assert line.startswith(start)
            assert line.endswith("); is this the base URL, without a path?")
    assert snapshot(out) == snapshot(earlier)


def test_an_html_error_page_gives_its_status_and_title(
    label_studio: LiveServer, proxy: FaultProxy, earlier_pull: tuple[str, Path], tmp_path: Path
) -> None:
    title, earlier = earlier_pull
    out = copy_of(earlier, tmp_path)
    proxy.fail("page-500", every=1, match=lambda method, path: bool(EXPORT.match(path)))
    # from where the study was pushed: its manifest is there
    code, stdout, err = cli(proxy.url, label_studio.api_key, "pull", "qa-feedback", "--project", title,
                            "-o", str(out), cwd=earlier.parent)  # fmt: skip
    line = assert_one_line(code, stdout, err, label_studio.api_key)
    assert re.fullmatch(
        rf"Error: exporting project \d+: Label Studio at {re.escape(proxy.url)} answered 500, "
        r"an error page titled '500 Internal Server Error'",
        line,
    )
    assert snapshot(out) == snapshot(earlier)

    # A proxy that answers 502 to everything: retried, then the same one line.
    proxy.fail("502-before", every=1)
    notices: list[str] = []
    client = LabelStudioClient(proxy.url, label_studio.api_key, on_notice=notices.append, retries=2, delay=0.05)
    with pytest.raises(ServerError) as info:
        client.users()
    page = "an error page titled '502 Bad Gateway'"
    assert str(info.value) == f"listing users: Label Studio at {proxy.url} answered 502, {page}"
    assert notices == [
        "Label Studio answered 502; retrying in 0.05 s (1/2)",
        "Label Studio answered 502; retrying in 0.1 s (2/2)",
    ]


# --- a full disk ------------------------------------------------------------------------------


@contextlib.contextmanager
def small_disk(where: Path, size: int) -> Iterator[tuple[Path, dict[str, object]]]:
    """A folder on a tmpfs of ``size`` bytes, and how to run annols so that it is full.

    Where the machine allows no mount (not root), the folder is a plain one and annols runs
    with a file size limit instead (RLIMIT_FSIZE): its writes then fail in the kernel, as on
    a full disk, with EFBIG instead of ENOSPC.
    """
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                             capture_output=True, check=False).returncode == 0  # fmt: skip
    try:
        if mounted:
            yield where, {}
        else:

            def limit() -> None:
                signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
                resource.setrlimit(resource.RLIMIT_FSIZE, (size // 2, size // 2))

            yield where, {"preexec_fn": limit}
    finally:
        if mounted:
            subprocess.run(["umount", str(where)], check=False)


def run_annols(server: LiveServer, *args: str, cwd: Path, **how: object) -> tuple[int, str, str]:
    env = {**os.environ, "LABEL_STUDIO_URL": server.url, "LABEL_STUDIO_API_KEY": server.api_key}
    done = subprocess.run([sys.executable, "-m", "annols.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, check=False, **how)  # type: ignore[call-overload]  # fmt: skip
    return done.returncode, done.stdout, done.stderr


def test_a_full_disk_names_the_file_and_leaves_the_pull_folder_as_it_was(
    label_studio: LiveServer, earlier_pull: tuple[str, Path], tmp_path: Path
) -> None:
    title, earlier = earlier_pull
    size = sum(len(b) for b in snapshot(earlier).values())
    # Room for the earlier pull and half of another: the new one cannot be written beside it.
    with small_disk(tmp_path / "disk", (size * 3 // 2 // 4096 + 4) * 4096) as (disk, how):
        out = copy_of(earlier, disk)
        before = snapshot(out)
        code, stdout, err = run_annols(label_studio, "pull", "qa-feedback", "--project", title, "-o", str(out),
                                       cwd=tmp_path, **how)  # fmt: skip
        line = assert_one_line(code, stdout, err, label_studio.api_key)
        assert re.fullmatch(
            rf"Error: cannot write {re.escape(str(out))}/[\w.-]+: (No space left on device|File too large); "
            rf"{re.escape(str(out))} is as it was: free some space and pull again",
            line,
        ), line
        assert snapshot(out) == before
        assert [p.name for p in disk.iterdir()] == ["results"]  # nothing left beside it


def test_a_push_whose_manifest_cannot_be_written_says_what_was_imported(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path
) -> None:
    title = "faults manifest on a full disk"
    with small_disk(tmp_path / "disk", 16384) as (disk, how):
        code, stdout, err = run_annols(label_studio, "push", "qa-feedback", str(DEV), "--project", title,
                                       "--manifest-dir", str(disk), cwd=tmp_path, **how)  # fmt: skip
        # Space freed: the manifest as push kept it before the first import (its header, with the
        # secret the keys sent are made with), moved where the re-run looks.
        shutil.copytree(disk, tmp_path / ".annols", ignore=shutil.ignore_patterns("*.tmp*", ".*"))
    assert code == 1 and "Traceback" not in err
    line = err.splitlines()[-1]  # after the progress bar
    assert line.startswith(f"Error: imported 500 task(s) into project {title!r} ({label_studio.url}/projects/")
    assert re.search(r"but the manifest could not be written \(cannot write .*faults-manifest-on-a-full-disk"
                     r"\.manifest\.jsonl: (No space left on device|File too large)\); free some space and re-run "
                     r"the push: it resumes from the server and sends nothing twice$", line)  # fmt: skip
    code, stdout, err = run_annols(label_studio, "push", "qa-feedback", str(DEV), "--project", title, cwd=tmp_path)
    assert code == 0, err
    assert stdout.splitlines()[-1] == "created 0, already present 500, total 500"
    (project,) = projects_titled(client, title)
    assert len(set(keys_of(client, project["id"]))) == 500


# --- users through a failing proxy --------------------------------------------------------------


@pytest.mark.parametrize("mode", ["502-after", "drop-after"])
def test_users_add_and_list_through_a_failing_proxy(
    mode: str, label_studio: LiveServer, client: LabelStudioClient, proxy: FaultProxy, tmp_path: Path
) -> None:
    emails = [f"{mode}-{i}@faults.example.org" for i in range(3)]
    (tmp_path / "pw").write_text("correct horse battery\n", encoding="utf-8")
    rule = proxy.fail(mode, every=3)
    code, out, err = cli(proxy.url, label_studio.api_key, "users", "add", *emails, "--password-file",
                         str(tmp_path / "pw"), cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    assert len(rule.hits) >= 3 and any(h.startswith("POST /user/signup/") for h in rule.hits)
    assert [line.split(" (")[0] for line in out.splitlines()] == [f"created {e}" for e in emails]
    assert all("can log in with the password given" in line for line in out.splitlines())
    users = client.users()
    assert all(e in users for e in emails)
    from annols.labelstudio import users as users_lib

    for e in emails:
        with users_lib.logged_in(label_studio.url, e, "correct horse battery"):
            pass

    code, out, err = cli(proxy.url, label_studio.api_key, "users", "list", cwd=tmp_path)
    assert code == 0, err
    assert {line.split("\t")[0] for line in out.splitlines()} == set(users)


# --- writes answered by Label Studio's error page, or too late ------------------------------------
# After every comparison with the earlier pull: these add users, and a pull lists the users.


def creations(method: str, path: str) -> bool:
    return method == "POST" and path == "/api/projects/"


def imports(method: str, path: str) -> bool:
    return method == "POST" and "/import?" in path


@pytest.mark.parametrize("mode", ["page-500", "page-500-after"])
def test_a_creation_answered_by_label_studios_error_page_is_checked_and_makes_one_project(
    mode: str, label_studio: LiveServer, client: LabelStudioClient, proxy: FaultProxy, tmp_path: Path
) -> None:
    """Label Studio's own HTML 500 page, as its middleware gives on SQLite's lock before the view
    runs ("page-500": nothing made) or as any 500 after the project was made (the answer lost):
    the projects of the title are looked up, and the creation is sent again only if it is not there."""
    title = f"faults creation {mode}"
    rule = proxy.fail(mode, every=1000, match=creations, page=LABEL_STUDIO_ERROR_PAGE)
    code, out, err = cli(proxy.url, label_studio.api_key, "push", "qa-feedback", str(EXAMPLE), "--project", title,
                         cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    assert rule.hits == ["POST /api/projects/"]
    made = mode == "page-500-after"
    assert rule.seen == (1 if made else 2)  # sent again only when it was not made
    retried = "Label Studio answered 500 to the project's creation, which it did not make; retrying in 1 s (1/5)"
    assert [line for line in err.splitlines() if RETRY_NOTICE.match(line)] == ([] if made else [retried])
    (project,) = projects_titled(client, title)
    assert out.splitlines()[0] == f"Created project {title!r}: {proxy.url}/projects/{project['id']}/data"
    assert out.splitlines()[-1] == "created 1, already present 0, total 1"
    assert len(keys_of(client, project["id"])) == 1


def test_a_timed_out_import_is_completed_by_the_key_check_and_counted_exactly(
    label_studio: LiveServer, client: LabelStudioClient, proxy: FaultProxy, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """The server makes the second of three batches, with their annotations, and its answer comes
    after the client stopped waiting: the keys are listed, nothing is sent again, and the push
    counts the batch's tasks and annotations."""
    title = "faults import timed out"
    timeout = 20  # long enough for a loaded machine's other answers; the held one waits three times as long
    monkeypatch.setenv(TIMEOUT_ENV, str(timeout))
    rule = proxy.fail("delay-after", start=2, every=1000, match=imports, delay=3 * timeout)
    code, out, err = cli(proxy.url, label_studio.api_key, "push", "qa-feedback", str(DEV), "--project", title,
                         "--with-annotations", "--batch-size", "200", cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    assert len(rule.hits) == 1 and rule.seen == 3  # three batches, none sent twice
    notice = f"Label Studio did not answer in {timeout} s to an import; listing the tasks that arrived in 1 s (1/5)"
    assert [line for line in err.splitlines() if RETRY_NOTICE.match(line)] == [notice]
    assert out.splitlines()[-1] == "created 500, already present 0, total 500 (500 annotations)"
    (project,) = projects_titled(client, title)
    keys = keys_of(client, project["id"])
    assert len(keys) == 500 and len(set(keys)) == 500
    assert client.project(project["id"])["total_annotations_number"] == 500


@pytest.mark.parametrize("mode", ["page-500", "page-500-after"])
def test_an_import_answered_by_an_error_page_sends_only_what_is_missing_and_counts_its_predictions(
    mode: str, label_studio: LiveServer, client: LabelStudioClient, proxy: FaultProxy, tmp_path: Path
) -> None:
    """The second of three one-task imports with a prediction: refused before the server saw it
    ("page-500"), it is sent again; made and its answer lost ("page-500-after"), it is not."""
    title = f"faults import {mode}"
    rule = proxy.fail(mode, start=2, every=1000, match=imports, page=LABEL_STUDIO_ERROR_PAGE)
    code, out, err = cli(proxy.url, label_studio.api_key, "push", "summary-flaws", str(SUMMARY_FLAWS),
                         "--predictions", str(CRITIC), "--project", title, "--batch-size", "1",
                         cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    made = mode == "page-500-after"
    assert len(rule.hits) == 1 and rule.seen == (3 if made else 4)
    notice = "Label Studio answered 500 to an import; listing the tasks that arrived in 1 s (1/5)"
    assert [line for line in err.splitlines() if RETRY_NOTICE.match(line)] == [notice]
    assert out.splitlines()[-1] == "created 3, already present 0, total 3 (3 predictions)"
    (project,) = projects_titled(client, title)
    tasks = client.export_tasks(project["id"])
    assert len({t["meta"][blinding.META_KEY] for t in tasks}) == len(tasks) == 3
    assert [len(client.task_predictions(t["id"])) for t in tasks] == [1, 1, 1]


def test_the_client_timeout_is_a_number_of_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TIMEOUT_ENV, raising=False)
    assert timeout_from_env() == 600
    monkeypatch.setenv(TIMEOUT_ENV, "2.5")
    assert timeout_from_env() == 2.5
    for bad in ("soon", "0", "-1", "inf", "nan"):
        monkeypatch.setenv(TIMEOUT_ENV, bad)
        with pytest.raises(AnnolsError) as info:
            timeout_from_env()
        assert str(info.value) == f"ANNOLS_TIMEOUT must be a number of seconds above 0, not {bad!r}"


def creating_users(method: str, path: str) -> bool:
    return method == "POST" and path.startswith(("/api/users", "/user/signup"))


@pytest.mark.parametrize("mode", ["page-500", "page-500-after"])
@pytest.mark.parametrize("passwords", [False, True], ids=["api", "signup"])
def test_users_made_while_label_studio_answers_its_error_page_are_looked_up_before_sending_again(
    mode: str, passwords: bool, label_studio: LiveServer, client: LabelStudioClient, proxy: FaultProxy,
    tmp_path: Path,
) -> None:  # fmt: skip
    """Every second creation request is answered by Label Studio's HTML 500 page, before the server
    saw it ("page-500": each account's first, sent again) or after it made the account
    ("page-500-after": the first and third, found)."""
    emails = [f"{mode}-{'signup' if passwords else 'api'}-{i}@faults.example.org" for i in range(3)]
    (tmp_path / "pw").write_text("correct horse battery\n", encoding="utf-8")
    rule = proxy.fail(mode, every=2, match=creating_users, page=LABEL_STUDIO_ERROR_PAGE)
    args = ["--password-file", str(tmp_path / "pw")] if passwords else []
    code, out, err = cli(proxy.url, label_studio.api_key, "users", "add", *emails, *args, cwd=tmp_path)
    assert code == 0, err
    made = mode == "page-500-after"
    assert (len(rule.hits), rule.seen) == ((2, 3) if made else (3, 6))  # sent again only when not made
    doing = "signup of" if passwords else "creation of user"
    retried = [f"Label Studio answered 500 to the {doing} {e}, which it did not make; retrying in 1 s (1/5)"
               for e in emails]  # fmt: skip
    assert [line for line in err.splitlines() if RETRY_NOTICE.match(line)] == ([] if made else retried)
    users = client.users()
    how = "can log in with the password given" if passwords else "no password: cannot log in"
    assert out.splitlines() == [f"created {e} (id {users[e]}; {how})" for e in emails]
    if passwords:
        from annols.labelstudio import users as users_lib

        for e in emails:
            with users_lib.logged_in(label_studio.url, e, "correct horse battery"):
                pass


# --- the embedded SQLite server under annotators' load -------------------------------------------

ANNOTATOR = """
import json, os, random, sys, time
import httpx
url, key, stop, tasks, me = sys.argv[1:6]
tasks, saved = json.loads(tasks), 0
value = {"start": 0, "end": 3, "text": "abc", "labels": ["Irrelevant"]}
with httpx.Client(base_url=url, headers={"Authorization": f"Token {key}"}, timeout=3600) as web:
    while not os.path.exists(stop):  # a save and an edit of it about every second: faster than people
        result = [{"id": f"r{saved}", "from_name": "errors", "to_name": "prediction", "type": "labels", "value": value}]
        r = web.post(f"/api/tasks/{random.choice(tasks)}/annotations/",
                     json={"result": result, "completed_by": int(me), "lead_time": 30})
        if r.status_code == 201:
            saved += 1
            web.patch(f"/api/annotations/{r.json()['id']}/", json={"lead_time": 31})
        time.sleep(random.uniform(0, 2))
print(saved)
"""


def test_three_pushes_while_three_annotators_save_make_three_projects(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path
) -> None:
    """Real processes: three saving annotations all along (Label Studio's SQLite write lock, and its
    middleware replaying requests that hit it), three pushes and then a pull."""
    code, _, err = run_annols(label_studio, "push", "qa-feedback", str(DEV), "--project", "faults annotated",
                              cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    annotated = client.find_project("faults annotated")
    assert annotated is not None
    tasks = [task_id for task_id, _ in client.task_meta(annotated.id)][:50]
    me = client.whoami()["id"]
    stop = tmp_path / "stop"
    annotators = [
        subprocess.Popen([sys.executable, "-c", ANNOTATOR, label_studio.url, label_studio.api_key, str(stop),
                          json.dumps(tasks), str(me)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(3)
    ]  # fmt: skip
    try:
        env = {**os.environ, "LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": label_studio.api_key}
        titles = [f"faults busy push {i}" for i in range(3)]
        pushes = []
        for i, title in enumerate(titles):
            (tmp_path / str(i)).mkdir()
            command = [sys.executable, "-m", "annols.cli", "push", "qa-feedback", str(DEV), "--project", title]
            pushes.append(subprocess.Popen(command, cwd=tmp_path / str(i), env=env, stdout=subprocess.PIPE,
                                           stderr=subprocess.PIPE, text=True))  # fmt: skip
        outcomes = [p.communicate(timeout=1800) for p in pushes]
        assert [p.returncode for p in pushes] == [0, 0, 0], outcomes
        for (out, _), title in zip(outcomes, titles, strict=True):
            assert out.splitlines()[-1] == "created 500, already present 0, total 500"
            (project,) = projects_titled(client, title)
            keys = keys_of(client, project["id"])
            assert len(keys) == 500 and len(set(keys)) == 500

        # A pull while they go on saving: its counts are those of a moment of the server's.
        code, out, err = run_annols(label_studio, "pull", "qa-feedback", "--project", "faults annotated",
                                    "-o", str(tmp_path / "pulled"), cwd=tmp_path)  # fmt: skip
        assert code == 0, err
        assert re.search(r"^Counts match the server: 500 tasks, [1-9]\d* annotations, 0 skipped\.$", out, re.M)
    finally:
        stop.touch()
        saved = [int(a.communicate(timeout=120)[0] or 0) for a in annotators]
    assert all(n > 0 for n in saved), saved  # the load was real
