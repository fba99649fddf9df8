"""Isolated mode for a team (docker-compose.isolate.yml), tested without Docker.

The override file is checked against the Compose specification and against
docker-compose.yml: every annotator's app carries the app's hardening setting by setting,
has a database, a data volume, a host and a token of its own, and its own nginx. Then the
stack runs natively: Debian's PostgreSQL with the databases the init script creates (run as
the postgres image runs it), and two pip-installed Label Studio instances with exactly the
environment of ``app-annotator-1`` and ``app-annotator-2`` (only the database address moved
to loopback). ``push --isolate`` with an instances file that names each instance's URL and
token variable, an annotation by each annotator, and ``pull --isolate`` merge them.
"""

from __future__ import annotations

import copy
import csv
import json
import os
import secrets
import subprocess
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from annols.cli import main
from annols.errors import ServerError
from annols.labelstudio import users
from annols.labelstudio.server import HARDENING, free_port
from annols.study import isolate
from tests.conftest import ROOT
from tests.definition.test_definition import MINIMAL
from tests.labelstudio.test_incremental import vote
from tests.labelstudio.test_team import (
    COMPOSE,
    DEPLOYMENT_SETTINGS,
    FILLED,
    SCHEMA,
    MissingVariable,
    TeamStack,
    postgres,
    read_env_file,
    referenced_variables,
    resolve,
    start_label_studio,
    stop_label_studio,
)

ISOLATE = ROOT / "docker-compose.isolate.yml"
ISOLATE_ENV = ROOT / ".env.isolate.example"
DATABASES = ROOT / "scripts" / "compose" / "isolate-databases.sql"
ISOLATE_FILLED = {**FILLED, "ISOLATE_HOST_1": "http://h:8081", "ISOLATE_HOST_2": "http://h:8082",
                  "ISOLATE_API_KEY_1": "k1", "ISOLATE_API_KEY_2": "k2"}  # fmt: skip
ANNOTATORS = ("app-annotator-1", "app-annotator-2")


def load_isolate() -> dict[str, Any]:
    return dict(yaml.safe_load(ISOLATE.read_text(encoding="utf-8")))


def merged(env: dict[str, str]) -> dict[str, Any]:
    """docker-compose.yml with the override on top, interpolated: services merged key by key, as compose does
    for the keys this override uses (a service's mappings merged, its lists appended)."""
    base, override = resolve(yaml.safe_load(COMPOSE.read_text(encoding="utf-8")), env), resolve(load_isolate(), env)
    out = copy.deepcopy(base)
    for name, service in override["services"].items():
        target = out["services"].setdefault(name, {})
        for key, value in service.items():
            if isinstance(value, list) and isinstance(target.get(key), list):
                target[key] = target[key] + value
            elif isinstance(value, dict) and isinstance(target.get(key), dict):
                target[key] = {**target[key], **value}
            else:
                target[key] = value
    out["volumes"] = {**out.get("volumes", {}), **override.get("volumes", {})}
    return out


def test_isolate_file_follows_the_compose_specification() -> None:
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8")))
    assert [e.message for e in validator.iter_errors(load_isolate())] == []
    assert [e.message for e in validator.iter_errors(merged(ISOLATE_FILLED))] == []
    broken = load_isolate()
    broken["services"]["nginx-annotator-1"]["depends_on"]["app-annotator-1"]["condition"] = "service_ready"
    assert not validator.is_valid(broken)


