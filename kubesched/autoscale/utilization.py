"""A node's utilisation as Cluster Autoscaler reckons it (``simulator/utilization/info.go``).

A GPU node (GPUs allocatable, or labelled with a GPU model) is judged by its GPUs alone: the share
of its GPUs allocated, 0 when the label is there but no GPU is allocatable (CA's "unready GPU",
so such a node can still be removed). Any other node: the larger of requested CPU and memory over
allocatable; a node with CPU or memory allocatable missing or 0 has no utilisation (NaN, CA's
error), and is never unneeded.

CA's ``--ignore-daemonsets-utilization`` and ``--ignore-mirror-pods-utilization`` (scaleDown
``ignoreDaemonSetsUtilization`` / ``ignoreMirrorPodsUtilization``, both off by default as
upstream) take those pods' requests out of both the requested and the allocatable amounts of CPU
and memory, so a node running only DaemonSets reads as empty. A DaemonSet pod is one owned by a
DaemonSet or annotated ``cluster-autoscaler.kubernetes.io/daemonset-pod: "true"``; a mirror pod
carries ``kubernetes.io/config.mirror``. Given the time, pods terminating longer than their grace
period plus 30 s are left out as well (CA's ``IsPodLongTerminating``).
"""

from __future__ import annotations

import datetime as dt
from typing import NamedTuple

import numpy as np

from kubesched.api.objects import Node, Pod
from kubesched.gpu.model import GPU_MODEL, node_gpu_count
from kubesched.gpu.state import GpuState
from kubesched.sim.gpu import NVIDIA_GPU
from kubesched.state.snapshot import Snapshot

DAEMONSET_POD = "cluster-autoscaler.kubernetes.io/daemonset-pod"
MIRROR_POD = "kubernetes.io/config.mirror"
DEFAULT_GRACE = 30.0  # apiv1.DefaultTerminationGracePeriodSeconds
LONG_TERMINATING_EXTRA = 30.0  # drain.PodLongTerminatingExtraThreshold


def is_daemonset_pod(pod: Pod) -> bool:
    """pod_util.IsDaemonSetPod: owned by a DaemonSet, or annotated as one (custom controllers)."""
    return any(o.kind == "DaemonSet" for o in pod.owners) or pod.annotations.get(DAEMONSET_POD) == "true"


def is_mirror_pod(pod: Pod) -> bool:
    return MIRROR_POD in pod.annotations


def long_terminating(pod: Pod, now: float) -> bool:
    """drain.IsPodLongTerminating: deleted longer ago than its grace period plus 30 s."""
    stamp = (pod.raw.get("metadata") or {}).get("deletionTimestamp")
    if not isinstance(stamp, str):
        return False
    try:
        deleted = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return False
    grace = (pod.raw.get("spec") or {}).get("terminationGracePeriodSeconds")
    grace = float(grace) if isinstance(grace, int | float) and not isinstance(grace, bool) else DEFAULT_GRACE
    return deleted + grace + LONG_TERMINATING_EXTRA < now


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


def _share(req: np.ndarray, alloc: np.ndarray, left: np.ndarray | None = None) -> np.ndarray:
    """req over what is left of alloc (all of it by default); NaN where alloc is 0 (CA's error)."""
    denom = alloc if left is None else left
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(alloc > 0, req / np.where(denom != 0, denom, 1), np.nan)


def utilization(
    snap: Snapshot, *, ignore_daemonsets: bool = False, ignore_mirror: bool = False, now: float | None = None
) -> Utilization:
    n = snap.n
    alloc, req = snap.alloc[:n], snap.requested[:n]
    ci, mi = snap.res_index["cpu"], snap.res_index["memory"]
    req_c, req_m = req[:, ci].astype(float), req[:, mi].astype(float)
    left_c, left_m = alloc[:, ci].astype(float), alloc[:, mi].astype(float)
    if ignore_daemonsets or ignore_mirror or now is not None:  # per pod: only when asked (the simulator never is)
        for row in range(n):
            for p in snap.pods_on[row].values():
                c, m = p.requests.get("cpu", 0), p.requests.get("memory", 0)
                if (ignore_daemonsets and is_daemonset_pod(p)) or (ignore_mirror and is_mirror_pod(p)):
                    req_c[row] -= c
                    req_m[row] -= m
                    left_c[row] -= c
                    left_m[row] -= m
                elif now is not None and long_terminating(p, now):
                    req_c[row] -= c
                    req_m[row] -= m
    cpu, mem = _share(req_c, alloc[:, ci], left_c), _share(req_m, alloc[:, mi], left_m)
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


def node_utilization(snap: Snapshot, *, ignore_daemonsets: bool = False, ignore_mirror: bool = False) -> np.ndarray:
    """Per node row: the node's utilisation (NaN: it cannot be computed)."""
    if snap.n == 0:
        return np.zeros(0)
    return utilization(snap, ignore_daemonsets=ignore_daemonsets, ignore_mirror=ignore_mirror).value
