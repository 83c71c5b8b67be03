"""Every validation rule gives one line naming the file and the field path."""

from __future__ import annotations

import pytest
from config_testlib import doc, one_profile, parse

from kubesched.config import KIND, V1, V1BETA1
from kubesched.errors import InputError

RTCR = "RequestedToCapacityRatio"
REQ = "requiredDuringSchedulingIgnoredDuringExecution"
PREF = "preferredDuringSchedulingIgnoredDuringExecution"


def args_of(name: str, args: dict) -> dict:
    """A profile whose second pluginConfig item carries ``args`` for ``name``."""
    other = "ImageLocality" if name != "ImageLocality" else "NodeName"
    return one_profile(plugin_config=[{"name": other}, {"name": name, "args": args}])


def shape(*points: tuple[int, int]) -> dict:
    return {
        "scoringStrategy": {
            "type": RTCR,
            "requestedToCapacityRatio": {"shape": [{"utilization": u, "score": s} for u, s in points]},
        }
    }


def terms(*exprs: dict) -> dict:
    return {"addedAffinity": {REQ: {"nodeSelectorTerms": [{"matchExpressions": list(exprs)}]}}}


def spread(*constraints: dict, defaulting: str | None = "List") -> dict:
    out: dict = {"defaultConstraints": list(constraints)}
    if defaulting:
        out["defaultingType"] = defaulting
    return out


def c(**kw) -> dict:
    base = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
    base.update(kw)
    return {k: v for k, v in base.items() if v is not None}


