"""Property-based tests (hypothesis) of the extender's request decoding: whatever the body, a verb
answers (HTTP 200/503) or refuses with one line naming the field (400); it never raises anything
else (a 500) and never hangs. Examples are derandomized, so CI runs the same ones every time."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from extender_testlib import cluster_docs, http, running_extender, write
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.errors import InputError
from kubesched.server.httpd import Limits, Response

SETTINGS = settings(
    max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
VERBS = ("filter", "prioritize", "bind", "preempt")
NODES = ["n1", "n2", "n3", "n4", "n5", "n6", "n7"]
INT64 = 2**63


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    cluster = write(Path(tmp_path_factory.mktemp("fuzz")), "cluster.yaml", cluster_docs())
    with running_extender([cluster]) as (ext, url):
        yield ext, url


def answer(ext, verb: str, body: bytes) -> tuple[int, bytes]:
    """What the HTTP layer would send: the handler's response, or 400 for an InputError."""
    try:
        resp = ext.handlers()[f"/{verb}"](body)
    except InputError as e:
        line = str(e)
        assert "\n" not in line and line.startswith(f"{verb} request"), line
        return 400, line.encode()
    assert isinstance(resp, Response)
    return resp.status, resp.body


# ---- strategies --------------------------------------------------------------------------------
numbers = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([INT64 - 1, INT64, -INT64, -INT64 - 1, 10**30]),
    st.floats(allow_nan=False, allow_infinity=False),
)
scalars = st.one_of(st.none(), st.booleans(), numbers, st.text(max_size=12))
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
quantities = st.one_of(
    st.sampled_from(["1", "100m", "1Gi", "9223372036854775807", "9223372036854775808", "1e30", "-1", "--5", "²",
                     "١٢", "0x10", "1.5Ki", "", " 1", "1E", "9Ei", "999999999999999999999999Ki"]),
    st.text(alphabet="0123456789.eEkKMGTPimun-+", max_size=25),
    numbers,
)
resource_lists = st.dictionaries(st.sampled_from(["cpu", "memory", "pods", "example.com/gpu", "ephemeral-storage"]), quantities, max_size=3)


@st.composite
def pods(draw) -> dict:
    containers = draw(st.lists(
        st.fixed_dictionaries({"name": st.text(min_size=1, max_size=5)}, optional={
            "resources": st.fixed_dictionaries({}, optional={"requests": resource_lists, "limits": resource_lists}),
            "ports": st.lists(st.fixed_dictionaries({"containerPort": numbers}, optional={"hostPort": numbers}), max_size=2),
        }),
        max_size=3,
    ))
    spec = {"containers": containers}
    spec.update(draw(st.fixed_dictionaries({}, optional={
        "priority": numbers,
        "nodeSelector": st.dictionaries(st.text(max_size=5), json_values, max_size=2),
        "tolerations": json_values,
        "affinity": json_values,
        "initContainers": st.lists(st.fixed_dictionaries({"name": st.text(max_size=3), "resources": json_values}), max_size=2),
        "overhead": resource_lists,
    })))
    meta = draw(st.fixed_dictionaries({"name": st.text(max_size=8)}, optional={
        "namespace": st.text(max_size=5), "uid": st.text(max_size=5), "labels": json_values,
    }))
    shape = draw(st.sampled_from(["pod", "odd spec", "anything"]))
    if shape == "pod":
        return {"metadata": meta, "spec": spec}
    if shape == "odd spec":
        return {"metadata": meta, "spec": draw(json_values)}
    return draw(json_values)


@st.composite
def nodes(draw) -> dict:
    alloc = draw(resource_lists)
    return {
        "metadata": {"name": draw(st.sampled_from(NODES) | st.text(max_size=4)), "labels": draw(json_values)},
        "spec": draw(st.fixed_dictionaries({}, optional={"taints": json_values, "unschedulable": json_values})),
        "status": {"allocatable": alloc, "capacity": draw(resource_lists)},
    }


@st.composite
def extender_args(draw) -> dict:
    doc: dict = {"Pod": draw(pods())}
    form = draw(st.sampled_from(["names", "nodes", "both", "neither", "junk"]))
    if form in ("names", "both"):
        doc["NodeNames"] = draw(st.lists(st.sampled_from(NODES) | st.text(max_size=3), max_size=5) | json_values)
    if form in ("nodes", "both"):
        doc["Nodes"] = {"items": draw(st.lists(nodes(), max_size=3))}
    if form == "junk":
        doc.update(draw(st.dictionaries(st.sampled_from(["nodes", "NODENAMES", "pod", "Extra"]), json_values, max_size=3)))
    return doc


