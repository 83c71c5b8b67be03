"""Go's sort.Sort as ported: a correct sort everywhere, insertion-sort stable up to 12 elements."""

from __future__ import annotations

import random

import pytest

from kubesched.multicluster.gosort import go_sort


@pytest.mark.parametrize("n", [0, 1, 2, 5, 12, 13, 40, 49, 50, 51, 200, 1000])
@pytest.mark.parametrize("pattern", ["random", "ties", "ascending", "descending", "organ"])
def test_sorts_every_input(n, pattern):
    rng = random.Random(n * 31 + len(pattern))
    if pattern == "random":
        keys = [rng.randrange(1000) for _ in range(n)]
    elif pattern == "ties":
        keys = [rng.randrange(3) for _ in range(n)]
    elif pattern == "ascending":
        keys = list(range(n))
    elif pattern == "descending":
        keys = list(range(n, 0, -1))
    else:
        keys = list(range(n // 2)) + list(range(n - n // 2, 0, -1))
    items = [(k, i) for i, k in enumerate(keys)]
    go_sort(items, lambda a, b: a[0] > b[0])  # TargetClustersList: more replicas first
    assert [k for k, _ in items] == sorted(keys, reverse=True)
    assert sorted(i for _, i in items) == list(range(n))


def test_up_to_twelve_elements_ties_keep_their_order():
    items = [(k, i) for i, k in enumerate([1, 3, 1, 3, 2, 2, 3, 1, 2, 3, 1, 2])]
    go_sort(items, lambda a, b: a[0] > b[0])
    assert items == sorted(items, key=lambda x: -x[0])  # Python's sort is stable




def test_matches_go_sort_output():
    """Orders that Go 1.19.8's sort.Sort produced (a Less on keys only, as TargetClustersList),
    recorded in data/go119_sort_vectors.txt: ``n mod keys order``. Go 1.19 shuffled with xorshift
    shifts (13, 17, 5); later Go versions, which Karmada builds with, use (13, 7, 17), the default."""
    from pathlib import Path

    lines = (Path(__file__).parent / "data" / "go119_sort_vectors.txt").read_text().split("\n")
    checked = 0
    for line in filter(None, lines):
        _, _, keys, order = line.split()
        items = [(int(k), i) for i, k in enumerate(keys.split(","))]
        go_sort(items, lambda a, b: a[0] > b[0], xorshift=(13, 17, 5))
        assert [i for _, i in items] == [int(x) for x in order.split(",")]
        checked += 1
    assert checked == 21