A = "profiles[0].pluginConfig[1].args"
CASES = [
    # --- NodeResourcesFit ---
    (
        args_of("NodeResourcesFit", {"scoringStrategy": {"type": "Fastest"}}),
        f'{A}.scoringStrategy.type: Unsupported value: "Fastest": supported values: "LeastAllocated", '
        '"MostAllocated", "RequestedToCapacityRatio"',
    ),
    (
        args_of("NodeResourcesFit", {"scoringStrategy": {"resources": []}}),
        f'{A}.scoringStrategy.type: Unsupported value: "": supported values: "LeastAllocated", "MostAllocated", '
        '"RequestedToCapacityRatio"',
    ),
    (
        args_of(
            "NodeResourcesFit",
            {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 101}]}},
        ),
        f"{A}.scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of cpu not in valid range (0, 100]",
    ),
    (
        args_of("NodeResourcesFit", {"scoringStrategy": {"type": RTCR}}),
        f"{A}.scoringStrategy.requestedToCapacityRatio: Required value: must be specified when type is RequestedToCapacityRatio",
    ),
    (
        args_of(
            "NodeResourcesFit",
            {"scoringStrategy": {"type": "LeastAllocated", "requestedToCapacityRatio": {"shape": []}}},
        ),
        f"{A}.scoringStrategy.requestedToCapacityRatio: Forbidden: must be nil when type is not RequestedToCapacityRatio",
    ),
    (
        args_of("NodeResourcesFit", shape()),
        f"{A}.scoringStrategy.requestedToCapacityRatio.shape: Required value: at least one point must be specified",
    ),
    (
        args_of("NodeResourcesFit", shape((50, 1), (50, 2))),
        f"{A}.scoringStrategy.requestedToCapacityRatio.shape[1].utilization: Invalid value: 50: values must be "
        "sorted in increasing order",
    ),
    (
        args_of("NodeResourcesFit", shape((101, 1))),
        f"{A}.scoringStrategy.requestedToCapacityRatio.shape[0].utilization: Invalid value: 101: not in valid range [0, 100]",
    ),
    (
        args_of("NodeResourcesFit", shape((10, 11))),
        f"{A}.scoringStrategy.requestedToCapacityRatio.shape[0].score: Invalid value: 11: not in valid range [0, 10]",
    ),
    (
        args_of("NodeResourcesFit", {"ignoredResourceGroups": ["example.com/gpu"]}),
        f"{A}.ignoredResourceGroups[0]: Invalid value: \"example.com/gpu\": resource group name can't contain '/'",
    ),
    (
        args_of("NodeResourcesFit", {"ignoredResources": ["-bad-"]}),
        f'{A}.ignoredResources[0]: Invalid value: "-bad-": name part must consist of alphanumeric characters, '
        "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  "
        "or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ),
    (
        args_of("NodeResourcesFit", {"scoringstrategy": {}}),
        f'{A}.scoringstrategy: unknown field "scoringstrategy" (did you mean "scoringStrategy"?)',
    ),
    (
        args_of("NodeResourcesFit", {"kind": "NodeAffinityArgs"}),
        f'{A}: Invalid value: "NodeAffinityArgs": has to match plugin args',
    ),
    (
        args_of("NodeResourcesFit", {"apiVersion": "v1"}),
        f'{A}.apiVersion: unknown value "v1" (expected kubescheduler.config.k8s.io/<version>)',
    ),
    # --- NodeResourcesBalancedAllocation ---
    (
        args_of("NodeResourcesBalancedAllocation", {"resources": [{"name": "cpu", "weight": 2}]}),
        f"{A}.resources[0].weight: Invalid value: 2: must be 1",
    ),
    (
        args_of("NodeResourcesBalancedAllocation", {"resources": [{"name": "cpu"}, {"name": "cpu"}]}),
        f'{A}.resources[1].name: Duplicate value: "cpu"',
    ),
    # --- InterPodAffinity ---
    (
        args_of("InterPodAffinity", {"hardPodAffinityWeight": 101}),
        f"{A}.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]",
    ),
    (
        args_of("InterPodAffinity", {"hardPodAffinityWeight": "5"}),
        f'{A}.hardPodAffinityWeight: expected an integer, got string "5"',
    ),
    (
        args_of("InterPodAffinity", {"hardPodAffinityWeight": 1.5}),
        f"{A}.hardPodAffinityWeight: expected an integer, got number 1.5",
    ),
    # --- PodTopologySpread ---
    (
        args_of("PodTopologySpread", spread(c(labelSelector={"matchLabels": {"a": "b"}}))),
        f"{A}.defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, as they "
        "deduced for each pod",
    ),
    (
        args_of("PodTopologySpread", spread(c(), defaulting=None)),
        f'{A}.defaultingType: Invalid value: "System": when .defaultConstraints are not empty',
    ),
    (
        args_of("PodTopologySpread", spread(c(maxSkew=0))),
        f"{A}.defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)",
    ),
    (
        args_of("PodTopologySpread", spread(c(whenUnsatisfiable="Maybe"))),
        f'{A}.defaultConstraints[0].whenUnsatisfiable: Unsupported value: "Maybe": supported values: "DoNotSchedule", '
        '"ScheduleAnyway"',
    ),
    (
        args_of("PodTopologySpread", spread(c(whenUnsatisfiable=None))),
        f"{A}.defaultConstraints[0].whenUnsatisfiable: Required value: can not be empty",
    ),
    (
        args_of("PodTopologySpread", spread(c(), c(maxSkew=2))),
        f'{A}.defaultConstraints[1]: Duplicate value: "{{zone, DoNotSchedule}}"',
    ),
    (
        args_of("PodTopologySpread", spread(c(topologyKey=None))),
        f"{A}.defaultConstraints[0].topologyKey: Required value: can not be empty",
    ),
    (
        args_of("PodTopologySpread", {"defaultingType": "Auto"}),
        f'{A}.defaultingType: Unsupported value: "Auto": supported values: "System", "List"',
    ),
    # --- DefaultPreemption ---
    (
        args_of("DefaultPreemption", {"minCandidateNodesPercentage": 101}),
        f"{A}.minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]",
    ),
    (
        args_of("DefaultPreemption", {"minCandidateNodesAbsolute": -1}),
        f"{A}.minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)",
    ),
    (
        args_of("DefaultPreemption", {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0}),
        f"[{A}.minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute, "
        f"{A}.minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as minCandidateNodesPercentage]",
    ),
    # --- NodeAffinity ---
    (
        args_of("NodeAffinity", {"addedAffinity": {"podAffinity": {}}}),
        f'{A}.addedAffinity.podAffinity: unknown field "podAffinity"',
    ),
    (
        args_of("NodeAffinity", terms({"key": "a", "operator": "Near"})),
        f'{A}.addedAffinity.{REQ}.nodeSelectorTerms[0].matchExpressions[0].operator: Unsupported value: "Near"',
    ),
    (
        args_of("NodeAffinity", terms({"key": "a", "operator": "In"})),
        f"{A}.addedAffinity.{REQ}.nodeSelectorTerms[0].matchExpressions[0].values: Invalid value: []string(nil): "
        "for 'in', 'notin' operators, values set can't be empty",
    ),
    (
        args_of("NodeAffinity", terms({"key": "a", "operator": "Exists", "values": ["x"]})),
        f"{A}.addedAffinity.{REQ}.nodeSelectorTerms[0].matchExpressions[0].values: Invalid value: "
        '[]string{"x"}: values set must be empty for exists and does not exist',
    ),
    (
        args_of("NodeAffinity", terms({"key": "a", "operator": "Gt", "values": ["x"]})),
        f'{A}.addedAffinity.{REQ}.nodeSelectorTerms[0].matchExpressions[0].values[0]: Invalid value: "x": '
        "for 'Gt', 'Lt' operators, the value must be an integer",
    ),
    (
        args_of(
            "NodeAffinity",
            {
                "addedAffinity": {
                    PREF: [
                        {
                            "weight": 1,
                            "preference": {
                                "matchFields": [{"key": "metadata.labels", "operator": "In", "values": ["x"]}]
                            },
                        }
                    ]
                }
            },
        ),
        f'{A}.addedAffinity.{PREF}[0].matchFields[0].key: Unsupported value: "metadata.labels": '
        'supported values: "metadata.name"',
    ),
    # --- pluginConfig ---
    (
        one_profile(plugin_config=[{"name": "NodeAffinity"}, {"name": "NodeAffinity"}]),
        'profiles[0].pluginConfig[1]: Duplicate value: "NodeAffinity"',
    ),
    (one_profile(plugin_config=[{"args": {}}]), "profiles[0].pluginConfig[0].name: required"),
    # --- top level ---
    (doc(parallelism=0), "parallelism: Invalid value: 0: should be an integer value greater than zero"),
    (
        doc(percentageOfNodesToScore=101),
        "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
    ),
    (
        one_profile(percentageOfNodesToScore=-1),
        "profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]",
    ),
    (doc(podInitialBackoffSeconds=0), "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0"),
    (
        doc(podInitialBackoffSeconds=5, podMaxBackoffSeconds=4),
        "podMaxBackoffSeconds: Invalid value: 4: must be greater than or equal to PodInitialBackoffSeconds",
    ),
    (doc(parallism=3), 'parallism: unknown field "parallism" (did you mean "parallelism"?)'),
    (doc(Parallelism=3), 'Parallelism: unknown field "Parallelism" (did you mean "parallelism"?)'),
    (doc(healthzBindAddress="0.0.0.0:10251"), 'healthzBindAddress: unknown field "healthzBindAddress"'),
    (doc(profiles={"a": 1}), "profiles: expected a list, got a mapping"),
    (["x"], "expected a KubeSchedulerConfiguration mapping, got a list"),
    (
        {"kind": KIND},
        "apiVersion: required (one of kubescheduler.config.k8s.io/v1, kubescheduler.config.k8s.io/v1beta3, "
        "kubescheduler.config.k8s.io/v1beta2, kubescheduler.config.k8s.io/v1beta1)",
    ),
    (
        {"apiVersion": "kubescheduler.config.k8s.io/v2", "kind": KIND},
        'apiVersion: unknown value "kubescheduler.config.k8s.io/v2" (supported: kubescheduler.config.k8s.io/v1, '
        "kubescheduler.config.k8s.io/v1beta3, kubescheduler.config.k8s.io/v1beta2, kubescheduler.config.k8s.io/v1beta1)",
    ),
    ({"apiVersion": V1, "kind": "Pod"}, 'kind: unknown value "Pod" (expected "KubeSchedulerConfiguration")'),
    ({"apiVersion": V1}, 'kind: required ("KubeSchedulerConfiguration")'),
    ({"apiVersion": V1, "kind": KIND, 1: 2}, "invalid field name number 1: field names must be strings"),
    # --- leader election / client connection ---
    (
        doc(leaderElection={"leaseDuration": "5s", "renewDeadline": "10s"}),
        # upstream shows the RenewDeadline value here
        "leaderElection.leaseDuration: Invalid value: 10s: LeaseDuration must be greater than RenewDeadline",
    ),
    (
        doc(leaderElection={"resourceLock": "endpoints"}),
        'leaderElection.resourceLock: Invalid value: "endpoints": resourceLock value must be "leases"',
    ),
    (
        doc(leaderElection={"leaseDuration": "15"}),
        'leaderElection.leaseDuration: invalid duration string "15" (expected e.g. "15s", "1m30s")',
    ),
    (
        doc(leaderElection={"retryPeriod": "-1s"}),
        "leaderElection.retryPeriod: Invalid value: -1s: must be greater than zero",
    ),
    (
        doc(leaderElection={"leaderElect": "yes"}),
        'leaderElection.leaderElect: expected a boolean, got string "yes"',
    ),
    (doc(clientConnection={"burst": -1}), "clientConnection.burst: Invalid value: -1: must be non-negative"),
    (doc(clientConnection={"qps": "fast"}), 'clientConnection.qps: expected a number, got string "fast"'),
    # --- extenders ---
    (
        doc(extenders=[{"urlPrefix": "http://x", "prioritizeVerb": "prio"}]),
        "extenders[0].weight: Invalid value: 0: must have a positive weight applied to it",
    ),
    (
        doc(
            extenders=[{"urlPrefix": "http://x", "bindVerb": "b"}, {"urlPrefix": "http://y", "bindVerb": "b"}]
        ),
        'extenders: Invalid value: "found 2 extenders implementing bind": only one extender can implement bind',
    ),
    (doc(extenders=[{"filterVerb": "f"}]), "extenders[0].urlPrefix: Required value"),
    (
        doc(extenders=[{"urlPrefix": "u", "managedResources": [{"name": "cpu"}]}]),
        'extenders[0].managedResources[0].name: Invalid value: "cpu": is an invalid extended resource name',
    ),
    (
        doc(
            extenders=[
                {"urlPrefix": "u", "managedResources": [{"name": "example.com/gpu"}]},
                {"urlPrefix": "v", "managedResources": [{"name": "example.com/gpu"}]},
            ]
        ),
        'extenders[1].managedResources[0].name: Invalid value: "example.com/gpu": duplicate extender managed resource name',
    ),
    (
        doc(extenders=[{"urlPrefix": "u", "URLPrefix": "x"}]),
        'extenders[0].URLPrefix: unknown field "URLPrefix" (did you mean "urlPrefix"?)',
    ),
    (
        doc(extenders=[{"urlPrefix": "u", "httpTimeout": 5}]),
        'extenders[0].httpTimeout: invalid duration number 5 (expected e.g. "15s", "1m30s")',
    ),
    (
        doc(extenders=[{"urlPrefix": "u", "tlsConfig": {"insecure": True, "ca": "x"}}]),
        'extenders[0].tlsConfig.ca: unknown field "ca"',
    ),
    # --- profiles and plugins ---
    (
        one_profile(scheduler="x"),
        'profiles[0].scheduler: unknown field "scheduler" (did you mean "schedulerName"?)',
    ),
    (
        one_profile(plugins={"Score": {}}),
        'profiles[0].plugins.Score: unknown field "Score" (did you mean "score"?)',
    ),
    (
        one_profile(plugins={"score": {"enable": []}}),
        'profiles[0].plugins.score.enable: unknown field "enable" (did you mean "enabled"?)',
    ),
    (
        one_profile(plugins={"score": {"enabled": [{"name": "Custom", "wieght": 1}]}}),
        'profiles[0].plugins.score.enabled[0].wieght: unknown field "wieght" (did you mean "weight"?)',
    ),
    (
        one_profile(plugins={"score": {"enabled": [{"name": "ImageLocality"}, {"name": "Foo"}]}}),
        'profiles[0].plugins.score.enabled[1].name: unknown plugin "Foo"',
    ),
    (
        one_profile(plugins={"multiPoint": {"enabled": [{"name": "Foo"}]}}),
        'profiles[0].plugins.multiPoint.enabled[0].name: unknown plugin "Foo"',
    ),
    (
        one_profile(plugins={"score": {"enabled": [{"name": "NodePorts"}]}}),
        'profiles[0].plugins.score.enabled[0].name: plugin "NodePorts" does not implement the score extension point',
    ),
    (
        one_profile(plugins={"filter": {"enabled": [{"name": "Custom"}, {"name": "Custom"}]}}),
        'profiles[0].plugins.filter.enabled[1].name: duplicate plugin "Custom" (also enabled[0])',
    ),
    (
        one_profile(
            plugins={"multiPoint": {"enabled": [{"name": "Custom"}, {"name": "Custom", "weight": 2}]}}
        ),
        'profiles[0].plugins.multiPoint.enabled[1].name: duplicate plugin "Custom" (also enabled[0])',
    ),
    (
        one_profile(plugins={"score": {"enabled": [{"name": "Custom", "weight": -1}]}}),
        "profiles[0].plugins.score.enabled[0].weight: invalid value -1: must be greater than or equal to 0",
    ),
    (
        one_profile(plugins={"score": {"enabled": [{"name": "Custom", "weight": 2**31}]}}),
        "profiles[0].plugins.score.enabled[0].weight: invalid value 2147483648: out of range for int32",
    ),
    (
        one_profile(plugins={"score": {"enabled": [{"name": "Custom", "weight": True}]}}),
        "profiles[0].plugins.score.enabled[0].weight: expected an integer, got boolean true",
    ),
    (
        one_profile(plugins={"score": {"enabled": [{"weight": 1}]}}),
        "profiles[0].plugins.score.enabled[0].name: required",
    ),
    (
        one_profile(plugins={"score": {"enabled": {"name": "X"}}}),
        "profiles[0].plugins.score.enabled: expected a list, got a mapping",
    ),
    (
        one_profile(plugins={"score": {"enabled": [{"name": "NodeResourcesMostAllocated"}]}}),
        'profiles[0].plugins.score.enabled[0].name: plugin "NodeResourcesMostAllocated" was removed in version '
        '"kubescheduler.config.k8s.io/v1beta2" (KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1"); '
        "use NodeResourcesFit args scoringStrategy.type MostAllocated",
    ),
    (
        one_profile(plugins={"queueSort": {"enabled": [{"name": "CustomSort"}]}}),
        "profiles[0].plugins.queueSort: only one queue sort plugin required for profile with scheduler name "
        '"default-scheduler", but got 2',
    ),
    (
        one_profile(plugins={"multiPoint": {"disabled": [{"name": "PrioritySort"}]}}),
        "profiles[0].plugins.queueSort: only one queue sort plugin required for profile with scheduler name "
        '"default-scheduler", but got 0',
    ),
    (
        one_profile(plugins={"bind": {"disabled": [{"name": "*"}]}}),
        'profiles[0].plugins.bind: at least one bind plugin is needed for profile with scheduler name "default-scheduler"',
    ),
    (
        doc(
            profiles=[
                {"schedulerName": "a"},
                {
                    "schedulerName": "b",
                    "plugins": {
                        "queueSort": {"disabled": [{"name": "*"}], "enabled": [{"name": "CustomSort"}]}
                    },
                },
            ]
        ),
        'profiles[1].plugins.queueSort: Invalid value: "CustomSort": must be the same for all profiles (profiles[0]: PrioritySort)',
    ),
    (
        doc(
            profiles=[
                {"schedulerName": "a", "pluginConfig": [{"name": "PrioritySort", "args": {"x": 1}}]},
                {"schedulerName": "b"},
            ]
        ),
        'profiles[1].pluginConfig: Invalid value: "PrioritySort": queueSort must be the same for all profiles',
    ),
    (
        doc(
            profiles=[
                {"schedulerName": "a"},
                {"schedulerName": "b", "pluginConfig": [{"name": "PrioritySort", "args": {"x": 1}}]},
            ]
        ),
        'profiles[1].pluginConfig[0].args: Invalid value: "PrioritySort": queueSort must be the same for all profiles',
    ),
    (doc(profiles=[{"schedulerName": "a"}, {}]), "profiles[1].schedulerName: Required value"),
    (one_profile(schedulerName=""), "profiles[0].schedulerName: Required value"),
    (
        doc(profiles=[{"schedulerName": "a"}, {"schedulerName": "a"}]),
        "profiles[1].schedulerName: Duplicate value: profiles[0].schedulerName",
    ),
    # --- version-specific fields ---
    (
        one_profile(V1BETA1, plugins={"multiPoint": {}}),
        'profiles[0].plugins.multiPoint: unknown field "multiPoint"',
    ),
    (
        one_profile(V1BETA1, percentageOfNodesToScore=10),
        'profiles[0].percentageOfNodesToScore: unknown field "percentageOfNodesToScore"',
    ),
    (
        args_of("NodeResourcesFit", {"scoringStrategy": {}}) | {"apiVersion": V1BETA1},
        f'{A}.scoringStrategy: unknown field "scoringStrategy"',
    ),
]


