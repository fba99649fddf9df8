"""Browser fixtures: Debian's chromium driven by playwright, an annotator who logs in to
the session's Label Studio, and a small page object for the labeling view.

Only real UI gestures annotate: clicks on labels and choices, mouse drags over text,
typing. The browser is never downloaded (no ``playwright install``): it is the system's
``/usr/bin/chromium``, installed by ``scripts/test`` when missing.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Locator, Page, Request, Response, ViewportSize
from playwright.sync_api import Error as PlaywrightError

from annols.labelstudio import server
from annols.labelstudio.client import LabelStudioClient
from tests.conftest import ROOT, LiveServer
from tests.study.test_push_pull import cli, shown_by_task

VIEWPORT: ViewportSize = {"width": 1280, "height": 900}
SCREENSHOTS = ROOT / "docs" / "screenshots"
UPDATE_SCREENSHOTS = os.environ.get("ANNOLS_UPDATE_SCREENSHOTS") == "1"
ANNOTATION_POST = re.compile(r"/api/tasks/\d+/annotations/?(\?|$)")
SUBMIT = "bottombar-submit-button"
DOUBLE_CLICK_SECONDS = 0.5  # the editor's DBLCLICK_TIMEOUT is 450 ms


@dataclass(frozen=True)
class Annotator:
    email: str
    password: str
    user_id: int


def set_password(live: LiveServer, email: str, password: str) -> None:
    """Label Studio's API ignores passwords: set one on the server machine, as an admin would."""
    env = {**server.environment(), "LABEL_STUDIO_BASE_DATA_DIR": str(live.data_dir)}
    command = [
        sys.executable, "-m", "label_studio.server", "reset_password",
        "--username", email, "--password", password, "--data-dir", str(live.data_dir),
    ]  # fmt: skip
    done = subprocess.run(command, env=env, cwd=live.data_dir, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "Password successfully changed" in done.stdout, done.stdout + done.stderr


@pytest.fixture(scope="session")
def annotator(label_studio: LiveServer, client: LabelStudioClient) -> Annotator:
    """An ordinary user (not the admin the API key belongs to) with a password to log in with."""
    email = "annotator@example.org"
    user_id = client.users().get(email) or client.create_user(email, first_name="Ann", last_name="Otator")
    password = secrets.token_urlsafe(12)
    set_password(label_studio, email, password)
    return Annotator(email, password, user_id)


class LabelingView:
    """The labeling view of one project, as the annotator sees and uses it."""

    def __init__(self, page: Page, live: LiveServer, shots: Path) -> None:
        self.page = page
        self.live = live
        self.shots = shots
        self.task: dict[str, Any] = {}
        self.instructions = ""
        self.posted: list[Request] = []
        self._last_drag = 0.0
        page.on("request", self._record_post)

    def _record_post(self, request: Request) -> None:
        if request.method == "POST" and ANNOTATION_POST.search(request.url):
            self.posted.append(request)

    def log_in(self, who: Annotator) -> None:
        page = self.page
        page.goto(f"{self.live.url}/user/login/")
        page.fill("input[name=email]", who.email)
        page.fill("input[name=password]", who.password)
        page.click("button[type=submit]")
        page.wait_for_url(lambda url: "/user/login" not in url)

    def open(self, project_id: int) -> dict[str, Any]:
        """Label All Tasks: the next task, with the instructions modal closed. Returns that task."""
        page = self.page
        with page.expect_response(lambda r: "id=next_task" in r.url) as next_task:
            page.goto(f"{self.live.url}/projects/{project_id}/data?labeling=1")
        self.task = next_task.value.json()
        page.get_by_test_id(SUBMIT).wait_for()
        modal = page.locator(".lsf-modal-ls__content", has_text="Labeling Instructions")
        modal.wait_for()  # show_instruction: the guideline comes first
        self.instructions = modal.inner_text()
        page.get_by_label("Close modal").click()
        modal.wait_for(state="hidden")
        return self.task

    @property
    def task_key(self) -> str:
        """The task's key as result files name it (the manifest's: the server holds an HMAC of it)."""
        folder, title = PUSHED_FROM[int(self.task["project"])]
        return str(shown_by_task(folder / ".annols", title)[int(self.task["id"])]["key"])

    @property
    def shown_systems(self) -> tuple[str, ...]:
        """The systems at each candidate position (from the coordinator's manifest; not on the server)."""
        folder, title = PUSHED_FROM[int(self.task["project"])]
        return tuple(shown_by_task(folder / ".annols", title)[int(self.task["id"])]["systems"])

    # --- gestures -------------------------------------------------------------------------

    def label(self, value: str) -> None:
        """Pick a label (for spans or paragraph regions) by its exact name."""
        text = self.page.locator(".lsf-label__text", has_text=re.compile(f"^{re.escape(value)}$"))
        self.page.locator(".lsf-label", has=text).click()

    def select_text(self, text: str, start: int, end: int) -> None:
        """Drag the mouse over ``text[start:end]`` where exactly ``text`` is shown (offsets in code points)."""
        u16 = [len(text[:i].encode("utf-16-le")) // 2 for i in (start, end)]
        # Selecting a region scrolls the view smoothly: wait until the text stops moving.
        box, previous = self.page.evaluate(_CHAR_BOXES, [text, *u16]), None
        for _ in range(40):
            assert "error" not in box, box
            if box == previous:
                break
            self.page.wait_for_timeout(50)
            box, previous = self.page.evaluate(_CHAR_BOXES, [text, *u16]), box
        mouse = self.page.mouse
        mouse.move(box["x1"], box["y1"])
        mouse.down()
        mouse.move((box["x1"] + box["x2"]) / 2, box["y2"], steps=4)
        mouse.move(box["x2"], box["y2"], steps=4)
        # The editor takes a mouse-up within 450 ms and 5 px of the previous one for a
        # double click, which labels with the previous label: a person is never that fast.
        pause = DOUBLE_CLICK_SECONDS - (time.monotonic() - self._last_drag)
        if pause > 0:
            self.page.wait_for_timeout(pause * 1000)
        mouse.up()
        self._last_drag = time.monotonic()

    def region(self, text: str) -> Locator:
        """A region in the Regions list, by its label or text."""
        return self.page.locator(".lsf-outliner-item", has_text=text)

    def select_region(self, text: str) -> None:
        self.region(text).click()

    def relate(self, source: str, target: str) -> None:
        """Link two regions: select the source, the link icon in its details, then the target."""
        self.select_region(source)
        self.page.get_by_label("Create Relation").click()
        self.region(target).click()
        self.page.keyboard.press("Escape")

    def unselect(self) -> None:
        self.page.keyboard.press("Escape")

    def block(self, heading: str) -> Locator:
        """The View holding the header ``heading`` (a row, a dimension, a question)."""
        return self.page.locator(f"xpath=//*[self::h3 or self::h4][normalize-space()={_xpath_str(heading)}]/..")

    def choices_after(self, heading: str) -> Locator:
        """The Choices control right below the header ``heading``."""
        xpath = f"//*[self::h3 or self::h4][normalize-space()={_xpath_str(heading)}]"
        return self.page.locator(f"xpath={xpath}/following-sibling::div[contains(@class, 'lsf-choices')][1]")

    def choose(self, scope: Locator, value: str) -> None:
        """Click the choice whose value (or alias-less text) is ``value`` inside ``scope``."""
        scope.locator("label", has=self.page.locator(f"input[name={json.dumps(value)}]")).click()

    # --- submitting -------------------------------------------------------------------------

    def submit(self) -> dict[str, Any]:
        """Submit and wait until the server stored the annotation."""
        with self.page.expect_response(_annotation_saved) as saved:
            self.page.get_by_test_id(SUBMIT).click()
        assert saved.value.ok, saved.value.text()
        annotation: dict[str, Any] = saved.value.json()
        return annotation

    def refused(self) -> str:
        """Submit, expect the editor's refusal; return its message. Nothing reaches the server."""
        before = len(self.posted)
        self.page.get_by_test_id(SUBMIT).click()
        message = self.page.locator(".ant-modal-confirm-warning .ant-modal-confirm-content")
        message.wait_for()
        text = message.first.inner_text()
        # Close every warning: on a loaded machine a slow click can stack a second one.
        buttons = self.page.locator(".ant-modal-confirm-btns button")
        for _ in range(20):
            if buttons.count() == 0:
                break
            with contextlib.suppress(PlaywrightError):
                buttons.first.click(timeout=5000)
            self.page.wait_for_timeout(300)
        message.first.wait_for(state="detached")
        assert len(self.posted) == before, "a refused submit still sent an annotation"
        return text

    # --- pictures ---------------------------------------------------------------------------

    def screenshot(self, name: str) -> Path:
        """The whole labeling view (its panel scrolls by itself: the window is made tall enough)."""
        page = self.page
        page.evaluate("document.querySelector('.lsf-main-content').scrollTo(0, 0)")
        extra = int(page.evaluate(_OVERFLOW))
        page.set_viewport_size({"width": VIEWPORT["width"], "height": min(VIEWPORT["height"] + extra, 6000)})
        page.wait_for_timeout(400)
        path = self.shots / f"{name}.png"
        page.screenshot(path=path)
        page.set_viewport_size(VIEWPORT)
        if UPDATE_SCREENSHOTS:
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, SCREENSHOTS / path.name)
        return path


@contextlib.contextmanager
def responses(page: Page) -> Iterator[list[tuple[str, str]]]:
    """(url, body) of every page, fetch and XHR response the page gets while inside, in order:
    what the editor loads about the project and its tasks (the app's own static scripts and
    styles are the same for every project, and big: left out)."""
    loaded: list[tuple[str, str]] = []

    def keep(response: Response) -> None:
        if response.request.resource_type in ("document", "fetch", "xhr"):
            try:
                loaded.append((response.url, response.text()))
            except Exception:  # a redirect or an aborted request has no body
                loaded.append((response.url, ""))

    page.on("response", keep)
    try:
        yield loaded
    finally:
        page.remove_listener("response", keep)


def _annotation_saved(response: Response) -> bool:
    return response.request.method == "POST" and bool(ANNOTATION_POST.search(response.url))


def _xpath_str(text: str) -> str:
    if "'" not in text:
        return f"'{text}'"
    return "concat(" + ', "\'", '.join(f"'{part}'" for part in text.split("'")) + ")"


_OVERFLOW = """() => {
  const main = document.querySelector('.lsf-main-content');
  return main ? Math.max(0, main.scrollHeight - main.clientHeight) : 0;
}"""

# The screen boxes of the first and last character of [start, end) (UTF-16 offsets) in the
# one Text object or Paragraphs item whose text is exactly `text`, scrolled into view.
_CHAR_BOXES = """([text, start, end]) => {
  const all = [...document.querySelectorAll('.lsf-htx-richtext, [data-testid^="phrase:"] span')]
    .filter(e => e.textContent === text);
  const roots = all.filter(e => !all.some(inner => inner !== e && e.contains(inner)));
  if (roots.length !== 1) return {error: `${roots.length} Text objects or Paragraphs items show this text`};
  const walker = document.createTreeWalker(roots[0], NodeFilter.SHOW_TEXT);
  const at = (offset, after) => {
    let pos = 0, node;
    walker.currentNode = roots[0];
    while ((node = walker.nextNode())) {
      const len = node.textContent.length;
      if (after ? offset <= pos + len : offset < pos + len) return [node, offset - pos];
      pos += len;
    }
    return null;
  };
  const [sNode, sOff] = at(start, false);
  const [eNode, eOff] = at(end, true);
  sNode.parentElement.scrollIntoView({block: 'center', behavior: 'instant'});
  const first = document.createRange();
  first.setStart(sNode, sOff);
  first.setEnd(sNode, sOff + 1);
  const last = document.createRange();
  last.setStart(eNode, eOff - 1);
  last.setEnd(eNode, eOff);
  const a = first.getClientRects()[0], b = last.getClientRects()[0];
  return {x1: a.left + 1, y1: a.top + a.height / 2, x2: b.right - 1, y2: b.top + b.height / 2};
}"""


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Keep each phase's report on the test, so the labeling fixture knows a test failed."""
    report = yield
    item.stash.setdefault(_REPORTS, {})[report.when] = report
    return report


_REPORTS = pytest.StashKey[dict[str, pytest.TestReport]]()


@pytest.fixture
def labeling(
    request: pytest.FixtureRequest, browser: Browser, label_studio: LiveServer, annotator: Annotator, tmp_path: Path
) -> Iterator[LabelingView]:
    """A fresh browser context, logged in as the annotator."""
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(30_000)
    try:
        view = LabelingView(context.new_page(), label_studio, tmp_path)
        view.log_in(annotator)
        yield view
        reports = request.node.stash.get(_REPORTS, {})
        if "call" in reports and reports["call"].failed:
            # What the page showed when the test failed, next to its other files.
            view.page.screenshot(path=tmp_path / "failure.png", full_page=True)
            print(f"screenshot of the failure: {tmp_path / 'failure.png'}")
    finally:
        context.close()


# Project id -> the folder it was pushed from and its title: that folder's .annols holds the
# manifest, which pull and the tests read the blinding from (the server holds none of it).
PUSHED_FROM: dict[int, tuple[Path, str]] = {}


def push(live: LiveServer, args: list[str], title: str, cwd: Path) -> int:
    """``annols push ... --project TITLE`` through the CLI; returns the project id."""
    code, out, err = cli(live, "push", *args, "--project", title, cwd=cwd)
    assert code == 0, err
    match = re.search(r"/projects/(\d+)/", out)
    assert match, out
    PUSHED_FROM[int(match.group(1))] = (cwd, title)
    return int(match.group(1))


def pull(live: LiveServer, protocol: list[str], title: str, out_dir: Path) -> Path:
    """``annols pull`` through the CLI, from the folder the project was pushed from; the counts must match."""
    project = live.client().find_project(title)
    cwd = PUSHED_FROM[project.id][0] if project is not None and project.id in PUSHED_FROM else None
    code, out, err = cli(live, "pull", *protocol, "--project", title, "-o", str(out_dir), cwd=cwd)
    assert code == 0, err
    assert "Counts match the server" in out, out
    return out_dir
