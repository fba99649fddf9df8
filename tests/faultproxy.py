"""A loopback HTTP proxy in front of Label Studio that fails requests on purpose.

What nginx in front of a busy server does, and worse: per test it answers 502 to every
Nth request before or after forwarding it, drops the connection after the server acted,
cuts a body short (with or without a Content-Length announcing the whole), answers an
HTML error page (a given one, e.g. Label Studio's own "500 | Label Studio", which it
answers when a middleware hits SQLite's lock) before or after forwarding, delays before
forwarding or before answering, or sends a request three times and answers the last
answer (what Label Studio's DatabaseIsLockedRetryMiddleware does on SQLite). Real HTTP
on a real socket; no part of annols is replaced.

Requests are forwarded one by one on a fresh upstream connection, bodies whole.
"""

from __future__ import annotations

import http.client
import http.server
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

# What the proxy does to a request it picks.
MODES = ("502-before", "502-after", "drop-after", "cut", "cut-unannounced", "page-500", "page-500-after", "delay",
         "delay-after", "replay")  # fmt: skip
BAD_GATEWAY_PAGE = (
    b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1>"
    b"</center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n"
)
SERVER_ERROR_PAGE = (
    b"<!doctype html>\n<html><head><title>500 Internal Server Error</title></head>"
    b"<body><h1>Internal Server Error</h1><p>The server encountered an internal error.</p></body></html>\n"
)
# What Label Studio 1.23 answers when an exception escapes a middleware (its templates/500.html).
LABEL_STUDIO_ERROR_PAGE = (
    b'<!DOCTYPE html>\n<html lang="en">\n<head>\n  <meta charset="UTF-8">\n  <title>500 | Label Studio</title>\n'
    b'  <link rel="stylesheet" href="/static/css/error.css"/>\n</head>\n<body>\n<div class="ls-global-error">\n'
    b"  <h1>Uh oh, something went wrong.</h1>\n  <h2>Here\xe2\x80\x99s a few things you can try:</h2>\n</div>\n"
    b"</body>\n</html>\n"
)
HOP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "content-length", "proxy-connection", "upgrade"}


@dataclass
class Rule:
    """Which requests fail, and how: the ``start``-th request matching ``match``, then every ``every``-th."""

    mode: str = ""
    every: int = 0
    start: int = 1
    match: Callable[[str, str], bool] = lambda method, path: True
    delay: float = 0.0
    page: bytes = SERVER_ERROR_PAGE  # what the page-500 modes answer
    seen: int = 0
    hits: list[str] = field(default_factory=list)  # "METHOD path" of each request failed

    def picks(self, method: str, path: str) -> bool:
        if not self.mode or not self.every or not self.match(method, path):
            return False
        self.seen += 1
        return self.seen >= self.start and (self.seen - self.start) % self.every == 0


class FaultProxy:
    """``with FaultProxy(upstream) as proxy:`` then ``proxy.url``; ``proxy.fail(...)`` sets the rule."""

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.rule = Rule()
        self.requests = 0
        self.seen: list[str] = []  # "METHOD path" of every request, in order
        self._lock = threading.Lock()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:  # quiet
                pass

            def handle_one_request(self) -> None:
                try:
                    self.raw_requestline = self.rfile.readline(65537)
                    if not self.raw_requestline or not self.parse_request():
                        self.close_connection = True
                        return
                    proxy._handle(self)
                except (ConnectionError, TimeoutError):
                    self.close_connection = True

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="fault-proxy", daemon=True)

    def __enter__(self) -> FaultProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def fail(
        self,
        mode: str = "",
        every: int = 0,
        *,
        start: int = 1,
        match: Callable[[str, str], bool] | None = None,
        delay: float = 0.0,
        page: bytes = SERVER_ERROR_PAGE,
    ) -> Rule:
        """From now on, fail the ``start``-th matching request and every ``every``-th after it (none: pass all)."""
        assert not mode or mode in MODES, mode
        with self._lock:
            self.rule = Rule(mode, every, start, match or (lambda method, path: True), delay, page)
            return self.rule

    def _handle(self, handler: http.server.BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        method, path = handler.command, handler.path
        with self._lock:
            self.requests += 1
            self.seen.append(f"{method} {path}")
            rule = self.rule
            mode = rule.mode if rule.picks(method, path) else ""
            if mode:
                rule.hits.append(f"{method} {path}")
        if mode == "502-before":
            return _answer(handler, 502, "Bad Gateway", BAD_GATEWAY_PAGE)
        if mode == "page-500":
            return _answer(handler, 500, "Internal Server Error", rule.page)
        if mode == "delay":
            time.sleep(rule.delay)
        for _ in range(2 if mode == "replay" else 0):
            self._forward(handler, method, path, body)
        status, reason, headers, content = self._forward(handler, method, path, body)
        if mode == "502-after":
            return _answer(handler, 502, "Bad Gateway", BAD_GATEWAY_PAGE)
        if mode == "page-500-after":
            return _answer(handler, 500, "Internal Server Error", rule.page)
        if mode == "delay-after":  # the server has acted; a client that stops waiting loses the answer
            time.sleep(rule.delay)
        if mode == "drop-after":
            handler.close_connection = True
            handler.connection.shutdown(socket.SHUT_RDWR)
            return None
        handler.send_response_only(status, reason)
        for name, value in headers:
            handler.send_header(name, value)
        if mode == "cut-unannounced":  # the length is "until the connection closes": only JSON can tell
            handler.send_header("Connection", "close")
            handler.end_headers()
            handler.wfile.write(content[: len(content) // 2])
            handler.close_connection = True
            return None
        handler.send_header("Content-Length", str(len(content)))
        handler.end_headers()
        if mode == "cut":  # fewer bytes than announced
            handler.wfile.write(content[: len(content) // 2])
            handler.wfile.flush()
            handler.close_connection = True
            handler.connection.shutdown(socket.SHUT_RDWR)
            return None
        handler.wfile.write(content)
        return None

    def _forward(
        self, handler: http.server.BaseHTTPRequestHandler, method: str, path: str, body: bytes
    ) -> tuple[int, str, list[tuple[str, str]], bytes]:
        upstream = http.client.HTTPConnection(*self.upstream, timeout=600)
        try:
            headers = {k: v for k, v in handler.headers.items() if k.lower() not in HOP_HEADERS}
            if body:
                headers["Content-Length"] = str(len(body))
            upstream.request(method, path, body=body or None, headers=headers)
            response = upstream.getresponse()
            content = response.read()
            kept = [(k, v) for k, v in response.getheaders() if k.lower() not in HOP_HEADERS]
            return response.status, response.reason, kept, content
        finally:
            upstream.close()


def _answer(handler: http.server.BaseHTTPRequestHandler, status: int, reason: str, page: bytes) -> None:
    handler.send_response_only(status, reason)
    handler.send_header("Content-Type", "text/html")
    handler.send_header("Content-Length", str(len(page)))
    handler.end_headers()
    handler.wfile.write(page)
