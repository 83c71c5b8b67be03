"""Preemption: the Preempt flow (``evaluator``), the dry run that finds victims node by node or
in vectorised batches (``dry_run``), and how candidates and victims are ranked (``candidates``).

Shared by the preemption plugins (DefaultPreemption, CapacityScheduling) and the extender's
preempt verb, as kube-scheduler's pkg/scheduler/framework/preemption.
"""
