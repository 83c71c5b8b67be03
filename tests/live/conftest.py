"""The test API server's fixtures (``kube_api``, ``kubeconfig``) for the live scheduler's tests."""

from tests.kubeapi.fixtures import kube_api, kubeconfig  # noqa: F401
