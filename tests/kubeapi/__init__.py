"""A Kubernetes API server for tests: the real REST and watch protocol over HTTP on loopback.

The live scheduler's tests drive it with the unmodified official `kubernetes` client; see
docs/testing-live.md.
"""

from .errors import APIError
from .server import KubeAPIServer

__all__ = ["APIError", "KubeAPIServer"]
