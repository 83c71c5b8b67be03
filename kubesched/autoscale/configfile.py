"""The autoscaler file: ``load_file`` / ``load`` read its YAML (or JSON) into an
``AutoscalerConfig`` (``kubesched.autoscale.config``), one reader per part: the scale-up
options, the priority expander's priorities (or its ConfigMap), scale-down, the Karpenter-like
mode, the node groups and their templates, the provisioning delay. A ``flags:`` list is
Cluster Autoscaler's command line (``kubesched.autoscale.flags``). Every fault is an
``InputError`` naming the file and the field.
"""

from __future__ import annotations

import math
import os
import re
from typing import Any

from kubesched.api.fields import as_str, str_map
from kubesched.api.objects import Node
from kubesched.autoscale.config import DELAY_DISTS, AutoscalerConfig, Delay, NodeGroup
from kubesched.autoscale.flags import apply_flags, named_by_flag
from kubesched.autoscale.limits import CORES, GIB, MEMORY
from kubesched.autoscale.nodepool import read_node_pools
from kubesched.autoscale.spot import read_spot
from kubesched.documents import load_documents, read_documents
from kubesched.errors import InputError, SourceReader, describe, join_path

TOP_KEYS = (
    "mode",
    "expander",
    "priorities",
    "scanInterval",
    "provisioningDelay",
    "maxNodeProvisionTime",
    "maxNodesTotal",
    "expendablePodsPriorityCutoff",
    "newPodScaleUpDelay",
    "scaleDown",
    "karpenter",
    "prices",
    "nodeGroups",
    "coresTotal",
    "memoryTotal",
    "gpuTotal",
    "enforceNodeGroupMinSize",
    "balanceSimilarNodeGroups",
    "balancingIgnoreLabels",
    "balancingLabels",
    "memoryDifferenceRatio",
    "maxAllocatableDifferenceRatio",
    "maxFreeDifferenceRatio",
    "maxNodesPerScaleUp",
    "priorityConfigMap",
    "nodePools",
    "spot",
    "okTotalUnreadyCount",
    "maxTotalUnreadyPercentage",
    "maxNodeStartupTime",
    "neverReadyFraction",
)
BOOL_KEYS = {
    "enforceNodeGroupMinSize": "enforce_node_group_min_size",
    "balanceSimilarNodeGroups": "balance_similar_node_groups",
}
RATIO_KEYS = {
    "memoryDifferenceRatio": "memory_difference_ratio",
    "maxAllocatableDifferenceRatio": "max_allocatable_difference_ratio",
    "maxFreeDifferenceRatio": "max_free_difference_ratio",
}
SCALE_DOWN_KEYS = {
    "enabled": "enabled",
    "utilizationThreshold": "utilization_threshold",
    "gpuUtilizationThreshold": "gpu_utilization_threshold",
    "unneededTime": "unneeded_time",
    "delayAfterAdd": "delay_after_add",
    "delayAfterDelete": "delay_after_delete",
    "delayAfterFailure": "delay_after_failure",
    "maxEmptyBulkDelete": "max_empty_bulk_delete",
    "maxDrainParallelism": "max_drain_parallelism",
    "ignoreDaemonSetsUtilization": "ignore_daemonsets_utilization",
    "ignoreMirrorPodsUtilization": "ignore_mirror_pods_utilization",
    "unreadyTime": "unready_time",
    "unreadyEnabled": "unready_enabled",
}
SCALE_DOWN_BOOLS = ("enabled", "ignoreDaemonSetsUtilization", "ignoreMirrorPodsUtilization", "unreadyEnabled")
GROUP_KEYS = ("name", "shape", "template", "min", "max", "price", "zeroOrMaxNodeScaling")
TEMPLATE_KEYS = ("cpu", "memory", "gpus", "gpuModel", "pods", "extendedResources", "labels", "taints")


def load_file(path: str, shapes: dict[str, Node] | None = None, *, groups_required: bool = True) -> AutoscalerConfig:
    """``load`` of a YAML or JSON file, read as every input file is (``kubesched.documents``:
    UTF-8, bounded nesting and aliases, timestamps kept as written, duplicate keys refused)."""
    docs = read_documents(path)
    if len(docs) > 1:
        raise InputError(f"expected one document, found {len(docs)}", source=path)
    return load(docs[0] if docs else None, path, shapes, groups_required=groups_required)


