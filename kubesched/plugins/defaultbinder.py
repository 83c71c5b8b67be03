"""DefaultBinder: bind the pod through the cluster backend (pods/binding live, a map in memory)."""

from __future__ import annotations

from kubesched.api.objects import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import BindPlugin
from kubesched.framework.status import Status


class DefaultBinder(BindPlugin):
    name = "DefaultBinder"

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        cluster = self.handle.cluster if self.handle else None
        if cluster is None:
            return Status()  # no backend (explain, dry runs): the assumption is the binding
        try:
            cluster.bind(pod, node_name)
        except Exception as e:  # noqa: BLE001 - a failed bind is a status, and the pod is retried
            # fwk.AsStatus(err): the framework words it 'running Bind plugin "DefaultBinder": <err>'
            return Status.error(str(e), self.name)
        return Status()
