"""Cluster backends the scheduler binds through (``framework.handle.ClusterBackend``): ``memory``,
the in-memory cluster of ``schedule``, ``explain``, the bench and the extender. The live cluster
is ``kubesched.live.backend``; the simulator's is ``kubesched.sim.backend``.

``api`` is the interface of PreBind's other API calls (volumes, ResourceClaims; ``handle.api``):
``store.StoreAPI`` answers them offline from the snapshot's stores, with ``controllers`` standing
in for the PV controller and a provisioner; ``kubesched.live.objects`` answers them live.
"""
