"""The extender wire format (kube-scheduler ``extender/v1`` types), decoded strictly.

The Go structs carry no json tags, so their keys are the Go field names (``Pod``,
``NodeNames``, ``FailedNodes``...). Go's decoder matches keys case-insensitively (the last
matching key wins), so we accept any case on input and always emit PascalCase. Embedded
Kubernetes objects keep their normal camelCase API JSON. Every decoding error is an
``InputError`` whose path names the field, which the HTTP layer turns into a 400.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from kubesched.api.objects import Node, Pod
from kubesched.errors import InputError, join_path

#: Extender scores are in [MinExtenderPriority, MaxExtenderPriority].
MIN_EXTENDER_PRIORITY = 0
MAX_EXTENDER_PRIORITY = 10


def decode_body(body: bytes) -> dict[str, Any]:
    """One JSON object from a request body; anything else is a one-line InputError."""
    if not body.strip():
        raise InputError("empty body: expected a JSON object")
    try:
        doc = json.loads(body, parse_constant=_reject_constant, parse_float=_finite_float)
    except _NonStandardNumber as e:
        raise InputError(f"invalid JSON: {e.args[0]} is not a JSON number") from None
    except UnicodeDecodeError:
        raise InputError("invalid JSON: body is not UTF-8") from None
    except json.JSONDecodeError as e:
        raise InputError(f"invalid JSON at line {e.lineno} column {e.colno}: {e.msg}") from None
    except RecursionError:
        raise InputError("invalid JSON: nested too deeply") from None
    except ValueError as e:  # a number past Python's digit limit, a non-finite float
        raise InputError(f"invalid JSON: {str(e).split(';')[0]}") from None
    if not isinstance(doc, dict):
        raise InputError(f"expected a JSON object, got {_json_type(doc)}")
    return doc


class _NonStandardNumber(Exception):
    """NaN/Infinity: Python's json accepts them, Go's (and JSON) does not."""


def _reject_constant(name: str) -> Any:
    raise _NonStandardNumber(name)


def _finite_float(text: str) -> float:
    """1e400 is no float64 (Go's decoder refuses it); Python would read it as infinity."""
    v = float(text)
    if not math.isfinite(v):
        raise ValueError(f"{text[:40]} is out of the float64 range")
    return v


def _json_type(v: Any) -> str:
    """The JSON name of a decoded value's type (users wrote JSON, not Python)."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int | float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def get_field(obj: dict[str, Any], name: str) -> Any:
    """``obj[name]`` matched as Go's decoder does: case-insensitive, the last match wins."""
    want = name.casefold()
    found = None
    for k, v in obj.items():
        if isinstance(k, str) and k.casefold() == want:
            found = v
    return found


def _object(v: Any, path: str) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise InputError(f"expected an object, got {_json_type(v)}", path=path)
    return v


def _array(v: Any, path: str) -> list[Any]:
    """A JSON array; null decodes to an empty slice as in Go."""
    if v is None:
        return []
    if not isinstance(v, list):
        raise InputError(f"expected an array, got {_json_type(v)}", path=path)
    return v


def _string(v: Any, path: str, *, required: bool = False) -> str:
    if v is None:
        if required:
            raise InputError("required", path=path)
        return ""
    if not isinstance(v, str):
        raise InputError(f"expected a string, got {_json_type(v)}", path=path)
    if required and not v:
        raise InputError("must not be empty", path=path)
    return v


def _int64(v: Any, path: str) -> int:
    """Go int64: a JSON integer (no strings, no fractions)."""
    if v is None:
        return 0
    if isinstance(v, bool) or not isinstance(v, int):
        raise InputError(f"expected an integer, got {_json_type(v)}", path=path)
    if not -(2**63) <= v < 2**63:
        raise InputError("integer out of int64 range", path=path)
    return v


#: Largest resource amount (milli-CPU, bytes, counts) the scoring arithmetic takes: a score
#: multiplies amounts by up to 100 in int64, as kube-scheduler's does.
MAX_RESOURCE = (2**63 - 1) // 128


def _bounded(resources: dict[str, int], path: str, what: str) -> None:
    for name, amount in resources.items():
        if amount > MAX_RESOURCE:
            unit = "m" if name == "cpu" else ""  # milli-CPU; everything else in its base unit
            raise InputError(
                f"{what} {amount}{unit} of {name}, past the largest amount the scheduler computes with ({MAX_RESOURCE}{unit})",
                path=path,
            )


def parse_pod(v: Any, path: str = "Pod") -> Pod:
    """An embedded v1.Pod (camelCase API JSON); required wherever the protocol names one."""
    if v is None:
        raise InputError("required", path=path)
    _object(v, path)
    try:
        pod = Pod.parse(v, path)
    except InputError:
        raise
    except (ValueError, TypeError, KeyError, AttributeError, OverflowError) as e:  # the parser's own checks missed it
        raise InputError(f"invalid pod: {e}", path=path) from None
    _bounded(pod.requests, join_path(path, "spec"), "the pod requests")
    return pod


def parse_node(v: Any, path: str) -> Node:
    try:
        node = Node.parse(v, path)
    except InputError:
        raise
    except (ValueError, TypeError, KeyError, AttributeError, OverflowError) as e:
        raise InputError(f"invalid node: {e}", path=path) from None
    _bounded(node.allocatable, join_path(path, "status.allocatable"), "allocatable")
    return node


@dataclass
class ExtenderArgs:
    """ExtenderArgs: the pod and either full Node objects or node names (nodeCacheCapable)."""

    pod: Pod
    nodes: list[Node] | None = None  # set iff the request carried ``Nodes``
    node_items: list[dict[str, Any]] | None = None  # the raw NodeList items, echoed back in results
    node_list: dict[str, Any] | None = None  # the raw NodeList (apiVersion, kind, metadata kept)
    node_names: list[str] | None = None  # set iff the request carried ``NodeNames``

    @property
    def names(self) -> list[str]:
        if self.node_names is not None:
            return self.node_names
        return [n.name for n in self.nodes or []]


def parse_extender_args(doc: dict[str, Any]) -> ExtenderArgs:
    """filter/prioritize request; exactly one of Nodes / NodeNames must be set."""
    pod = parse_pod(get_field(doc, "Pod"))
    raw_nodes = get_field(doc, "Nodes")
    raw_names = get_field(doc, "NodeNames")
    if raw_nodes is not None and raw_names is not None:
        raise InputError("set only one of Nodes (nodeCacheCapable: false) and NodeNames (nodeCacheCapable: true)")
    if raw_nodes is None and raw_names is None:
        raise InputError(
            "one of Nodes (nodeCacheCapable: false) or NodeNames (nodeCacheCapable: true) is required",
            path="NodeNames",
        )
    args = ExtenderArgs(pod)
    if raw_names is not None:
        names = [_string(n, join_path("NodeNames", i), required=True) for i, n in enumerate(_array(raw_names, "NodeNames"))]
        _no_duplicates(names, "NodeNames")
        args.node_names = names
        return args
    node_list = _object(raw_nodes, "Nodes")
    items_key = next((k for k in node_list if isinstance(k, str) and k.casefold() == "items"), "items")
    items = _array(node_list.get(items_key), "Nodes.items")
    nodes: list[Node] = []
    raw_items: list[dict[str, Any]] = []
    for i, it in enumerate(items):
        ipath = join_path("Nodes.items", i)
        raw_items.append(_object(it, ipath))
        nodes.append(parse_node(it, ipath))
    _no_duplicates([n.name for n in nodes], "Nodes.items", suffix=".metadata.name")
    args.nodes, args.node_items, args.node_list = nodes, raw_items, node_list
    return args


def _no_duplicates(names: list[str], path: str, suffix: str = "") -> None:
    seen: set[str] = set()
    for i, n in enumerate(names):
        if n in seen:
            raise InputError(f'duplicate node name "{n}"', path=f"{join_path(path, i)}{suffix}")
        seen.add(n)


@dataclass
class BindingArgs:
    """ExtenderBindingArgs: which pod goes to which node."""

    pod_name: str
    pod_namespace: str
    pod_uid: str
    node: str


def parse_binding_args(doc: dict[str, Any]) -> BindingArgs:
    return BindingArgs(
        pod_name=_string(get_field(doc, "PodName"), "PodName", required=True),
        pod_namespace=_string(get_field(doc, "PodNamespace"), "PodNamespace") or "default",
        pod_uid=_string(get_field(doc, "PodUID"), "PodUID"),
        node=_string(get_field(doc, "Node"), "Node", required=True),
    )


@dataclass
class Victims:
    """Victims / MetaVictims of one node: pods (full or by UID only) and PDB violations."""

    uids: list[str]
    pods: list[Pod] | None  # full pods (NodeNameToVictims), None for the meta form
    num_pdb_violations: int


@dataclass
class PreemptionArgs:
    """ExtenderPreemptionArgs: the preemptor and candidate victims per node."""

    pod: Pod
    victims: dict[str, Victims]
    meta: bool  # True when the request used NodeNameToMetaVictims (nodeCacheCapable: true)


def parse_preemption_args(doc: dict[str, Any]) -> PreemptionArgs:
    pod = parse_pod(get_field(doc, "Pod"))
    full = get_field(doc, "NodeNameToVictims")
    meta = get_field(doc, "NodeNameToMetaVictims")
    if full is not None and meta is not None:
        raise InputError(
            "set only one of NodeNameToVictims (nodeCacheCapable: false) and "
            "NodeNameToMetaVictims (nodeCacheCapable: true)"
        )
    if full is None and meta is None:
        raise InputError(
            "one of NodeNameToVictims (nodeCacheCapable: false) or NodeNameToMetaVictims "
            "(nodeCacheCapable: true) is required",
            path="NodeNameToMetaVictims",
        )
    key = "NodeNameToMetaVictims" if meta is not None else "NodeNameToVictims"
    out: dict[str, Victims] = {}
    for node, v in _object(meta if meta is not None else full, key).items():
        vpath = f"{key}.{node}"
        if not node:
            raise InputError("node name must not be empty", path=key)
        if v is None:
            out[node] = Victims([], [] if meta is None else None, 0)
            continue
        vm = _object(v, vpath)
        pods_path = f"{vpath}.Pods"
        items = _array(get_field(vm, "Pods"), pods_path)
        num = _int64(get_field(vm, "NumPDBViolations"), f"{vpath}.NumPDBViolations")
        if num < 0:
            raise InputError("must not be negative", path=f"{vpath}.NumPDBViolations")
        uids: list[str] = []
        pods: list[Pod] | None = None
        if meta is not None:
            for i, mp in enumerate(items):
                ppath = join_path(pods_path, i)
                uids.append(_string(get_field(_object(mp, ppath), "UID"), f"{ppath}.UID", required=True))
        else:
            pods = []
            for i, raw in enumerate(items):
                ppath = join_path(pods_path, i)
                p = parse_pod(raw, ppath)
                md = raw.get("metadata") or {}
                if not md.get("uid"):
                    raise InputError("required (victims are returned by UID)", path=f"{ppath}.metadata.uid")
                pods.append(p)
                uids.append(p.uid)
        out[node] = Victims(uids, pods, num)
    return PreemptionArgs(pod, out, meta is not None)


# ---- results (always PascalCase) -----------------------------------------------------------
def filter_result(
    args: ExtenderArgs,
    passed: list[str],
    failed: dict[str, str],
    unresolvable: dict[str, str],
    error: str = "",
) -> dict[str, Any]:
    """ExtenderFilterResult, in the same node form (Nodes or NodeNames) as the request."""
    nodes: dict[str, Any] | None = None
    names: list[str] | None = None
    if args.node_names is not None:
        names = list(passed)
    elif args.node_list is not None and args.nodes is not None:
        keep = set(passed)
        items = [raw for raw, n in zip(args.node_items or [], args.nodes, strict=True) if n.name in keep]
        nodes = {k: v for k, v in args.node_list.items() if not (isinstance(k, str) and k.casefold() == "items")}
        nodes["items"] = items
    if error:
        nodes, names = None, None
    return {
        "Nodes": nodes,
        "NodeNames": names,
        "FailedNodes": dict(failed),
        "FailedAndUnresolvableNodes": dict(unresolvable),
        "Error": error,
    }


def host_priority_list(scores: list[tuple[str, int]]) -> list[dict[str, Any]]:
    """HostPriorityList: ``[{"Host": ..., "Score": ...}]``."""
    return [{"Host": host, "Score": int(score)} for host, score in scores]


def binding_result(error: str = "") -> dict[str, Any]:
    return {"Error": error}


def preemption_result(victims: dict[str, tuple[list[str], int]]) -> dict[str, Any]:
    """ExtenderPreemptionResult: always the meta form (victims by UID)."""
    return {
        "NodeNameToMetaVictims": {
            node: {"Pods": [{"UID": uid} for uid in uids], "NumPDBViolations": int(num)}
            for node, (uids, num) in victims.items()
        }
    }
