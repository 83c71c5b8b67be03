"""Older config versions load with their own defaults and weights and convert to v1 semantics."""

from __future__ import annotations

import textwrap

import pytest
from config_testlib import doc, fake_points_of, one_profile, parse, points, score

from kubesched.config import V1, V1BETA1, V1BETA2, V1BETA3, load_config
from kubesched.errors import InputError

V1_SCORE = [
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodeResourcesFit", 1),
    ("VolumeBinding", 1),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", 1),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
]
# v1beta1 defaults with NodeResourcesLeastAllocated -> NodeResourcesFit and NodePreferAvoidPods dropped.
V1BETA1_SCORE = [
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("InterPodAffinity", 1),
    ("NodeResourcesFit", 1),
    ("NodeAffinity", 1),
    ("PodTopologySpread", 2),
    ("TaintToleration", 1),
]
V1BETA2_SCORE = V1BETA1_SCORE
# EBSLimits, GCEPDLimits and AzureDiskLimits (removed in 1.32) are dropped from the old lists
OLD_FILTER = [
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
]
OLD_PRESCORE = [
    "InterPodAffinity",
    "PodTopologySpread",
    "TaintToleration",
    "NodeAffinity",
    "NodeResourcesBalancedAllocation",  # added: kubesched's plugins have a PreScore hook
    "NodeResourcesFit",
]
AVOID_WARNING = (
    "profiles[0].plugins.score: v1beta1 default score plugin NodePreferAvoidPods (weight 10000) dropped: "
    "removed in v1beta2; use node taints instead"
)

BRIEF_V1BETA1 = """\
apiVersion: kubescheduler.config.k8s.io/v1beta1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    plugins:
      score:
        enabled:
          - name: NodeResourcesFit
          - name: NodeAffinity
"""


def test_brief_v1beta1_config_loads(tmp_path) -> None:
    path = tmp_path / "seed.yaml"
    path.write_text(BRIEF_V1BETA1)
    cfg = load_config(str(path), fake_points_of)
    assert cfg.api_version_loaded == V1BETA1
    # NodeResourcesFit takes the converted NodeResourcesLeastAllocated slot (no duplicate), NodeAffinity is
    # replaced in place; the rest keep v1beta1's default weights.
    assert score(cfg) == V1BETA1_SCORE
    assert points(cfg, "score").count("NodeResourcesFit") == 1
    assert cfg.profiles[0].plugin_args["NodeResourcesFit"]["scoringStrategy"]["type"] == "LeastAllocated"
    assert cfg.warnings == [
        'profiles[0].plugins.score.enabled[1]: plugin "NodeAffinity" is already enabled by default here; '
        "kube-scheduler v1beta1 rejected the duplicate, kubesched replaces the default in place (weight 1)",
        "profiles[0].plugins.score.enabled[0]: NodeResourcesFit was not a score plugin in v1beta1; enabled at "
        "score with its v1 meaning (scoringStrategy LeastAllocated)",
        "profiles[0].plugins.score.enabled[0]: merged NodeResourcesLeastAllocated (default), NodeResourcesFit "
        "(profiles[0].plugins.score.enabled[0]) into one NodeResourcesFit score entry with weight 1",
        AVOID_WARNING,
    ]


def test_brief_config_with_weights() -> None:
    cfg = parse(
        one_profile(
            V1BETA1,
            schedulerName="default-scheduler",
            plugins={
                "score": {
                    "enabled": [
                        {"name": "NodeResourcesFit", "weight": 4},
                        {"name": "NodeAffinity", "weight": 6},
                    ]
                }
            },
        )
    )
    expected = [(n, {"NodeResourcesFit": 4, "NodeAffinity": 6}.get(n, w)) for n, w in V1BETA1_SCORE]
    assert score(cfg) == expected


