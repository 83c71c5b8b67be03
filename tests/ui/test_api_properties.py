"""Property tests over kubesched ui's HTTP API: whatever a request carries (query, JSON body,
uploaded bytes, configurations naming any plugin or module), the answer is a 2xx, or a 4xx with one
line naming the field; never a 500, never code run, never a file outside the roots read."""

from __future__ import annotations

import sys

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.ui.guard import Roots
from kubesched.ui.sources import open_source
from tests.ui.conftest import PREEMPT, ui_client

ALLOWED = {200, 400, 409}
SETTINGS = settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

scalars = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=16)
json_values = st.recursive(
    scalars, lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c, max_size=4), max_leaves=16
)
plugin_names = st.sampled_from(
    ["NodeResourcesFit", "TaintToleration", "ImageLocality", "NoSuchPlugin", "os:system", "subprocess:Popen",
     "kubesched.plugins.nodename:NodeName", "planted:Evil", ""]
) | st.text(max_size=12)
configs = st.builds(
    lambda name, point, weight, args, version: yaml.safe_dump(
        {
            "apiVersion": version,
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "schedulerName": "default-scheduler",
                    "plugins": {point: {"enabled": [{"name": name, "weight": weight}]}},
                    "pluginConfig": [{"name": name, "args": args}],
                }
            ],
        }
    ),
    plugin_names,
    st.sampled_from(["filter", "score", "preFilter", "bind", "multiPoint", "nonsense"]),
    st.integers(-5, 200),
    json_values,
    st.sampled_from(["kubescheduler.config.k8s.io/v1", "kubescheduler.config.k8s.io/v1beta3", "v0"]),
) | st.text(max_size=200)
whatif_bodies = (
    st.fixed_dictionaries(
        {
            "configs": st.lists(st.fixed_dictionaries({"name": st.text(max_size=8), "yaml": configs}), max_size=3),
            "moves": st.lists(
                st.fixed_dictionaries(
                    {"pod": st.sampled_from(["default/low-a", "default/urgent", "x"]) | st.text(max_size=8),
                     "node": st.sampled_from(["node-a", "node-b"]) | json_values}
                ),
                max_size=2,
            ),
        }
    )
    | json_values
)


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("roots")
    return ui_client(open_source(None, files=[PREEMPT], seed=0), roots=Roots.of([root]))


def _check(r) -> None:  # noqa: ANN001
    assert r.status_code in ALLOWED, (r.status_code, r.text[:300])
    if r.status_code >= 400:
        body = r.json()
        assert isinstance(body["error"], str) and "\n" not in body["error"] and body["error"]
        assert "Traceback" not in body["error"] and "internal error" not in body["error"]


@SETTINGS
@given(body=whatif_bodies)
def test_whatif_answers_any_body(client, body) -> None:  # noqa: ANN001
    before = set(sys.modules)
    _check(client.post("/api/whatif", json=body))
    assert not {m for m in set(sys.modules) - before if m.split(".")[0] in ("planted", "subprocess", "os")}


@SETTINGS
@given(body=json_values | st.fixed_dictionaries({"path": st.text(max_size=40) | st.sampled_from(["/etc", "/", ".", "~", "/proc/self/environ"])}))
def test_open_answers_any_body_and_reads_nothing_outside(client, body) -> None:  # noqa: ANN001
    r = client.post("/api/open", json=body)
    _check(r)
    assert r.status_code == 400  # nothing under the (empty) root folder is a source
    assert client.get("/api/meta").json()["kind"] == "cluster"


@SETTINGS
@given(raw=st.binary(max_size=400) | st.text(max_size=400).map(str.encode))
def test_import_answers_any_bytes(client, raw: bytes) -> None:
    _check(client.post("/api/import/snapshot", content=raw))


@SETTINGS
@given(
    path=st.sampled_from(
        ["/api/cluster", "/api/decision", "/api/dashboard/simulation", "/api/dashboard/experiment", "/api/schedule",
         "/api/export/snapshot", "/api/export/simulator-annotations", "/api/meta"]
    ),
    params=st.dictionaries(st.sampled_from(["step", "pod", "attempt", "limit", "baseline", "x"]), st.text(max_size=12), max_size=3),
)
def test_reads_answer_any_query(client, path: str, params: dict[str, str]) -> None:
    _check(client.get(path, params=params))
