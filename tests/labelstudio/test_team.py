"""The team deployment, tested without Docker.

docker-compose.yml is read and checked against the Compose specification's JSON schema
(tests/data/compose/). Then the environment its ``app`` service gets, interpolated from
a .env made from .env.example the way docs/howto/team.md says, is started natively: Debian's
PostgreSQL (scripts/postgres, installed if missing) with the ``db`` service's settings,
and the pip-installed Label Studio of the pinned version with exactly the app's
environment, only the database address moved from the compose network (``db:5432``) to
loopback. Every command of the team page's "Run it for a team" section then runs against
it, in order: ``docker compose`` lines through a shim that runs ``exec db`` and ``cp``
natively and leaves ``up``/``ps``/``pull`` to the fixture; ``annols`` lines as they are,
with the study's protocol and input swapped for a small pairwise definition. Between
push and pull, three annotators log in with the passwords ``annols users add`` set and
annotate as themselves.
"""

from __future__ import annotations

import contextlib
import copy
import csv
import gzip
import io
import json
import os
import re
import secrets
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

import click
import httpx
import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from annols.cli import main
from annols.errors import AnnolsError, InputError, ServerError
from annols.labelstudio import users
from annols.labelstudio.client import LabelStudioClient
from annols.labelstudio.server import HARDENING, free_port, healthy, port_in_use
from tests.conftest import DATA, ROOT
from tests.definition.test_definition import MINIMAL
from tests.labelstudio.test_hardening import assert_signup_needs_the_invite_link
from tests.study.test_push_pull import shown_by_task

COMPOSE = ROOT / "docker-compose.yml"
ENV_EXAMPLE = ROOT / ".env.example"
SCHEMA = DATA / "compose" / "compose-spec.json"
POSTGRES_SCRIPT = ROOT / "scripts" / "postgres"
TEAM_DOC = ROOT / "docs" / "howto" / "team.md"
# The page's sections, each run by the test named beside it.
DOC_SECTIONS = {
    "Start it": "team_stack fixture",
    "First login": "test_first_login_connects_annols_with_the_env_file",
    "Create annotators": "annotators fixture",
    "Push a study with overlap 3": "pilot fixture",
    "Pull": "test_pull_after_three_annotators",
    "Back up": "test_backup_with_pg_dump_and_restore",
    "Upgrade": "test_restart_on_the_same_database_keeps_everything",
}
SYSTEMS = ("bart", "pegasus")
TASKS = 4


# --- Compose files, the way docker compose reads them ------------------------------------

_REFERENCE = re.compile(
    r"\$(?:(?P<escaped>\$)"
    r"|\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-?+])(?P<arg>(?:[^{}]|\{[^{}]*\})*))?\}"
    r"|(?P<plain>[A-Za-z_][A-Za-z0-9_]*))"
)


class MissingVariable(Exception):
    """What compose reports for ${VAR:?message} (and ${VAR?message}) and then refuses to start."""


def interpolate(text: str, env: Mapping[str, str]) -> str:
    """Compose-spec interpolation: $$, $VAR, ${VAR}, ${VAR:-default}, ${VAR-default},
    ${VAR:?error}, ${VAR?error}, ${VAR:+alternative}, ${VAR+alternative}; nested in defaults."""

    def replace(m: re.Match[str]) -> str:
        if m.group("escaped"):
            return "$"
        name = m.group("braced") or m.group("plain")
        value = env.get(name)
        op = m.group("op")
        if op is None:
            return value or ""
        unset = value is None or (op.startswith(":") and value == "")
        arg = m.group("arg")
        if op.endswith("-"):
            return interpolate(arg, env) if unset else str(value)
        if op.endswith("?"):
            if unset:
                raise MissingVariable(f"required variable {name} is missing a value: {interpolate(arg, env)}")
            return str(value)
        return "" if unset else interpolate(arg, env)

    return _REFERENCE.sub(replace, text)


def resolve(node: Any, env: Mapping[str, str]) -> Any:
    """Every string of a compose document interpolated, as `docker compose config` does."""
    if isinstance(node, str):
        return interpolate(node, env)
    if isinstance(node, list):
        return [resolve(item, env) for item in node]
    if isinstance(node, dict):
        return {key: resolve(value, env) for key, value in node.items()}
    return node


def referenced_variables(text: str) -> dict[str, str | None]:
    """Variable name -> its operator (None for a plain reference) in a compose file's text."""
    found: dict[str, str | None] = {}
    for m in _REFERENCE.finditer(text):
        name = m.group("braced") or m.group("plain")
        if name:
            found.setdefault(name, m.group("op"))
            if m.group("op") and "?" in m.group("op"):
                found[name] = m.group("op")
    return found


