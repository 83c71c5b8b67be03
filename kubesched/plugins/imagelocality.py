"""ImageLocality: prefer nodes that already hold the pod's container images.

Each image of the pod (init containers and containers) found on a node adds its size scaled by
the fraction of nodes that have it, so a widely spread image counts for less and pods are not
all drawn to the few nodes that pulled it first. The sum is clamped to [23 MB, 1000 MB x number
of containers] and mapped linearly onto [0, 100].
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kubesched.framework.interfaces import MAX_NODE_SCORE, NodeLocal, ScorePlugin, go_div
from kubesched.state.memo import NODES

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.state.snapshot import Snapshot

NAME = "ImageLocality"

MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB

# image name -> (rows holding it, its size per row); count = len(rows)
_ImageTable = dict[str, tuple[np.ndarray, np.ndarray]]


def normalized_image_name(name: str) -> str:
    """Add the implicit ``:latest`` tag when the name has no tag (or digest) after its last '/'."""
    if name.rfind(":") <= name.rfind("/"):
        name += ":latest"
    return name


def build_image_table(snap: Snapshot) -> _ImageTable:
    """Where each image name is, and how big: one pass over the nodes' ``status.images``.

    As the scheduler cache, a node counts once per name (its first entry) and an image's size is
    the one first seen for that name (snapshot row order).
    """
    rows_of: dict[str, list[int]] = {}
    size_of: dict[str, int] = {}
    for row, node in enumerate(snap.nodes):
        seen: set[str] = set()
        for image in node.images:
            for name in image.names:
                if name in seen:
                    continue
                seen.add(name)
                rows_of.setdefault(name, []).append(row)
                size_of.setdefault(name, image.size)
    return {
        name: (np.asarray(rs, np.intp), np.full(len(rs), size_of[name], np.int64))
        for name, rs in rows_of.items()
    }


def calculate_priority(sum_scores: np.ndarray, num_containers: int) -> np.ndarray:
    """Clamp to [minThreshold, maxContainerThreshold x containers] and scale to [0, 100]."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    clamped = np.where(sum_scores < MIN_THRESHOLD, MIN_THRESHOLD, np.minimum(sum_scores, max_threshold))
    return go_div(MAX_NODE_SCORE * (clamped - MIN_THRESHOLD), max_threshold - MIN_THRESHOLD)


class ImageLocality(ScorePlugin, NodeLocal):
    """Score only; no args, no normalization."""

    name = NAME
    events_to_register = frozenset({"NodeAdd"})

    def score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        rows = np.asarray(rows, dtype=np.intp)
        table = snap.memo.get(NAME, lambda: build_image_table(snap), on=NODES)  # images live on nodes
        total_nodes = snap.n
        sums = np.zeros(snap.n, np.int64)
        containers = (*pod.init_containers, *pod.containers)
        for container in containers:
            entry = table.get(normalized_image_name(container.image))
            if entry is None:
                continue
            image_rows, sizes = entry
            spread = float(len(image_rows)) / float(total_nodes)
            sums[image_rows] += (sizes.astype(np.float64) * spread).astype(np.int64)
        return calculate_priority(sums[rows], len(containers))
