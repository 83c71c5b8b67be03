"""kubesched: a kube-scheduler-compatible scheduler and scheduling lab in Python."""

__version__ = "0.1.0"
UPSTREAM_RELEASE = "v1.36"