def test_v1beta1_defaults() -> None:
    cfg = parse(doc(V1BETA1))
    assert score(cfg) == V1BETA1_SCORE
    assert points(cfg, "filter") == OLD_FILTER
    assert points(cfg, "preFilter") == [
        "NodeResourcesFit",
        "NodePorts",
        "PodTopologySpread",
        "InterPodAffinity",
        "VolumeBinding",
        "NodeAffinity",
        # added: kubesched's plugins have a PreFilter hook v1beta1's lacked
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeZone",
    ]
    assert points(cfg, "preScore") == OLD_PRESCORE
    assert points(cfg, "queueSort") == ["PrioritySort"]
    assert points(cfg, "postFilter") == ["DefaultPreemption"]
    assert points(cfg, "bind") == ["DefaultBinder"]
    assert points(cfg, "preEnqueue") == ["SchedulingGates"]
    assert points(cfg, "reserve") == points(cfg, "preBind") == ["VolumeBinding"]
    assert cfg.warnings == [AVOID_WARNING]
    assert cfg.profiles[0].plugin_args["PodTopologySpread"]["defaultingType"] == "System"


def test_v1beta2_defaults() -> None:
    cfg = parse(doc(V1BETA2))
    assert cfg.api_version_loaded == V1BETA2
    assert score(cfg) == V1BETA2_SCORE
    assert points(cfg, "filter") == OLD_FILTER
    assert points(cfg, "preScore") == OLD_PRESCORE
    assert points(cfg, "preFilter") == [
        "NodeResourcesFit",
        "NodePorts",
        "VolumeRestrictions",
        "PodTopologySpread",
        "InterPodAffinity",
        "VolumeBinding",
        "VolumeZone",
        "NodeAffinity",
        "NodeVolumeLimits",  # added: kubesched's NodeVolumeLimits has a PreFilter hook v1beta2's lacked
    ]
    assert cfg.warnings == []


def test_v1beta3_defaults_equal_v1() -> None:
    b3 = parse(doc(V1BETA3))
    v1 = parse(doc(V1))
    assert score(b3) == V1_SCORE
    assert b3.profiles == v1.profiles
    assert b3.api_version_loaded == V1BETA3


def test_v1beta1_most_allocated_converts_to_fit_strategy() -> None:
    cfg = parse(
        one_profile(
            V1BETA1,
            plugins={
                "score": {
                    "disabled": [{"name": "NodeResourcesLeastAllocated"}],
                    "enabled": [{"name": "NodeResourcesMostAllocated", "weight": 5}],
                }
            },
            plugin_config=[
                {
                    "name": "NodeResourcesMostAllocated",
                    "args": {"resources": [{"name": "cpu", "weight": 2}, {"name": "memory"}]},
                },
                {"name": "NodeResourcesFit", "args": {"ignoredResources": ["example.com/y"]}},
            ],
        )
    )
    assert score(cfg)[-1] == ("NodeResourcesFit", 5)
    assert points(cfg, "score").count("NodeResourcesFit") == 1
    assert cfg.profiles[0].plugin_args["NodeResourcesFit"] == {
        "ignoredResources": ["example.com/y"],
        "ignoredResourceGroups": [],
        "scoringStrategy": {
            "type": "MostAllocated",
            "resources": [{"name": "cpu", "weight": 2}, {"name": "memory", "weight": 1}],
        },
    }


def test_v1beta1_explicit_scorer_replaces_default_least_allocated() -> None:
    cfg = parse(
        one_profile(
            V1BETA1,
            plugins={"score": {"enabled": [{"name": "RequestedToCapacityRatio", "weight": 3}]}},
            plugin_config=[
                {
                    "name": "RequestedToCapacityRatio",
                    "args": {
                        "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}],
                        "resources": [{"name": "cpu", "weight": 1}],
                    },
                }
            ],
        )
    )
    # takes the default's position with the explicit weight
    assert score(cfg)[3] == ("NodeResourcesFit", 3)
    strategy = cfg.profiles[0].plugin_args["NodeResourcesFit"]["scoringStrategy"]
    assert strategy == {
        "type": "RequestedToCapacityRatio",
        "resources": [{"name": "cpu", "weight": 1}],
        "requestedToCapacityRatio": {
            "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
        },
    }
    assert any(
        "default NodeResourcesLeastAllocated scoring replaced by RequestedToCapacityRatio" in w
        for w in cfg.warnings
    )


