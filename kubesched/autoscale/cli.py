"""``kubesched autoscale``'s flags (the controller itself is loaded only when the command runs)."""

from __future__ import annotations

import argparse
from typing import Any

from kubesched import argtypes


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "autoscale",
        help="grow and shrink a live cluster for pending pods (Cluster Autoscaler semantics or Karpenter-like)",
        description="Watch the pending queue and node utilisation and create or delete nodes through a node "
        "provider (default: KWOK-style virtual nodes). See docs/autoscaling.md.",
    )
    p.add_argument("--kubeconfig", help="kubeconfig file (default: the in-cluster service account)")
    p.add_argument("--context", help="kubeconfig context")
    p.add_argument("--autoscaler", required=True, metavar="FILE", help="autoscaler options and node groups (YAML)")
    p.add_argument("--config", metavar="FILE", help="the scheduler configuration kubesched run uses: its filters judge placements (default: kubesched run's)")
    p.add_argument("--plugin-path", action="append", default=[], metavar="FILE", help="out-of-tree plugins")
    p.add_argument("--provider", default="kwok", help="kwok, or module:Class of your own node provider")
    p.add_argument("--once", action="store_true", help="one iteration, then exit")
    p.add_argument("--seed", type=argtypes.seed, default=0, help="seeds the provisioning delays and the random expander's choices (default 0)")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from kubesched.autoscale.live import cmd_autoscale

    return cmd_autoscale(args)
