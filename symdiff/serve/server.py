"""The HTTP side of ``symdiff serve``: the standard library's threading HTTP server, with the
limits a classroom needs.

- ``GET /`` is the page, ``GET /static/...`` its script and style (package files, nothing
  else from the disk), ``GET /worksheet?...`` a printable practice set; ``POST /api/<task>``
  runs a task (:mod:`.app`) with a JSON body of at most :data:`~.fields.MAX_BODY` bytes.
- At most ``max_connections`` connections at once (more are answered ``503`` and closed);
  a connection idle for :data:`IDLE` seconds, or sending its request that slowly, is closed.
- Served on a loopback address, a request must name that address (or ``localhost``) as its
  ``Host``, and a ``POST`` from a page must come from the same origin: another web site open
  in the teacher's browser cannot use the server.
- Every page answers with a content security policy that allows only its own script and
  style; no answer is cached by the browser. Nothing is logged but failures.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from . import fields
from .app import HTML, JSON, Classroom, failure
from .results import Answer

#: Seconds a connection may stay idle, or take to send its request.
IDLE = 15.0
#: What the page may load: only its own script, style and data; nothing from elsewhere.
POLICY = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
          "img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; "
          "frame-ancestors 'none'")
STATIC = {
    "/": ("index.html", HTML),
    "/static/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/static/app.css": ("app.css", "text/css; charset=utf-8"),
}
LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})


def static_file(name: str) -> bytes:
    """A file of the page (``symdiff/serve/static``); the style of every classroom page is
    the classroom's (:func:`symdiff.classroom.page.stylesheet`)."""
    if name == "classroom.css":
        from ..classroom.page import stylesheet

        return stylesheet().encode("utf-8")
    return resources.files(__package__).joinpath("static", name).read_bytes()


