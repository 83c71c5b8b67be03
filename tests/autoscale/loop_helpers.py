"""What the tests that drive the autoscaler's loop directly share: the default profiles'
frameworks, the status of a pod the scheduler marked unschedulable, and a node provider that
records what the loop asked of it."""

from __future__ import annotations

from kubesched.app import build_registry
from kubesched.autoscale.config import NodeGroup
from kubesched.config.load import default_config
from kubesched.scheduler import Scheduler
from kubesched.state.snapshot import Snapshot

REG = build_registry()
FRAMEWORKS = Scheduler(default_config(REG.points_of), Snapshot(), None, REG, seed=0).frameworks
UNSCHEDULABLE = {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]}


class Recorder:
    """A NodeProvider: the groups nodes were asked of and the nodes deleted, in order."""

    def __init__(self) -> None:
        self.created: list[str] = []
        self.deleted: list[str] = []

    def create(self, group: NodeGroup, node: object) -> None:
        self.created.append(group.name)

    def delete(self, name: str) -> None:
        self.deleted.append(name)

    def cancel(self, name: str) -> None:
        raise AssertionError(f"{name} was given up on")
