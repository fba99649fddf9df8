"""The one module that talks to Label Studio (through label-studio-sdk).

Everything the server answers badly becomes a one-line :class:`ServerError` naming the
URL and what to do; the SDK's own error text (which dumps every response header) is
never shown. Imports are sent with retries off: a retried import can create the same
tasks twice, so idempotence is the caller's job, not the transport's.

The client is the SDK's generated base client, not ``label_studio_sdk.LabelStudio``: the
latter imports pandas, the converter and every cloud-storage library (about 1.5 s and
180 MB before the first request); the base client and its lazily loaded sub-clients make
the same requests. They, httpx and pydantic are imported on first use, so that offline
commands (convert, tasks, validate) start without them.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from annols import server
from annols.errors import ServerError

if TYPE_CHECKING:
    import httpx
    from label_studio_sdk.core.api_error import ApiError
    from label_studio_sdk.core.request_options import RequestOptions

NO_RETRY: RequestOptions = {"max_retries": 0}
URL_ENV = "LABEL_STUDIO_URL"
KEY_ENV = "LABEL_STUDIO_API_KEY"


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
    """A connection to one Label Studio server as one user."""

    def __init__(self, url: str, api_key: str, *, timeout: float = 600.0) -> None:
        from label_studio_sdk.base_client import LabelStudioBase

        self.url = url.rstrip("/")
        self._sdk = LabelStudioBase(base_url=self.url, api_key=api_key, timeout=timeout)

    # --- errors ----------------------------------------------------------------------------

    @contextlib.contextmanager
    def _calling(self, what: str) -> Iterator[None]:
        import httpx
        from label_studio_sdk.core.api_error import ApiError

        try:
            yield
        except ApiError as e:
            raise ServerError(self._explain(what, e)) from None
        except httpx.TimeoutException:
            raise ServerError(f"{what}: Label Studio at {self.url} did not answer in time; try again") from None
        except httpx.HTTPError as e:
            raise ServerError(
                f"{what}: cannot reach Label Studio at {self.url} ({type(e).__name__}); "
                "is it running? Start the local one with `annols server start`, or pass --url"
            ) from None

    def _explain(self, what: str, e: ApiError) -> str:
        status = e.status_code
        if status == 401:
            detail = _detail(e.body)
            return (
                f"{what}: Label Studio at {self.url} refused the API key (401{': ' + detail if detail else ''}); "
                f"check --api-key or {KEY_ENV} (a legacy token or a personal access token from Account & Settings)"
            )
        if status == 403:
            return f"{what}: the API key's user may not do this on {self.url} (403)"
        if status == 404:
            return f"{what}: not found on {self.url} (404)"
        if status is None:
            return f"{what}: {_detail(e.body) or 'no answer'} ({self.url})"
        return f"{what}: Label Studio at {self.url} answered {status}: {_detail(e.body) or 'no details'}"

    # --- server and projects ---------------------------------------------------------------

    def whoami(self) -> dict[str, Any]:
        """The user the key belongs to; also proves the server is reachable and the key valid."""
        with self._calling("checking the connection"):
            user = self._sdk.users.whoami()
        return {"id": user.id, "email": user.email}

    def find_project(self, title: str) -> Project | None:
        # Plain requests for only the fields used: without `include` the server counts every
        # task's annotations too, and the SDK's typed pages cost more time than the request.
        matches: list[dict[str, Any]] = []
        with self._calling(f"looking up project {title!r}"):
            params: dict[str, Any] = {"title": title, "include": "id,title,label_config,task_number", "page_size": 100}
            page = 1
            while True:
                body = self._request("GET", "api/projects/", params={**params, "page": page}).json()
                results = body.get("results", []) if isinstance(body, dict) else body
                matches += [p for p in results if isinstance(p, dict) and p.get("title") == title]
                if not isinstance(body, dict) or not body.get("next"):
                    break
                page += 1
        if len(matches) > 1:
            raise ServerError(
                f"{len(matches)} projects on {self.url} are titled {title!r}; rename all but one"
            )
        if not matches:
            return None
        p = matches[0]
        return Project(
            id=int(p["id"]), title=title, label_config=p.get("label_config") or "", task_count=p.get("task_number")
        )

    def create_project(
        self, title: str, label_config: str, instructions: str = "", overlap: int = 1
    ) -> Project:
        if not 3 <= len(title) <= 50:
            raise ServerError(f"project title {title!r} must be 3 to 50 characters long (Label Studio's limit)")
        with self._calling(f"creating project {title!r}"):
            p = self._sdk.projects.create(
                title=title,
                label_config=label_config,
                expert_instruction=instructions,
                show_instruction=bool(instructions),
                maximum_annotations=overlap,
            )
        return Project(id=int(p.id or 0), title=p.title or title, label_config=p.label_config or label_config)

    def delete_project(self, project_id: int) -> None:
        with self._calling(f"deleting project {project_id}"):
            self._sdk.projects.delete(id=project_id)

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

    def import_json(self, project_id: int, payload: bytes, count: int) -> list[int]:
        """Import tasks already serialised as a JSON array (one request, no retry); returns new ids."""
        with self._calling(f"importing {count} tasks into project {project_id}"):
            response = self._request(
                "POST", f"api/projects/{project_id}/import", params={"return_task_ids": "true"}, content=payload
            )
        body = response.json()
        return [int(i) for i in body.get("task_ids") or []]

    def import_serialised(self, project_id: int, tasks: Sequence[bytes | FilePart]) -> list[int]:
        """Import tasks given as the JSON of each (one request, no retry); returns the new task ids.

        The array is streamed from the parts, never joined, and a :class:`FilePart` is read
        only when its turn comes: memory holds at most the batch's bytes given as bytes.
        """
        length = 2 + sum(t.length if isinstance(t, FilePart) else len(t) for t in tasks) + max(0, len(tasks) - 1)
        with self._calling(f"importing {len(tasks)} tasks into project {project_id}"):
            response = self._request(
                "POST",
                f"api/projects/{project_id}/import",
                params={"return_task_ids": "true"},
                content=_json_array(tasks),
                length=length,
            )
        body = response.json()
        return [int(i) for i in body.get("task_ids") or []]

    def task_meta(self, project_id: int, page_size: int = 5000) -> Iterator[tuple[int, dict[str, Any]]]:
        """(task id, meta) of every task, without the task data: cheap even for 100k tasks."""
        page = 1
        seen = 0
        while True:
            from label_studio_sdk.core.api_error import ApiError

            with self._calling(f"listing the tasks of project {project_id}"):
                try:
                    response = self._request(
                        "GET",
                        "api/tasks",
                        params={"project": project_id, "include": "id,meta", "page": page, "page_size": page_size},
                    )
                except ApiError as e:
                    if e.status_code == 404 and page > 1:  # past the last page
                        return
                    raise
            body = response.json()
            tasks = body.get("tasks", [])
            for task in tasks:
                yield int(task["id"]), task.get("meta") or {}
            seen += len(tasks)
            if not tasks or seen >= int(body.get("total", 0)):
                return
            page += 1

    def id_range(self, project_id: int, low: int, high: int) -> tuple[int, tuple[int, dict[str, Any]] | None]:
        """How many tasks of the project have an id in [low, high], and the (id, meta) of the first.

        One Data Manager request with an id filter: cheap however large the project.
        """
        ids = {"filter": "filter:tasks:id", "operator": "in", "type": "Number", "value": {"min": low, "max": high}}
        query = {"filters": {"conjunction": "and", "items": [ids]}, "ordering": ["tasks:id"]}
        params = {"project": project_id, "include": "id,meta", "page": 1, "page_size": 1, "query": json.dumps(query)}
        with self._calling(f"counting the tasks of project {project_id}"):
            body = self._request("GET", "api/tasks", params=params).json()
        tasks = body.get("tasks") or []
        first = (int(tasks[0]["id"]), tasks[0].get("meta") or {}) if tasks else None
        return int(body.get("total", 0)), first

    def task_predictions(self, task_id: int) -> list[dict[str, Any]]:
        """A task's predictions in full (the raw export lists them by id only)."""
        with self._calling(f"reading the predictions of task {task_id}"):
            body = self._request("GET", "api/predictions/", params={"task": task_id}).json()
        return list(body if isinstance(body, list) else body.get("results", []))

    def project(self, project_id: int) -> dict[str, Any]:
        with self._calling(f"reading project {project_id}"):
            return dict(self._request("GET", f"api/projects/{project_id}").json())

    def update_project(self, project_id: int, **fields: Any) -> None:
        with self._calling(f"updating project {project_id}"):
            self._request("PATCH", f"api/projects/{project_id}", content=json.dumps(fields).encode("utf-8"))

    def users(self) -> dict[str, int]:
        """Email -> user id of every user in the organization."""
        with self._calling("listing users"):
            listed: Any = self._sdk.users.list()
            return {u.email: int(u.id) for u in listed if u.email}

    def create_user(self, email: str, *, first_name: str = "", last_name: str = "") -> int:
        username = email.split("@")[0]
        with self._calling(f"creating user {email}"):
            user = self._sdk.users.create(email=email, username=username, first_name=first_name, last_name=last_name)
        return int(user.id or 0)

    def export_to(self, project_id: int, f: Any) -> int:
        """Stream the raw JSON export into the binary file ``f``; returns the bytes written."""
        written = 0
        with self._calling(f"exporting project {project_id}"):
            for chunk in self._sdk.projects.exports.download_sync(
                id=project_id, export_type="JSON", download_all_tasks=True
            ):
                f.write(chunk)
                written += len(chunk)
        return written

    def export_json(self, project_id: int) -> bytes:
        """The raw JSON export of every task (the only export that keeps relations and per-region answers)."""
        with self._calling(f"exporting project {project_id}"):
            return b"".join(
                self._sdk.projects.exports.download_sync(
                    id=project_id, export_type="JSON", download_all_tasks=True
                )
            )

    def export_tasks(self, project_id: int) -> list[dict[str, Any]]:
        data = json.loads(self.export_json(project_id))
        if not isinstance(data, list):
            raise ServerError(f"exporting project {project_id}: expected a list of tasks from {self.url}")
        return data


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


def connect(url: str | None = None, api_key: str | None = None, data_dir: Path | None = None) -> LabelStudioClient:
    """A client from explicit settings, else ``LABEL_STUDIO_URL``/``LABEL_STUDIO_API_KEY``,
    else the embedded server's (started with ``annols server start``)."""
    env_url, env_key = settings_from_env()
    url = url or env_url
    api_key = api_key or env_key
    if url and api_key:
        return LabelStudioClient(url, api_key)
    if url or api_key:
        missing = "--api-key (or LABEL_STUDIO_API_KEY)" if url else "--url (or LABEL_STUDIO_URL)"
        raise ServerError(f"a server needs both a URL and an API key: also pass {missing}")
    data_dir = data_dir or server.default_data_dir()
    state = server.status(data_dir)
    if state is None:
        raise ServerError(
            f"no Label Studio given and the local one ({data_dir}) is not running: "
            "run `annols server start`, or pass --url and --api-key"
        )
    return LabelStudioClient(state.url, server.api_token(data_dir))
