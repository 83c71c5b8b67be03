"""pkg/scheduler/framework/plugins/dynamicresources/dynamicresources_test.go's TestPlugin, 37 of
62 cases, under the upstream names, driven as upstream's harness drives the plugin: PreEnqueue,
PreFilter, Filter on each node, Score and NormalizeScore when more than one node passes, Reserve
on the best node, then PreBindPreFlight and PreBind (or Unreserve), checking every status and
the claims the in-memory cluster holds after each step.

Left out: the 14 DRA extended-resource cases and "empty-with-extended-resources-enabled"
(DRAExtendedResource is not modelled), the 7 binding-condition cases (nothing waits for device
binding conditions offline), "DRA-disabled" (DynamicResourceAllocation is locked on in v1.36),
"canceled" (no caller cancels a Filter offline) and "CEL-runtime-error-for-one-of-three-nodes"
(it checks the PreScore status that upstream's harness derives from Filter errors).
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

from kubesched import features
from kubesched.api.objects import Node, Pod
from kubesched.dra.claims import ResourceClaim
from kubesched.dra.objects import FINALIZER, DeviceClass, ResourceSlice
from kubesched.dra.store import DraObjects
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.status import Code, Status
from kubesched.plugins.dynamicresources import DynamicResources
from kubesched.state.snapshot import Snapshot

NODE, NODE2, NODE3 = "worker", "worker-2", "worker-3"
DRIVER, POD, POD_UID, RES, CLASS = "some-driver", "my-pod", "1234", "my-resource", "my-resource-class"
CLAIM, CLAIM2 = f"{POD}-{RES}", f"{POD}-{RES}-2"
ATTR = "healthy"  # only the other nodes' devices have it
UNRESOLVABLE, UNSCHED, ERROR, SKIP = (
    Code.UnschedulableAndUnresolvable, Code.Unschedulable, Code.Error, Code.Skip,
)


def node(name: str) -> Node:
    return Node.parse({"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}, "status": {"allocatable": {"pods": "10"}}})


def slice_(node_name: str, *devices: str, attrs: dict | None = None) -> dict:
    devs = [{"name": d, **({"attributes": attrs} if attrs else {})} for d in devices]
    return {"metadata": {"name": f"{node_name}-{DRIVER}"},
            "spec": {"driver": DRIVER, "nodeName": node_name, "pool": {"name": node_name, "resourceSliceCount": 1}, "devices": devs}}


WORKER_SLICE = slice_(NODE, "instance-1")
LARGE_WORKER_SLICE = slice_(NODE, "instance-1", "instance-2", "instance-3", "instance-4")
WORKER2_SLICE = slice_(NODE2, "instance-1", attrs={ATTR: {"bool": True}})
DEVICE_CLASS = {"metadata": {"name": CLASS}, "spec": {}}


def exactly(cls: str = CLASS, count: int = 1, *selectors: str, admin: bool | None = None) -> dict:
    out: dict[str, Any] = {"deviceClassName": cls, "allocationMode": "ExactCount", "count": count}
    if selectors:
        out["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    if admin is not None:
        out["adminAccess"] = admin
    return out


def claim(name: str = CLAIM, *requests: dict, owner: bool = True) -> dict:
    reqs = list(requests) or [{"name": "req-1", "exactly": exactly()}]
    md: dict[str, Any] = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    if owner:
        md["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": POD, "uid": POD_UID, "controller": True}]
    return {"metadata": md, "spec": {"devices": {"requests": reqs}}}


def allocation(request: str = "req-1", device: str = "instance-1", node_name: str = NODE, *, admin: bool = False,
               selector: dict | None = None) -> dict:
    result: dict[str, Any] = {"request": request, "driver": DRIVER, "pool": node_name, "device": device}
    if admin:
        result["adminAccess"] = True
    sel = selector or {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}
    return {"devices": {"results": [result]}, "nodeSelector": sel}


def allocated(c: dict, alloc: dict | None = None, *, reserved: bool = False, finalizer: bool = True) -> dict:
    out = copy.deepcopy(c)
    out["status"] = {"allocation": alloc or allocation()}
    if finalizer:
        out["metadata"]["finalizers"] = [FINALIZER]
    if reserved:
        out["status"]["reservedFor"] = [{"resource": "pods", "name": POD, "uid": POD_UID}]
    return out


def admin(c: dict) -> dict:
    out = copy.deepcopy(c)
    out["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] = True
    return out


def pod(*, template: bool = False, in_status: bool = True, claims: tuple[str, ...] = (CLAIM,)) -> Pod:
    refs = []
    for i, name in enumerate(claims):
        ref_name = RES if i == 0 else f"{RES}-{i + 1}"
        refs.append({"name": ref_name, ("resourceClaimTemplateName" if template else "resourceClaimName"): name})
    status = {"resourceClaimStatuses": [{"name": RES, "resourceClaimName": CLAIM}]} if template and in_status else {}
    return Pod.parse({"metadata": {"name": POD, "namespace": "default", "uid": POD_UID},
                      "spec": {"containers": [{"name": "c", "image": "i"}], "resourceClaims": refs}, "status": status})


PENDING = claim()
ALLOCATED = allocated(PENDING)
IN_USE = allocated(PENDING, reserved=True)
OTHER = claim("not-my-claim", owner=False)
OTHER_ALLOCATED = allocated(claim(f"{CLAIM}-other"))
PRIORITIZED = claim(CLAIM, {"name": "req-1", "firstAvailable": [{"name": "subreq-1", **exactly()}]})
BROKEN_CEL = f'device.attributes["{DRIVER}"].{ATTR}'


def run_plugin(*, pod: Pod, claims: list[dict] = (), classes: list[dict] = (), slices: list[dict] = (),  # type: ignore[assignment]
               nodes: tuple[str, ...] = (NODE,), args: dict | None = None, gates: dict | None = None,
               unreserve_before_prebind: bool = False, unreserve_after_bind: bool = False,
               before_prebind: Any = None) -> dict[str, Any]:
    """The steps upstream's testPlugin runs; returns each step's status and the claims after it."""
    with features.override(**(gates or {})):
        snap = Snapshot()
        for n in nodes:
            snap.add_node(node(n))
        snap.dra.add(DraObjects(
            classes=[DeviceClass.parse(c) for c in classes],
            slices=[ResourceSlice.parse(s) for s in slices],
            claims=[ResourceClaim.parse(c) for c in claims],
        ))
        pl = DynamicResources(args, Handle(snap))
    out: dict[str, Any] = {}

    def claims_now() -> dict[str, dict]:
        return {k: {"status": c.raw.get("status") or {}, "finalizers": list(c.finalizers)} for k, c in sorted(snap.dra.claims.items())}

    out["preenqueue"] = pl.pre_enqueue(pod) or Status()
    if not out["preenqueue"].ok:
        return out
    state = CycleState()
    out["prefilter"] = pl.pre_filter(state, pod, snap) or Status()
    if out["prefilter"].code == SKIP:
        out["postfilter"] = pl.post_filter(state, pod, snap, None)[1]
        out["prebindpreflight"] = pl.pre_bind_pre_flight(state, pod, NODE) or Status()
        return out
    passing: list[int] = []
    if out["prefilter"].ok:
        rows = np.arange(len(nodes))
        verdicts = pl.filter(state, pod, snap, rows)
        out["filter"] = {}
        for i, n in enumerate(nodes):
            st = verdicts.status_at(i)
            out["filter"][n] = st
            if st.code == ERROR:
                return out
            if st.ok:
                passing.append(i)
    if not passing:
        out["postfilter"] = pl.post_filter(state, pod, snap, None)[1]
        out["claims"] = claims_now()
        return out
    selected = nodes[passing[0]]
    if len(passing) > 1:
        raw = pl.score(state, pod, snap, np.asarray(passing))
        out["score"] = {nodes[i]: int(v) for i, v in zip(passing, raw, strict=True)}
        norm = pl.normalize(state, pod, raw.copy())
        out["normalize"] = {nodes[i]: int(v) for i, v in zip(passing, norm, strict=True)}
        selected = nodes[passing[int(np.argmax(norm))]]
    out["selected"] = selected
    out["reserve"] = pl.reserve(state, pod, selected) or Status()
    out["in_flight"] = sorted(c.name for c in snap.dra.in_flight.values())
    if unreserve_before_prebind:
        pl.unreserve(state, pod, selected)
        out["in_flight_after_unreserve"] = sorted(c.name for c in snap.dra.in_flight.values())
        out["claims"] = claims_now()
        return out
    if before_prebind is not None:
        before_prebind(snap)
    out["prebindpreflight"] = pl.pre_bind_pre_flight(state, pod, selected) or Status()
    out["prebind"] = pl.pre_bind(state, pod, selected) or Status()
    out["claims"] = claims_now()
    out["in_flight_after_prebind"] = sorted(c.name for c in snap.dra.in_flight.values())
    if unreserve_after_bind:
        pl.unreserve(state, pod, selected)
        out["claims_after_unreserve"] = claims_now()
    return out


def status(code: Code = Code.Success, msg: str | None = None) -> tuple:
    return (code, (msg,) if msg else ())


def st(s: Status) -> tuple:
    return (s.code, s.reasons)


RESERVED_FOR = [{"resource": "pods", "name": POD, "uid": POD_UID}]


def in_use(alloc: dict | None = None) -> dict:
    return {"status": {"allocation": alloc or allocation(), "reservedFor": RESERVED_FOR}, "finalizers": [FINALIZER]}


def test_empty() -> None:
    pod_ = Pod.parse({"metadata": {"name": "foo", "namespace": "default"}, "spec": {"containers": [{"name": "c", "image": "i"}]}})
    out = run_plugin(pod=pod_)
    assert st(out["prefilter"]) == status(SKIP)
    assert st(out["postfilter"]) == status(UNSCHED)
    assert st(out["prebindpreflight"]) == status(SKIP)


@pytest.mark.parametrize(("name", "p"), [("claim-reference", pod()), ("claim-template", pod(template=True)),
                                          ("bound-claim-without-binding-conditions", pod(template=True))])
def test_claim_reference(name: str, p: Pod) -> None:
    """claim-reference, claim-template, bound-claim-without-binding-conditions: an allocated
    claim is only reserved for the pod at PreBind."""
    out = run_plugin(pod=p, claims=[ALLOCATED, OTHER])
    assert out["prefilter"].ok and out["filter"][NODE].ok and out["reserve"].ok and out["prebind"].ok
    assert out["claims"][f"default/{CLAIM}"] == in_use()
    assert out["claims"]["default/not-my-claim"] == {"status": {}, "finalizers": []}


@pytest.mark.parametrize(
    ("name", "claims", "expected"),
    [
        ("missing-claim", [ALLOCATED, OTHER], 'pod "default/my-pod": ResourceClaim not created yet'),
        ("deleted-claim", [{**ALLOCATED, "metadata": {**ALLOCATED["metadata"], "deletionTimestamp": "2026-01-01T00:00:00Z"}}],
         'resourceclaim "my-pod-my-resource" is being deleted'),
        ("wrong-claim", [{**ALLOCATED, "metadata": {**ALLOCATED["metadata"], "ownerReferences": [
            {"apiVersion": "v1", "kind": "Pod", "name": POD, "uid": POD_UID + "123", "controller": True}]}}],
         "ResourceClaim default/my-pod-my-resource was not created for pod default/my-pod (pod is not owner)"),
    ],
)
def test_pre_enqueue(name: str, claims: list[dict], expected: str) -> None:
    out = run_plugin(pod=pod(template=True, in_status=name != "missing-claim"), claims=claims)
    assert st(out["preenqueue"]) == status(UNRESOLVABLE, expected)


@pytest.mark.parametrize(
    ("name", "claims", "slices", "gates"),
    [
        ("no-resources", [PENDING], [], {}),
        ("exhausted-resources", [PENDING, OTHER_ALLOCATED], [WORKER_SLICE], {}),
        ("tainted-device-enabled", [PENDING], [{**WORKER_SLICE, "spec": {**WORKER_SLICE["spec"], "devices": [
            {"name": "instance-1", "taints": [{"key": "example.com/taint", "effect": "NoExecute"}]}]}}], {"DRADeviceTaints": True}),
    ],
)
def test_cannot_allocate(name: str, claims: list[dict], slices: list[dict], gates: dict) -> None:
    out = run_plugin(pod=pod(), claims=claims, classes=[DEVICE_CLASS], slices=slices, gates=gates)
    assert st(out["filter"][NODE]) == status(UNRESOLVABLE, "cannot allocate all claims")
    assert st(out["postfilter"]) == status(UNSCHED, "still not schedulable")


@pytest.mark.parametrize(
    ("name", "claims", "slices", "gates", "expected"),
    [
        ("with-resources", [PENDING], [WORKER_SLICE], {}, allocation()),
        ("with-resources-has-finalizer", [{**PENDING, "metadata": {**PENDING["metadata"], "finalizers": [FINALIZER]}}],
         [WORKER_SLICE], {}, allocation()),
        ("tainted-device-disabled", [PENDING], [{**WORKER_SLICE, "spec": {**WORKER_SLICE["spec"], "devices": [
            {"name": "instance-1", "taints": [{"key": "example.com/taint", "effect": "NoExecute"}]}]}}],
         {"DRADeviceTaints": False}, allocation()),
        ("request-admin-access-with-DRAAdminAccess-featuregate", [admin(PENDING), OTHER_ALLOCATED], [WORKER_SLICE],
         {}, allocation(admin=True)),
        ("structured-ignore-allocated-admin-access", [PENDING, allocated(admin(claim(f"{CLAIM}-other")), allocation(admin=True))],
         [WORKER_SLICE], {}, allocation()),
        ("timeout_zero", [PENDING], [WORKER_SLICE], {}, allocation()),
        ("timeout_disabled", [PENDING], [WORKER_SLICE], {"DRASchedulerFilterTimeout": False}, allocation()),
    ],
)
def test_allocates_reserves_and_binds(name: str, claims: list[dict], slices: list[dict], gates: dict, expected: dict) -> None:
    """The claim's allocation is in flight from Reserve, then PreBind writes it with the pod's
    reservation and the finalizer."""
    args = {"filterTimeout": "0s"} if name == "timeout_zero" else None
    out = run_plugin(pod=pod(), claims=claims, classes=[DEVICE_CLASS], slices=slices, gates=gates, args=args)
    assert out["filter"][NODE].ok and out["reserve"].ok
    assert out["in_flight"] == [CLAIM]
    assert out["prebind"].ok and out["in_flight_after_prebind"] == []
    assert out["claims"][f"default/{CLAIM}"] == in_use(expected)


def test_with_resources_finalizer_gets_removed_and_added() -> None:
    """with-resources-finalizer-gets-removed / -added: PreBind works on the claim as it is then,
    so the finalizer ends up set either way."""
    def drop(snap: Snapshot) -> None:
        c = snap.dra.claim("default", CLAIM)
        snap.dra.write_claim(c.with_status(c.allocation, c.reserved_for, ()))

    def add(snap: Snapshot) -> None:
        c = snap.dra.claim("default", CLAIM)
        snap.dra.write_claim(c.with_status(c.allocation, c.reserved_for, (FINALIZER,)))

    with_fin = {**PENDING, "metadata": {**PENDING["metadata"], "finalizers": [FINALIZER]}}
    for claims, change in (([with_fin], drop), ([PENDING], add)):
        out = run_plugin(pod=pod(), claims=claims, classes=[DEVICE_CLASS], slices=[WORKER_SLICE], before_prebind=change)
        assert out["claims"][f"default/{CLAIM}"] == in_use()


def test_skip_bind() -> None:
    """skip-bind: Unreserve before PreBind drops the allocation in flight; nothing was written."""
    out = run_plugin(pod=pod(), claims=[PENDING], classes=[DEVICE_CLASS], slices=[WORKER_SLICE], unreserve_before_prebind=True)
    assert out["in_flight"] == [CLAIM] and out["in_flight_after_unreserve"] == []
    assert out["claims"][f"default/{CLAIM}"] == {"status": {}, "finalizers": []}


def test_request_admin_access_without_feature_gate() -> None:
    """request-admin-access-without-DRAAdminAccess-featuregate (the gate is locked on in v1.36;
    the allocator's switch is what the case checks)."""
    with features.override():
        pl_features = DynamicResources().features
    assert pl_features.admin_access
    from kubesched.dra.allocator import Allocator
    from kubesched.dra.pools import Features
    from kubesched.dra.store import DraState

    dra = DraState()
    dra.add(DraObjects(classes=[DeviceClass.parse(DEVICE_CLASS)], slices=[ResourceSlice.parse(WORKER_SLICE)]))
    a = Allocator(Features(admin_access=False), set(), dra.classes, list(dra.slices.values()))
    with pytest.raises(Exception, match="claim default/my-pod-my-resource, request req-1: admin access is requested, but the feature is disabled"):
        a.allocate(node(NODE), [ResourceClaim.parse(admin(PENDING))])


@pytest.mark.parametrize(
    ("name", "claims", "classes", "nodes", "slices", "expected"),
    [
        ("claim-parameters-CEL-runtime-error",
         [claim(CLAIM, {"name": "req-1", "exactly": exactly(CLASS, 1, BROKEN_CEL)})], [DEVICE_CLASS], (NODE,), [WORKER_SLICE],
         f"claim default/my-pod-my-resource: selector #0 on device {DRIVER}/{NODE}/instance-1: CEL runtime error: no such key: {ATTR}"),
        ("class-parameters-CEL-runtime-error", [PENDING],
         [{"metadata": {"name": CLASS}, "spec": {"selectors": [{"cel": {"expression": BROKEN_CEL}}]}}], (NODE,), [WORKER_SLICE],
         f"class my-resource-class: selector #0 on device {DRIVER}/{NODE}/instance-1: CEL runtime error: no such key: {ATTR}"),
        ("CEL-runtime-error-for-one-of-two-nodes",
         [claim(CLAIM, {"name": "req-1", "exactly": exactly(CLASS, 1, BROKEN_CEL)})], [DEVICE_CLASS], (NODE, NODE2),
         [WORKER_SLICE, WORKER2_SLICE],
         f"claim default/my-pod-my-resource: selector #0 on device {DRIVER}/{NODE}/instance-1: CEL runtime error: no such key: {ATTR}"),
    ],
)
def test_cel_runtime_error(name: str, claims: list, classes: list, nodes: tuple, slices: list, expected: str) -> None:
    """A broken selector is an Error on the first node judged, which aborts the cycle. Upstream's
    text names the selector without the device ("selector #0: CEL runtime error"); the
    stable allocator's (this port's source) adds "on device <id>"."""
    out = run_plugin(pod=pod(), claims=claims, classes=classes, slices=slices, nodes=nodes)
    assert st(out["filter"][NODE]) == status(ERROR, expected)
    assert list(out["filter"]) == [NODE]


@pytest.mark.parametrize(
    ("name", "claims", "gates", "expected"),
    [
        ("missing-class", [PENDING], {}, f"request req-1: device class {CLASS} does not exist"),
        ("claim-with-request-with-unknown-device-class",
         [claim(CLAIM, {"name": "req-1", "exactly": exactly("does-not-exist")})], {}, "request req-1: device class does-not-exist does not exist"),
        ("claim-with-prioritized-list-feature-disabled", [PRIORITIZED], {"DRAPrioritizedList": False},
         "resource claim default/my-pod-my-resource, request req-1: has subrequests, but the DRAPrioritizedList feature is disabled"),
        ("claim-with-prioritized-list-unknown-device-class",
         [claim(CLAIM, {"name": "req-1", "firstAvailable": [{"name": "subreq-1", **exactly("does-not-exist")}]})], {},
         "request req-1/subreq-1: device class does-not-exist does not exist"),
    ],
)
def test_pre_filter_rejects(name: str, claims: list, gates: dict, expected: str) -> None:
    classes = [] if name == "missing-class" else [DEVICE_CLASS]
    out = run_plugin(pod=pod(), claims=claims, classes=classes, gates=gates)
    assert st(out["prefilter"]) == status(UNRESOLVABLE, expected)
    assert st(out["postfilter"]) == status(UNSCHED, "no new claims to deallocate")


def test_wrong_topology() -> None:
    """wrong-topology: PostFilter deallocates the claim that keeps the pod off every node."""
    wrong = allocated(PENDING, allocation(selector={"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "no-such-label", "operator": "In", "values": ["no-such-value"]}]}]}))
    out = run_plugin(pod=pod(), claims=[wrong])
    assert st(out["filter"][NODE]) == status(UNRESOLVABLE, "resourceclaim not available on the node")
    assert st(out["postfilter"]) == status(UNSCHED, "deallocation of ResourceClaim completed")
    assert out["claims"][f"default/{CLAIM}"]["status"] == {}


GOOD_TOPOLOGY = allocated(PENDING, allocation(selector={"nodeSelectorTerms": [{"matchExpressions": [
    {"key": "kubernetes.io/hostname", "operator": "In", "values": [NODE]}]}]}))


def test_good_topology_and_bind_failure() -> None:
    """good-topology: the allocated claim is usable on the node and gets reserved; bind-failure:
    Unreserve after a failed Bind takes the reservation back."""
    out = run_plugin(pod=pod(), claims=[GOOD_TOPOLOGY], unreserve_after_bind=True)
    assert out["claims"][f"default/{CLAIM}"]["status"]["reservedFor"] == RESERVED_FOR
    assert "reservedFor" not in out["claims_after_unreserve"][f"default/{CLAIM}"]["status"]
    assert out["claims_after_unreserve"][f"default/{CLAIM}"]["status"]["allocation"] == GOOD_TOPOLOGY["status"]["allocation"]


def test_reserved_okay() -> None:
    """reserved-okay: a claim already reserved for the pod passes and PreBind has nothing to write."""
    out = run_plugin(pod=pod(), claims=[IN_USE])
    assert out["prefilter"].ok and out["filter"][NODE].ok and out["prebind"].ok
    assert out["claims"][f"default/{CLAIM}"] == in_use()


def test_claim_with_prioritized_list() -> None:
    out = run_plugin(pod=pod(), claims=[PRIORITIZED], classes=[DEVICE_CLASS], slices=[WORKER_SLICE])
    assert out["in_flight"] == [CLAIM]
    assert out["claims"][f"default/{CLAIM}"] == in_use(allocation("req-1/subreq-1"))


def test_timeout() -> None:
    """timeout: a 1 ns filterTimeout stops the search on the node."""
    large = claim(CLAIM, *[{"name": f"req-{i}", "exactly": exactly()} for i in range(1, 6)])
    out = run_plugin(pod=pod(), claims=[large], classes=[DEVICE_CLASS], slices=[LARGE_WORKER_SLICE], args={"filterTimeout": "1ns"})
    assert st(out["filter"][NODE]) == status(UNRESOLVABLE, "timed out trying to allocate devices")
    assert st(out["postfilter"]) == status(UNSCHED, "still not schedulable")


def test_single_claim_prioritized_list_scoring() -> None:
    with_attr = claim(CLAIM, {"name": "req-1", "firstAvailable": [
        {"name": "subreq-1", **exactly(CLASS, 1, BROKEN_CEL)}, {"name": "subreq-2", **exactly()}]})
    out = run_plugin(pod=pod(), claims=[with_attr], classes=[DEVICE_CLASS], nodes=(NODE, NODE2),
                     slices=[slice_(NODE, "instance-1", attrs={ATTR: {"bool": True}}), slice_(NODE2, "instance-1", attrs={ATTR: {"bool": False}})])
    assert out["score"] == {NODE: 8, NODE2: 7} and out["normalize"] == {NODE: 100, NODE2: 87}
    assert out["claims"][f"default/{CLAIM}"] == in_use(allocation("req-1/subreq-1"))


def test_multiple_claims_prioritized_list_scoring() -> None:
    c2 = claim(CLAIM2, {"name": "req-1", "firstAvailable": [
        {"name": f"subreq-{i}", **exactly(CLASS, 5 - i)} for i in range(1, 5)]})
    out = run_plugin(pod=pod(claims=(CLAIM, CLAIM2)), claims=[PRIORITIZED, c2], classes=[DEVICE_CLASS], nodes=(NODE, NODE2, NODE3),
                     slices=[slice_(NODE, *[f"instance-{i}" for i in range(1, 5)]), slice_(NODE2, "instance-1", "instance-2"),
                             slice_(NODE3, "instance-1")])
    assert st(out["filter"][NODE3]) == status(UNRESOLVABLE, "cannot allocate all claims")
    assert out["score"] == {NODE: 15, NODE2: 13} and out["normalize"] == {NODE: 100, NODE2: 86}


def test_multiple_requests_prioritized_list_scoring() -> None:
    two = claim(CLAIM, *[{"name": f"req-{r}", "firstAvailable": [{"name": "subreq-1", **exactly(CLASS, 2)}, {"name": "subreq-2", **exactly(CLASS, 1)}]}
                         for r in (1, 2)])
    out = run_plugin(pod=pod(), claims=[two], classes=[DEVICE_CLASS], nodes=(NODE, NODE2, NODE3),
                     slices=[slice_(NODE, *[f"instance-{i}" for i in range(1, 5)]), slice_(NODE2, "instance-1", "instance-2", "instance-3"),
                             slice_(NODE3, "instance-1", "instance-2")])
    assert out["score"] == {NODE: 16, NODE2: 15, NODE3: 14}
    assert out["normalize"] == {NODE: 100, NODE2: 93, NODE3: 87}


def test_signature_and_events() -> None:
    """Pods without claims take no part (the equivalence cache and PreFilter skip them); pods with
    claims are not signable (SignPod); the plugin registers upstream's events."""
    pl = DynamicResources(None, Handle(Snapshot()))
    no_claims = Pod.parse({"metadata": {"name": "x"}, "spec": {"containers": [{"name": "c", "image": "i"}]}})
    assert pl.sign_pod(no_claims, Snapshot()).reads == "nothing"
    assert pl.sign_pod(pod(), Snapshot()) is None
    assert {"NodeAdd", "ResourceClaimUpdate", "ResourceSliceAdd", "DeviceClassAdd"} <= pl.events_to_register
