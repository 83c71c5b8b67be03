"""A tiny cluster where a known weight change helps: packing small pods leaves room for big ones.

Four 4-CPU nodes; eight 1-CPU pods arrive, then two 4-CPU pods. Spreading the small pods (two per
node) leaves no node free for a big pod: 2 failures. Packing them (four per node on two nodes)
fits both big pods: 0 failures. The base config scores with NodeResourcesFit (LeastAllocated,
spreads) at weight 5 and BestFitScore (packs) at weight 1, so it spreads; a BestFitScore weight
above about a quarter of NodeResourcesFit's packs.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from kubesched.app import build_registry
from kubesched.config import load_config
from kubesched.tune.objective import Evaluator
from kubesched.tune.space import SearchSpace, WeightRange
from kubesched.tune.study import StudySettings
from kubesched.tune.workload import WorkloadSource


def _pod(name: str, cpu: str, t: int) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "annotations": {"kubesched.io/arrival-time": str(t)},
        },
        "spec": {
            "containers": [
                {"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}
            ]
        },
    }


def write_pack_case(folder: Path) -> tuple[Path, Path]:
    """(cluster.yaml, base.yaml) of the packing case."""
    docs: list[dict] = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": f"n{i}"},
            "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}},
        }
        for i in range(4)
    ]
    docs += [_pod(f"small-{i}", "1", i) for i in range(8)]
    docs += [_pod(f"big-{i}", "4", 8 + i) for i in range(2)]
    cluster = folder / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all(docs))
    base = folder / "base.yaml"
    base.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [
                    {
                        "schedulerName": "default-scheduler",
                        "plugins": {
                            "score": {
                                "disabled": [{"name": "*"}],
                                "enabled": [
                                    {"name": "NodeResourcesFit", "weight": 5},
                                    {"name": "BestFitScore", "weight": 1},
                                ],
                            }
                        },
                    }
                ],
            }
        )
    )
    return cluster, base


def pack_evaluator(folder: Path, weight_range: str = "1-100") -> Evaluator:
    from kubesched.sim.workload import from_manifests

    cluster, base = write_pack_case(folder)
    reg = build_registry([])
    space = SearchSpace(
        load_config(str(base), reg.points_of), reg, weight_range=WeightRange.parse(weight_range)
    )
    src = WorkloadSource()
    src.fix(from_manifests([str(cluster)]))
    return Evaluator(space, src, mode="arrival")


def settings(**kw: object) -> StudySettings:
    base: dict[str, object] = {
        "metrics": ["pods.failed"],
        "directions": ["minimize"],
        "trials": 8,
        "sim_seeds": [1],
    }
    base.update(kw)
    return StudySettings(**base)  # type: ignore[arg-type]
