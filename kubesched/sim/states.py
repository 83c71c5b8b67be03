"""A simulated pod's life: waiting to arrive, pending in the queue, running, and how it ended."""

# GATED: held by a PreEnqueue plugin (spec.schedulingGates) to the end: never tried, so not failed
WAITING, QUEUED, RUNNING, DONE, FAILED, PREEMPTED, EVICTED, WITHDRAWN, GATED = range(9)
STATE_NAMES = (
    "not-arrived", "pending", "running", "completed", "failed", "preempted", "evicted", "withdrawn", "gated",
)  # fmt: skip