def read_env_file(path: Path) -> dict[str, str]:
    """A .env file as compose reads it: KEY=VALUE lines, # comments, optional quotes."""
    env = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, _, value = line.removeprefix("export ").partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        else:
            value = value.split(" #")[0].strip()
        env[key.strip()] = value
    return env


def load_compose() -> dict[str, Any]:
    return dict(yaml.safe_load(COMPOSE.read_text(encoding="utf-8")))


def filled_env(example: Path, values: Mapping[str, str]) -> str:
    """The text of .env.example with its empty values filled in, as a user edits it."""
    lines = []
    for line in example.read_text(encoding="utf-8").splitlines():
        key = line.partition("=")[0]
        if line.endswith("=") and key in values:
            line += values[key]
        lines.append(line)
    return "\n".join(lines) + "\n"


# --- The how-to page (docs/howto/team.md) ---------------------------------------------------------------------


def team_doc() -> str:
    """The how-to page of the team stack."""
    return TEAM_DOC.read_text(encoding="utf-8")


def doc_blocks() -> dict[str, list[str]]:
    """Subsection title -> its bash blocks."""
    blocks: dict[str, list[str]] = {}
    for part in re.split(r"^## ", team_doc(), flags=re.M)[1:]:
        title, _, body = part.partition("\n")
        blocks[title.strip()] = re.findall(r"```bash\n(.*?)```", body, flags=re.S)
    return blocks


def doc_block(title: str, index: int = 0) -> str:
    return doc_blocks()[title][index]


DOCKER_SHIM = r"""
_known_service() {
    case " $SHIM_SERVICES " in *" $1 "*) return 0 ;; esac
    echo "docker shim: no service '$1' in docker-compose.yml" >&2; return 1
}
docker() {
    [ "${1:-}" = compose ] || { echo "docker shim: expected 'docker compose', got: docker $*" >&2; return 2; }
    shift
    local sub="${1:-}"
    shift || true
    case "$sub" in
        up|ps|pull)
            local arg
            for arg in "$@"; do
                case "$arg" in -*) ;; *) _known_service "$arg" || return 2 ;; esac
            done
            echo "docker shim: 'docker compose $sub $*' is the test fixture's job" >&2 ;;
        exec)
            [ "${1:-}" = -T ] || { echo "docker shim: exec in a pipe needs -T" >&2; return 2; }
            [ "${2:-}" = db ] || { echo "docker shim: exec only into db" >&2; return 2; }
            shift 2
            POSTGRES_USER="$SHIM_POSTGRES_USER" POSTGRES_DB="$SHIM_POSTGRES_DB" \
                PGHOST="$SHIM_PGHOST" PGPORT="$SHIM_PGPORT" "$@" ;;
        cp)
            [ "${1:-}" = app:/label-studio/data ] || { echo "docker shim: cp only from app's data" >&2; return 2; }
            cp -R "$SHIM_LS_DATA" "$2" ;;
        *) echo "docker shim: unexpected 'docker compose $sub'" >&2; return 2 ;;
    esac
}
"""


# --- The native stack -------------------------------------------------------------------


