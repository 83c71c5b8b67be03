"""kube-scheduler v1.36 test/integration/scheduler/plugins/plugins_test.go, through the whole cycle
(see integration_testlib), with its fake plugins (tests/integration/framework_plugins.py).

As upstream's ``initRegistryAndConfig``, a plugin is enabled at its extension points on top of the
default plugins; the cluster is ``InitTestSchedulerForFrameworkTest``'s nodes test-node-0...
(32 pods of capacity). Where upstream waits for a "scheduling error" (PodScheduled False, reason
SchedulerError), the pod's outcome here is the Error's message, worded as kube-scheduler words it.

TestPreFilterPlugin: 5 of 5. TestPostFilterPlugin: 6 of 6. TestScorePlugin: 2 of 2.
TestNormalizeScorePlugin: 1 of 1. TestReservePluginReserve: 2 of 2. TestPrebindPlugin: 6 of 7
("succeed on retry" retries after the next change, as an offline run stops when nothing changed;
"reject on 1st try but succeed on retry" likewise, not ported). TestUnReserveReservePlugins: 4 of
4. TestUnReservePreBindPlugins: 2 of 2. TestUnReservePermitPlugins: 3 of 3. TestPermitPlugin: 6 of
6. TestMultiplePermitPlugins: 1 of 1 and TestPermitPluginsCancelled: 1 of 1 (driven a step at a
time, as upstream allows or rejects the waiting pod from the test; cancellation is asserted as its
outcome). TestBindPlugin: 5 of 5. TestUnReserveBindPlugins: 2 of 2. TestPostBindPlugin: 2 of 2.
TestCoSchedulingWithPermitPlugin: 2 of 2. TestFilterPlugin: 2 of 2. TestPreScorePlugin: 2 of 2.
TestPreEnqueuePlugin: 2 of 2. TestQueueSortPlugin: 2 of 2 (popped from the queue, as upstream,
without scheduling). TestPreemptWithPermitPlugin: 3 of 3 and TestActivatePods: 1 of 1 (a step at
a time). Not ported: TestPreEnqueuePluginEventsToRegister, whose PreEnqueue call counts come from
updates of the gated pod through the API server (its status written by the scheduler, its gates
removed), which an offline run does not have.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from integration_testlib import (
    Outcome,
    container,
    load,
    node,
    placed,
    pod,
    profile_config,
    schedule,
    unschedulable_message,
)

from kubesched.app import Session
from kubesched.framework.cycle import ScheduleResult
from kubesched.framework.status import Code

PLUGINS = str(Path(__file__).with_name("framework_plugins.py"))
TEST_POD = pod("test-pod", "plugins")


def nodes(n: int) -> list[dict]:
    return [node(f"test-node-{i}") for i in range(n)]


def run(tmp_path: Path, n_nodes: int, plugins: dict, plugin_args: dict[str, dict] | None = None) -> Outcome:
    config = profile_config(plugins, [{"name": k, "args": v} for k, v in (plugin_args or {}).items()])
    return schedule(tmp_path, [*nodes(n_nodes), TEST_POD], config=config, plugin_paths=[PLUGINS])


def plugin(result: Outcome, name: str) -> Any:
    """The profile's instance of plugin ``name``."""
    assert result.session is not None
    fw = result.session.scheduler.frameworks["default-scheduler"]
    for pl in fw.plugins.values():
        if pl.name == name:
            return pl
    raise AssertionError(f"{name} is not enabled")


def message(result: Outcome) -> str:
    entry = result.entry("plugins/test-pod")
    assert entry is not None and entry["node"] is None, entry
    return entry["message"]


def enabled(point: str, name: str) -> dict:
    return {point: {"enabled": [{"name": name}]}}


# -- TestPreFilterPlugin ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "outcome"),
    [
        ({}, {"test-node-0", "test-node-1"}),
        ({"fail": True}, 'running PreFilter plugin "prefilter-plugin": injecting failure for pod test-pod'),
        (
            {"reject": True},
            "0/2 nodes are available: reject pod test-pod. "
            "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.",
        ),
        ({"nodes": ["test-node-0", "test-node-1"]}, {"test-node-0", "test-node-1"}),
        ({"nodes": ["test-node-0", "non-existent-node"]}, {"test-node-0"}),
    ],
    ids=[
        "disable fail and reject flags",
        "enable fail and disable reject flags",
        "disable fail and enable reject flags",
        "inject legal node names in PreFilterResult",
        "inject legal and illegal node names in PreFilterResult",
    ],
)
def test_pre_filter_plugin(args: dict, outcome: set[str] | str, tmp_path: Path) -> None:
    result = run(tmp_path, 2, enabled("preFilter", "prefilter-plugin"), {"prefilter-plugin": args})
    if isinstance(outcome, str):
        assert message(result) == outcome
    else:
        assert placed(result, TEST_POD) in outcome
    assert plugin(result, "prefilter-plugin").calls > 0


# -- TestPostFilterPlugin ---------------------------------------------------------------------------

