"""RolloutScore: rollouts of FGD on sampled futures among FGD's near-ties, late in a run."""

from __future__ import annotations

import numpy as np
import pytest

from kubesched.errors import InputError
from kubesched.experiment.protocol import policy_config, run
from kubesched.gpu.frag import TypicalPods
from kubesched.gpu.model import GPU_COUNT, GPU_INDEX, GPU_MILLI, GPU_MODEL
from kubesched.gpu.state import GpuState
from kubesched.learn.policies import rollout_config
from kubesched.plugins import BUILTIN
from kubesched.plugins.gpushare.common import cpu_left
from kubesched.plugins.gpushare.fgd import FGDScore
from kubesched.plugins.lookahead.rollout import UNFIT, RolloutScore, RowTable
from kubesched.testing import build_snapshot, make_node, make_pod, run_score

TYPICAL = TypicalPods.from_specs([
    (2000, 300, 1, "", 0.3), (4000, 500, 1, "", 0.2), (8000, 1000, 1, "", 0.2), (16000, 1000, 2, "", 0.1),
    (1000, 0, 0, "", 0.1), (6000, 700, 1, "T4", 0.1),
])  # fmt: skip


def _node(name: str, gpus: int, model: str = "G2", cpu: str = "32") -> dict:
    return make_node(name, cpu=cpu, memory="256Gi", labels={GPU_MODEL: model},
                     extra={GPU_COUNT: gpus, GPU_MILLI: 1000 * gpus})


def _pod(name: str, milli: int = 0, count: int = 1, *, cpu: int = 1000, node: str | None = None,
         index: str | None = None, model: str | None = None) -> dict:
    d = make_pod(name, requests={"cpu": f"{cpu}m", "memory": "1Gi"}, node=node)
    ann = {GPU_MILLI: str(milli), GPU_COUNT: str(count)} if milli else {}
    if index is not None:
        ann[GPU_INDEX] = index
    if model:
        ann[GPU_MODEL] = model
    d["metadata"]["annotations"] = ann
    return d


def test_rollout_table_scores_as_fgd_does():
    """The rollouts' FGD (a row's score per typical pod, memoised by state) gives FGDScore's own
    score on every node where the pod fits, and UNFIT exactly where it does not."""
    snap = build_snapshot(
        [_node("a", 4), _node("b", 2, "T4"), _node("c", 8, cpu="12"), _node("d", 1, cpu="3")],
        [_pod("u1", 800, node="a", index="0"), _pod("u2", 500, node="a", index="3"),
         _pod("u3", 1000, 1, node="b", index="1", cpu=4000), _pod("u4", 1000, 4, node="c", index="0-3", cpu=9000)],
    )
    fgd = FGDScore({"typicalPods": TYPICAL.to_args()})
    st = GpuState.of(snap)
    table = RowTable(fgd.frag_model(st), fgd.delta_scale)
    rows = np.arange(snap.n)
    cpu = cpu_left(snap, rows)
    got = np.stack([table.row(st.left[r], int(cpu[r]), int(st.model[r]))[0] for r in rows])
    for s, (c, milli, count, spec) in enumerate(zip(TYPICAL.cpu, TYPICAL.milli, TYPICAL.count, TYPICAL.spec,
                                                     strict=True)):
        want, _ = run_score(fgd, _pod(f"p{s}", int(milli), int(count) or 1, cpu=int(c), model=spec or None), snap)
        fits = got[:, s] != UNFIT
        assert np.array_equal(got[fits, s], np.asarray(want)[fits]), s
    # what does not fit: the 2-GPU pod on d (1 GPU) and on c (4 of 8 GPUs free, 3 cores left);
    # the T4-only pod off node b
    assert got[3, 3] == UNFIT and got[2, 3] == UNFIT
    assert [got[r, 5] == UNFIT for r in rows] == [True, False, True, True]


def _small():
    from kubesched.learn.data import Instance

    inst = Instance("default", "gpu", max_nodes=60, max_pods=400)
    return inst.prepare(3)


def test_inactive_rollout_is_fgd_and_active_one_decides():
    prep = _small()
    fgd = run(prep.nodes, prep.pods, "FGD", 3, prep.typical, keep_snapshot=False,
              config=policy_config("FGD", prep.typical))
    never = run(prep.nodes, prep.pods, "r", 3, prep.typical, keep_snapshot=False,
                config=rollout_config(prep.typical, {"fromAllocatedPct": 100.5}))
    assert never.nodes == fgd.nodes
    calls = []
    orig = RolloutScore._choose

    def spy(self, *a):
        k = orig(self, *a)
        calls.append(k)
        return k

    RolloutScore._choose = spy
    try:
        late = run(prep.nodes, prep.pods, "r", 3, prep.typical, keep_snapshot=False,
                   config=rollout_config(prep.typical, {"fromAllocatedPct": 0, "topK": 4, "margin": 100,
                                                        "horizon": 8, "futures": 2}))
    finally:
        RolloutScore._choose = orig
    assert len(calls) > 100  # every decision with two or more candidates
    changed = sum(k != 0 for k in calls)
    assert changed > 0
    assert late.nodes != fgd.nodes


def test_registered():
    assert BUILTIN["RolloutScore"] == "kubesched.plugins.lookahead.rollout:RolloutScore"


@pytest.mark.parametrize(("args", "field"), [({"topK": 0}, "topK"), ({"horizon": 2.5}, "horizon"),
                                             ({"fromAllocatedPct": "x"}, "fromAllocatedPct"),
                                             ({"depth": 3}, "depth")])
def test_bad_args(args, field):
    with pytest.raises(InputError) as e:
        RolloutScore(args)
    assert f"RolloutScoreArgs.{field}" in str(e.value)


def test_shipped_rollout_args_load_into_learn_eval():
    import json
    from pathlib import Path

    from kubesched.learn.cli import _rollout_candidate

    path = Path(__file__).resolve().parents[2] / "kubesched" / "learn" / "shipped" / "rollout.json"
    args = json.loads(path.read_text())
    plugin = RolloutScore(args)
    assert (plugin.k, plugin.horizon, plugin.futures, plugin.from_pct) == (3, 300, 2, 90.0)
    cand = _rollout_candidate(str(path))
    doc = cand.config("default", TYPICAL)
    prof = doc["profiles"][0]
    assert prof["plugins"]["score"]["enabled"] == [{"name": "RolloutScore", "weight": 101},
                                                   {"name": "FGDScore", "weight": 1}]
    assert {"name": "RolloutScore", "args": args} in prof["pluginConfig"]