@pytest.mark.parametrize(
    ("document", "message"), CASES, ids=[m.split(":")[0] + f"#{i}" for i, (_, m) in enumerate(CASES)]
)
def test_validation_message(document, message: str) -> None:
    with pytest.raises(InputError) as info:
        parse(document, "sched.yaml")
    err = info.value
    assert str(err) == f"sched.yaml: {message}"
    assert err.source == "sched.yaml"
    assert "\n" not in str(err)


def test_error_path_attribute_is_the_field_path() -> None:
    with pytest.raises(InputError) as info:
        parse(args_of("NodeResourcesFit", {"scoringStrategy": {"type": "Fastest"}}))
    assert info.value.path == "profiles[0].pluginConfig[1].args.scoringStrategy.type"
    assert info.value.reason.startswith('Unsupported value: "Fastest"')


def test_brief_example_message_prefix() -> None:
    with pytest.raises(
        InputError,
        match=r"^sched\.yaml: profiles\[0\]\.pluginConfig\[1\]\.args\.scoringStrategy\.type: "
        r'Unsupported value: "Fastest"',
    ):
        parse(args_of("NodeResourcesFit", {"scoringStrategy": {"type": "Fastest"}}))


def test_valid_edge_values_are_accepted() -> None:
    cfg = parse(
        one_profile(
            percentageOfNodesToScore=100,
            plugin_config=[
                {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 0}},
                {
                    "name": "DefaultPreemption",
                    "args": {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 1},
                },
                {
                    "name": "NodeResourcesFit",
                    "args": {
                        "ignoredResourceGroups": ["example.com"],
                        "ignoredResources": ["example.com/foo"],
                        "scoringStrategy": {
                            "type": RTCR,
                            "resources": [{"name": "cpu", "weight": 100}, {"name": "nvidia.com/gpu"}],
                            "requestedToCapacityRatio": {
                                "shape": [{"utilization": 0, "score": 10}, {"utilization": 100}]
                            },
                        },
                    },
                },
                {"name": "PodTopologySpread", "args": {"defaultingType": "List", "defaultConstraints": []}},
                {"name": "NodeAffinity", "args": terms({"key": "a", "operator": "Gt", "values": ["3"]})},
            ],
        )
        | {"percentageOfNodesToScore": 100, "podInitialBackoffSeconds": 3, "podMaxBackoffSeconds": 3}
    )
    args = cfg.profiles[0].plugin_args
    assert args["InterPodAffinity"]["hardPodAffinityWeight"] == 0
    strategy = args["NodeResourcesFit"]["scoringStrategy"]
    assert strategy["resources"] == [{"name": "cpu", "weight": 100}, {"name": "nvidia.com/gpu", "weight": 1}]
    assert strategy["requestedToCapacityRatio"]["shape"] == [
        {"utilization": 0, "score": 10},
        {"utilization": 100, "score": 0},
    ]
    assert args["PodTopologySpread"] == {"defaultConstraints": [], "defaultingType": "List"}
    assert args["NodeAffinity"]["addedAffinity"][REQ]["nodeSelectorTerms"][0]["matchExpressions"][0][
        "values"
    ] == ["3"]
    assert cfg.pod_max_backoff_seconds == 3