POST_FILTER = [
    # name, nodes, reject filter, fail score, postfilter-plugin args, postfilter-plugin2 args,
    # filter calls (exact when the pod is scheduled, else at least), score calls (likewise),
    # PostFilter calls (exact)
    ("Filter passed and Score success", 30, False, False, {}, {}, 30, 30, 0),
    ("Filter failed and PostFilter passed", 1, True, False, {}, {}, 2, 1, 1),
    ("Filter failed and PostFilter failed", 1, True, False, {"reject": True}, {}, 2, 1, 2),
    ("Score failed and PostFilter failed", 1, True, True, {"reject": True}, {}, 2, 1, 2),
    ("Filter failed and first PostFilter broken", 1, True, False, {"break": True}, {}, 2, 0, 1),
    ("Filter failed and second PostFilter broken", 1, True, False, {"reject": True}, {"reject": True, "break": True}, 2, 0, 2),
]


@pytest.mark.parametrize(
    ("n_nodes", "reject_filter", "fail_score", "pf1", "pf2", "filter_calls", "score_calls", "post_filter_calls"),
    [c[1:] for c in POST_FILTER],
    ids=[c[0] for c in POST_FILTER],
)
def test_post_filter_plugin(
    n_nodes: int,
    reject_filter: bool,
    fail_score: bool,
    pf1: dict,
    pf2: dict,
    filter_calls: int,
    score_calls: int,
    post_filter_calls: int,
    tmp_path: Path,
) -> None:
    plugins = {
        "filter": {"enabled": [{"name": "filter-plugin"}]},
        "preScore": {"disabled": [{"name": "*"}]},
        "score": {"enabled": [{"name": "score-plugin"}], "disabled": [{"name": "*"}]},
        "postFilter": {"enabled": [{"name": "postfilter-plugin"}, {"name": "postfilter-plugin2"}], "disabled": [{"name": "*"}]},
    }
    args = {
        "filter-plugin": {"reject": reject_filter},
        "score-plugin": {"fail": fail_score},
        "postfilter-plugin": pf1,
        "postfilter-plugin2": pf2,
    }
    result = run(tmp_path, n_nodes, plugins, args)
    filtered, scored = plugin(result, "filter-plugin").calls, plugin(result, "score-plugin").calls
    if reject_filter:
        assert message(result).startswith(f"0/{n_nodes} nodes are available: ")
        assert filtered >= filter_calls and scored >= score_calls
    else:
        assert placed(result, TEST_POD) is not None
        assert (filtered, scored) == (filter_calls, score_calls)
    assert plugin(result, "postfilter-plugin").calls + plugin(result, "postfilter-plugin2").calls == post_filter_calls


# -- TestScorePlugin, TestNormalizeScorePlugin ------------------------------------------------------


@pytest.mark.parametrize("fail", [True, False], ids=["fail score plugin", "do not fail score plugin"])
def test_score_plugin(fail: bool, tmp_path: Path) -> None:
    result = run(tmp_path, 10, enabled("score", "score-plugin"), {"score-plugin": {"fail": fail}})
    score = plugin(result, "score-plugin")
    if fail:
        assert message(result) == 'running Score plugins: plugin "score-plugin" failed with: injecting failure for pod test-pod'
    else:
        assert placed(result, TEST_POD) == score.high_score_node != ""
    assert score.calls > 0


def test_normalize_score_plugin(tmp_path: Path) -> None:
    result = run(tmp_path, 10, enabled("score", "score-with-normalize-plugin"))
    assert placed(result, TEST_POD) is not None
    pl = plugin(result, "score-with-normalize-plugin")
    assert pl.calls > 0 and pl.normalize_calls > 0


# -- TestReservePluginReserve -----------------------------------------------------------------------


@pytest.mark.parametrize("fail", [True, False], ids=["fail reserve plugin", "do not fail reserve plugin"])
def test_reserve_plugin_reserve(fail: bool, tmp_path: Path) -> None:
    result = run(tmp_path, 2, enabled("reserve", "reserve-plugin"), {"reserve-plugin": {"fail": fail}})
    if fail:
        assert message(result) == 'running Reserve plugin "reserve-plugin": injecting failure for pod test-pod'
    else:
        assert placed(result, TEST_POD) in {"test-node-0", "test-node-1"}
    assert plugin(result, "reserve-plugin").calls > 0


# -- TestPrebindPlugin --------------------------------------------------------------------------------

PRE_BIND = [
    # name, args, outcome (nodes it may land on, or the Error's message, or None: unschedulable)
    ("disable fail and reject flags", {}, {"test-node-0", "test-node-1"}),
    ("enable fail and disable reject flags", {"fail": True}, 'running PreBind plugin "prebind-plugin": injecting failure for pod test-pod'),
    ("disable fail and enable reject flags", {"reject": True}, None),
    ("enable fail and reject flags", {"fail": True, "reject": True}, 'running PreBind plugin "prebind-plugin": injecting failure for pod test-pod'),
]