def load(
    doc: Any, source: str | None = None, shapes: dict[str, Node] | None = None, *, groups_required: bool = True
) -> AutoscalerConfig:
    """An ``AutoscalerConfig`` from a parsed YAML document; ``shapes`` names the node shapes that
    ``nodeGroups[].shape`` may refer to (e.g. the openb shapes). Without ``groups_required``
    the node groups may be left out (a scenario fills them in)."""
    r = _Reader(source)
    if doc is None:
        doc = {}
    r.mapping(doc, "", (*TOP_KEYS, "flags"))
    if "flags" not in doc:
        return _load(r, doc, shapes, groups_required)
    doc, origin = apply_flags(doc, source)
    try:
        return _load(r, doc, shapes, groups_required)
    except InputError as e:
        raise named_by_flag(e, origin) from None


def _load(r: _Reader, doc: dict[str, Any], shapes: dict[str, Node] | None, groups_required: bool) -> AutoscalerConfig:
    source = r.source
    cfg = AutoscalerConfig()
    if "mode" in doc:
        cfg.mode = r.string(doc["mode"], "mode")
    if "expander" in doc:
        cfg.expander = r.string(doc["expander"], "expander")
    for key, attr in (
        ("scanInterval", "scan_interval"),
        ("maxNodeProvisionTime", "max_node_provision_time"),
        ("newPodScaleUpDelay", "new_pod_scale_up_delay"),
        ("maxNodeStartupTime", "max_node_startup_time"),
        ("maxTotalUnreadyPercentage", "max_total_unready_percentage"),
        ("neverReadyFraction", "never_ready_fraction"),
    ):
        if key in doc:
            setattr(cfg, attr, r.number(doc[key], key))
    for key, attr in (("maxNodesTotal", "max_nodes_total"), ("okTotalUnreadyCount", "ok_total_unready_count")):
        if key in doc:
            setattr(cfg, attr, r.integer(doc[key], key))
    if "expendablePodsPriorityCutoff" in doc:
        cfg.expendable_pods_priority_cutoff = r.integer(doc["expendablePodsPriorityCutoff"], "expendablePodsPriorityCutoff")
    if "priorities" in doc and "priorityConfigMap" in doc:
        raise r.err("priorityConfigMap", "give either priorities or priorityConfigMap, not both")
    if "priorities" in doc:
        cfg.priorities.update(_priorities(r, doc["priorities"]))
    if "priorityConfigMap" in doc:
        cm = r.string(doc["priorityConfigMap"], "priorityConfigMap")
        if source and not os.path.isabs(cm):
            cm = os.path.join(os.path.dirname(source), cm)
        cfg.priorities.update(priority_config_map(cm))
    if "provisioningDelay" in doc:
        cfg.provisioning_delay = _delay(r, doc["provisioningDelay"], "provisioningDelay")
    if "scaleDown" in doc:
        _scale_down(r, doc["scaleDown"], cfg)
    if "karpenter" in doc:
        _karpenter(r, doc["karpenter"], cfg)
    if "prices" in doc:
        pr = r.mapping(doc["prices"], "prices", ("gpu", "cpu", "memory"))
        for k in ("gpu", "cpu", "memory"):
            if k in pr:
                setattr(cfg.prices, k, r.number(pr[k], join_path("prices", k)))
    _scale_up_options(r, doc, cfg)
    cfg.node_groups.extend(_node_groups(r, doc.get("nodeGroups", []), shapes, source))
    if "nodePools" in doc:
        cfg.node_pools = read_node_pools(doc["nodePools"], source)
    if "spot" in doc:
        cfg.spot = read_spot(doc["spot"], source)
    return cfg.validate(source, groups_required=groups_required)


def _scale_up_options(r: _Reader, doc: dict[str, Any], cfg: AutoscalerConfig) -> None:
    """The resource limits, min-size enforcement, balancing and estimation limit (CA's flags)."""
    lim = cfg.resource_limits
    for key, res, scale in (("coresTotal", CORES, 1), ("memoryTotal", MEMORY, GIB)):
        if key in doc:
            lo, hi = r.min_max(doc[key], key)
            lim.min[res], lim.max[res] = int(lo) * scale, int(hi) * scale
    if "gpuTotal" in doc:
        for i, v in enumerate(r.strings(doc["gpuTotal"], "gpuTotal")):
            kind, lo, hi = r.min_max(v, join_path("gpuTotal", i), parts=3)
            if kind in (CORES, MEMORY):
                raise r.err(join_path("gpuTotal", i), f'"{kind}" is not a GPU type (use coresTotal / memoryTotal)')
            if kind in lim.max:
                raise r.err(join_path("gpuTotal", i), f'GPU type "{kind}" is given twice')
            lim.min[kind], lim.max[kind] = int(lo), int(hi)
    for key, attr in BOOL_KEYS.items():
        if key in doc:
            setattr(cfg, attr, r.boolean(doc[key], key))
    for key, attr in RATIO_KEYS.items():
        if key in doc:
            setattr(cfg.balancing, attr, r.number(doc[key], key))
    if "balancingIgnoreLabels" in doc:
        cfg.balancing.ignore_labels = r.strings(doc["balancingIgnoreLabels"], "balancingIgnoreLabels")
    if "balancingLabels" in doc:
        cfg.balancing.labels = r.strings(doc["balancingLabels"], "balancingLabels")
    if "maxNodesPerScaleUp" in doc:
        cfg.max_nodes_per_scale_up = r.integer(doc["maxNodesPerScaleUp"], "maxNodesPerScaleUp")


