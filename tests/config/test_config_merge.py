"""kube-scheduler's plugin merge rules: disabled, '*', in-place override, append, multiPoint precedence."""

from __future__ import annotations

import pytest
from config_testlib import doc, one_profile, parse, points, score
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.config import V1BETA3
from kubesched.errors import InputError

DEFAULT_SCORE = [
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


def en(*names: str | tuple[str, int]) -> list[dict]:
    out = []
    for n in names:
        out.append({"name": n[0], "weight": n[1]} if isinstance(n, tuple) else {"name": n})
    return out


def test_disable_one_plugin_at_one_point() -> None:
    cfg = parse(one_profile(plugins={"score": {"disabled": en("ImageLocality")}}))
    assert score(cfg) == DEFAULT_SCORE[:-1]
    assert "ImageLocality" not in cfg.profiles[0].plugin_args  # no args kind anyway
    # still a filter etc. elsewhere for multi-point plugins disabled only at score
    cfg = parse(one_profile(plugins={"score": {"disabled": en("NodeAffinity")}}))
    assert "NodeAffinity" in points(cfg, "filter")
    assert "NodeAffinity" in points(cfg, "preScore")
    assert "NodeAffinity" not in points(cfg, "score")


def test_disable_star_at_one_point() -> None:
    cfg = parse(one_profile(plugins={"preScore": {"disabled": en("*")}, "score": {"disabled": en("*")}}))
    assert points(cfg, "score") == [] and points(cfg, "preScore") == []
    assert len(points(cfg, "filter")) == 13


def test_star_plus_enabled_at_point_keeps_only_enabled() -> None:
    cfg = parse(
        one_profile(plugins={"score": {"disabled": en("*"), "enabled": en(("ImageLocality", 5), "Custom")}})
    )
    assert score(cfg) == [("ImageLocality", 5), ("Custom", 1)]


def test_multipoint_reenable_default_replaces_in_place() -> None:
    cfg = parse(one_profile(plugins={"multiPoint": {"enabled": en(("NodeResourcesFit", 7))}}))
    expected = [(n, 7 if n == "NodeResourcesFit" else w) for n, w in DEFAULT_SCORE]
    assert score(cfg) == expected
    assert points(cfg, "filter").count("NodeResourcesFit") == 1


def test_multipoint_custom_plugin_appended_at_each_point_it_implements() -> None:
    cfg = parse(one_profile(plugins={"multiPoint": {"enabled": en(("Custom", 4))}}))
    assert points(cfg, "filter")[-1] == "Custom"
    assert score(cfg)[-1] == ("Custom", 4)
    assert "Custom" not in points(cfg, "preFilter")


def test_point_reenable_overrides_multipoint_and_goes_first() -> None:
    # expandMultiPointPlugins: explicitly configured defaults ("overrides") run first at that point.
    cfg = parse(one_profile(plugins={"score": {"enabled": en(("NodeResourcesFit", 5))}}))
    assert score(cfg) == [("NodeResourcesFit", 5)] + [
        sw for sw in DEFAULT_SCORE if sw[0] != "NodeResourcesFit"
    ]
    # other points untouched
    assert points(cfg, "filter") == [
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
    ]


def test_point_weight_wins_over_multipoint_weight_and_unset_means_one() -> None:
    cfg = parse(one_profile(plugins={"score": {"enabled": en("TaintToleration")}}))
    assert dict(score(cfg))["TaintToleration"] == 1  # not multiPoint's 3
    cfg = parse(
        one_profile(
            plugins={
                "multiPoint": {"enabled": en(("TaintToleration", 9))},
                "score": {"enabled": en(("TaintToleration", 4))},
            }
        )
    )
    assert dict(score(cfg))["TaintToleration"] == 4


def test_weight_zero_means_one() -> None:
    cfg = parse(one_profile(plugins={"multiPoint": {"enabled": en(("ImageLocality", 0))}}))
    assert dict(score(cfg))["ImageLocality"] == 1


def test_custom_point_plugin_appended_after_multipoint_ones() -> None:
    cfg = parse(
        one_profile(plugins={"filter": {"enabled": en("Custom")}, "score": {"enabled": en(("Custom", 2))}})
    )
    assert points(cfg, "filter")[-1] == "Custom"
    assert score(cfg) == [*DEFAULT_SCORE, ("Custom", 2)]


def test_disable_then_enable_at_point_moves_to_end() -> None:
    cfg = parse(
        one_profile(
            plugins={"score": {"disabled": en("TaintToleration"), "enabled": en(("TaintToleration", 6))}}
        )
    )
    assert score(cfg) == [*DEFAULT_SCORE[1:], ("TaintToleration", 6)]


def test_multipoint_star_disabled_drops_all_defaults() -> None:
    cfg = parse(
        one_profile(
            plugins={
                "multiPoint": {
                    "disabled": en("*"),
                    "enabled": en("PrioritySort", "DefaultBinder", ("Custom", 3)),
                },
            }
        )
    )
    assert points(cfg, "queueSort") == ["PrioritySort"]
    assert points(cfg, "filter") == ["Custom"]
    assert score(cfg) == [("Custom", 3)]
    assert points(cfg, "preEnqueue") == []
    assert cfg.profiles[0].plugin_args == {}


def test_multipoint_enabled_wins_over_multipoint_disabled() -> None:
    cfg = parse(
        one_profile(
            plugins={"multiPoint": {"disabled": en("NodeAffinity"), "enabled": en(("NodeAffinity", 8))}}
        )
    )
    # default dropped, re-added as a custom multiPoint plugin: after the defaults
    assert score(cfg)[-1] == ("NodeAffinity", 8)
    assert points(cfg, "filter")[-1] == "NodeAffinity"


def test_point_disabled_beats_multipoint_enabled() -> None:
    cfg = parse(
        one_profile(plugins={"multiPoint": {"enabled": en("Custom")}, "filter": {"disabled": en("Custom")}})
    )
    assert "Custom" not in points(cfg, "filter")
    assert ("Custom", 1) in score(cfg)


def test_specific_point_beats_explicit_multipoint_beats_default() -> None:
    cfg = parse(
        one_profile(
            plugins={
                "multiPoint": {"enabled": en(("InterPodAffinity", 5))},
                "score": {"enabled": en(("InterPodAffinity", 9))},
            }
        )
    )
    assert dict(score(cfg))["InterPodAffinity"] == 9
    cfg = parse(one_profile(plugins={"multiPoint": {"enabled": en(("InterPodAffinity", 5))}}))
    assert dict(score(cfg))["InterPodAffinity"] == 5


def test_replace_queue_sort_and_binder() -> None:
    cfg = parse(
        one_profile(
            plugins={
                "queueSort": {"disabled": en("*"), "enabled": en("CustomSort")},
                "bind": {"disabled": en("DefaultBinder"), "enabled": en("CustomBinder")},
            }
        )
    )
    assert points(cfg, "queueSort") == ["CustomSort"]
    assert points(cfg, "bind") == ["CustomBinder"]


def test_out_of_tree_plugin_at_its_other_points() -> None:
    cfg = parse(one_profile(plugins={"multiPoint": {"enabled": en("Gate")}}))
    assert points(cfg, "preEnqueue") == ["SchedulingGates", "DynamicResources", "Gate"]
    assert points(cfg, "reserve") == ["VolumeBinding", "DynamicResources", "Gate"]
    assert points(cfg, "permit") == ["Gate"]


def test_multiple_profiles_resolve_independently() -> None:
    cfg = parse(
        doc(
            profiles=[
                {"schedulerName": "default-scheduler"},
                {
                    "schedulerName": "no-scoring",
                    "plugins": {"preScore": {"disabled": en("*")}, "score": {"disabled": en("*")}},
                    "percentageOfNodesToScore": 30,
                },
                {
                    "schedulerName": "bin-packing",
                    "pluginConfig": [
                        {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}
                    ],
                },
            ]
        )
    )
    assert cfg.scheduler_names == ["default-scheduler", "no-scoring", "bin-packing"]
    assert score(cfg, 0) == DEFAULT_SCORE
    assert score(cfg, 1) == []
    assert cfg.profile("no-scoring").percentage_of_nodes_to_score == 30
    assert (
        cfg.profile("bin-packing").plugin_args["NodeResourcesFit"]["scoringStrategy"]["type"]
        == "MostAllocated"
    )
    assert cfg.profile("default-scheduler").plugin_args["NodeResourcesFit"]["scoringStrategy"]["type"] == (
        "LeastAllocated"
    )


def test_pluginconfig_for_plugin_not_enabled_is_kept() -> None:
    cfg = parse(
        one_profile(
            plugins={"multiPoint": {"disabled": en("InterPodAffinity")}},
            plugin_config=[{"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 5}}],
        )
    )
    assert "InterPodAffinity" not in points(cfg, "filter")
    assert cfg.profiles[0].plugin_args["InterPodAffinity"]["hardPodAffinityWeight"] == 5


def test_out_of_tree_args_passed_raw() -> None:
    raw = {"apiVersion": "example.com/v1", "kind": "CustomArgs", "threshold": 0.5, "nested": {"a": [1]}}
    cfg = parse(
        one_profile(
            plugins={"filter": {"enabled": en("Custom")}}, plugin_config=[{"name": "Custom", "args": raw}]
        )
    )
    assert cfg.profiles[0].plugin_args["Custom"] == raw
    assert cfg.profiles[0].plugin_args["Custom"] is not raw


def test_unsupported_plugin_enabled_is_dropped_with_warning() -> None:
    cfg = parse(one_profile(plugins={"multiPoint": {"enabled": en("NodeDeclaredFeatures")}}))
    assert "NodeDeclaredFeatures" not in points(cfg, "filter")
    assert any(
        w.startswith('profiles[0].plugins.multiPoint.enabled[0]: plugin "NodeDeclaredFeatures" dropped')
        for w in cfg.warnings
    )
    old = parse(one_profile(V1BETA3, plugins={"filter": {"enabled": en("EBSLimits")}}))
    assert any("EBSLimits" in w and "1.32" in w for w in old.warnings)


def test_plugins_invalid_in_v1_are_refused() -> None:
    """validation.go invalidPluginsByVersion: enabling or configuring them is an error in v1."""
    with pytest.raises(InputError) as info:
        parse(one_profile(plugins={"filter": {"enabled": en("EBSLimits")}}, plugin_config=[{"name": "GCEPDLimits"}]))
    assert info.value.reason == (  # plugin sets first, then pluginConfig, as validatePluginConfig
        '[profiles[0].plugins.filter.enabled[0]: Invalid value: "EBSLimits": was invalid in version '
        '"kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1"), '
        'profiles[0].pluginConfig[0]: Invalid value: "GCEPDLimits": was invalid in version '
        '"kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")]'
    )


def test_unsupported_plugin_disabled_is_silent() -> None:
    cfg = parse(
        one_profile(
            plugins={"multiPoint": {"disabled": en("VolumeBinding", "NodeVolumeLimits", "DynamicResources")}}
        )
    )
    assert cfg.warnings == []
    assert score(cfg) == [sw for sw in DEFAULT_SCORE if sw[0] not in ("VolumeBinding", "DynamicResources")]
    assert "NodeVolumeLimits" not in points(cfg, "filter") and "VolumeZone" in points(cfg, "filter")


def test_unknown_disabled_plugin_warns() -> None:
    cfg = parse(one_profile(plugins={"score": {"disabled": en("ImageLocalty")}}))
    assert cfg.warnings == [
        'profiles[0].plugins.score.disabled[0]: disabled plugin "ImageLocalty" is not a known plugin; ignored'
    ]


def test_placement_points_accepted_and_ignored() -> None:
    cfg = parse(one_profile(plugins={"placementScore": {"enabled": en("Whatever")}}))
    assert score(cfg) == DEFAULT_SCORE
    assert "placement extension points" in cfg.warnings[0]


@settings(max_examples=60, deadline=None)
@given(
    disabled=st.sets(st.sampled_from([n for n, _ in DEFAULT_SCORE])),
    weights=st.dictionaries(st.sampled_from([n for n, _ in DEFAULT_SCORE]), st.integers(0, 1000)),
)
def test_property_disable_and_reweight_in_multipoint(disabled: set[str], weights: dict[str, int]) -> None:
    plugins = {
        "score": {"disabled": en(*sorted(disabled))},
        "multiPoint": {"enabled": en(*[(n, w) for n, w in weights.items()])},
    }
    cfg = parse(one_profile(plugins=plugins))
    expected = [(n, (weights[n] or 1) if n in weights else w) for n, w in DEFAULT_SCORE if n not in disabled]
    assert score(cfg) == expected
    # disabling at score never touches filter
    assert len(points(cfg, "filter")) == 13