def pre_bind_config(args: dict) -> dict:
    """The PreBind plugin in the default profile; the filter plugin alone in "2nd-scheduler"."""
    config = profile_config({"preBind": {"enabled": [{"name": "prebind-plugin"}]}}, [{"name": "prebind-plugin", "args": args}])
    config["profiles"].append(
        {
            "schedulerName": "2nd-scheduler",
            "plugins": {"filter": {"enabled": [{"name": "filter-plugin"}]}},
            "pluginConfig": [{"name": "filter-plugin", "args": {"reject": True}}],
        }
    )
    return config


@pytest.mark.parametrize(("args", "outcome"), [c[1:] for c in PRE_BIND], ids=[c[0] for c in PRE_BIND])
def test_prebind_plugin(args: dict, outcome: set[str] | str | None, tmp_path: Path) -> None:
    result = schedule(tmp_path, [*nodes(2), TEST_POD], config=pre_bind_config(args), plugin_paths=[PLUGINS])
    if isinstance(outcome, set):
        assert placed(result, TEST_POD) in outcome
    elif isinstance(outcome, str):
        assert message(result) == outcome
    else:
        # v1.36's binding cycle: Permit is the last point that makes a pod unschedulable; a PreBind
        # rejection is the plugin's own status, not a FitError
        entry = result.entry("plugins/test-pod")
        assert message(result) == "reject pod test-pod" and entry is not None
    assert plugin(result, "prebind-plugin").calls > 0


def test_prebind_plugin_fail_on_first_try_but_succeed_on_retry(tmp_path: Path) -> None:
    """"fail on 1st try but succeed on retry". kube-scheduler retries a pod after an Error once its
    backoff expires; an offline run stops instead when nothing changed since the pod failed (it
    cannot tell a transient error from a lasting one), so the retry comes with the next change
    here: a pod created and bound after the failure."""
    other = pod("other-pod", "plugins", schedulerName="2nd-scheduler")
    config = pre_bind_config({"fail": True, "succeedOnRetry": True})
    config["profiles"][1]["pluginConfig"][0]["args"] = {}
    first = schedule(tmp_path / "a", [*nodes(2), TEST_POD], config=config, plugin_paths=[PLUGINS])
    assert message(first) == 'running PreBind plugin "prebind-plugin": injecting failure for pod test-pod'
    result = schedule(tmp_path / "b", [*nodes(2), TEST_POD], then=[[other]], config=config, plugin_paths=[PLUGINS])
    assert placed(result, other) in {"test-node-0", "test-node-1"}
    assert placed(result, TEST_POD) in {"test-node-0", "test-node-1"}
    assert plugin(result, "prebind-plugin").calls == 2


def test_prebind_plugin_failure_moves_unschedulable_pods(tmp_path: Path) -> None:
    """"failure on preBind moves unschedulable pods": forgetting the pod PreBind failed moves the
    pod the other profile's filter rejected out of the unschedulable pods. kube-scheduler then
    tries it again; an offline run does not, since the cluster is as it was when it failed (the
    assumed pod came and went), and it would otherwise retry both pods for ever (it did)."""
    stuck = pod("unschedulable-pod", "plugins", schedulerName="2nd-scheduler")
    config = pre_bind_config({"fail": True})
    result = schedule(tmp_path, [*nodes(2), stuck], then=[[TEST_POD]], config=config, plugin_paths=[PLUGINS])
    assert message(result) == 'running PreBind plugin "prebind-plugin": injecting failure for pod test-pod'
    assert placed(result, stuck) is None
    assert result.session is not None
    queue = result.session.scheduler.queue
    (stuck_info,) = [q for q in queue.pending_pods() if q.pod.name == "unschedulable-pod"]
    assert stuck_info.pod.uid not in queue.unschedulable
    assert stuck_info in queue.backoff_pods()


# -- TestUnReserveReservePlugins, TestUnReservePreBindPlugins -----------------------------------------

UNRESERVE = [
    ("The first Reserve plugin fails", ["failedReservePlugin1", "succeedReservePlugin", "failedReservePlugin2"], 0),
    ("The middle Reserve plugin fails", ["succeedReservePlugin1", "failedReservePlugin1", "succeedReservePlugin2"], 1),
    ("The last Reserve plugin fails", ["succeedReservePlugin1", "succeedReservePlugin2", "failedReservePlugin1"], 2),
    ("The Reserve plugins succeed", ["succeedReservePlugin1", "succeedReservePlugin2", "succeedReservePlugin3"], -1),
]


