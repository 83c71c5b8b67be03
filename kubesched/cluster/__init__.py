"""Cluster backends the scheduler binds through (``framework.handle.ClusterBackend``): ``memory``,
the in-memory cluster of ``schedule``, ``explain``, the bench and the extender. The live cluster
is ``kubesched.live.backend``; the simulator's is ``kubesched.sim.backend``.
"""
