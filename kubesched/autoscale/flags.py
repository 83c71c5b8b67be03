"""Cluster Autoscaler's command-line flags, as its Deployment's ``args`` spell them, read into the
autoscaler file's keys: ``flags: ["--cores-total=0:320", "--balance-similar-node-groups",
"--scale-down-unneeded-time=5m"]``.

Each flag is ``--name=value`` (or ``-name=value``; a boolean flag alone is true), as Go's flag
package reads it: a later flag overrides an earlier one, and the list flags (``--gpu-total``,
``--balancing-ignore-label``, ``--balancing-label``) add up. Durations are Go durations
(``10s``, ``1m30s``). Flags about logging, the API connection, leader election and the cloud
provider are skipped (``IGNORED``); any other flag kubesched does not model is an error naming
it, so that nothing a deployment sets that would change decisions is silently dropped; so is a
flag whose key the file also sets.
"""

from __future__ import annotations

from typing import Any

from kubesched.config.decode import parse_duration
from kubesched.errors import InputError, did_you_mean, join_path

INT, FLOAT, BOOL, TEXT, LIST, DURATION = "int", "float", "bool", "text", "list", "duration"

#: flag -> (the file's key, dotted under scaleDown, and how its value reads)
FLAGS: dict[str, tuple[str, str]] = {
    "expander": ("expander", TEXT),
    "scan-interval": ("scanInterval", DURATION),
    "max-node-provision-time": ("maxNodeProvisionTime", DURATION),
    "max-nodes-total": ("maxNodesTotal", INT),
    "cores-total": ("coresTotal", TEXT),
    "memory-total": ("memoryTotal", TEXT),
    "gpu-total": ("gpuTotal", LIST),
    "expendable-pods-priority-cutoff": ("expendablePodsPriorityCutoff", INT),
    "new-pod-scale-up-delay": ("newPodScaleUpDelay", DURATION),
    "enforce-node-group-min-size": ("enforceNodeGroupMinSize", BOOL),
    "balance-similar-node-groups": ("balanceSimilarNodeGroups", BOOL),
    "balancing-ignore-label": ("balancingIgnoreLabels", LIST),
    "balancing-label": ("balancingLabels", LIST),
    "memory-difference-ratio": ("memoryDifferenceRatio", FLOAT),
    "max-allocatable-difference-ratio": ("maxAllocatableDifferenceRatio", FLOAT),
    "max-free-difference-ratio": ("maxFreeDifferenceRatio", FLOAT),
    "max-nodes-per-scaleup": ("maxNodesPerScaleUp", INT),
    "scale-down-enabled": ("scaleDown.enabled", BOOL),
    "scale-down-utilization-threshold": ("scaleDown.utilizationThreshold", FLOAT),
    "scale-down-gpu-utilization-threshold": ("scaleDown.gpuUtilizationThreshold", FLOAT),
    "scale-down-unneeded-time": ("scaleDown.unneededTime", DURATION),
    "scale-down-delay-after-add": ("scaleDown.delayAfterAdd", DURATION),
    "scale-down-delay-after-delete": ("scaleDown.delayAfterDelete", DURATION),
    "scale-down-delay-after-failure": ("scaleDown.delayAfterFailure", DURATION),
    "max-empty-bulk-delete": ("scaleDown.maxEmptyBulkDelete", INT),
    "max-drain-parallelism": ("scaleDown.maxDrainParallelism", INT),
    "scale-down-unready-time": ("scaleDown.unreadyTime", DURATION),
    "scale-down-unready-enabled": ("scaleDown.unreadyEnabled", BOOL),
    "ok-total-unready-count": ("okTotalUnreadyCount", INT),
    "max-total-unready-percentage": ("maxTotalUnreadyPercentage", FLOAT),
    "max-node-startup-time": ("maxNodeStartupTime", DURATION),
}
#: flags that change nothing kubesched models: logging, the API connection, leader election, the
#: cloud provider's identity and where its node groups come from (here: ``nodeGroups``)
IGNORED = frozenset(
    {
        "v", "logtostderr", "alsologtostderr", "stderrthreshold", "log_dir", "log_file", "log-file",
        "cloud-provider", "cloud-config", "kubeconfig", "kube-api-content-type", "namespace",
        "leader-elect", "leader-elect-resource-name", "address", "write-status-configmap",
        "status-config-map-name", "nodes", "node-group-auto-discovery",
    }
)  # fmt: skip
TRUE = ("1", "t", "T", "TRUE", "true", "True")  # strconv.ParseBool
FALSE = ("0", "f", "F", "FALSE", "false", "False")