@dataclass
class TeamStack:
    url: str
    api_key: str
    admin_email: str
    workdir: Path  # where the team page's commands run: .env, passwords.txt, backups
    data_dir: Path
    log: Path
    app_env: dict[str, str]  # exactly what Label Studio was started with, from the compose file
    db_env: dict[str, str]
    pg: dict[str, str]  # PGDATA, PGHOST, PGPORT, PGBIN from scripts/postgres
    port: int
    process: subprocess.Popen[bytes] | None = None

    def client(self) -> LabelStudioClient:
        return LabelStudioClient(self.url, self.api_key)

    def secrets(self) -> list[str]:
        env = read_env_file(self.workdir / ".env")
        return [env[k] for k in ("POSTGRES_PASSWORD", "LABEL_STUDIO_ADMIN_PASSWORD", "LABEL_STUDIO_API_KEY")]

    def run_doc(
        self, block: str, *, env: Mapping[str, str] | None = None, connected: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Run a docs/howto/team.md block in bash (set -euo pipefail) in the work folder, docker shimmed."""
        shell_env = {k: v for k, v in os.environ.items() if not k.startswith("LABEL_STUDIO_")}
        shell_env.update(
            PATH=os.pathsep.join([str(Path(sys.executable).parent), self.pg["PGBIN"], os.environ.get("PATH", "")]),
            SHIM_SERVICES=" ".join(load_compose()["services"]),
            SHIM_POSTGRES_USER=self.db_env["POSTGRES_USER"],
            SHIM_POSTGRES_DB=self.db_env["POSTGRES_DB"],
            SHIM_PGHOST=self.pg["PGHOST"],
            SHIM_PGPORT=self.pg["PGPORT"],
            SHIM_LS_DATA=str(self.data_dir),
        )
        if connected:
            shell_env.update(LABEL_STUDIO_URL=self.url, LABEL_STUDIO_API_KEY=self.api_key)
        shell_env.update(env or {})
        result = subprocess.run(
            ["bash", "-c", "set -euo pipefail\n" + DOCKER_SHIM + block],
            cwd=self.workdir, env=shell_env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert result.returncode == 0, f"docs/howto/team.md block failed:\n{block}\n--- stderr:\n{result.stderr}"
        for secret in self.secrets():
            assert secret not in result.stdout + result.stderr
        return result


def native_app_env(app_env: Mapping[str, str], pg_port: str) -> dict[str, str]:
    """The process environment: ours without Label Studio settings, then the app's, then loopback."""
    ours = {
        k: v for k, v in os.environ.items() if not k.startswith(("LABEL_STUDIO_", "HEARTEX_", "POSTGRE", "DJANGO_DB"))
    }
    return {**ours, **app_env, "POSTGRE_HOST": "127.0.0.1", "POSTGRE_PORT": pg_port}


def start_label_studio(stack: TeamStack, timeout: float) -> None:
    """`label-studio start` with the app's settings, in its own process group, until /health answers."""
    command = [
        sys.executable, "-m", "label_studio.server", "start", "--no-browser",
        "-p", str(stack.port), "--internal-host", "127.0.0.1", "--data-dir", str(stack.data_dir),
    ]  # fmt: skip
    with open(stack.log, "ab") as log:
        stack.process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, cwd=stack.data_dir,
            env=native_app_env(stack.app_env, stack.pg["PGPORT"]), start_new_session=True,
        )  # fmt: skip
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if stack.process.poll() is not None:
            pytest.fail(f"Label Studio exited ({stack.process.returncode}):\n{_tail(stack.log)}")
        if healthy(stack.url):
            return
        time.sleep(1.0)
    stop_label_studio(stack)
    pytest.fail(f"Label Studio did not answer on {stack.url} within {timeout:.0f} s:\n{_tail(stack.log)}")


def stop_label_studio(stack: TeamStack) -> None:
    """End the process group we started (the wrapper and the server it forked), nothing else."""
    process, stack.process = stack.process, None
    if process is None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        process.poll()
        try:
            os.killpg(process.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.2)
    else:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)


def _tail(path: Path, lines: int = 30) -> str:
    return "\n".join(path.read_text("utf-8", errors="replace").splitlines()[-lines:])


def postgres(*args: str, env: Mapping[str, str] | None = None) -> str:
    result = subprocess.run(
        [str(POSTGRES_SCRIPT), *args], env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=900
    )
    assert result.returncode == 0, f"scripts/postgres {' '.join(args)} failed:\n{result.stderr}"
    return result.stdout