def test_each_annotator_has_the_apps_hardening_and_a_database_volume_host_and_token_of_their_own() -> None:
    services = merged(ISOLATE_FILLED)["services"]
    app = services["app"]
    seen: dict[str, set[str]] = {"POSTGRE_NAME": set(), "LABEL_STUDIO_HOST": set(), "LABEL_STUDIO_USER_TOKEN": set()}
    created = DATABASES.read_text(encoding="utf-8")
    for n, name in enumerate(ANNOTATORS, start=1):
        service = services[name]
        env = service["environment"]
        for key, value in HARDENING.items():
            assert str(env.get(key)) == value, f"{name} sets {key}={env.get(key)!r}, annols {value!r}"
        assert set(env) - set(HARDENING) == DEPLOYMENT_SETTINGS
        for key in set(env) - set(HARDENING) - set(seen):  # the rest of the deployment as the shared app's
            assert env[key] == app["environment"][key] or key == "CSRF_TRUSTED_ORIGINS", (name, key)
        assert env["CSRF_TRUSTED_ORIGINS"] == env["LABEL_STUDIO_HOST"]
        for key, values in seen.items():
            assert env[key] not in values, f"{name} shares {key} with another instance"
            values.add(env[key])
        assert f"CREATE DATABASE {env['POSTGRE_NAME']};" in created
        assert service["image"] == app["image"] and service["command"] == app["command"]
        assert service["depends_on"] == {"db": {"condition": "service_healthy"}}
        assert service["volumes"] == [f"labelstudio-data-annotator-{n}:/label-studio/data"]
        front = services[f"nginx-annotator-{n}"]
        assert front["environment"]["APP_HOST"] == name
        assert front["depends_on"] == {name: {"condition": "service_healthy"}}
        assert front["ports"] == [f"0.0.0.0:{8080 + n}:8085"]
    assert services["db"]["volumes"][-1].endswith(":/docker-entrypoint-initdb.d/isolate-databases.sql:ro")
    assert (ROOT / services["db"]["volumes"][-1].split(":")[0]).resolve() == DATABASES.resolve()


def test_isolate_env_example_lists_its_settings_and_compose_refuses_without_them() -> None:
    variables = referenced_variables(ISOLATE.read_text(encoding="utf-8"))
    shared = set(referenced_variables(COMPOSE.read_text(encoding="utf-8")))
    example_text = ISOLATE_ENV.read_text(encoding="utf-8")
    example = read_env_file(ISOLATE_ENV)
    optional = {line.split("=")[0][2:] for line in example_text.splitlines() if line.startswith("# ISOLATE_")}
    assert set(variables) - shared == set(example) | optional
    assert all(value == "" for value in example.values())
    for required in example:
        with pytest.raises(MissingVariable, match=required):
            resolve(load_isolate(), {k: v for k, v in ISOLATE_FILLED.items() if k != required})
    for key, value in ISOLATE_FILLED.items():  # no secret written in the file itself
        if key.startswith("ISOLATE_API_KEY"):
            assert value not in ISOLATE.read_text(encoding="utf-8")


