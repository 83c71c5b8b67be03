"""NodePorts: upstream node_ports_test.go table, plus sidecars and multi-node checks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kubesched.api.objects import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code, Status
from kubesched.plugins.nodeports import ERR_REASON, NAME, NodePorts
from kubesched.testing import build_snapshot, make_node, make_pod, run_filter

CONFLICT = Status(Code.Unschedulable, (ERR_REASON,), NAME)
OK = Status(plugin=NAME)


def ports(*specs: str) -> list[dict[str, Any]]:
    """``"PROTO/IP/PORT"`` strings, as the Go test's newPod takes them."""
    out = []
    for spec in specs:
        proto, ip, port = spec.split("/")
        out.append({"containerPort": int(port), "hostPort": int(port), "hostIP": ip, "protocol": proto})
    return out


def new_pod(name: str, *specs: str, node: str | None = None) -> dict:
    return make_pod(name, node=node, containers=[{"name": "c", "image": "pause", "ports": ports(*specs)}])


# (name, incoming pod ports, ports of a pod already on the node, want)
CASES = [
    ("other port", ["UDP/127.0.0.1/8080"], ["UDP/127.0.0.1/9090"], OK),
    ("same udp port", ["UDP/127.0.0.1/8080"], ["UDP/127.0.0.1/8080"], CONFLICT),
    ("same tcp port", ["TCP/127.0.0.1/8080"], ["TCP/127.0.0.1/8080"], CONFLICT),
    ("different host ip", ["TCP/127.0.0.1/8080"], ["TCP/127.0.0.2/8080"], OK),
    ("different protocol", ["UDP/127.0.0.1/8080"], ["TCP/127.0.0.1/8080"], OK),
    (
        "second udp port conflict",
        ["UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"],
        ["UDP/127.0.0.1/8080"],
        CONFLICT,
    ),
    (
        "first tcp port conflict",
        ["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"],
        ["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"],
        CONFLICT,
    ),
    ("first tcp port conflict due to 0.0.0.0 hostIP", ["TCP/0.0.0.0/8001"], ["TCP/127.0.0.1/8001"], CONFLICT),
    (
        "TCP hostPort conflict due to 0.0.0.0 hostIP",
        ["TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"],
        ["TCP/127.0.0.1/8001"],
        CONFLICT,
    ),
    ("second tcp port conflict to 0.0.0.0 hostIP", ["TCP/127.0.0.1/8001"], ["TCP/0.0.0.0/8001"], CONFLICT),
    ("second different protocol", ["UDP/127.0.0.1/8001"], ["TCP/0.0.0.0/8001"], OK),
    (
        "UDP hostPort conflict due to 0.0.0.0 hostIP",
        ["UDP/127.0.0.1/8001"],
        ["TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"],
        CONFLICT,
    ),
    # Beyond the upstream table.
    ("empty hostIP defaults to 0.0.0.0", ["TCP//8001"], ["TCP/127.0.0.1/8001"], CONFLICT),
    ("SCTP is its own protocol", ["SCTP/0.0.0.0/9000"], ["TCP/0.0.0.0/9000", "UDP/0.0.0.0/9000"], OK),
    ("SCTP conflicts with SCTP", ["SCTP/10.0.0.1/9000"], ["SCTP/10.0.0.1/9000"], CONFLICT),
    ("'::' is not a wildcard", ["TCP/::/8001"], ["TCP/127.0.0.1/8001"], OK),
    ("nothing used on the node", ["TCP/0.0.0.0/80"], [], OK),
]


@pytest.mark.parametrize(("name", "want_ports", "used_ports", "want"), CASES, ids=[c[0] for c in CASES])
def test_filter(name: str, want_ports: list[str], used_ports: list[str], want: Status) -> None:
    existing = [new_pod("existing", *used_ports, node="m1")] if used_ports else []
    snap = build_snapshot([make_node("m1")], existing)
    pod = Pod.parse(new_pod("incoming", *want_ports))
    state = CycleState()
    assert NodePorts().pre_filter(state, pod, snap) is None
    res = NodePorts().filter(state, pod, snap, np.arange(1, dtype=np.int32))
    assert res.status_at(0, NAME) == want
    assert run_filter(NodePorts(), pod, snap) == [want]


