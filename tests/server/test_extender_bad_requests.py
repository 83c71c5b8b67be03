"""Every class of bad request gets a one-line answer naming the field; the server keeps serving."""

from __future__ import annotations

import json
from http.client import HTTPConnection
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from extender_testlib import (
    cluster_docs,
    http,
    node_list,
    post,
    preemptor_pod,
    running_extender,
    web_pod,
    write,
)

from kubesched.errors import InputError
from kubesched.server.httpd import HTTPServer, parse_listen


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    cluster = write(Path(tmp_path_factory.mktemp("bad")), "cluster.yaml", cluster_docs())
    with running_extender([cluster]) as (ext, url):
        yield ext, url


def bad_pod_quantity() -> dict[str, Any]:
    p = web_pod()
    p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "lots"
    return p


def bad_node_quantity() -> dict[str, Any]:
    nl = node_list(cluster_docs(), ["n5"])
    nl["items"][0] = json.loads(json.dumps(nl["items"][0]))
    nl["items"][0]["status"]["allocatable"]["memory"] = "-x"
    return nl


RAW = [
    ("filter", b"", "filter request: empty body: expected a JSON object"),
    ("filter", b"{", "filter request: invalid JSON at line 1 column 2"),
    ("filter", b"\xff\xfe{}", "filter request: invalid JSON"),
    ("filter", b"[1, 2]", "filter request: expected a JSON object, got array"),
    ("filter", b'{"Pod": {}, "NodeNames": [NaN]}', "filter request: invalid JSON: NaN is not a JSON number"),
    ("bind", b"null", "bind request: expected a JSON object, got null"),
]

DOCS = [
    # (verb, body, the one line expected to start the answer)
    ("filter", {"NodeNames": ["n1"]}, "filter request: Pod: required"),
    ("filter", {"Pod": None, "NodeNames": ["n1"]}, "filter request: Pod: required"),
    ("filter", {"Pod": "web", "NodeNames": ["n1"]}, "filter request: Pod: expected an object, got string"),
    ("filter", {"Pod": {"spec": {}}, "NodeNames": ["n1"]}, "filter request: Pod.metadata.name:"),
    ("filter", {"Pod": bad_pod_quantity(), "NodeNames": ["n1"]}, "filter request: Pod.spec.containers[0].resources.requests.cpu:"),
    ("filter", {"Pod": web_pod(), "Nodes": None}, "filter request: NodeNames: one of Nodes"),
    ("filter", {"Pod": web_pod(), "NodeNames": ["n1"], "Nodes": {"items": []}}, "filter request: set only one of Nodes"),
    ("filter", {"Pod": web_pod(), "NodeNames": "n1"}, "filter request: NodeNames: expected an array, got string"),
    ("filter", {"Pod": web_pod(), "NodeNames": ["n1", 2]}, "filter request: NodeNames[1]: expected a string, got number"),
    ("filter", {"Pod": web_pod(), "NodeNames": ["n1", ""]}, "filter request: NodeNames[1]: must not be empty"),
    ("filter", {"Pod": web_pod(), "NodeNames": ["n1", "n1"]}, 'filter request: NodeNames[1]: duplicate node name "n1"'),
    (
        "filter",
        {"Pod": web_pod(), "NodeNames": ["n1", "n9"]},
        'filter request: NodeNames[1]: node "n9" is not in the cluster this extender holds',
    ),
    ("filter", {"Pod": web_pod(), "Nodes": ["n1"]}, "filter request: Nodes: expected an object, got array"),
    ("filter", {"Pod": web_pod(), "Nodes": {"items": {}}}, "filter request: Nodes.items: expected an array, got object"),
    ("filter", {"Pod": web_pod(), "Nodes": {"items": [7]}}, "filter request: Nodes.items[0]: expected an object, got number"),
    ("filter", {"Pod": web_pod(), "Nodes": {"items": [{"metadata": {}}]}}, "filter request: Nodes.items[0].metadata.name:"),
    ("filter", {"Pod": web_pod(), "Nodes": bad_node_quantity()}, "filter request: Nodes.items[0].status.allocatable.memory:"),
    ("prioritize", {"Pod": web_pod(), "NodeNames": ["nope"]}, 'prioritize request: NodeNames[0]: node "nope"'),
    ("prioritize", {"Pod": [], "NodeNames": []}, "prioritize request: Pod: expected an object, got array"),
    ("bind", {"PodName": "p", "PodNamespace": "default"}, "bind request: Node: required"),
    ("bind", {"PodName": 3, "Node": "n1"}, "bind request: PodName: expected a string, got number"),
    ("bind", {"PodName": "p", "Node": "n1", "PodUID": False}, "bind request: PodUID: expected a string, got boolean"),
    ("preempt", {"Pod": preemptor_pod()}, "preempt request: NodeNameToMetaVictims: one of NodeNameToVictims"),
    (
        "preempt",
        {"Pod": preemptor_pod(), "NodeNameToMetaVictims": {"n1": {"Pods": [{"UID": "default-low-a"}], "NumPDBViolations": "0"}}},
        "preempt request: NodeNameToMetaVictims.n1.NumPDBViolations: expected an integer, got string",
    ),
    (
        "preempt",
        {"Pod": preemptor_pod(), "NodeNameToMetaVictims": {"n1": {"Pods": {"UID": "x"}}}},
        "preempt request: NodeNameToMetaVictims.n1.Pods: expected an array, got object",
    ),
    (
        "preempt",
        {"Pod": preemptor_pod(), "NodeNameToMetaVictims": {"n1": {"Pods": [{}]}}},
        "preempt request: NodeNameToMetaVictims.n1.Pods[0].UID: required",
    ),
    (
        "preempt",
        {"Pod": preemptor_pod(), "NodeNameToMetaVictims": {"n9": {"Pods": [{"UID": "default-low-a"}]}}},
        'preempt request: NodeNameToMetaVictims.n9: node "n9" is not in the cluster this extender holds',
    ),
    (
        "preempt",
        {"Pod": preemptor_pod(), "NodeNameToMetaVictims": {"n1": {"Pods": [{"UID": "default-busy6"}]}}},
        'preempt request: NodeNameToMetaVictims.n1.Pods[0].UID: pod with UID "default-busy6" is not on node "n1"',
    ),
    (
        "preempt",
        {"Pod": preemptor_pod(), "NodeNameToVictims": {"n1": {"Pods": [{"metadata": {"name": "v"}}]}}},
        "preempt request: NodeNameToVictims.n1.Pods[0].metadata.uid: required",
    ),
    (
        "preempt",
        {"Pod": preemptor_pod(), "NodeNameToVictims": {"n1": {"Pods": [], "NumPDBViolations": 1.5}}},
        "preempt request: NodeNameToVictims.n1.NumPDBViolations: expected an integer, got number",
    ),
]


