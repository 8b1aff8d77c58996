"""``symdiff serve`` over HTTP: the page and its files, every task, the limits on requests, the
checks on Host and Origin, answers kept, a request out of time answered while the server goes
on, and a long computation moved to the background while the class keeps its worker."""

from __future__ import annotations

import json
import threading
import time

import pytest

import symdiff as sd
from symdiff.serve import Classroom, Settings
from symdiff.serve.fields import MAX_BODY
from symdiff.serve.server import ClassroomServer

from .serve_client import post, request

F = "sin(x)**2*cos(3*x)"
SLOW = "sin((4*sqrt(x) + x**6)*(5*x**6 - 7*x**3 + 5))"  # sd.grad simplifies it for minutes


@pytest.fixture(scope="module")
def served():
    classroom = Classroom(Settings(workers=2, budget=4.0, wait=60))
    server = ClassroomServer(("127.0.0.1", 0), classroom)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", classroom
    server.shutdown()
    server.server_close()
    classroom.close()


@pytest.fixture(scope="module")
def url(served):
    return served[0]


def test_the_page_and_its_files(url):
    status, headers, body = request(url, "GET", "/")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert b'<script src="/static/app.js" defer></script>' in body
    policy = headers["Content-Security-Policy"]
    assert "default-src 'none'" in policy and "script-src 'self'" in policy
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Cache-Control"] == "no-store"
    for path, kind in [("/static/app.js", "text/javascript"), ("/static/app.css", "text/css"),
                       ("/static/classroom.css", "text/css")]:
        status, headers, body = request(url, "GET", path)
        assert status == 200 and headers["Content-Type"].startswith(kind) and body
    assert request(url, "GET", "/static/../../etc/passwd")[0] == 404
    assert request(url, "GET", "/nothing")[0] == 404
    assert request(url, "HEAD", "/")[0] == 200


def test_preview_says_what_was_understood_or_where_it_is_wrong(url):
    status, answer = post(url, "preview", {"expr": "x^2 + y"})
    assert status == 200 and answer["ok"] and answer["variables"] == ["x", "y"]
    assert answer["point"] == {"x": 1.0, "y": 1.0}
    status, answer = post(url, "preview", {"expr": "sin(x"})
    assert status == 200 and not answer["ok"]
    assert answer["kind"] == "input" and answer["position"] == 3
    status, answer = post(url, "preview", {"expr": "__import__('os').system('x')"})
    assert status == 200 and not answer["ok"] and answer["kind"] == "input"


def test_derive_check_plot_graph_code_and_practice(url):
    status, answer = post(url, "derive", {"expr": F, "wrt": ["x"]})
    assert status == 200 and answer["ok"]
    reveals = answer["orders"][0]["reveals"]
    assert reveals[0]["kind"] == "hint" and "product rule" in reveals[0]["text"]
    assert answer["answer"]["text"] == str(sd.derive(F, wrt="x").result)  # the library's

    verdicts = {}
    for answer_text in ("2*sin(x)*cos(x)*cos(3*x) - 3*sin(x)**2*sin(3*x)",
                        "2*sin(x)*cos(x)*cos(3*x) - 3*sin(x)*sin(x)*sin(3*x) + 0",
                        "2*sin(x)*cos(x)*cos(3*x) + 3*sin(x)**2*sin(3*x)"):
        status, verdict = post(url, "check", {"expr": F, "wrt": ["x"], "answer": answer_text})
        assert status == 200 and verdict["ok"]
        verdicts[answer_text] = verdict["verdict"]
    assert list(verdicts.values()) == ["equivalent", "unsimplified", "different"]

    line = next(r["line"] for r in reveals if r["checkable"] and "power rule" in r["text"])
    status, verdict = post(url, "check", {"expr": F, "wrt": ["x"], "answer": "2*u",
                                          "order": 0, "line": line})
    assert verdict["verdict"] == "equivalent"

    status, answer = post(url, "plot", {"expr": F, "wrt": ["x"], "point": {"x": 1},
                                        "interval": [-3, 3]})
    assert answer["ok"] and answer["svg"].startswith("<svg") and answer["label"] == "f\u2032"
    status, answer = post(url, "graph", {"expr": F, "point": {"x": 1}})
    assert answer["ok"] and "<svg" in answer["svg"]
    assert answer["gradient"]["x"] == pytest.approx(-1.19997, rel=1e-5)
    status, answer = post(url, "code", {"expr": F, "wrt": ["x"]})
    assert answer["ok"] and "def grad_f(x" in answer["source"]
    status, answer = post(url, "practice", {"seed": "7", "rules": ["chain"], "difficulty": 2,
                                            "count": 3})
    assert answer["ok"] and len(answer["exercises"]) == 3


def test_mixed_partial_derivatives(url):
    status, answer = post(url, "derive", {"expr": "x**3*y**2", "wrt": ["x", "y", "y"]})
    assert answer["ok"] and answer["answer"]["text"] == "6*x**2"
    status, answer = post(url, "plot", {"expr": "x**3*y**2", "wrt": ["x", "y", "y"],
                                        "point": {"x": 1, "y": 2}, "interval": [-2, 2]})
    assert answer["label"] == "\u2202\u00b3f/\u2202y\u2202y\u2202x"
    status, answer = post(url, "derive", {"expr": "x*y", "wrt": ["z"]})
    assert status == 200 and not answer["ok"] and "not a variable" in answer["error"]


