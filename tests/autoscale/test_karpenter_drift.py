"""Static drift of the nodes the provisioner launched, read from their annotations, ported from
kubernetes-sigs/karpenter pkg/controllers/nodeclaim/disruption/drift_test.go, context "NodePool
Static Drift": the 7 entries of "should detect drift on changes to the static fields" and the three
"should not return drifted" cases on the NodeClaim's annotations (here the node's: the live mode
writes no NodeClaims); context "NodeRequirement Drift": its 8 table entries and "should return
drifted only on NodeClaims that are drifted from an updated nodePool". Not ported: the NodePool
without a hash annotation (a pool here always has one), cloud-provider and instance-type drift.
Then expiry from the node's creation time, as a restarted loop reads it, and what is written: the
NodeClaim's metadata and conditions, and the marks on a node of a pool."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from kubesched.api.objects import Node
from kubesched.autoscale.claims import (
    REQUIREMENTS_DRIFTED,
    drift_reason,
    expires_at,
    is_drifted,
    launched_at,
    node_marks,
    pool_node,
)
from kubesched.autoscale.config import AutoscalerConfig, NodeGroup
from kubesched.autoscale.configfile import template_node
from kubesched.autoscale.karpenter import KarpenterLike
from kubesched.autoscale.nodepool import (
    POOL_HASH,
    POOL_HASH_VERSION,
    POOL_HASH_VERSION_KEY,
    NodePool,
    node_claim,
    read_node_pools,
)
from kubesched.live.bodies import rfc3339
from kubesched.testing import make_pod
from tests.autoscale.karpenter_helpers import View
from tests.autoscale.loop_helpers import Recorder

TEMPLATE = template_node("it", {"cpu": "4", "memory": "16Gi"})

# the BeforeEach's NodePool: every static field set
STATIC = {
    "metadata": {"annotations": {"keyAnnotation": "valueAnnotation", "keyAnnotation2": "valueAnnotation2"},
                 "labels": {"keyLabel": "valueLabel", "keyLabel2": "valueLabel2"}},
    "spec": {
        "requirements": [],
        "nodeClassRef": {"group": "karpenter.test.sh", "kind": "TestNodeClass", "name": "default"},
        "taints": [{"key": "keyvalue1", "effect": "NoExecute"}],
        "startupTaints": [{"key": "startupkeyvalue1", "effect": "NoExecute"}],
        "expireAfter": "5m",
        "terminationGracePeriod": "5m",
    },
}


def pool(template: dict, expire_after: str | None = None) -> NodePool:
    t = copy.deepcopy(template)
    if expire_after is not None:
        t["spec"]["expireAfter"] = expire_after
    doc = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "default"}, "spec": {"template": t}}
    (p,) = read_node_pools([doc])
    return p


def launched_from(p: NodePool, name: str = "it-1") -> Node:
    return pool_node(TEMPLATE, name, p, "it", "on-demand")


def with_annotations(node: Node, annotations: dict[str, str]) -> Node:
    raw = copy.deepcopy(node.raw)
    raw["metadata"]["annotations"] = annotations
    return Node.parse(raw)


CHANGES = {
    "Annoations": ("metadata", "annotations", {"keyAnnotationTest": "valueAnnotationTest"}),
    "Labels": ("metadata", "labels", {"keyLabelTest": "valueLabelTest"}),
    "Taints": ("spec", "taints", [{"key": "keytest2taint", "effect": "NoExecute"}]),
    "StartupTaints": ("spec", "startupTaints", [{"key": "keytest2taint", "effect": "NoExecute"}]),
    "NodeClassRef Name": ("spec", "nodeClassRef", {"group": "karpenter.test.sh", "kind": "TestNodeClass", "name": "testName"}),
    "ExpireAfter": ("spec", "expireAfter", "100m"),
    "TerminationGracePeriod": ("spec", "terminationGracePeriod", "100m"),
}


@pytest.mark.parametrize("entry", list(CHANGES), ids=[f"should detect drift on changes to the static fields/{e}" for e in CHANGES])
def test_should_detect_drift_on_changes_to_the_static_fields(entry):
    before = pool(STATIC)
    node = launched_from(before)
    assert not is_drifted(node, before)
    part, key, value = CHANGES[entry]
    edited = copy.deepcopy(STATIC)
    edited[part][key] = value  # mergo.Merge WithOverride: the field replaced
    assert is_drifted(node, pool(edited))


def test_should_not_return_drifted_if_karpenter_sh_nodepool_hash_annotation_is_not_present_on_the_nodeclaim():
    node = with_annotations(launched_from(pool(STATIC)), {POOL_HASH_VERSION_KEY: POOL_HASH_VERSION})
    edited = copy.deepcopy(STATIC)
    edited["metadata"]["labels"] = {"other": "label"}
    assert not is_drifted(node, pool(edited))


def test_should_not_return_drifted_if_the_nodeclaims_hash_version_annotation_does_not_match_the_nodepools():
    node = with_annotations(launched_from(pool(STATIC)), {POOL_HASH: "test-hash-2", POOL_HASH_VERSION_KEY: "test-version-2"})
    assert not is_drifted(node, pool(STATIC))


def test_should_not_return_drifted_if_karpenter_sh_nodepool_hash_version_annotation_is_not_present_on_the_nodeclaim():
    node = with_annotations(launched_from(pool(STATIC)), {POOL_HASH: "test-hash-111111111"})
    assert not is_drifted(node, pool(STATIC))


def test_a_node_carries_the_hash_and_its_version():
    p = pool(STATIC)
    ann = launched_from(p).raw["metadata"]["annotations"]
    assert ann == {POOL_HASH: p.template_hash, POOL_HASH_VERSION_KEY: POOL_HASH_VERSION}


# ---- NodeRequirement Drift -----------------------------------------------------------------

CT, OS, ARCH = "karpenter.sh/capacity-type", "kubernetes.io/os", "kubernetes.io/arch"


def req(key: str, op: str, *values: str) -> dict:
    return {"key": key, "operator": op, "values": list(values)}


ON_DEMAND = req(CT, "In", "on-demand")
REQUIREMENT_ROWS = {
    "should return drifted if the nodePool node requirement is updated": (
        [ON_DEMAND, req(ARCH, "In", "amd64"), req(OS, "In", "linux")], [req(CT, "In", "spot")],
        {CT: "on-demand", ARCH: "amd64", OS: "linux"}, True),
    "should return drifted if a new node requirement is added": (
        [ON_DEMAND, req(OS, "In", "linux")], [ON_DEMAND, req(OS, "In", "linux"), req(ARCH, "In", "amd64")],
        {CT: "on-demand", OS: "linux"}, True),
    "should return drifted if a node requirement is reduced": (
        [ON_DEMAND, req(OS, "In", "linux", "windows")], [ON_DEMAND, req(OS, "In", "windows")],
        {CT: "on-demand", OS: "linux"}, True),
    "should not return drifted if a node requirement is expanded": (
        [ON_DEMAND, req(OS, "In", "linux")], [ON_DEMAND, req(OS, "In", "linux", "windows")],
        {CT: "on-demand", OS: "linux"}, False),
    "should not return drifted if a node requirement set to Exists": (
        [ON_DEMAND, req(OS, "In", "linux")], [ON_DEMAND, req(OS, "Exists")],
        {CT: "on-demand", OS: "linux"}, False),
    "should return drifted if a node requirement set to DoesNotExists": (
        [ON_DEMAND, req(OS, "In", "linux")], [ON_DEMAND, req(OS, "DoesNotExist")],
        {CT: "on-demand", OS: "linux"}, True),
    "should not return drifted if a nodeClaim is greater then node requirement": (
        [ON_DEMAND, req("test-label", "Gt", "2")], [ON_DEMAND, req("test-label", "Gt", "10")],
        {CT: "on-demand", "test-label": "5"}, True),
    "should not return drifted if a nodeClaim is less then node requirement": (
        [ON_DEMAND, req("test-label", "Lt", "5")], [ON_DEMAND, req("test-label", "Lt", "1")],
        {CT: "on-demand", "test-label": "2"}, True),
}


def requiring(requirements: list[dict]) -> NodePool:
    return pool({"spec": {"requirements": requirements}})


def labelled(node: Node, labels: dict[str, str]) -> Node:
    raw = copy.deepcopy(node.raw)
    raw["metadata"]["labels"] = {**raw["metadata"]["labels"], **labels}
    return Node.parse(raw)


@pytest.mark.parametrize("row", list(REQUIREMENT_ROWS), ids=list(REQUIREMENT_ROWS))
def test_node_requirement_drift(row):
    old, new, labels, drifted = REQUIREMENT_ROWS[row]
    before = requiring(old)
    node = labelled(launched_from(before), labels)
    assert drift_reason(node, before) is None
    after = requiring(new)
    assert after.template_hash == before.template_hash  # requirements are not hashed
    assert drift_reason(node, after) == (REQUIREMENTS_DRIFTED if drifted else None)


def test_should_return_drifted_only_on_nodeclaims_that_are_drifted_from_an_updated_nodepool():
    before = requiring([ON_DEMAND, req(OS, "In", "linux", "windows")])
    linux = labelled(launched_from(before, "it-1"), {CT: "on-demand", OS: "linux"})
    windows = labelled(launched_from(before, "it-2"), {CT: "on-demand", OS: "windows"})
    assert not is_drifted(linux, before) and not is_drifted(windows, before)
    after = requiring([ON_DEMAND, req(OS, "In", "linux")])  # Windows removed
    assert not is_drifted(linux, after) and is_drifted(windows, after)


# ---- expiry from the node, as after a restart ------------------------------------------------


def created(node: Node, t: float) -> Node:
    raw = copy.deepcopy(node.raw)
    raw["metadata"]["creationTimestamp"] = rfc3339(t)
    return Node.parse(raw)


def test_expiry_after_a_restart_counts_from_the_nodes_creation():
    p = pool(STATIC, "1h")
    node = created(launched_from(p), 1_000_000.0)
    assert launched_at(node, {}) == 1_000_000.0
    assert expires_at(node, p, {}, {}) == 1_000_000.0 + 3600
    assert expires_at(node, pool(STATIC, "Never"), {}, {}) is None
    # a claim made by this process keeps the launch time and expiry it recorded
    assert launched_at(node, {"it-1": 5.0}) == 5.0 and expires_at(node, p, {"it-1": 5.0}, {"it-1": 65.0}) == 65.0
    # a node of the pool this provisioner did not launch (no pool hash) is not its to expire
    stranger = with_annotations(node, {})
    assert launched_at(stranger, {}) is None and expires_at(stranger, p, {}, {}) is None


def test_a_restarted_loop_expires_the_nodes_an_earlier_one_launched():
    p = pool(STATIC, "1h")
    cfg = AutoscalerConfig([NodeGroup("it", TEMPLATE)], mode="karpenter", node_pools=[p]).validate()
    rec = Recorder()
    loop = KarpenterLike(cfg, rec, np.random.default_rng(0))  # no memory of any launch
    old, young = created(launched_from(p, "it-1"), 0.0), created(launched_from(p, "it-2"), 3000.0)
    pods = [make_pod(f"p{i}", requests={"cpu": "1"}, node=n.name) for i, n in enumerate((old, young))]
    loop.disrupt(View([old.raw, young.raw], pods, now=3700.0), 3700.0)
    assert rec.deleted == ["it-1"]


# ---- what is written: the NodeClaim, and the node's own marks ---------------------------------


def test_node_claim_carries_the_hash_the_owner_and_its_conditions():
    p = pool(STATIC)
    node = launched_from(p)
    claim = node_claim(p, node, "it", "on-demand")
    md = claim["metadata"]
    assert md["annotations"] == {"keyAnnotation": "valueAnnotation", "keyAnnotation2": "valueAnnotation2",
                                 POOL_HASH: p.template_hash, POOL_HASH_VERSION_KEY: POOL_HASH_VERSION}
    assert md["ownerReferences"] == [{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "name": "default", "blockOwnerDeletion": True}]
    assert md["finalizers"] == ["karpenter.sh/termination"] and md["labels"]["keyLabel"] == "valueLabel"
    assert {c["type"]: c["status"] for c in claim["status"]["conditions"]} == {
        "Launched": "True", "Registered": "True", "Initialized": "True", "Ready": "True"}
    coming = node_claim(p, node, "it", "on-demand", registered=False)
    assert "nodeName" not in coming["status"]
    assert {c["type"]: c["status"] for c in coming["status"]["conditions"]} == {
        "Launched": "True", "Registered": "Unknown", "Initialized": "Unknown", "Ready": "Unknown"}


def test_node_marks_only_on_nodes_of_a_pool():
    p = pool(STATIC)
    labels, ann = node_marks(launched_from(p))
    assert labels == {"karpenter.sh/registered": "true", "karpenter.sh/initialized": "true"}
    assert ann == {POOL_HASH: p.template_hash, POOL_HASH_VERSION_KEY: POOL_HASH_VERSION}
    assert node_marks(Node.parse(TEMPLATE.raw)) == ({}, {})


def test_the_hash_reads_the_template_as_hashstructure_does():
    # the CRD's default written out, empty fields, and taints in another order: the same hash
    plain = pool({"spec": {"requirements": [], "taints": [{"key": "a", "effect": "NoSchedule"}, {"key": "b", "effect": "NoSchedule"}]}})
    spelled = pool({"metadata": {"labels": {}}, "spec": {"requirements": [], "expireAfter": "720h", "startupTaints": [],
                                                          "taints": [{"key": "b", "effect": "NoSchedule"}, {"key": "a", "effect": "NoSchedule"}]}})
    assert plain.template_hash == spelled.template_hash
    assert not is_drifted(launched_from(plain), spelled)
    assert pool({"spec": {"requirements": [], "expireAfter": "1h"}}).template_hash != plain.template_hash
