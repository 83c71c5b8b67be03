"""Open-Gpu-Share's filter and GPU choice, and each policy's score on hand-built nodes."""

import numpy as np
import pytest
from gpu_testlib import TYPICAL_35, gpu_node, gpu_pod, typical

from kubesched.api.objects import Pod
from kubesched.errors import InputError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.status import Code
from kubesched.gpu.model import GPU_INDEX, GpuAsk
from kubesched.gpu.state import GpuState
from kubesched.plugins.gpushare.bestfit import BestFitScore
from kubesched.plugins.gpushare.clustering import GpuClusteringScore
from kubesched.plugins.gpushare.dotproduct import DotProductScore
from kubesched.plugins.gpushare.fgd import FGDScore
from kubesched.plugins.gpushare.opengpushare import OpenGpuShare
from kubesched.plugins.gpushare.random_score import RandomScore
from kubesched.plugins.gpushare.scores import packing_array as packing_score
from kubesched.testing import build_snapshot, run_filter, run_score


def _cluster():
    # a: 4 x G2 with GPU 0 at 200 left and GPU 3 at 500 left; b: 2 x T4 free; c: no GPU
    return build_snapshot(
        [gpu_node("a", 4, "G2"), gpu_node("b", 2, "T4"), gpu_node("c", 0, "")],
        [gpu_pod("u1", 800, node="a", index="0"), gpu_pod("u2", 500, node="a", index="3")],
    )


@pytest.mark.parametrize(
    ("pod", "verdicts"),
    [
        (gpu_pod("cpu-only"), ["ok", "ok", "ok"]),
        (gpu_pod("share", 600), ["ok", "ok", "no GPU"]),
        (gpu_pod("share-big", 1000, 1), ["ok", "ok", "no GPU"]),
        (gpu_pod("two", 1000, 2), ["ok", "ok", "no GPU"]),
        (gpu_pod("three", 1000, 3), ["Insufficient GPU", "Insufficient GPU", "no GPU"]),
        (gpu_pod("t4-only", 300, model="T4"), ["model", "ok", "no GPU"]),
        (gpu_pod("any-of", 300, model="V100M16|G2"), ["ok", "model", "no GPU"]),
    ],
)
def test_filter(pod, verdicts):
    got = run_filter(OpenGpuShare(), pod, _cluster())
    short = []
    for st in got:
        msg = st.message
        short.append(
            "ok" if st.ok else "no GPU" if "have no GPU" in msg else "model" if "card model" in msg else msg
        )
    assert short == verdicts
    codes = {st.message: st.code for st in got if not st.ok}
    if "Insufficient GPU" in codes:
        assert codes["Insufficient GPU"] == Code.Unschedulable
    for msg, code in codes.items():
        if msg != "Insufficient GPU":
            assert code == Code.UnschedulableAndUnresolvable


def test_filter_sharing_needs_one_gpu_with_room():
    snap = _cluster()
    # node a has 1000, 1000 free too: make them busy so only 200 and 500 remain
    snap.add_pod(Pod.parse(gpu_pod("u3", 1000, 2, node="a", index="1-2")))
    verdicts = [st.ok for st in run_filter(OpenGpuShare(), gpu_pod("s", 600), snap)]
    assert verdicts == [False, True, False]
    assert [st.ok for st in run_filter(OpenGpuShare(), gpu_pod("s", 500), snap)] == [True, True, False]


def test_bad_annotation_is_unresolvable_at_prefilter():
    pod = gpu_pod("bad", 500, 2)
    st = run_filter(OpenGpuShare(), pod, _cluster())[0]
    assert st.code == Code.UnschedulableAndUnresolvable and "whole GPUs" in st.message


def _reserve(method, pod_dict, snap, extra_plugins=()):
    handle = Handle(snap, rng=np.random.default_rng(7))

    class _FW:  # the profile's plugins, as the framework exposes them to Open-Gpu-Share
        plugins = {p.name: p for p in extra_plugins}

    handle.framework = _FW()
    plugin = OpenGpuShare({"gpuSelMethod": method}, handle)
    pod = Pod.parse(pod_dict)
    state = CycleState()
    node = "a"
    snap.add_pod(pod.with_node(node))  # the scheduler assumes before Reserve
    status = plugin.reserve(state, pod, node)
    return plugin, state, pod, status


@pytest.mark.parametrize(
    ("method", "milli", "expected"),
    [("best", 150, "0"), ("best", 300, "3"), ("worst", 150, "1"), ("best", 1000, "1")],
)
def test_reserve_gpu_choice(method, milli, expected):
    snap = _cluster()  # node a left: [200, 1000, 1000, 500]
    _, _, pod, status = _reserve(method, gpu_pod("p", milli), snap)
    assert status is None
    assert pod.annotations[GPU_INDEX] == expected
    assert snap.pod_by_uid[pod.uid].annotations[GPU_INDEX] == expected
    left = GpuState.of(snap).left[0].tolist()
    assert sum(left) == 2700 - milli


