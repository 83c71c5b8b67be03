"""End-to-end tests of ``kubesched run`` against a real cluster (kind, minikube, a dev cluster).

    python -m pytest e2e --kubeconfig ~/.kube/config        # or KUBESCHED_E2E_KUBECONFIG=...

Without a kubeconfig every test is skipped, with the reason. Not part of the default test run
(pyproject's testpaths is tests/). See docs/live.md.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client as k8s_client
from kubernetes import config as k8s_config


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--kubeconfig",
        default=os.environ.get("KUBESCHED_E2E_KUBECONFIG", ""),
        help="kubeconfig of the cluster to run the e2e suite against (or $KUBESCHED_E2E_KUBECONFIG)",
    )


@pytest.fixture(scope="session")
def kubeconfig_path(pytestconfig: pytest.Config) -> str:
    path = str(pytestconfig.getoption("--kubeconfig") or "")
    if not path:
        pytest.skip("no cluster: pass --kubeconfig PATH or set KUBESCHED_E2E_KUBECONFIG")
    if not Path(path).is_file():
        pytest.fail(f"--kubeconfig {path}: no such file")
    return path


@pytest.fixture(scope="session")
def core(kubeconfig_path: str) -> k8s_client.CoreV1Api:
    cfg = k8s_client.Configuration()
    k8s_config.load_kube_config(config_file=kubeconfig_path, client_configuration=cfg, persist_config=False)
    return k8s_client.CoreV1Api(k8s_client.ApiClient(cfg))


@pytest.fixture
def namespace(core: k8s_client.CoreV1Api) -> Iterator[str]:
    """A fresh namespace, deleted (with everything in it) after the test."""
    name = f"kubesched-e2e-{secrets.token_hex(3)}"
    core.create_namespace({"metadata": {"name": name, "labels": {"app.kubernetes.io/part-of": "kubesched-e2e"}}})
    try:
        yield name
    finally:
        try:
            core.delete_namespace(name)
        except k8s_client.ApiException:
            pass


@pytest.fixture
def scheduler_name(namespace: str) -> str:
    """A scheduler name of this test's own, so a kubesched already running in the cluster is not involved."""
    return namespace


@pytest.fixture
def sched_config(tmp_path: Path, scheduler_name: str, namespace: str) -> str:
    """leaderElect is true by default: the Lease goes to the test's namespace, deleted with it."""
    path = tmp_path / "sched.yaml"
    path.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        f"leaderElection:\n  resourceNamespace: {namespace}\n"
        f"profiles:\n- schedulerName: {scheduler_name}\n"
    )
    return str(path)
