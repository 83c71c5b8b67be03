"""``kubesched extender``: kubesched's plugins behind kube-scheduler's extender protocol
(``kubesched.extender``)."""

from __future__ import annotations

import argparse

from kubesched.commands import flags
from kubesched.commands.declare import command
from kubesched.commands.lazy import lazy_handler
from kubesched.server.httpd import DEFAULT_MAX_BODY, Limits


@command("extender", run=lazy_handler("kubesched.extender.service", "run"))
def extender(p: argparse.ArgumentParser) -> None:
    """serve the kube-scheduler extender protocol (filter, prioritize, bind, preempt)

    Serve kubesched's plugins to a stock kube-scheduler over the extender HTTP protocol (filter,
    prioritize, bind, preempt). See docs/extender.md.
    """
    flags.add_cluster_files(p, "cluster objects the extender holds (NodeNames mode, bind); default: none")
    flags.add_config(p)
    flags.add_plugin_path(p)
    p.add_argument("--listen", default="127.0.0.1:8888", help="HOST:PORT to serve on (':8888': every interface)")
    p.add_argument("--url-prefix", default="", help="also serve the verbs under this path (the urlPrefix's path)")
    flags.add_seed(p, help="seed for random choices (reproducible runs)", serves=True)
    flags.add_kubeconfig(p, "watch this cluster for NodeNames mode, bind and preempt (instead of -f)")
    p.add_argument("--in-cluster", action="store_true", help="watch the cluster through the pod's service account")
    flags.add_context(p)
    p.add_argument("--kube-api-qps", type=float, default=50.0, help="API requests per second (default 50)")
    p.add_argument("--kube-api-burst", type=int, default=100, help="API request burst (default 100)")
    flags.add_serving_security(p, verbs=True)
    p.add_argument(
        "--max-request-bytes", type=int, default=DEFAULT_MAX_BODY, metavar="N",
        help=f"refuse bodies larger than this with 413 (default {DEFAULT_MAX_BODY >> 20} MiB)",
    )
    p.add_argument(
        "--max-requests-in-flight", type=int, default=Limits.max_in_flight, metavar="N",
        help=f"verb requests read and served at once; more wait, then get 503 (default {Limits.max_in_flight})",
    )