def _value(kind: str, text: str | None, err: Any) -> Any:
    if kind == BOOL:
        if text is None or text in TRUE:
            return True
        if text in FALSE:
            return False
        raise err(f'invalid boolean "{text}"')
    if text is None:
        raise err("needs a value (--name=value)")
    try:
        if kind == INT:
            return int(text)
        if kind == FLOAT:
            return float(text)
    except ValueError:
        raise err(f'invalid value "{text}": expected {"a whole number" if kind == INT else "a number"}') from None
    if kind == DURATION:
        secs = parse_duration(text)
        if secs is None:
            raise err(f'invalid duration "{text}": expected a Go duration such as 10s or 1m30s')
        return secs
    return text


def apply_flags(doc: dict[str, Any], source: str | None) -> tuple[dict[str, Any], dict[str, str]]:
    """``doc`` with its ``flags`` turned into keys, and where each key came from (key -> the
    flag's path, ``flags[2] (--cores-total)``) so that a bad value names the flag."""
    flags = doc.get("flags")
    if not isinstance(flags, list) or not all(isinstance(f, str) for f in flags):
        raise InputError('expected a list of Cluster Autoscaler flags ("--name=value")', source=source, path="flags")
    out = {k: v for k, v in doc.items() if k != "flags"}
    scale_down = doc.get("scaleDown", {})
    if not isinstance(scale_down, dict):  # as the loader says it, before flags merge into it
        raise InputError(f"expected a mapping, got {type(scale_down).__name__}", source=source, path="scaleDown")
    origin: dict[str, str] = {}
    for i, arg in enumerate(flags):
        where = join_path("flags", i)
        name, eq, text = arg.lstrip("-").partition("=")
        if not arg.startswith("-") or not name:
            raise InputError(f'"{arg}" is not a flag (--name=value)', source=source, path=where)
        if name in IGNORED:
            continue
        if name not in FLAGS:
            hint = did_you_mean(name, [*FLAGS, *IGNORED])
            raise InputError(f'unsupported Cluster Autoscaler flag "--{name}"{hint} (docs/autoscaling.md lists those read)', source=source, path=where)
        key, kind = FLAGS[name]
        here = f"{where} (--{name})"

        def err(msg: str, here: str = here) -> InputError:
            return InputError(msg, source=source, path=here)

        value = _value(kind, text if eq else None, err)
        _, _, sub = key.partition(".")
        if (sub and sub in scale_down) or (not sub and key in doc):
            raise err(f"{key} is set in the file too; set it once")
        if sub:
            out["scaleDown"] = {**out.get("scaleDown", {}), sub: value}
        elif kind == LIST:
            out[key] = [*out.get(key, []), value]
            origin[join_path(key, len(out[key]) - 1)] = here
        else:
            out[key] = value
        origin[key] = here
    return out, origin


def named_by_flag(e: InputError, origin: dict[str, str]) -> InputError:
    """``e`` re-anchored at the flag that set the field it names, if a flag did."""
    for key in sorted(origin, key=len, reverse=True):  # gpuTotal[1] before gpuTotal
        if e.path and (e.path == key or e.path.startswith((f"{key}.", f"{key}["))):
            return InputError(e.reason, source=e.source, path=origin[key])
    return e