@pytest.mark.parametrize(("names", "fail_at"), [c[1:] for c in UNRESERVE], ids=[c[0] for c in UNRESERVE])
def test_unreserve_reserve_plugins(names: list[str], fail_at: int, tmp_path: Path) -> None:
    """Reserve stops at the first failure; Unreserve then reaches every Reserve plugin, once."""
    plugins = {"reserve": {"enabled": [{"name": n} for n in names]}}
    args = {n: {"fail": n.startswith("failed")} for n in names}
    result = run(tmp_path, 2, plugins, args)
    reserve = [plugin(result, n) for n in names]
    if fail_at >= 0:
        assert message(result) == f'running Reserve plugin "{names[fail_at]}": injecting failure for pod test-pod'
        assert [pl.calls for pl in reserve] == [1 if i <= fail_at else 0 for i in range(len(names))]
        assert [pl.unreserve_calls for pl in reserve] == [1] * len(names)
    else:
        assert placed(result, TEST_POD) in {"test-node-0", "test-node-1"}
        assert [(pl.calls, pl.unreserve_calls) for pl in reserve] == [(1, 0)] * len(names)


@pytest.mark.parametrize(
    "reject",
    [True, False],
    ids=["All Reserve plugins passed, but a PreBind plugin failed", "All Reserve plugins passed, and PreBind plugin succeed"],
)
def test_unreserve_prebind_plugins(reject: bool, tmp_path: Path) -> None:
    plugins = {"reserve": {"enabled": [{"name": "reservePlugin"}]}, "preBind": {"enabled": [{"name": "prebind-plugin"}]}}
    result = run(tmp_path, 2, plugins, {"prebind-plugin": {"reject": reject}})
    if reject:
        assert message(result) == "reject pod test-pod"
    else:
        assert placed(result, TEST_POD) in {"test-node-0", "test-node-1"}
    assert plugin(result, "reservePlugin").unreserve_calls == (1 if reject else 0)
    assert plugin(result, "prebind-plugin").calls == 1


# -- TestUnReservePermitPlugins -----------------------------------------------------------------------

UNRESERVE_PERMIT = [
    (
        "All Reserve plugins passed, but a Permit plugin was rejected",
        "rejectedPermitPlugin",
        {"reject": True},
        "0/1 nodes are available: 1 reject pod test-pod.",
    ),
    (
        "All Reserve plugins passed, but a Permit plugin timeout in waiting",
        "timeoutPermitPlugin",
        {"timeout": True},
        "0/1 nodes are available: 1 rejected due to timeout after waiting 3s at plugin timeoutPermitPlugin.",
    ),
    ("The Permit plugin succeed", "succeedPermitPlugin", {}, None),
]


@pytest.mark.parametrize(("name", "args", "outcome"), [c[1:] for c in UNRESERVE_PERMIT], ids=[c[0] for c in UNRESERVE_PERMIT])
def test_unreserve_permit_plugins(name: str, args: dict, outcome: str | None, tmp_path: Path) -> None:
    """A rejection at Permit, or in its wait, is a FitError over the one node the pod was
    assumed on (schedule_one.go); Unreserve runs once."""
    plugins = {"permit": {"enabled": [{"name": name}]}, "reserve": {"enabled": [{"name": "reservePlugin"}]}}
    result = run(tmp_path, 2, plugins, {name: args})
    if outcome is not None:
        assert message(result) == outcome
    else:
        assert placed(result, TEST_POD) in {"test-node-0", "test-node-1"}
    assert plugin(result, "reservePlugin").unreserve_calls == (1 if outcome else 0)
    assert plugin(result, name).calls == 1


# -- TestPermitPlugin ---------------------------------------------------------------------------------

PERMIT = [
    # upstream's fifth case says "disable ... timeout" but sets timeout, as the sixth
    ("disable fail, reject and timeout flags", {}, None),
    (
        "enable fail, disable reject and timeout flags",
        {"fail": True},
        'running Permit plugin "permit-plugin": injecting failure for pod test-pod',
    ),
    ("disable fail and timeout, enable reject flags", {"reject": True}, "0/1 nodes are available: 1 reject pod test-pod."),
    (
        "enable fail and reject, disable timeout flags",
        {"fail": True, "reject": True},
        'running Permit plugin "permit-plugin": injecting failure for pod test-pod',
    ),
    (
        "disable fail and reject, disable timeout flags",
        {"timeout": True},
        "0/1 nodes are available: 1 rejected due to timeout after waiting 3s at plugin permit-plugin.",
    ),
    (
        "disable fail and reject, enable timeout flags",
        {"timeout": True},
        "0/1 nodes are available: 1 rejected due to timeout after waiting 3s at plugin permit-plugin.",
    ),
]


@pytest.mark.parametrize(("args", "outcome"), [c[1:] for c in PERMIT], ids=[c[0] for c in PERMIT])
def test_permit_plugin(args: dict, outcome: str | None, tmp_path: Path) -> None:
    """An Error at Permit is the pod's scheduling error; a rejection, or the 3s wait running out
    (on the run's virtual clock), is a FitError over the node the pod was assumed on."""
    result = run(tmp_path, 2, enabled("permit", "permit-plugin"), {"permit-plugin": args})
    if outcome is None:
        assert placed(result, TEST_POD) in {"test-node-0", "test-node-1"}
    else:
        assert message(result) == outcome
    assert plugin(result, "permit-plugin").calls > 0
    assert result.session is not None and not len(result.session.scheduler.waiting)


