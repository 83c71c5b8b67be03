"""Cluster Autoscaler's flags as its Deployment's args spell them (``flags:`` in the autoscaler
file): each sets the same field as the file's own key, and a bad one names the flag."""

from __future__ import annotations

import pytest

from kubesched.autoscale.configfile import SCALE_DOWN_KEYS, TOP_KEYS, load, load_file
from kubesched.autoscale.flags import FLAGS, IGNORED
from kubesched.errors import InputError
from tests.autoscale.scaleup_cases import pod, scale_up

GROUP = {"name": "g", "template": {"cpu": "1", "memory": "1Gi"}, "max": 10}


def test_flags_set_the_fields_their_keys_do():
    args = [
        "--expander=priority,least-waste",
        "--scan-interval=20s",
        "--max-node-provision-time=10m",
        "--max-nodes-total=50",
        "--cores-total=0:320",
        "--memory-total=0:1024",
        "--gpu-total=A100:0:16",
        "--gpu-total=V100:0:8",
        "--balance-similar-node-groups",
        "--balancing-ignore-label=example.com/pool",
        "--enforce-node-group-min-size=true",
        "--max-nodes-per-scaleup=20",
        "--scale-down-enabled=false",
        "--scale-down-unneeded-time=5m",
        "--scale-down-utilization-threshold=0.6",
        "-max-empty-bulk-delete=3",
        "--v=4",  # logging: skipped
        "--cloud-provider=aws",  # the provider's identity: skipped
    ]
    cfg = load({"flags": args, "nodeGroups": [GROUP]}, "a.yaml")
    assert cfg.expanders == ["priority", "least-waste"] and cfg.scan_interval == 20 and cfg.max_node_provision_time == 600
    assert cfg.max_nodes_total == 50 and cfg.resource_limits.max["cpu"] == 320 and cfg.resource_limits.max["memory"] == 1024 * 2**30
    assert cfg.resource_limits.max["A100"] == 16 and cfg.resource_limits.max["V100"] == 8
    assert cfg.balance_similar_node_groups and cfg.balancing.ignore_labels == ["example.com/pool"]
    assert cfg.enforce_node_group_min_size and cfg.max_nodes_per_scale_up == 20
    sd = cfg.scale_down
    assert not sd.enabled and sd.unneeded_time == 300 and sd.utilization_threshold == 0.6 and sd.max_empty_bulk_delete == 3


def test_a_later_flag_overrides_an_earlier_one():
    assert load({"flags": ["--max-nodes-total=5", "--max-nodes-total=7"], "nodeGroups": [GROUP]}, "a.yaml").max_nodes_total == 7


def test_every_flag_names_a_key_the_file_reads():
    for flag, (key, _) in FLAGS.items():
        head, _, sub = key.partition(".")
        assert head in TOP_KEYS and (not sub or sub in SCALE_DOWN_KEYS), flag
    assert not set(FLAGS) & IGNORED


def test_flags_drive_the_loop():
    cfg = load({"flags": ["--max-nodes-per-scaleup=2"], "nodeGroups": [GROUP]}, "a.yaml")
    assert scale_up(cfg, [], [pod(f"p{i}", 1000, 2**29) for i in range(4)]) == {"g": 2}


@pytest.mark.parametrize(
    ("flags", "extra", "message"),
    [
        (["--cloud-provder=aws"], {}, 'flags[0]: unsupported Cluster Autoscaler flag "--cloud-provder" (did you mean "cloud-provider"?)'),
        (["--scale-down-gpu-utilization-thresold=0.5"], {}, 'did you mean "scale-down-gpu-utilization-threshold"?'),
        (["cores-total=0:5"], {}, 'flags[0]: "cores-total=0:5" is not a flag (--name=value)'),
        (["--cores-total=320"], {}, 'flags[0] (--cores-total): invalid value "320": expected "MIN:MAX"'),
        (["--gpu-total=A:0:8", "--gpu-total=B:0"], {}, 'flags[1] (--gpu-total): invalid value "B:0": expected "TYPE:MIN:MAX"'),
        (["--scale-down-unneeded-time=600"], {}, 'flags[0] (--scale-down-unneeded-time): invalid duration "600"'),
        (["--scale-down-utilization-threshold=2"], {}, "flags[0] (--scale-down-utilization-threshold): must be between 0 and 1, got 2"),
        (["--max-nodes-total=x"], {}, 'flags[0] (--max-nodes-total): invalid value "x": expected a whole number'),
        (["--balance-similar-node-groups=maybe"], {}, 'flags[0] (--balance-similar-node-groups): invalid boolean "maybe"'),
        (["--expander"], {}, "flags[0] (--expander): needs a value"),
        (["--expander=random,priority"], {}, 'flags[0] (--expander): expander "priority" comes after "random"'),
        (["--max-nodes-total=3"], {"maxNodesTotal": 4}, "flags[0] (--max-nodes-total): maxNodesTotal is set in the file too"),
        (["--scale-down-unneeded-time=1m"], {"scaleDown": {"unneededTime": 60}}, "flags[0] (--scale-down-unneeded-time): scaleDown.unneededTime is set in the file too"),
        ("--max-nodes-total=3", {}, 'flags: expected a list of Cluster Autoscaler flags'),
        (["--scale-down-unneeded-time=1m"], {"scaleDown": 7}, "scaleDown: expected a mapping, got int"),  # was a TypeError
    ],
)
def test_bad_flags_name_the_flag(flags, extra, message):
    with pytest.raises(InputError) as e:
        load({"flags": flags, "nodeGroups": [GROUP], **extra}, "a.yaml")
    assert str(e.value).startswith("a.yaml: ") and message in str(e.value), str(e.value)
    assert "\n" not in str(e.value)


def test_flags_in_a_file(tmp_path):
    f = tmp_path / "as.yaml"
    f.write_text("flags:\n- --cores-total=0:64\n- --expander=least-nodes\nnodeGroups: [{name: g, template: {cpu: '8', memory: 8Gi}}]\n")
    cfg = load_file(str(f))
    assert cfg.resource_limits.max["cpu"] == 64 and cfg.expander == "least-nodes"
