"""``kubesched ui``: the results UI in the browser (``kubesched.ui``)."""

from __future__ import annotations

import argparse

from kubesched.commands import flags
from kubesched.commands.declare import command
from kubesched.commands.lazy import lazy_handler

DEFAULT_LISTEN = "127.0.0.1:8765"


@command("ui", run=lazy_handler("kubesched.ui.cli", "run"))
def ui(p: argparse.ArgumentParser) -> None:
    """a results UI in the browser: cluster, per-pod decisions, what-if, dashboards

    Serve a local web UI on a cluster dump (-f, --config), a simulation output folder, an experiment
    output folder, or a live cluster (--kubeconfig, read-only). It listens on loopback and answers
    only the browser that opens the URL it prints (the URL carries a per-run token; see docs/ui.md,
    "Who can use it").
    """
    p.add_argument("path", nargs="?", metavar="PATH", help="a simulation or experiment output folder, or a cluster file")
    p.add_argument("-f", "--file", action="append", metavar="FILE", help=flags.CLUSTER_FILES_HELP)
    flags.add_recursive(p)
    flags.add_config(p, "KubeSchedulerConfiguration file for the cluster (what-if starts from it)")
    flags.add_validate(p)
    flags.add_plugin_path(p)
    p.add_argument(
        "--import-plugins", action="store_true",
        help="let the configuration of PATH or --config name plugins as module:Class (importing runs the module); "
        "configurations from the page never may",
    )
    flags.add_seed(p, 0, "seed for the random tie-break of the cluster's runs (default 0)")
    flags.add_kubeconfig(
        p, "watch this cluster instead, read-only (list and watch; nothing is written): its pending pods and "
        "recent decisions as they happen",
    )
    flags.add_context(p)
    _add_serving(p)


def _add_serving(p: argparse.ArgumentParser) -> None:
    """Where the UI listens and whom it answers."""
    p.add_argument(
        "--listen", default=DEFAULT_LISTEN,
        help=f"HOST:PORT (default {DEFAULT_LISTEN}). An address beyond loopback needs --allow-remote",
    )
    p.add_argument(
        "--allow-remote", action="store_true",
        help="serve on a non-loopback --listen address: anyone who can reach it and has the token (sent in plain "
        "HTTP) can use the UI",
    )
    p.add_argument(
        "--allow-host", action="append", default=[], metavar="NAME[:PORT]",
        help="another Host name the browser may use (e.g. this machine's name with --allow-remote; repeatable)",
    )
    p.add_argument(
        "--allow-open", action="append", default=[], metavar="DIR",
        help="a folder the page's Open box may read besides the working directory and the folders of PATH, -f and "
        "--config (repeatable)",
    )
    p.add_argument("--max-request-bytes", type=int, default=8 << 20, metavar="N", help="refuse larger bodies (default 8 MiB)")
