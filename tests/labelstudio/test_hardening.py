"""The hardening settings (annols.labelstudio.server.HARDENING) on the embedded server, each tried for real.

An ordinary account, made through the invite link the way `annols users add` makes
annotators, tries what the settings switch off; Label Studio must refuse it. The live server
is only ever asked for loopback addresses (a server without the hardening would connect at
once: an ML backend is health-checked, a URL import fetched), so nothing these tests do can
leave the machine. That public addresses are refused too is checked without a server: Label
Studio's own address check (``core.utils.io.validate_ip``), run in the environment annols
starts it with, refuses an outside IP literal; no connection is opened for that.

Before asking the live server, its own environment is checked for the ban on every address.
Webhooks are asked for inactive, so one that a server accepted would never fire.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from annols.labelstudio import server, users
from annols.labelstudio.client import LabelStudioClient
from tests.conftest import LiveServer

# An outside address (in no network Label Studio bans by default): only the hardening's
# USER_ADDITIONAL_BANNED_SUBNETS refuses it. Only ever handed to Label Studio's address check
# in-process, never to a running server.
PUBLIC = "93.184.215.14"
# Loopback, on the discard port: what the live server is asked for.
LOOPBACK = "127.0.0.1:9"
CONFIG = (
    '<View><Text name="text" value="$text"/><Choices name="ok" toName="text"><Choice value="yes"/></Choices></View>'
)


@dataclass(frozen=True)
class Annotator:
    email: str
    password: str
    api: httpx.Client  # with the account's own API token, as a script of theirs would use it


@pytest.fixture(scope="module")
def annotator(label_studio: LiveServer, client: LabelStudioClient) -> Iterator[Annotator]:
    email, password = "hardening-probe@example.org", secrets.token_urlsafe(12)
    added = list(users.add_accounts(client, [email], [password]))
    assert added[0].created and added[0].can_log_in
    with users.logged_in(label_studio.url, email, password) as session:
        token = session.get("api/current-user/token").json()["token"]
    with httpx.Client(base_url=label_studio.url, headers={"Authorization": f"Token {token}"}, timeout=60) as api:
        assert api.get("/api/current-user/whoami").json()["email"] == email
        yield Annotator(email, password, api)


@pytest.fixture(scope="module")
def project_id(client: LabelStudioClient) -> int:
    project, _ = client.create_project("hardening probe", CONFIG)
    client.import_tasks(project.id, [{"data": {"text": "a"}}, {"data": {"text": "b"}}])
    return project.id


def running_setting(live: LiveServer, key: str) -> str | None:
    """A setting as the running server's process reads it from the environment it was started with."""
    state = server.read_state(live.data_dir)
    assert state is not None
    raw = Path(f"/proc/{state.pid}/environ").read_bytes().decode("utf-8", errors="replace")
    env = dict(item.split("=", 1) for item in raw.split("\0") if "=" in item)
    name = server.setting_name(key)
    return next((env[p + name] for p in server.SETTING_PREFIXES if p + name in env), None)


@pytest.fixture(scope="module")
def bans_every_address(label_studio: LiveServer) -> None:
    for key in ("SSRF_PROTECTION_ENABLED", "USER_ADDITIONAL_BANNED_SUBNETS", "ML_BLOCK_LOCAL_IP"):
        running = running_setting(label_studio, key)
        assert running == server.HARDENING[key], (
            f"the server runs with {key}={running!r}: not asking it for outside addresses"
        )


def assert_signup_needs_the_invite_link(url: str) -> None:
    """The signup form refuses an account without the invite link's token, or with a guessed one."""
    with httpx.Client(base_url=url) as browser:
        browser.get("/user/signup/")
        form = {"csrfmiddlewaretoken": browser.cookies["csrftoken"], "email": "x@example.org", "password": "p" * 10}
        assert browser.post("/user/signup/", data=form).status_code == 403
        assert browser.post("/user/signup/", data=form, params={"token": "guess"}).status_code == 403


def test_signup_only_through_the_invite_link(label_studio: LiveServer, annotator: Annotator) -> None:
    assert_signup_needs_the_invite_link(label_studio.url)
    with users.logged_in(label_studio.url, annotator.email, annotator.password) as session:  # the link works
        assert session.get("api/current-user/whoami").json()["email"] == annotator.email


def test_no_second_organization(annotator: Annotator) -> None:
    response = annotator.api.post("/api/organizations/", json={"title": "mine"})
    assert response.status_code == 403 and "disabled" in response.json()["detail"]


def _refused_address(response: httpx.Response) -> None:
    """Refused for a banned network (400 or 403, depending on the view)."""
    assert response.status_code in (400, 403), response.text
    assert "reserved network address" in response.text, response.text


@pytest.mark.usefixtures("bans_every_address")
def test_no_webhook_to_any_address(label_studio: LiveServer, annotator: Annotator, project_id: int) -> None:
    port = label_studio.url.rsplit(":", 1)[1]
    for url in (f"http://{LOOPBACK}/hook", f"https://{LOOPBACK}/hook", f"http://127.0.0.1:{port}/hook"):
        hook = {"project": project_id, "url": url, "send_payload": True, "send_for_all_actions": True,
                "is_active": False}  # fmt: skip
        _refused_address(annotator.api.post("/api/webhooks/", json=hook))
        # The setting is the server's: the coordinator's key is refused too.
        admin = httpx.post(f"{label_studio.url}/api/webhooks/", json=hook, headers=_admin(label_studio), timeout=60)
        _refused_address(admin)
    assert annotator.api.get("/api/webhooks/").json() == []