def test_v1beta1_least_allocated_args_carry_over() -> None:
    cfg = parse(
        one_profile(
            V1BETA1,
            plugin_config=[
                {
                    "name": "NodeResourcesLeastAllocated",
                    "args": {"resources": [{"name": "memory", "weight": 3}]},
                }
            ],
        )
    )
    assert cfg.profiles[0].plugin_args["NodeResourcesFit"]["scoringStrategy"] == {
        "type": "LeastAllocated",
        "resources": [{"name": "memory", "weight": 3}],
    }


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (
            one_profile(
                V1BETA1,
                plugins={
                    "score": {
                        "enabled": [
                            {"name": "NodeResourcesMostAllocated"},
                            {"name": "RequestedToCapacityRatio"},
                        ]
                    }
                },
            ),
            'profiles[0].plugins.score.enabled[1].name: cannot convert to v1: "RequestedToCapacityRatio" and '
            '"NodeResourcesMostAllocated" would both set NodeResourcesFit scoringStrategy (v1 has one strategy); '
            "enable only one of them",
        ),
        (
            one_profile(V1BETA1, plugins={"score": {"enabled": [{"name": "RequestedToCapacityRatio"}]}}),
            'profiles[0].plugins.score.enabled[0].name: plugin "RequestedToCapacityRatio" needs pluginConfig args '
            "with a shape",
        ),
        (
            one_profile(V1BETA1, plugins={"filter": {"enabled": [{"name": "NodeResourcesLeastAllocated"}]}}),
            'profiles[0].plugins.filter.enabled[0].name: plugin "NodeResourcesLeastAllocated" does not implement the '
            "filter extension point",
        ),
        (
            one_profile(
                V1BETA1,
                plugin_config=[
                    {
                        "name": "NodeResourcesLeastAllocated",
                        "args": {"resources": [{"name": "cpu", "weight": 200}]},
                    }
                ],
            ),
            "profiles[0].pluginConfig[0].args.resources[0].weight: Invalid value: 200: resource weight of cpu not in "
            "valid range (0, 100]",
        ),
        (
            one_profile(
                V1BETA1,
                plugins={"score": {"enabled": [{"name": "RequestedToCapacityRatio"}]}},
                plugin_config=[
                    {
                        "name": "RequestedToCapacityRatio",
                        "args": {"shape": [{"utilization": 10, "score": 20}]},
                    }
                ],
            ),
            "profiles[0].pluginConfig[0].args.shape[0].score: Invalid value: 20: not in valid range [0, 10]",
        ),
        (
            one_profile(
                V1BETA1,
                plugins={"filter": {"enabled": [{"name": "NodeLabel"}]}},
                plugin_config=[
                    {"name": "NodeLabel", "args": {"presentLabels": ["a"], "absentLabels": ["a"]}}
                ],
            ),
            'profiles[0].pluginConfig[0].args.absentLabels: detecting at least one label (e.g., "a") that exist in '
            "both the presentLabels and absentLabels lists",
        ),
        (
            one_profile(V1BETA2, plugins={"score": {"enabled": [{"name": "NodeResourcesLeastAllocated"}]}}),
            'profiles[0].plugins.score.enabled[0].name: plugin "NodeResourcesLeastAllocated" was removed in version '
            '"kubescheduler.config.k8s.io/v1beta2" (KubeSchedulerConfiguration is version '
            '"kubescheduler.config.k8s.io/v1beta2"); use NodeResourcesFit args scoringStrategy.type LeastAllocated',
        ),
        (
            one_profile(
                V1BETA2,
                plugin_config=[
                    {
                        "name": "PodTopologySpread",
                        "args": {
                            "defaultConstraints": [
                                {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}
                            ]
                        },
                    }
                ],
            ),
            "profiles[0].pluginConfig[0].args.defaultingType: Invalid value: \"System\": when .defaultConstraints are not empty",
        ),
        (
            one_profile(V1BETA2, plugins={"multiPoint": {}}),
            'profiles[0].plugins.multiPoint: unknown field "multiPoint"',
        ),
        (
            one_profile(V1BETA1, plugins={"preEnqueue": {}}),
            'profiles[0].plugins.preEnqueue: unknown field "preEnqueue"',
        ),
        (
            one_profile(
                V1BETA2,
                plugin_config=[
                    {"name": "InterPodAffinity", "args": {"ignorePreferredTermsOfExistingPods": True}}
                ],
            ),
            "profiles[0].pluginConfig[0].args.ignorePreferredTermsOfExistingPods: unknown field "
            '"ignorePreferredTermsOfExistingPods"',
        ),
        (doc(V1BETA3, metricsBindAddress=":10251"), 'metricsBindAddress: unknown field "metricsBindAddress"'),
        (
            doc(V1BETA3, delayCacheUntilActive=True),
            'delayCacheUntilActive: unknown field "delayCacheUntilActive"',
        ),
    ],
)
def test_version_errors(document, message: str) -> None:
    with pytest.raises(InputError) as info:
        parse(document, "old.yaml")
    assert str(info.value) == f"old.yaml: {message}"


