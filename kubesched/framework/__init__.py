"""The scheduling framework: what plugins implement and what runs them.

``interfaces`` (the extension points, one mixin class each) and ``simple`` (per-node plugins),
``status`` and ``cycle_state`` (what plugins return and share), ``runtime`` (``Framework``: one
profile's plugins, run at each extension point, every call timed and guarded), ``equivalence``
(the cache that reuses plugins' verdicts across equal pods), ``diagnosis`` (why a pod fits
nowhere: the FitError), ``registry`` (plugins by name), ``handle`` (what plugins may reach),
``waiting`` (pods held at Permit), ``preemption`` (the Preempt flow and its dry run).
"""
