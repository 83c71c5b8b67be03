"""Shared helpers for the deploy/ tests: render the chart with Helm, load objects, parse the CLI."""

from __future__ import annotations

import argparse
import importlib.util
import json
import ssl
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
CHART = DEPLOY / "helm" / "kubesched"
MANIFESTS = DEPLOY / "manifests"
#: The Kubernetes release whose OpenAPI schemas the objects must satisfy: kubesched's pinned upstream.
KUBE_VERSION = "1.36.0"
@cache
def render_module() -> Any:
    """deploy/render_manifests.py (not a package): the one place that renders the chart."""
    spec = importlib.util.spec_from_file_location("render_manifests", DEPLOY / "render_manifests.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def render(values: dict[str, Any] | None = None, **kw: Any) -> dict[str, str]:
    """Template file name -> Helm's rendered text."""
    return render_module().render_chart(values, **kw)


def objects(rendered: dict[str, str]) -> list[dict]:
    """Every Kubernetes object in a rendering (NOTES.txt and empty templates left out)."""
    out: list[dict] = []
    for name, text in sorted(rendered.items()):
        if name.endswith(".yaml"):
            out.extend(d for d in yaml.safe_load_all(text) if d)
    return out


def manifest_objects() -> list[tuple[str, dict]]:
    """(file name, object) for every object in deploy/manifests/."""
    out = []
    for path in sorted(MANIFESTS.glob("*.yaml")):
        out.extend((path.name, d) for d in yaml.safe_load_all(path.read_text()) if d)
    return out


def by_kind(objs: list[dict], kind: str) -> list[dict]:
    return [o for o in objs if o["kind"] == kind]


def one(objs: list[dict], kind: str) -> dict:
    found = by_kind(objs, kind)
    assert len(found) == 1, f"expected one {kind}, found {len(found)}"
    return found[0]


def container(objs: list[dict]) -> dict:
    containers = one(objs, "Deployment")["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    return containers[0]


def granted(role: dict) -> dict[tuple[str, str, str | None], set[str]]:
    """Expand a role's rules into (group, resource, name) -> verbs; wildcards are not allowed."""
    out: dict[tuple[str, str, str | None], set[str]] = {}
    for rule in role["rules"]:
        assert "nonResourceURLs" not in rule
        names = rule.get("resourceNames") or [None]
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                for name in names:
                    assert "*" not in (group, resource, name, *rule["verbs"]), rule
                    out.setdefault((group, resource, name), set()).update(rule["verbs"])
    return out


def model_name(obj: dict) -> str:
    """The official client's model class for an object: apps/v1 Deployment -> V1Deployment."""
    version = obj["apiVersion"].rpartition("/")[2]
    return version[0].upper() + version[1:] + obj["kind"]


def client_round_trip(obj: dict) -> Any:
    """The object as the official client's model, serialized back (unknown fields are dropped)."""
    from kubernetes import client

    api = client.ApiClient()
    text = json.dumps(obj)
    try:
        model = api.deserialize(text, model_name(obj), "application/json")
    except TypeError:  # older clients take a response object with .data
        model = api.deserialize(type("Response", (), {"data": text})(), model_name(obj))
    return api.sanitize_for_serialization(model)


def parse_cli(argv: list[str]) -> argparse.Namespace:
    """kubesched's own parser on ``argv``; an argparse error fails the test with its message."""
    from kubesched.cli import build_parser

    try:
        return build_parser().parse_args(argv)
    except SystemExit as e:
        raise AssertionError(f"kubesched {' '.join(argv)}: rejected by kubesched.cli (exit {e.code})") from None


def run_flags(argv: list[str]) -> argparse.Namespace:
    """A `kubesched run` command line, parsed by kubesched's own parser."""
    assert argv[0] == "run"
    return parse_cli(argv)


def mount_secrets(objs: list[dict], into: Path) -> Callable[[str], str]:
    """Write the Secrets the Deployment mounts (as the chart generated them) under ``into``, as the
    kubelet would at their mount paths; returns a rewriter of the arguments' paths to those files."""
    import base64

    secrets = {o["metadata"]["name"]: o for o in objs if o.get("kind") == "Secret"}
    spec = one(objs, "Deployment")["spec"]["template"]["spec"]
    volumes = {v["name"]: v for v in spec["volumes"]}
    moved: dict[str, str] = {}
    for vm in container(objs)["volumeMounts"]:
        secret = volumes[vm["name"]].get("secret")
        if secret is None:
            continue
        d = into / vm["name"]
        d.mkdir(parents=True, exist_ok=True)
        for key, value in secrets[secret["secretName"]]["data"].items():
            (d / key).write_bytes(base64.b64decode(value))
        moved[vm["mountPath"]] = str(d)

    def rewrite(arg: str) -> str:
        for mount, d in moved.items():
            arg = arg.replace(mount, d)
        return arg

    return rewrite


def https_context(objs: list[dict], *, client: bool = False) -> ssl.SSLContext:
    """A client that trusts the chart's generated CA (kube-scheduler's tlsConfig caFile) and, with
    ``client``, presents the generated kube-scheduler certificate (certFile/keyFile)."""
    import base64
    import tempfile

    secrets = {o["metadata"]["name"]: o["data"] for o in objs if o.get("kind") == "Secret"}
    tls = next(d for n, d in secrets.items() if n.endswith("-tls"))
    ctx = ssl.create_default_context(cadata=base64.b64decode(tls["ca.crt"]).decode())
    ctx.check_hostname = False  # the certificate names the Service; the tests connect to 127.0.0.1
    if client:
        data = next(d for n, d in secrets.items() if n.endswith("-client"))
        with tempfile.TemporaryDirectory() as tmp:
            crt, key = Path(tmp) / "c.crt", Path(tmp) / "c.key"
            crt.write_bytes(base64.b64decode(data["tls.crt"]))
            key.write_bytes(base64.b64decode(data["tls.key"]))
            ctx.load_cert_chain(str(crt), str(key))
    return ctx