#: the priority expander's ConfigMap (expander/priority/priority.go) and its data key
PRIORITY_CONFIG_MAP = "cluster-autoscaler-priority-expander"
PRIORITY_CONFIG_MAP_KEY = "priorities"


def priority_config_map(path: str) -> dict[int, list[str]]:
    """The priorities of the priority expander's ConfigMap, as copied from a Cluster Autoscaler
    deployment (``kubectl get configmap cluster-autoscaler-priority-expander -o yaml``, or a
    manifest holding it among other objects): ``data.priorities`` is YAML of priority -> list of
    regular expressions. Upstream ignores a bad update and keeps the last good one; a file has no
    last good one, so each of its faults is an error naming the file and field."""
    objs: list[Any] = []
    for d in read_documents(path, "priority expander ConfigMap"):
        objs.extend(d.get("items") or [] if isinstance(d, dict) and d.get("kind") == "List" else [d])
    cm = next(
        (o for o in objs if isinstance(o, dict) and o.get("kind") == "ConfigMap" and (o.get("metadata") or {}).get("name") == PRIORITY_CONFIG_MAP),
        None,
    )
    if cm is None:
        raise InputError(f"no ConfigMap named {PRIORITY_CONFIG_MAP} in the file", source=path)
    field_path = f"data.{PRIORITY_CONFIG_MAP_KEY}"
    data = cm.get("data") or {}
    if not isinstance(data, dict) or PRIORITY_CONFIG_MAP_KEY not in data:
        raise InputError(f"wrong configmap for priority expander, doesn't contain {PRIORITY_CONFIG_MAP_KEY} key", source=path, path=field_path)
    text = data[PRIORITY_CONFIG_MAP_KEY]
    if not isinstance(text, str) or not text.strip():
        raise InputError(
            f"priority configuration in {PRIORITY_CONFIG_MAP} configmap is empty; please provide valid configuration", source=path, path=field_path
        )
    try:
        docs = load_documents(text, path)
    except InputError as e:
        raise InputError(f"can't parse YAML with priorities in the configmap: {e.reason}", source=path, path=field_path) from None
    if len(docs) != 1:
        raise InputError("can't parse YAML with priorities in the configmap: expected one document", source=path, path=field_path)
    out = _priorities(_Reader(path), docs[0], field_path)
    for prio, patterns in out.items():
        for j, pat in enumerate(patterns):
            try:
                re.compile(pat)
            except re.error as e:
                where = join_path(join_path(field_path, str(prio)), j)
                raise InputError(f"can't compile regexp rule for priority {prio} and rule {pat}: {e}", source=path, path=where) from None
    return out


def _priorities(r: _Reader, pr: Any, base: str = "priorities") -> dict[int, list[str]]:
    """The priority expander's ``priorities``: priority -> regular expressions of group names."""
    out: dict[int, list[str]] = {}
    if not isinstance(pr, dict):
        raise r.err(base, "expected a mapping of priority to a list of regular expressions")
    for k, v in pr.items():
        p = join_path(base, str(k))
        if isinstance(k, bool) or not (isinstance(k, int) or (isinstance(k, str) and re.fullmatch(r"-?\d{1,10}", k))):
            raise r.err(p, f'invalid priority "{k}": expected a whole number')
        prio = int(k)
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise r.err(p, "expected a list of regular expressions")
        out[prio] = list(v)
    return out


