"""GpuMetricsTracker (incremental, with running sums and a fragmentation memo) equals
cluster_gpu_metrics (from scratch) after every placement and deletion."""

import random

import numpy as np
import pytest

from kubesched.experiment.protocol import build_scheduler, prepare
from kubesched.gpu.metrics import GpuMetricsTracker, cluster_gpu_metrics
from kubesched.gpu.state import GpuState
from kubesched.trace.bundled import node_list, pod_list
from kubesched.trace.openb import read_nodes, read_pods


def test_tracker_matches_from_scratch_with_deletions():
    nodes = read_nodes(node_list("gpu"))[::25]
    pods = read_pods(pod_list("default")).pods[:500]
    prep = prepare(pods, nodes, 3)
    sched = build_scheduler(prep.nodes, "BestFit", 3, prep.typical)
    snap = sched.snapshot
    tracker = GpuMetricsTracker(snap, prep.typical)
    rng = random.Random(3)
    placed = []
    for pod in prep.pods:
        sched.add_pending(pod)
        res = sched.schedule_one()
        if res is not None and res.node is not None:
            placed.append(pod)
        else:
            sched.delete_pod(pod)
        if placed and rng.random() < 0.3:  # pods leave too: GPUs and CPU come back
            sched.delete_pod(placed.pop(rng.randrange(len(placed))))
        got, want = tracker.update(), cluster_gpu_metrics(snap, prep.typical)
        assert (got.capacity_milli, got.idle_milli, got.used_gpus) == (want.capacity_milli, want.idle_milli, want.used_gpus)
        assert got.frag_milli == pytest.approx(want.frag_milli, rel=1e-12, abs=1e-9)
        st = GpuState.of(snap)
        assert (st.idle_sum, st.free_sum, st.gpus_sum) == (int(st.total.sum()), int(st.free.sum()), int(st.count.sum()))
    assert placed and np.isfinite(got.frag_milli)