# -- TestMultiplePermitPlugins, TestPermitPluginsCancelled ----------------------------------------------


def waiting_at_both_permit_plugins(tmp_path: Path) -> tuple[Session, list[ScheduleResult], Any, Any]:
    """The test pod, created with permit-plugin-1 and permit-plugin-2 both answering Wait (3s):
    the session after its scheduling cycle, the outcomes recorded from then on, the two plugins."""
    plugins = {"permit": {"enabled": [{"name": "permit-plugin-1"}, {"name": "permit-plugin-2"}]}}
    args = [{"name": n, "args": {"timeout": True}} for n in ("permit-plugin-1", "permit-plugin-2")]
    session = load(tmp_path, [*nodes(2), TEST_POD], profile_config(plugins, args), plugin_paths=[PLUGINS])
    sched = session.scheduler
    outcomes: list[ScheduleResult] = []
    sched.hooks.on_scheduled.append(outcomes.append)
    sched.hooks.on_failed.append(outcomes.append)
    for p in session.pending:
        sched.add_pending(p)
    res = sched.schedule_one()
    assert res is not None and res.code == Code.Wait
    fw = sched.frameworks["default-scheduler"]
    return session, outcomes, fw.plugins["permit-plugin-1"], fw.plugins["permit-plugin-2"]


def test_multiple_permit_plugins(tmp_path: Path) -> None:
    """Both plugins wait; the pod binds once each has allowed it (before the 3s run out)."""
    session, outcomes, pl1, pl2 = waiting_at_both_permit_plugins(tmp_path)
    (wp,) = session.scheduler.waiting
    assert len(wp.get_pending_plugins()) == 2
    pl1.allow_all_pods()
    assert len(wp.get_pending_plugins()) == 1
    pl2.allow_all_pods()
    session.scheduler.run_until_idle(advance=session.clock.advance)
    assert [(r.pod.name, r.node) for r in outcomes] == [("test-pod", session.cluster.bindings[wp.pod.uid])]
    assert session.clock() == 0  # allowed, not timed out
    assert pl1.calls == pl2.calls == 1


def test_permit_plugins_cancelled(tmp_path: Path) -> None:
    """Upstream checks that both plugins' contexts are cancelled once permit-plugin-1 rejects the
    waiting pod; kubesched's plugins have no context. The equivalent: the pod waits on neither
    plugin any more (its wait ends at once, not at the 3s timeout) and is unschedulable with the
    rejection."""
    session, outcomes, pl1, _ = waiting_at_both_permit_plugins(tmp_path)
    pl1.reject_all_pods()
    session.scheduler.run_until_idle(advance=session.clock.advance)
    assert not len(session.scheduler.waiting)
    assert [(r.pod.name, r.node, r.message) for r in outcomes] == [
        ("test-pod", None, "0/1 nodes are available: 1 rejectAllPods.")
    ]
    assert session.clock() == 0
    assert not session.cluster.bindings


# -- TestBindPlugin -----------------------------------------------------------------------------------

B1, B2, RESERVE, POST_BIND = "bind-plugin-1", "bind-plugin-2", "mock-reserve-plugin", "mock-post-bind-plugin"
BIND = [
    # name, bind plugins, their statuses, outcome ("scheduler", the plugin that binds, or the
    # Error's message), the Bind, Unreserve and PostBind calls in order
    (
        "bind plugins skipped to bind the pod and scheduler bond the pod",
        [B1, B2, "DefaultBinder"],
        ["Skip", "Skip"],
        "scheduler",
        [(B1, 1), (B2, 1), (POST_BIND, 1)],
    ),
    (
        "bindplugin2 succeeded to bind the pod",
        [B1, B2, "DefaultBinder"],
        ["Skip", "Success"],
        B2,
        [(B1, 1), (B2, 1), (POST_BIND, 1)],
    ),
    (
        "bindplugin1 succeeded to bind the pod",
        [B1, B2, "DefaultBinder"],
        ["Success", "Success"],
        B1,
        [(B1, 1), (POST_BIND, 1)],
    ),
    (
        "bind plugin fails to bind the pod",
        [B1, B2, "DefaultBinder"],
        ["Error", "Success"],
        'running Bind plugin "bind-plugin-1": failed to bind',
        [(B1, 1), (RESERVE, 1)],
    ),
    (
        "all bind plugins will be skipped(this should not happen for most of the cases)",
        [B1, B2],
        ["Skip", "Skip"],
        "",
        [(B1, 1), (B2, 1), (RESERVE, 1)],
    ),
]


