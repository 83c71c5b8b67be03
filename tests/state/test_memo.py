"""The snapshot's memo: values rebuilt exactly when what they depend on changed."""

from __future__ import annotations

from kubesched.api.objects import Node, Pod
from kubesched.state import memo as M
from kubesched.testing import build_snapshot, make_node, make_pod

ANTI = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "kubernetes.io/hostname"}
        ]
    }
}


def _pod(name: str, node: str, affinity: dict | None = None) -> Pod:
    spec = {"affinity": affinity} if affinity else None
    return Pod.parse(make_pod(name, uid=name, node=node, labels={"app": "x"}, spec=spec))


def test_get_rebuilds_only_when_its_dependencies_change() -> None:
    snap = build_snapshot([make_node("a"), make_node("b")])
    builds: dict[str, int] = {}

    def getter(key: str, on: int) -> int:
        def build() -> int:
            builds[key] = builds.get(key, 0) + 1
            return builds[key]

        return snap.memo.get(key, build, on=on)

    deps = {"nodes": M.NODES, "pods": M.PODS, "ns": M.NAMESPACES, "aff": M.AFFINITY_PODS, "all": M.EVERYTHING}

    def read_all() -> dict[str, int]:
        return {k: getter(k, on) for k, on in deps.items()}

    assert read_all() == dict.fromkeys(deps, 1)
    assert read_all() == dict.fromkeys(deps, 1)  # nothing changed: kept
    snap.add_pod(_pod("p", "a"))  # a pod without affinity terms
    assert read_all() == {"nodes": 1, "pods": 2, "ns": 1, "aff": 1, "all": 2}
    snap.add_pod(_pod("q", "b", ANTI))
    assert read_all() == {"nodes": 1, "pods": 3, "ns": 1, "aff": 2, "all": 3}
    snap.set_namespace("team", {"env": "prod"})
    assert read_all() == {"nodes": 1, "pods": 3, "ns": 2, "aff": 2, "all": 4}
    snap.update_node(Node.parse(make_node("a", labels={"zone": "z1"})))
    assert read_all() == {"nodes": 2, "pods": 3, "ns": 2, "aff": 2, "all": 5}


def test_get_with_a_version_rebuilds_when_the_version_moves() -> None:
    snap = build_snapshot([make_node("a")])
    calls: list[int] = []
    for version in (1, 1, 2, 2, 1):
        snap.memo.get("v", lambda v=version: calls.append(v) or v, on=M.NODES, version=version)
    assert calls == [1, 2, 1]


def test_follow_updates_with_changed_rows_and_rebuilds_on_node_changes() -> None:
    snap = build_snapshot([make_node("a"), make_node("b"), make_node("c")])
    log: list[tuple[str, object]] = []

    def read() -> list:
        def build(old: list | None) -> list:
            log.append(("build", old is not None))
            return []

        def update(value: list, rows: list[int]) -> None:
            log.append(("update", list(rows)))
            value.extend(rows)

        return snap.memo.follow("rows", build, update, on=M.NODES)

    seen = read()
    assert read() is seen and log == [("build", False)]  # nothing changed: no update call
    snap.add_pod(_pod("p1", "b"))
    snap.add_pod(_pod("p2", "c"))
    snap.remove_pod("p1")
    assert read() is seen and seen == [1, 2, 1]  # rows in order, repeats kept
    snap.set_namespace("ns", {})  # the per-row log restarts: rebuilt, with the old value handed over
    assert read() is not seen and log[-1] == ("build", True)
    snap.add_node(Node.parse(make_node("d")))
    read()
    assert log[-1] == ("build", True)
    snap.add_pod(_pod("p3", "d"))
    assert read() == [3] and log[-1] == ("update", [3])


def test_current_is_the_followed_value_while_the_snapshot_stays_put() -> None:
    snap = build_snapshot([make_node("a"), make_node("b")])
    assert snap.memo.current("rows") is None  # never followed
    seen = snap.memo.follow("rows", lambda _old: [], lambda v, rows: v.extend(rows))
    assert snap.memo.current("rows") is seen
    snap.add_pod(_pod("p", "a"))
    assert snap.memo.current("rows") is None  # changed since the last read: follow brings it up to date
    assert snap.memo.follow("rows", lambda _old: [], lambda v, rows: v.extend(rows)) == [0]
    assert snap.memo.current("rows") is seen


def test_follow_the_affinity_log() -> None:
    snap = build_snapshot([make_node("a"), make_node("b")])
    uids: list[str] = []

    def read() -> list[str]:
        return snap.memo.follow("aff", lambda _old: [], lambda v, changes: v.extend(changes), log=M.AFFINITY)

    read()
    snap.add_pod(_pod("plain", "a"))  # no affinity terms: not in the log
    snap.add_pod(_pod("anti", "b", ANTI))
    snap.remove_pod("anti")
    uids = read()
    assert uids == ["anti", "anti"]


def test_values_are_bounded() -> None:
    snap = build_snapshot([make_node("a")])
    for i in range(3 * M.LIMIT):
        snap.memo.get(("k", i), lambda i=i: i, on=M.NODES)
    assert len(snap.memo._values) <= M.LIMIT
    assert snap.memo.get(("k", 3 * M.LIMIT - 1), lambda: -1, on=M.NODES) == 3 * M.LIMIT - 1  # the latest are kept
