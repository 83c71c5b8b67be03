"""The FGD protocol with GPUs described the DRA way gives the annotation model's result.

A slice of the openb default trace is run both ways (``run(..., gpu_model=...)``): every pod
lands on the same node, the cluster's GPUs end in the same state, and the protocol's measure
(unallocated GPU % per arrived %) and fragmentation are the same, for FGD and BestFit (whose
GPU choices differ from DynamicResources' first fit) and Random (which draws its GPU). The
DRA run's state is also what its claims' allocations say, nothing is left allocated for pods
that were dropped, and without the policy's device preference the results part: the
preference is what makes them equal."""

from __future__ import annotations

import numpy as np
import pytest

from kubesched.experiment.protocol import RunResult, policy_config, prepare, run_prepared
from kubesched.experiment.runner import subset
from kubesched.gpu.dra import dra_gpus
from kubesched.gpu.model import MILLI, pod_gpu_ask
from kubesched.gpu.state import GpuState
from kubesched.plugins.dynamicresources.plugin import DynamicResources
from kubesched.plugins.gpushare.opengpushare import OpenGpuShare
from kubesched.trace.bundled import node_list, pod_list
from kubesched.trace.openb import read_nodes, read_pods

LEVELS = range(131)


@pytest.fixture(scope="module")
def prepared():
    """30 GPU nodes spread over the node list and the first 260 pods of the default trace,
    tuned to 1.3 x their GPUs (about 300 arrivals). With seed 43, FGD and BestFit each choose
    GPUs other than DynamicResources' first fit a few times (GPUs fill in index order, so the
    choices mostly agree)."""
    nodes = subset(read_nodes(node_list("gpu")), 30)
    pods = read_pods(pod_list("default")).pods[:260]
    return prepare(pods, nodes, 43)


def dra_truth(result: RunResult) -> np.ndarray:
    """Milli left per GPU as the DRA store's allocations say."""
    snap = result.snapshot
    assert snap is not None
    st = GpuState.of(snap)
    left = np.where(np.arange(st.left.shape[1])[None, :] < st.count[:, None], MILLI, 0)
    for did, (node, i) in dra_gpus(snap.dra).where.items():
        row = snap.row_of[node]
        left[row, i] -= MILLI * snap.dra.allocated_devices().get(did, 0)
        left[row, i] -= int(sum(snap.dra.consumed_capacity().get(did, {}).values()))
    return left


@pytest.mark.parametrize("policy", ["FGD", "BestFit", "Random"])
def test_dra_gives_the_annotation_models_result(prepared, policy, monkeypatch):
    chosen = []  # the Reserves where the policy's GPUs were not the node's first fit
    first_fit = DynamicResources._preferred

    def preferred(self, s, node, claims, allocations, prefer):  # noqa: ANN001, ANN202
        out = first_fit(self, s, node, claims, allocations, prefer)
        if out is not allocations:
            chosen.append(node)
        return out

    monkeypatch.setattr(DynamicResources, "_preferred", preferred)
    ann = run_prepared(prepared, policy)
    dra = run_prepared(prepared, policy, gpu_model="dra")
    assert chosen  # the allocation followed the policy's GPU choice, not only its node choice
    assert ann.failed > 0 and ann.placed.sum() > 100  # a run that fills the cluster and drops pods
    assert dra.nodes == ann.nodes
    assert np.array_equal(dra.used_milli, ann.used_milli) and np.array_equal(dra.arrived_milli, ann.arrived_milli)
    np.testing.assert_array_equal(dra.frag_milli, ann.frag_milli)
    a, d = ann.curve(LEVELS), dra.curve(LEVELS)
    np.testing.assert_array_equal(d["unallocated"], a["unallocated"])
    assert np.isfinite(a["unallocated"][100])
    assert ann.snapshot is not None and dra.snapshot is not None
    np.testing.assert_array_equal(GpuState.of(dra.snapshot).left, GpuState.of(ann.snapshot).left)
    np.testing.assert_array_equal(dra_truth(dra), GpuState.of(dra.snapshot).left)
    # one claim per placed GPU pod, each reserved for its pod: the dropped pods' claims are gone
    gpu_pods = sum(1 for p, ok in zip(prepared.pods, dra.placed, strict=True) if ok and pod_gpu_ask(p) is not None)
    claims = list(dra.snapshot.dra.claims.values())
    assert len(claims) == gpu_pods and all(c.allocation is not None and len(c.reserved_for) == 1 for c in claims)


@pytest.mark.parametrize("policy", ["FGD", "BestFit"])
def test_without_the_policys_device_choice_the_results_part(prepared, monkeypatch, policy):
    """DynamicResources' first fit instead of the policy's GPU choice: other GPUs for some pods;
    the GPU state still follows the allocations."""
    ann = run_prepared(prepared, policy)
    monkeypatch.setattr(OpenGpuShare, "_prefer", lambda self, *args: [])
    dra = run_prepared(prepared, policy, gpu_model="dra")
    assert ann.snapshot is not None and dra.snapshot is not None
    a, d = GpuState.of(ann.snapshot), GpuState.of(dra.snapshot)
    assert any(a.indices_of(p.uid) != d.indices_of(p.uid) for p in prepared.pods)
    np.testing.assert_array_equal(dra_truth(dra), d.left)


def test_the_dra_policy_configuration_filters_gpus_before_allocating(prepared):
    doc = policy_config("FGD", prepared.typical, gpu_model="dra")
    plugins = doc["profiles"][0]["plugins"]
    assert plugins["filter"] == {
        "disabled": [{"name": "DynamicResources"}],
        "enabled": [{"name": "Open-Gpu-Share"}, {"name": "DynamicResources"}],
    }
    with pytest.raises(ValueError, match="unknown GPU model 'cdi'"):
        policy_config("FGD", prepared.typical, gpu_model="cdi")
