"""Team accounts on a Label Studio server: list them, and add annotators who can log in.

Label Studio's users API (``POST /api/users/``, the SDK's ``users.create``) makes an
account but ignores any password, so nobody can log in to it; the server-side command
``label-studio reset_password`` needs a shell on the server. What works over HTTP, with
only the admin's API key, is the organization's invite link, the way a person would use
it: the key reads the invite token (``GET /api/invite``), then the signup form
``/user/signup/?token=...`` is posted with the email, the password and Django's CSRF token
from the form page. Label Studio applies its password rules there (8 to 128 characters)
and its form errors are reported as they are. The signup leaves
that session logged in as the new account; asking it ``/api/current-user/whoami``
confirms the account, then the session is dropped.

The invite token works whether or not the server allows signups without it
(``LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK``, set in docker-compose.yml). Accounts that
exist are left as they are: their passwords cannot be changed over the API.

Passwords are never logged, printed or put in an error message.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Any
from urllib.parse import urlsplit

import httpx
from lxml import etree, html

from annols.errors import AnnolsError, InputError, ServerError, TransientServerError
from annols.labelstudio.client import LabelStudioClient

# Label Studio's AUTH_PASSWORD_MIN_LENGTH / AUTH_PASSWORD_MAX_LENGTH: checked before
# anything is sent, so a bad file does not leave half the accounts made.
MIN_PASSWORD = 8
MAX_PASSWORD = 128
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_CSRF_FIELD = re.compile(r'name="csrfmiddlewaretoken"\s+value="([^"]+)"')


@dataclass(frozen=True)
class Account:
    id: int
    email: str
    name: str


@dataclass(frozen=True)
class Added:
    """One email of ``add_accounts``: made now (``created``) or already there."""

    email: str
    id: int
    created: bool
    can_log_in: bool


def list_accounts(client: LabelStudioClient) -> list[Account]:
    """Every account of the server's organization, by id."""
    listed: Any = client._repeatable("listing users", lambda: list(client._sdk.users.list()))
    accounts = [
        Account(
            id=int(u.id),
            email=u.email,
            name=" ".join(part for part in (u.first_name or "", u.last_name or "") if part),
        )
        for u in listed
        if u.email
    ]
    return sorted(accounts, key=lambda a: a.id)


def check_emails(emails: Sequence[str]) -> list[str]:
    """The emails as Label Studio stores them (lower case); one-line error on a bad or repeated one."""
    seen: set[str] = set()
    result = []
    for raw in emails:
        email = raw.strip().lower()
        if not _EMAIL.match(email):
            raise AnnolsError(f"{raw!r} is not an email address; give one address per argument")
        if email in seen:
            raise AnnolsError(f"{email} is given twice; give each address once")
        seen.add(email)
        result.append(email)
    return result


