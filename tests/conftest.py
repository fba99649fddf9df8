"""Shared fixtures. The real Label Studio server is started once per test session.

It is never skipped: if the server cannot start, every test that needs it errors, and
the run fails. Unit tests of pure code do not use it and run without it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Browser, sync_playwright

from annols.labelstudio import server
from annols.labelstudio.client import LabelStudioClient

ROOT = Path(__file__).resolve().parent.parent
# The QA-Feedback dev set (Apache-2.0, tests/data/qa_feedback/dev/README.md): kept in the repository, never read from
# a folder beside it.
QA_DEV = ROOT / "tests" / "data" / "qa_feedback" / "dev" / "dev_feedback.json"
CHROMIUM = Path("/usr/bin/chromium")  # Debian's package: never a browser downloaded by playwright
LAUNCH_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run",
]  # fmt: skip
DATA = Path(__file__).resolve().parent / "data"
# The fixtures that start a Label Studio server, a browser or PostgreSQL (each fixture that needs one of these
# depends on it, so pytest's closure of a test's fixtures names it): a test that uses any is marked ``live``,
# and ``scripts/test --quick`` (``pytest -m "not live"``) leaves it out. The full run runs every test.
LIVE_FIXTURES = frozenset({"label_studio", "client", "browser", "team_stack", "isolated_stack"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if LIVE_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.live)


@dataclass(frozen=True)
class LiveServer:
    url: str
    api_key: str
    data_dir: Path

    def client(self) -> LabelStudioClient:
        return LabelStudioClient(self.url, self.api_key)


@pytest.fixture(scope="session")
def label_studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A throwaway Label Studio (SQLite) on a free loopback port, for the whole session."""
    data_dir = tmp_path_factory.mktemp("label-studio")
    port = server.free_port()
    state, _ = server.start(data_dir, port=port, timeout=float(os.environ.get("ANNOLS_TEST_SERVER_TIMEOUT", 300)))
    try:
        yield LiveServer(url=state.url, api_key=server.api_token(data_dir), data_dir=data_dir)
    finally:
        server.stop(data_dir)


@pytest.fixture(scope="session")
def client(label_studio: LiveServer) -> LabelStudioClient:
    return label_studio.client()


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """One headless chromium for the whole session (one Playwright per process); tests open their own pages."""
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} not found: the browser tests drive Debian's chromium "
            "(`apt-get install chromium`, done by scripts/test); they never download a browser"
        )
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        try:
            yield launched
        finally:
            launched.close()
