"""``kubesched autoscale``: grow and shrink a live cluster (``kubesched.autoscale.live``)."""

from __future__ import annotations

import argparse

from kubesched.commands import flags
from kubesched.commands.declare import command
from kubesched.commands.lazy import lazy_handler


@command("autoscale", run=lazy_handler("kubesched.autoscale.live", "cmd_autoscale"))
def autoscale(p: argparse.ArgumentParser) -> None:
    """grow and shrink a live cluster for pending pods (Cluster Autoscaler semantics or Karpenter-like)

    Watch the pending queue and node utilisation and create or delete nodes through a node provider
    (default: KWOK-style virtual nodes). See docs/autoscaling.md.
    """
    flags.add_kubeconfig(p, "kubeconfig file (default: the in-cluster service account)")
    flags.add_context(p)
    p.add_argument("--autoscaler", required=True, metavar="FILE", help="autoscaler options and node groups (YAML)")
    flags.add_config(
        p,
        "the scheduler configuration kubesched run uses: its filters judge placements (default: kubesched run's)",
        metavar="FILE",
    )
    flags.add_plugin_path(p)
    p.add_argument("--provider", default="kwok", help="kwok, or module:Class of your own node provider")
    p.add_argument("--once", action="store_true", help="one iteration, then exit")
    p.add_argument(
        "--address", default="127.0.0.1:8085",
        help="HOST:PORT for /healthz, /livez, /readyz and /metrics, Cluster Autoscaler's metrics "
        "(':8085' for every interface, CA's default; 'off' for none)",
    )
    flags.add_serving_security(p, verbs=False)
    p.add_argument(
        "--write-status-configmap", nargs="?", const="true", default="true", metavar="BOOL",
        help="write the status ConfigMap every iteration, as Cluster Autoscaler (default true; =false: off)",
    )
    p.add_argument("--status-config-map-name", default="cluster-autoscaler-status", metavar="NAME", help="its name (default cluster-autoscaler-status)")
    p.add_argument("--namespace", default="kube-system", help="its namespace (default kube-system)")
    flags.add_seed(p, 0, "seeds the provisioning delays and the random expander's choices (default 0)")
