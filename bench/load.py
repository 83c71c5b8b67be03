"""Load-time benchmark: a synthetic cluster dump read as YAML and as JSON, in seconds.

The dump has the shape ``kubectl get nodes,pods -A -o yaml`` prints (a ``kind: List`` of Nodes
and Pods with metadata, managedFields, spec and status as a real cluster fills them), generated
with a fixed seed. The script writes it once in each format and times ``load_cluster`` on it: text
decoding, strict checks against the API schema, validation, admission and object building.

    python bench/load.py                       # 5,000 nodes / 50,000 pods
    python bench/load.py --nodes 500 --pods 5000 --repeat 3
    PYTHONPATH=/path/to/other/checkout python bench/load.py   # time another version the same way
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson
import yaml


def _managed(manager: str, t: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}, "f:spec": {"f:containers": {}}},
        "manager": manager,
        "operation": "Update",
        "time": t,
    }


def make_node(i: int, rng: random.Random) -> dict[str, Any]:
    name = f"node-{i:05d}"
    t = "2026-01-02T03:04:05Z"
    cpu, mem = rng.choice([(32, 128), (64, 256), (96, 384)])
    res = {"cpu": str(cpu), "memory": f"{mem}Gi", "pods": "110", "ephemeral-storage": "100Gi"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": f"6f1c{i:08x}-0000-4000-8000-000000000000",
            "resourceVersion": str(1000 + i),
            "creationTimestamp": t,
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "topology.kubernetes.io/zone": f"zone-{i % 3}",
                "node.kubernetes.io/instance-type": f"m{cpu}",
            },
            "annotations": {"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
            "managedFields": [_managed("kubelet", t)],
        },
        "spec": {"podCIDR": f"10.{i // 256}.{i % 256}.0/24", "providerID": f"fake://{name}"},
        "status": {
            "capacity": res,
            "allocatable": dict(res),  # distinct objects: no YAML anchors, as kubectl writes
            "conditions": [
                {"type": c, "status": "False" if c != "Ready" else "True", "lastHeartbeatTime": t,
                 "lastTransitionTime": t, "reason": f"Kubelet{c}", "message": "ok"}
                for c in ("MemoryPressure", "DiskPressure", "PIDPressure", "Ready")
            ],
            "addresses": [{"type": "InternalIP", "address": f"10.0.{i // 256}.{i % 256}"}, {"type": "Hostname", "address": name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "machineID": "m", "systemUUID": "s", "bootID": "b", "kernelVersion": "6.1.0",
                "osImage": "Debian GNU/Linux 12", "containerRuntimeVersion": "containerd://1.7.0",
                "kubeletVersion": "v1.36.0", "kubeProxyVersion": "", "operatingSystem": "linux", "architecture": "amd64",
            },
            "images": [
                {"names": [f"registry.example/app-{k}@sha256:{k:064x}", f"registry.example/app-{k}:1"], "sizeBytes": 10_000_000 + k}
                for k in range(10)
            ],
        },
    }  # fmt: skip


def make_pod(i: int, nodes: int, rng: random.Random) -> dict[str, Any]:
    app = f"app-{i % 200}"
    ns = f"team-{i % 20}"
    name = f"{app}-{i:06x}"
    t = "2026-01-02T03:04:05Z"
    cpu = rng.choice(["100m", "250m", "500m", "1"])
    mem = rng.choice(["128Mi", "256Mi", "512Mi", "1Gi"])
    bound = i % 10 != 0  # nine in ten already running
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "main",
                "image": f"registry.example/{app}:1",
                "imagePullPolicy": "IfNotPresent",
                "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
                "env": [{"name": "MODE", "value": "prod"}, {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}],
                "resources": {"requests": {"cpu": cpu, "memory": mem}, "limits": {"memory": mem}},
                "volumeMounts": [{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "name": "kube-api-access", "readOnly": True}],
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
            }
        ],
        "dnsPolicy": "ClusterFirst",
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": 0,
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "serviceAccount": "default",
        "serviceAccountName": "default",
        "terminationGracePeriodSeconds": 30,
        "tolerations": [
            {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300},
            {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300},
        ],
        "volumes": [{"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [{"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}]}}],
    }  # fmt: skip
    if i % 4 == 0:
        spec["topologySpreadConstraints"] = [
            {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway",
             "labelSelector": {"matchLabels": {"app": app}}}
        ]  # fmt: skip
    status: dict[str, Any] = {"phase": "Pending", "qosClass": "Burstable"}
    if bound:
        spec["nodeName"] = f"node-{rng.randrange(nodes):05d}"
        status = {
            "phase": "Running",
            "qosClass": "Burstable",
            "hostIP": "10.0.0.1",
            "podIP": f"10.244.{i // 256 % 256}.{i % 256}",
            "podIPs": [{"ip": f"10.244.{i // 256 % 256}.{i % 256}"}],
            "startTime": t,
            "conditions": [{"type": c, "status": "True", "lastProbeTime": None, "lastTransitionTime": t}
                           for c in ("Initialized", "Ready", "ContainersReady", "PodScheduled")],
            "containerStatuses": [
                {"name": "main", "ready": True, "restartCount": 0, "started": True, "image": f"registry.example/{app}:1",
                 "imageID": f"registry.example/{app}@sha256:{i:064x}", "containerID": f"containerd://{i:064x}",
                 "state": {"running": {"startedAt": t}}, "lastState": {}}
            ],
        }  # fmt: skip
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": f"9a2b{i:08x}-0000-4000-8000-000000000000",
            "resourceVersion": str(100000 + i),
            "creationTimestamp": t,
            "generateName": f"{app}-",
            "labels": {"app": app, "pod-template-hash": "5d8f9c7b6"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"{app}-5d8f9c7b6",
                                 "uid": f"0b0b{i % 200:08x}-0000-4000-8000-000000000000", "controller": True,
                                 "blockOwnerDeletion": True}],
            "managedFields": [_managed("kube-controller-manager", t), _managed("kubelet", t)],
        },
        "spec": spec,
        "status": status,
    }  # fmt: skip


def make_dump(nodes: int, pods: int, seed: int = 1) -> dict[str, Any]:
    rng = random.Random(seed)
    items = [make_node(i, rng) for i in range(nodes)] + [make_pod(i, nodes, rng) for i in range(pods)]
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}


def write_dump(doc: dict[str, Any], folder: Path) -> tuple[Path, Path]:
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    y, j = folder / "dump.yaml", folder / "dump.json"
    with y.open("w") as f:
        yaml.dump(doc, f, Dumper=dumper, sort_keys=False, default_flow_style=False)
    j.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
    return y, j


def time_load(path: Path, repeat: int) -> tuple[float, float]:
    """The best (wall, CPU) seconds of ``load_cluster`` over ``repeat`` runs."""
    from kubesched.load import load_cluster

    best = (float("inf"), float("inf"))
    for _ in range(repeat):
        gc.collect()
        t0, c0 = time.perf_counter(), time.process_time()
        objs = load_cluster([str(path)])
        best = min(best, (time.perf_counter() - t0, time.process_time() - c0))
        del objs
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=50000)
    ap.add_argument("--repeat", type=int, default=1, help="time each format this many times, report the best")
    ap.add_argument("--format", choices=("yaml", "json", "both"), default="both")
    ap.add_argument("--dir", help="keep the generated dump here (default: a temporary folder)")
    ap.add_argument("--reuse", action="store_true", help="time the dump already in --dir instead of writing one")
    args = ap.parse_args()
    import kubesched

    print(f"kubesched from {os.path.dirname(kubesched.__file__)}; libyaml: {getattr(yaml, '__with_libyaml__', False)}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.dir or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        if args.reuse:
            y, j = folder / "dump.yaml", folder / "dump.json"
        else:
            y, j = write_dump(make_dump(args.nodes, args.pods), folder)
        for fmt, path in (("yaml", y), ("json", j)):
            if args.format not in (fmt, "both"):
                continue
            size = path.stat().st_size
            lines = sum(1 for _ in path.open("rb"))
            wall, cpu = time_load(path, args.repeat)
            print(
                f"{fmt}: {args.nodes:,} nodes + {args.pods:,} pods, {size / 2**20:,.0f} MiB, {lines:,} lines: "
                f"{wall:.1f} s wall, {cpu:.1f} s CPU ({(args.nodes + args.pods) / cpu:,.0f} objects per CPU second)"
            )


if __name__ == "__main__":
    main()
