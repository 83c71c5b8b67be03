"""The UI's timeline of a simulation explains a pod against the cluster objects `schedule` and
`explain` read: PodGroups (Coscheduling) and ElasticQuotas (CapacityScheduling) included."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.app import build_session
from kubesched.cli import main
from kubesched.explain import explain_pod
from kubesched.ui.sources import open_source
from tests.plugins.capacityscheduling.quota_testlib import quota, quota_config
from tests.plugins.coscheduling.gang_testlib import gang_config, member, node, pod_group


def _quota_case() -> tuple[dict, list[dict], str]:
    # within its namespace's ElasticQuota the first pod runs; the second would pass max
    docs = [quota("team", min={"cpu": "500m"}, max={"cpu": "1"}), member("small", ns="team", cpu="800m")]
    return quota_config(), [*docs, member("big", ns="team", cpu="800m")], "team/big"


def _gang_case() -> tuple[dict, list[dict], str]:
    # a gang of three with one member: Coscheduling's PreFilter waits for its siblings
    return gang_config(), [pod_group("g", ns="team", min_member=3), member("m0", "g", ns="team", cpu="100m")], "team/m0"


@pytest.mark.parametrize("case", [_quota_case, _gang_case], ids=["ElasticQuota", "PodGroup"])
def test_timeline_explains_as_explain_does(case: Any, tmp_path: Path) -> None:
    config, objects, key = case()
    cluster, cfg, out = tmp_path / "cluster.yaml", tmp_path / "config.yaml", tmp_path / "sim"
    cluster.write_text(yaml.safe_dump_all([node("node-a"), node("node-b"), *objects]))
    cfg.write_text(yaml.safe_dump(config))
    rc = main(["simulate", "-f", str(cluster), "--config", str(cfg), "--seed", "1", "--no-plots", "--no-progress",
               "--max-wait", "30", "-d", str(out), "-o", "json"])
    assert rc == 0
    ws = open_source(str(out))
    assert ws.timeline is not None
    pod = ws.pods[key]
    got, _, _ = ws.timeline.explain(pod, 0)
    s = build_session([str(cluster)], str(cfg), seed=1)
    want = explain_pod(s.scheduler, next(p for p in s.pending if p.key == key))
    assert want["selected"] is None and want["message"]  # the plugin keeps the pod pending
    assert got["selected"] is None
    # the same plugin's reason (the UI's scheduler has no queue of pending siblings to count)
    assert got["message"].split(",")[0] == want["message"].split(",")[0]
