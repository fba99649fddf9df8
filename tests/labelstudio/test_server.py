"""The local server's lifecycle, and personal access tokens, against real Label Studio processes."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from annols.cli import main
from annols.labelstudio import server
from annols.labelstudio.client import LabelStudioClient
from tests.conftest import LiveServer
from tests.definition.test_definition import MINIMAL


def personal_access_token(live: LiveServer) -> str:
    """Log in as the admin in a browser-like session and create a personal access token (revoking the one there is)."""
    password = server.admin_password(live.data_dir)
    assert password
    with httpx.Client(base_url=live.url, follow_redirects=False) as web:
        web.get("/user/login/")
        response = web.post(
            "/user/login/",
            data={"email": server.ADMIN_EMAIL, "password": password, "csrfmiddlewaretoken": web.cookies["csrftoken"]},
            headers={"Referer": f"{live.url}/user/login/"},
        )
        assert response.status_code == 302, "admin login failed"
        headers = {"X-CSRFToken": web.cookies["csrftoken"], "Referer": live.url}
        response = web.post("/api/token/", headers=headers)
        if response.status_code == 409:  # one token per user: revoke it (listed without its signature), then create
            for listed in web.get("/api/token/").json():
                web.post("/api/token/blacklist/", headers=headers, json={"refresh": listed["token"]}).raise_for_status()
            response = web.post("/api/token/", headers=headers)
        response.raise_for_status()
        return str(response.json()["token"])


def test_personal_access_token_works_for_push_and_pull(
    label_studio: LiveServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = personal_access_token(label_studio)
    assert token.count(".") == 2  # a JWT, not a legacy token
    assert LabelStudioClient(label_studio.url, token).whoami()["email"] == server.ADMIN_EMAIL

    definition = tmp_path / "mine.toml"
    definition.write_text(MINIMAL, encoding="utf-8")
    inputs = tmp_path / "in.jsonl"
    inputs.write_text(json.dumps({"headline_1": "a", "headline_2": "b"}) + "\n", encoding="utf-8")
    runner = CliRunner(env={"LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": token})
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(main, ["push", str(definition), str(inputs), "--project", "with a PAT"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "created 1, already present 0, total 1"
    result = runner.invoke(main, ["pull", str(definition), "--project", "with a PAT", "-o", "out"])
    assert result.exit_code == 0, result.stderr
    assert token not in result.stdout + result.stderr


def test_start_twice_status_and_stop_end_the_whole_process_group(label_studio: LiveServer, tmp_path: Path) -> None:
    # A second server on a copy of the session's database: a restart, so no migrations to wait for.
    data_dir = tmp_path / "second"
    data_dir.mkdir()
    with (
        sqlite3.connect(label_studio.data_dir / server.DATABASE_FILE) as source,
        sqlite3.connect(data_dir / server.DATABASE_FILE) as copy,
    ):
        source.backup(copy)
    port = server.free_port()
    runner = CliRunner()
    args = ["--data-dir", str(data_dir)]

    result = runner.invoke(main, ["server", "start", "--port", str(port), *args])
    assert result.exit_code == 0, result.stderr
    url = f"http://127.0.0.1:{port}"
    assert f"Label Studio is running at {url}" in result.stdout
    state = server.read_state(data_dir)
    assert state is not None and server.healthy(url)

    assert f"annols commands use this server with --data-dir {data_dir}, or after `export ANNOLS_DATA_DIR=" in (
        result.stdout
    )

    result = runner.invoke(main, ["server", "start", "--port", str(port), *args])
    assert result.exit_code == 0 and f"Already running at {url} (pid {state.pid})" in result.stdout
    result = runner.invoke(main, ["server", "start", *args])  # no --port: the one running is fine
    assert result.exit_code == 0 and f"Already running at {url} (pid {state.pid})" in result.stdout
    result = runner.invoke(main, ["server", "start", "--port", str(port + 1), *args])
    assert result.exit_code == 1 and result.stderr.splitlines()[-1] == (
        f"Error: Label Studio already runs at {url} (pid {state.pid}, data in {state.data_dir}), not on port "
        f"{port + 1}: stop it first (annols server stop) to move it, or leave out --port"
    )
    result = runner.invoke(main, ["server", "status", *args])
    assert result.exit_code == 0 and f"Running at {url}" in result.stdout
    # The server started is the server used: ANNOLS_DATA_DIR points every command at it.
    env = {"ANNOLS_DATA_DIR": str(data_dir), "LABEL_STUDIO_URL": None, "LABEL_STUDIO_API_KEY": None}
    result = runner.invoke(main, ["server", "status"], env=env)
    assert result.exit_code == 0 and f"Running at {url}" in result.stdout
    result = runner.invoke(main, ["users", "list"], env=env)
    assert result.exit_code == 0 and server.ADMIN_EMAIL in result.stdout, result.stderr

    result = runner.invoke(main, ["server", "stop", *args])
    assert result.exit_code == 0 and result.stdout == "Stopped.\n"
    with pytest.raises(ProcessLookupError):
        os.killpg(state.pid, 0)  # nothing of the group is left, the forked server included
    assert not server.port_in_use(port)
    result = runner.invoke(main, ["server", "status", *args])
    assert result.exit_code == 1 and "Not running" in result.stdout
    result = runner.invoke(main, ["server", "stop", *args])
    assert result.exit_code == 0 and "Not running" in result.stdout


def test_start_on_a_busy_port_is_a_one_line_error(label_studio: LiveServer, tmp_path: Path) -> None:
    port = int(label_studio.url.rsplit(":", 1)[1])
    result = CliRunner().invoke(main, ["server", "start", "--port", str(port), "--data-dir", str(tmp_path / "x")])
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        f"Error: port {port} on 127.0.0.1 is already in use by another program: choose another with --port"
    )


def test_the_data_folder_is_made_owner_only_before_the_server_starts(tmp_path: Path) -> None:
    """Its database holds every text, answer and account: 0700 even when it was made readable before."""
    import socket

    folder = tmp_path / "data"
    folder.mkdir()
    folder.chmod(0o755)
    with socket.socket() as taken:  # the start stops at the busy port, after the folder is made private
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(server.ServerError, match="already in use"):
            server.start(folder, port=taken.getsockname()[1])
    assert folder.stat().st_mode & 0o777 == 0o700
    fresh = tmp_path / "new" / "data"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(server.ServerError):
            server.start(fresh, port=taken.getsockname()[1])
    assert fresh.stat().st_mode & 0o777 == 0o700
