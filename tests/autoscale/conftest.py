"""The test API server's fixtures (``kube_api``, ``kubeconfig``) for the live autoscaler tests here."""

from tests.kubeapi.fixtures import kube_api, kubeconfig  # noqa: F401
