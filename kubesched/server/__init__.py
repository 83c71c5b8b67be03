"""HTTP faces of the scheduler: the extender protocol, health endpoints and Prometheus metrics.

Everything here validates at the edge (a bad body is HTTP 400 with one line naming the field)
and drives the same ``Scheduler``/``Framework`` as ``schedule`` and ``explain``.
"""
