"""Fragmentation maths against the FGD simulator's own unit-test values, and typical pods."""


import numpy as np
import pytest
from gpu_testlib import TYPICAL_35, TYPICAL_WITH_CPU, node_frag, typical

from kubesched.gpu.frag import FragModel, sigmoid_score, typical_pods
from kubesched.gpu.model import GpuAsk
from kubesched.trace.bundled import pod_list
from kubesched.trace.openb import read_pods


@pytest.mark.parametrize(
    ("left", "cpu_left", "expected"),
    [
        ([200, 1000, 1000, 500], 1000, 2566.62),  # every typical pod lacks CPU: F = R * sum(p)
        ([1000, 1000, 1000, 1000], 1000, 3802.40),
        ([1000] * 8, 1000, 7604.80),
    ],
)
def test_frag_amount_matches_simulator_oracles(left, cpu_left, expected):
    assert node_frag(typical(TYPICAL_35), left, cpu_left, "1080") == pytest.approx(expected, abs=0.01)


def test_single_typical_pod_lacking_cpu_counts_all_idle_gpu():
    assert node_frag(typical(TYPICAL_35[:1]), [200, 1000, 1000, 500], 1000, "1080") == pytest.approx(
        251.91, abs=0.01
    )


@pytest.mark.parametrize(
    ("left", "cpu_left", "expected"),
    [([1000] * 8, 64000, 887.20), ([1000] * 4 + [0] * 4, 32000, 554.4), ([1000] * 4 + [0] * 4, 0, 4000.0)],
)
def test_frag_with_cpu_only_typical_pods(left, cpu_left, expected):
    assert node_frag(typical(TYPICAL_WITH_CPU), left, cpu_left, "P100") == pytest.approx(expected, abs=0.01)


def test_gpus_too_small_for_a_fitting_pod_are_fragments():
    # one spec of 500m, 1 GPU, p=1: GPUs with < 500 left are fragments, the rest are usable
    t = typical([(1000, 500, 1, "", 100.0)])
    assert node_frag(t, [300, 600, 1000, 0], 8000, "A") == 300.0
    assert node_frag(t, [300, 400, 100, 0], 8000, "A") == 800.0  # fits nowhere: everything idle
    # a model the spec cannot use makes every idle GPU a fragment
    t2 = typical([(1000, 500, 1, "B|C", 100.0)])
    assert node_frag(t2, [300, 600], 8000, "A") == 900.0
    assert node_frag(t2, [300, 600], 8000, "C") == 300.0


def test_moved_stats_equal_recomputed_stats():
    t = typical(TYPICAL_35)
    fm = FragModel(t, ["", "T4"])
    left = np.array([[1000, 700, 300, 0], [1000, 1000, 1000, 1000]], np.int64)
    cnt, small, total = fm.stats(left)
    c2, s2, t2 = fm.moved(cnt, small, total, np.array([700, 1000]), np.array([240, 0]), 1)
    after = np.array([[1000, 240, 300, 0], [0, 1000, 1000, 1000]], np.int64)
    e_cnt, e_small, e_total = fm.stats(after)
    assert (c2 == e_cnt).all() and (s2 == e_small).all() and (t2 == e_total).all()


def test_sigmoid_score():
    assert sigmoid_score(np.array([0.0, 1000.0, -1000.0, 1e6])).tolist() == [50, 73, 26, 100]


def test_typical_pods_cut_ties_and_renormalisation():
    asks = (
        [(1000, None)] * 5
        + [(2000, GpuAsk(1, 500))] * 3
        + [(3000, GpuAsk(1, 1000))]
        + [(500, GpuAsk(1, 1000))]
    )
    t = typical_pods(asks, threshold=90)
    # 5 + 3 = 80% < 90%, then a tie of 1 each: the larger key (3000m) goes first and reaches 90%
    assert t.cpu.tolist() == [1000, 2000, 3000]
    assert t.p.tolist() == pytest.approx([5 / 9, 3 / 9, 1 / 9])
    assert t.coverage == pytest.approx(0.9)
    assert t.milli.tolist() == [0, 500, 1000]


def test_typical_pods_of_the_default_trace():
    from kubesched.gpu.frag import typical_pods_of

    t = typical_pods_of(read_pods(pod_list("default")).pods)
    assert len(t) == 35
    assert t.coverage == pytest.approx(0.9526, abs=5e-5)
    assert (t.cpu[0], t.milli[0], t.count[0], t.spec[0]) == (3152, 810, 1, "")
    assert t.p[0] == pytest.approx(0.135, abs=5e-4)
    assert t.p.sum() == pytest.approx(1.0)
    assert t.p[t.milli == 0].sum() == pytest.approx(0.136, abs=1e-3)


@pytest.mark.parametrize("spec", ["TYPICAL_35", "TYPICAL_WITH_CPU"])
def test_one_node_amount_equals_the_vectorised_amount_exactly(spec):
    # node_amount (memoised, a one-node shortcut) must give amount()'s float, bit for bit: the
    # metrics tracker mixes both, and placements under FGD read the same numbers
    t = typical(TYPICAL_35 if spec == "TYPICAL_35" else TYPICAL_WITH_CPU)
    fm = FragModel(t, ["", "1080", "T4", "P100"])
    rng = np.random.default_rng(3)
    steps = sorted(set(np.asarray(fm.cpu).tolist()))
    cpus = [0, *steps, *(s - 1 for s in steps if s), *(s + 1 for s in steps), 200_000]
    for _ in range(400):
        g = int(rng.integers(1, 9))
        left = rng.choice([0, 100, 250, 470, 500, 810, 1000], size=8).astype(np.int64)
        left[g:] = 0
        cpu = int(rng.choice(cpus))
        model = int(rng.integers(0, 4))
        want = float(fm.amount(left[None, :], np.asarray([cpu]), np.asarray([model]))[0])
        assert fm.node_amount(left.tolist(), cpu, model) == want
