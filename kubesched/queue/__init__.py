"""The scheduling queue (``scheduling_queue``): activeQ, backoffQ and the unschedulable pods, as
kube-scheduler keeps them, with the public API the scheduler, live binding and the simulator use
(add, pop, done, restore, activate, move_for_event)."""
