"""Node shapes of a node list (the openb trace's 15 GPU node shapes), named for node groups.

A shape is (CPU, memory, GPUs, card model); its name reads ``g2-8gpu-96c-384g`` (model, GPUs,
cores, GiB of memory) or ``cpu-32c-256g`` for nodes without GPUs.
"""

from __future__ import annotations

import dataclasses

from kubesched.api.objects import Node
from kubesched.gpu.model import node_gpu_count, node_gpu_model

HOSTNAME = "kubernetes.io/hostname"


def shape_name(node: Node) -> str:
    cores = node.allocatable.get("cpu", 0) // 1000
    gib = node.allocatable.get("memory", 0) // 2**30
    gpus = node_gpu_count(node)
    if gpus:
        model = (node_gpu_model(node) or "gpu").lower()
        return f"{model}-{gpus}gpu-{cores}c-{gib}g"
    return f"cpu-{cores}c-{gib}g"


def shapes_of(nodes: list[Node]) -> dict[str, tuple[Node, int]]:
    """Shape name -> (a template node of that shape, how many nodes of the list have it), in
    order of first appearance. Templates keep labels other than the hostname."""
    out: dict[str, tuple[Node, int]] = {}
    for nd in nodes:
        name = shape_name(nd)
        if name in out:
            tmpl, count = out[name]
            out[name] = (tmpl, count + 1)
            continue
        labels = {k: v for k, v in nd.labels.items() if k != HOSTNAME}
        raw = dict(nd.raw)
        raw["metadata"] = {**raw.get("metadata", {}), "name": name, "labels": labels}
        out[name] = (dataclasses.replace(nd, name=name, uid=name, labels=labels, raw=raw), 1)
    return out
