"""A cluster dump shaped like a real one, and helpers to read rendered tables at a given width.

The dump: 10 nodes with cloud-style names, 37 pods whose names differ only in their last
characters (as a Deployment's do), running pods of low priority that a critical pod preempts,
a gated pod, a pod for another scheduler, a finished pod, a pod being deleted, and pods that
fit nowhere (long FailedScheduling messages).
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterable
from pathlib import Path

import yaml
from rich.console import Console

from kubesched.testing import make_node, make_pod

WIDTHS = (80, 120, 200)

NODES = [f"ip-10-0-{i // 4}-{17 + i * 11}.eu-west-1.compute.internal" for i in range(10)]
WEB = [f"web/web-frontend-7d9f8b6c5-{s}" for s in ("x2x4q", "k8s7p", "9vz2m", "qq7rt", "m4n5b", "zt8wd")]


def cluster_docs() -> list[dict]:
    docs: list[dict] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
        for ns in ("web", "payments", "ml", "batch", "critical", "kube-system")
    ]
    docs.append(
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "critical"}, "value": 100000}
    )
    gpu_taint = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    for i, name in enumerate(NODES):
        zone = "eu-west-1" + "abc"[i % 3]
        docs.append(
            make_node(
                name,
                cpu="4",
                memory="16Gi",
                labels={"topology.kubernetes.io/zone": zone, "node.kubernetes.io/instance-type": "m5.xlarge"},
                taints=gpu_taint if i >= 7 else None,
            )
        )
    # running pods: kube-system on every node, low-priority batch pods filling zone a's nodes
    for i, node in enumerate(NODES):
        docs.append(make_pod(f"kube-proxy-{i:05x}", namespace="kube-system", requests={"cpu": "100m"}, node=node))
    for i in (0, 3, 6):
        docs.append(
            make_pod(f"batch-etl-28391234-{i}", namespace="batch", requests={"cpu": "3", "memory": "2Gi"}, node=NODES[i], priority=0)
        )
    # pending: a Deployment's replicas, workers, a critical pod that must preempt
    for key in WEB:
        ns, name = key.split("/")
        docs.append(make_pod(name, namespace=ns, requests={"cpu": "500m", "memory": "512Mi"}, labels={"app": "web"}))
    for i in range(5):
        docs.append(
            make_pod(f"payments-api-worker-5f7c9d8b6-{i}abcd", namespace="payments", requests={"cpu": "250m", "memory": "256Mi"})
        )
    docs.append(
        make_pod(
            "ingest-priority-0",
            namespace="critical",
            requests={"cpu": "3500m", "memory": "1Gi"},
            spec={"priorityClassName": "critical", "nodeSelector": {"topology.kubernetes.io/zone": "eu-west-1a"}},
        )
    )
    docs.append(make_pod("train-llm-huge", namespace="ml", requests={"cpu": "64", "memory": "1Ti"}))
    docs.append(
        make_pod(
            "train-needs-a100",
            namespace="ml",
            requests={"cpu": "1"},
            spec={"nodeSelector": {"node.kubernetes.io/instance-type": "p4d.24xlarge"}},
        )
    )
    for i in range(2):
        docs.append(make_pod(f"gpu-notebook-{i}", namespace="ml", requests={"cpu": "8"}))
    # left out by the scheduler
    docs.append(make_pod("train-gated", namespace="ml", requests={"cpu": "1"}, spec={"schedulingGates": [{"name": "example.com/quota"}]}))
    docs.append(make_pod("volcano-job-0", namespace="ml", requests={"cpu": "1"}, spec={"schedulerName": "volcano"}))
    done = make_pod("report-28391200-zx9k", namespace="batch", requests={"cpu": "1"})
    done["status"] = {"phase": "Succeeded"}
    docs.append(done)
    leaving = make_pod("web-frontend-old-5c4b3a2-rr2dd", namespace="web", requests={"cpu": "500m"})
    leaving["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    docs.append(leaving)
    # fill up to 37 pods with small pending pods
    n_pods = sum(1 for d in docs if d["kind"] == "Pod")
    for i in range(37 - n_pods):
        docs.append(make_pod(f"cron-cleanup-29000000-{i:02d}", namespace="batch", requests={"cpu": "50m"}))
    assert sum(1 for d in docs if d["kind"] == "Pod") == 37
    return docs


def write_cluster(tmp_path: Path) -> str:
    p = tmp_path / "cluster.yaml"
    p.write_text(yaml.safe_dump_all(cluster_docs()))
    return str(p)


def render(draw: Callable[[Console], None], width: int) -> str:
    """What ``draw`` prints on a terminal ``width`` columns wide (no colour codes)."""
    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=False, color_system=None, legacy_windows=False)
    draw(console)
    return buf.getvalue()


def whole(text: str, tokens: Iterable[str]) -> list[str]:
    """The tokens that do not appear whole on one line of ``text`` (empty: all readable)."""
    lines = text.splitlines()
    return [t for t in tokens if not any(t in line for line in lines)]


def max_line(text: str) -> int:
    return max((len(line) for line in text.splitlines()), default=0)


NUMBER = re.compile(r"\d[\d,.]*")
