"""A simulated pod's life: waiting to arrive, pending in the queue, running, and how it ended."""

WAITING, QUEUED, RUNNING, DONE, FAILED, PREEMPTED, EVICTED, WITHDRAWN = range(8)
STATE_NAMES = ("not-arrived", "pending", "running", "completed", "failed", "preempted", "evicted", "withdrawn")
