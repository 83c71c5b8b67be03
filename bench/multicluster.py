"""Cluster-level decisions at scale: N workloads over M member clusters of K nodes each.

    python bench/multicluster.py [--workloads 1000] [--clusters 50] [--nodes 200] [--estimator both] [--apply]

Members are kubesched clusters built from the shipped openb node list (nodes drawn with a seed,
30 % of them running one openb pod); workloads are Deployments with openb pod shapes (so templates
repeat as in a real fleet; ``--distinct`` gives each its own), 1 to 20 replicas, under four policies (dynamic weights over at most 3
clusters, Aggregated, static weights, Duplicated to 2 clusters by label). Reports wall and CPU
time of the decisions (and, with --apply, of creating the replicas in the members too), and what
the simulated estimator did. Measures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kubesched.api.objects import Node, Pod  # noqa: E402
from kubesched.load import ClusterObjects  # noqa: E402
from kubesched.multicluster.api import Binding, Cluster, parse_placement  # noqa: E402
from kubesched.multicluster.federation import Federation  # noqa: E402
from kubesched.multicluster.member import MemberCluster  # noqa: E402

POLICIES = [
    {"spreadConstraints": [{"spreadByField": "cluster", "maxGroups": 3}],
     "replicaScheduling": {"replicaSchedulingType": "Divided", "weightPreference": {"dynamicWeight": "AvailableReplicas"}}},
    {"clusterAffinity": {"labelSelector": {"matchLabels": {"tier": "edge"}}},
     "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}},
    {"clusterAffinity": {"labelSelector": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}},
     "replicaScheduling": {"replicaSchedulingType": "Divided", "weightPreference": {"staticWeightList": [
         {"targetCluster": {"labelSelector": {"matchLabels": {"zone": "a"}}}, "weight": 2},
         {"targetCluster": {"labelSelector": {"matchLabels": {"zone": "b"}}}, "weight": 1}]}}},
    {"clusterAffinity": {"labelSelector": {"matchLabels": {"tier": "cloud"}}},
     "spreadConstraints": [{"spreadByField": "cluster", "maxGroups": 2}]},
]


def build(workloads: int, clusters: int, nodes: int, seed: int, distinct: bool = False) -> tuple[list[MemberCluster], list[Binding]]:
    from kubesched.trace import bundled
    from kubesched.trace.openb import read_nodes, read_pods

    rng = random.Random(seed)
    pool = read_nodes(bundled.node_list("all"))
    shapes = read_pods(bundled.pod_list("default")).pods
    members = []
    for c in range(clusters):
        ns: list[Node] = []
        pods: list[Pod] = []
        for k in range(nodes):
            base = rng.choice(pool)
            node = Node.parse({**base.raw, "metadata": {**base.raw.get("metadata", {}), "name": f"c{c}-n{k}"}})
            ns.append(node)
            if rng.random() < 0.3:  # some nodes are half busy
                p = rng.choice(shapes).copy()
                p.name, p.uid, p.node_name, p.annotations = f"busy-{c}-{k}", f"busy-{c}-{k}", node.name, {}
                pods.append(p)
        labels = {"tier": "edge" if c % 5 else "cloud", "zone": "abc"[c % 3]}
        cl = Cluster(f"member-{c:02d}", labels, region=f"region-{c % 7}")
        members.append(MemberCluster(cl, ClusterObjects(nodes=ns, pods=pods), seed=seed))
    placements = [parse_placement(p, f"policy[{i}]") for i, p in enumerate(POLICIES)]
    bindings = []
    for w in range(workloads):
        t = rng.choice(shapes)
        pod = t.copy()
        pod.name, pod.uid, pod.annotations = f"w{w}", f"uid-{w}", dict(t.annotations)
        if distinct:  # every template its own shape: no estimate is reused across workloads
            pod.requests = {**pod.requests, "cpu": pod.requests.get("cpu", 0) + w + 1}
        bindings.append(Binding("apps/v1", "Deployment", "default", f"w{w}", f"uid-{w}", rng.randint(1, 20), pod,
                                placements[w % len(placements)], requirements=True))
    return members, bindings


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workloads", type=int, default=1000)
    ap.add_argument("--clusters", type=int, default=50)
    ap.add_argument("--nodes", type=int, default=200)
    ap.add_argument("--estimator", default="both", choices=("general", "simulated", "both"))
    ap.add_argument("--apply", action="store_true", help="also create each decision's replicas in the members")
    ap.add_argument("--distinct", action="store_true", help="give every workload its own pod shape")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", metavar="FILE")
    a = ap.parse_args()
    t0 = time.perf_counter()
    members, bindings = build(a.workloads, a.clusters, a.nodes, a.seed, a.distinct)
    build_s = time.perf_counter() - t0
    fed = Federation(members, estimator=a.estimator)
    ok = 0
    w0, c0 = time.perf_counter(), time.process_time()
    for b in bindings:
        d = fed.decide(b)
        ok += d.scheduled
        if a.apply and d.scheduled:
            fed.apply(d)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    shapes = len({b.template.signature() for b in bindings})
    out = {
        "workloads": a.workloads, "clusters": a.clusters, "nodes_per_cluster": a.nodes, "estimator": a.estimator,
        "apply": a.apply, "distinct": a.distinct, "distinct_pod_shapes": shapes, "scheduled": ok, "build_s": round(build_s, 2),
        "decide_wall_s": round(wall, 2), "decide_cpu_s": round(cpu, 2),
        "ms_per_workload_wall": round(1000 * wall / a.workloads, 2),
        "sequential_estimates": fed.simulated.sequential_runs,
    }
    print(json.dumps(out, indent=2))
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
