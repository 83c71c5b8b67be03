"""Regenerate kubesched/examples/cluster.yaml from the openb trace shipped in kubesched/data/openb.

A small, readable cluster: 12 nodes in 3 zones (GPU nodes tainted and labelled with their
model), 2 pods already running, and 24 pending pods taken from openb_pod_list_default
(CPU, memory and whole GPUs as nvidia.com/gpu), with a few scheduling constraints added
so every default plugin has something to do.
"""

from __future__ import annotations

import csv
import gzip
import sys
from pathlib import Path

import yaml

from kubesched.trace.bundled import node_list, pod_list

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    nodes_csv = list(csv.DictReader(gzip.open(node_list("all"), "rt")))
    pods_csv = list(csv.DictReader(gzip.open(pod_list("default"), "rt")))
    gpu = [n for n in nodes_csv if int(n["gpu"]) > 0]
    cpu_only = [n for n in nodes_csv if int(n["gpu"]) == 0]
    picked = gpu[:2] + [n for n in gpu if n["model"] == "V100M32"][:2] + [n for n in gpu if n["model"] == "T4"][:4]
    picked += cpu_only[:4]
    docs: list[dict] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml", "labels": {"team": "research"}}},
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "web", "labels": {"team": "frontend"}}},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000},
    ]
    for i, n in enumerate(picked):
        zone = f"zone-{'abc'[i % 3]}"
        labels = {"kubernetes.io/hostname": n["sn"], "topology.kubernetes.io/zone": zone}
        alloc = {"cpu": f"{n['cpu_milli']}m", "memory": f"{n['memory_mib']}Mi", "pods": "110"}
        spec: dict = {}
        if int(n["gpu"]):
            alloc["nvidia.com/gpu"] = n["gpu"]
            labels["nvidia.com/gpu.product"] = n["model"]
            spec["taints"] = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": n["sn"], "labels": labels},
                "spec": spec,
                "status": {"capacity": alloc, "allocatable": alloc},
            }
        )
    gpu_tol = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    rows = pods_csv[:26]
    for i, r in enumerate(rows):
        ngpu = int(r["num_gpu"])
        res = {"cpu": f"{r['cpu_milli']}m", "memory": f"{r['memory_mib']}Mi"}
        if ngpu and int(r["gpu_milli"]) == 1000:
            res["nvidia.com/gpu"] = str(ngpu)
        ns = "ml" if ngpu else "web"
        resources: dict = {"requests": res}
        if "nvidia.com/gpu" in res:  # extended resources: the API server wants limits = requests
            resources["limits"] = {"nvidia.com/gpu": res["nvidia.com/gpu"]}
        spec: dict = {"containers": [{"name": "main", "image": "registry.example/app:1", "resources": resources}]}
        labels = {"app": f"job-{i % 4}"}
        if ngpu:
            spec["tolerations"] = gpu_tol
        if i % 7 == 3:
            spec["priorityClassName"] = "high"
        if i % 5 == 2:
            spec["affinity"] = {
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"labelSelector": {"matchLabels": {"app": labels["app"]}}, "topologyKey": "kubernetes.io/hostname"}
                    ]
                }
            }
        if i % 6 == 4:
            spec["nodeSelector"] = {"topology.kubernetes.io/zone": "zone-b"}
        if i < 2:
            spec["nodeName"] = picked[i]["sn"]
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": r["name"], "namespace": ns, "labels": labels},
                "spec": spec,
            }
        )
    # Two pods that fit nowhere, so the output shows kube-scheduler's FailedScheduling messages.
    big = {"cpu": "16", "memory": "64Gi", "nvidia.com/gpu": "8"}
    docs.append(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "train-8gpu", "namespace": "ml", "labels": {"app": "train"}},
            "spec": {
                "containers": [
                    {
                        "name": "main",
                        "image": "registry.example/train:1",
                        "resources": {"requests": big, "limits": {"nvidia.com/gpu": big["nvidia.com/gpu"]}},
                    }
                ],
                "tolerations": gpu_tol,
            },
        }
    )
    docs.append(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "needs-a100", "namespace": "ml", "labels": {"app": "infer"}},
            "spec": {
                "containers": [{"name": "main", "image": "registry.example/infer:1", "resources": {"requests": {"cpu": "2"}}}],
                "nodeSelector": {"nvidia.com/gpu.product": "A100"},
                "tolerations": gpu_tol,
            },
        }
    )
    out = ROOT / "kubesched" / "examples" / "cluster.yaml"
    header = (
        "# Example cluster for kubesched, derived from the openb trace of Alibaba's Cluster Trace Program\n"
        "# (cluster-trace-gpu-v2023), published with Weng et al., \"Beware of Fragmentation: Scheduling\n"
        "# GPU-Sharing Workloads with Fragmentation Gradient Descent\", USENIX ATC '23. See NOTICE.\n"
        "# Regenerate with: python scripts/make_example.py\n"
    )
    out.write_text(header + yaml.safe_dump_all(docs, sort_keys=False))
    print(f"wrote {out} ({len(docs)} objects)", file=sys.stderr)


if __name__ == "__main__":
    main()
