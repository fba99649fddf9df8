"""The one module that talks to Label Studio (through label-studio-sdk).

Everything the server answers badly becomes a one-line :class:`ServerError` naming the
URL and what to do; the SDK's own error text (which dumps every response header) is
never shown. Imports are sent with retries off: a retried import can create the same
tasks twice, so idempotence is the caller's job, not the transport's.

Faults between annols and the server (a proxy's 502, a dropped connection, a body cut
short) are handled here, in one place:

- Reads (listings, the export, project and user look-ups) are retried on them, with
  backoff and a bounded count, each retry announced through ``on_notice`` (the CLI prints
  it). The SDK's own retries are off everywhere: they would replay writes too.
- Writes are sent once; a failure that may pass raises :class:`TransientServerError`,
  after which the caller checks what the server did (push lists the task keys).
- A write whose effect can be looked up, or that is idempotent, is "checked": for it, any
  5xx and a timed-out answer may pass too. Label Studio on SQLite answers its HTML page
  "500 | Label Studio" when a middleware hits "database is locked" before the view runs
  (nothing was made), and a timed-out import may have been made: either way the effect is
  looked up before anything is sent again (:meth:`LabelStudioClient.checked_write`).
  Checked: project creation (keyed, below), user creation (by email), push's imports (it
  lists the task keys), project settings, deletions. Sent once: an annotation (it has no
  key to find it by) and ``import_tasks`` (adjudicate: a re-run adds what is missing).
  Reads are retried only on what a proxy or the lock gives: a 500 to a read is a bug of
  the server's, which asking again does not mend.
- Project creation is keyed: each carries a creation id of annols' own in its
  description, and after creating, the projects of that title are looked up, so that a
  creation replayed (by a proxy, or by SQLite's ``DatabaseIsLockedRetryMiddleware``,
  which replays a whole request that hit "database is locked") ends as one project.

The client is the SDK's generated base client, not ``label_studio_sdk.LabelStudio``: the
latter imports pandas, the converter and every cloud-storage library (about 1.5 s and
180 MB before the first request); the base client and its lazily loaded sub-clients make
the same requests. They, httpx and pydantic are imported on first use, so that offline
commands (convert, tasks, validate) start without them.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from annols.errors import AnnolsError, ServerError, TransientServerError, Unreachable, WriteError
from annols.labelstudio import server

if TYPE_CHECKING:
    import httpx
    from label_studio_sdk.core.api_error import ApiError
    from label_studio_sdk.core.request_options import RequestOptions

NO_RETRY: RequestOptions = {"max_retries": 0}
URL_ENV = "LABEL_STUDIO_URL"
KEY_ENV = "LABEL_STUDIO_API_KEY"
TIMEOUT_ENV = "ANNOLS_TIMEOUT"  # seconds to wait for an answer (for its next byte)
DEFAULT_TIMEOUT = 600.0
RETRY_STATUS = frozenset({502, 503, 504})  # what a proxy in front of a busy server answers
RETRIES = 5
MAX_DELAY = 30.0
# In the description of a project annols created: which creation made it (see create_project).
CREATION_MARK = "annols creation "
NEW_TOKEN = "create a new one in Label Studio under Account & Settings and pass it with --api-key or " + KEY_ENV
T = TypeVar("T")


@dataclass(frozen=True)
class FilePart:
    """The JSON of one task left in an open file until it is sent (read with pread: thread-safe)."""

    fd: int
    offset: int
    length: int

    def read(self) -> bytes:
        return os.pread(self.fd, self.length, self.offset)


@dataclass(frozen=True)
class Project:
    id: int
    title: str
    label_config: str
    task_count: int | None = None


class LabelStudioClient:
    """A connection to one Label Studio server as one user.

    ``on_notice`` receives one line for each retry and each repair (the library never
    prints), and one every ``heartbeat`` seconds while a long request waits on a busy
    server; ``retries`` and ``delay`` bound the retries of a read: ``delay``, then
    doubling, at most 30 s. ``timeout``: seconds to wait for an answer.
    """

    def __init__(
        self,
        url: str,
        api_key: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        on_notice: Callable[[str], None] | None = None,
        retries: int = RETRIES,
        delay: float = 1.0,
        heartbeat: float = 15.0,
    ) -> None:
        from label_studio_sdk.base_client import LabelStudioBase
        from label_studio_sdk.core.api_error import ApiError

        self.url = url.rstrip("/")
        self.on_notice = on_notice
        self.retries = retries
        self.delay = delay
        self.heartbeat = heartbeat
        self.timeout = timeout
        self._personal = _jwt_expiry(api_key) is not None
        try:  # the SDK checks a personal access token's expiry here, before any request
            self._sdk = LabelStudioBase(base_url=self.url, api_key=api_key, timeout=timeout, max_retries=0)
        except ApiError as e:
            raise ServerError(self._explain("connecting", e, _jwt_expiry(api_key))) from None

    # --- notices and retries ------------------------------------------------------------------

    def notice(self, line: str) -> None:
        if self.on_notice is not None:
            self.on_notice(line)

    def pause(self, reason: str, attempt: int, then: str = "retrying") -> None:
        """Announce retry number ``attempt`` and wait before it (backoff: delay, doubling)."""
        wait = min(self.delay * 2 ** (attempt - 1), MAX_DELAY)
        self.notice(f"{reason}; {then} in {wait:g} s ({attempt}/{self.retries})")
        time.sleep(wait)

    @contextlib.contextmanager
    def waiting(self, doing: str) -> Iterator[None]:
        """A notice every ``heartbeat`` seconds while the block runs: a busy server is not silence."""
        done = threading.Event()

        def beat() -> None:
            waited = 0.0
            while not done.wait(self.heartbeat):
                waited += self.heartbeat
                self.notice(f"{doing} ({waited:g} s so far)")

        threading.Thread(target=beat, name="annols-heartbeat", daemon=True).start()
        try:
            yield
        finally:
            done.set()

    def _repeatable(self, what: str, call: Callable[[], T], *, checked: bool = False) -> T:
        """``call()``, requests safe to repeat (reads; ``checked``: idempotent writes), retried on
        failures that may pass."""
        attempt = 0
        while True:
            try:
                with self._calling(what, checked=checked):
                    return call()
            except TransientServerError as e:
                attempt += 1
                if attempt > self.retries:
                    raise
                self.pause(e.reason, attempt)

    def checked_write(self, send: Callable[[], T], made: Callable[[], T | None], doing: str) -> T:
        """``send()``, a write whose effect can be looked up, sent again only if it is not there.

        After a failure that may pass (``send`` makes its requests ``checked``: any 5xx, a
        lost or timed-out answer), ``made()`` looks for the effect (None: not there); if it
        is there, that is the result, else the write is sent again after a notice naming
        ``doing``, at most ``retries`` times.
        """
        attempt = 0
        while True:
            try:
                return send()
            except TransientServerError as e:
                found = made()
                if found is not None:
                    return found
                attempt += 1
                if attempt > self.retries:
                    raise
                self.pause(f"{e.reason} to {doing}, which it did not make", attempt)

    # --- errors ----------------------------------------------------------------------------

    @contextlib.contextmanager
    def _calling(self, what: str, *, checked: bool = False) -> Iterator[None]:
        """The block's request errors as one-line ServerErrors, TransientServerError for those that may
        pass. ``checked``: a write whose effect the caller looks up before sending it again (or one
        that is idempotent), for which any 5xx and a timeout may pass too."""
        import httpx
        from label_studio_sdk.core.api_error import ApiError

        try:
            yield
        except ApiError as e:
            if e.status_code in RETRY_STATUS:
                raise TransientServerError(self._explain(what, e), f"Label Studio answered {e.status_code}") from None
            if e.status_code == 500 and "database-is-locked-error" in str(e.body):
                # SQLite's write lock, after the server's own replays (DatabaseIsLockedRetryMiddleware) gave up.
                raise TransientServerError(self._explain(what, e), "Label Studio's database was locked") from None
            if checked and (e.status_code or 0) >= 500:  # e.g. the lock hit in a middleware: an HTML page
                raise TransientServerError(self._explain(what, e), f"Label Studio answered {e.status_code}") from None
            if _cut_short(e):
                raise TransientServerError(
                    f"{what}: the answer from Label Studio at {self.url} was cut short", "the answer was cut short"
                ) from None
            raise ServerError(self._explain(what, e)) from None
        except httpx.TimeoutException:
            message = (
                f"{what}: Label Studio at {self.url} did not answer in {self.timeout:g} s; "
                f"try again, or wait longer with {TIMEOUT_ENV}=<seconds>"
            )
            if checked:  # the server may have done it all the same: the caller looks
                raise TransientServerError(message, f"Label Studio did not answer in {self.timeout:g} s") from None
            raise ServerError(message) from None
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as e:
            # Dropped mid-answer, or a body shorter than its Content-Length: the server may have acted.
            raise TransientServerError(
                f"{what}: the connection to Label Studio at {self.url} was cut ({type(e).__name__})",
                "the connection to Label Studio was cut",
            ) from None
        except httpx.HTTPError as e:
            message = (
                f"{what}: cannot reach Label Studio at {self.url} ({type(e).__name__}); "
                "is it running? Start the local one with `annols server start`, or pass --url"
            )
            if isinstance(e, httpx.ConnectError):  # nothing listens there: callers may say where to look
                raise Unreachable(message, type(e).__name__) from None
            raise ServerError(message) from None

    def _explain(self, what: str, e: ApiError, expiry: datetime | None = None) -> str:
        status = e.status_code
        page = _page_title(e.body)
        if status == 401:
            detail = _detail(e.body)
            if expiry is not None and expiry < datetime.now(UTC):
                return f"{what}: the personal access token expired on {expiry:%Y-%m-%d %H:%M} UTC; {NEW_TOKEN}"
            if self._personal:
                return (
                    f"{what}: Label Studio at {self.url} refused the personal access token "
                    f"(401{': ' + detail if detail else ''}; revoked, rotated or expired); {NEW_TOKEN}"
                )
            return (
                f"{what}: Label Studio at {self.url} refused the API key (401{': ' + detail if detail else ''}); "
                f"check --api-key or {KEY_ENV} (a legacy token or a personal access token from Account & Settings)"
            )
        if page is not None and (status == 404 or (status is not None and 200 <= status < 300)):
            return (
                f"{what}: {self.url} does not answer as a Label Studio API ({status}, a web page titled "
                f"{page!r}); is this the base URL, without a path?"
            )
        if status == 403:
            return f"{what}: the API key's user may not do this on {self.url} (403)"
        if status == 404:
            return f"{what}: not found on {self.url} (404)"
        if status is None:
            return f"{what}: {_detail(e.body) or 'no answer'} ({self.url})"
        if page is not None:
            return f"{what}: Label Studio at {self.url} answered {status}, an error page titled {page!r}"
        return f"{what}: Label Studio at {self.url} answered {status}: {_detail(e.body) or 'no details'}"

    # --- server and projects ---------------------------------------------------------------

    def whoami(self) -> dict[str, Any]:
        """The user the key belongs to; also proves the server is reachable and the key valid."""
        user = self._repeatable("checking the connection", self._sdk.users.whoami)
        return {"id": user.id, "email": user.email}

    def _titled(self, title: str) -> list[dict[str, Any]]:
        """The projects titled exactly ``title``, by id."""
        # Plain requests for only the fields used: without `include` the server counts every
        # task's annotations too, and the SDK's typed pages cost more time than the request.
        fields = "id,title,label_config,task_number,description"
        params: dict[str, Any] = {"title": title, "include": fields, "page_size": 100}
        matches: list[dict[str, Any]] = []
        page = 1
        while True:
            body = self._get(f"looking up project {title!r}", "api/projects/", {**params, "page": page})
            results = body.get("results", []) if isinstance(body, dict) else body
            matches += [p for p in results if isinstance(p, dict) and p.get("title") == title]
            if not isinstance(body, dict) or not body.get("next"):
                return sorted(matches, key=lambda p: int(p["id"]))
            page += 1

    def find_project(self, title: str) -> Project | None:
        matches = self._titled(title)
        # Empty projects annols made beside the first are duplicates their push removes (create_project).
        if any(not _empty_duplicate(p) for p in matches[1:]):
            raise ServerError(f"{len(matches)} projects on {self.url} are titled {title!r}; rename all but one")
        return _project(matches[0]) if matches else None

    def create_project(
        self, title: str, label_config: str, instructions: str = "", overlap: int = 1
    ) -> tuple[Project, bool]:
        """The project titled ``title``, created once: (project, whether this call made it).

        The request is sent without retries and carries a creation id of its own; then the
        projects of that title are looked up. However many the server made for this one
        request (a replay, a retry after a lost answer), the one with the lowest id of that
        title is kept, and the empty ones this call made beside it are deleted. The lowest
        id may be another push's, made at the same moment: then both use it.
        """
        if not 3 <= len(title) <= 50:
            raise ServerError(f"project title {title!r} must be 3 to 50 characters long (Label Studio's limit)")
        creation = CREATION_MARK + secrets.token_hex(8)
        body = {
            "title": title,
            "label_config": label_config,
            "expert_instruction": instructions,
            "show_instruction": bool(instructions),
            "maximum_annotations": overlap,
            "description": f"Created by annols push ({creation}).",
        }
        what = f"creating project {title!r}"

        def send() -> bool:
            with self._calling(what, checked=True):
                self._request("POST", "api/projects/", content=json.dumps(body).encode("utf-8"))
            return True

        def made() -> bool | None:  # made, only the answer was lost
            return any(creation in (p.get("description") or "") for p in self._titled(title)) or None

        self.checked_write(send, made, "the project's creation")
        for wait in (0.0, 0.5, 2.0):  # a listing taken while another push removes its duplicate may come up short
            time.sleep(wait)
            titled = self._titled(title)
            mine = [p for p in titled if creation in (p.get("description") or "")]
            if mine:
                break
        if not mine:
            raise ServerError(f"{what}: {self.url} answered, yet no project of that title is there; try again")
        kept = titled[0]
        extra = [p for p in mine if p is not kept and not p.get("task_number")]
        for p in extra:
            self.delete_project(int(p["id"]))
        if extra:
            ids = ", ".join(str(p["id"]) for p in extra)
            why = "another push made it first" if kept not in mine else "Label Studio ran the creation again"
            self.notice(f"Removed {len(extra)} empty duplicate project(s) this push made ({ids}): {why}")
        return _project(kept), kept in mine

    def delete_project(self, project_id: int) -> None:
        from label_studio_sdk.core.api_error import ApiError

        def delete() -> None:
            try:
                self._request("DELETE", f"api/projects/{project_id}")
            except ApiError as e:
                if e.status_code != 404:  # already gone: a delete repeated or replayed
                    raise

        self._repeatable(f"deleting project {project_id}", delete, checked=True)

    # --- tasks and annotations ---------------------------------------------------------------

    def import_tasks(self, project_id: int, tasks: list[dict[str, Any]]) -> list[int]:
        """Import tasks in one request (no retry); returns the new task ids in order."""
        with self._calling(f"importing {len(tasks)} tasks into project {project_id}"):
            response = self._sdk.projects.import_tasks(
                id=project_id, request=cast(Any, tasks), return_task_ids=True, request_options=NO_RETRY
            )
        extra = response.model_extra or {}
        ids = extra.get("task_ids") or []
        return [int(i) for i in ids]

    def create_annotation(
        self,
        task_id: int,
        result: list[dict[str, Any]],
        *,
        completed_by: int | None = None,
        lead_time: float | None = None,
    ) -> int:
        kwargs: dict[str, Any] = {"id": task_id, "result": result}
        if completed_by is not None:
            kwargs["completed_by"] = completed_by
        if lead_time is not None:
            kwargs["lead_time"] = lead_time
        with self._calling(f"saving an annotation of task {task_id}"):
            annotation = self._sdk.annotations.create(**kwargs, request_options=NO_RETRY)
        return int(annotation.id or 0)

    def _request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        content: bytes | Iterator[bytes] | None = None,
        length: int | None = None,
    ) -> httpx.Response:
        """A request through the SDK's client (its auth, incl. personal access tokens), no retry.

        ``content`` may be an iterator of bytes with its total ``length``: it is then
        streamed with that Content-Length (not chunked, which Django's server cannot read).
        """
        from label_studio_sdk.core.api_error import ApiError

        headers = {"Content-Type": "application/json"} if content is not None else None
        if headers is not None and length is not None:
            headers["Content-Length"] = str(length)
        response = self._sdk._client_wrapper.httpx_client.request(
            path, method=method, params=params, content=content, headers=headers, request_options=NO_RETRY
        )
        if not 200 <= response.status_code < 300:
            try:
                body: Any = response.json()
            except ValueError:
                body = response.text
            raise ApiError(status_code=response.status_code, body=body)
        return response

    @staticmethod
    def _json(response: httpx.Response) -> Any:
        """The JSON of a successful answer; one that is not JSON is not from Label Studio's API."""
        from label_studio_sdk.core.api_error import ApiError

        try:
            return response.json()
        except ValueError:
            raise ApiError(status_code=response.status_code, body=response.text) from None

    def import_json(self, project_id: int, payload: bytes, count: int) -> list[int]:
        """Import tasks already serialised as a JSON array (one request, no retry); returns new ids."""
        with self._calling(f"importing {count} tasks into project {project_id}"):
            response = self._request(
                "POST", f"api/projects/{project_id}/import", params={"return_task_ids": "true"}, content=payload
            )
            body = self._json(response)
        return [int(i) for i in body.get("task_ids") or []]

    def import_serialised(self, project_id: int, tasks: Sequence[bytes | FilePart]) -> list[int]:
        """Import tasks given as the JSON of each (one request, no retry); returns the new task ids.

        The array is streamed from the parts, never joined, and a :class:`FilePart` is read
        only when its turn comes: memory holds at most the batch's bytes given as bytes.
        Checked: after any 5xx or a timeout, push lists the task keys before sending more.
        """
        length = 2 + sum(t.length if isinstance(t, FilePart) else len(t) for t in tasks) + max(0, len(tasks) - 1)
        with self._calling(f"importing {len(tasks)} tasks into project {project_id}", checked=True):
            response = self._request(
                "POST",
                f"api/projects/{project_id}/import",
                params={"return_task_ids": "true"},
                content=_json_array(tasks),
                length=length,
            )
            body = self._json(response)
        return [int(i) for i in body.get("task_ids") or []]

    def _get(self, what: str, path: str, params: dict[str, Any] | None = None) -> Any:
        """The JSON of a GET, retried on failures that may pass."""
        return self._repeatable(what, lambda: self._json(self._request("GET", path, params=params)))

    def task_meta(self, project_id: int, page_size: int = 5000) -> Iterator[tuple[int, dict[str, Any]]]:
        """(task id, meta) of every task, without the task data: cheap even for 100k tasks."""
        for task in self.task_fields(project_id, "id,meta", page_size):
            yield int(task["id"]), task.get("meta") or {}

    def task_fields(
        self,
        project_id: int,
        include: str,
        page_size: int = 5000,
        *,
        updated_after: str | None = None,
        filters: Sequence[dict[str, Any]] = (),
        annotators: bool = False,
    ) -> Iterator[dict[str, Any]]:
        """The fields ``include`` (comma-separated) of every task of the project (only those whose
        ``updated_at`` is after ``updated_after``, an ISO time with milliseconds and "Z", if given,
        and that pass the Data Manager ``filters``). ``annotators``: fill each task's annotator ids
        (the Data Manager computes them only when asked for, here through its review listing)."""
        from label_studio_sdk.core.api_error import ApiError

        extra: dict[str, Any] = {"review": "true"} if annotators else {}
        items = list(filters)
        if updated_after is not None:
            items.append({"filter": "filter:tasks:updated_at", "operator": "greater", "type": "Datetime",
                          "value": updated_after})  # fmt: skip
        if items:
            extra["query"] = json.dumps({"filters": {"conjunction": "and", "items": items}, "ordering": ["tasks:id"]})

        def listed(page: int) -> Any:
            params = {"project": project_id, "include": include, "page": page, "page_size": page_size, **extra}
            try:
                return self._json(self._request("GET", "api/tasks", params=params))
            except ApiError as e:
                if e.status_code == 404 and page > 1:  # past the last page
                    return None
                raise

        page = 1
        seen = 0
        while True:
            body = self._repeatable(f"listing the tasks of project {project_id}", functools.partial(listed, page))
            if body is None:
                return
            tasks = body.get("tasks", [])
            yield from tasks
            seen += len(tasks)
            if not tasks or seen >= int(body.get("total", 0)):
                return
            page += 1

    def latest_update(self, project_id: int) -> str | None:
        """The latest ``updated_at`` among the project's tasks, as the server writes it (None: no tasks).

        A value of the server's own data, to the microsecond: neither its clock to the second (the
        ``Date`` of its answers) nor the client's plays a part.
        """
        query = {"ordering": ["-tasks:updated_at"]}
        params = {"project": project_id, "include": "id,updated_at", "page": 1, "page_size": 1,
                  "query": json.dumps(query)}  # fmt: skip
        body = self._get(f"reading the latest change in project {project_id}", "api/tasks", params)
        tasks = body.get("tasks") or []
        return str(tasks[0]["updated_at"]) if tasks else None

    def count_tasks(self, project_id: int, filters: Sequence[dict[str, Any]] = ()) -> tuple[int, int]:
        """(tasks, annotations not skipped) of the project's tasks that pass the Data Manager
        ``filters`` (all ``and``): one request that lists one task, well under a second at 100k."""
        params: dict[str, Any] = {"project": project_id, "fields": "task_only", "include": "id", "page": 1,
                                  "page_size": 1}  # fmt: skip
        if filters:
            params["query"] = json.dumps({"filters": {"conjunction": "and", "items": list(filters)}})
        body = self._get(f"counting the tasks of project {project_id}", "api/tasks", params)
        return int(body.get("total") or 0), int(body.get("total_annotations") or 0)

    def project_annotators(self, project_id: int) -> list[int]:
        """The ids of the users who saved an annotation (or a skip) in the project."""
        body = self._get(f"listing the annotators of project {project_id}", f"api/projects/{project_id}/annotators/")
        return sorted(int(u["id"]) for u in body)

    def id_range(self, project_id: int, low: int, high: int) -> tuple[int, tuple[int, dict[str, Any]] | None]:
        """How many tasks of the project have an id in [low, high], and the (id, meta) of the first.

        One Data Manager request with an id filter: cheap however large the project.
        """
        ids = {"filter": "filter:tasks:id", "operator": "in", "type": "Number", "value": {"min": low, "max": high}}
        query = {"filters": {"conjunction": "and", "items": [ids]}, "ordering": ["tasks:id"]}
        params = {"project": project_id, "include": "id,meta", "page": 1, "page_size": 1, "query": json.dumps(query)}
        body = self._get(f"counting the tasks of project {project_id}", "api/tasks", params)
        tasks = body.get("tasks") or []
        first = (int(tasks[0]["id"]), tasks[0].get("meta") or {}) if tasks else None
        return int(body.get("total", 0)), first

    def delete_tasks(self, project_id: int, task_ids: Sequence[int]) -> None:
        """Delete these tasks of the project (one Data Manager action; safe to repeat)."""
        if not task_ids:  # the action's default selection is every task of the project
            return
        selected = {"selectedItems": {"all": False, "included": [int(i) for i in task_ids]}}
        payload = json.dumps(selected).encode("utf-8")
        params = {"id": "delete_tasks", "project": project_id}
        self._repeatable(
            f"deleting {len(task_ids)} tasks of project {project_id}",
            lambda: self._request("POST", "api/dm/actions", params=params, content=payload),
            checked=True,
        )

    def task_predictions(self, task_id: int) -> list[dict[str, Any]]:
        """A task's predictions in full (the raw export lists them by id only)."""
        body = self._get(f"reading the predictions of task {task_id}", "api/predictions/", {"task": task_id})
        return list(body if isinstance(body, list) else body.get("results", []))

    def project(self, project_id: int, fields: str | None = None) -> dict[str, Any]:
        """The project's settings and counts; only ``fields`` (comma-separated) if given, which spares
        the server counting what is not asked for (0.8 s of 1 s at 20,000 tasks)."""
        params = {"include": fields} if fields else None
        return dict(self._get(f"reading project {project_id}", f"api/projects/{project_id}", params))

    def update_project(self, project_id: int, **fields: Any) -> None:
        # Setting fields to given values: as safe to repeat as a read.
        payload = json.dumps(fields).encode("utf-8")
        self._repeatable(
            f"updating project {project_id}",
            lambda: self._request("PATCH", f"api/projects/{project_id}", content=payload),
            checked=True,
        )

    def reopen_task(self, task_id: int, overlap: int) -> None:
        """Ask for ``overlap`` annotators of the task (its own overlap, beside the project's maximum_annotations).

        ``PATCH /api/tasks/<id>/`` writes the task's model fields (TaskSimpleSerializer). ``is_labeled`` is not
        recomputed there, so it is sent too: false makes Label Studio offer the task again, in the label stream, to
        annotators who have not judged it (never to one who has: seen on 1.23.2); if the task already has that many
        annotations, a second request sets it back to true. Label Studio resets task overlaps when the project's
        maximum_annotations changes (Project._update_tasks_states): see :mod:`annols.study.passes`. Setting fields to
        given values: as safe to repeat as a read.
        """
        what = f"re-opening task {task_id} for {overlap} annotators"

        def patch(fields: dict[str, Any]) -> Any:
            payload = json.dumps(fields).encode("utf-8")
            return self._repeatable(
                what, lambda: self._json(self._request("PATCH", f"api/tasks/{task_id}/", content=payload)), checked=True
            )

        task = patch({"overlap": overlap, "is_labeled": False})
        if int(task.get("total_annotations") or 0) >= overlap:
            patch({"is_labeled": True})

    def users(self) -> dict[str, int]:
        """Email -> user id of every user in the organization."""
        listed: Any = self._repeatable("listing users", lambda: list(self._sdk.users.list()))
        return {u.email: int(u.id) for u in listed if u.email}

    def create_user(self, email: str, *, first_name: str = "", last_name: str = "") -> int:
        """The new user's id; after a failure that may pass, the users are looked up by email first."""
        username = email.split("@")[0]

        def send() -> int:
            with self._calling(f"creating user {email}", checked=True):
                user = self._sdk.users.create(
                    email=email, username=username, first_name=first_name, last_name=last_name,
                    request_options=NO_RETRY,
                )  # fmt: skip
            return int(user.id or 0)

        def made() -> int | None:  # Label Studio keeps emails in lower case
            return next((i for e, i in self.users().items() if e.lower() == email.lower()), None)

        return self.checked_write(send, made, f"the creation of user {email}")

    def export_to(self, project_id: int, path: Path) -> int:
        """Stream the raw JSON export into the file ``path``; returns the bytes written.

        A download cut short (a dropped connection, a body shorter than its Content-Length,
        or one without a length that does not end as a JSON array) is downloaded again.
        """
        what = f"exporting project {project_id}"

        def download() -> int:
            written = 0
            with open(path, "wb") as f, self.waiting(f"Label Studio is still exporting project {project_id}"):
                for chunk in self._sdk.projects.exports.download_sync(
                    id=project_id, export_type="JSON", download_all_tasks=True, request_options=NO_RETRY
                ):
                    f.write(chunk)
                    written += len(chunk)
            if not _json_array_ends(path):
                raise TransientServerError(
                    f"{what}: the export from {self.url} was cut short", "the export was cut short"
                )
            return written

        try:
            return self._repeatable(what, download)
        except OSError as e:
            raise WriteError(path, e) from e

    def export_ids_to(self, project_id: int, task_ids: Sequence[int], path: Path) -> None:
        """The raw JSON export of just these tasks into the file ``path`` (one request; keep the ids to a
        few hundred, they go in the URL)."""
        params: dict[str, Any] = {"exportType": "JSON", "download_all_tasks": "true", "ids[]": list(task_ids)}
        what = f"exporting {len(task_ids)} changed tasks of project {project_id}"
        body = self._repeatable(what, lambda: self._request("GET", f"api/projects/{project_id}/export", params=params))
        try:
            with open(path, "wb") as f:
                f.write(body.content)
        except OSError as e:
            raise WriteError(path, e) from e

    def server_time(self) -> datetime:
        """The server's clock, from the Date of its answer (to the second)."""
        from email.utils import parsedate_to_datetime

        response = self._repeatable("reading the server's clock", lambda: self._request("GET", "api/version/"))
        date = response.headers.get("date")
        if not date:
            raise ServerError(f"reading the server's clock: {self.url} sent no Date header")
        return parsedate_to_datetime(date).astimezone(UTC)

    def export_json(self, project_id: int) -> bytes:
        """The raw JSON export of every task (the only export that keeps relations and per-region answers)."""
        return self._repeatable(
            f"exporting project {project_id}",
            lambda: b"".join(
                self._sdk.projects.exports.download_sync(
                    id=project_id, export_type="JSON", download_all_tasks=True, request_options=NO_RETRY
                )
            ),
        )

    def export_tasks(self, project_id: int) -> list[dict[str, Any]]:
        data = json.loads(self.export_json(project_id))
        if not isinstance(data, list):
            raise ServerError(f"exporting project {project_id}: expected a list of tasks from {self.url}")
        return data


def _json_array_ends(path: Path) -> bool:
    """Whether the file starts with ``[`` and ends with ``]`` (white space aside): a cheap "not cut short"."""
    with open(path, "rb") as f:
        head = f.read(64).lstrip()
        f.seek(max(0, f.seek(0, os.SEEK_END) - 64))
        tail = f.read().rstrip()
    return head.startswith(b"[") and tail.endswith(b"]")


def _project(p: dict[str, Any]) -> Project:
    return Project(
        id=int(p["id"]),
        title=str(p["title"]),
        label_config=p.get("label_config") or "",
        task_count=p.get("task_number"),
    )


def _empty_duplicate(p: dict[str, Any]) -> bool:
    return CREATION_MARK in (p.get("description") or "") and not p.get("task_number")


def _jwt_expiry(api_key: str) -> datetime | None:
    """When a personal access token (a JWT) expires; None for a legacy token."""
    import jwt

    try:
        claims = jwt.decode(api_key, options={"verify_signature": False})
    except jwt.InvalidTokenError:
        return None
    exp = claims.get("exp")  # none: the SDK refuses it as "not valid"
    return datetime.fromtimestamp(exp, UTC) if isinstance(exp, int | float) else datetime.max.replace(tzinfo=UTC)


def _cut_short(e: ApiError) -> bool:
    """A successful answer whose JSON does not parse and is no web page: its end was lost."""
    status = e.status_code or 0
    return 200 <= status < 300 and isinstance(e.body, str) and _page_title(e.body) is None


def _page_title(body: Any) -> str | None:
    """The title of an HTML page given as an error body ("" if it has none); None if it is not a page."""
    if not isinstance(body, str) or not body.lstrip().startswith("<"):
        return None
    match = re.search(r"<title[^>]*>(.*?)</title>", body, re.IGNORECASE | re.DOTALL)
    return " ".join(match.group(1).split())[:120] if match else ""


def _json_array(parts: Sequence[bytes | FilePart], piece: int = 1 << 20) -> Iterator[bytes]:
    """``[part,part,...]`` in pieces of about ``piece`` bytes."""
    buffer = [b"["]
    size = 0
    for i, part in enumerate(parts):
        data = part.read() if isinstance(part, FilePart) else part
        if i:
            buffer.append(b",")
        buffer.append(data)
        size += len(data)
        if size >= piece:
            yield b"".join(buffer)
            buffer, size = [], 0
    buffer.append(b"]")
    yield b"".join(buffer)


def _detail(body: Any) -> str:
    """A short, header-free description of an error body."""
    if isinstance(body, dict):
        errors = body.get("validation_errors")
        if isinstance(errors, dict) and errors:
            parts = []
            for field, messages in errors.items():
                text = "; ".join(str(m) for m in messages) if isinstance(messages, list) else str(messages)
                parts.append(f"{field}: {text}")
            return " | ".join(parts)
        for key in ("detail", "error", "message"):
            if body.get(key):
                return str(body[key])
        return json.dumps(body)[:300]
    if isinstance(body, str):
        return body.strip().splitlines()[0][:300] if body.strip() else ""
    return ""


def settings_from_env() -> tuple[str | None, str | None]:
    return os.environ.get(URL_ENV), os.environ.get(KEY_ENV)


def timeout_from_env() -> float:
    """Seconds to wait for an answer: ``ANNOLS_TIMEOUT`` if set, else 600."""
    raw = os.environ.get(TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_TIMEOUT
    try:
        seconds = float(raw)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds < float("inf"):
        raise AnnolsError(f"{TIMEOUT_ENV} must be a number of seconds above 0, not {raw!r}")
    return seconds


def connect(
    url: str | None = None,
    api_key: str | None = None,
    data_dir: Path | None = None,
    on_notice: Callable[[str], None] | None = None,
) -> LabelStudioClient:
    """A client from explicit settings, else ``LABEL_STUDIO_URL``/``LABEL_STUDIO_API_KEY``,
    else the embedded server's (started with ``annols server start``); ``on_notice`` gets
    its retry notices."""
    env_url, env_key = settings_from_env()
    url = url or env_url
    api_key = api_key or env_key
    timeout = timeout_from_env()
    if url and api_key:
        return LabelStudioClient(url, api_key, on_notice=on_notice, timeout=timeout)
    if url or api_key:
        missing = "--api-key (or LABEL_STUDIO_API_KEY)" if url else "--url (or LABEL_STUDIO_URL)"
        raise ServerError(f"a server needs both a URL and an API key: also pass {missing}")
    data_dir = data_dir or server.default_data_dir()
    state = server.status(data_dir)
    if state is None:
        raise Unreachable(
            f"no Label Studio given and the local one ({data_dir}) is not running: "
            "run `annols server start`, or pass --url and --api-key",
            "not running",
        )
    return LabelStudioClient(state.url, server.api_token(data_dir), on_notice=on_notice, timeout=timeout)