def test_v1beta1_pod_topology_spread_list_defaulting_when_constraints_given() -> None:
    constraint = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}
    cfg = parse(
        one_profile(
            V1BETA1,
            plugin_config=[{"name": "PodTopologySpread", "args": {"defaultConstraints": [constraint]}}],
        )
    )
    assert cfg.profiles[0].plugin_args["PodTopologySpread"] == {
        "defaultingType": "List",
        "defaultConstraints": [constraint],
    }


def test_v1beta1_node_label_converts_to_node_affinity() -> None:
    req = "requiredDuringSchedulingIgnoredDuringExecution"
    cfg = parse(
        one_profile(
            V1BETA1,
            plugins={
                "filter": {"enabled": [{"name": "NodeLabel"}]},
                "score": {"enabled": [{"name": "NodeLabel", "weight": 4}]},
            },
            plugin_config=[
                {
                    "name": "NodeLabel",
                    "args": {"presentLabels": ["a"], "absentLabels": ["b"], "presentLabelsPreference": ["c"]},
                },
                {
                    "name": "NodeAffinity",
                    "args": {
                        "addedAffinity": {
                            req: {
                                "nodeSelectorTerms": [
                                    {"matchExpressions": [{"key": "z", "operator": "In", "values": ["1"]}]}
                                ]
                            }
                        }
                    },
                },
            ],
        )
    )
    assert "NodeLabel" not in points(cfg, "filter")
    assert score(cfg) == V1BETA1_SCORE  # NodeAffinity already there: NodeLabel's weight is dropped
    added = cfg.profiles[0].plugin_args["NodeAffinity"]["addedAffinity"]
    assert added[req]["nodeSelectorTerms"] == [
        {
            "matchExpressions": [
                {"key": "z", "operator": "In", "values": ["1"]},
                {"key": "a", "operator": "Exists"},
                {"key": "b", "operator": "DoesNotExist"},
            ]
        }
    ]
    assert added["preferredDuringSchedulingIgnoredDuringExecution"] == [
        {"weight": 1, "preference": {"matchExpressions": [{"key": "c", "operator": "Exists"}]}}
    ]
    assert any("its weight 4 is dropped" in w for w in cfg.warnings)
    assert any("NodeLabel args converted" in w for w in cfg.warnings)


def test_v1beta1_node_label_takes_node_affinity_slot_when_absent() -> None:
    cfg = parse(
        one_profile(
            V1BETA1,
            plugins={
                "score": {
                    "disabled": [{"name": "NodeAffinity"}],
                    "enabled": [{"name": "NodeLabel", "weight": 4}],
                }
            },
            plugin_config=[{"name": "NodeLabel", "args": {"absentLabelsPreference": ["spot"]}}],
        )
    )
    assert score(cfg)[-1] == ("NodeAffinity", 4)
    assert cfg.profiles[0].plugin_args["NodeAffinity"] == {
        "addedAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 1,
                    "preference": {"matchExpressions": [{"key": "spot", "operator": "DoesNotExist"}]},
                }
            ]
        }
    }


def test_v1beta1_removed_plugins_dropped_with_warnings() -> None:
    cfg = parse(
        one_profile(
            V1BETA1,
            plugins={"score": {"enabled": [{"name": "ServiceAffinity"}, {"name": "SelectorSpread"}]}},
            plugin_config=[{"name": "ServiceAffinity", "args": {"affinityLabels": ["a"]}}],
        )
    )
    assert score(cfg) == V1BETA1_SCORE
    assert (
        'profiles[0].plugins.score.enabled[0]: plugin "ServiceAffinity" dropped: removed in v1beta2; use pod affinity/anti-affinity instead'
        in cfg.warnings
    )
    assert any(
        w.startswith('profiles[0].plugins.score.enabled[1]: plugin "SelectorSpread" dropped')
        for w in cfg.warnings
    )
    assert any(
        w.startswith("profiles[0].pluginConfig[0]: args of ServiceAffinity dropped") for w in cfg.warnings
    )
    assert "ServiceAffinity" not in cfg.profiles[0].plugin_args