def _scale_down(r: _Reader, value: Any, cfg: AutoscalerConfig) -> None:
    sd = r.mapping(value, "scaleDown", list(SCALE_DOWN_KEYS))
    for k, attr in SCALE_DOWN_KEYS.items():
        if k not in sd:
            continue
        p = join_path("scaleDown", k)
        if k in SCALE_DOWN_BOOLS:
            if not isinstance(sd[k], bool):
                raise r.err(p, f'invalid value "{sd[k]}": expected true or false')
            setattr(cfg.scale_down, attr, sd[k])
        elif k in ("maxEmptyBulkDelete", "maxDrainParallelism"):
            v = r.integer(sd[k], p)
            if v < 1:
                raise r.err(p, f"must be at least 1, got {v}")
            setattr(cfg.scale_down, attr, v)
        else:
            setattr(cfg.scale_down, attr, r.number(sd[k], p))


def _karpenter(r: _Reader, value: Any, cfg: AutoscalerConfig) -> None:
    kp = r.mapping(value, "karpenter", ("batchIdleDuration", "batchMaxDuration", "consolidationPolicy", "consolidateAfter", "budgets"))
    for k, attr in (("batchIdleDuration", "batch_idle"), ("batchMaxDuration", "batch_max"), ("consolidateAfter", "consolidate_after")):
        if k in kp:
            setattr(cfg.karpenter, attr, r.number(kp[k], join_path("karpenter", k)))
    if "consolidationPolicy" in kp:
        cfg.karpenter.consolidation = r.string(kp["consolidationPolicy"], "karpenter.consolidationPolicy")
    if "budgets" in kp:
        b = kp["budgets"]
        if not isinstance(b, list) or len(b) != 1 or not isinstance(b[0], dict):
            raise r.err("karpenter.budgets", 'expected one budget: [{nodes: "10%"}]')
        r.mapping(b[0], "karpenter.budgets[0]", ("nodes",))
        cfg.karpenter.budget_nodes = str(b[0].get("nodes", "10%"))


def _node_groups(r: _Reader, groups: Any, shapes: dict[str, Node] | None, source: str | None) -> list[NodeGroup]:
    out: list[NodeGroup] = []
    if not isinstance(groups, list):
        raise r.err("nodeGroups", "expected a list of node groups")
    for i, g in enumerate(groups):
        p = join_path("nodeGroups", i)
        r.mapping(g, p, GROUP_KEYS)
        name = r.string(g.get("name"), join_path(p, "name"))
        if ("shape" in g) == ("template" in g):
            raise r.err(p, "give either shape (a named node shape) or template")
        if "shape" in g:
            shape = r.string(g["shape"], join_path(p, "shape"))
            if shapes is None or shape not in shapes:
                known = ", ".join(sorted(shapes)) if shapes else "none"
                raise r.err(join_path(p, "shape"), f'unknown node shape "{shape}" (known: {known})')
            tmpl = shapes[shape]
        else:
            tmpl = template_node(name, g["template"], join_path(p, "template"), source)
        group = NodeGroup(name, tmpl)
        if "min" in g:
            group.min_size = r.integer(g["min"], join_path(p, "min"))
        if "max" in g:
            group.max_size = r.integer(g["max"], join_path(p, "max"))
        if "price" in g:
            group.price = r.number(g["price"], join_path(p, "price"))
        if "zeroOrMaxNodeScaling" in g:
            group.zero_or_max_node_scaling = r.boolean(g["zeroOrMaxNodeScaling"], join_path(p, "zeroOrMaxNodeScaling"))
        out.append(group)
    return out


