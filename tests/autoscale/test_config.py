"""Bad autoscaler configuration: one line naming the file and the field (exit 2 from the CLI)."""

from __future__ import annotations

import pytest

from kubesched.autoscale.config import AutoscalerConfig, load
from kubesched.errors import InputError

GROUP = {"name": "g", "template": {"cpu": "8", "memory": "32Gi", "gpus": 1}, "min": 0, "max": 4}


def test_a_good_file_loads_with_ca_defaults():
    cfg = load({"nodeGroups": [GROUP], "expander": "price", "provisioningDelay": {"dist": "uniform", "min": 30, "max": 90}}, "a.yaml")
    assert cfg.scan_interval == 10 and cfg.expander == "price"
    assert cfg.scale_down.utilization_threshold == 0.5 and cfg.scale_down.unneeded_time == 600
    assert cfg.provisioning_delay.mean == 60
    g = cfg.node_groups[0]
    assert g.gpus == 1 and g.template.allocatable["cpu"] == 8000
    assert cfg.prices.node(g) == 1.0


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"expander": "cheapest", "nodeGroups": [GROUP]}, 'a.yaml: expander: unknown expander "cheapest"'),
        ({"nodeGroups": [{**GROUP, "min": 5, "max": 2}]}, "a.yaml: nodeGroups[0].min: min (5) is greater than max (2)"),
        ({"nodeGroups": [GROUP], "scaleDown": {"unneededTime": -1}}, "a.yaml: scaleDown.unneededTime: must be 0 or more seconds"),
        ({"nodeGroups": [GROUP], "provisioningDelay": {"dist": "uniform", "min": -5, "max": 3}}, "a.yaml: provisioningDelay.min: must be 0 or more seconds"),
        ({"nodeGroups": [{"name": "g", "shape": "h100-8gpu", "max": 3}]}, 'a.yaml: nodeGroups[0].shape: unknown node shape "h100-8gpu"'),
        ({"nodeGroups": [GROUP], "mode": "serverless"}, 'a.yaml: mode: unknown mode "serverless"'),
        ({"nodeGroups": [GROUP], "scanInterval": 0}, "a.yaml: scanInterval: must be greater than 0 seconds"),
        ({"nodeGroups": [GROUP], "scaledown": {}}, "a.yaml: scaledown: unknown field"),
        ({"nodeGroups": [GROUP, GROUP]}, 'a.yaml: nodeGroups[1].name: duplicate node group "g"'),
        ({"nodeGroups": [GROUP], "priorities": {10: ["("]}}, "a.yaml: priorities.10[0]: invalid regular expression"),
        ({"nodeGroups": [GROUP], "karpenter": {"consolidationPolicy": "Always"}}, 'a.yaml: karpenter.consolidationPolicy: unknown value "Always"'),
    ],
)
def test_bad_values_name_the_field(doc, message):
    with pytest.raises(InputError) as e:
        load(doc, "a.yaml")
    assert str(e.value).startswith(message)
    assert "\n" not in str(e.value)


def test_validate_checks_python_built_configs():
    with pytest.raises(InputError, match="nodeGroups: at least one node group"):
        AutoscalerConfig().validate()
