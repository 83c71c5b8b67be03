"""The cluster state every plugin reads: ``snapshot`` (numpy columns over node rows: resources,
taints, labels; kube-scheduler's cache and snapshot in one), ``labels`` and ``pods`` (label
codes per node and an index of assigned pods), ``matchcount`` (matching pods per node, kept up to
date) and ``memo`` (values derived from the snapshot, rebuilt only when what they read changed).
"""
