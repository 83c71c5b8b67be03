"""resource.k8s.io/v1 objects from cluster files: parsing, the API server's checks (one line naming
file and field, exit 2), `kubectl get -o yaml` Lists, and the claims made from templates."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.app import example_path
from kubesched.cli import main
from kubesched.dra.store import POD_CLAIM_NAME_ANNOTATION, generated_claim_name
from kubesched.load import load_cluster
from kubesched.state.snapshot import Snapshot

EXAMPLE = example_path("dra-cluster.yaml")

CLASS: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "gpu.example.com"},
    "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
}
SLICE: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceSlice",
    "metadata": {"name": "n1-gpu"},
    "spec": {
        "driver": "gpu.example.com",
        "nodeName": "n1",
        "pool": {"name": "n1", "generation": 0, "resourceSliceCount": 1},
        "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "A100"}}, "capacity": {"memory": {"value": "40Gi"}}}],
    },
}
CLAIM: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaim",
    "metadata": {"name": "c", "namespace": "default"},
    "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}},
}
POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "default", "uid": "11111111-2222-3333-4444-555555555555"},
    "spec": {
        "containers": [{"name": "c", "image": "i", "resources": {"claims": [{"name": "gpu"}]}}],
        "resourceClaims": [{"name": "gpu", "resourceClaimName": "c"}],
    },
}


def _write(tmp_path: Path, *objs: dict[str, Any]) -> str:
    f = tmp_path / "cluster.yaml"
    f.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": list(objs)}))
    return str(f)


def _fails(tmp_path: Path, capsys: pytest.CaptureFixture[str], *objs: dict[str, Any]) -> str:
    path = _write(tmp_path, *objs)
    assert main(["schedule", "-f", path]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err
    assert err.startswith(f"kubesched: error: {path}: ")
    return err.removeprefix(f"kubesched: error: {path}: ")


def test_example_dump_loads_every_kind() -> None:
    objs = load_cluster([EXAMPLE])
    dra = objs.dra
    assert [c.name for c in dra.classes] == ["gpu.example.com"]
    assert sorted(s.name for s in dra.slices) == ["gpu-a-gpu.example.com", "gpu-b-gpu.example.com", "gpu-c-gpu.example.com"]
    assert [t.key for t in dra.templates] == ["ml/one-a100"]
    a = next(s for s in dra.slices if s.node_name == "gpu-a")
    assert (a.driver, a.pool, a.generation, a.slice_count) == ("gpu.example.com", "gpu-a", 1, 1)
    gpu0 = a.devices[0]
    assert gpu0.attributes["model"] == ("string", "A100")
    assert gpu0.attributes["driverVersion"] == ("version", "550.54.15")
    assert gpu0.capacity["memory"] == 40 * 2**30
    pair = next(c for c in dra.claims if c.name == "pair")
    assert pair.spec.requests[0].exactly is not None and pair.spec.requests[0].exactly.count == 2
    assert pair.spec.constraints[0].match_attribute == "gpu.example.com/pcieRoot"
    big = next(c for c in dra.claims if c.name == "big-model")
    assert [s.name for s in big.spec.requests[0].first_available] == ["h100", "two-a100"]


def test_template_claims_are_made_for_each_pod_deterministically() -> None:
    """The resourceclaim controller's claims: one per pod and template reference, named
    <pod>-<claim>-<5 characters>, owned by the pod, recorded in the pod's status."""
    first, second = load_cluster([EXAMPLE]), load_cluster([EXAMPLE])
    pods = {p.name: p for p in first.pods}
    made = [c for c in first.dra.claims if c.controller is not None]
    assert sorted(c.controller.name for c in made if c.controller) == ["trainer-0", "trainer-1"]
    for claim in made:
        pod = pods[claim.controller.name]  # type: ignore[union-attr]
        assert claim.controller.uid == pod.uid  # type: ignore[union-attr]
        assert claim.name.startswith(f"{pod.name}-gpu-") and len(claim.name) == len(f"{pod.name}-gpu-") + 5
        assert pod.resource_claim_statuses == {"gpu": claim.name}
        assert claim.raw["metadata"]["annotations"][POD_CLAIM_NAME_ANNOTATION] == "gpu"
        assert claim.spec.requests[0].exactly is not None
        assert claim.spec.requests[0].exactly.selectors == ('device.attributes["gpu.example.com"].model == "A100"',)
    assert sorted(c.name for c in made) == sorted(c.name for c in second.dra.claims if c.controller is not None)


def test_generated_name_cuts_long_names_in_proportion() -> None:
    objs = load_cluster([EXAMPLE])
    pod = copy.copy(objs.pods[0])
    pod.name = "p" * 60
    name = generated_claim_name(pod, "c" * 30)
    # base "<pod>-<claim>-" is 92 characters: each part cut to its share of 57 (37 and 18), no
    # trailing dash, then the five characters
    assert name[:-5] == "p" * 37 + "-" + "c" * 18 and len(name) == 61


def test_a_template_the_input_lacks_is_a_warning(tmp_path: Path) -> None:
    pod = copy.deepcopy(POD)
    pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "missing"}]
    objs = load_cluster([_write(tmp_path, pod)])
    assert objs.pods[0].resource_claim_statuses == {}
    assert any('ResourceClaimTemplate "missing"' in w for w in objs.warnings)


def test_snapshot_of_fills_the_snapshot_listers() -> None:
    objs = load_cluster([EXAMPLE])
    snap = Snapshot.of(objs)
    assert set(snap.dra.classes) == {"gpu.example.com"}
    assert snap.dra.claim("ml", "pair") is not None
    assert dict(snap.dra.allocated_devices()) == {}


