"""The edge-cloud experiment of ``kubesched multicluster simulate`` (docs/multicluster.md)."""
