"""A client of the classroom server for tests: JSON requests with chosen headers."""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit


def request(url: str, method: str, path: str, body: bytes | None = None,
            headers: dict[str, str] | None = None, timeout: float = 120
            ) -> tuple[int, dict[str, str], bytes]:
    """``(status, headers, body)`` of one request."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def post(url: str, task: str, data: dict[str, Any], timeout: float = 120, client: str = ""
         ) -> tuple[int, dict[str, Any]]:
    """``(status, JSON body)`` of a task, asked by ``client`` (a name, as the page sends)."""
    headers = {"Content-Type": "application/json"}
    if client:
        headers["X-Classroom-Client"] = client
    status, _, body = request(url, "POST", f"/api/{task}", json.dumps(data).encode(), headers,
                              timeout)
    return status, json.loads(body)
