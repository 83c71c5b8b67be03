"""Defaults of an empty v1 config: the default profile, top-level fields and plugin args."""

from __future__ import annotations

import pytest
from config_testlib import EXTRA_POINTS, doc, fake_points_of, one_profile, parse, points, score

from kubesched import features
from kubesched.config import (
    BUILTIN_POINTS,
    EXTENSION_POINTS,
    V1,
    PluginRef,
    builtin_points_of,
    default_args,
    default_config,
    effective_config,
    effective_spread_constraints,
    parse_config,
    resolved_table,
    system_default_constraints,
)
from kubesched.errors import InputError

DEFAULT_POINTS = {
    "preEnqueue": ["SchedulingGates", "DynamicResources"],
    "queueSort": ["PrioritySort"],
    "preFilter": [
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
    ],
    "filter": [
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
    ],
    "postFilter": ["DynamicResources", "DefaultPreemption"],
    "preScore": [
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "VolumeBinding",
        "PodTopologySpread",
        "InterPodAffinity",
        "NodeResourcesBalancedAllocation",
    ],
    "score": [
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "VolumeBinding",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
    ],
    "reserve": ["VolumeBinding", "DynamicResources"],
    "permit": [],
    "preBind": ["VolumeBinding", "DynamicResources"],
    "bind": ["DefaultBinder"],
    "postBind": [],
}
DEFAULT_LEADER_ELECTION = {
    "leaderElect": True,
    "leaseDuration": "15s",
    "renewDeadline": "10s",
    "retryPeriod": "2s",
    "resourceLock": "leases",
    "resourceName": "kube-scheduler",
    "resourceNamespace": "kube-system",
}
DEFAULT_SCORE = [
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodeResourcesFit", 1),
    ("VolumeBinding", 1),  # no weight in the v1 defaults: the framework's 1
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", 1),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
]


@pytest.fixture(scope="module")
def cfg():
    return default_config(fake_points_of)


def test_builtin_points_table() -> None:
    assert BUILTIN_POINTS["NodeResourcesFit"] == {"preFilter", "filter", "preScore", "score"}
    assert BUILTIN_POINTS["ImageLocality"] == {"score"}
    assert BUILTIN_POINTS["DefaultPreemption"] == {"postFilter"}
    assert BUILTIN_POINTS["VolumeBinding"] == {"preFilter", "filter", "reserve", "preBind", "preScore", "score"}
    assert BUILTIN_POINTS["DynamicResources"] == {
        "preEnqueue", "preFilter", "filter", "postFilter", "score", "reserve", "preBind"
    }
    assert len(BUILTIN_POINTS) == 19
    assert all(p <= set(EXTENSION_POINTS) for p in BUILTIN_POINTS.values())
    assert builtin_points_of("Nope") is None


def test_default_profile_points_exact(cfg) -> None:
    prof = cfg.profiles[0]
    assert prof.scheduler_name == "default-scheduler"
    assert list(prof.plugins) == list(EXTENSION_POINTS)
    for point, names in DEFAULT_POINTS.items():
        assert prof.names(point) == names, point


def test_default_score_weights(cfg) -> None:
    assert score(cfg) == DEFAULT_SCORE
    assert cfg.profiles[0].score_weights()["TaintToleration"] == 3


def test_non_score_points_have_zero_weight(cfg) -> None:
    for point in EXTENSION_POINTS:
        if point != "score":
            assert all(ref.weight == 0 for ref in cfg.profiles[0].plugins[point])


