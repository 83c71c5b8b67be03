"""SchedulingGates: hold pods with ``spec.schedulingGates`` out of the active queue."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubesched.framework.interfaces import PreEnqueuePlugin
from kubesched.framework.status import Code, Status

if TYPE_CHECKING:
    from kubesched.api.objects import Pod

NAME = "SchedulingGates"


class SchedulingGates(PreEnqueuePlugin):
    """PreEnqueue: a gated pod waits, unresolvably, until a controller removes every gate."""

    name = NAME

    def pre_enqueue(self, pod: Pod) -> Status | None:
        """Message formatted like Go's ``fmt.Sprintf("%v", []string)``: ``[a b]``."""
        if not pod.scheduling_gates:
            return None
        gates = " ".join(pod.scheduling_gates)
        return Status(Code.UnschedulableAndUnresolvable, (f"waiting for scheduling gates: [{gates}]",), NAME)
