"""The embedded default: a pip-installed Label Studio (SQLite) run on loopback.

``start`` launches ``label-studio start`` in its own process group, creates the admin
and a legacy API token on first start (1.23 creates the first organization with legacy
tokens disabled unless told otherwise), and waits until ``/health`` answers on the port
we chose. ``stop`` ends that process group only.

No secret is written by annols: the admin password is generated once and kept by Label
Studio only as a hash, plus a copy in ``admin-password`` (mode 0600) so the user can log
in; the API token is read back from Label Studio's own database when annols needs it.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path

from annols import files
from annols.errors import ServerError

DEFAULT_PORT = 8080
ADMIN_EMAIL = "admin@annols.local"
STATE_FILE = "annols-server.json"
PASSWORD_FILE = "admin-password"
LOG_FILE = "label-studio.log"
DATABASE_FILE = "label_studio.sqlite3"

# What a study does not need, switched off where Label Studio lets us: the embedded server
# runs with these, and docker-compose.yml's app service carries the same values
# (tests/labelstudio/test_team.py compares them). docs/security.md says what each one stops, and what
# Label Studio's community edition still lets every account do.
HARDENING = {
    # Accounts only through the invite link (`annols users add` uses it).
    "LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK": "true",
    # One organization: no account can make another one over the API.
    "ALLOW_ORGANIZATION_CREATION": "false",
    # Outgoing requests on an account's word (webhooks, ML backends, imports from a URL, S3
    # endpoints) are checked against banned networks; banning every address refuses them all,
    # so no payload of the study can be sent anywhere.
    "SSRF_PROTECTION_ENABLED": "true",
    "USE_DEFAULT_BANNED_SUBNETS": "true",
    "USER_ADDITIONAL_BANNED_SUBNETS": "0.0.0.0/0,::/0",
    "ML_BLOCK_LOCAL_IP": "true",
    "ALLOW_ORGANIZATION_WEBHOOKS": "false",
    # The export converter does not fetch media that task data points to.
    "CONVERTER_DOWNLOAD_RESOURCES": "false",
    # No files from the server's own disk: neither served (Label Studio turns this on by
    # itself when a mydata/ folder exists) nor as a storage.
    "LOCAL_FILES_SERVING_ENABLED": "false",
    "ENABLE_LOCAL_FILES_STORAGE": "false",
    # Pages of other sites may not read the API's answers.
    "CORS_ALLOW_ALL_ORIGINS": "false",
    # No tracebacks (with paths and settings) shown to whoever caused an error.
    "DEBUG": "false",
    "SHOW_TRACEBACK_FOR_EXPORT_CONVERTER": "false",
    # Uploaded SVG files are stripped of scripts.
    "SVG_SECURITY_CLEANUP": "true",
    # Quiet and offline: no error reports, analytics, version check or feature-flag service.
    "SENTRY_DSN": "",
    "FRONTEND_SENTRY_DSN": "",
    "COLLECT_ANALYTICS": "false",
    "LATEST_VERSION_CHECK": "false",
    "FEATURE_FLAGS_OFFLINE": "true",
}


def default_data_dir() -> Path:
    """Per-user data folder of the embedded server (survives restarts)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "annols" / "label-studio"


@dataclass(frozen=True)
class ServerState:
    pid: int
    port: int
    url: str
    email: str
    data_dir: str