@pytest.mark.parametrize(("binders", "statuses", "outcome", "events"), [c[1:] for c in BIND], ids=[c[0] for c in BIND])
def test_bind_plugin(binders: list[str], statuses: list[str], outcome: str, events: list, tmp_path: Path) -> None:
    """When every Bind plugin skips, the binding cycle fails (RunBindPlugins returns Skip, which
    bindingCycle takes as a failure): no PostBind, Unreserve runs, and the pod's scheduling error
    has Skip's empty message. Upstream reads the first events off its channel; here every call is
    noted, in order, so the lists are whole."""
    plugins = {
        "multiPoint": {"disabled": [{"name": "DefaultBinder"}]},
        "reserve": {"enabled": [{"name": RESERVE}]},
        "bind": {"enabled": [{"name": n} for n in binders], "disabled": [{"name": "DefaultBinder"}]},
        "postBind": {"enabled": [{"name": POST_BIND}]},
    }
    args = {B1: {"status": statuses[0], "message": "failed to bind"}, B2: {"status": statuses[1]}}
    result = run(tmp_path, 2, plugins, args)
    p1, p2 = plugin(result, B1), plugin(result, B2)
    if outcome == "scheduler" or outcome in (B1, B2):
        assert placed(result, TEST_POD) in {"test-node-0", "test-node-1"}
        assert p1.bound + p2.bound == ([] if outcome == "scheduler" else ["plugins/test-pod"])
        assert (p1.bound if outcome == B1 else p2.bound) == ([] if outcome == "scheduler" else ["plugins/test-pod"])
        assert (p1.calls, p2.calls) == ((1, 0) if outcome == B1 else (1, 1))
        assert plugin(result, RESERVE).unreserve_calls == 0
    else:
        assert message(result) == outcome
        assert plugin(result, POST_BIND).calls == 0
        assert result.session is not None and not result.session.cluster.bindings
    assert p1.events == events


# -- TestUnReserveBindPlugins ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["SucceedBindPlugin", "FailedBindPlugin"],
    ids=["All Reserve plugins passed, and Bind plugin succeed", "All Reserve plugins passed, but a Bind plugin failed"],
)
def test_unreserve_bind_plugins(name: str, tmp_path: Path) -> None:
    """Upstream's second case names a failing plugin but sets no failure (fail: false, no bind
    status): both plugins bind the pod, and Unreserve is not called. As initRegistryAndConfig does,
    the Bind plugin replaces DefaultBinder."""
    plugins = {
        "reserve": {"enabled": [{"name": "reservePlugin"}]},
        "bind": {"enabled": [{"name": name}], "disabled": [{"name": "DefaultBinder"}]},
    }
    result = run(tmp_path, 2, plugins)
    assert placed(result, TEST_POD) in {"test-node-0", "test-node-1"}
    assert plugin(result, name).bound == ["plugins/test-pod"]
    assert plugin(result, "reservePlugin").unreserve_calls == 0
    assert plugin(result, name).calls == 1


# -- TestPostBindPlugin ---------------------------------------------------------------------------------


@pytest.mark.parametrize("fail", [True, False], ids=["plugin preBind fail", "plugin preBind do not fail"])
def test_post_bind_plugin(fail: bool, tmp_path: Path) -> None:
    plugins = {"preBind": {"enabled": [{"name": "prebind-plugin"}]}, "postBind": {"enabled": [{"name": "postbind-plugin"}]}}
    result = run(tmp_path, 2, plugins, {"prebind-plugin": {"fail": fail}})
    post_bind = plugin(result, "postbind-plugin")
    if fail:
        assert message(result) == 'running PreBind plugin "prebind-plugin": injecting failure for pod test-pod'
        assert post_bind.calls == 0
    else:
        assert placed(result, TEST_POD) in {"test-node-0", "test-node-1"}
        assert post_bind.calls == 1


# -- TestCoSchedulingWithPermitPlugin -------------------------------------------------------------------


@pytest.mark.parametrize(
    "wait_reject",
    [True, False],
    ids=["having wait reject true and wait allow false", "having wait reject false and wait allow true"],
)
def test_co_scheduling_with_permit_plugin(wait_reject: bool, tmp_path: Path) -> None:
    """The first pod waits at Permit; the second rejects it and itself, or allows it and binds.
    Upstream creates both pods at once, so either may wait: here pod-a is tried first."""
    pods = [pod("pod-a", "plugins"), pod("pod-b", "plugins")]
    args = {"waitAndReject": True} if wait_reject else {"waitAndAllow": True}
    config = profile_config(enabled("permit", "permit-plugin"), [{"name": "permit-plugin", "args": args}])
    result = schedule(tmp_path, [*nodes(2), *pods], config=config, plugin_paths=[PLUGINS])
    permit = plugin(result, "permit-plugin")
    assert permit.waiting_pod == "pod-a"
    if wait_reject:
        assert permit.rejecting_pod == "pod-b"
        assert [unschedulable_message(result, p) for p in pods] == [
            "0/1 nodes are available: 1 reject pod pod-a.",
            "0/1 nodes are available: 1 reject pod pod-b.",
        ]
    else:
        assert permit.allowing_pod == "pod-b"
        assert {placed(result, p) for p in pods} <= {"test-node-0", "test-node-1"}
        assert all(placed(result, p) for p in pods)
    assert permit.calls == 2
    assert result.session is not None and not len(result.session.scheduler.waiting)