@pytest.mark.usefixtures("bans_every_address")
def test_no_ml_backend_at_any_address(annotator: Annotator, project_id: int) -> None:
    backend = {"project": project_id, "url": f"http://{LOOPBACK}", "title": "mine"}
    _refused_address(annotator.api.post("/api/ml/", json=backend))
    assert annotator.api.get("/api/ml/", params={"project": project_id}).json() == []


@pytest.mark.usefixtures("bans_every_address")
def test_no_import_from_a_url(annotator: Annotator, project_id: int, client: LabelStudioClient) -> None:
    before = client.count_tasks(project_id)
    response = annotator.api.post(f"/api/projects/{project_id}/import", data={"url": f"http://{LOOPBACK}/tasks.json"})
    _refused_address(response)
    assert client.count_tasks(project_id) == before


def test_no_local_files(label_studio: LiveServer, annotator: Annotator) -> None:
    served = annotator.api.get("/data/local-files/", params={"d": "etc/hostname"})
    assert served.status_code == 403 and "disabled" in served.text
    for path in ("/api/storages/localfiles/", "/api/storages/export/localfiles"):
        assert annotator.api.get(path).status_code == 404, path
    kinds = [t["name"] for t in annotator.api.get("/api/storages/types").json()]
    assert "localfiles" not in kinds and kinds  # the cloud storages are still listed


def test_no_cross_origin_reads(label_studio: LiveServer, annotator: Annotator) -> None:
    origin = {"Origin": "http://elsewhere.example"}
    answer = annotator.api.get("/api/projects/", headers=origin)
    assert answer.status_code == 200 and "access-control-allow-origin" not in answer.headers
    preflight = httpx.options(
        f"{label_studio.url}/api/projects/", headers={**origin, "Access-Control-Request-Method": "GET"}, timeout=60
    )
    assert "access-control-allow-origin" not in preflight.headers


def test_errors_show_no_debug_page(annotator: Annotator) -> None:
    missing = annotator.api.get("/api/no-such-endpoint/")
    assert missing.status_code == 404
    assert "URLconf" not in missing.text and "DEBUG = True" not in missing.text


def test_pages_carry_the_settings(label_studio: LiveServer, annotator: Annotator) -> None:
    """What the web app is told: no debug mode, error reports, analytics, local files or org webhooks."""
    with users.logged_in(label_studio.url, annotator.email, annotator.password) as session:
        page = session.get("projects/")
    assert page.status_code == 200
    for line in ("debug: false,", "sentry_dsn: null,", "collect_analytics: false,",
                 "local_files_serving_enabled: false,", "allow_organization_webhooks: false,"):  # fmt: skip
        assert line in page.text, line


def test_what_annols_needs_still_works(label_studio: LiveServer, client: LabelStudioClient, project_id: int) -> None:
    assert client.whoami()["email"] == server.ADMIN_EMAIL  # the legacy token
    ids = client.import_tasks(project_id, [{"data": {"text": "c"}}])
    exported = client.export_tasks(project_id)
    assert ids[0] in {task["id"] for task in exported}


# Each setting as Label Studio reads it from the environment annols starts it with.
_SETTINGS_SCRIPT = """
import json, sys
sys.path.insert(0, sys.argv[1])
import django
from django.conf import settings
django.setup()
read = {name: getattr(settings, name) for name in sys.argv[3:]}
from core.utils.io import validate_ip  # the check every outgoing URL passes; it opens no connection
try:
    validate_ip(sys.argv[2])
    read["outside address"] = "allowed"
except Exception as refused:
    read["outside address"] = str(refused)
print(json.dumps(read, default=str))
"""


def expected_setting(value: str) -> Any:
    """The Python value Label Studio makes of one of our environment values."""
    if value in ("true", "false"):
        return value == "true"
    if "," in value:
        return value.split(",")
    return value


def test_label_studio_reads_every_setting_as_meant(tmp_path: Path) -> None:
    import label_studio

    names = {server.setting_name(key): key for key in server.HARDENING}
    env = {**server.environment(), "DJANGO_SETTINGS_MODULE": "core.settings.label_studio",
           "LABEL_STUDIO_BASE_DATA_DIR": str(tmp_path)}  # fmt: skip
    (tmp_path / "mydata").mkdir()  # would switch local file serving on, were it not set
    done = subprocess.run(
        [sys.executable, "-c", _SETTINGS_SCRIPT, str(Path(label_studio.__file__).parent), PUBLIC, *names],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    read = json.loads(done.stdout.splitlines()[-1])
    assert "reserved network address" in read.pop("outside address")
    assert read == {name: expected_setting(server.HARDENING[key]) for name, key in names.items()}


def _admin(live: LiveServer) -> dict[str, str]:
    return {"Authorization": f"Token {live.api_key}"}


def test_our_environment_cannot_override_the_hardening(monkeypatch: pytest.MonkeyPatch) -> None:
    # Label Studio would read these in place of CORS_ALLOW_ALL_ORIGINS, DEBUG and DISABLE_SIGNUP_WITHOUT_LINK.
    monkeypatch.setenv("LABEL_STUDIO_CORS_ALLOW_ALL_ORIGINS", "true")
    monkeypatch.setenv("HEARTEX_DEBUG", "true")
    monkeypatch.setenv("HEARTEX_DISABLE_SIGNUP_WITHOUT_LINK", "false")
    monkeypatch.setenv("ANNOLS_UNRELATED", "kept")
    env = server.environment()
    shadowing = {"LABEL_STUDIO_CORS_ALLOW_ALL_ORIGINS", "HEARTEX_DEBUG", "HEARTEX_DISABLE_SIGNUP_WITHOUT_LINK"}
    assert not shadowing & env.keys()
    assert env["ANNOLS_UNRELATED"] == "kept" and env.items() >= server.HARDENING.items()
