"""Autoscaling: Cluster Autoscaler's loop (``core``: estimator, expanders, scale-down) and a
Karpenter-like provisioner, driven by the simulator on virtual time (``sim``) or against a live
cluster (``live``, ``kubesched autoscale``)."""