def read_passwords(f: IO[str], source: str, count: int) -> list[str]:
    """``count`` passwords from a file: one per line in the order of the emails, or one shared.

    Whitespace around a password is dropped (Label Studio's forms drop it too); blank
    lines at the end are ignored, blank lines before that are an error.
    """
    lines = [line.strip() for line in f.read().splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    if not lines:
        raise InputError(source, "", "", "no password in the file; write one per line, or one shared password")
    for number, password in enumerate(lines, start=1):
        if not password:
            raise InputError(source, f"line {number}", "", "empty line; write one password per line")
        if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
            raise InputError(
                source, f"line {number}", "",
                f"the password must be {MIN_PASSWORD} to {MAX_PASSWORD} characters long (Label Studio's rule)",
            )  # fmt: skip
    if len(lines) == 1:
        return lines * count
    if len(lines) != count:
        raise InputError(
            source, "", "",
            f"{len(lines)} passwords for {count} email(s): write one per email, in the same order, "
            "or a single shared password",
        )  # fmt: skip
    return lines


def add_accounts(
    client: LabelStudioClient, emails: Sequence[str], passwords: Sequence[str] | None = None
) -> Iterator[Added]:
    """Add each email that has no account yet; with passwords, through the invite link.

    Yields as it goes, so a caller can report progress; a failure stops the batch with a
    ServerError, and a re-run skips the accounts already made.
    """
    emails = [e.strip().lower() for e in emails]  # as Label Studio stores them
    if passwords is not None and len(passwords) != len(emails):
        raise ValueError("one password per email")
    existing = {a.email.lower(): a for a in list_accounts(client)}
    invite: str | None = None
    for i, email in enumerate(emails):
        if email in existing:
            yield Added(email=email, id=existing[email].id, created=False, can_log_in=False)
            continue
        if passwords is None:
            yield Added(email=email, id=client.create_user(email), created=True, can_log_in=False)
            continue
        if invite is None:
            invite = invite_token(client)
        yield Added(email=email, id=_signup_once(client, invite, email, passwords[i]), created=True, can_log_in=True)


def _signup_once(client: LabelStudioClient, invite: str, email: str, password: str) -> int:
    """``signup``, not repeated blindly: after a failure that may pass, the account is looked up first
    (a signup that went through made it with the password given, in one step)."""

    def made() -> int | None:
        account = {a.email.lower(): a for a in list_accounts(client)}.get(email)
        return None if account is None else account.id

    return client.checked_write(lambda: signup(client.url, invite, email, password), made, f"the signup of {email}")


def invite_token(client: LabelStudioClient) -> str:
    """The organization's invite token (the ``token`` of its invite link)."""
    invite: Any = client._repeatable(
        "reading the organization's invite link", client._sdk.organizations.invites.get_invite_link
    )
    if not invite.token:
        raise ServerError(f"reading the organization's invite link: {client.url} gave no invite token")
    return str(invite.token)


def signup(url: str, invite: str, email: str, password: str, *, timeout: float = 60.0) -> int:
    """Make the account through the signup form of the invite link; returns its user id."""
    what = f"creating the account {email}"
    with _session(url, timeout) as session:
        _post_form(session, "user/signup/", {"token": invite}, {"email": email, "password": password}, what)
        user = _whoami(session, what)
    if str(user.get("email", "")).lower() != email.strip().lower():
        raise ServerError(f"{what}: the signup on {url} did not log in as {email}; check the account in the web UI")
    return int(user["id"])


@contextlib.contextmanager
def logged_in(url: str, email: str, password: str, *, timeout: float = 60.0) -> Iterator[httpx.Client]:
    """A session logged in as ``email`` through the login form, as a person logs in.

    Proves a password works; the session can then use the API as that person, e.g.
    ``GET api/current-user/token`` for their own API token.
    """
    what = f"logging in as {email}"
    with _session(url, timeout) as session:
        _post_form(session, "user/login/", {}, {"email": email, "password": password}, what)
        _whoami(session, what)
        yield session


def _session(url: str, timeout: float) -> httpx.Client:
    base = url.rstrip("/") + "/"
    parts = urlsplit(base)
    # Sent as a browser would: Django checks Origin (and Referer over HTTPS) on forms.
    headers = {"Origin": f"{parts.scheme}://{parts.netloc}"}
    return httpx.Client(base_url=base, timeout=timeout, follow_redirects=False, headers=headers)


def _post_form(session: httpx.Client, path: str, params: dict[str, str], fields: dict[str, str], what: str) -> None:
    """GET the form page (CSRF cookie and token), then POST it; a redirect means accepted."""
    page = _send(session, "GET", path, params, None, what)
    if page.status_code != 200:
        raise ServerError(f"{what}: {session.base_url}{path} answered {page.status_code}; is this a Label Studio?")
    match = _CSRF_FIELD.search(page.text)
    csrf = match.group(1) if match else session.cookies.get("csrftoken")
    if not csrf:
        raise ServerError(f"{what}: the form at {session.base_url}{path} has no CSRF token; is this a Label Studio?")
    data = {"csrfmiddlewaretoken": csrf, **fields}
    referer = str(page.url)
    response = _send(session, "POST", path, params, data, what, referer=referer)
    if response.status_code in (301, 302, 303):
        return
    if response.status_code == 200:
        raise ServerError(f"{what}: Label Studio refused it: {_form_errors(response.text)}")
    if response.status_code == 403:
        raise ServerError(
            f"{what}: {session.base_url}{path} answered 403 (the invite link was reset, or the server's "
            "CSRF_TRUSTED_ORIGINS does not include this URL)"
        )
    raise ServerError(f"{what}: {session.base_url}{path} answered {response.status_code}")


def _send(
    session: httpx.Client,
    method: str,
    path: str,
    params: dict[str, str],
    data: dict[str, str] | None,
    what: str,
    referer: str | None = None,
) -> httpx.Response:
    headers = {"Referer": referer} if referer else None
    try:
        response = session.request(method, path, params=params, data=data, headers=headers)
    except httpx.TimeoutException:  # the server may have done it all the same: _signup_once looks
        raise TransientServerError(
            f"{what}: Label Studio at {session.base_url} did not answer in time; try again",
            "Label Studio did not answer in time",
        ) from None
    except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError):
        raise TransientServerError(
            f"{what}: the connection to Label Studio at {session.base_url} was cut",
            "the connection to Label Studio was cut",
        ) from None
    except httpx.HTTPError as e:
        raise ServerError(f"{what}: cannot reach Label Studio at {session.base_url} ({type(e).__name__})") from None
    if response.status_code >= 500:  # a proxy's 502, or SQLite's lock hit before the view ran (HTML 500)
        raise TransientServerError(
            f"{what}: {session.base_url}{path} answered {response.status_code}",
            f"Label Studio answered {response.status_code}",
        )
    return response


def _whoami(session: httpx.Client, what: str) -> dict[str, Any]:
    response = _send(session, "GET", "api/current-user/whoami", {}, None, what)
    try:
        body = response.json() if response.status_code == 200 else None
    except ValueError:
        body = None
    if not isinstance(body, dict) or "id" not in body:
        raise ServerError(f"{what}: the session is not logged in ({response.status_code} from whoami)")
    return body


def _form_errors(page: str) -> str:
    """The messages a Label Studio form shows under its fields and at its bottom."""
    try:
        doc = html.fromstring(page)
    except (ValueError, etree.ParserError):
        return "no reason given"
    texts = doc.xpath(
        "//ul[contains(concat(' ', normalize-space(@class), ' '), ' field_errors ')]/li"
        " | //*[contains(concat(' ', normalize-space(@class), ' '), ' error ')]"
    )
    messages = [" ".join(t.text_content().split()) for t in texts]
    unique = list(dict.fromkeys(m for m in messages if m))
    return "; ".join(unique) or "no reason given"
