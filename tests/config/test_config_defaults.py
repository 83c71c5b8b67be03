"""Defaults of an empty v1 config: the default profile, top-level fields and plugin args."""

from __future__ import annotations

import pytest
from config_testlib import doc, fake_points_of, parse, points, score

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

DEFAULT_POINTS = {
    "preEnqueue": ["SchedulingGates"],
    "queueSort": ["PrioritySort"],
    "preFilter": ["NodeAffinity", "NodePorts", "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity"],
    "filter": [
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "PodTopologySpread",
        "InterPodAffinity",
    ],
    "postFilter": ["DefaultPreemption"],
    "preScore": [
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "PodTopologySpread",
        "InterPodAffinity",
        "NodeResourcesBalancedAllocation",
    ],
    "score": [
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "PodTopologySpread",
        "InterPodAffinity",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
    ],
    "reserve": [],
    "permit": [],
    "preBind": [],
    "bind": ["DefaultBinder"],
    "postBind": [],
}
DEFAULT_SCORE = [
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodeResourcesFit", 1),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
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
    assert len(BUILTIN_POINTS) == 14
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
    assert cfg.leader_election == {
        "leaderElect": True,
        "leaseDuration": "15s",
        "renewDeadline": "10s",
        "retryPeriod": "2s",
        "resourceLock": "leases",
        "resourceName": "kube-scheduler",
        "resourceNamespace": "kube-system",
    }
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
        "InterPodAffinity",
        "NodeAffinity",
        "NodeResourcesBalancedAllocation",
        "NodeResourcesFit",
        "PodTopologySpread",
    ]
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
    assert [r["order"] for r in rows if r["point"] == "filter"] == list(range(1, 9))


def test_effective_config_round_trips(cfg) -> None:
    again = parse_config(effective_config(cfg), "effective.yaml", fake_points_of)
    assert again.profiles == cfg.profiles
    assert again.leader_election == cfg.leader_election


def test_pluginref_defaults() -> None:
    assert PluginRef("X") == PluginRef("X", 0)