class Handler(BaseHTTPRequestHandler):
    """One connection's requests."""

    protocol_version = "HTTP/1.1"
    server_version = "symdiff-classroom"
    sys_version = ""
    timeout = IDLE
    server: ClassroomServer

    # -- answers ---------------------------------------------------------------------------
    def _send(self, answer: Answer, extra: dict[str, str] | None = None) -> None:
        self.send_response(answer.status)
        headers = {
            "Content-Type": answer.content_type,
            "Content-Length": str(len(answer.body)),
            "Cache-Control": "no-store",
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer",
            "Content-Security-Policy": POLICY,
            **(extra or {}),
        }
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(answer.body)

    def _refuse(self, status: int, message: str) -> None:
        self.close_connection = True
        self._send(failure(status, message, "request"), {"Connection": "close"})

    def log_message(self, format: str, *args: Any) -> None:
        """Requests are not logged (a class makes thousands); failures are, by the server."""

    # -- checks ----------------------------------------------------------------------------
    def _host_ok(self) -> bool:
        if not self.server.loopback:
            return True
        host = (self.headers.get("Host") or "").strip().lower()
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        return name.strip("[]") in LOOPBACK

    def _origin_ok(self) -> bool:
        """Whether a request that computes comes from the page itself (or from no page: a
        script, a test, an address typed in): a browser says where a request comes from."""
        site = self.headers.get("Sec-Fetch-Site")
        if site is not None and site not in ("same-origin", "none"):
            return False
        origin = self.headers.get("Origin")
        if origin is None:
            return True
        return urlsplit(origin).netloc.lower() == (self.headers.get("Host") or "").lower()

    # -- methods ---------------------------------------------------------------------------
    def do_GET(self) -> None:
        if not self._host_ok():
            return self._refuse(HTTPStatus.FORBIDDEN, "unexpected Host")
        url = urlsplit(self.path)
        if url.path in STATIC:
            name, kind = STATIC[url.path]
            return self._send(Answer(200, kind, static_file(name)))
        if url.path == "/static/classroom.css":
            return self._send(Answer(200, "text/css; charset=utf-8",
                                     static_file("classroom.css")))
        if url.path == "/worksheet":
            if not self._origin_ok():
                return self._refuse(HTTPStatus.FORBIDDEN, "open the worksheet from the page")
            return self._worksheet(url.query)
        return self._refuse(HTTPStatus.NOT_FOUND, "no such page")

    do_HEAD = do_GET

    def _worksheet(self, query: str) -> None:
        given = parse_qs(query, max_num_fields=10)
        try:
            raw = {
                "seed": given.get("seed", ["1"])[0],
                "rules": given.get("rules", [",".join(fields.RULES)])[0].split(","),
                "difficulty": int(given.get("difficulty", ["1"])[0]),
                "count": int(given.get("count", ["8"])[0]),
                "answers": given.get("answers", ["0"])[0] in ("1", "true", "yes"),
            }
        except ValueError:
            return self._refuse(HTTPStatus.BAD_REQUEST, "difficulty and count are numbers")
        self._run("worksheet", raw)

    def do_POST(self) -> None:
        if not self._host_ok() or not self._origin_ok():
            return self._refuse(HTTPStatus.FORBIDDEN, "requests come from the page itself")
        url = urlsplit(self.path)
        task = url.path.removeprefix("/api/")
        if not url.path.startswith("/api/") or task not in fields.FIELDS or (
                task == "worksheet"):
            return self._refuse(HTTPStatus.NOT_FOUND, "no such task")
        if self.headers.get("Transfer-Encoding"):
            return self._refuse(HTTPStatus.LENGTH_REQUIRED, "send a Content-Length")
        kind = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if kind != "application/json":
            return self._refuse(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "send JSON")
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            return self._refuse(HTTPStatus.LENGTH_REQUIRED, "send a Content-Length")
        if not 0 <= length <= fields.MAX_BODY:
            return self._refuse(HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                                f"a request is at most {fields.MAX_BODY} bytes")
        raw = self.rfile.read(length)
        try:
            body = fields.parse_body(raw)
        except fields.BadRequest as error:
            return self._refuse(HTTPStatus.BAD_REQUEST, str(error))
        self._run(task, body)

    def _client(self) -> str:
        """Who asks: the name the page gives itself (random, per open page), else the
        address."""
        name = self.headers.get("X-Classroom-Client", "")
        if 8 <= len(name) <= 64 and name.isascii() and name.isalnum():
            return name
        return str(self.client_address[0])

    def _run(self, task: str, body: dict[str, Any]) -> None:
        try:
            answer = self.server.classroom.answer(task, body, self._client())
        except fields.BadRequest as error:
            return self._refuse(HTTPStatus.BAD_REQUEST, str(error))
        if answer.status >= 500:
            self.server.note(f"{task}: {json.loads(answer.body).get('error')}")
        if answer.status == 503:
            return self._send(answer, {"Retry-After": "2"})
        self._send(answer)


class ClassroomServer(ThreadingHTTPServer):
    """A threading HTTP server that refuses connections beyond ``max_connections``."""

    daemon_threads = True
    block_on_close = False
    request_queue_size = 64

    def __init__(self, address: tuple[str, int], classroom: Classroom | None,
                 max_connections: int = 128) -> None:
        self.classroom = classroom
        self.loopback = address[0] in LOOPBACK or address[0].startswith("127.")
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        self._slots = threading.BoundedSemaphore(max_connections)
        super().__init__(address, Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            with contextlib.suppress(OSError):
                request.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
                                b"Connection: close\r\nRetry-After: 2\r\n\r\n")
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def note(self, message: str) -> None:
        print(f"symdiff serve: {message}", file=sys.stderr, flush=True)

    def handle_error(self, request: Any, client_address: Any) -> None:
        kind, error, _ = sys.exc_info()
        if kind is not None and issubclass(kind, ConnectionError | TimeoutError):
            return  # a client went away
        self.note(f"error answering {client_address[0]}: {kind.__name__ if kind else ''} "
                  f"{error}")


__all__ = ["JSON", "ClassroomServer", "Handler"]
