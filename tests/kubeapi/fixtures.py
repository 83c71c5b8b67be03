"""pytest fixtures: `from tests.kubeapi.fixtures import kube_api, kubeconfig  # noqa: F401`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .server import KubeAPIServer


@pytest.fixture
def kube_api() -> Iterator[KubeAPIServer]:
    """A started test API server, closed after the test."""
    with KubeAPIServer() as api:
        yield api


@pytest.fixture
def kubeconfig(kube_api: KubeAPIServer, tmp_path: Path) -> str:
    """Path of a kubeconfig (context "test", no auth) for the kube_api server."""
    return kube_api.write_kubeconfig(tmp_path / "kubeconfig")