def test_top_level_defaults(cfg) -> None:
    assert cfg.api_version_loaded == V1
    assert cfg.parallelism == 16
    assert cfg.percentage_of_nodes_to_score == 0
    assert cfg.pod_initial_backoff_seconds == 1
    assert cfg.pod_max_backoff_seconds == 10
    assert cfg.extenders == []
    assert cfg.warnings == []
    assert cfg.enable_profiling is True and cfg.enable_contention_profiling is True
    assert cfg.delay_cache_until_active is False
    assert cfg.leader_election == DEFAULT_LEADER_ELECTION
    assert cfg.client_connection["qps"] == 50.0
    assert cfg.client_connection["burst"] == 100
    assert cfg.client_connection["contentType"] == "application/vnd.kubernetes.protobuf"
    assert cfg.profiles[0].percentage_of_nodes_to_score is None


def test_profile_lookup(cfg) -> None:
    assert cfg.profile("default-scheduler") is cfg.profiles[0]
    assert cfg.profile("other") is None
    assert cfg.scheduler_names == ["default-scheduler"]


def test_default_plugin_args(cfg) -> None:
    args = cfg.profiles[0].plugin_args
    assert sorted(args) == [
        "DefaultPreemption",
        "DynamicResources",
        "InterPodAffinity",
        "NodeAffinity",
        "NodeResourcesBalancedAllocation",
        "NodeResourcesFit",
        "PodTopologySpread",
        "VolumeBinding",
    ]
    assert args["VolumeBinding"] == {"bindTimeoutSeconds": 600}  # no shape: StorageCapacityScoring is off
    assert args["NodeResourcesFit"] == {
        "ignoredResources": [],
        "ignoredResourceGroups": [],
        "scoringStrategy": {
            "type": "LeastAllocated",
            "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
        },
    }
    assert args["NodeResourcesBalancedAllocation"] == {
        "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
    }
    assert args["InterPodAffinity"] == {
        "hardPodAffinityWeight": 1,
        "ignorePreferredTermsOfExistingPods": False,
    }
    assert args["DefaultPreemption"] == {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}
    assert args["NodeAffinity"] == {}
    # upstream wire form: System keeps the list empty; the plugin applies the System constraints
    assert args["PodTopologySpread"] == {"defaultingType": "System", "defaultConstraints": []}
    assert effective_spread_constraints(args["PodTopologySpread"]) == [
        {"maxSkew": 3, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway"},
        {"maxSkew": 5, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway"},
    ]
    assert system_default_constraints() == effective_spread_constraints(args["PodTopologySpread"])
    listed = {"defaultingType": "List", "defaultConstraints": [{"maxSkew": 1}]}
    assert effective_spread_constraints(listed) == [{"maxSkew": 1}]


def test_default_args_helper_matches_profile(cfg) -> None:
    for name, args in cfg.profiles[0].plugin_args.items():
        assert default_args(name) == args


def test_args_are_independent_copies(cfg) -> None:
    a = default_config(fake_points_of)
    a.profiles[0].plugin_args["NodeResourcesFit"]["scoringStrategy"]["resources"].append({"name": "x"})
    b = default_config(fake_points_of)
    assert len(b.profiles[0].plugin_args["NodeResourcesFit"]["scoringStrategy"]["resources"]) == 2


def test_empty_profiles_list_gets_default_profile() -> None:
    cfg = parse(doc(profiles=[]))
    assert cfg.scheduler_names == ["default-scheduler"]
    assert score(cfg) == DEFAULT_SCORE


def test_null_sections_are_absent() -> None:
    cfg = parse(doc(profiles=[{"plugins": None, "pluginConfig": None}], extenders=None, leaderElection=None))
    assert score(cfg) == DEFAULT_SCORE


def test_default_config_source_label(cfg) -> None:
    assert cfg.source == "<defaults>"


def test_plugin_args_only_for_enabled_plugins() -> None:
    cfg = parse(doc(profiles=[{"plugins": {"multiPoint": {"disabled": [{"name": "PodTopologySpread"}]}}}]))
    assert "PodTopologySpread" not in cfg.profiles[0].plugin_args
    assert "PodTopologySpread" not in points(cfg, "filter")


def test_resolved_table_rows(cfg) -> None:
    rows = resolved_table(cfg)
    assert rows[0] == {
        "profile": "default-scheduler",
        "point": "preEnqueue",
        "order": 1,
        "plugin": "SchedulingGates",
        "weight": None,
    }
    score_rows = [(r["plugin"], r["weight"]) for r in rows if r["point"] == "score"]
    assert score_rows == DEFAULT_SCORE
    assert len(rows) == sum(len(v) for v in DEFAULT_POINTS.values())
    assert [r["order"] for r in rows if r["point"] == "filter"] == list(range(1, 14))


def test_effective_config_round_trips(cfg) -> None:
    again = parse_config(effective_config(cfg), "effective.yaml", fake_points_of)
    assert again.profiles == cfg.profiles
    assert again.leader_election == cfg.leader_election


def test_pluginref_defaults() -> None:
    assert PluginRef("X") == PluginRef("X", 0)


# ---- apis/config/v1/defaults_test.go ----------------------------------------------------------
# kubesched resolves a configuration instead of keeping the defaulted document: the comparison
# is of what SetDefaults_KubeSchedulerConfiguration fills in, as the resolved config holds it.
# Every in-tree plugin with args has them defaulted, as in upstream's pluginConfigs.
DEFAULT_PLUGIN_CONFIG = [
    ("DefaultPreemption", {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}),
    ("DynamicResources", {"filterTimeout": "10s", "bindingTimeout": "10m0s"}),
    ("InterPodAffinity", {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": False}),
    ("NodeAffinity", {}),
    ("NodeResourcesBalancedAllocation", {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}),
    (
        "NodeResourcesFit",
        {
            "ignoredResources": [],
            "ignoredResourceGroups": [],
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
            },
        },
    ),
    ("PodTopologySpread", {"defaultConstraints": [], "defaultingType": "System"}),
    ("VolumeBinding", {"bindTimeoutSeconds": 600}),
]
UPSTREAM_POINTS = {**EXTRA_POINTS, "FooPlugin": frozenset({"filter"}), "BarPlugin": frozenset({"bind"})}


def _defaults_points_of(name: str) -> frozenset[str] | None:
    return fake_points_of(name) or UPSTREAM_POINTS.get(name)


def _profile(scheduler: str = "default-scheduler", pct: int | None = None, config: list | None = None) -> dict:
    return {"schedulerName": scheduler, "percentageOfNodesToScore": pct, "pluginConfig": config or DEFAULT_PLUGIN_CONFIG}


SCHEDULER_DEFAULTS_CASES = [
    # name, document fields, (parallelism, percentage, delayCacheUntilActive), profiles
    ("empty config", {}, (16, 0, False), [_profile()]),
    ("no scheduler name", {"profiles": [{}]}, (16, 0, False), [_profile()]),
    (
        "two profiles",
        {
            "parallelism": 16,
            "profiles": [
                # upstream leaves this name unset (only a single profile gets the default name) and
                # validation then requires it: kubesched validates while it defaults, so it is given
                {"schedulerName": "default-scheduler", "pluginConfig": [{"name": "FooPlugin"}]},
                {
                    "schedulerName": "custom-scheduler",
                    "plugins": {"bind": {"enabled": [{"name": "BarPlugin"}], "disabled": [{"name": "DefaultBinder"}]}},
                },
            ],
        },
        (16, 0, False),
        [_profile(config=[("FooPlugin", {}), *DEFAULT_PLUGIN_CONFIG]), _profile("custom-scheduler")],
    ),
    ("Prallelism with no port", {"parallelism": 16}, (16, 0, False), [_profile()]),
    ("set non default parallelism", {"parallelism": 8}, (8, 0, False), [_profile()]),
    ("set non default delayCacheUntilActive", {"delayCacheUntilActive": True}, (16, 0, True), [_profile()]),
    ("set non default global percentageOfNodesToScore", {"percentageOfNodesToScore": 50}, (16, 50, False), [_profile()]),
    (
        "set non default profile percentageOfNodesToScore",
        {"profiles": [{"percentageOfNodesToScore": 50}]},
        (16, 0, False),
        [_profile(pct=50)],
    ),
    (
        "set non default global and profile percentageOfNodesToScore",
        {"percentageOfNodesToScore": 10, "profiles": [{"percentageOfNodesToScore": 50}]},
        (16, 10, False),
        [_profile(pct=50)],
    ),
]


@pytest.mark.parametrize(
    ("fields", "top", "profiles"), [c[1:] for c in SCHEDULER_DEFAULTS_CASES], ids=[c[0] for c in SCHEDULER_DEFAULTS_CASES]
)
def test_scheduler_defaults(fields: dict, top: tuple, profiles: list[dict]) -> None:
    """TestSchedulerDefaults (9 of 11: "unknown plugin config" defaults a runtime.Unknown that a
    file cannot express; "default DynamicResources" is about its args under a changed feature
    gate, which tests/plugins/test_dynamicresources_args.py covers)."""
    cfg = parse_config(doc(**fields), "sched.yaml", _defaults_points_of)
    assert (cfg.parallelism, cfg.percentage_of_nodes_to_score, cfg.delay_cache_until_active) == top
    assert (cfg.pod_initial_backoff_seconds, cfg.pod_max_backoff_seconds) == (1, 10)
    assert cfg.enable_profiling is True and cfg.enable_contention_profiling is True
    assert cfg.leader_election == DEFAULT_LEADER_ELECTION
    conn = cfg.client_connection
    assert (conn["qps"], conn["burst"], conn["contentType"]) == (50, 100, "application/vnd.kubernetes.protobuf")
    assert len(cfg.profiles) == len(profiles)
    for got, want in zip(cfg.profiles, profiles, strict=True):
        assert got.scheduler_name == want["schedulerName"]
        assert got.percentage_of_nodes_to_score == want["percentageOfNodesToScore"]
        assert list(got.plugin_args.items()) == want["pluginConfig"]
    assert score(cfg) == DEFAULT_SCORE
    if len(profiles) == 2:
        assert points(cfg, "bind", 1) == ["BarPlugin"] and points(cfg, "bind", 0) == ["DefaultBinder"]


RES = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
PLUGIN_ARGS_DEFAULTS_CASES = [
    # name, plugin, args in, defaulted args (kubesched's full wire form)
    ("DefaultPreemptionArgs empty", "DefaultPreemption", {},
     {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}),
    ("DefaultPreemptionArgs with value", "DefaultPreemption", {"minCandidateNodesPercentage": 50},
     {"minCandidateNodesPercentage": 50, "minCandidateNodesAbsolute": 100}),
    ("InterPodAffinityArgs empty", "InterPodAffinity", {},
     {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": False}),
    ("InterPodAffinityArgs explicit 0", "InterPodAffinity", {"hardPodAffinityWeight": 0},
     {"hardPodAffinityWeight": 0, "ignorePreferredTermsOfExistingPods": False}),
    ("InterPodAffinityArgs with value", "InterPodAffinity", {"hardPodAffinityWeight": 5},
     {"hardPodAffinityWeight": 5, "ignorePreferredTermsOfExistingPods": False}),
    ("NodeResourcesBalancedAllocationArgs resources empty", "NodeResourcesBalancedAllocation", {}, {"resources": RES}),
    ("NodeResourcesBalancedAllocationArgs with scalar resource", "NodeResourcesBalancedAllocation",
     {"resources": [{"name": "scalar.io/scalar1", "weight": 1}]},
     {"resources": [{"name": "scalar.io/scalar1", "weight": 1}]}),
    ("NodeResourcesBalancedAllocationArgs with mixed resources", "NodeResourcesBalancedAllocation",
     {"resources": [{"name": "cpu", "weight": 1}, {"name": "scalar.io/scalar1", "weight": 1}]},
     {"resources": [{"name": "cpu", "weight": 1}, {"name": "scalar.io/scalar1", "weight": 1}]}),
    ("NodeResourcesBalancedAllocationArgs have resource no weight", "NodeResourcesBalancedAllocation",
     {"resources": [{"name": "cpu"}, {"name": "scalar.io/scalar0"}, {"name": "scalar.io/scalar1", "weight": 1}]},
     {"resources": [{"name": "cpu", "weight": 1}, {"name": "scalar.io/scalar0", "weight": 1},
                    {"name": "scalar.io/scalar1", "weight": 1}]}),
    ("PodTopologySpreadArgs resources empty", "PodTopologySpread", {},
     {"defaultConstraints": [], "defaultingType": "System"}),
    ("NodeResourcesFitArgs not set", "NodeResourcesFit", {},
     {"ignoredResources": [], "ignoredResourceGroups": [], "scoringStrategy": {"type": "LeastAllocated", "resources": RES}}),
    ("NodeResourcesFitArgs Resources empty", "NodeResourcesFit", {"scoringStrategy": {"type": "MostAllocated"}},
     {"ignoredResources": [], "ignoredResourceGroups": [], "scoringStrategy": {"type": "MostAllocated", "resources": RES}}),
    ("VolumeBindingArgs empty, StorageCapacityScoring disabled", "VolumeBinding", {}, {"bindTimeoutSeconds": 600}),
    ("DynamicResourcesArgs empty", "DynamicResources", {}, {"filterTimeout": "10s", "bindingTimeout": "10m0s"}),
    ("DynamicResourcesArgs with value", "DynamicResources", {"filterTimeout": "5s"},
     {"filterTimeout": "5s", "bindingTimeout": "10m0s"}),
]


@pytest.mark.parametrize(
    ("plugin", "given", "want"), [c[1:] for c in PLUGIN_ARGS_DEFAULTS_CASES], ids=[c[0] for c in PLUGIN_ARGS_DEFAULTS_CASES]
)
def test_plugin_args_defaults(plugin: str, given: dict, want: dict) -> None:
    """TestPluginArgsDefaults (16 of 16 with the two tests below; "DynamicResourcesArgs empty" is
    upstream's "DynamicResourcesArgs defaults, DRADeviceBindingConditions enabled", and
    "DynamicResourcesArgs with value" is kubesched's own)."""
    cfg = parse(one_profile(plugin_config=[{"name": plugin, "args": given}]))
    assert cfg.profiles[0].plugin_args[plugin] == want


def test_plugin_args_defaults_volume_binding_with_storage_capacity_scoring() -> None:
    """"VolumeBindingArgs empty, StorageCapacityScoring enabled": the default shape favours the
    emptiest volumes (utilization 0 -> 10, 100 -> 0)."""
    with features.override("StorageCapacityScoring", True):
        cfg = parse(one_profile(plugin_config=[{"name": "VolumeBinding", "args": {}}]))
    assert cfg.profiles[0].plugin_args["VolumeBinding"] == {
        "bindTimeoutSeconds": 600,
        "shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}],
    }


def test_plugin_args_defaults_pod_topology_spread_with_value() -> None:
    """"PodTopologySpreadArgs resources with value": the defaulting type becomes System even
    with constraints given; kubesched validates while it defaults, so the defaulted args are the
    ones validation then refuses (System with constraints), as kube-scheduler would on load."""
    args = {"defaultConstraints": [{"topologyKey": "planet", "whenUnsatisfiable": "DoNotSchedule", "maxSkew": 2}]}
    with pytest.raises(InputError) as info:
        parse(one_profile(plugin_config=[{"name": "PodTopologySpread", "args": args}]))
    assert info.value.path == "profiles[0].pluginConfig[0].args.defaultingType"
    assert "System" in info.value.reason and "when .defaultConstraints are not empty" in info.value.reason