def free_port() -> int:
    """A free loopback port chosen by the OS."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_in_use(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


# Loopback health checks must not go through a proxy from the environment.
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def healthy(url: str, timeout: float = 2.0) -> bool:
    try:
        with _DIRECT.open(f"{url}/health", timeout=timeout) as response:
            return bool(json.loads(response.read()).get("status") == "UP")
    except (OSError, ValueError, urllib.error.URLError):
        return False


def read_state(data_dir: Path) -> ServerState | None:
    try:
        raw = json.loads((data_dir / STATE_FILE).read_text(encoding="utf-8"))
        return ServerState(**raw)
    except (OSError, ValueError, TypeError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def status(data_dir: Path) -> ServerState | None:
    """The running server started from ``data_dir``, or None."""
    state = read_state(data_dir)
    if state is None or not _alive(state.pid) or not healthy(state.url):
        return None
    return state


# Label Studio reads NAME from LABEL_STUDIO_NAME, else HEARTEX_NAME, else NAME.
SETTING_PREFIXES = ("LABEL_STUDIO_", "HEARTEX_", "")


def setting_name(key: str) -> str:
    """The name Label Studio gives an environment variable: ``LABEL_STUDIO_DEBUG`` -> ``DEBUG``."""
    for prefix in SETTING_PREFIXES[:2]:
        if key.startswith(prefix):
            return key.removeprefix(prefix)
    return key


def environment() -> dict[str, str]:
    """The environment Label Studio runs in: ours, with the hardening settings on top.

    A variable of ours that Label Studio would read in place of a hardening setting (the
    same name with another prefix) is left out, so the hardening cannot be overridden by accident.
    """
    shadowing = {prefix + setting_name(key) for key in HARDENING for prefix in SETTING_PREFIXES}
    return {**{k: v for k, v in os.environ.items() if k not in shadowing}, **HARDENING}


def start(data_dir: Path, port: int = DEFAULT_PORT, timeout: float = 240.0) -> tuple[ServerState, bool]:
    """Start the server (or find it running). Returns the state and whether it was already running."""
    data_dir = data_dir.expanduser().resolve()
    running = status(data_dir)
    if running is not None:
        return running, True
    # Its database holds every text, answer and account: the owner's alone (0700), however made before.
    files.private_folder(data_dir)
    data_dir.chmod(files.PRIVATE_FOLDER)
    if port_in_use(port):
        raise ServerError(f"port {port} on 127.0.0.1 is already in use by another program: choose another with --port")
    first_start = not (data_dir / DATABASE_FILE).exists()
    env = environment()
    if first_start:
        password = secrets.token_urlsafe(12)
        password_file = data_dir / PASSWORD_FILE
        password_file.touch(mode=0o600)
        password_file.write_text(password + "\n", encoding="utf-8")
        env.update(
            LABEL_STUDIO_USERNAME=ADMIN_EMAIL,
            LABEL_STUDIO_PASSWORD=password,
            LABEL_STUDIO_USER_TOKEN=secrets.token_hex(20),
            LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN="true",
        )
    command = [
        sys.executable, "-m", "label_studio.server", "start",
        "--no-browser", "-p", str(port), "--data-dir", str(data_dir),
        "--internal-host", "127.0.0.1",
    ]  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    with open(data_dir / LOG_FILE, "ab") as log:
        process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            env=env, start_new_session=True, cwd=data_dir,
        )  # fmt: skip
    state = ServerState(pid=process.pid, port=port, url=url, email=ADMIN_EMAIL, data_dir=str(data_dir))
    _write_state(data_dir, state)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ServerError(
                f"Label Studio exited while starting (status {process.returncode}); see {data_dir / LOG_FILE}"
            )
        if healthy(url):
            return state, False
        time.sleep(1.0)
    _stop_group(process.pid)
    raise ServerError(f"Label Studio did not answer on {url} within {timeout:.0f} s; see {data_dir / LOG_FILE}")


def stop(data_dir: Path) -> bool:
    """Stop the server started from ``data_dir``. Returns False if none was running."""
    data_dir = data_dir.expanduser().resolve()
    state = read_state(data_dir)
    if state is None or not _alive(state.pid):
        (data_dir / STATE_FILE).unlink(missing_ok=True)
        return False
    _stop_group(state.pid)
    (data_dir / STATE_FILE).unlink(missing_ok=True)
    return True


def _stop_group(pid: int, timeout: float = 20.0) -> None:
    """End the process group we started: the wrapper and the server it forked."""
    try:
        os.killpg(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pid, 0)
        except ProcessLookupError:
            break
        with contextlib.suppress(ChildProcessError):  # reap it if it is our child
            os.waitpid(pid, os.WNOHANG)
        time.sleep(0.2)
    else:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)


def _write_state(data_dir: Path, state: ServerState) -> None:
    path = data_dir / STATE_FILE
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(asdict(state), indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)


def api_token(data_dir: Path, email: str = ADMIN_EMAIL) -> str:
    """The admin's API token, read from the embedded server's own database."""
    db = data_dir.expanduser().resolve() / DATABASE_FILE
    if not db.exists():
        raise ServerError(f"no embedded Label Studio in {data_dir}: run `annols server start` first")
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as conn:
            row = conn.execute(
                "SELECT t.key FROM authtoken_token t JOIN htx_user u ON u.id = t.user_id WHERE u.email = ?",
                (email,),
            ).fetchone()
    except sqlite3.Error as e:
        raise ServerError(f"cannot read the embedded server's database {db}: {e}") from e
    if row is None:
        raise ServerError(f"the embedded server in {data_dir} has no API token for {email}")
    return str(row[0])


def admin_password(data_dir: Path) -> str | None:
    try:
        return (data_dir.expanduser().resolve() / PASSWORD_FILE).read_text(encoding="utf-8").strip()
    except OSError:
        return None
