"""GPU asks from annotations, and the per-node GPU state following the snapshot."""

import pytest
from gpu_testlib import gpu_node, gpu_pod

from kubesched.api.objects import Node, Pod
from kubesched.gpu.model import GPU_COUNT, GPU_MILLI, GpuAsk, ask_from_annotations, format_index, parse_index
from kubesched.gpu.state import GpuState
from kubesched.testing import build_snapshot


def test_ask_parsing():
    assert ask_from_annotations({}) is None
    assert ask_from_annotations({GPU_MILLI: "0", GPU_COUNT: "1"}) is None
    assert ask_from_annotations({GPU_MILLI: "250", GPU_COUNT: "1"}) == GpuAsk(1, 250)
    a = ask_from_annotations(
        {GPU_MILLI: "1000", GPU_COUNT: "4", "alibabacloud.com/gpu-card-model": "V100M16|V100M32"}
    )
    assert (a.count, a.total_milli, a.models, a.sharing, a.tag) == (
        4,
        4000,
        ("V100M16", "V100M32"),
        False,
        "4-gpu",
    )
    assert ask_from_annotations({GPU_MILLI: "300"}).sharing


@pytest.mark.parametrize(
    ("ann", "msg"),
    [
        ({GPU_MILLI: "abc", GPU_COUNT: "1"}, "invalid integer"),
        ({GPU_MILLI: "1500", GPU_COUNT: "1"}, "more than one GPU"),
        ({GPU_MILLI: "500", GPU_COUNT: "2"}, "whole GPUs"),
        ({GPU_MILLI: "-5", GPU_COUNT: "1"}, "negative"),
    ],
)
def test_bad_asks(ann, msg):
    with pytest.raises(ValueError, match=msg):
        ask_from_annotations(ann)


def test_index_format():
    assert format_index((0, 1, 3)) == "0-1-3"
    assert parse_index("0-1-3") == (0, 1, 3)
    with pytest.raises(ValueError):
        parse_index("0,1")


def test_bound_pods_occupy_their_annotated_gpus_and_deletions_free_them():
    snap = build_snapshot(
        [gpu_node("a", 4), gpu_node("b", 2)],
        [
            gpu_pod("p1", 300, node="a", index="2"),
            gpu_pod("p2", 1000, 2, node="b", index="0-1"),
            gpu_pod("p3", 500, node="a"),  # no index: best fit (GPU 2, 700 left)
        ],
    )
    st = GpuState.of(snap)
    assert st.left[0].tolist() == [1000, 1000, 200, 1000]
    assert st.left[1].tolist()[:2] == [0, 0]
    assert st.total.tolist() == [3200, 0] and st.free.tolist() == [3, 0] and st.max_left.tolist() == [1000, 0]
    snap.remove_pod("default-p1")
    st = GpuState.of(snap)
    assert st.left[0].tolist() == [1000, 1000, 500, 1000]
    snap.add_pod(Pod.parse(gpu_pod("p4", 1000, 1, node="a")))  # whole GPU: lowest free index
    assert GpuState.of(snap).left[0].tolist() == [0, 1000, 500, 1000]
    assert GpuState.of(snap).indices_of("default-p4") == (0,)


def test_assignments_survive_a_rebuild_and_bad_indices_fall_back():
    snap = build_snapshot(
        [gpu_node("a", 4)], [gpu_pod("p1", 300, node="a", index="3"), gpu_pod("p2", 800, node="a", index="9")]
    )
    st = GpuState.of(snap)
    assert st.left[0].tolist() == [200, 1000, 1000, 700]  # index 9 does not exist: best fit instead
    st.release("default-p2", 0)
    st.assign(0, "default-p2", GpuAsk(1, 800), (2,))
    snap.add_node(Node.parse(gpu_node("b", 1)))
    st2 = GpuState.of(snap)  # structure changed: rebuilt, earlier choices kept
    assert st2.left[0].tolist() == [1000, 1000, 200, 700]
    assert st2.left[1].tolist()[:1] == [1000]
    assert st2.affinity[0, 0] == 2