def test_a_worksheet_is_a_page(url):
    status, headers, body = request(url, "GET", "/worksheet?seed=3&rules=power,chain&count=4"
                                                "&difficulty=1&answers=1")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert body.count(b'class="answer"') == 4
    assert request(url, "GET", "/worksheet?count=many")[0] == 400
    assert request(url, "GET", "/worksheet?seed=a%20b")[0] == 400


@pytest.mark.parametrize(("headers", "body", "status"), [
    ({"Content-Type": "text/plain"}, b"{}", 415),
    ({"Content-Type": "application/json"}, b"[1]", 400),
    ({"Content-Type": "application/json"}, b"{not json", 400),
    ({"Content-Type": "application/json"}, b'{"expr": "x", "more": 1}', 400),
    ({"Content-Type": "application/json"}, b'{"wrt": ["x"]}', 400),
    ({"Content-Type": "application/json"}, b'{"expr": "x", "wrt": ["1x"]}', 400),
    ({"Content-Type": "application/json"}, b'{"expr": "x", "wrt": ["x","x","x","x","x","x"]}',
     400),
    ({"Content-Type": "application/json"}, json.dumps({"expr": "x" * 2001, "wrt": ["x"]})
     .encode(), 400),
    ({"Content-Type": "application/json"}, b"[" * 5000 + b"]" * 5000, 400),
])
def test_a_bad_request_is_refused_before_any_worker_sees_it(url, headers, body, status):
    got, _, answer = request(url, "POST", "/api/derive", body, headers)
    assert got == status and json.loads(answer)["ok"] is False


def test_size_and_framing_limits(url):
    big = b'{"expr": "' + b"x" * MAX_BODY + b'"}'
    assert request(url, "POST", "/api/derive", big, {"Content-Type": "application/json"})[0] == 413
    assert request(url, "POST", "/api/nothing", b"{}", {"Content-Type": "application/json"}
                   )[0] == 404
    assert request(url, "POST", "/api/worksheet", b"{}", {"Content-Type": "application/json"}
                   )[0] == 404


def test_another_site_cannot_use_the_server(url):
    port = url.rsplit(":", 1)[1]
    assert request(url, "GET", "/", headers={"Host": "evil.example"})[0] == 403
    assert request(url, "GET", "/", headers={"Host": f"localhost:{port}"})[0] == 200
    body = json.dumps({"expr": "x"}).encode()
    kind = {"Content-Type": "application/json"}
    assert request(url, "POST", "/api/preview", body,
                   {**kind, "Origin": "http://evil.example"})[0] == 403
    assert request(url, "POST", "/api/preview", body,
                   {**kind, "Origin": f"http://127.0.0.1:{port}"})[0] == 200
    assert request(url, "POST", "/api/preview", body, {**kind, "Sec-Fetch-Site": "cross-site"}
                   )[0] == 403
    assert request(url, "GET", "/worksheet", headers={"Sec-Fetch-Site": "cross-site"})[0] == 403
    assert request(url, "GET", "/worksheet?count=1", headers={"Sec-Fetch-Site": "none"})[0] == 200


def test_identical_requests_are_answered_once(served):
    url, classroom = served
    request_body = {"expr": "x**5*exp(x)", "wrt": ["x", "x"]}
    first = post(url, "derive", request_body)
    misses, hits = classroom.results.misses, classroom.results.hits
    assert post(url, "derive", request_body) == first
    assert (classroom.results.misses, classroom.results.hits) == (misses, hits + 1)


def test_a_request_out_of_time_is_stopped_and_the_server_goes_on(served):
    url, classroom = served
    replaced = classroom.main.replaced
    status, answer = post(url, "code", {"expr": SLOW, "wrt": ["x"]})
    assert status == 200 and answer == {"ok": False, "kind": "time", "position": None,
                                        "error": "this takes longer than the 4 s a request "
                                                 "may take"}
    assert classroom.main.replaced == replaced + 1
    status, answer = post(url, "derive", {"expr": "x**2", "wrt": ["x"]})
    assert status == 200 and answer["ok"]
    status, again = post(url, "code", {"expr": SLOW, "wrt": ["x"]})  # kept: answered at once
    assert again["kind"] == "time" and classroom.main.replaced == replaced + 1


def test_a_long_computation_goes_to_the_background_and_leaves_its_worker_to_the_class():
    classroom = Classroom(Settings(workers=1, budget=300.0, foreground=0.2, wait=60))
    server = ClassroomServer(("127.0.0.1", 0), classroom)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    answers = []
    slow = threading.Thread(target=lambda: answers.append(
        post(url, "code", {"expr": SLOW, "wrt": ["x"]}, timeout=600, client="breaker0001")))
    try:
        slow.start()
        deadline = time.monotonic() + 120
        while classroom.main.backgrounded == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert classroom.main.backgrounded == 1
        # the only worker of the pool is free again for the class
        status, answer = post(url, "derive", {"expr": "x**3*cos(x)", "wrt": ["x"]})
        assert status == 200 and answer["ok"]
        assert slow.is_alive() and answers == []
    finally:
        server.shutdown()
        server.server_close()
        classroom.close()
        slow.join(60)
