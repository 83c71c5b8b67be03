"""Every extension point's result per pod, as kube-scheduler-simulator records them.

The simulator wraps each plugin and keeps what it returned at each extension point (its
resultstore): PreFilter's status and node subset, PostFilter's nomination, PreScore's status,
Reserve's, Permit's (with its timeout), PreBind's and Bind's. kubesched hears the same through
``Framework.add_recorder``, from two places:

- the explain of the cluster the attempt saw (``ExplainResults``): PreFilter and PreScore, which
  explain runs as the cycle does (Filter and Score are the decision view's tables);
- the run itself (``RunResults``): PostFilter, Reserve, Permit, PreBind and Bind, which explain does
  not reach; each attempt keeps its pod's results at those points.

A result is a row: ``point``, ``plugin``, ``code`` (Success, Skip, Wait, Unschedulable, ...),
``result`` (the simulator's words: "success", "wait", else the status message, "" for a Skip that
says nothing), ``source`` ("explain" or "run"), and where they apply ``nodes`` (PreFilter: the
node names its result kept, sorted), ``nominated`` (PostFilter), ``timeout`` (Permit, seconds) and
``called`` (false: the cycle left the plugin out because it signed nothing for the pod, so it had
nothing to do; upstream calls it and it answers success).
"""

from __future__ import annotations

from typing import Any

from kubesched.api.objects import Pod
from kubesched.framework.runtime import Framework
from kubesched.framework.status import PreFilterResult, Status

EXPLAINED = ("PreFilter", "PreScore")
RUN_POINTS = ("PostFilter", "Reserve", "Permit", "PreBind", "Bind")
ORDER = ("PreFilter", "PostFilter", "PreScore", "Reserve", "Permit", "PreBind", "Bind")
SUCCESS, WAIT = "success", "wait"  # the simulator's words (resultstore.SuccessMessage, WaitMessage)


def result_row(point: str, plugin: str, out: Any, source: str) -> dict[str, Any]:
    """A plugin call's result (what ``Framework.call`` returned) as a row."""
    status, extra = out, {}
    if isinstance(out, PreFilterResult):
        status = out.status
        if out.node_names is not None:
            extra["nodes"] = sorted(out.node_names)
    elif isinstance(out, tuple):
        if point == "Permit":  # (status, timeout)
            status, timeout = out
            extra["timeout"] = float(timeout or 0)
        else:  # PostFilter: (nominated node, status)
            node, status = out
            if node:
                extra["nominated"] = node
    if not isinstance(status, Status):
        status = Status()  # None: success
    code = status.code.name
    said = SUCCESS if code == "Success" else WAIT if code == "Wait" else status.message
    return {"point": point, "plugin": plugin, "code": code, "result": said, "source": source, **extra}


def _pod_of(args: tuple[Any, ...]) -> Pod | None:
    return next((a for a in args if isinstance(a, Pod)), None)


class ExplainResults:
    """Recorder for one explain: the PreFilter and PreScore results, in call order."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def __call__(self, plugin: str, point: str, _args: tuple[Any, ...], out: Any) -> None:
        if point in EXPLAINED:
            self.rows.append(result_row(point, plugin, out, "explain"))


class RunResults:
    """Recorder for a run: per pod (uid), each plugin's last result at the points explain does not
    reach, until the pod's attempt is recorded (``take``). Kept per pod because a pod waiting at
    Permit binds during another pod's attempt."""

    def __init__(self) -> None:
        self.by_pod: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}

    def __call__(self, plugin: str, point: str, args: tuple[Any, ...], out: Any) -> None:
        if point not in RUN_POINTS:
            return
        pod = _pod_of(args)
        if pod is not None:
            self.by_pod.setdefault(pod.uid, {})[point, plugin] = result_row(point, plugin, out, "run")

    def take(self, pod: Pod, fw: Framework, reached_permit: bool) -> list[dict[str, Any]]:
        """The pod's results since its last attempt, in the profile's order. ``reached_permit``:
        the attempt passed Reserve and Permit, so the plugins the cycle left out there (signed
        nothing for the pod) are listed as the success they would have answered."""
        heard = self.by_pod.pop(pod.uid, {})
        permits = [r["code"] for (point, _), r in heard.items() if point == "Permit"]
        reached_permit = (
            reached_permit
            or any(point in ("PreBind", "Bind") for point, _ in heard)
            or bool(permits) and all(c in ("Success", "Wait") for c in permits)  # waited, then rejected
        )
        rows: list[dict[str, Any]] = []
        for point, plugins in (
            ("PostFilter", fw.post_filter), ("Reserve", fw.reserve), ("Permit", fw.permit),
            ("PreBind", fw.pre_bind), ("Bind", fw.bind),
        ):
            for pl in plugins:
                row = heard.pop((point, pl.name), None)
                if row is None and reached_permit and point in ("Reserve", "Permit"):
                    row = {"point": point, "plugin": pl.name, "code": "Success", "result": SUCCESS, "source": "run", "called": False}
                    if point == "Permit":
                        row["timeout"] = 0.0
                if row is not None:
                    rows.append(row)
        rows.extend(heard.values())  # a plugin outside the profile's lists (none in practice)
        return rows


def rows_of(explained: list[dict[str, Any]], attempt: Any) -> list[dict[str, Any]]:
    """A decision's results, in the order of the extension points: the explain's, then the
    attempt's own (``attempt.results``; its PostFilter success row names the victims)."""
    run = [
        {**r, "victims": attempt.victims} if r["point"] == "PostFilter" and r.get("nominated") else r
        for r in (attempt.results or [] if attempt is not None else [])
    ]
    return sorted([*explained, *run], key=lambda r: ORDER.index(r["point"]) if r["point"] in ORDER else len(ORDER))


def explicit_nodes(columns: dict[str, Any], rows: list[dict[str, Any]]) -> list[str]:
    """The nodes the cycle judged and found failing (NodeToStatus's explicit nodes, which the
    simulator lists in its PostFilter result), from explain's columns: none when a PreFilter
    rejected the pod (every node shares its status), and not the nodes outside a PreFilterResult."""
    if any(r["point"] == "PreFilter" and r["code"] not in ("Success", "Skip") for r in rows):
        return []
    f = columns["filter"]
    failing = {i for i, v in enumerate(f["verdicts"]) if v["code"] not in ("Success", "Skip")}
    judged = [True] * len(columns["name"])
    failed = [False] * len(columns["name"])
    for plugin, at in zip(f["plugins"], f["at"], strict=True):
        for i, v in enumerate(at):
            if plugin == "PreFilterResult":
                judged[i] = judged[i] and v < 0
            elif v in failing:
                failed[i] = True
    return [name for name, j, x in zip(columns["name"], judged, failed, strict=True) if j and x]