def test_list_defaulting_keeps_user_constraints() -> None:
    cfg = parse(args_of("PodTopologySpread", spread(c(maxSkew=2, minDomains=3))))
    assert cfg.profiles[0].plugin_args["PodTopologySpread"] == {
        "defaultingType": "List",
        "defaultConstraints": [
            {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "minDomains": 3}
        ],
    }


def test_args_envelope_is_accepted_and_stripped() -> None:
    cfg = parse(
        args_of(
            "InterPodAffinity",
            {"apiVersion": V1, "kind": "InterPodAffinityArgs", "hardPodAffinityWeight": 7},
        )
    )
    assert cfg.profiles[0].plugin_args["InterPodAffinity"] == {
        "hardPodAffinityWeight": 7,
        "ignorePreferredTermsOfExistingPods": False,
    }


def test_extender_defaults_and_ignored_resources() -> None:
    cfg = parse(
        doc(
            extenders=[
                {
                    "urlPrefix": "http://ext:8888/",
                    "filterVerb": "filter",
                    "prioritizeVerb": "prioritize",
                    "weight": 5,
                    "managedResources": [{"name": "example.com/foo", "ignoredByScheduler": True}],
                }
            ]
        )
    )
    ext = cfg.extenders[0]
    assert ext["httpTimeout"] == "5s" and ext["weight"] == 5 and ext["bindVerb"] == ""
    assert ext["nodeCacheCapable"] is False and ext["ignorable"] is False
    assert cfg.profiles[0].plugin_args["NodeResourcesFit"]["ignoredResources"] == ["example.com/foo"]


