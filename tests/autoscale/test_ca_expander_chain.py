"""Expander chains (``expander: priority,least-waste``, CA's ``--expander`` list) and the priority
expander's ConfigMap (``priorityConfigMap``). Ported from kubernetes/autoscaler:

* expander/factory/chain_test.go: TestChainStrategy_BestOption (5 of 5 cases; upstream's options
  carry a Debug string the test filters match on, here the group name).
* expander/factory/expander_factory.go's checks (no upstream test): an unknown name, a name given
  twice, a name after ``random``.
* expander/priority/priority_test.go: TestPriorityExpanderCorrecltyHandlesConfigUpdate (its two
  configurations, each read from a ConfigMap file) and TestPriorityExpanderCorrecltySkipsBadChangeConfig
  (an empty configuration: upstream keeps the last good one and warns; a file has none, so it is
  an error naming the file). The filter tests (TestPriorityExpanderCorreclty*Option*) are in
  test_expanders.py; the warning events are not modelled.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import yaml

from kubesched.api.objects import Node, Pod
from kubesched.autoscale.config import AutoscalerConfig
from kubesched.autoscale.configfile import load, load_file
from kubesched.autoscale.expander import Expander, Option, chain
from kubesched.errors import InputError
from tests.autoscale.scaleup_cases import group, node, pod, scale_up


def substring(s: str) -> Callable[[list[Option]], list[Option]]:
    return lambda opts: [o for o in opts if s in o.group]


def first(s: str) -> Callable[[list[Option]], Option | None]:
    return lambda opts: next(iter(substring(s)(opts)), None)


def opt(name: str) -> Option:
    return Option(name, 1)


# ---- chain_test.go ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("filters", "fallback", "options", "want"),
    [
        ([], "a", ["b", "a"], "a"),  # selects with no filters
        (["a"], "b", ["ab", "b"], "ab"),  # filters with one filter
        (["a", "b"], "x", ["xab", "xa", "x"], "xab"),  # filters with multiple filters
        (["x"], "a", ["xc", "xaa", "xab"], "xaa"),  # selects from multiple after filters
        (["a", "b"], "x", ["a"], "a"),  # short circuits: one option left ends the chain
    ],
)
def test_chain_strategy_best_option(filters, fallback, options, want):
    got = chain([substring(f) for f in filters], first(fallback), [opt(o) for o in options])
    assert got is not None and got.group == want


def test_a_filter_leaving_nothing_leaves_no_option():
    assert chain([substring("z"), substring("a")], first(""), [opt("a")]) is None


# ---- expander_factory.go ------------------------------------------------------------------------
GROUP = {"name": "g", "template": {"cpu": "8", "memory": "8Gi"}}


@pytest.mark.parametrize(
    ("expander", "message"),
    [
        ("priority,cheapest", 'unknown expander "cheapest"'),
        ("least-waste,least-waste", 'expander "least-waste" is given twice'),
        ("random,least-waste", 'expander "least-waste" comes after "random"'),
        ("priority,", 'unknown expander ""'),
    ],
)
def test_bad_chains_name_the_field(expander, message):
    with pytest.raises(InputError) as e:
        load({"expander": expander, "nodeGroups": [GROUP]}, "a.yaml")
    assert str(e.value).startswith(f"a.yaml: expander: {message}"), str(e.value)


def test_a_chain_ending_in_random_is_fine():
    assert load({"expander": "priority, most-pods, random", "nodeGroups": [GROUP]}, "a.yaml").expanders == ["priority", "most-pods", "random"]


def options_of_equal_priority() -> list[Option]:
    """Two high-priority options (one wasting less) and a low-priority one wasting nothing."""
    p = Pod.parse(pod("p", 1000, 2**30))

    def o(name: str, cpu_m: int, mem: int) -> Option:
        return Option(name, 1, [p], Node.parse(node(name, cpu_m, mem)))

    return [o("hi-big", 4000, 4 * 2**30), o("hi-small", 2000, 2 * 2**30), o("lo-exact", 1000, 2**30)]


def test_priority_then_least_waste():
    ex = Expander("priority,least-waste", np.random.default_rng(0), priorities={10: ["^hi-"], 1: ["^lo-"]})
    assert ex.best(options_of_equal_priority()).group == "hi-small"  # least waste among priority 10
    alone = Expander("least-waste", np.random.default_rng(0))
    assert alone.best(options_of_equal_priority()).group == "lo-exact"  # without the priority filter


def test_the_loop_uses_the_chain():
    cfg = AutoscalerConfig(
        node_groups=[group("hi-big", 4000, 4 * 2**30), group("hi-small", 2000, 2 * 2**30), group("lo-exact", 1000, 2**30)],
        expander="priority,least-waste",
        priorities={10: ["^hi-"], 1: ["^lo-"]},
    )
    assert scale_up(cfg, [], [pod("p", 1000, 2**30)]) == {"hi-small": 1}


# ---- priority_test.go: the ConfigMap ------------------------------------------------------------
ONE_ENTRY_CONFIG = '10: \n  - ".*t2\\\\.large.*"\n'
CONFIG = '5:\n  - ".*t2\\\\.micro.*"\n10: \n  - ".*t2\\\\.large.*"\n  - ".*t3\\\\.large.*"\n50: \n  - ".*m4\\\\.4xlarge.*"\n'


def config_map(priorities: str | None, name: str = "cluster-autoscaler-priority-expander") -> str:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "kube-system"}}
    if priorities is not None:
        cm["data"] = {"priorities": priorities}
    return yaml.safe_dump(cm)


def write(tmp_path, cm: str, extra: dict | None = None) -> str:
    (tmp_path / "cm.yaml").write_text(cm)
    (tmp_path / "as.yaml").write_text(yaml.safe_dump({"expander": "priority", "priorityConfigMap": "cm.yaml", "nodeGroups": [GROUP], **(extra or {})}))
    return str(tmp_path / "as.yaml")


EO = [Option("my-asg.t2.large", 1), Option("my-asg.t3.large", 1), Option("my-asg.m4.4xlarge", 1)]


def test_priority_expander_correctly_handles_config_update(tmp_path):
    cfg = load_file(write(tmp_path, config_map(ONE_ENTRY_CONFIG)))
    assert cfg.priorities == {10: [r".*t2\.large.*"]}
    assert Expander("priority", np.random.default_rng(0), priorities=cfg.priorities).best(EO).group == "my-asg.t2.large"
    cfg = load_file(write(tmp_path, config_map(CONFIG)))
    assert Expander("priority", np.random.default_rng(0), priorities=cfg.priorities).best(EO).group == "my-asg.m4.4xlarge"


def test_priority_expander_correctly_skips_bad_change_config(tmp_path):
    with pytest.raises(InputError) as e:
        load_file(write(tmp_path, config_map("")))
    assert str(e.value) == (
        f"{tmp_path / 'cm.yaml'}: data.priorities: priority configuration in cluster-autoscaler-priority-expander configmap is empty; "
        "please provide valid configuration"
    )


def test_the_config_map_among_other_objects(tmp_path):
    other = "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: cluster-autoscaler}\n"
    cfg = load_file(write(tmp_path, other + "---\n" + config_map(CONFIG)))
    assert sorted(cfg.priorities) == [5, 10, 50]
    listed = "apiVersion: v1\nkind: List\nitems:\n" + "".join("- " + line + "\n" if i == 0 else "  " + line + "\n" for i, line in enumerate(config_map(CONFIG).splitlines()))
    assert sorted(load_file(write(tmp_path, listed)).priorities) == [5, 10, 50]


@pytest.mark.parametrize(
    ("cm", "message"),
    [
        (config_map(CONFIG, name="other"), "no ConfigMap named cluster-autoscaler-priority-expander in the file"),
        (config_map(None), "data.priorities: wrong configmap for priority expander, doesn't contain priorities key"),
        (config_map("10: [a\n"), "data.priorities: can't parse YAML with priorities in the configmap: invalid YAML"),
        (config_map("ten: [a]\n"), 'data.priorities.ten: invalid priority "ten": expected a whole number'),
        (config_map("10: ['(']\n"), "data.priorities.10[0]: can't compile regexp rule for priority 10 and rule (:"),
    ],
)
def test_bad_config_maps_name_the_file_and_field(tmp_path, cm, message):
    with pytest.raises(InputError) as e:
        load_file(write(tmp_path, cm))
    assert str(e.value).startswith(f"{tmp_path / 'cm.yaml'}: {message}"), str(e.value)


def test_priorities_and_the_config_map_are_exclusive(tmp_path):
    with pytest.raises(InputError, match="priorityConfigMap: give either priorities or priorityConfigMap"):
        load_file(write(tmp_path, config_map(CONFIG), {"priorities": {1: ["x"]}}))


def test_a_missing_config_map_file_names_it(tmp_path):
    (tmp_path / "as.yaml").write_text("priorityConfigMap: nowhere.yaml\nnodeGroups: [{name: g, template: {cpu: '8', memory: 8Gi}}]\n")
    with pytest.raises(InputError, match="nowhere.yaml"):
        load_file(str(tmp_path / "as.yaml"))
