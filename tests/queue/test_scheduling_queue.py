"""activeQ order, backoff doubling with a cap, unschedulable pods and event moves."""

from kubesched.api.objects import Pod
from kubesched.framework.status import Code, Status
from kubesched.plugins.noderesources.fit import NodeResourcesFit
from kubesched.queue.scheduling_queue import SchedulingQueue, merge_event_plugins
from kubesched.testing import make_pod


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def pod(name: str, priority: int = 0, **kw) -> Pod:
    return Pod.parse(make_pod(name, priority=priority, **kw))


def test_active_queue_orders_by_priority_then_arrival():
    clock = Clock()
    q = SchedulingQueue(clock)
    for i, (n, prio) in enumerate([("a", 0), ("b", 10), ("c", 0), ("d", 10)]):
        clock.t = i
        q.add(pod(n, prio))
    order = [q.pop().pod.name for _ in range(4)]
    assert order == ["b", "d", "a", "c"]
    assert q.pop() is None


def test_backoff_doubles_and_caps_at_max():
    q = SchedulingQueue(Clock(), initial_backoff=1, max_backoff=10)
    assert [q.backoff_duration(a) for a in range(1, 7)] == [1, 2, 4, 8, 10, 10]
    assert q.backoff_duration(0) == 0


def test_unschedulable_pod_waits_for_a_relevant_event_then_backoff():
    clock = Clock()
    events = merge_event_plugins({"NodeResourcesFit": NodeResourcesFit.events_to_register})
    q = SchedulingQueue(clock, event_plugins=events)
    q.add(pod("a"))
    qpi = q.pop()
    q.add_unschedulable(qpi, {"NodeResourcesFit"})
    assert q.counts()["unschedulable"] == 1
    q.move_for_event("AssignedPodAdd")  # does not help NodeResourcesFit
    assert q.counts()["unschedulable"] == 1
    q.move_for_event("AssignedPodDelete")
    assert q.counts()["backoff"] == 1 and q.pop() is None  # still backing off (1 s)
    clock.t = 1.0
    assert q.pop().pod.name == "a"


def test_an_event_in_flight_requeues_only_pods_it_may_help():
    """v1.36 (queueing hints): a pod that fails after events arrived during its attempt goes to
    backoff when one of them may help what rejected it, else to the unschedulable pods."""
    clock = Clock()
    events = merge_event_plugins({"NodeResourcesFit": NodeResourcesFit.events_to_register})
    q = SchedulingQueue(clock, event_plugins=events)
    q.add(pod("a"))
    q.add(pod("b"))
    a, b = q.pop(), q.pop()
    q.move_for_event("AssignedPodAdd")  # does not help NodeResourcesFit
    q.add_unschedulable(a, {"NodeResourcesFit"})
    assert q._where[a.pod.uid] == "unschedulable"
    q.move_for_event("AssignedPodDelete")  # moves a; b, in flight, sees it
    q.add_unschedulable(b, {"NodeResourcesFit"})
    assert q._where[a.pod.uid] == q._where[b.pod.uid] == "backoff"
    q.add(pod("c"))
    q.add_unschedulable(q.pop(), {"NodeResourcesFit"})  # no event since it was popped
    assert q.counts()["unschedulable"] == 1


def test_a_plugin_that_registers_no_event_is_helped_by_none():
    """EventsToRegister returning nothing: no event moves the pods the plugin rejected (an
    undeclared plugin's pods move on every event)."""
    clock = Clock()
    q = SchedulingQueue(clock, event_plugins=merge_event_plugins({"Quiet": ()}), declared=["Quiet"])
    q.add(pod("a"))
    q.add(pod("b"))
    a, b = q.pop(), q.pop()
    q.add_unschedulable(a, {"Quiet"})
    q.move_for_event("AssignedPodDelete")
    q.add_unschedulable(b, {"Quiet"})
    assert q.counts()["unschedulable"] == 2
    q.add(pod("c"))
    q.add_unschedulable(q.pop(), {"Undeclared"})
    assert q.move_for_event("NodeAdd") == 1 and q.counts()["unschedulable"] == 2