def test_leader_election_overrides() -> None:
    cfg = parse(
        doc(leaderElection={"leaderElect": False, "resourceLock": "endpoints", "resourceName": "my-sched"})
    )
    assert cfg.leader_election["leaderElect"] is False
    assert cfg.leader_election["resourceName"] == "my-sched"
    assert cfg.leader_election["leaseDuration"] == "15s"


# ---- validation_test.go TestValidateKubeSchedulerConfiguration ---------------------------------
# validConfig as a v1 document (a document gets the default plugins merged, so each profile
# disables the default queue sort it replaces; kubesched also wants an extender's urlPrefix).
# Adapted: "bad-resource-name-not-set" and "bad-resource-namespace-not-set" validate an
# undefaulted struct upstream; loading a file defaults empty names first (as kube-scheduler's own
# loading does), so they load with the default names. The removed-plugin cases use the plugins
# v1.36 lists as invalid in v1 (validation.go invalidPluginsByVersion).
def valid_config() -> dict:
    return doc(
        parallelism=8,
        clientConnection={"acceptContentTypes": "application/json", "contentType": "application/json", "qps": 10, "burst": 10},
        leaderElection={
            "resourceLock": "leases",
            "leaderElect": True,
            "leaseDuration": "30s",
            "renewDeadline": "15s",
            "retryPeriod": "5s",
            "resourceNamespace": "name",
            "resourceName": "name",
        },
        podInitialBackoffSeconds=1,
        podMaxBackoffSeconds=1,
        percentageOfNodesToScore=35,
        profiles=[
            {
                "schedulerName": "me",
                "plugins": {
                    "queueSort": {"enabled": [{"name": "CustomSort"}], "disabled": [{"name": "*"}]},
                    "score": {"disabled": [{"name": "*"}]},
                },
                "pluginConfig": [
                    {"name": "DefaultPreemption", "args": {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}}
                ],
            },
            {
                "schedulerName": "other",
                "plugins": {
                    "queueSort": {"enabled": [{"name": "CustomSort"}], "disabled": [{"name": "*"}]},
                    "bind": {"enabled": [{"name": "CustomBinder"}]},
                },
            },
        ],
        extenders=[{"urlPrefix": "http://127.0.0.1:8081/extender", "prioritizeVerb": "prioritize", "weight": 1}],
    )


