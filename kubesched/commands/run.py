"""``kubesched run``: a secondary scheduler against a Kubernetes API (``kubesched.live``)."""

from __future__ import annotations

import argparse

from kubesched.commands import flags
from kubesched.commands.declare import command
from kubesched.commands.lazy import lazy_handler
from kubesched.live.cli import DEFAULT_SCHEDULER_NAME


@command("run", run=lazy_handler("kubesched.live.cli", "cmd_run"))
def run(p: argparse.ArgumentParser) -> None:
    """run as a secondary scheduler against a Kubernetes API (watch, bind, events, lease)

    Schedule the pods whose spec.schedulerName matches a profile, against a live cluster.
    """
    flags.add_kubeconfig(
        p, "kubeconfig file (default: clientConnection.kubeconfig in --config, else the in-cluster service account)"
    )
    flags.add_context(p)
    flags.add_config(
        p, f'KubeSchedulerConfiguration file (default: the default profile, named "{DEFAULT_SCHEDULER_NAME}")'
    )
    flags.add_plugin_path(p)
    _add_file_overrides(p)
    p.add_argument(
        "--metrics-listen", default="127.0.0.1:10251",
        help="HOST:PORT for /healthz, /livez, /readyz and /metrics (':10251' for every interface; 'off' for none)",
    )
    flags.add_serving_security(p, verbs=False)
    _add_tuning(p)
    flags.add_seed(p, serves=True)
    p.add_argument("--log-format", choices=("text", "json"), default="text", help="log lines as text (default) or JSON")
    p.add_argument(
        "--log-level", choices=("debug", "info", "warning", "error"), default="info", help="least severe level logged (default info)"
    )
    flags.add_debug(p)


def _add_file_overrides(p: argparse.ArgumentParser) -> None:
    # Each flag below overrides its field of the configuration file (clientConnection.*,
    # leaderElection.*); without the flag, the file's value (or its v1 default) applies.
    p.add_argument("--kube-api-qps", type=float, help="API requests per second (clientConnection.qps, default 50)")
    p.add_argument("--kube-api-burst", type=int, help="API request burst (clientConnection.burst, default 100)")
    p.add_argument(
        "--kube-api-content-type", metavar="TYPE",
        help="content type of requests (clientConnection.contentType); only application/json is spoken",
    )
    p.add_argument(
        "--leader-elect", nargs="?", const="true", metavar="BOOL",
        help="hold a Lease before scheduling (leaderElection.leaderElect, default true); --leader-elect=false: off",
    )
    p.add_argument(
        "--leader-elect-resource-name", "--lease-name", dest="lease_name",
        help="Lease name (leaderElection.resourceName; default: the first profile's schedulerName)",
    )
    p.add_argument(
        "--leader-elect-resource-namespace", "--lease-namespace", dest="lease_namespace",
        help="Lease namespace (leaderElection.resourceNamespace, default kube-system)",
    )
    p.add_argument("--leader-elect-resource-lock", help='leaderElection.resourceLock: "leases", the only lock')
    for what, fld, default in (
        ("lease-duration", "leaseDuration", "15s"),
        ("renew-deadline", "renewDeadline", "10s"),
        ("retry-period", "retryPeriod", "2s"),
    ):
        p.add_argument(
            f"--leader-elect-{what}", metavar="DURATION",
            help=f'leaderElection.{fld} (default {default}; "15s", "1m30s", or seconds)',
        )


def _add_tuning(p: argparse.ArgumentParser) -> None:
    """Concurrency and timeouts of the binding cycle, the event writers and the watches."""
    p.add_argument("--bind-workers", type=int, default=4, help="bindings sent at once (default 4)")
    p.add_argument(
        "--max-in-flight-bindings", type=int, default=16, metavar="N",
        help="how far scheduling may run ahead of binding: bindings assumed but not yet answered (default 16)",
    )
    p.add_argument(
        "--event-writers", type=int, default=2,
        help="threads writing events, status patches and deletions (default 2)",
    )
    p.add_argument(
        "--watch-idle-timeout", type=float, default=90.0, metavar="SECONDS",
        help="reconnect a watch that sent nothing (not even a bookmark) for this long (default 90)",
    )
    p.add_argument("--watch-backoff", type=float, default=0.2, metavar="SECONDS", help="first reconnect delay")
    p.add_argument(
        "--shutdown-timeout", type=float, default=30.0, metavar="SECONDS",
        help="on SIGTERM, wait this long at most for bindings in flight (default 30)",
    )
