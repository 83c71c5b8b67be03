"""``kubesched run``: flags, validation (one line, exit 2) and signal handling around ``Runner``."""

from __future__ import annotations

import argparse
import math
import signal
import sys
import threading
from types import FrameType
from typing import TYPE_CHECKING

from kubesched import argtypes
from kubesched.debug import add_debug
from kubesched.errors import InputError
from kubesched.server import security

if TYPE_CHECKING:
    from kubesched.config import SchedulerConfig
    from kubesched.framework.registry import Registry

DEFAULT_SCHEDULER_NAME = "kubesched"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run",
        help="run as a secondary scheduler against a Kubernetes API (watch, bind, events, lease)",
        description="Schedule the pods whose spec.schedulerName matches a profile, against a live cluster.",
    )
    p.add_argument(
        "--kubeconfig",
        help="kubeconfig file (default: clientConnection.kubeconfig in --config, else the in-cluster service account)",
    )
    p.add_argument("--context", help="kubeconfig context (default: its current context)")
    p.add_argument(
        "--config",
        help=f'KubeSchedulerConfiguration file (default: the default profile, named "{DEFAULT_SCHEDULER_NAME}")',
    )
    p.add_argument("--plugin-path", action="append", default=[], help="Python file defining plugins (repeatable; it is run: only trusted files)")
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
    p.add_argument(
        "--metrics-listen", default="127.0.0.1:10251",
        help="HOST:PORT for /healthz, /livez, /readyz and /metrics (':10251' for every interface; 'off' for none)",
    )
    security.add_flags(p, verbs=False)
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
    p.add_argument("--seed", type=argtypes.seed, default=None, help="seed for the random tie-break")
    p.add_argument("--log-format", choices=("text", "json"), default="text", help="log lines as text (default) or JSON")
    p.add_argument(
        "--log-level", choices=("debug", "info", "warning", "error"), default="info", help="least severe level logged (default info)"
    )
    add_debug(p)
    p.set_defaults(func=cmd_run)


def _positive(value: float, flag: str, *, integer: bool = False) -> None:
    if not math.isfinite(value) or value <= 0:
        raise InputError(f"must be a positive {'integer' if integer else 'number'}, got {value:g}", path=flag)


def run_config(path: str | None, registry: Registry) -> SchedulerConfig:
    """The file's configuration; without one, the v1 defaults with the default profile renamed:
    a secondary scheduler must not answer for the cluster's default-scheduler."""
    from kubesched.app import build_config
    from kubesched.config.load import DEFAULTS_SOURCE, parse_config
    from kubesched.config.types import KIND, V1

    if path:
        return build_config(path, registry)
    doc = {"apiVersion": V1, "kind": KIND, "profiles": [{"schedulerName": DEFAULT_SCHEDULER_NAME}]}
    return parse_config(doc, DEFAULTS_SOURCE, registry.points_of)


def build_runner(args: argparse.Namespace):  # noqa: ANN201 - Runner, imported lazily (keeps the CLI import cheap)
    """Validate everything, then build the runner; nothing touches the cluster until ``serve``."""
    from kubesched.app import build_registry
    from kubesched.live.client import KubeClient, load_configuration
    from kubesched.live.runner import Runner, RunOptions
    from kubesched.live.settings import resolve
    from kubesched.server.httpd import parse_listen

    _positive(args.bind_workers, "--bind-workers", integer=True)
    _positive(args.max_in_flight_bindings, "--max-in-flight-bindings", integer=True)
    _positive(args.event_writers, "--event-writers", integer=True)
    _positive(args.watch_idle_timeout, "--watch-idle-timeout")
    _positive(args.watch_backoff, "--watch-backoff")
    _positive(args.shutdown_timeout, "--shutdown-timeout")
    listen = None
    if args.metrics_listen != "off":
        try:
            listen = parse_listen(args.metrics_listen)
        except InputError as e:
            raise InputError(e.reason, path="--metrics-listen") from None
    tls, access = security.from_args(args)
    registry = build_registry(args.plugin_path)
    config = run_config(args.config, registry)
    settings = resolve(args, config, from_file=bool(args.config))
    for w in [*config.warnings, *settings.warnings]:
        sys.stderr.write(f"kubesched: warning: {w}\n")
    kc = settings.kubeconfig
    client = KubeClient(load_configuration(kc.value, args.context, field=kc.flag or kc.field, source=kc.source))
    opts = RunOptions(
        qps=settings.qps,
        burst=settings.burst,
        leader_elect=settings.leader_elect,
        lease=settings.lease,
        metrics_listen=listen,
        bind_workers=args.bind_workers,
        max_in_flight_bindings=args.max_in_flight_bindings,
        event_writers=args.event_writers,
        watch_idle_timeout=args.watch_idle_timeout,
        watch_backoff=args.watch_backoff,
        shutdown_timeout=args.shutdown_timeout,
        seed=args.seed,
        tls=tls,
        access=access,
    )
    return Runner(config, registry, client, opts)


def cmd_run(args: argparse.Namespace) -> int:
    from kubesched.live import logs

    logs.setup(args.log_format, args.log_level)
    runner = build_runner(args)
    if args.debug:
        from kubesched.debug import PluginTracebacks

        PluginTracebacks().attach(runner.sched)

    def on_signal(signum: int, frame: FrameType | None) -> None:
        runner.stop()

    if threading.current_thread() is threading.main_thread():
        for s in (signal.SIGINT, signal.SIGTERM):
            signal.signal(s, on_signal)
    return runner.serve()
