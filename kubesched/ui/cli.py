"""`kubesched ui`: open a cluster dump, a configuration, a simulation or an experiment in the browser."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from kubesched import argtypes
from kubesched.errors import InputError

DEFAULT_LISTEN = "127.0.0.1:8765"


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "ui",
        help="a results UI in the browser: cluster, per-pod decisions, what-if, dashboards",
        description="Serve a local web UI on a cluster dump (-f, --config), a simulation output folder or an "
        "experiment output folder. It binds to loopback; it has no authentication.",
    )
    p.add_argument("path", nargs="?", metavar="PATH", help="a simulation or experiment output folder, or a cluster file")
    p.add_argument("-f", "--file", action="append", help="cluster objects (YAML/JSON; repeatable); default: shipped example")
    p.add_argument("--config", help="KubeSchedulerConfiguration file for the cluster (what-if starts from it)")
    p.add_argument("--plugin-path", action="append", default=[], help="Python file defining plugins (it is run: only trusted files)")
    p.add_argument("--seed", type=argtypes.seed, default=0, help="seed for the random tie-break (default 0)")
    p.add_argument(
        "--listen", default=DEFAULT_LISTEN,
        help=f"HOST:PORT (default {DEFAULT_LISTEN}, loopback only). Another host exposes the UI, which has no "
        "authentication, to everyone who can reach it",
    )
    p.add_argument("--max-request-bytes", type=int, default=8 << 20, metavar="N", help="refuse larger bodies (default 8 MiB)")
    p.set_defaults(func=run)


def parse_listen(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise InputError(f"expected HOST:PORT, got {value!r}", source="--listen")
    host = host.strip("[]") or "0.0.0.0"
    return host, int(port)


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from kubesched.ui.server import build_app
    from kubesched.ui.sources import CLUSTER, detect, open_source

    host, port = parse_listen(args.listen)
    if args.path and args.file:
        raise InputError("give a PATH or -f files, not both")
    if args.path and args.config and detect(args.path) != CLUSTER:
        raise InputError("--config: only for a cluster (a simulation or experiment folder has its own)")
    ws = open_source(args.path, files=args.file, config=args.config, seed=args.seed, plugin_paths=args.plugin_path)
    for w in ws.config.warnings if ws.config else []:
        sys.stderr.write(f"kubesched: warning: {w}\n")
    if host not in ("127.0.0.1", "::1", "localhost"):
        sys.stderr.write(f"kubesched: warning: serving on {host}: anyone who can reach it can use the UI (no authentication)\n")
    sys.stderr.write(f"kubesched ui: {ws.title} on http://{host if ':' not in host else f'[{host}]'}:{port}/\n")
    from kubesched.heap import freeze_long_lived

    freeze_long_lived()  # the workspace lives as long as the server: keep it out of full collections
    app = build_app(ws, max_body=args.max_request_bytes, on_swap=freeze_long_lived)
    uvicorn.run(app, host=host, port=port, log_level="warning")
    return 0
