"""PropagationPolicy and ClusterPropagationPolicy (their failover behaviour included) and
ClusterTaintPolicy (policy.karmada.io/v1alpha1)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubesched.api.fields import as_bool, as_int32, as_list, as_str
from kubesched.api.selectors import LabelSelector
from kubesched.api.taints import Taint, parse_taints
from kubesched.errors import InputError, join_path
from kubesched.multicluster.api.fields import metadata_and_name, str_list, strict_object
from kubesched.multicluster.api.placement import ClusterAffinity, Placement, parse_placement

POLICY_API = "policy.karmada.io/v1alpha1"


# ---- PropagationPolicy / ClusterPropagationPolicy ----------------------------------------------
@dataclass(frozen=True)
class ResourceSelector:
    api_version: str
    kind: str
    namespace: str = ""
    name: str = ""
    label_selector: LabelSelector | None = None


# ---- failover (PropagationSpec.failover) --------------------------------------------------------
# PurgeMode: how the replicas left on the cluster a workload is evicted from go. Immediately and
# Graciously are the deprecated spellings of Directly and Gracefully (still accepted, same meaning).
PURGE_DIRECTLY, PURGE_GRACEFULLY, PURGE_NEVER = "Directly", "Gracefully", "Never"
PURGE_IMMEDIATELY, PURGE_GRACIOUSLY = "Immediately", "Graciously"
APPLICATION_PURGE_MODES = (PURGE_DIRECTLY, PURGE_GRACEFULLY, PURGE_NEVER, PURGE_IMMEDIATELY, PURGE_GRACIOUSLY)
CLUSTER_PURGE_MODES = (PURGE_DIRECTLY, PURGE_GRACEFULLY)


@dataclass(frozen=True)
class ApplicationFailoverBehavior:
    """spec.failover.application, defaulted as the CRD and the mutating webhook do."""

    toleration_seconds: int = 300  # decisionConditions.tolerationSeconds
    purge_mode: str = PURGE_GRACEFULLY
    grace_period_seconds: int | None = None  # 600 when Gracefully and unset (SetDefaultGracePeriodSeconds)


@dataclass(frozen=True)
class ClusterFailoverBehavior:
    purge_mode: str = PURGE_GRACEFULLY


@dataclass(frozen=True)
class FailoverBehavior:
    application: ApplicationFailoverBehavior | None = None
    cluster: ClusterFailoverBehavior | None = None  # None: the controller's --no-execute-taint-eviction-purge-mode


def _parse_failover(value: Any, path: str) -> FailoverBehavior | None:
    """FailoverBehavior with the CRD's enums and defaults and ValidateFailoverBehavior's rules
    (statePreservation is accepted and ignored: it needs the alpha StatefulFailoverInjection gate)."""
    if value is None:
        return None
    m = strict_object(value, path, ("application", "cluster"))
    app = None
    if m.get("application") is not None:
        ap = join_path(path, "application")
        am = strict_object(m["application"], ap, ("decisionConditions", "purgeMode", "gracePeriodSeconds", "statePreservation"))
        dp = join_path(ap, "decisionConditions")
        if am.get("decisionConditions") is None:
            raise InputError("Required value", path=dp)
        dm = strict_object(am["decisionConditions"], dp, ("tolerationSeconds",))
        tp = join_path(dp, "tolerationSeconds")
        toleration = as_int32(dm.get("tolerationSeconds"), tp, 300)
        assert toleration is not None
        if toleration < 0:
            raise InputError("must be greater than or equal to 0", path=tp)
        mode = as_str(am.get("purgeMode"), join_path(ap, "purgeMode")) or PURGE_GRACEFULLY
        _check_purge_mode(mode, APPLICATION_PURGE_MODES, join_path(ap, "purgeMode"))
        gp = join_path(ap, "gracePeriodSeconds")
        grace = as_int32(am.get("gracePeriodSeconds"), gp, None)
        graceful = mode in (PURGE_GRACEFULLY, PURGE_GRACIOUSLY)
        if grace is not None and not graceful:
            raise InputError("only takes effect when purgeMode is gracefully", path=gp)
        if grace is not None and grace <= 0:
            raise InputError("must be greater than 0", path=gp)
        if graceful and grace is None:
            grace = 600
        app = ApplicationFailoverBehavior(toleration, mode, grace)
    cluster = None
    if m.get("cluster") is not None:
        cp = join_path(path, "cluster")
        cm = strict_object(m["cluster"], cp, ("purgeMode", "statePreservation"))
        mode = as_str(cm.get("purgeMode"), join_path(cp, "purgeMode")) or PURGE_GRACEFULLY
        _check_purge_mode(mode, CLUSTER_PURGE_MODES, join_path(cp, "purgeMode"))
        cluster = ClusterFailoverBehavior(mode)
    return FailoverBehavior(app, cluster)


def _check_purge_mode(mode: str, allowed: tuple[str, ...], path: str) -> None:
    if mode not in allowed:
        shown = ", ".join(f'"{a}"' for a in allowed)
        raise InputError(f'Unsupported value: "{mode}": supported values: {shown}', path=path)


# ---- ClusterTaintPolicy (policy.karmada.io/v1alpha1) ------------------------------------------
@dataclass(frozen=True)
class MatchCondition:
    condition_type: str
    operator: str  # In | NotIn
    status_values: tuple[str, ...]


@dataclass(frozen=True)
class ClusterTaintPolicy:
    """``taints`` go on a cluster (of ``target_clusters``, every one when None) whose conditions
    match all of ``add_on``, and come off when they match all of ``remove_on``."""

    name: str
    taints: tuple[Taint, ...]
    add_on: tuple[MatchCondition, ...] = ()
    remove_on: tuple[MatchCondition, ...] = ()
    target_clusters: ClusterAffinity | None = None


def parse_cluster_taint_policy(m: dict, path: str) -> ClusterTaintPolicy:
    """The CRD's required fields and enums and the validating webhook's rule that no two taints
    share key and effect. NoExecute taints are accepted (Karmada's webhook needs
    ``--allow-no-execute-taint-policy`` for them)."""
    _, mp, name = metadata_and_name(m, path)
    sp = join_path(path, "spec")
    spec = strict_object(m.get("spec"), sp, ("targetClusters", "addOnConditions", "removeOnConditions", "taints"))
    tp = join_path(sp, "taints")
    taints = parse_taints(spec.get("taints"), tp)
    if not taints:
        raise InputError("should have at least 1 items", path=tp)
    for i, t in enumerate(taints):
        if any(u.key == t.key and u.effect == t.effect for u in taints[i + 1 :]):
            raise InputError(f"Duplicate taint with the same key({t.key}) and effect({t.effect}) is not allowed", path=join_path(tp, i))
    target = None
    if spec.get("targetClusters") is not None:
        target = ClusterAffinity.parse(spec["targetClusters"], join_path(sp, "targetClusters"))
    return ClusterTaintPolicy(name, taints, _match_conditions(spec.get("addOnConditions"), join_path(sp, "addOnConditions")),
                              _match_conditions(spec.get("removeOnConditions"), join_path(sp, "removeOnConditions")), target)


def _match_conditions(value: Any, path: str) -> tuple[MatchCondition, ...]:
    out = []
    for i, c in enumerate(as_list(value, path)):
        ip = join_path(path, i)
        cm = strict_object(c, ip, ("conditionType", "operator", "statusValues"))
        ctype = as_str(cm.get("conditionType"), join_path(ip, "conditionType"))
        if not ctype:
            raise InputError("Required value", path=join_path(ip, "conditionType"))
        op = as_str(cm.get("operator"), join_path(ip, "operator"))
        if op not in ("In", "NotIn"):
            raise InputError(f'Unsupported value: "{op}": supported values: "In", "NotIn"', path=join_path(ip, "operator"))
        out.append(MatchCondition(ctype, op, str_list(cm.get("statusValues"), join_path(ip, "statusValues"))))
    return tuple(out)


# PropagationSpec fields that do not change where replicas go: accepted, not modelled.
_SPEC_IGNORED = (
    "association",
    "preemption",
    "dependentOverrides",
    "conflictResolution",
    "activationPreference",
    "suspension",
    "preserveResourcesOnDeletion",
    "schedulePriority",
)


@dataclass(frozen=True)
class PropagationPolicy:
    kind: str  # PropagationPolicy | ClusterPropagationPolicy
    name: str
    namespace: str  # "" for ClusterPropagationPolicy
    resource_selectors: tuple[ResourceSelector, ...]
    placement: Placement
    priority: int = 0
    scheduler_name: str = "default-scheduler"
    source: str = ""
    failover: FailoverBehavior | None = None
    propagate_deps: bool = False

    @property
    def key(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"


def parse_policy(m: dict, path: str) -> PropagationPolicy:
    kind = m["kind"]
    md, mp, name = metadata_and_name(m, path)
    namespace = ""
    if kind == "PropagationPolicy":
        namespace = as_str(md.get("namespace"), join_path(mp, "namespace")) or "default"
    sp = join_path(path, "spec")
    spec = strict_object(m.get("spec"), sp, ("resourceSelectors", "placement", "priority", "schedulerName", "failover", "propagateDeps", *_SPEC_IGNORED))
    rp = join_path(sp, "resourceSelectors")
    selectors = []
    for i, s in enumerate(as_list(spec.get("resourceSelectors"), rp)):
        ip = join_path(rp, i)
        sm = strict_object(s, ip, ("apiVersion", "kind", "namespace", "name", "labelSelector"))
        api_version = as_str(sm.get("apiVersion"), join_path(ip, "apiVersion"))
        k = as_str(sm.get("kind"), join_path(ip, "kind"))
        if not api_version or not k:
            raise InputError("apiVersion and kind are required", path=ip)
        ns = as_str(sm.get("namespace"), join_path(ip, "namespace"))
        if namespace:
            ns = ns or namespace  # mutating webhook: the policy's namespace
            if ns != namespace:
                raise InputError("namespace of resource selector must be the same as the namespace of the policy", path=join_path(ip, "namespace"))
        selectors.append(
            ResourceSelector(api_version, k, ns, as_str(sm.get("name"), join_path(ip, "name")),
                             LabelSelector.parse(sm.get("labelSelector"), join_path(ip, "labelSelector")))
        )
    if not selectors:
        raise InputError("must have at least 1 items", path=rp)
    priority = as_int32(spec.get("priority"), join_path(sp, "priority")) or 0
    return PropagationPolicy(
        kind,
        name,
        namespace,
        tuple(selectors),
        parse_placement(spec.get("placement"), join_path(sp, "placement")),
        priority,
        as_str(spec.get("schedulerName"), join_path(sp, "schedulerName")) or "default-scheduler",
        failover=_parse_failover(spec.get("failover"), join_path(sp, "failover")),
        propagate_deps=as_bool(spec.get("propagateDeps"), join_path(sp, "propagateDeps")),
    )