def test_v1beta1_disable_node_prefer_avoid_pods_is_silent() -> None:
    cfg = parse(one_profile(V1BETA1, plugins={"score": {"disabled": [{"name": "NodePreferAvoidPods"}]}}))
    assert cfg.warnings == []
    assert score(cfg) == V1BETA1_SCORE


def test_v1beta1_disable_then_enable_is_not_warned() -> None:
    cfg = parse(
        one_profile(
            V1BETA1,
            plugins={
                "score": {
                    "disabled": [{"name": "TaintToleration"}],
                    "enabled": [{"name": "TaintToleration", "weight": 3}],
                }
            },
        )
    )
    assert score(cfg)[-1] == ("TaintToleration", 3)
    assert cfg.warnings == [AVOID_WARNING]


def test_v1beta2_in_place_override_without_warning() -> None:
    cfg = parse(one_profile(V1BETA2, plugins={"score": {"enabled": [{"name": "NodeAffinity", "weight": 5}]}}))
    assert score(cfg)[4] == ("NodeAffinity", 5)
    assert cfg.warnings == []


def test_v1beta2_star_disable_and_custom() -> None:
    cfg = parse(
        one_profile(
            V1BETA2,
            plugins={"score": {"disabled": [{"name": "*"}], "enabled": [{"name": "Custom", "weight": 2}]}},
        )
    )
    assert score(cfg) == [("Custom", 2)]
    # preScore keeps its defaults (only score was replaced)
    assert points(cfg, "preScore")[:4] == OLD_PRESCORE[:4]


def test_prescore_not_added_when_disabled_there() -> None:
    cfg = parse(one_profile(V1BETA2, plugins={"preScore": {"disabled": [{"name": "NodeResourcesFit"}]}}))
    assert "NodeResourcesFit" not in points(cfg, "preScore")
    cfg = parse(one_profile(V1BETA2, plugins={"preScore": {"disabled": [{"name": "*"}]}}))
    assert points(cfg, "preScore") == []


def test_removed_bind_addresses_warned() -> None:
    cfg = parse(doc(V1BETA1, healthzBindAddress="0.0.0.0:10251", metricsBindAddress="0.0.0.0:10251"))
    assert cfg.warnings[:2] == [
        "healthzBindAddress: ignored (removed in v1beta3; kubesched serves health and metrics on its own port)",
        "metricsBindAddress: ignored (removed in v1beta3; kubesched serves health and metrics on its own port)",
    ]


def test_v1beta3_multipoint_and_selector_spread() -> None:
    cfg = parse(
        one_profile(
            V1BETA3,
            plugins={
                "multiPoint": {
                    "enabled": [{"name": "SelectorSpread"}, {"name": "ImageLocality", "weight": 4}]
                }
            },
        )
    )
    assert dict(score(cfg))["ImageLocality"] == 4
    assert any("SelectorSpread" in w for w in cfg.warnings)


def test_extenders_unchanged_across_versions() -> None:
    ext = {"urlPrefix": "http://e", "filterVerb": "filter"}
    assert parse(doc(V1BETA1, extenders=[ext])).extenders == parse(doc(V1, extenders=[ext])).extenders


def test_yaml_text_of_v1beta2_file(tmp_path) -> None:
    path = tmp_path / "b2.yaml"
    path.write_text(
        textwrap.dedent(
            """\
            apiVersion: kubescheduler.config.k8s.io/v1beta2
            kind: KubeSchedulerConfiguration
            healthzBindAddress: 0.0.0.0:10251
            profiles:
            - schedulerName: bin-packing
              pluginConfig:
              - name: NodeResourcesFit
                args:
                  scoringStrategy:
                    type: MostAllocated
            """
        )
    )
    cfg = load_config(str(path), fake_points_of)
    assert (
        cfg.profile("bin-packing").plugin_args["NodeResourcesFit"]["scoringStrategy"]["type"]
        == "MostAllocated"
    )
    assert len(cfg.warnings) == 1
