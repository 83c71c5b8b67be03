"""Bad autoscaler configuration: one line naming the file and the field (exit 2 from the CLI)."""

from __future__ import annotations

import pytest

from kubesched.autoscale.config import AutoscalerConfig
from kubesched.autoscale.configfile import load, load_file
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


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # the fuzz campaign of issue 22 (each was a traceback): read as every input file is
        (b"scanInterval: 10\xff\n", "not UTF-8 text (byte 0xff at line 1"),
        (b"scanInterval: 2024-13-45\n", 'scanInterval: invalid value "2024-13-45": expected a number'),
        pytest.param(b"scaleDown: " + b"[" * 600 + b"]" * 600 + b"\n", "scaleDown: expected a mapping, got list", id="600-levels"),
        pytest.param(b"a: " + b"[" * 1200 + b"]" * 1200 + b"\n", "exceeded maximum nesting depth", id="1200-levels"),
        (b"provisioningDelay: {dist: [uniform], min: 1, max: 2}\n", "provisioningDelay.dist: unknown value a list"),
        (b"provisioningDelay: {dist: lognormal, median: 60, sigma: 1000}\n", "provisioningDelay.sigma: must be at most 10"),
        (b"priorities: {.inf: [x]}\n", 'priorities.inf: invalid priority "inf"'),
        (b"scanInterval: 0.001\n", "scanInterval: must be at least 0.1 seconds"),
        (b"maxNodesTotal: -1\n", "maxNodesTotal: must be 0 (no limit) or more"),
        (b"nodeGroups: [{name: g, template: {cpu: '8', memory: 8Gi}, max: 10000000}]\n", "nodeGroups[0].max: must be at most 100,000"),
        (b"nodeGroups: [{name: g, template: {cpu: [8], memory: 8Gi}}]\n", "nodeGroups[0].template.cpu: expected a quantity"),
        (b"nodeGroups: [{name: g, template: {cpu: '8', memory: 8Gi, gpus: 100000}}]\n", "nodeGroups[0].template.gpus: must be from 0 to 128"),
        (b"nodeGroups: [{name: g, template: {cpu: '8', memory: 8Gi, labels: {a: [b]}}}]\n", "nodeGroups[0].template.labels.a: expected a string"),
        (b"mode: karpenter\n---\nmode: karpenter\n", "expected one document, found 2"),
    ],
)
def test_bad_files_are_one_line_naming_the_file(tmp_path, text, message):
    f = tmp_path / "as.yaml"
    f.write_bytes(text)
    with pytest.raises(InputError) as e:
        load_file(str(f), groups_required=False)
    assert str(e.value).startswith(f"{f}: ") and message in str(e.value), str(e.value)
    assert "\n" not in str(e.value)