def changed(edit) -> dict:  # noqa: ANN001 - a function editing the document in place
    d = valid_config()
    edit(d)
    return d


def _set(d: dict, path: str, value: object) -> None:
    keys = path.split(".")
    for k in keys[:-1]:
        d = d[int(k)] if k.isdigit() else d[k]
    d[keys[-1]] = value


P0 = "profiles[0].pluginConfig[0]"
V1_INVALID = '"kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")'
SCENARIOS = {
    "good": (valid_config(), None),
    "bad-parallelism-invalid-value": (
        changed(lambda d: _set(d, "parallelism", 0)),
        "parallelism: Invalid value: 0: should be an integer value greater than zero",
    ),
    "bad-resource-name-not-set": (changed(lambda d: _set(d, "leaderElection.resourceName", "")), None),
    "bad-resource-namespace-not-set": (changed(lambda d: _set(d, "leaderElection.resourceNamespace", "")), None),
    "non-empty-metrics-bind-addr": (
        changed(lambda d: _set(d, "metricsBindAddress", "0.0.0.0:9090")),
        'metricsBindAddress: unknown field "metricsBindAddress"',
    ),
    "non-empty-healthz-bind-addr": (
        changed(lambda d: _set(d, "healthzBindAddress", "0.0.0.0:9090")),
        'healthzBindAddress: unknown field "healthzBindAddress"',
    ),
    "bad-percentage-of-nodes-to-score": (
        changed(lambda d: _set(d, "percentageOfNodesToScore", 101)),
        "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
    ),
    "scheduler-name-not-set": (
        changed(lambda d: _set(d, "profiles.1.schedulerName", "")),
        "profiles[1].schedulerName: Required value",
    ),
    "repeated-scheduler-name": (
        changed(lambda d: _set(d, "profiles.0.schedulerName", "other")),
        "profiles[1].schedulerName: Duplicate value: profiles[0].schedulerName",
    ),
    "different-queue-sort": (
        changed(lambda d: _set(d, "profiles.1.plugins.queueSort.enabled", [{"name": "PrioritySort"}])),
        'profiles[1].plugins.queueSort: Invalid value: "PrioritySort": must be the same for all profiles '
        "(profiles[0]: CustomSort)",
    ),
    "one-empty-queue-sort": (
        changed(lambda d: d["profiles"][0].pop("plugins")),
        'profiles[1].plugins.queueSort: Invalid value: "CustomSort": must be the same for all profiles '
        "(profiles[0]: PrioritySort)",
    ),
    "extender-negative-weight": (
        changed(lambda d: _set(d, "extenders.0.weight", -1)),
        "extenders[0].weight: Invalid value: -1: must have a positive weight applied to it",
    ),
    "extender-duplicate-managed-resources": (
        changed(lambda d: _set(d, "extenders.0.managedResources", [{"name": "foo"}, {"name": "foo"}])),
        '[extenders[0].managedResources[0].name: Invalid value: "foo": is an invalid extended resource name, '
        'extenders[0].managedResources[1].name: Invalid value: "foo": is an invalid extended resource name, '
        'extenders[0].managedResources[1].name: Invalid value: "foo": duplicate extender managed resource name]',
    ),
    "extender-duplicate-bind": (
        changed(
            lambda d: (
                _set(d, "extenders.0.bindVerb", "foo"),
                d["extenders"].append({"urlPrefix": "http://b", "prioritizeVerb": "prioritize", "weight": 1, "bindVerb": "bar"}),
            )
        ),
        'extenders: Invalid value: "found 2 extenders implementing bind": only one extender can implement bind',
    ),
    "invalid-node-percentage": (
        changed(lambda d: _set(d, "profiles.0.pluginConfig.0.args.minCandidateNodesPercentage", 200)),
        f"{P0}.args.minCandidateNodesPercentage: Invalid value: 200: not in valid range [0, 100]",
    ),
    "invalid-plugin-args": (
        changed(lambda d: _set(d, "profiles.0.pluginConfig.0.args", {"kind": "InterPodAffinityArgs"})),
        f'{P0}.args: Invalid value: "InterPodAffinityArgs": has to match plugin args',
    ),
    "duplicated-plugin-config": (
        changed(lambda d: _set(d, "profiles.0.pluginConfig", [{"name": "config"}, {"name": "config"}])),
        'profiles[0].pluginConfig[1]: Duplicate value: "config"',
    ),
    "mismatch-queue-sort": (
        changed(
            lambda d: (
                _set(d, "profiles.0.plugins.queueSort.enabled", [{"name": "PrioritySort"}]),
                _set(d, "profiles.0.pluginConfig", [{"name": "PrioritySort"}]),
                _set(d, "profiles.1.pluginConfig", [{"name": "CustomSort"}]),
            )
        ),
        'profiles[1].plugins.queueSort: Invalid value: "CustomSort": must be the same for all profiles '
        "(profiles[0]: PrioritySort)",
    ),
    "bad-removed-plugins-1": (
        changed(lambda d: _set(d, "profiles.0.plugins.filter", {"enabled": [{"name": "AzureDiskLimits"}]})),
        f'profiles[0].plugins.filter.enabled[0]: Invalid value: "AzureDiskLimits": was invalid in version {V1_INVALID}',
    ),
    "good-removed-plugins-2": (
        changed(lambda d: _set(d, "profiles.0.plugins.score.enabled", [{"name": "PodTopologySpread", "weight": 2}])),
        None,
    ),
    "bad-plugins-config": (
        changed(lambda d: d["profiles"][0]["pluginConfig"].append({"name": "GCEPDLimits", "args": {}})),
        f'profiles[0].pluginConfig[1]: Invalid value: "GCEPDLimits": was invalid in version {V1_INVALID}',
    ),
}


@pytest.mark.parametrize(("document", "error"), list(SCENARIOS.values()), ids=list(SCENARIOS))
def test_validate_kube_scheduler_configuration(document: dict, error: str | None) -> None:
    if error is None:
        cfg = parse(document)
        assert cfg.leader_election["resourceName"] in ("name", "kube-scheduler")
        return
    with pytest.raises(InputError) as info:
        parse(document)
    assert str(info.value) == f"sched.yaml: {error}"
