"""kube-scheduler v1.36 pkg/scheduler/apis/config/validation/validation_pluginargs_test.go.

Upstream calls each Validate<Plugin>Args with a nil path and compares the errors' type and field
(ignoring value and detail); here the args are decoded the same way (root path) and each
reported error's path and type (the start of its text) are compared, in order. Paths are those of
validation_pluginargs.go at v1.36 (NodeResourcesFit's under ``scoringStrategy.``).

Adapted: kubesched validates args after defaulting them, as kube-scheduler does when it loads a
file, while upstream's table validates undefaulted structs. A resource weight of 0 is therefore
defaulted to 1 before it is checked ("weight less than min" and "multi invalid resources" of the
three scoring-strategy tables expect no error for it), and a NodeResourcesFitArgs without
scoringStrategy gets the default one ("ScoringStrategy: field is required" cannot occur).
TestValidateVolumeBindingArgs: 7 of 8 cases ("[StorageCapacityScoring=on] shape should not be
empty" cannot occur after defaulting: an empty shape gets the default one); the gate is set for
a case as upstream's featuregatetesting does.
"""

from __future__ import annotations

import pytest

from kubesched import features
from kubesched.config.args import decode_args
from kubesched.config.decode import Ctx
from kubesched.config.types import V1

INV, REQ, NS, DUP, FORB = "Invalid value", "Required value", "Unsupported value", "Duplicate value", "Forbidden"


def validate(plugin: str, args: dict) -> tuple[dict, list[tuple[str, str]]]:
    """Decoded args and (path, error type) of each validation error."""
    ctx = Ctx(source=None, version=V1, points_of=lambda _n: None)
    out = decode_args(ctx, plugin, args, "")
    return out, [(path or "", body.split(":")[0]) for path, body in ctx.errors]


def table(cases: dict[str, tuple[dict, list[tuple[str, str]]]]):  # noqa: ANN201 - pytest parametrize
    return pytest.mark.parametrize(("args", "want"), list(cases.values()), ids=list(cases))


