"""When the pods a plugin asks for (framework.PodsToActivate) are activated, as kube-scheduler
v1.36's schedule_one.go does it: at the end of a successful scheduling cycle (Permit allowed or
made the pod wait), and at the end of a successful binding cycle (TestActivatePods in
test_extension_points); never after a rejection."""

from __future__ import annotations

from pathlib import Path

import pytest
from integration_testlib import node, placed, pod, profile_config, schedule

PLUGINS = str(Path(__file__).with_name("framework_plugins.py"))


@pytest.mark.parametrize("reject", [False, True], ids=["Permit allows", "Permit rejects"])
def test_permit_activates_pods_only_when_the_scheduling_cycle_succeeds(reject: bool, tmp_path: Path) -> None:
    waiting = pod("executor", "plugins", labels={"executor": ""}, schedulerName="2nd-scheduler")
    test_pod = pod("test-pod", "plugins")
    config = profile_config(
        {"permit": {"enabled": [{"name": "permit-plugin"}]}},
        [{"name": "permit-plugin", "args": {"activate": "executor", "reject": reject}}],
    )
    config["profiles"].append(
        {
            "schedulerName": "2nd-scheduler",
            "plugins": {"filter": {"enabled": [{"name": "filter-plugin"}]}},
            "pluginConfig": [{"name": "filter-plugin", "args": {"reject": True}}],
        }
    )
    result = schedule(tmp_path, [node("n"), waiting], then=[[test_pod]], config=config, plugin_paths=[PLUGINS])
    assert (placed(result, test_pod) is None) is reject
    assert result.session is not None
    queue = result.session.scheduler.queue
    (info,) = [q for q in queue.pending_pods() if q.pod.name == "executor"]
    # activated, it was tried again (and rejected again): the filter saw it twice
    fw = result.session.scheduler.frameworks["2nd-scheduler"]
    assert fw.plugins["filter-plugin"].calls == (1 if reject else 2)
    assert info.pod.uid in queue.unschedulable
