"""A node's utilisation as Cluster Autoscaler reckons it (``simulator/utilization/info.go``).

A GPU node (GPUs allocatable, or labelled with a GPU model) is judged by its GPUs alone: the share
of its GPUs allocated, 0 when the label is there but no GPU is allocatable (CA's "unready GPU",
so such a node can still be removed). Any other node: the larger of requested CPU and memory over
allocatable; a node with CPU or memory allocatable missing or 0 has no utilisation (NaN, CA's
error), and is never unneeded.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from kubesched.api.objects import Node
from kubesched.gpu.model import GPU_MODEL, node_gpu_count
from kubesched.gpu.state import GpuState
from kubesched.sim.gpu import NVIDIA_GPU
from kubesched.state.snapshot import Snapshot


def is_gpu_node(node: Node) -> bool:
    """CA's GpuConfig for a node: GPUs allocatable, or the GPU model label (GPUs not ready yet)."""
    return node_gpu_count(node) > 0 or node.allocatable.get(NVIDIA_GPU, 0) > 0 or GPU_MODEL in node.labels


class Utilization(NamedTuple):
    """Per node row: CPU, memory and GPU shares and the node's utilisation (NaN where CA's
    ``Calculate`` returns an error; CPU and memory are not computed for GPU nodes)."""

    cpu: np.ndarray
    memory: np.ndarray
    gpu: np.ndarray
    value: np.ndarray


def _share(req: np.ndarray, alloc: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(alloc > 0, req / np.where(alloc > 0, alloc, 1), np.nan)


def utilization(snap: Snapshot) -> Utilization:
    n = snap.n
    alloc, req = snap.alloc[:n], snap.requested[:n]
    ci, mi = snap.res_index["cpu"], snap.res_index["memory"]
    cpu, mem = _share(req[:, ci].astype(float), alloc[:, ci]), _share(req[:, mi].astype(float), alloc[:, mi])
    value = np.where(np.isnan(cpu) | np.isnan(mem), np.nan, np.fmax(cpu, mem))
    gpu = np.full(n, np.nan)
    gpu_rows = np.fromiter((is_gpu_node(nd) for nd in snap.nodes), bool, n)
    if gpu_rows.any():
        gs = GpuState.of(snap)
        count = gs.count[:n]
        shared = np.where(count > 0, 1.0 - gs.total[:n] / np.maximum(count * 1000, 1), 0.0)
        nv = snap.res_index.get(NVIDIA_GPU)
        whole = _share(req[:, nv].astype(float), alloc[:, nv]) if nv is not None else np.full(n, np.nan)
        gpu = np.where(gpu_rows, np.where(count > 0, shared, np.nan_to_num(whole, nan=0.0)), np.nan)
        value = np.where(gpu_rows, gpu, value)
        cpu = np.where(gpu_rows, np.nan, cpu)
        mem = np.where(gpu_rows, np.nan, mem)
    return Utilization(cpu, mem, gpu, value)


def node_utilization(snap: Snapshot) -> np.ndarray:
    """Per node row: the node's utilisation (NaN: it cannot be computed)."""
    if snap.n == 0:
        return np.zeros(0)
    return utilization(snap).value