def template_node(name: str, t: dict[str, Any], path: str = "template", source: str | None = None) -> Node:
    """A node of a group from ``{cpu, memory, gpus, gpuModel, pods, extendedResources, labels,
    taints}``; ``extendedResources`` (``{nvidia.com/gpu: 8}``) adds to its capacity and allocatable
    as a device plugin's resources do."""
    from kubesched.gpu.model import GPU_COUNT, GPU_MILLI, GPU_MODEL, MAX_GPUS_PER_NODE, MILLI

    r = _Reader(source)
    r.mapping(t, path, TEMPLATE_KEYS)
    for k in ("cpu", "memory"):
        if k not in t:
            raise r.err(join_path(path, k), "required")
    alloc: dict[str, Any] = {k: r.quantity(t.get(k, 110), join_path(path, k)) for k in ("cpu", "memory", "pods")}
    gpus = r.integer(t.get("gpus", 0), join_path(path, "gpus"))
    if not 0 <= gpus <= MAX_GPUS_PER_NODE:
        raise r.err(join_path(path, "gpus"), f"must be from 0 to {MAX_GPUS_PER_NODE}, got {gpus}")
    try:
        labels = str_map(t.get("labels"), join_path(path, "labels"))
        model = as_str(t.get("gpuModel"), join_path(path, "gpuModel"))
    except InputError as e:
        raise e.within(source=source) from None
    if gpus:
        alloc[GPU_COUNT] = str(gpus)
        alloc[GPU_MILLI] = str(gpus * MILLI)
    ext = t.get("extendedResources")
    ext_path = join_path(path, "extendedResources")
    if ext is not None and not isinstance(ext, dict):
        raise r.err(ext_path, f"expected a mapping of resource name to quantity, got {describe(ext)}")
    for k, v in (ext or {}).items():
        if not isinstance(k, str) or not k or k in ("cpu", "memory", "pods") or k in alloc:
            raise r.err(join_path(ext_path, str(k)), f'"{k}" is not an extended resource here (cpu, memory, pods and gpus have their own keys)')
        alloc[k] = r.quantity(v, join_path(ext_path, k))
    if model:
        labels[GPU_MODEL] = model
    taints = t.get("taints") or []
    raw = {
        "metadata": {"name": name, "labels": labels},
        "spec": {"taints": taints},
        "status": {"allocatable": alloc, "capacity": dict(alloc)},
    }
    try:
        return Node.parse(raw)
    except InputError as e:
        key = (e.path or "").replace("status.allocatable.", "")
        where = join_path(ext_path, key) if key in (ext or {}) else join_path(path, key)
        raise InputError(e.reason, source=source, path=where) from None


def _delay(r: _Reader, v: Any, path: str) -> Delay:
    if not isinstance(v, dict):
        return Delay("constant", r.number(v, path), 0.0)
    kind = v.get("dist", "constant")
    if not isinstance(kind, str) or kind not in DELAY_DISTS:
        shown = f'"{kind}"' if isinstance(kind, str) else describe(kind)
        raise r.err(join_path(path, "dist"), f'unknown value {shown} (known: {", ".join(DELAY_DISTS)})')
    keys = DELAY_DISTS[kind]
    r.mapping(v, path, ("dist", *keys))
    vals = []
    for k in keys:
        if k not in v:
            raise r.err(join_path(path, k), "required")
        x = r.number(v[k], join_path(path, k))
        if x < 0:
            raise r.err(join_path(path, k), f"must be 0 or more seconds, got {x:g}")
        vals.append(x)
    return Delay(kind, vals[0], vals[1] if len(vals) > 1 else 0.0)


class _Reader(SourceReader):
    """The file's own field kinds on top of SourceReader's errors and mappings."""

    def number(self, v: Any, path: str) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise self.err(path, f'invalid value "{v}": expected a number')
        return float(v)

    def integer(self, v: Any, path: str) -> int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.err(path, f'invalid value "{v}": expected a whole number')
        return v

    def quantity(self, v: Any, path: str) -> str:
        """A quantity as written (``"8"``, ``32Gi``, ``4``); the node's parser checks its value."""
        if isinstance(v, bool) or not isinstance(v, (str, int, float)):
            raise self.err(path, f"expected a quantity such as \"8\" or \"32Gi\", got {describe(v)}")
        return str(v)

    def string(self, v: Any, path: str) -> str:
        if not isinstance(v, str) or not v:
            raise self.err(path, f'invalid value "{v}": expected a non-empty string')
        return v

    def boolean(self, v: Any, path: str) -> bool:
        if not isinstance(v, bool):
            raise self.err(path, f'invalid value "{v}": expected true or false')
        return v

    def strings(self, v: Any, path: str) -> list[str]:
        if not isinstance(v, list) or not all(isinstance(x, str) and x for x in v):
            raise self.err(path, "expected a list of non-empty strings")
        return list(v)

    def min_max(self, v: Any, path: str, parts: int = 2) -> list[str]:
        """CA's ``MIN:MAX`` (``--cores-total``) or ``TYPE:MIN:MAX`` (``--gpu-total``) flag value."""
        shape = "TYPE:MIN:MAX" if parts == 3 else "MIN:MAX"
        if not isinstance(v, str) or len(v.split(":")) != parts:
            raise self.err(path, f'invalid value "{v}": expected "{shape}" (whole numbers), as the Cluster Autoscaler flag')
        *head, lo, hi = v.split(":")
        if not (re.fullmatch(r"\d{1,15}", lo.strip()) and re.fullmatch(r"\d{1,15}", hi.strip())) or (head and not head[0].strip()):
            raise self.err(path, f'invalid value "{v}": expected "{shape}" (whole numbers), as the Cluster Autoscaler flag')
        return [*(h.strip() for h in head), lo.strip(), hi.strip()]