# --- the stack, natively ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def isolated_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, list[TeamStack]]]:
    """One PostgreSQL with the init script's databases and a Label Studio per annotator on it."""
    workdir = tmp_path_factory.mktemp("team-isolate")
    ports = [free_port(), free_port()]
    values = {
        **FILLED, "POSTGRES_PASSWORD": secrets.token_urlsafe(24), "LABEL_STUDIO_ADMIN_EMAIL": "admin@team.example.org",
        "LABEL_STUDIO_ADMIN_PASSWORD": secrets.token_urlsafe(24),
        **{f"ISOLATE_HOST_{n}": f"http://127.0.0.1:{p}" for n, p in enumerate(ports, start=1)},
        **{f"ISOLATE_API_KEY_{n}": secrets.token_hex(20) for n in (1, 2)},
    }  # fmt: skip
    services = merged(values)["services"]
    db_env = {k: str(v) for k, v in services["db"]["environment"].items()}
    postgres("install")
    pg = dict(line.split("=", 1) for line in postgres("start", env=db_env).split())
    # What the postgres image does with /docker-entrypoint-initdb.d/*.sql: psql as POSTGRES_USER.
    result = subprocess.run(
        [f"{pg['PGBIN']}/psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", pg["PGHOST"], "-p", pg["PGPORT"],
         "-U", db_env["POSTGRES_USER"], "-d", db_env["POSTGRES_DB"], "-f", str(DATABASES)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    stacks: list[TeamStack] = []
    try:
        assert result.returncode == 0, result.stderr
        for n, port in enumerate(ports, start=1):
            app_env = {k: str(v) for k, v in services[f"app-annotator-{n}"]["environment"].items()}
            data_dir = workdir / f"label-studio-{n}"
            data_dir.mkdir()
            stacks.append(TeamStack(
                url=f"http://127.0.0.1:{port}", api_key=values[f"ISOLATE_API_KEY_{n}"],
                admin_email=values["LABEL_STUDIO_ADMIN_EMAIL"], workdir=workdir, data_dir=data_dir,
                log=workdir / f"label-studio-{n}.log", app_env=app_env, db_env=db_env, pg=pg, port=port,
            ))  # fmt: skip
        for stack in stacks:
            start_label_studio(stack, timeout=float(os.environ.get("ANNOLS_TEST_SERVER_TIMEOUT", 300)))
        yield workdir, stacks
    finally:
        for stack in stacks:
            stop_label_studio(stack)
        postgres("stop", pg["PGDATA"])


def test_two_instances_on_one_postgresql_push_annotate_pull(isolated_stack: tuple[Path, list[TeamStack]]) -> None:
    workdir, stacks = isolated_stack
    emails = ["ann@team.example.org", "ben@team.example.org"]
    (workdir / "instances.toml").write_text("".join(
        f'[[instance]]\nannotator = "{e}"\nurl = "{s.url}"\napi_key_env = "ISOLATE_API_KEY_{n}"\n\n'
        for n, (e, s) in enumerate(zip(emails, stacks, strict=True), start=1)), encoding="utf-8")  # fmt: skip
    (workdir / "headlines.toml").write_text(MINIMAL, encoding="utf-8")
    records = [{"headline_1": f"A {i}", "headline_2": f"B {i}", "systems": ["s1", "s2"], "id": i} for i in range(3)]
    (workdir / "study.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    passwords = [secrets.token_urlsafe(12) for _ in emails]
    (workdir / "passwords.txt").write_text("\n".join(passwords) + "\n", encoding="utf-8")
    env: dict[str, str | None] = {f"ISOLATE_API_KEY_{n}": s.api_key for n, s in enumerate(stacks, start=1)}
    env.update(LABEL_STUDIO_URL=None, LABEL_STUDIO_API_KEY=None, ANNOLS_DATA_DIR=None)
    old = os.getcwd()
    os.chdir(workdir)
    try:
        runner = CliRunner(env=env)
        pushed = runner.invoke(main, ["push", "headlines.toml", "study.jsonl", "--project", "team isolated",
                                      "--isolate", "instances.toml", "--password-file", "passwords.txt"])  # fmt: skip
        assert pushed.exit_code == 0, pushed.stderr + pushed.stdout
        # The databases are apart: each instance holds one project, and only its own annotator besides the admin.
        for email, password, stack in zip(emails, passwords, stacks, strict=True):
            with users.logged_in(stack.url, email, password) as session:
                token = session.get("api/current-user/token").json()["token"]
            api = httpx.Client(base_url=stack.url, headers={"Authorization": f"Token {token}"}, timeout=120)
            (project,) = api.get("/api/projects/").json()["results"]
            assert {u["email"] for u in api.get("/api/users/").json()} == {email, stack.admin_email}
            for task in api.get("/api/tasks/", params={"project": project["id"]}).json()["tasks"]:
                assert api.post(f"/api/tasks/{task['id']}/annotations/", json={"result": vote("1")}).status_code == 201
        for other, stack in zip(reversed(emails), stacks, strict=True):
            with pytest.raises(ServerError), users.logged_in(stack.url, other, passwords[emails.index(other)]):
                pass
        pulled = runner.invoke(main, ["pull", "headlines.toml", "--project", "team isolated", "-o", "out",
                                      "--isolate", "instances.toml", "--strict"])  # fmt: skip
        assert pulled.exit_code == 0, pulled.stderr + pulled.stdout
    finally:
        os.chdir(old)
    with open(workdir / "out" / "results.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert sorted({r["annotator"] for r in rows}) == emails and len(rows) == 6
    written = [p.read_text(encoding="utf-8", errors="replace") for p in (workdir / ".annols").rglob("*") if p.is_file()]
    assert written and not [s for s in env.values() if s and any(s in text for text in written)]  # no token kept
    instances = isolate.read_instances(workdir / "instances.toml")
    assert [replace(i, url="") for i in instances] == [isolate.Instance(e, "", None, f"ISOLATE_API_KEY_{n}")
                                                       for n, e in enumerate(emails, start=1)]  # fmt: skip
