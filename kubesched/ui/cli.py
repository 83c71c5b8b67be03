"""`kubesched ui`: open a cluster dump, a configuration, a simulation or an experiment in the browser."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from kubesched import argtypes, flags
from kubesched.errors import InputError

DEFAULT_LISTEN = "127.0.0.1:8765"


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "ui",
        help="a results UI in the browser: cluster, per-pod decisions, what-if, dashboards",
        description="Serve a local web UI on a cluster dump (-f, --config), a simulation output folder or an "
        "experiment output folder. It listens on loopback and answers only the browser that opens the URL it "
        "prints (the URL carries a per-run token; see docs/ui.md, \"Who can use it\").",
    )
    p.add_argument("path", nargs="?", metavar="PATH", help="a simulation or experiment output folder, or a cluster file")
    p.add_argument("-f", "--file", action="append", help="cluster objects (YAML/JSON; repeatable); default: shipped example")
    p.add_argument("--config", help="KubeSchedulerConfiguration file for the cluster (what-if starts from it)")
    flags.add_validate(p)
    p.add_argument("--plugin-path", action="append", default=[], help="Python file defining plugins (it is run: only trusted files)")
    p.add_argument(
        "--import-plugins", action="store_true",
        help="let the configuration of PATH or --config name plugins as module:Class (importing runs the module); "
        "configurations from the page never may",
    )
    p.add_argument("--seed", type=argtypes.seed, default=0, help="seed for the random tie-break (default 0)")
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
    p.set_defaults(func=run)


def parse_listen(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise InputError(f"expected HOST:PORT, got {value!r}", source="--listen")
    host = host.strip("[]") or "0.0.0.0"
    return host, int(port)


def run(args: argparse.Namespace) -> int:
    import os
    from pathlib import Path

    import uvicorn

    from kubesched.app import build_registry
    from kubesched.ui.guard import TOKEN_ENV, Access, Roots, is_loopback, is_wildcard, new_token
    from kubesched.ui.server import build_app
    from kubesched.ui.sources import CLUSTER, detect, open_source

    host, port = parse_listen(args.listen)
    if not is_loopback(host) and not args.allow_remote:
        raise InputError(
            f"{host} is not a loopback address: serving there exposes the UI to the network (plain HTTP); "
            "add --allow-remote to do it on purpose",
            source="--listen",
        )
    for d in args.allow_open:
        if not Path(d).is_dir():
            raise InputError("not a folder", source=f"--allow-open {d}")
    if args.path and args.file:
        raise InputError("give a PATH or -f files, not both")
    if args.path and args.config and detect(args.path) != CLUSTER:
        raise InputError("--config: only for a cluster (a simulation or experiment folder has its own)")
    token = os.environ.get(TOKEN_ENV) or new_token()
    registry = build_registry(args.plugin_path, import_module_names=args.import_plugins)
    registry.module_refusal = (
        "kubesched ui imports no module named by a configuration unless started with --import-plugins "
        "(importing runs its code)"
    )
    ws = open_source(
        args.path, files=args.file, config=args.config, seed=args.seed, registry=registry, validate=args.validate
    )
    for w in [*(ws.objects.warnings if ws.objects else []), *(ws.config.warnings if ws.config else [])]:
        sys.stderr.write(f"kubesched: warning: {w}\n")
    named = [p for p in [args.path, *(args.file or []), args.config] if p]
    roots = Roots.of([Path.cwd(), *named, *args.allow_open])
    access = Access.for_listen(host, port, token, args.allow_host)
    shown = "127.0.0.1" if is_wildcard(host) else host
    shown = f"[{shown}]" if ":" in shown else shown
    if not is_loopback(host):
        sys.stderr.write(
            f"kubesched: warning: serving on {host} (--allow-remote): whoever has the token can use the UI; "
            "HTTP is not encrypted\n"
        )
    sys.stderr.write(f"kubesched ui: {ws.title} on http://{shown}:{port}/?token={token}\n")
    from kubesched.heap import freeze_long_lived

    freeze_long_lived()  # the workspace lives as long as the server: keep it out of full collections
    app = build_app(
        ws, access=access, registry=registry, roots=roots, max_body=args.max_request_bytes, on_swap=freeze_long_lived
    )
    uvicorn.run(app, host=host, port=port, log_level="warning")
    return 0