def psql(stack: TeamStack, database: str, sql: str, user: str = "postgres") -> str:
    """SQL over the cluster's local socket (trusted, as inside the db container)."""
    result = subprocess.run(
        [f"{stack.pg['PGBIN']}/psql", "-X", "-tA", "-v", "ON_ERROR_STOP=1", "-h", stack.pg["PGHOST"],
         "-p", stack.pg["PGPORT"], "-U", user, "-d", database, "-c", sql],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def team_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TeamStack]:
    """PostgreSQL + Label Studio with the compose file's settings, after the team page's "Start it"."""
    workdir = tmp_path_factory.mktemp("team")
    (workdir / ".env.example").write_bytes(ENV_EXAMPLE.read_bytes())
    port = free_port()
    url = f"http://127.0.0.1:{port}"

    # "Start it": copy .env.example, make the secrets with the team page's own commands.
    shell_env = {k: v for k, v in os.environ.items() if not k.startswith("LABEL_STUDIO_")}
    result = subprocess.run(
        ["bash", "-c", "set -euo pipefail\n" + DOCKER_SHIM + doc_block("Start it")],
        cwd=workdir, env={**shell_env, "SHIM_SERVICES": " ".join(load_compose()["services"])},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    with pytest.raises(MissingVariable):  # .env as copied: compose refuses to start
        resolve(load_compose(), read_env_file(workdir / ".env"))
    made = result.stdout.split()
    assert len(made) == 2 and re.fullmatch(r"[A-Za-z0-9_-]{32}", made[0]) and re.fullmatch(r"[0-9a-f]{40}", made[1])
    values = {
        "LABEL_STUDIO_HOST": url,
        "POSTGRES_PASSWORD": secrets.token_urlsafe(24),
        "LABEL_STUDIO_ADMIN_EMAIL": "admin@team.example.org",
        "LABEL_STUDIO_ADMIN_PASSWORD": made[0],
        "LABEL_STUDIO_API_KEY": made[1],
    }
    (workdir / ".env").write_text(filled_env(workdir / ".env", values), encoding="utf-8")

    resolved = resolve(load_compose(), read_env_file(workdir / ".env"))
    app_env = {k: str(v) for k, v in resolved["services"]["app"]["environment"].items()}
    db_env = {k: str(v) for k, v in resolved["services"]["db"]["environment"].items()}
    assert (app_env["POSTGRE_HOST"], app_env["POSTGRE_PORT"]) == ("db", "5432")  # all that moves to loopback

    postgres("install")
    pg = dict(line.split("=", 1) for line in postgres("start", env=db_env).split())
    data_dir = workdir.parent / f"{workdir.name}-label-studio"
    data_dir.mkdir()
    stack = TeamStack(
        url=url, api_key=values["LABEL_STUDIO_API_KEY"], admin_email=values["LABEL_STUDIO_ADMIN_EMAIL"],
        workdir=workdir, data_dir=data_dir, log=workdir.parent / f"{workdir.name}-label-studio.log",
        app_env=app_env, db_env=db_env, pg=pg, port=port,
    )  # fmt: skip
    try:
        start_label_studio(stack, timeout=float(os.environ.get("ANNOLS_TEST_SERVER_TIMEOUT", 300)))
        yield stack
    finally:
        stop_label_studio(stack)
        postgres("stop", pg["PGDATA"])


@dataclass(frozen=True)
class Annotators:
    passwords: dict[str, str]
    added: str  # what `annols users add` printed
    listed: str  # what `annols users list` printed


@pytest.fixture(scope="module")
def annotators(team_stack: TeamStack) -> Annotators:
    """The team page's "Create annotators", with a passwords.txt of one line per email."""
    block = doc_block("Create annotators")
    emails = shlex.split(block.splitlines()[0])[3:6]
    assert all("@" in e for e in emails)
    passwords = {e: secrets.token_urlsafe(12) for e in emails}
    (team_stack.workdir / "passwords.txt").write_text("".join(p + "\n" for p in passwords.values()))
    result = team_stack.run_doc(block)
    for password in passwords.values():
        assert password not in result.stdout + result.stderr
    added, _, listed = result.stdout.partition(f"{team_stack.admin_email}\t")
    return Annotators(passwords=passwords, added=added, listed=team_stack.admin_email + "\t" + listed)


@dataclass(frozen=True)
class Pilot:
    title: str
    project_id: int
    definition: Path
    inputs: Path
    annotations: int


def study(directory: Path) -> tuple[Path, Path]:
    """A small pairwise study with a user definition (the generic format)."""
    definition = directory / "headlines.toml"
    tie = '[[answers]]\ncode = "2"\n\n[[answers]]\ncode = "0"'
    definition.write_text(MINIMAL.replace('[[answers]]\ncode = "2"', tie))
    inputs = directory / "headlines.jsonl"
    with open(inputs, "w", encoding="utf-8") as f:
        for i in range(TASKS):
            record = {"headline_1": f"Headline {i} by bart: Brno 🎉", "headline_2": f"Headline {i} by pegasus",
                      "systems": list(SYSTEMS), "id": i}  # fmt: skip
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
    return definition, inputs


def as_study(block: str, definition: Path, inputs: Path) -> str:
    """The team page's push/pull lines with its protocol and input swapped for the test study."""
    assert "pairwise-aspects" in block
    return block.replace("pairwise-aspects", shlex.quote(str(definition))).replace(
        "human_evaluation/", shlex.quote(str(inputs))
    )


@pytest.fixture(scope="module")
def pilot(team_stack: TeamStack, annotators: Annotators) -> Pilot:
    """The team page's push with overlap 3, then every annotator logs in and annotates every task."""
    definition, inputs = study(team_stack.workdir)
    block = doc_block("Push a study with overlap 3")
    title = re.findall(r'--project "([^"]+)"', block)[0]
    result = team_stack.run_doc(as_study(block, definition, inputs))
    assert result.stdout.splitlines()[-1] == f"created {TASKS}, already present 0, total {TASKS}"

    admin = team_stack.client()
    project = admin.find_project(title)
    assert project is not None and admin.project(project.id)["maximum_annotations"] == 3
    tasks = admin.export_tasks(project.id)
    for email, password in annotators.passwords.items():
        with users.logged_in(team_stack.url, email, password) as session:
            token = session.get("api/current-user/token").json()["token"]
        own = LabelStudioClient(team_stack.url, token)
        assert own.whoami()["email"] == email
        manifest = shown_by_task(team_stack.workdir / ".annols", title)  # blinding is not on the server
        for task in tasks:
            shown = tuple(manifest[task["id"]]["systems"])
            choice = "1" if shown[0] == "bart" else "2"  # everyone prefers bart, wherever it is shown
            judgment = [{"id": "f", "from_name": "fluency", "to_name": "headline_1", "type": "choices",
                         "value": {"choices": [choice]}, "origin": "manual"}]  # fmt: skip
            own.create_annotation(task["id"], judgment, lead_time=2.5)
    return Pilot(title, project.id, definition, inputs, annotations=len(tasks) * len(annotators.passwords))


# --- The compose file, without a server ------------------------------------------------------

# Every required value of .env filled in.
FILLED = {"POSTGRES_PASSWORD": "x", "LABEL_STUDIO_HOST": "http://h:8080", "LABEL_STUDIO_ADMIN_EMAIL": "a@b.c",
          "LABEL_STUDIO_ADMIN_PASSWORD": "y", "LABEL_STUDIO_API_KEY": "z"}  # fmt: skip


def test_compose_file_follows_the_compose_specification() -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    compose = load_compose()
    assert [e.message for e in validator.iter_errors(compose)] == []
    assert [e.message for e in validator.iter_errors(resolve(compose, FILLED))] == []
    broken = copy.deepcopy(compose)
    broken["services"]["app"]["depends_on"]["db"]["condition"] = "service_ready"
    assert not validator.is_valid(broken)
    broken = copy.deepcopy(compose)
    broken["services"]["nginx"]["healthcheck"]["interval"] = 10
    assert not validator.is_valid(broken)


def test_compose_pins_label_studio_and_keeps_secrets_out() -> None:
    compose = load_compose()
    services = compose["services"]
    installed = version("label-studio")
    assert installed.startswith("1.23.")
    assert services["app"]["image"] == services["nginx"]["image"] == f"heartexlabs/label-studio:{installed}"
    assert re.fullmatch(r"postgres:\d+", services["db"]["image"])
    assert services["app"]["command"] == "label-studio-uwsgi" and services["nginx"]["command"] == "nginx"
    for name, service in services.items():
        for key, value in service.get("environment", {}).items():
            if re.search(r"PASSWORD$|USER_TOKEN$|SECRET", key):
                assert re.fullmatch(r"\$\{[A-Z_]+:\?[^}]+\}", str(value)), f"{name}.{key} must come from .env"
    text = COMPOSE.read_text(encoding="utf-8")
    assert 'LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN: "true"' in text


# The app's settings that are about this deployment (database, host, first admin, uploads),
# not hardening: every other setting of the app must be one of annols.labelstudio.server.HARDENING.
DEPLOYMENT_SETTINGS = {
    "DJANGO_DB", "POSTGRE_NAME", "POSTGRE_USER", "POSTGRE_PASSWORD", "POSTGRE_HOST", "POSTGRE_PORT",
    "LABEL_STUDIO_HOST", "CSRF_TRUSTED_ORIGINS", "LABEL_STUDIO_USERNAME", "LABEL_STUDIO_PASSWORD",
    "LABEL_STUDIO_USER_TOKEN", "LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN", "USE_NGINX_FOR_UPLOADS",
}  # fmt: skip


def test_compose_app_has_the_embedded_servers_hardening_setting_by_setting() -> None:
    app = resolve(load_compose(), FILLED)["services"]["app"]["environment"]
    for key, value in HARDENING.items():
        assert key in app, f"docker-compose.yml's app has no {key} (annols.labelstudio.server.HARDENING sets {value!r})"
        assert str(app[key]) == value, f"docker-compose.yml's app sets {key}={app[key]!r}, annols {value!r}"
    assert set(app) - set(HARDENING) == DEPLOYMENT_SETTINGS


def test_compose_refuses_to_start_without_a_password() -> None:
    compose = load_compose()
    example = read_env_file(ENV_EXAMPLE)
    complete = {k: "value-1234" for k in example} | {"LABEL_STUDIO_HOST": "http://h:8080"}
    resolve(compose, complete)
    for required in ("POSTGRES_PASSWORD", "LABEL_STUDIO_ADMIN_PASSWORD", "LABEL_STUDIO_API_KEY"):
        for env in ({k: v for k, v in complete.items() if k != required}, {**complete, required: ""}):
            with pytest.raises(MissingVariable, match=required):
                resolve(compose, env)
    with pytest.raises(MissingVariable):
        resolve(compose, example)  # .env.example copied unchanged


def test_env_example_lists_every_setting_with_no_secret_in_it() -> None:
    variables = referenced_variables(COMPOSE.read_text(encoding="utf-8"))
    example_text = ENV_EXAMPLE.read_text(encoding="utf-8")
    example = read_env_file(ENV_EXAMPLE)
    optional = set(re.findall(r"^# ([A-Z_]+)=", example_text, flags=re.M))
    assert set(variables) == set(example) | optional
    required = {name for name, op in variables.items() if op and "?" in op}
    assert required == set(example)
    assert all(value == "" for value in example.values())  # placeholders only
    defaults = dict(re.findall(r"^# ([A-Z_]+)=(.*)$", example_text, flags=re.M))
    for name, default in defaults.items():
        assert re.search(rf"\$\{{{name}:-{re.escape(default)}\}}", COMPOSE.read_text(encoding="utf-8")), name


def test_compose_waits_for_healthy_services_and_keeps_data_in_named_volumes() -> None:
    env = {"POSTGRES_PASSWORD": "pw", "LABEL_STUDIO_HOST": "http://annotate.example.org:8080",
           "LABEL_STUDIO_ADMIN_EMAIL": "a@b.c", "LABEL_STUDIO_ADMIN_PASSWORD": "y",
           "LABEL_STUDIO_API_KEY": "z"}  # fmt: skip
    compose = resolve(load_compose(), env)
    services = compose["services"]
    assert set(services) == {"db", "app", "nginx"}
    assert all(service["healthcheck"]["test"] for service in services.values())
    assert services["app"]["depends_on"] == {"db": {"condition": "service_healthy"}}
    assert services["nginx"]["depends_on"] == {"app": {"condition": "service_healthy"}}
    assert "8000" in services["app"]["expose"] and ":8000/health" in " ".join(services["app"]["healthcheck"]["test"])
    assert set(compose["volumes"]) == {"postgres-data", "labelstudio-data"}
    assert services["db"]["volumes"] == ["postgres-data:/var/lib/postgresql/data"]
    assert services["app"]["volumes"] == ["labelstudio-data:/label-studio/data"]
    assert [name for name, s in services.items() if "ports" in s] == ["nginx"]
    assert services["nginx"]["ports"] == ["0.0.0.0:8080:8085"]
    loopback = resolve(load_compose(), {**env, "LABEL_STUDIO_BIND_ADDRESS": "127.0.0.1", "LABEL_STUDIO_PORT": "80"})
    assert loopback["services"]["nginx"]["ports"] == ["127.0.0.1:80:8085"]
    db, app = services["db"]["environment"], services["app"]["environment"]
    assert (app["POSTGRE_NAME"], app["POSTGRE_USER"], app["POSTGRE_PASSWORD"]) == (
        db["POSTGRES_DB"], db["POSTGRES_USER"], db["POSTGRES_PASSWORD"],
    )  # fmt: skip
    assert (app["POSTGRE_NAME"], app["POSTGRE_USER"], app["POSTGRE_PASSWORD"]) == ("labelstudio", "labelstudio", "pw")
    assert app["POSTGRE_HOST"] in services and app["CSRF_TRUSTED_ORIGINS"] == app["LABEL_STUDIO_HOST"]


def test_interpolation_follows_the_compose_rules() -> None:
    env = {"SET": "v", "EMPTY": ""}
    cases = {
        "$$SET ${SET} $SET": "$SET v v",
        "${UNSET:-d} ${EMPTY:-d} ${EMPTY-d} ${UNSET-d}": "d d  d",
        "${SET:+alt} ${EMPTY:+alt} ${EMPTY+alt} ${UNSET+alt}": "alt  alt ",
        "${UNSET:-${SET}}": "v",
        "${EMPTY?fine}": "",
    }
    for text, expected in cases.items():
        assert interpolate(text, env) == expected, text
    for text in ("${UNSET:?say so}", "${EMPTY:?say so}", "${UNSET?say so}"):
        with pytest.raises(MissingVariable, match="say so"):
            interpolate(text, env)
    assert read_env_file(ENV_EXAMPLE)["POSTGRES_PASSWORD"] == ""


def test_readme_team_commands_exist_and_are_all_run_here() -> None:
    blocks = doc_blocks()
    assert {title for title, found in blocks.items() if found} == set(DOC_SECTIONS)
    services = set(load_compose()["services"])
    for line in (line for found in blocks.values() for block in found for line in block.splitlines()):
        for command in (part.strip() for part in line.split("|")):
            if command.startswith("annols "):
                _assert_cli_accepts(shlex.split(command)[1:])
            if command.startswith("docker compose "):
                words = shlex.split(command)
                sub, rest = words[2], [w for w in words[3:] if not w.startswith("-")]
                assert sub in {"up", "ps", "pull", "exec", "cp"}, command
                named = set(rest) if sub in ("up", "ps", "pull") else {rest[0].split(":")[0]}
                assert named <= services, command


def _assert_cli_accepts(args: list[str]) -> None:
    """The subcommands exist and every option is one of theirs (no server needed)."""
    command: click.Command = main
    while isinstance(command, click.Group):
        name = args.pop(0)
        assert name in command.commands, f"annols has no command {name!r}"
        command = command.commands[name]
    options = {opt for param in command.params for opt in param.opts}
    assert all(a in options for a in args if a.startswith("-")), args


# --- Accounts, without a server ------------------------------------------------------------


def test_password_file_one_per_email_or_one_shared() -> None:
    assert users.read_passwords(io.StringIO(" shared-pass \n\n"), "pw.txt", 3) == ["shared-pass"] * 3
    assert users.read_passwords(io.StringIO("first-pass\nsecond-pass\n"), "pw.txt", 2) == ["first-pass", "second-pass"]
    bad = {
        "": "pw.txt: no password in the file",
        "first-pass\n\nsecond-pass\n": "pw.txt, line 2: empty line",
        "first-pass\nsecond-pass\n": "pw.txt: 2 passwords for 3 email(s)",
        "first-pass\nshort\nthird-pass\n": "pw.txt, line 2: the password must be 8 to 128 characters long",
    }
    for text, message in bad.items():
        with pytest.raises(InputError) as info:
            users.read_passwords(io.StringIO(text), "pw.txt", 3)
        assert str(info.value).startswith(message)
        assert "short" not in str(info.value)


def test_emails_are_checked_before_anything_is_sent() -> None:
    assert users.check_emails([" Ann@Example.org", "ben@example.org"]) == ["ann@example.org", "ben@example.org"]
    with pytest.raises(AnnolsError, match="'ann' is not an email address"):
        users.check_emails(["ann"])
    with pytest.raises(AnnolsError, match=r"ann@example\.org is given twice"):
        users.check_emails(["ann@example.org", "ANN@example.org"])
    dead = f"http://127.0.0.1:{free_port()}"
    result = CliRunner(env={"LABEL_STUDIO_URL": dead, "LABEL_STUDIO_API_KEY": "k"}).invoke(
        main, ["users", "add", "not-an-email", "ben@example.org"]
    )
    assert result.exit_code == 1 and result.stderr == (
        "Error: 'not-an-email' is not an email address; give one address per argument\n"
    )


# --- Against the native stack --------------------------------------------------------------


def test_label_studio_runs_on_postgresql_with_the_compose_environment(team_stack: TeamStack) -> None:
    assert team_stack.client().whoami()["email"] == team_stack.admin_email  # the legacy token from .env
    sql = "SELECT count(*) FROM pg_tables WHERE tablename = 'project'"
    tables = psql(team_stack, team_stack.db_env["POSTGRES_DB"], sql)
    assert tables.strip() == "1"  # Label Studio's tables are in PostgreSQL, not SQLite
    assert not list(team_stack.data_dir.glob("*.sqlite3"))
    assert_signup_needs_the_invite_link(team_stack.url)


def test_first_login_connects_annols_with_the_env_file(team_stack: TeamStack) -> None:
    result = team_stack.run_doc(doc_block("First login"), connected=False)
    assert result.stdout.splitlines()[0].startswith(f"{team_stack.admin_email}\t1\t")
    page = httpx.get(f"{team_stack.url}/user/login/")
    assert page.status_code == 200
    with users.logged_in(team_stack.url, team_stack.admin_email, team_stack.secrets()[1]) as session:
        assert session.get("api/current-user/whoami").json()["email"] == team_stack.admin_email


def test_users_add_sets_passwords_people_can_log_in_with(team_stack: TeamStack, annotators: Annotators) -> None:
    emails = list(annotators.passwords)
    created = annotators.added.splitlines()
    assert [line.split(" (")[0] for line in created] == [f"created {e}" for e in emails]
    assert all(line.endswith("can log in with the password given)") for line in created)
    listed = [line.split("\t") for line in annotators.listed.splitlines()]
    assert [row[0] for row in listed] == [team_stack.admin_email, *emails]
    assert all(row[1].isdigit() and len(row) == 3 for row in listed)

    for email, password in annotators.passwords.items():
        with users.logged_in(team_stack.url, email, password) as session:
            me = session.get("api/current-user/whoami").json()
        assert me["email"] == email
    wrong = users.logged_in(team_stack.url, emails[0], annotators.passwords[emails[1]])
    with pytest.raises(ServerError, match="don't match") as info, wrong:
        pass
    assert annotators.passwords[emails[1]] not in str(info.value)

    again = team_stack.run_doc(doc_block("Create annotators"))
    assert [line.split(" (")[0] for line in again.stdout.splitlines()[:3]] == [f"exists  {e}" for e in emails]


def test_users_add_shared_password_from_stdin_and_without_password(team_stack: TeamStack) -> None:
    env = {"LABEL_STUDIO_URL": team_stack.url, "LABEL_STUDIO_API_KEY": team_stack.api_key}
    shared = secrets.token_urlsafe(12)
    result = CliRunner(env=env).invoke(
        main, ["users", "add", "dan@example.org", "eva@example.org", "--password-file", "-"], input=shared + "\n"
    )
    assert result.exit_code == 0, result.stderr
    assert shared not in result.stdout + result.stderr
    for email in ("dan@example.org", "eva@example.org"):
        with users.logged_in(team_stack.url, email, shared) as session:
            assert session.get("api/current-user/whoami").json()["email"] == email

    result = CliRunner(env=env).invoke(main, ["users", "add", "Importer@Example.org"])
    assert result.exit_code == 0, result.stderr
    assert "created importer@example.org" in result.stdout and "cannot log in" in result.stdout

    result = CliRunner(env=env).invoke(main, ["users", "add", "gus@example.org", "--password-file", "-"], input="\n")
    assert result.exit_code == 1
    assert result.stderr == "Error: <stdin>: no password in the file; write one per line, or one shared password\n"
    listed = CliRunner(env=env).invoke(main, ["users", "list"]).stdout
    assert "gus@example.org" not in listed and "importer@example.org\t" in listed


def test_users_errors_are_one_line(team_stack: TeamStack) -> None:
    env = {"LABEL_STUDIO_URL": team_stack.url, "LABEL_STUDIO_API_KEY": "wrong-key-4567"}
    result = CliRunner(env=env).invoke(main, ["users", "list"])
    assert result.exit_code == 1 and len(result.stderr.splitlines()) == 1
    assert "refused the API key (401" in result.stderr and "wrong-key-4567" not in result.stderr
    with pytest.raises(ServerError, match="Label Studio refused it: Please enter a password 8"):
        users.signup(team_stack.url, users.invite_token(team_stack.client()), "hal@example.org", "short")
    with pytest.raises(ServerError, match="answered 403"):
        users.signup(team_stack.url, "not-the-invite-token", "hal@example.org", "long-enough-123")


def test_pull_after_three_annotators(team_stack: TeamStack, pilot: Pilot, annotators: Annotators) -> None:
    block = as_study(doc_block("Pull"), pilot.definition, pilot.inputs)
    result = team_stack.run_doc(block)
    assert f"Counts match the server: {TASKS} tasks, {pilot.annotations} annotations, 0 skipped." in result.stdout
    out_dir = team_stack.workdir / shlex.split(doc_block("Pull"))[-1]
    with open(out_dir / "results.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == pilot.annotations == TASKS * 3
    assert {r["annotator"] for r in rows} == set(annotators.passwords)
    assert {r["system"] for r in rows} == {"bart"}  # unblinded
    assert all(r["question"] == "fluency" and r["lead_time"] == "2.5" for r in rows)


def test_backup_with_pg_dump_and_restore(team_stack: TeamStack, pilot: Pilot, annotators: Annotators) -> None:
    team_stack.run_doc(doc_block("Back up", 0))
    dumps = list(team_stack.workdir.glob("labelstudio-*.sql.gz"))
    assert len(dumps) == 1
    with gzip.open(dumps[0], "rt", encoding="utf-8") as f:
        dump = f.read()
    assert pilot.title in dump and "Brno 🎉" in dump
    assert all(email in dump for email in annotators.passwords)
    backup = dumps[0].name.removesuffix(".sql.gz")
    assert (team_stack.workdir / f"{backup}-data" / "media").is_dir()

    # Restore onto an empty database, as onto the new volume of a new server.
    user = team_stack.db_env["POSTGRES_USER"]
    psql(team_stack, "postgres", f'CREATE DATABASE restored OWNER "{user}"')
    team_stack.run_doc(doc_block("Back up", 1), env={"backup": backup, "SHIM_POSTGRES_DB": "restored"})
    titles = psql(team_stack, "restored", "SELECT title FROM project", user=user).splitlines()
    assert pilot.title in titles
    count = psql(team_stack, "restored", f"SELECT count(*) FROM task_completion c JOIN task t ON t.id = c.task_id "
                                         f"WHERE t.project_id = {pilot.project_id}", user=user)  # fmt: skip
    assert int(count) == pilot.annotations


def test_restart_on_the_same_database_keeps_everything(
    team_stack: TeamStack, pilot: Pilot, annotators: Annotators
) -> None:
    """What an upgrade does to the app: a new process on the same database and data volume."""
    stop_label_studio(team_stack)
    deadline = time.monotonic() + 30
    while port_in_use(team_stack.port) and time.monotonic() < deadline:
        time.sleep(0.5)
    start_label_studio(team_stack, timeout=float(os.environ.get("ANNOLS_TEST_SERVER_TIMEOUT", 300)))
    result = team_stack.run_doc(doc_block("Upgrade"))
    assert set(annotators.passwords) <= {line.split("\t")[0] for line in result.stdout.splitlines()}
    project = team_stack.client().find_project(pilot.title)
    assert project is not None and project.task_count == TASKS
    email, password = next(iter(annotators.passwords.items()))
    with users.logged_in(team_stack.url, email, password) as session:
        assert session.get("api/current-user/whoami").json()["email"] == email
