"""Gang scheduling end to end: the Scheduler's Permit waiting on a virtual clock, the CLI, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from gang_testlib import gang_config, member, node, pod_group, start

from kubesched.app import example_path
from kubesched.cli import main
from kubesched.framework.status import Code

TIMEOUT_10S = "0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin Coscheduling."


def gang(n: int, group: str = "pg", cpu: str = "2", **kw: object) -> list[dict]:
    return [member(f"{group}-{i}", group, cpu=cpu, **kw) for i in range(n)]  # type: ignore[arg-type]


def test_room_for_three_binds_all_three_once_the_last_is_assumed() -> None:
    run = start([node("n1"), node("n2"), pod_group("pg", min_member=3), *gang(3)], gang_config())
    first, second = run.sched.schedule_one(), run.sched.schedule_one()
    assert [first.code, second.code] == [Code.Wait, Code.Wait]  # type: ignore[union-attr]
    assert run.cluster.bindings == {} and len(run.sched.waiting) == 2
    assert {"pg-0", "pg-1"} <= {p.name for p in run.snap.pod_by_uid.values()}  # assumed: resources held
    third = run.sched.schedule_one()
    assert third is not None and third.code == Code.Success
    assert sorted(run.bound) == ["pg-0", "pg-1", "pg-2"] and len(run.sched.waiting) == 0
    assert [entry[1] for entry in run.log] == ["pg-0", "pg-1", "pg-2"]  # waiting members bind first


def test_room_for_two_times_out_releases_everything_and_requeues() -> None:
    """minMember 3, room for 2, no PostFilter: the two that fit wait until the Permit timeout."""
    run = start([node("n1"), pod_group("pg", min_member=3), *gang(3)], gang_config(post_filter=False))
    for _ in range(3):
        run.sched.schedule_one()
    assert len(run.sched.waiting) == 2 and run.cluster.bindings == {}
    assert run.sched.next_waiting_deadline() == 10.0
    assert run.results["pg-2"].message == (
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
        "1 No preemption victims found for incoming pod."
    )
    run.until_idle()
    assert run.cluster.bindings == {}  # all or nothing
    assert run.clock.now >= 10.0  # the virtual clock moved to the timeouts
    assert len(run.sched.waiting) == 0 and run.snap.pod_by_uid == {}  # nothing stays assumed
    # t=10: both members that fit time out together, and are requeued with the message
    assert [(name, msg) for t, name, _, msg in run.log if t == 10.0][:2] == [("pg-0", TIMEOUT_10S), ("pg-1", TIMEOUT_10S)]
    for name in ("pg-0", "pg-1", "pg-2"):
        assert run.sched.queue.contains(name)  # requeued, not lost
        assert run.results[name].node is None


def test_room_for_two_with_post_filter_rejects_the_waiting_members() -> None:
    run = start([node("n1"), pod_group("pg", min_member=3), *gang(3)], gang_config())
    for _ in range(3):
        run.sched.schedule_one()
    assert len(run.sched.waiting) == 0 and run.snap.pod_by_uid == {}
    assert run.results["pg-0"].message == "0/1 nodes are available: 1 optimistic rejection in PostFilter."
    assert run.results["pg-2"].message == (  # both PostFilter plugins' reasons, appended as they are
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption "
        "victims found for incoming pod., PodGroup ns/pg gets rejected due to Pod pg-2 is unschedulable even "
        "after PostFilter"
    )
    run.until_idle()
    assert run.cluster.bindings == {} and len(run.sched.waiting) == 0 and run.snap.pod_by_uid == {}
    assert run.sched.attempts < 50  # the gang's endless retry loop is cut offline


def test_a_gang_that_cannot_fit_lets_the_next_gang_through() -> None:
    docs = [
        node("n1"),
        pod_group("big", min_member=3, created="2024-01-01T00:00:00Z"),
        pod_group("small", min_member=2, created="2024-01-01T00:01:00Z"),
        *gang(3, "big"),
        *gang(2, "small"),
    ]
    run = start(docs, gang_config())
    run.until_idle()
    assert sorted(run.bound) == ["small-0", "small-1"]
    assert all(run.results[f"big-{i}"].node is None for i in range(3))


def test_group_timeout_comes_from_the_pod_group_first() -> None:
    run = start([node("n1"), pod_group("pg", min_member=3, timeout=30), *gang(3)], gang_config(post_filter=False))
    run.sched.schedule_one()
    assert run.sched.next_waiting_deadline() == 30.0


def test_members_below_min_member_are_turned_away_in_pre_filter() -> None:
    run = start([node("n1"), pod_group("pg", min_member=3), *gang(2)], gang_config())
    run.until_idle()
    msg = run.results["pg-0"].message
    assert msg.startswith(
        "0/1 nodes are available: pre-filter pod pg-0 cannot find enough sibling pods, "
        "current pods number: 2, minMember of group: 3."
    )
    assert run.cluster.bindings == {}


def test_a_missing_pod_group_is_rejected_at_permit() -> None:
    run = start([node("n1"), member("lonely", "ghost", cpu="1")], gang_config())
    run.until_idle()
    assert run.results["lonely"].message == "0/1 nodes are available: 1 PodGroup not found."
    assert run.results["lonely"].code == Code.Unschedulable and run.cluster.bindings == {}


def test_deleting_a_waiting_pod_releases_its_group() -> None:
    run = start([node("n1"), node("n2"), pod_group("pg", min_member=3), *gang(3)], gang_config())
    run.sched.schedule_one()
    run.sched.schedule_one()
    victim = run.snap.pod_by_uid["pg-0"]
    run.sched.delete_pod(victim)
    assert "pg-0" not in run.snap.pod_by_uid and not run.sched.queue.contains("pg-0")
    assert len(run.sched.waiting) == 0  # pg-1 was rejected by Coscheduling's Unreserve
    assert run.results["pg-1"].message == "0/1 nodes are available: 1 rejection in Unreserve."
    assert "pg-0" not in run.results  # a deleted pod is not reported as failed


def test_pods_outside_groups_schedule_as_usual() -> None:
    run = start([node("n1"), member("free", cpu="1"), pod_group("pg", min_member=1), *gang(1)], gang_config())
    run.until_idle()
    assert sorted(run.bound) == ["free", "pg-0"]


# ---- the CLI -----------------------------------------------------------------------------
def test_example_is_all_or_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["schedule", "-f", example_path("coscheduling-cluster.yaml"), "--config", example_path("coscheduling.yaml"),
         "--seed", "1", "-o", "json"]
    )
    assert code == 0
    placed = {p["pod"]: p["node"] for p in json.loads(capsys.readouterr().out)["placements"]}
    assert {k for k, v in placed.items() if v} == {"ml/train-0", "ml/train-1", "ml/train-2"}
    assert [placed[f"ml/sweep-{i}"] for i in range(3)] == [None, None, None]


def write(tmp_path: Path, docs: list[dict]) -> str:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


@pytest.mark.parametrize(
    ("bad", "where"),
    [
        ({"spec": {"minMember": "three"}}, "documents[1].spec.minMember: expected an integer"),
        ({"spec": {"minMember": -1}}, "documents[1].spec.minMember: invalid value -1"),
        ({"spec": {"minResources": {"cpu": "lots"}}}, "documents[1].spec.minResources.cpu"),
        ({"spec": {"scheduleTimeoutSeconds": 1.5}}, "documents[1].spec.scheduleTimeoutSeconds"),
        ({"metadata": {"namespace": "ns"}}, "documents[1].metadata.name: Required value: name or generateName is required"),
        ({"apiVersion": "scheduling.volcano.sh/v1beta1"}, 'documents[1].apiVersion: unsupported apiVersion'),
    ],
)
def test_bad_pod_group_exits_2_naming_file_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], bad: dict, where: str
) -> None:
    pg = pod_group("pg", min_member=1)
    for k, v in bad.items():
        pg[k] = v if k == "apiVersion" else {**pg.get(k, {}), **v} if k != "metadata" else v
    path = write(tmp_path, [node("n1"), pg])
    assert main(["schedule", "-f", path]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and path in err and where in err, err


def test_duplicate_pod_group_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, [node("n1"), pod_group("pg", min_member=1), pod_group("pg", min_member=2)])
    assert main(["schedule", "-f", path]) == 2
    assert 'duplicate PodGroup "ns/pg"' in capsys.readouterr().err


def test_bad_coscheduling_args_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = gang_config(backoff=-5)
    cfg_path = tmp_path / "sched.yaml"
    cfg_path.write_text(yaml.safe_dump(cfg))
    path = write(tmp_path, [node("n1")])
    assert main(["schedule", "-f", path, "--config", str(cfg_path)]) == 2
    assert "sched.yaml: profiles[0].pluginConfig[0].args.podGroupBackoffSeconds: invalid value -5: cannot be negative" in capsys.readouterr().err