def assert_one_line(status: int, body: str, expected_start: str) -> None:
    assert status == 400, body
    assert body.endswith("\n") and "\n" not in body[:-1], body
    assert "Traceback" not in body
    assert body.startswith(expected_start), body


def still_serving(url: str) -> None:
    assert http(f"{url}/healthz")[0] == 200
    status, res = post(f"{url}/filter", {"Pod": web_pod(), "NodeNames": ["n5"]})
    assert status == 200 and res["NodeNames"] == ["n5"]


@pytest.mark.parametrize(("verb", "body", "expected"), RAW)
def test_raw_bodies(server, verb, body, expected):
    _, url = server
    status, ctype, answer = http(f"{url}/{verb}", body, "POST")
    assert ctype.startswith("text/plain")
    assert_one_line(status, answer.decode(), expected)
    still_serving(url)


@pytest.mark.parametrize(("verb", "doc", "expected"), DOCS, ids=[f"{v}-{i}" for i, (v, _, _) in enumerate(DOCS)])
def test_bad_documents(server, verb, doc, expected):
    ext, url = server
    before = dict(ext.cluster.bindings)
    status, answer = post(f"{url}/{verb}", doc)
    assert_one_line(status, answer, expected)
    assert ext.cluster.bindings == before  # nothing half-applied
    still_serving(url)


def _raw_request(url: str, path: str, headers: dict[str, str], body: bytes = b"") -> tuple[int, str]:
    """A request urllib would not send (no Content-Length, chunked...)."""
    u = urlsplit(url)
    conn = HTTPConnection(u.hostname, u.port, timeout=30)
    try:
        conn.putrequest("POST", path, skip_accept_encoding=True)
        for k, v in headers.items():
            conn.putheader(k, v)
        conn.endheaders(body or None)
        r = conn.getresponse()
        return r.status, r.read().decode()
    finally:
        conn.close()


def test_framing_errors(server):
    _, url = server
    status, body = _raw_request(url, "/filter", {})
    assert (status, body) == (411, "/filter: Content-Length required\n")
    status, body = _raw_request(url, "/filter", {"Content-Length": "abc"})
    assert (status, body) == (400, "bad request: bad Content-Length\n")
    status, body = _raw_request(url, "/filter", {"Transfer-Encoding": "gzip"}, b"0\r\n\r\n")
    assert (status, body) == (501, "bad request: Only Transfer-Encoding: chunked is supported\n")
    status, body = _raw_request(url, "/filter", {"Transfer-Encoding": "chunked"}, b"0\r\n\r\n")
    assert (status, body) == (400, "filter request: empty body: expected a JSON object\n")
    still_serving(url)


def test_body_too_large(tmp_path):
    cluster = write(tmp_path, "cluster.yaml", cluster_docs())
    with running_extender([cluster], max_body=64) as (_, url):
        status, _, body = http(f"{url}/filter", json.dumps({"Pod": web_pod(), "NodeNames": ["n5"]}).encode(), "POST")
        assert status == 413
        assert body.decode().endswith("-byte limit\n") and body.count(b"\n") == 1
        assert post(f"{url}/filter", {"Pod": {"metadata": {"name": "p"}}, "NodeNames": ["n5"]})[0] == 200


def test_a_handler_bug_is_a_one_line_500_and_the_server_keeps_serving():
    def boom(body: bytes) -> Any:
        raise ZeroDivisionError("division by zero")

    with HTTPServer(("127.0.0.1", 0), {"/boom": boom}) as srv:
        status, ctype, body = http(f"{srv.url}/boom", b"{}", "POST")
        assert (status, body) == (500, b"/boom: internal error: ZeroDivisionError: division by zero\n")
        assert ctype.startswith("text/plain")
        assert http(f"{srv.url}/healthz")[0] == 200
        assert http(f"{srv.url}/metrics")[0] == 404  # no metrics given: no /metrics


def test_listen_addresses():
    assert parse_listen(":8888") == ("0.0.0.0", 8888)
    assert parse_listen("127.0.0.1:0") == ("127.0.0.1", 0)
    assert parse_listen("[::1]:9") == ("::1", 9)
    for bad, reason in (
        ("8888", "expected HOST:PORT"),
        ("::1:80", "brackets"),
        ("host:http", "port must be a number"),
        ("host:70000", "0..65535"),
    ):
        with pytest.raises(InputError, match=reason):
            parse_listen(bad)