def test_skip_filter_without_host_ports() -> None:
    snap = build_snapshot([make_node("m1")])
    status = NodePorts().pre_filter(CycleState(), Pod.parse(make_pod("p")), snap)
    assert isinstance(status, Status) and status.code == Code.Skip


def test_container_ports_without_host_port_are_ignored() -> None:
    pod = Pod.parse(
        make_pod(
            "p",
            containers=[
                {"name": "c", "image": "pause", "ports": [{"containerPort": 8005, "protocol": "TCP"}]}
            ],
        )
    )
    status = NodePorts().pre_filter(CycleState(), pod, build_snapshot([make_node("m1")]))
    assert isinstance(status, Status) and status.code == Code.Skip


def test_pre_filter_disabled_is_an_error() -> None:
    snap = build_snapshot([make_node("m1")])
    res = NodePorts().filter(CycleState(), Pod.parse(make_pod("p")), snap, np.arange(1, dtype=np.int32))
    st = res.status_at(0, NAME)
    assert st.code == Code.Error
    assert st.reasons == ('reading "PreFilterNodePorts" from cycleState: not found',)


def _sidecar_pod(name: str, spec: str, node: str | None = None, restart: str | None = "Always") -> dict:
    init: dict[str, Any] = {"name": "side", "image": "pause", "ports": ports(spec)}
    if restart:
        init["restartPolicy"] = restart
    d = make_pod(name, node=node)
    d["spec"]["initContainers"] = [init]
    return d


def test_sidecar_host_ports_count_for_the_incoming_pod() -> None:
    """util.GetHostPorts: restartable init containers run all along, so their ports count."""
    snap = build_snapshot([make_node("m1")], [new_pod("existing", "TCP/0.0.0.0/8080", node="m1")])
    assert run_filter(NodePorts(), _sidecar_pod("p", "TCP/0.0.0.0/8080"), snap) == [CONFLICT]


def test_plain_init_container_host_ports_do_not_count() -> None:
    snap = build_snapshot([make_node("m1")], [new_pod("existing", "TCP/0.0.0.0/8080", node="m1")])
    status = NodePorts().pre_filter(
        CycleState(), Pod.parse(_sidecar_pod("p", "TCP/0.0.0.0/8080", restart=None)), snap
    )
    assert isinstance(status, Status) and status.code == Code.Skip


def test_sidecar_host_ports_of_assigned_pods_are_in_use() -> None:
    snap = build_snapshot([make_node("m1")], [_sidecar_pod("existing", "UDP/10.0.0.1/53", node="m1")])
    assert run_filter(NodePorts(), new_pod("p", "UDP/0.0.0.0/53"), snap) == [CONFLICT]


def test_many_nodes_rows_subset_and_pod_removal() -> None:
    nodes = [make_node(f"n{i}") for i in range(5)]
    existing = [
        new_pod("a", "TCP/0.0.0.0/80", node="n1"),
        new_pod("b", "TCP/10.0.0.2/80", node="n3"),
        new_pod("c", "UDP/0.0.0.0/80", node="n4"),
    ]
    snap = build_snapshot(nodes, existing)
    pod = Pod.parse(new_pod("p", "TCP/10.0.0.1/80"))
    plugin = NodePorts()
    state = CycleState()
    plugin.pre_filter(state, pod, snap)
    rows = np.array([4, 3, 1, 0], np.int32)
    assert plugin.filter(state, pod, snap, rows).failed.tolist() == [False, False, True, False]
    snap.remove_pod("default-a")  # freeing the port makes n1 feasible again (preemption's premise)
    assert plugin.filter(state, pod, snap, rows).failed.tolist() == [False, False, False, False]