def test_reserve_whole_gpus_take_lowest_free_and_unreserve_restores():
    snap = _cluster()
    plugin, state, pod, status = _reserve("best", gpu_pod("p", 1000, 2), snap)
    assert status is None and pod.annotations[GPU_INDEX] == "1-2"
    assert GpuState.of(snap).left[0].tolist() == [200, 0, 0, 500]
    plugin.unreserve(state, pod, "a")
    snap.remove_pod(pod.uid)
    assert GpuState.of(snap).left[0].tolist() == [200, 1000, 1000, 500]
    assert GPU_INDEX not in pod.annotations


def test_reserve_random_is_seeded_and_only_picks_fitting_gpus():
    picks = set()
    for _ in range(20):
        snap = _cluster()
        _, _, pod, _ = _reserve("random", gpu_pod("p", 400), snap)
        picks.add(pod.annotations[GPU_INDEX])
    assert picks == {"1"} or picks <= {"1", "2", "3"}  # same seed every time: one pick
    assert len(picks) == 1


def test_reserve_fgd_takes_the_least_fragmenting_gpu():
    # left [200, 1000, 1000, 600]; the target workload is 500m pods. Best fit would take GPU 3 and
    # leave 100m nobody can use; FGD takes GPU 1 (500 left: still usable) and adds no fragment.
    fgd = FGDScore({"typicalPods": [{"milliCpu": 1000, "milliGpu": 500, "gpuCount": 1, "percentage": 1.0}]})

    def cluster():
        return build_snapshot(
            [gpu_node("a", 4)],
            [gpu_pod("u1", 800, node="a", index="0"), gpu_pod("u2", 400, node="a", index="3")],
        )

    _, _, pod, status = _reserve("FGDScore", gpu_pod("p", 500), cluster(), [fgd])
    assert status is None and pod.annotations[GPU_INDEX] == "1"
    _, _, pod, _ = _reserve("best", gpu_pod("p", 500), cluster())
    assert pod.annotations[GPU_INDEX] == "3"


def test_unknown_sel_method_is_an_input_error():
    with pytest.raises(InputError, match="Open-Gpu-ShareArgs.gpuSelMethod"):
        OpenGpuShare({"gpuSelMethod": "fastest"})


def test_packing_oracles():
    left = np.array([[200, 1000, 1000, 500]])
    assert packing_score(left, np.array([4]), 1000, 2).tolist() == [48]
    assert packing_score(np.array([[1000] * 4]), np.array([4]), 1000, 2).tolist() == [29]
    assert packing_score(np.array([[1000] * 8]), np.array([8]), 1000, 2).tolist() == [25]
    assert packing_score(left, np.array([4]), 200, 2).tolist() == [93]