def test_unschedulable_timeout_requeues_after_five_minutes():
    clock = Clock()
    q = SchedulingQueue(clock)
    q.add(pod("a"))
    q.add_unschedulable(q.pop(), {"NodeAffinity"})
    clock.t = 299
    q.flush_unschedulable_leftover()
    assert q.counts()["unschedulable"] == 1
    clock.t = 300
    q.flush_unschedulable_leftover()  # not strictly longer than 5 minutes yet
    assert q.counts()["unschedulable"] == 1
    clock.t = 301
    q.flush_unschedulable_leftover()
    assert q.pop().pod.name == "a"


def test_error_goes_to_backoff_not_unschedulable():
    clock = Clock()
    q = SchedulingQueue(clock)
    q.add(pod("a"))
    q.add_unschedulable(q.pop(), set(), error=True)
    assert q.counts()["backoff"] == 1


def test_pre_enqueue_gates_pods():
    gate = lambda p: Status(Code.UnschedulableAndUnresolvable, ("gated",)) if p.scheduling_gates else Status()  # noqa: E731
    q = SchedulingQueue(Clock(), pre_enqueue=gate)
    q.add(pod("g", spec={"schedulingGates": [{"name": "x"}]}))
    assert q.counts()["gated"] == 1 and q.pop() is None
    q.update(pod("g"))
    assert q.pop().pod.name == "g"


def test_an_event_of_the_gating_plugin_moves_a_gated_pod():
    """A pod DynamicResources gates (its claim does not exist yet) is let in by
    ResourceClaimAdd, which that plugin registered, and by no other plugin's event."""
    claims: set[str] = set()

    def gate(p: Pod) -> Status:
        return Status() if p.name in claims else Status(Code.UnschedulableAndUnresolvable, ("no claim",), "DynamicResources")

    q = SchedulingQueue(
        Clock(),
        pre_enqueue=gate,
        event_plugins={"ResourceClaimAdd": {"DynamicResources"}, "NodeAdd": {"NodeResourcesFit"}},
    )
    q.add(pod("a"))
    claims.add("a")
    assert q.move_for_event("NodeAdd") == 0 and q.counts()["gated"] == 1
    assert q.move_for_event("ResourceClaimAdd") == 1
    assert q.pop().pod.name == "a"


def test_activate_moves_backoff_and_unschedulable_pods_only():
    clock = Clock()
    q = SchedulingQueue(clock, initial_backoff=5)
    uid = {}
    for n in ("backing", "stuck", "active"):
        p = pod(n)
        uid[n] = p.uid
        q.add(p)
    q.add_unschedulable(q.pop(), set(), error=True)  # equal priority: arrival order
    q.add_unschedulable(q.pop(), {"NodeAffinity"})
    assert q.counts() == {"active": 1, "backoff": 1, "unschedulable": 1, "gated": 0}
    assert q.activate([*uid.values(), "unknown"]) == 2
    assert q.counts() == {"active": 3, "backoff": 0, "unschedulable": 0, "gated": 0}
    assert sorted(q.pop().pod.name for _ in range(3)) == ["active", "backing", "stuck"]
    assert q.pop() is None  # the stale backoff heap entry is dropped, not popped twice


def test_restore_puts_a_done_pod_back_for_its_requeue():
    q = SchedulingQueue(Clock())
    q.add(pod("a"))
    qpi = q.pop()
    q.done(qpi.pod.uid)
    assert not q.contains(qpi.pod.uid)
    q.add_unschedulable(qpi, {"NodeAffinity"})  # ignored: the pod left the books
    assert q.counts()["unschedulable"] == 0
    q.restore(qpi)
    q.add_unschedulable(qpi, {"NodeAffinity"})
    assert q.contains(qpi.pod.uid) and q.counts()["unschedulable"] == 1


def test_move_for_event_can_leave_one_pod_where_it_is():
    q = SchedulingQueue(Clock(), event_plugins=merge_event_plugins({"NodeResourcesFit": {"AssignedPodDelete"}}))
    kept = pod("a")
    for p in (kept, pod("b")):
        q.add(p)
        q.add_unschedulable(q.pop(), {"NodeResourcesFit"})
    assert q.move_for_event("AssignedPodDelete", except_uid=kept.uid) == 1
    assert set(q.unschedulable) == {kept.uid} and q.counts()["backoff"] == 1