@st.composite
def preemption_args(draw) -> dict:
    key = draw(st.sampled_from(["NodeNameToMetaVictims", "NodeNameToVictims"]))
    victims = draw(st.dictionaries(
        st.sampled_from(NODES) | st.text(max_size=3),
        st.none() | st.fixed_dictionaries({}, optional={
            "Pods": st.lists(st.fixed_dictionaries({"UID": st.text(max_size=12)}) | pods(), max_size=3) | json_values,
            "NumPDBViolations": numbers | json_values,
        }),
        max_size=3,
    ))
    return {"Pod": draw(pods()), key: victims}


def nested(depth: int) -> bytes:
    return b'{"Pod": ' + b"[" * depth + b"]" * depth + b', "NodeNames": ["n1"]}'


# ---- properties ----------------------------------------------------------------------------------
@SETTINGS
@given(body=st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_any_bytes_are_answered_or_refused_in_one_line(served, body):
    ext, _ = served
    for verb in VERBS:
        status, _ = answer(ext, verb, body)
        assert status in (200, 400)


@SETTINGS
@given(doc=json_values)
def test_any_json_document_is_answered_or_refused_in_one_line(served, doc):
    ext, _ = served
    body = json.dumps(doc).encode()
    for verb in VERBS:
        assert answer(ext, verb, body)[0] in (200, 400)


@SETTINGS
@given(doc=extender_args(), verb=st.sampled_from(["filter", "prioritize"]))
def test_filter_and_prioritize_requests_never_fail_with_500(served, doc, verb):
    ext, _ = served
    status, body = answer(ext, verb, json.dumps(doc).encode())
    assert status in (200, 400), body
    if status == 200:
        out = json.loads(body)
        if verb == "prioritize":
            assert all(0 <= h["Score"] <= 10 for h in out)


@SETTINGS
@given(doc=preemption_args())
def test_preempt_requests_never_fail_with_500(served, doc):
    ext, _ = served
    status, body = answer(ext, "preempt", json.dumps(doc).encode())
    assert status in (200, 400), body


@SETTINGS
@given(doc=st.dictionaries(st.sampled_from(["PodName", "PodNamespace", "PodUID", "Node", "podname"]), json_values, max_size=5))
def test_bind_requests_never_fail_with_500(served, doc):
    ext, _ = served
    before = dict(ext.cluster.bindings)
    status, body = answer(ext, "bind", json.dumps(doc).encode())
    assert status in (200, 400), body
    if status == 400:
        assert ext.cluster.bindings == before  # nothing half-applied


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"Pod": ' + b"1" * 5000 + b"}", "filter request: invalid JSON: Exceeds the limit (4300 digits)"),
        (b'{"Pod": 1e400, "NodeNames": []}', "filter request: invalid JSON: 1e400 is out of the float64 range"),
        (nested(100_000), "filter request: invalid JSON: nested too deeply"),
        (b'{"Pod": {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a", "resources": {"requests": '
         b'{"cpu": "9223372036854775807"}}}, {"name": "b", "resources": {"requests": {"cpu": "9223372036854775807"}}}]}}, '
         b'"NodeNames": ["n5"]}', "filter request: Pod.spec: the pod requests 18446744073709551614m of cpu, past the largest amount"),
    ],
)
def test_regressions_found_by_fuzzing(served, body, expected):
    """Each answered 500 with a Python error before (digit limit, infinity, int64 sums)."""
    ext, _ = served
    for verb in ("filter", "prioritize"):
        status, line = answer(ext, verb, body)
        assert status == 400 and line.decode().startswith(expected.replace("filter", verb, 1)), line


def test_prioritize_past_int64_is_a_400_over_http(served):
    """The extender's /prioritize answered 500 ("Python int too large to convert to C long")."""
    _, url = served
    huge = "9223372036854775807"
    nodes_doc = {"items": [{"metadata": {"name": "big"}, "status": {"allocatable": {"cpu": huge, "memory": huge}}}]}
    status, _, body = http(f"{url}/prioritize", json.dumps({"Pod": {"metadata": {"name": "p"}}, "Nodes": nodes_doc}).encode(), "POST")
    assert status == 400
    assert body.startswith(b"prioritize request: Nodes.items[0].status.allocatable: allocatable ")


@settings(max_examples=25, deadline=None, derandomize=True)
@given(data=st.binary(min_size=1, max_size=300))
def test_raw_bytes_at_the_socket_never_stop_the_server(data):
    """Whatever arrives on the wire: an HTTP answer or a closed connection, then the next client is served."""
    from kubesched.server.httpd import HTTPServer

    with HTTPServer(("127.0.0.1", 0), {"/filter": lambda b: Response(200, b)}, limits=Limits(header_timeout=0.2)) as srv:
        with socket.create_connection(srv.address, timeout=5) as s:
            s.sendall(data)
            try:
                got = s.recv(65536)
            except (ConnectionResetError, TimeoutError):
                got = b""
            assert got == b"" or got.startswith(b"HTTP/1.1 ")
        assert http(f"{srv.url}/healthz")[0] == 200
