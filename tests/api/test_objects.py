"""Pod effective requests (containers, init containers, sidecars, overhead, pod-level) and parsing."""

import pytest

from kubesched.api.objects import Node, Pod
from kubesched.errors import InputError
from kubesched.testing import make_node


def c(name, cpu=None, mem=None, restart=None, limits=None):
    d = {"name": name, "image": "img"}
    req = {}
    if cpu is not None:
        req["cpu"] = cpu
    if mem is not None:
        req["memory"] = mem
    d["resources"] = {"requests": req}
    if limits:
        d["resources"]["limits"] = limits
    if restart:
        d["restartPolicy"] = restart
    return d


def pod(containers, init=(), **spec):
    return Pod.parse(
        {"metadata": {"name": "p"}, "spec": {"containers": list(containers), "initContainers": list(init), **spec}}
    )


@pytest.mark.parametrize(
    "containers, init, spec, cpu, mem",
    [
        ([c("a", "100m", "1Gi"), c("b", "200m", "1Gi")], [], {}, 300, 2 << 30),
        # a regular init container larger than the sum wins
        ([c("a", "100m")], [c("i", "500m")], {}, 500, 0),
        # sidecars add to the app containers and to later init containers
        ([c("a", "100m")], [c("s", "200m", restart="Always"), c("i", "250m")], {}, 450, 0),
        ([c("a", "100m")], [c("i", "250m"), c("s", "200m", restart="Always")], {}, 300, 0),
        # overhead is added on top
        ([c("a", "100m")], [], {"overhead": {"cpu": "50m"}}, 150, 0),
        # pod-level requests replace the container sum for cpu and memory
        ([c("a", "100m", "1Gi")], [], {"resources": {"requests": {"cpu": "2"}}}, 2000, 1 << 30),
    ],
)
def test_effective_requests(containers, init, spec, cpu, mem):
    p = pod(containers, init, **spec)
    assert p.requests.get("cpu", 0) == cpu
    assert p.requests.get("memory", 0) == mem


def test_limits_default_requests():
    p = pod([c("a", limits={"cpu": "1", "nvidia.com/gpu": "2"})])
    assert p.requests["cpu"] == 1000 and p.requests["nvidia.com/gpu"] == 2


def test_non_zero_defaults_for_scoring():
    p = pod([c("a"), c("b", "300m")])
    assert p.requests.get("cpu", 0) == 300
    assert p.non_zero_cpu == 400  # the container without a request counts 100m
    assert p.non_zero_mem == 2 * 200 * 1024 * 1024


def test_non_zero_with_pod_level_only_fills_missing_resources():
    p = pod([c("a"), c("b", "300m")], resources={"requests": {"memory": "1Gi"}})
    assert p.non_zero_cpu == 300
    assert p.non_zero_mem == 1 << 30


def test_sidecar_host_ports_count_but_not_regular_init():
    ports = [{"containerPort": 80, "hostPort": 8080}]
    p = pod([c("a")], [dict(c("i"), ports=ports), dict(c("s", restart="Always"), ports=[{"containerPort": 1, "hostPort": 9090}])])
    assert [hp.port for hp in p.host_ports] == [9090]


def test_bad_quantity_names_the_field():
    with pytest.raises(InputError) as e:
        pod([c("a", cpu="1.2.3")])
    assert "spec.containers[0].resources.requests.cpu" in str(e.value)
    assert 'invalid quantity "1.2.3"' in str(e.value)


def test_node_allocatable_falls_back_to_capacity():
    n = Node.parse({"metadata": {"name": "n"}, "status": {"capacity": {"cpu": "4", "pods": "110"}}})
    assert n.allocatable == {"cpu": 4000, "pods": 110}
    n2 = Node.parse(make_node("m", cpu="2", memory="1Gi", taints=[{"key": "k", "effect": "NoSchedule"}]))
    assert n2.allocatable["memory"] == 1 << 30 and n2.taints[0].key == "k"


def test_match_label_keys_are_merged_into_selectors():
    p = Pod.parse(
        {
            "metadata": {"name": "p", "labels": {"app": "a", "rev": "7"}},
            "spec": {
                "containers": [c("x")],
                "topologySpreadConstraints": [
                    {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                     "labelSelector": {"matchLabels": {"app": "a"}}, "matchLabelKeys": ["rev"]}
                ],
            },
        }
    )
    sel = p.spread_constraints[0].selector
    assert sel.matches({"app": "a", "rev": "7"}) and not sel.matches({"app": "a", "rev": "8"})
