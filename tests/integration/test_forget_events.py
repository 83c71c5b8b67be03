"""Which failures of an assumed pod move the unschedulable pods (kube-scheduler v1.36,
schedule_one.go): forgetting the pod in the binding cycle (handleBindingCycleError) is an
AssignedPodDelete event; a Reserve or Permit failure in the scheduling cycle forgets it with none."""

from __future__ import annotations

from pathlib import Path

import pytest
from integration_testlib import container, node, placed, pod, profile_config, schedule

PLUGINS = str(Path(__file__).with_name("framework_plugins.py"))


@pytest.mark.parametrize(
    ("point", "name", "args", "moved"),
    [
        ("permit", "rejectedPermitPlugin", {"reject": True}, False),
        ("reserve", "failedReservePlugin1", {"fail": True}, False),
        ("preBind", "prebind-plugin", {"reject": True}, True),
    ],
    ids=["rejected at Permit", "failed at Reserve", "rejected at PreBind"],
)
def test_forgetting_moves_unschedulable_pods_from_the_binding_cycle_only(
    point: str, name: str, args: dict, moved: bool, tmp_path: Path
) -> None:
    big = pod("big", containers=[container(requests={"cpu": "2"})])  # NodeResourcesFit rejects it
    small = pod("small")
    config = profile_config({point: {"enabled": [{"name": name}]}}, [{"name": name, "args": args}])
    nodes = [node("n", capacity={"cpu": "1"})]
    result = schedule(tmp_path, [*nodes, big], then=[[small]], config=config, plugin_paths=[PLUGINS])
    assert placed(result, big) is None and placed(result, small) is None
    assert result.session is not None
    queue = result.session.scheduler.queue
    (big_info,) = [q for q in queue.pending_pods() if q.pod.name == "big"]
    assert (big_info.pod.uid in queue.unschedulable) is not moved
