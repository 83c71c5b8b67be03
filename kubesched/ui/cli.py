"""`kubesched ui`: open a cluster dump, a configuration, a simulation or an experiment in the browser
(the flags are in ``kubesched.commands.ui``)."""

from __future__ import annotations

import argparse
import sys

from kubesched.errors import InputError


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
    if args.kubeconfig and (args.path or args.file):
        raise InputError("give --kubeconfig (a live cluster) or PATH / -f files, not both", path="--kubeconfig")
    if args.context and not args.kubeconfig:
        raise InputError("a context of which kubeconfig? add --kubeconfig FILE", path="--context")
    if args.path and args.config and detect(args.path) != CLUSTER:
        raise InputError("--config: only for a cluster (a simulation or experiment folder has its own)")
    token = os.environ.get(TOKEN_ENV) or new_token()
    registry = build_registry(args.plugin_path, import_module_names=args.import_plugins)
    registry.module_refusal = (
        "kubesched ui imports no module named by a configuration unless started with --import-plugins "
        "(importing runs its code)"
    )
    if args.kubeconfig:
        ws = _open_live(args, registry)
    else:
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
    try:
        uvicorn.run(app, host=host, port=port, log_level="warning")
    finally:
        if ws.live is not None:
            ws.live.close()
    return 0


def _open_live(args: argparse.Namespace, registry):  # noqa: ANN001, ANN202 - Registry, Workspace (imported lazily)
    """The cluster of ``--kubeconfig``, followed read-only; an API server that does not answer is
    one line (exit 2) before anything is served."""
    from pathlib import Path

    from kubesched.ui.live import connect, open_live
    from kubesched.ui.sources import config_yaml, parse_config_text

    text = ""
    if args.config:
        try:
            text = Path(args.config).read_text()
        except OSError as e:
            raise InputError(f"cannot read: {e.strerror}", source=args.config) from None
    cfg = parse_config_text(text, registry, args.config or "configuration")
    client = connect(args.kubeconfig, args.context)
    title = f"live cluster {client.host}" + (f" (context {args.context})" if args.context else "")
    return open_live(client, cfg, text or config_yaml(cfg), registry, seed=args.seed, title=title)
