"""The scheduling framework: what plugins implement and what runs them.

``interfaces`` (the extension points, one mixin class each, and ``SignPlugin``, the opt-in for
the equivalence cache) and ``simple`` (per-node plugins); ``status`` and ``cycle_state`` (what
plugins return and share); ``runtime`` (``Framework``: one profile's plugins, run at each
extension point, every call timed and guarded); ``cycle`` (the scheduling cycle: the one path
through PreFilter, Filter, PostFilter, PreScore, Score and selecting a node); ``equivalence`` (the
cache behind the cycle's "find feasible nodes" and "score"); ``diagnosis`` (why a pod fits
nowhere: the FitError); ``preemption`` (the Preempt flow and its dry run); ``registry``
(plugins by name); ``handle`` (what plugins may reach); ``waiting`` (pods held at Permit).
"""