def test_kubectl_typed_lists_load(tmp_path: Path) -> None:
    """`kubectl get resourceslices,resourceclaims -A -o yaml` prints typed Lists."""
    f = tmp_path / "dump.yaml"
    docs = [
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSliceList", "items": [{k: v for k, v in SLICE.items() if k != "kind"}]},
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClassList", "items": [CLASS]},
    ]
    f.write_text(yaml.safe_dump_all(docs))
    objs = load_cluster([str(f)])
    assert [s.name for s in objs.dra.slices] == ["n1-gpu"] and [c.name for c in objs.dra.classes] == ["gpu.example.com"]


def _with(obj: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    cur = out
    keys = path.split(".")
    for k in keys[:-1]:
        cur = cur[int(k)] if isinstance(cur, list) else cur[k]
    last = keys[-1]
    if isinstance(cur, list):
        cur[int(last)] = value
    elif value is None:
        del cur[last]
    else:
        cur[last] = value
    return out


BAD = [
    # (object, expected error after the file name)
    (_with(CLASS, "spec.selectors.0.cel.expression", "?!"), "items[0].spec.selectors[0].cel.expression: Invalid value:"),
    (_with(CLASS, "spec.selector", []), 'items[0].spec.selector: unknown field "selector"'),
    (_with(CLASS, "apiVersion", "resource.k8s.io/v1beta1"), "items[0].apiVersion: DeviceClass is served as apiVersion"),
    (_with(SLICE, "spec.nodeName", None), "items[0].spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"),
    (_with(SLICE, "spec.allNodes", True), 'items[0].spec: Invalid value: "{`nodeName`, `allNodes`}": exactly one field must be set, not more'),
    (_with(SLICE, "spec.pool.resourceSliceCount", 0), "items[0].spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero"),
    (_with(SLICE, "spec.devices.0.attributes", {"model": {"string": "A", "int": 1}}), 'items[0].spec.devices[0].attributes.model: Invalid value: "": exactly one value must be specified'),
    (_with(SLICE, "spec.devices.0.attributes", {"v": {"version": "1.0"}}), 'items[0].spec.devices[0].attributes.v.version: Invalid value: "1.0": must be a string compatible with semver.org spec 2.0.0'),
    (_with(SLICE, "spec.devices.0.capacity", {"memory": {"value": "lots"}}), 'items[0].spec.devices[0].capacity.memory.value: invalid quantity "lots"'),
    (_with(SLICE, "spec.devices.0.name", "GPU_0"), 'items[0].spec.devices[0].name: Invalid value: "GPU_0"'),
    (_with(SLICE, "spec.devices.0.capacity", {"memory": {"value": "40Gi", "requestPolicy": {"validRange": {"min": "x"}}}}),
     'items[0].spec.devices[0].capacity.memory.requestPolicy.validRange.min: invalid quantity "x"'),
    (_with(CLAIM, "spec.devices.requests.0.exactly.capacity", {"requests": {"memory": "lots"}}),
     'items[0].spec.devices.requests[0].exactly.capacity.requests.memory: invalid quantity "lots"'),
    (_with(CLAIM, "status", {"allocation": {"devices": {"results": [{"request": "gpu", "driver": "d", "pool": "p", "device": "x",
                                                                     "consumedCapacity": {"memory": "?"}}]}}}),
     'items[0].status.allocation.devices.results[0].consumedCapacity.memory: invalid quantity "?"'),
    (_with(CLAIM, "spec.devices.requests.0.exactly.allocationMode", "Some"), 'items[0].spec.devices.requests[0].exactly.allocationMode: Unsupported value: "Some": supported values: "All", "ExactCount"'),
    (_with(CLAIM, "spec.devices.requests.0.exactly.count", 0), "items[0].spec.devices.requests[0].exactly.count: Invalid value: 0: must be greater than zero"),
    (_with(CLAIM, "spec.devices.requests.0.exactly", None), "items[0].spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is required"),
    (_with(CLAIM, "spec.devices.requests.0.exactly.deviceClassName", ""), "items[0].spec.devices.requests[0].exactly.deviceClassName: Required value"),
    (_with(CLAIM, "spec.devices.constraints", [{"requests": ["nope"], "matchAttribute": "a.b/c"}]), 'items[0].spec.devices.constraints[0].requests[0]: Invalid value: "nope": must be the name of a request in the claim'),
    (_with(CLAIM, "spec.devices.constraints", [{"matchAttribute": "pcieRoot"}]), 'items[0].spec.devices.constraints[0].matchAttribute: Invalid value: "pcieRoot": a fully qualified name must be a domain and a name separated by a slash'),
    (_with(CLAIM, "status", {"reservedFor": [{"resource": "pods", "name": "p", "uid": "u"}]}), "items[0].status.reservedFor: Forbidden: may not be specified when `allocated` is not set"),
    (_with(POD, "spec.resourceClaims.0.resourceClaimTemplateName", "t"), 'items[0].spec.resourceClaims[0]: Invalid value: "": must specify exactly one of: `resourceClaimName`, `resourceClaimTemplateName`'),
    (_with(POD, "spec.containers.0.resources.claims.0.name", "other"), 'items[0].spec.containers[0].resources.claims[0]: Not found: "other": must be one of the names in pod.spec.resourceClaims: gpu'),
]


@pytest.mark.parametrize(("obj", "expected"), BAD, ids=[e.split(":")[0] + f"-{i}" for i, (_, e) in enumerate(BAD)])
def test_bad_input_is_one_line_naming_file_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], obj: dict[str, Any], expected: str
) -> None:
    assert _fails(tmp_path, capsys, obj).startswith(expected)


def test_duplicate_claim_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert 'duplicate ResourceClaim "default/c"' in _fails(tmp_path, capsys, CLAIM, CLAIM)