DEFAULT_PREEMPTION = {
    "valid args (default)": ({"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}, []),
    "negative minCandidateNodesPercentage": (
        {"minCandidateNodesPercentage": -1, "minCandidateNodesAbsolute": 100},
        [("minCandidateNodesPercentage", INV)],
    ),
    "minCandidateNodesPercentage over 100": (
        {"minCandidateNodesPercentage": 900, "minCandidateNodesAbsolute": 100},
        [("minCandidateNodesPercentage", INV)],
    ),
    "negative minCandidateNodesAbsolute": (
        {"minCandidateNodesPercentage": 20, "minCandidateNodesAbsolute": -1},
        [("minCandidateNodesAbsolute", INV)],
    ),
    "all zero": (
        {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
        [("minCandidateNodesPercentage", INV), ("minCandidateNodesAbsolute", INV)],
    ),
    "both negative": (
        {"minCandidateNodesPercentage": -1, "minCandidateNodesAbsolute": -1},
        [("minCandidateNodesPercentage", INV), ("minCandidateNodesAbsolute", INV)],
    ),
}


@table(DEFAULT_PREEMPTION)
def test_validate_default_preemption_args(args: dict, want: list) -> None:
    assert validate("DefaultPreemption", args)[1] == want


INTER_POD_AFFINITY = {
    "valid args": ({"hardPodAffinityWeight": 10}, []),
    "hardPodAffinityWeight less than min": ({"hardPodAffinityWeight": -1}, [("hardPodAffinityWeight", INV)]),
    "hardPodAffinityWeight more than max": ({"hardPodAffinityWeight": 101}, [("hardPodAffinityWeight", INV)]),
}


@table(INTER_POD_AFFINITY)
def test_validate_inter_pod_affinity_args(args: dict, want: list) -> None:
    assert validate("InterPodAffinity", args)[1] == want


def constraint(key: str = "node", when: str = "DoNotSchedule", skew: int = 1, **extra: object) -> dict:
    return {"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": when, **extra}


def listed(*constraints: dict) -> dict:
    return {"defaultConstraints": list(constraints), "defaultingType": "List"}


POD_TOPOLOGY_SPREAD = {
    "valid config": (listed(constraint(), constraint("zone", "ScheduleAnyway", 2)), []),
    "maxSkew less than zero": (listed(constraint(skew=-1)), [("defaultConstraints[0].maxSkew", INV)]),
    "empty topology key": (listed(constraint(key="")), [("defaultConstraints[0].topologyKey", REQ)]),
    "whenUnsatisfiable is empty": (listed(constraint(when="")), [("defaultConstraints[0].whenUnsatisfiable", REQ)]),
    "whenUnsatisfiable contains unsupported action": (
        listed(constraint(when="unknown action")),
        [("defaultConstraints[0].whenUnsatisfiable", NS)],
    ),
    "duplicated constraints": (listed(constraint(), constraint(skew=2)), [("defaultConstraints[1]", DUP)]),
    "label selector present": (
        listed(constraint(key="key", labelSelector={"matchLabels": {"a": "b"}})),
        [("defaultConstraints[0].labelSelector", FORB)],
    ),
    "list default constraints, no constraints": ({"defaultingType": "List"}, []),
    "system default constraints": ({"defaultingType": "System"}, []),
    "wrong constraints": ({"defaultingType": "unknown"}, [("defaultingType", NS)]),
    "system default constraints, but has constraints": (
        {"defaultConstraints": [constraint(key="key")], "defaultingType": "System"},
        [("defaultingType", INV)],
    ),
}


@table(POD_TOPOLOGY_SPREAD)
def test_validate_pod_topology_spread_args(args: dict, want: list) -> None:
    assert validate("PodTopologySpread", args)[1] == want


BALANCED_ALLOCATION = {
    "valid config": ({"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}, []),
    "invalid config": (
        {"resources": [{"name": "cpu", "weight": 2}, {"name": "memory", "weight": 1}]},
        [("resources[0].weight", INV)],
    ),
    "repeated resources": (
        {"resources": [{"name": "cpu", "weight": 1}, {"name": "cpu", "weight": 1}]},
        [("resources[1].name", DUP)],
    ),
}


@table(BALANCED_ALLOCATION)
def test_validate_node_resources_balanced_allocation_args(args: dict, want: list) -> None:
    assert validate("NodeResourcesBalancedAllocation", args)[1] == want


REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def added(key: str, field_values: list[str]) -> dict:
    return {
        "addedAffinity": {
            REQUIRED: {"nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": ["label-1-val"]}]}]},
            PREFERRED: [
                {
                    "weight": 1,
                    "preference": {"matchFields": [{"key": "metadata.name", "operator": "In", "values": field_values}]},
                }
            ],
        }
    }


NODE_AFFINITY = {
    "empty": ({}, []),
    "valid added affinity": (added("label-1", ["node-1"]), []),
    "invalid added affinity": (
        added("invalid/label/key", ["node-1", "node-2"]),
        [
            (f"addedAffinity.{REQUIRED}.nodeSelectorTerms[0].matchExpressions[0].key", INV),
            (f"addedAffinity.{PREFERRED}[0].matchFields[0].values", INV),  # upstream's path has no ".preference"
        ],
    ),
}


@table(NODE_AFFINITY)
def test_validate_node_affinity_args(args: dict, want: list) -> None:
    assert validate("NodeAffinity", args)[1] == want


DEFAULT_STRATEGY = {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}
FIT = [
    # name, args, a text one of the errors contains ("" for valid args)
    ("IgnoredResources: too long value", {"ignoredResources": ["longvalue" + "a" * 64]},
     "name part must be no more than 63 characters"),
    ("IgnoredResources: name is empty", {"ignoredResources": ["example.com/"]}, "name part must be non-empty"),
    ("IgnoredResources: name has too many slash", {"ignoredResources": ["example.com/aaa/bbb"]},
     "a qualified name must consist of alphanumeric characters"),
    ("IgnoredResources: valid args", {"ignoredResources": ["example.com"]}, ""),
    ("IgnoredResourceGroups: valid args ", {"ignoredResourceGroups": ["example.com"]}, ""),
    ("IgnoredResourceGroups: illegal args", {"ignoredResourceGroups": ["example.com/"]}, "name part must be non-empty"),
    ("IgnoredResourceGroups: name is too long", {"ignoredResourceGroups": ["a" * 64]},
     "name part must be no more than 63 characters"),
    ("IgnoredResourceGroups: name cannot be contain slash", {"ignoredResourceGroups": ["example.com/aa"]},
     "resource group name can't contain '/'"),
]


@pytest.mark.parametrize(("args", "expect"), [c[1:] for c in FIT], ids=[c[0] for c in FIT])
def test_validate_fit_args(args: dict, expect: str) -> None:
    """TestValidateFitArgs (8 of 9; see the module's note on "ScoringStrategy: field is required")."""
    ctx = Ctx(source=None, version=V1, points_of=lambda _n: None)
    decode_args(ctx, "NodeResourcesFit", {**args, "scoringStrategy": DEFAULT_STRATEGY}, "")
    texts = [f"{path}: {body}" for path, body in ctx.errors]
    if expect:
        assert any(expect in t for t in texts), texts
    else:
        assert texts == []


def resources(*weights: tuple[str, int]) -> list[dict]:
    return [{"name": n, "weight": w} for n, w in weights]


RES = "scoringStrategy.resources"
WEIGHT_CASES = {
    "default config": (None, []),
    "multi valid resources": (resources(("cpu", 1), ("memory", 10)), []),
    "weight less than min": (resources(("cpu", 0)), []),  # defaulted to 1 before validation
    "weight greater than max": (resources(("cpu", 101)), [(f"{RES}[0].weight", INV)]),
    "multi invalid resources": (resources(("cpu", 0), ("memory", 101)), [(f"{RES}[1].weight", INV)]),
}


@pytest.mark.parametrize("strategy", ["LeastAllocated", "MostAllocated"])
@pytest.mark.parametrize(("res", "want"), list(WEIGHT_CASES.values()), ids=list(WEIGHT_CASES))
def test_validate_least_and_most_allocated_scoring_strategy(strategy: str, res: list | None, want: list) -> None:
    """TestValidateLeastAllocatedScoringStrategy and TestValidateMostAllocatedScoringStrategy."""
    args = {"scoringStrategy": {"type": strategy, "resources": res}}
    out, errors = validate("NodeResourcesFit", args)
    assert errors == want
    assert all(r["weight"] >= 1 for r in out["scoringStrategy"]["resources"])


SHAPE = "scoringStrategy.requestedToCapacityRatio.shape"
DEFAULT_SHAPE = [{"utilization": 30, "score": 3}]


def points(*pairs: tuple[int, int]) -> list[dict]:
    return [{"utilization": u, "score": s} for u, s in pairs]


RTCR = {
    "no shapes": (None, None, [(SHAPE, REQ)]),
    "weight greater than max": (DEFAULT_SHAPE, resources(("cpu", 101)), [(f"{RES}[0].weight", INV)]),
    "weight less than min": (DEFAULT_SHAPE, resources(("cpu", 0)), []),  # defaulted to 1
    "valid shapes": (DEFAULT_SHAPE, None, []),
    "utilization less than min": (points((-1, 3)), None, [(f"{SHAPE}[0].utilization", INV)]),
    "utilization greater than max": (points((101, 3)), None, [(f"{SHAPE}[0].utilization", INV)]),
    "duplicated utilization values": (points((10, 3), (10, 3)), None, [(f"{SHAPE}[1].utilization", INV)]),
    "increasing utilization values": (points((10, 3), (20, 3), (30, 3)), None, []),
    "non-increasing utilization values": (points((10, 3), (20, 3), (15, 3)), None, [(f"{SHAPE}[2].utilization", INV)]),
    "score less than min": (points((10, -1)), None, [(f"{SHAPE}[0].score", INV)]),
    "score greater than max": (points((10, 11)), None, [(f"{SHAPE}[0].score", INV)]),
}


@pytest.mark.parametrize(("shape", "res", "want"), list(RTCR.values()), ids=list(RTCR))
def test_validate_requested_to_capacity_ratio_scoring_strategy(shape: list | None, res: list | None, want: list) -> None:
    args = {
        "scoringStrategy": {
            "type": "RequestedToCapacityRatio",
            "resources": res,
            "requestedToCapacityRatio": {"shape": shape},
        }
    }
    assert validate("NodeResourcesFit", args)[1] == want


def test_every_error_is_reported_at_once() -> None:
    """The errors of one args object (and of the whole file) come together, as upstream's
    aggregate: ``[a, b]``."""
    from config_testlib import one_profile, parse

    from kubesched.errors import InputError

    shape = points((-1, 3), (10, -1), (20, 11), (101, 1))
    args = {"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {"shape": shape}}}
    with pytest.raises(InputError) as info:
        parse(one_profile(plugin_config=[{"name": "NodeResourcesFit", "args": args}]))
    a = "profiles[0].pluginConfig[0].args." + SHAPE
    assert info.value.reason == (
        f"[{a}[0].utilization: Invalid value: -1: not in valid range [0, 100], "
        f"{a}[1].score: Invalid value: -1: not in valid range [0, 10], "
        f"{a}[2].score: Invalid value: 11: not in valid range [0, 10], "
        f"{a}[3].utilization: Invalid value: 101: not in valid range [0, 100]]"
    )
    assert info.value.path is None and str(info.value).startswith("sched.yaml: [")


VOLUME_BINDING = {
    "zero is a valid config": (False, {"bindTimeoutSeconds": 0}, []),
    "positive value is valid config": (False, {"bindTimeoutSeconds": 10}, []),
    "negative value is invalid config": (False, {"bindTimeoutSeconds": -10}, [("bindTimeoutSeconds", INV)]),
    "[StorageCapacityScoring=off] shape should be nil when the feature is off": (False, {"bindTimeoutSeconds": 10}, []),
    "[StorageCapacityScoring=off] error if the shape is not nil when the feature is off": (
        False,
        {"bindTimeoutSeconds": 10, "shape": [{"utilization": 1, "score": 1}, {"utilization": 3, "score": 3}]},
        [("shape", INV)],
    ),
    "[StorageCapacityScoring=on] shape points must be sorted in increasing order": (
        True,
        {"bindTimeoutSeconds": 10, "shape": [{"utilization": 3, "score": 3}, {"utilization": 1, "score": 1}]},
        [("shape[1].utilization", INV)],
    ),
    "[StorageCapacityScoring=on] shape point: invalid utilization and score": (
        True,
        {
            "bindTimeoutSeconds": 10,
            "shape": [
                {"utilization": -1, "score": 1},
                {"utilization": 10, "score": -1},
                {"utilization": 20, "score": 11},
                {"utilization": 101, "score": 1},
            ],
        },
        [("shape[0].utilization", INV), ("shape[1].score", INV), ("shape[2].score", INV), ("shape[3].utilization", INV)],
    ),
}


@pytest.mark.parametrize(("gate", "args", "want"), list(VOLUME_BINDING.values()), ids=list(VOLUME_BINDING))
def test_validate_volume_binding_args(gate: bool, args: dict, want: list) -> None:
    with features.override("StorageCapacityScoring", gate):
        assert validate("VolumeBinding", args)[1] == want


def test_volume_binding_shape_error_text() -> None:
    """The error names the shape as Go prints the internal type, and the gate to turn on."""
    ctx = Ctx(source=None, version=V1, points_of=lambda _n: None)
    decode_args(ctx, "VolumeBinding", {"shape": [{"utilization": 1, "score": 1}]}, "")
    assert ctx.errors == [
        (
            "shape",
            "Invalid value: []config.UtilizationShapePoint{config.UtilizationShapePoint{Utilization:1, Score:1}}: "
            "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring",
        )
    ]