# -- TestFilterPlugin, TestPreScorePlugin ---------------------------------------------------------------


@pytest.mark.parametrize("fail", [True, False], ids=["fail filter plugin", "do not fail filter plugin"])
def test_filter_plugin(fail: bool, tmp_path: Path) -> None:
    result = run(tmp_path, 1, enabled("filter", "filter-plugin"), {"filter-plugin": {"fail": fail}})
    calls = plugin(result, "filter-plugin").calls
    if fail:
        assert message(result) == 'running "filter-plugin" filter plugin: injecting failure for pod test-pod'
        assert calls >= 1
    else:
        assert placed(result, TEST_POD) == "test-node-0"
        assert calls == 1


@pytest.mark.parametrize("fail", [True, False], ids=["fail preScore plugin", "do not fail preScore plugin"])
def test_pre_score_plugin(fail: bool, tmp_path: Path) -> None:
    result = run(tmp_path, 2, enabled("preScore", "prescore-plugin"), {"prescore-plugin": {"fail": fail}})
    if fail:
        assert message(result) == 'running PreScore plugin "prescore-plugin": injecting failure for pod test-pod'
    else:
        assert placed(result, TEST_POD) in {"test-node-0", "test-node-1"}
    assert plugin(result, "prescore-plugin").calls > 0


# -- TestPreEnqueuePlugin -------------------------------------------------------------------------------


@pytest.mark.parametrize("admit", [True, False], ids=["pod is admitted to enqueue", "pod is not admitted to enqueue"])
def test_pre_enqueue_plugin(admit: bool, tmp_path: Path) -> None:
    """The pod not admitted also has a scheduling gate: SchedulingGates, the default PreEnqueue
    plugin that comes first, holds it."""
    p = pod("p", "plugins") if admit else pod("p", "plugins", schedulingGates=[{"name": "foo"}])
    plugins = {**enabled("preEnqueue", "enqueue-plugin"), **enabled("preFilter", "prefilter-plugin")}
    config = profile_config(plugins, [{"name": "enqueue-plugin", "args": {"admit": admit}}])
    result = schedule(tmp_path, [*nodes(1), p], config=config, plugin_paths=[PLUGINS])
    if admit:
        assert placed(result, p) == "test-node-0"
        assert plugin(result, "enqueue-plugin").calls > 0
    else:
        entry = result.entry("plugins/p")
        assert entry is not None and entry["reason"] == "SchedulingGated" and entry["plugin"] == "SchedulingGates"
        assert plugin(result, "prefilter-plugin").calls == 0


# -- TestQueueSortPlugin --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("order", "expected"),
    [("timestamp", ["pod-1", "pod-2", "pod-3"]), ("priority", ["pod-3", "pod-2", "pod-1"])],
    ids=["timestamp_sort_order", "priority_sort_order"],
)
def test_queue_sort_plugin(order: str, expected: list[str], tmp_path: Path) -> None:
    """Pods pod-1..3 of priority 1..3, created in that order (a second apart), popped from the
    queue without scheduling them."""
    pods = [pod(f"pod-{i}", "plugins", priority=i) for i in (1, 2, 3)]
    plugins = {"queueSort": {"enabled": [{"name": "queuesort-plugin"}], "disabled": [{"name": "*"}]}}
    config = profile_config(plugins, [{"name": "queuesort-plugin", "args": {"order": order}}])
    session = load(tmp_path, [*nodes(2), *pods], config, plugin_paths=[PLUGINS])
    for i, p in enumerate(session.pending):
        session.clock.advance(float(i))
        session.scheduler.add_pending(p)
    queue = session.scheduler.queue
    assert len(queue.pending_pods()) == 3
    popped = [queue.pop() for _ in expected]
    assert [q.pod.name for q in popped if q is not None] == expected


# -- TestPreemptWithPermitPlugin ------------------------------------------------------------------------

LOW, HIGH = 100, 300


def res_pod(name: str, priority: int, amount: str) -> dict:
    """``st.MakePod().Priority(p).Req({cpu: <amount>m, memory: <amount>}).ZeroTerminationGracePeriod()``."""
    requests = {"cpu": f"{amount}m", "memory": amount}
    return pod(name, "plugins", containers=[container(requests=requests)], priority=priority, terminationGracePeriodSeconds=0)


PREEMPT_WITH_PERMIT = [
    # name, running pod, preemptor priority, delete the waiting pod, most Filter calls for the waiting pod
    ("waiting pod is not physically deleted upon preemption", True, HIGH, False, 2),
    (
        "rejecting a waiting pod to trigger retrying unschedulable pods immediately, and the waiting pod itself will be retried",
        False,
        HIGH,
        False,
        2,
    ),
    ("deleting a waiting pod to trigger retrying unschedulable pods immediately", False, LOW, True, 1),
]


