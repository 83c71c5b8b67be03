"""Write deploy/manifests/ from the Helm chart with its default values (release and namespace "kubesched"),
except that the TLS and /metrics token Secrets are expected to exist (``MANIFEST_VALUES``): the
chart generates them, but generated keys do not belong in files under version control.

The plain manifests are the chart's output, never edited by hand, so the two cannot drift:
tests/deploy checks that this script's output equals the files. Rendering uses Helm's own Go
engine through the ``helm-python-sdk`` package (a test dependency); with the helm CLI the same
objects come from ``helm template kubesched deploy/helm/kubesched --namespace kubesched``.

    python deploy/render_manifests.py           # rewrite deploy/manifests/
    python deploy/render_manifests.py --check   # exit 1 if deploy/manifests/ is out of date
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

DEPLOY = Path(__file__).resolve().parent
CHART = DEPLOY / "helm" / "kubesched"
MANIFESTS = DEPLOY / "manifests"
RELEASE = "kubesched"
NAMESPACE = "kubesched"

#: Template -> manifest file. The numbers order ``kubectl apply -f deploy/manifests/`` (files are
#: applied by name): the namespace first, the Deployment after what its pods reference.
FILES: dict[str, str] = {
    "serviceaccount.yaml": "01-serviceaccount.yaml",
    "clusterrole.yaml": "02-clusterrole.yaml",
    "role.yaml": "03-role.yaml",
    "configmap.yaml": "04-configmap.yaml",
    "service.yaml": "05-service.yaml",
    "deployment.yaml": "06-deployment.yaml",
}
#: The values the manifests are rendered with: Secrets you create (docs/deploy.md says how).
MANIFEST_VALUES: dict[str, Any] = {
    "tls": {"existingSecret": "kubesched-tls"},
    "metricsAuth": {"existingSecret": "kubesched-metrics-token"},
}
NAMESPACE_FILE = "00-namespace.yaml"
HEADER = (
    "# Generated from deploy/helm/kubesched with its default values by deploy/render_manifests.py\n"
    f"# (= helm template {RELEASE} deploy/helm/kubesched --namespace {NAMESPACE}\n"
    "#  --set tls.existingSecret=kubesched-tls --set metricsAuth.existingSecret=kubesched-metrics-token).\n"
    "# Do not edit: change the chart and run the script again.\n"
)
NAMESPACE_DOC = f"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {NAMESPACE}\n"


def render_chart(
    values: dict[str, Any] | None = None, *, release: str = RELEASE, namespace: str = NAMESPACE
) -> dict[str, str]:
    """Helm's rendering of the chart: template file name (``deployment.yaml``) -> text."""
    import helm_python as helm  # helm-python-sdk: Helm's Go SDK, bundled in the wheel

    with helm.Chart.load(str(CHART)) as chart:
        out = chart.render(values or {}, name=release, namespace=namespace, is_install=True)
    return {Path(path).name: text for path, text in out.items()}


def expected_files() -> dict[str, str]:
    """deploy/manifests/ as it should be: file name -> content."""
    rendered = render_chart(MANIFEST_VALUES)
    unknown = sorted(
        name for name, text in rendered.items() if name.endswith(".yaml") and text.strip() and name not in FILES
    )
    if unknown:
        raise SystemExit(f"render_manifests: template(s) {', '.join(unknown)} missing from FILES")
    files = {NAMESPACE_FILE: HEADER + NAMESPACE_DOC}
    for template, target in FILES.items():
        files[target] = HEADER + rendered[template].strip() + "\n"
    return files


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare only; exit 1 when the files differ")
    args = ap.parse_args(argv)
    try:
        files = expected_files()
    except ImportError:
        sys.stderr.write("render_manifests: needs the helm-python-sdk package (pip install '.[test]')\n")
        return 2
    present = {p.name for p in MANIFESTS.glob("*.yaml")}
    stale = sorted(n for n, text in files.items() if not (MANIFESTS / n).is_file() or (MANIFESTS / n).read_text() != text)
    extra = sorted(present - set(files))
    if args.check:
        for name in stale + extra:
            sys.stderr.write(f"render_manifests: deploy/manifests/{name} is out of date\n")
        return 1 if stale or extra else 0
    MANIFESTS.mkdir(exist_ok=True)
    for name in extra:
        (MANIFESTS / name).unlink()
    for name, text in files.items():
        (MANIFESTS / name).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
