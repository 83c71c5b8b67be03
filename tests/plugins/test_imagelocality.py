"""ImageLocality: upstream image_locality_test.go tables, the image table cache, and a reference check."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.objects import Node
from kubesched.framework.cycle_state import CycleState
from kubesched.plugins.imagelocality import MB, ImageLocality, normalized_image_name
from kubesched.testing import as_pod, build_snapshot, make_node, make_pod, run_score

NODE_40_300_2000 = [(["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], 40 * MB),
                    (["gcr.io/300:latest", "gcr.io/300:v1"], 300 * MB),
                    (["gcr.io/2000:latest"], 2000 * MB)]  # fmt: skip
NODE_250_10 = [(["gcr.io/250:latest"], 250 * MB), (["gcr.io/10:latest", "gcr.io/10:v1"], 10 * MB)]
NODE_600_40_900 = [
    (["gcr.io/600:latest"], 600 * MB),
    (["gcr.io/40:latest"], 40 * MB),
    (["gcr.io/900:latest"], 900 * MB),
]
NODE_300_600_900 = [
    (["gcr.io/300:latest"], 300 * MB),
    (["gcr.io/600:latest"], 600 * MB),
    (["gcr.io/900:latest"], 900 * MB),
]
NODE_4000_30 = [(["gcr.io/4000:latest"], 4000 * MB), (["gcr.io/30:latest"], 30 * MB)]
NODE_20_30_40 = [
    (["gcr.io/20:latest"], 20 * MB),
    (["gcr.io/30:latest"], 30 * MB),
    (["gcr.io/40:latest"], 40 * MB),
]
NO_IMAGES: list = []


def image_pod(*images: str, init: tuple[str, ...] = ()) -> dict:
    spec: dict[str, Any] = {}
    if init:
        spec["initContainers"] = [{"name": f"i{i}", "image": im} for i, im in enumerate(init)]
    return make_pod(
        "p", containers=[{"name": f"c{i}", "image": im} for i, im in enumerate(images)], spec=spec
    )


def image_nodes(*statuses: list) -> list[dict]:
    return [make_node(f"node{i + 1}", images=s or None) for i, s in enumerate(statuses)]


TEST_40_250 = image_pod("gcr.io/40", "gcr.io/250")
TEST_40_300 = image_pod("gcr.io/40", "gcr.io/300")
TEST_MIN_MAX = image_pod("gcr.io/10", "gcr.io/4000")
TEST_300_600_900 = image_pod("gcr.io/300", "gcr.io/600", "gcr.io/900")
TEST_30_40 = image_pod("gcr.io/30", "gcr.io/40")
TEST_30_INIT_300 = image_pod("gcr.io/30", init=("gcr.io/300",))

IMAGE_LOCALITY = [
    # node2: 100 * (250M/2 - 23M) / (1000M * 2 - 23M) = 5
    ("two images spread on two nodes, prefer the larger image one",
     TEST_40_250, (NODE_40_300_2000, NODE_250_10), [0, 5]),
    # node1: 100 * ((40M + 300M)/2 - 23M) / (1000M * 2 - 23M) = 7
    ("two images on one node, prefer this node", TEST_40_300, (NODE_40_300_2000, NODE_250_10), [7, 0]),
    # node1: 4000M/2 >= 1000M * 2: max threshold
    ("if exceed limit, use limit", TEST_MIN_MAX, (NODE_4000_30, NODE_250_10), [100, 0]),
    # node1: 100 * (4000M/3 - 23M) / (1000M * 2 - 23M) = 66
    ("if exceed limit, use limit (with node which has no images present)",
     TEST_MIN_MAX, (NODE_4000_30, NODE_250_10, NO_IMAGES), [66, 0, 0]),
    # node1: 100 * (600M * 2/3 + 900M * 2/3 - 23M) / (1000M * 3 - 23M) = 32
    # node2: 100 * (300M * 1/3 + 600M * 2/3 + 900M * 2/3 - 23M) / (1000M * 3 - 23M) = 36
    ("pod with multiple large images, node2 is preferred",
     TEST_300_600_900, (NODE_600_40_900, NODE_300_600_900, NO_IMAGES), [32, 36, 0]),
    # node1: 100 * (30M + 40M * 1/2 - 23M) / (1000M * 2 - 23M) = 1
    ("pod with multiple small images", TEST_30_40, (NODE_20_30_40, NODE_4000_30), [1, 0]),
    # node1: 100 * (300M * 1/2 - 23M) / (1000M * 2 - 23M) = 6
    ("include InitContainers: two images spread on two nodes, prefer the larger image one",
     TEST_30_INIT_300, (NODE_40_300_2000, NODE_20_30_40), [6, 0]),
]  # fmt: skip


@pytest.mark.parametrize(("name", "p", "statuses", "expected"), IMAGE_LOCALITY)
def test_image_locality_priority(name: str, p: dict, statuses: tuple, expected: list[int]) -> None:
    snap = build_snapshot(image_nodes(*statuses))
    raw, normalized = run_score(ImageLocality(), p, snap)
    assert raw == expected
    assert normalized == expected  # no NormalizeScore


def fake_digest(content: str) -> str:
    return "sha256:" + hashlib.sha256(content.encode()).hexdigest()


@pytest.mark.parametrize(
    ("image", "normalized"),
    [
        ("root", "root:latest"),
        ("gcr.io:5000/root", "gcr.io:5000/root:latest"),
        ("root:tag", "root:tag"),
        ("root@" + fake_digest("root"), "root@" + fake_digest("root")),
    ],
)
def test_normalized_image_name(image: str, normalized: str) -> None:
    assert normalized_image_name(image) == normalized


def test_rows_subset_uses_all_nodes_for_spread() -> None:
    """Spread counts every node of the snapshot, not only the rows being scored."""
    snap = build_snapshot(image_nodes(NODE_600_40_900, NODE_300_600_900, NO_IMAGES))
    plugin = ImageLocality()
    got = plugin.score(CycleState(), as_pod(TEST_300_600_900), snap, np.asarray([1, 2]))
    assert got.tolist() == [36, 0]


def test_image_table_follows_node_changes() -> None:
    snap = build_snapshot(image_nodes(NODE_4000_30, NODE_250_10))
    plugin = ImageLocality()
    assert run_score(plugin, TEST_MIN_MAX, snap)[0] == [100, 0]
    snap.add_node(Node.parse(make_node("node3")))  # spread of gcr.io/4000 drops to 1/3
    assert run_score(plugin, TEST_MIN_MAX, snap)[0] == [66, 0, 0]
    snap.update_node(Node.parse(make_node("node3", images=NODE_4000_30)))  # now on 2 of 3 nodes
    assert run_score(plugin, TEST_MIN_MAX, snap)[0] == [100, 0, 100]


def test_pod_without_containers_scores_zero() -> None:
    snap = build_snapshot(image_nodes(NODE_4000_30))
    assert run_score(ImageLocality(), make_pod("empty", containers=[]), snap)[0] == [0]


def test_same_image_twice_counts_twice() -> None:
    """Each container adds its image's score, even when two containers share an image."""
    snap = build_snapshot(image_nodes(NODE_300_600_900, NO_IMAGES))
    # 2 x 300M/2 = 300M: 100 * (300M - 23M) / (2000M - 23M) = 14
    assert run_score(ImageLocality(), image_pod("gcr.io/300", "gcr.io/300"), snap)[0] == [14, 0]