def test_bestfit_dotprod_clustering_on_hand_built_nodes():
    snap = _cluster()  # a: 62 CPUs left (2 pods of 1 CPU), 2700 milli left; b: 64 CPUs, 2000 left
    pod = gpu_pod("p", 500, cpu="2")
    rows = [0, 1]
    # BestFit raw: int(100 * (1 - [(62000-2000)/128000*0.5 + (2700-500)/8000*0.5]))
    raw, norm = run_score(BestFitScore(), pod, snap, rows)
    assert raw == [
        int(100 * (1 - (60000 / 128000 * 0.5 + 2200 / 8000 * 0.5))),
        int(100 * (1 - (62000 / 128000 * 0.5 + 1500 / 8000 * 0.5))),
    ]
    assert raw == [62, 66] and norm == [0, 100]
    # DotProd: int(100 * (1 - [(cl/128k)(2000/128k) + (R/8k)(500/8k)] / 2))
    raw, _ = run_score(DotProductScore(), pod, snap, rows)
    dot = [
        (cl / 128000) * (2000 / 128000) + (r / 8000) * (500 / 8000)
        for cl, r in ((62000, 2700), (64000, 2000))
    ]
    assert raw == [int(100 * (1 - d / 2)) for d in dot] == [98, 98]
    # a node without the pod's CPU scores 0
    d = (64000 / 128000) * (63000 / 128000) + (2000 / 8000) * (500 / 8000)
    assert run_score(DotProductScore(), gpu_pod("big", 500, cpu="63"), snap, rows)[0] == [
        0,
        int(100 * (1 - d / 2)),
    ]
    # Clustering: a holds only sharing pods (+75), b holds none (+25); base = 25*(8000-R)/8000
    raw, _ = run_score(GpuClusteringScore(), pod, snap, rows)
    assert raw == [25 * (8000 - 2700) // 8000 + 75, 25 * 6000 // 8000 + 25]
    raw, _ = run_score(GpuClusteringScore(), gpu_pod("w", 1000, 1), snap, rows)
    assert raw == [16 + 0, 18 + 25]
    assert run_score(GpuClusteringScore(), gpu_pod("c"), snap, rows)[0] == [0, 0]


def test_random_score_picks_one_feasible_node():
    snap = _cluster()
    handle = Handle(snap, rng=np.random.default_rng(3))
    raw, _ = run_score(RandomScore(None, handle), gpu_pod("p", 300), snap, [0, 1, 2])
    assert sorted(raw) == [0, 0, 100]


def test_fgd_score_prefers_the_node_it_fragments_least():
    t = typical(TYPICAL_35)
    fgd = FGDScore({"typicalPods": t.to_args()})
    snap = build_snapshot(
        [gpu_node("x", 4, "T4"), gpu_node("y", 4, "T4")], [gpu_pod("u", 600, node="x", index="0")]
    )
    # a 400m pod fills x's GPU 0 exactly (400 left) on x; on y it breaks a fresh GPU
    raw, _ = run_score(fgd, gpu_pod("p", 400, cpu="2"), snap, [0, 1])
    assert raw[0] > raw[1]
    # the per-node cache gives the same answer after the state changes and back
    snap.add_pod(Pod.parse(gpu_pod("v", 1000, 1, node="y")))
    raw2, _ = run_score(fgd, gpu_pod("p2", 400, cpu="2"), snap, [0, 1])
    fresh = FGDScore({"typicalPods": t.to_args()})
    assert raw2 == run_score(fresh, gpu_pod("p3", 400, cpu="2"), snap, [0, 1])[0]


def test_fgd_delta_scale_sets_the_quantisation_step():
    t = typical(TYPICAL_35)
    snap = build_snapshot(
        [gpu_node("x", 4, "T4"), gpu_node("y", 4, "T4")], [gpu_pod("u", 600, node="x", index="0")]
    )
    pod = gpu_pod("p", 400, cpu="2")
    default = run_score(FGDScore({"typicalPods": t.to_args()}), pod, snap, [0, 1])[0]
    assert run_score(FGDScore({"typicalPods": t.to_args(), "deltaScale": 1000}), pod, snap, [0, 1])[0] == default
    # the delta behind each score, recovered from the default scale, scored at another scale
    fine = run_score(FGDScore({"typicalPods": t.to_args(), "deltaScale": 100.0}), pod, snap, [0, 1])[0]
    assert fine != default
    assert (np.sign(np.asarray(fine) - 50) == np.sign(np.asarray(default) - 50)).all()
    with pytest.raises(InputError, match="FGDScoreArgs.deltaScale: invalid value 0"):
        FGDScore({"typicalPods": t.to_args(), "deltaScale": 0})
    with pytest.raises(InputError, match="FGDScoreArgs.deltaScale"):
        FGDScore({"typicalPods": t.to_args(), "deltaScale": "big"})


def test_fgd_args_errors():
    with pytest.raises(InputError, match="exactly one of typicalPods or workloadFile"):
        FGDScore({})
    with pytest.raises(InputError, match=r"FGDScoreArgs.typicalPods\[0\].percentage"):
        FGDScore({"typicalPods": [{"milliCpu": 1000, "percentage": 2}]})
    with pytest.raises(InputError, match=r"typicalPods\[0\].colour"):
        FGDScore({"typicalPods": [{"milliCpu": 1000, "percentage": 0.5, "colour": 1}]})
    assert GpuAsk(1, 500) == GpuAsk(1, 500)


def test_fgd_typical_pods_from_a_workload_file(tmp_path):
    p = tmp_path / "w.csv"
    p.write_text(
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1000,1,1,500\nb,1000,1,1,500\nc,2000,1,0,0\nd,3000,1,2,1000\n"
    )
    fgd = FGDScore({"workloadFile": str(p), "popularityThreshold": 60})
    # 2 of 4 pods are <1000m, 1 x 500m> (50 %), then the tie between c and d: the larger key (3000m)
    assert fgd.typical.to_args() == [
        {
            "milliCpu": 1000,
            "milliGpu": 500,
            "gpuCount": 1,
            "gpuModel": "",
            "percentage": pytest.approx(2 / 3),
        },
        {
            "milliCpu": 3000,
            "milliGpu": 1000,
            "gpuCount": 2,
            "gpuModel": "",
            "percentage": pytest.approx(1 / 3),
        },
    ]
    with pytest.raises(InputError, match=r"nope.csv: cannot read"):
        FGDScore({"workloadFile": str(tmp_path / "nope.csv")})
    with pytest.raises(InputError, match="FGDScoreArgs.popularityThreshold: only valid with workloadFile"):
        FGDScore({"typicalPods": [{"milliCpu": 1, "percentage": 1}], "popularityThreshold": 50})
