"""``FilterPlugin.passes`` (the verdict without reasons, used by the equivalence cache's
refreshes) agrees with ``filter`` row by row, on random clusters."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.objects import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.plugins.gpushare.opengpushare import OpenGpuShare
from kubesched.plugins.noderesources.fit import NodeResourcesFit
from kubesched.testing import build_snapshot, make_node, make_pod

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "gpu"))
from gpu_testlib import gpu_node, gpu_pod  # noqa: E402

EXT = "example.com/foo"
IGNORED = "ignored.example.com/bar"


def _agree(plugin, pod: dict, snap) -> np.ndarray:
    state = CycleState()
    p = Pod.parse(pod)
    plugin.pre_filter(state, p, snap)
    rows = np.arange(snap.n, dtype=np.int32)
    want = plugin.filter(state, p, snap, rows).code == 0
    got = plugin.passes(state, p, snap, rows)
    assert got is not None
    np.testing.assert_array_equal(got, want)
    sub = rows[::2]  # any subset of rows, in any order
    np.testing.assert_array_equal(plugin.passes(state, p, snap, sub[::-1]), want[::2][::-1])
    return want


@settings(max_examples=60, deadline=None)
@given(
    nodes=st.lists(
        st.tuples(st.integers(0, 8), st.integers(0, 16), st.integers(0, 4), st.integers(1, 6)), min_size=1, max_size=8
    ),
    used=st.lists(st.tuples(st.integers(0, 7), st.integers(0, 3000), st.integers(0, 3)), max_size=12),
    ask=st.tuples(st.integers(0, 4000), st.integers(0, 6), st.integers(0, 3), st.booleans(), st.booleans()),
)
def test_node_resources_fit(nodes, used, ask):
    node_docs = []
    for i, (cpu, mem_gi, ext, pods) in enumerate(nodes):
        extra = {EXT: ext} if ext else {}
        node_docs.append(make_node(f"n{i}", cpu=str(cpu), memory=f"{mem_gi}Gi", pods=pods, extra=extra))
    bound = []
    for j, (row, cpu_m, ext) in enumerate(used):
        if row < len(nodes):
            req = {"cpu": f"{cpu_m}m"} | ({EXT: str(ext)} if ext else {})
            bound.append(make_pod(f"b{j}", requests=req, node=f"n{row}"))
    snap = build_snapshot(node_docs, bound)  # nodes may be over-committed: the snapshot keeps what it is told
    cpu_m, mem_gi, ext, ignored, unknown = ask
    req = {"cpu": f"{cpu_m}m", "memory": f"{mem_gi}Gi"}
    if ext:
        req[EXT] = str(ext)
    if ignored:
        req[IGNORED] = "5"
    if unknown:
        req["unknown.example.com/x"] = "1"
    plugin = NodeResourcesFit({"ignoredResources": [IGNORED]})
    _agree(plugin, make_pod("p", requests=req), snap)


@settings(max_examples=60, deadline=None)
@given(
    gpus=st.lists(st.tuples(st.integers(0, 4), st.sampled_from(["A", "B", ""])), min_size=1, max_size=6),
    placed=st.lists(st.tuples(st.integers(0, 5), st.sampled_from([100, 500, 1000])), max_size=10),
    ask=st.tuples(st.sampled_from([0, 200, 700, 1000]), st.integers(1, 3), st.sampled_from([None, "A", "A|B"])),
)
def test_open_gpu_share(gpus, placed, ask):
    nodes = [gpu_node(f"g{i}", n, model) for i, (n, model) in enumerate(gpus)]
    pods = [
        gpu_pod(f"b{j}", milli, 1, node=f"g{row}")
        for j, (row, milli) in enumerate(placed)
        if row < len(gpus) and gpus[row][0]
    ]
    snap = build_snapshot(nodes, pods)
    milli, count, model = ask
    if milli != 1000:
        count = 1
    doc = gpu_pod("p", milli, count, model=model) if milli else make_pod("p", requests={"cpu": "1"})
    _agree(OpenGpuShare(None, None), doc, snap)