@pytest.mark.parametrize(
    ("running", "preemptor_priority", "delete_waiting", "max_waiting_calls"),
    [c[1:] for c in PREEMPT_WITH_PERMIT],
    ids=[c[0] for c in PREEMPT_WITH_PERMIT],
)
def test_preempt_with_permit_plugin(
    running: bool, preemptor_priority: int, delete_waiting: bool, max_waiting_calls: int, tmp_path: Path
) -> None:
    """One node (500m CPU, 500 memory). "waiting-pod" waits at Permit (30s), every other pod
    allows the waiting pods. The preemptor (400m) is created while it waits: it preempts the
    running pod (deleted) and the waiting one (rejected, "preempted", not deleted), or, as low as
    they are, binds once the waiting pod is deleted. Driven a step at a time, as upstream acts
    while the pod waits; the run ends well before the 30s."""
    test_node = node("test-node", capacity={"cpu": "500m", "memory": "500"})
    running_pod, waiting_pod = res_pod("running-pod", LOW, "200"), res_pod("waiting-pod", LOW, "200")
    preemptor = res_pod("preemptor-pod", preemptor_priority, "400")
    plugins = {
        "permit": {"enabled": [{"name": "permit-plugin"}]},
        "filter": {"enabled": [{"name": "filter-plugin"}, {"name": "NodeResourcesFit"}], "disabled": [{"name": "NodeResourcesFit"}]},
    }
    args = [{"name": "permit-plugin", "args": {"waitAndAllow": True, "waitingPod": "waiting-pod"}}]
    objects = [test_node, *([running_pod] if running else []), waiting_pod, preemptor]
    session = load(tmp_path, objects, profile_config(plugins, args), plugin_paths=[PLUGINS])
    sched = session.scheduler
    pending = {p.name: p for p in session.pending}
    fw = sched.frameworks["default-scheduler"]
    permit, filt = fw.plugins["permit-plugin"], fw.plugins["filter-plugin"]
    if running:
        sched.add_pending(pending["running-pod"])
        res = sched.schedule_one()
        assert res is not None and res.node == "test-node"
    sched.add_pending(pending["waiting-pod"])
    res = sched.schedule_one()
    assert res is not None and res.code == Code.Wait and len(sched.waiting) == 1
    sched.add_pending(pending["preemptor-pod"])
    if delete_waiting:
        sched.delete_pod(pending["waiting-pod"])
    sched.run_until_idle(advance=session.clock.advance)
    uid = {p.name: p.uid for p in session.pending}
    assert session.cluster.bindings.get(uid["preemptor-pod"]) == "test-node"
    assert not len(sched.waiting)
    assert session.clock() < 30
    assert filt.calls_per_pod.get("plugins/waiting-pod", 0) <= max_waiting_calls
    deleted = {p.name for p in session.cluster.deleted}  # by preemption
    if delete_waiting:
        assert not sched.queue.contains(uid["waiting-pod"]) and not deleted
    else:
        assert "waiting-pod" not in deleted and uid["waiting-pod"] in session.cluster.pods
        assert sched.queue.contains(uid["waiting-pod"])  # retried, then unschedulable (no room)
        assert permit.calls > 0
    assert ("running-pod" in deleted) is running


# -- TestActivatePods -----------------------------------------------------------------------------------


def test_activate_pods(tmp_path: Path) -> None:
    """Two executor pods wait, unschedulable, for their driver; once the driver is bound, the job
    plugin's PostBind activates them (PodsToActivate, at the end of the binding cycle) and they
    are scheduled. The executors come back by activation: the queue notes ForceActivate for both."""
    executors = [pod(f"executor-{i}", "plugins", labels={"executor": ""}) for i in (1, 2)]
    driver = pod("driver", "plugins", labels={"driver": ""})
    plugins = {**enabled("preFilter", "job plugin"), **enabled("postBind", "job plugin")}
    session = load(tmp_path, [*nodes(1), *executors, driver], profile_config(plugins), plugin_paths=[PLUGINS])
    sched = session.scheduler
    outcomes: list[ScheduleResult] = []
    sched.hooks.on_scheduled.append(outcomes.append)
    sched.hooks.on_failed.append(outcomes.append)
    incoming: list[tuple[str, str]] = []
    sched.queue.on_incoming = lambda queue, event: incoming.append((queue, event))
    pending = {p.name: p for p in session.pending}
    for name in ("executor-1", "executor-2"):
        sched.add_pending(pending[name])
    sched.run_until_idle(advance=session.clock.advance)
    no_driver = (
        "0/1 nodes are available: unable to find driver pod. "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )
    assert [(r.pod.name, r.message) for r in outcomes] == [("executor-1", no_driver), ("executor-2", no_driver)]
    sched.add_pending(pending["driver"])
    sched.run_until_idle(advance=session.clock.advance)
    assert {uid: node for uid, node in session.cluster.bindings.items()} == {p.uid: "test-node-0" for p in pending.values()}
    assert sched.frameworks["default-scheduler"].plugins["job plugin"].pods_activated
    assert incoming.count(("active", "ForceActivate")) == 2
