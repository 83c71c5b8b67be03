"""``kubesched run``: validation (one line, exit 2) and signal handling around ``Runner`` (the flags
are in ``kubesched.commands.run``)."""

from __future__ import annotations

import argparse
import math
import signal
import sys
import threading
from types import FrameType
from typing import TYPE_CHECKING

from kubesched.errors import InputError
from kubesched.server import security

if TYPE_CHECKING:
    from kubesched.config import SchedulerConfig
    from kubesched.framework.registry import Registry

DEFAULT_SCHEDULER_NAME = "kubesched"


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
    return parse_config(doc, DEFAULTS_SOURCE, registry.points_of, plugin_names=registry.names())


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
    from kubesched.seeds import announce_seed

    logs.setup(args.log_format, args.log_level)
    runner = build_runner(args)
    announce_seed(args)  # everything is valid: the run starts
    if args.debug:
        from kubesched.debug import PluginTracebacks

        PluginTracebacks().attach(runner.sched)

    def on_signal(signum: int, frame: FrameType | None) -> None:
        runner.stop()

    if threading.current_thread() is threading.main_thread():
        for s in (signal.SIGINT, signal.SIGTERM):
            signal.signal(s, on_signal)
    return runner.serve()