# ---- vectorised score vs a straight per-node port of the Go code -----------------------------


def _go_score(node_images: list[dict[str, int]], pod_images: list[str], row: int) -> int:
    total = len(node_images)
    s = 0
    for image in pod_images:
        name = normalized_image_name(image)
        if name in node_images[row]:
            num = sum(1 for imgs in node_images if name in imgs)
            first_size = next(imgs[name] for imgs in node_images if name in imgs)
            s += int(float(first_size) * (float(num) / float(total)))
    max_threshold = 1000 * MB * len(pod_images)
    if s < 23 * MB:
        s = 23 * MB
    elif s > max_threshold:
        s = max_threshold
    return 100 * (s - 23 * MB) // (max_threshold - 23 * MB)


NAMES = ["a", "b:v1", "c", "d:latest"]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.dictionaries(st.sampled_from(NAMES), st.integers(0, 3000 * MB), max_size=4), min_size=1, max_size=6
    ),
    st.lists(st.sampled_from(["a", "b:v1", "c", "d", "e"]), min_size=1, max_size=4),
)
def test_score_matches_reference(nodes: list[dict[str, int]], images: list[str]) -> None:
    norm = [{normalized_image_name(k): v for k, v in n.items()} for n in nodes]
    statuses = [[([name], size) for name, size in n.items()] for n in norm]
    snap = build_snapshot(image_nodes(*statuses))
    raw, _ = run_score(ImageLocality(), image_pod(*images), snap)
    assert raw == [_go_score(norm, images, r) for r in range(len(nodes))]
