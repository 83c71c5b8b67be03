"""resource.k8s.io/v1 objects as the scheduler reads them, parsed once from wire dicts.

Only what allocation and the DynamicResources plugin read is kept (``raw`` keeps the rest for
output). Files go through the schema check and ``kubesched.dra.validation`` first; objects from
elsewhere are parsed as they come. Claims change (allocation, reservations): a new object
replaces the old one (``with_status``), the parsed spec is shared.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from kubesched.api.fields import as_bool, as_int, as_list, as_map, as_str, str_map
from kubesched.api.quantity import parse_quantity
from kubesched.api.selectors import NodeSelector
from kubesched.errors import join_path

API_VERSION = "resource.k8s.io/v1"
#: ResourceClaimReservedForMaxSize: more consumers cannot reserve a claim.
RESERVED_FOR_MAX_SIZE = 256
#: AllocationResultsMaxSize: devices one claim may get.
ALLOCATION_RESULTS_MAX_SIZE = 32
#: FirstAvailableDeviceRequestMaxSize (also the Score's base).
FIRST_AVAILABLE_MAX_SIZE = 8
#: The finalizer PreBind adds before it writes an allocation.
FINALIZER = "resource.kubernetes.io/delete-protection"
EXACT_COUNT, ALL = "ExactCount", "All"
#: Attribute value kinds (DeviceAttribute's one-of).
ATTRIBUTE_KINDS = ("int", "bool", "string", "version")

Attribute = tuple[str, Any]  # (kind, value): ("int", 4), ("version", "1.2.3")


def _meta(m: dict, path: str) -> tuple[dict, str, str, str]:
    mp = join_path(path, "metadata")
    md = as_map(m.get("metadata"), mp)
    return (
        md,
        as_str(md.get("namespace"), join_path(mp, "namespace")),
        as_str(md.get("name"), join_path(mp, "name")),
        as_str(md.get("uid"), join_path(mp, "uid")),
    )


def _selectors(items: Any, path: str) -> tuple[str, ...]:
    """CEL expressions of a selector list (validation ensures each has ``cel``)."""
    out = []
    for i, s in enumerate(as_list(items, path)):
        sp = join_path(path, i)
        cel = as_map(as_map(s, sp).get("cel"), join_path(sp, "cel"))
        out.append(as_str(cel.get("expression"), join_path(sp, "cel.expression")))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class DeviceTaint:
    key: str
    value: str
    effect: str


@dataclass(frozen=True, slots=True)
class DeviceToleration:
    key: str
    operator: str  # Equal (default) | Exists
    value: str
    effect: str

    def tolerates(self, taint: DeviceTaint) -> bool:
        """resourceclaim.ToleratesTaint."""
        if self.key and self.key != taint.key:
            return False
        if self.effect and self.effect != taint.effect:
            return False
        if self.operator == "Exists":
            return True
        return self.value == taint.value  # Equal


def _taints(items: Any, path: str) -> tuple[DeviceTaint, ...]:
    out = []
    for i, t in enumerate(as_list(items, path)):
        tp = join_path(path, i)
        tm = as_map(t, tp)
        out.append(
            DeviceTaint(
                as_str(tm.get("key"), join_path(tp, "key")),
                as_str(tm.get("value"), join_path(tp, "value")),
                as_str(tm.get("effect"), join_path(tp, "effect")),
            )
        )
    return tuple(out)


def _tolerations(items: Any, path: str) -> tuple[DeviceToleration, ...]:
    out = []
    for i, t in enumerate(as_list(items, path)):
        tp = join_path(path, i)
        tm = as_map(t, tp)
        out.append(
            DeviceToleration(
                as_str(tm.get("key"), join_path(tp, "key")),
                as_str(tm.get("operator"), join_path(tp, "operator")) or "Equal",
                as_str(tm.get("value"), join_path(tp, "value")),
                as_str(tm.get("effect"), join_path(tp, "effect")),
            )
        )
    return tuple(out)


# ---- DeviceClass ---------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class DeviceClass:
    name: str
    selectors: tuple[str, ...]
    extended_resource_name: str
    raw: dict = field(repr=False, compare=False, hash=False)

    @classmethod
    def parse(cls, d: Any, path: str = "") -> DeviceClass:
        m = as_map(d, path)
        _, _, name, _ = _meta(m, path)
        sp = join_path(path, "spec")
        spec = as_map(m.get("spec"), sp)
        return cls(
            name,
            _selectors(spec.get("selectors"), join_path(sp, "selectors")),
            as_str(spec.get("extendedResourceName"), join_path(sp, "extendedResourceName")),
            m,
        )


# ---- ResourceSlice -------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class CounterConsumption:
    counter_set: str
    counters: dict[str, Fraction]


def _counters(d: Any, path: str) -> dict[str, Fraction]:
    out = {}
    for name, c in as_map(d, path).items():
        cp = join_path(path, name)
        out[name] = parse_quantity(as_map(c, cp).get("value", 0), join_path(cp, "value"))
    return out


@dataclass(frozen=True, slots=True)
class CapacityPolicy:
    """CapacityRequestPolicy of one capacity (DRAConsumableCapacity): what a request consumes
    when it names no amount (``default``), and the amounts it may consume (``valid_values``,
    ascending; or ``min``..``max`` in ``step``s from ``min``)."""

    default: Fraction | None = None
    valid_values: tuple[Fraction, ...] = ()
    min: Fraction | None = None
    max: Fraction | None = None
    step: Fraction | None = None
    has_range: bool = False

    @classmethod
    def parse(cls, d: Any, path: str) -> CapacityPolicy | None:
        if d is None:
            return None
        m = as_map(d, path)

        def q(v: Any, p: str) -> Fraction | None:
            return None if v is None else parse_quantity(v, p)

        vp = join_path(path, "validValues")
        rp = join_path(path, "validRange")
        rng = m.get("validRange")
        r = as_map(rng, rp)
        return cls(
            q(m.get("default"), join_path(path, "default")),
            tuple(parse_quantity(v, join_path(vp, i)) for i, v in enumerate(as_list(m.get("validValues"), vp))),
            q(r.get("min"), join_path(rp, "min")),
            q(r.get("max"), join_path(rp, "max")),
            q(r.get("step"), join_path(rp, "step")),
            rng is not None,
        )


def quantity_text(q: Fraction) -> str:
    """A quantity as the API writes it back: whole numbers plain, else milli or nano units."""
    if q.denominator == 1:
        return str(q.numerator)
    milli = q * 1000
    if milli.denominator == 1:
        return f"{milli.numerator}m"
    return f"{-((-q.numerator * 10**9) // q.denominator)}n"  # rounded up, as parsing does


def _quantity_map(d: Any, path: str) -> dict[str, Fraction]:
    return {name: parse_quantity(v, join_path(path, name)) for name, v in as_map(d, path).items()}


@dataclass(frozen=True, slots=True, eq=False)
class Device:
    """One device of a ResourceSlice (v1's flat Device). Identity is by object: the allocator
    caches per device."""

    name: str
    attributes: dict[str, Attribute]  # qualified name as written -> (kind, value)
    capacity: dict[str, Fraction]
    consumes_counters: tuple[CounterConsumption, ...]
    taints: tuple[DeviceTaint, ...]
    node_name: str
    node_selector: NodeSelector | None
    all_nodes: bool
    binding_conditions: tuple[str, ...]
    allow_multiple_allocations: bool
    #: capacity name (as written) -> its request policy, for the capacities that have one
    capacity_policies: dict[str, CapacityPolicy] = field(default_factory=dict)

    @classmethod
    def parse(cls, d: Any, path: str) -> Device:
        m = as_map(d, path)
        attrs: dict[str, Attribute] = {}
        ap = join_path(path, "attributes")
        for name, a in as_map(m.get("attributes"), ap).items():
            am = as_map(a, join_path(ap, name))
            for kind in ATTRIBUTE_KINDS:
                if am.get(kind) is not None:
                    attrs[name] = (kind, am[kind])
                    break
        cap_path = join_path(path, "capacity")
        capacity = {
            name: parse_quantity(as_map(c, join_path(cap_path, name)).get("value", 0), join_path(cap_path, f"{name}.value"))
            for name, c in as_map(m.get("capacity"), cap_path).items()
        }
        policies = {
            name: pol
            for name, c in as_map(m.get("capacity"), cap_path).items()
            if (pol := CapacityPolicy.parse(as_map(c, join_path(cap_path, name)).get("requestPolicy"), join_path(cap_path, f"{name}.requestPolicy")))
            is not None
        }
        cc_path = join_path(path, "consumesCounters")
        consumes = tuple(
            CounterConsumption(
                as_str(as_map(c, join_path(cc_path, i)).get("counterSet"), join_path(cc_path, f"[{i}].counterSet")),
                _counters(as_map(c, join_path(cc_path, i)).get("counters"), join_path(join_path(cc_path, i), "counters")),
            )
            for i, c in enumerate(as_list(m.get("consumesCounters"), cc_path))
        )
        return cls(
            name=as_str(m.get("name"), join_path(path, "name")),
            attributes=attrs,
            capacity=capacity,
            consumes_counters=consumes,
            taints=_taints(m.get("taints"), join_path(path, "taints")),
            node_name=as_str(m.get("nodeName"), join_path(path, "nodeName")),
            node_selector=NodeSelector.parse(m.get("nodeSelector"), join_path(path, "nodeSelector")),
            all_nodes=as_bool(m.get("allNodes"), join_path(path, "allNodes")),
            binding_conditions=tuple(
                as_str(x, join_path(path, "bindingConditions"))
                for x in as_list(m.get("bindingConditions"), join_path(path, "bindingConditions"))
            ),
            allow_multiple_allocations=as_bool(
                m.get("allowMultipleAllocations"), join_path(path, "allowMultipleAllocations")
            ),
            capacity_policies=policies,
        )


@dataclass(frozen=True, slots=True, eq=False)
class ResourceSlice:
    name: str
    driver: str
    pool: str
    generation: int
    slice_count: int
    node_name: str
    node_selector: NodeSelector | None
    all_nodes: bool
    per_device_node_selection: bool | None  # None: unset (the field is a pointer upstream)
    devices: tuple[Device, ...]
    shared_counters: dict[str, dict[str, Fraction]]  # counter set -> counter -> value
    raw: dict = field(repr=False)

    @classmethod
    def parse(cls, d: Any, path: str = "") -> ResourceSlice:
        m = as_map(d, path)
        _, _, name, _ = _meta(m, path)
        sp = join_path(path, "spec")
        spec = as_map(m.get("spec"), sp)
        pp = join_path(sp, "pool")
        pool = as_map(spec.get("pool"), pp)
        dp = join_path(sp, "devices")
        scp = join_path(sp, "sharedCounters")
        shared = {}
        for i, cs in enumerate(as_list(spec.get("sharedCounters"), scp)):
            csm = as_map(cs, join_path(scp, i))
            shared[as_str(csm.get("name"), join_path(scp, f"[{i}].name"))] = _counters(
                csm.get("counters"), join_path(join_path(scp, i), "counters")
            )
        pdns = spec.get("perDeviceNodeSelection")
        return cls(
            name=name,
            driver=as_str(spec.get("driver"), join_path(sp, "driver")),
            pool=as_str(pool.get("name"), join_path(pp, "name")),
            generation=as_int(pool.get("generation"), join_path(pp, "generation")) or 0,
            slice_count=as_int(pool.get("resourceSliceCount"), join_path(pp, "resourceSliceCount")) or 0,
            node_name=as_str(spec.get("nodeName"), join_path(sp, "nodeName")),
            node_selector=NodeSelector.parse(spec.get("nodeSelector"), join_path(sp, "nodeSelector")),
            all_nodes=as_bool(spec.get("allNodes"), join_path(sp, "allNodes")),
            per_device_node_selection=None if pdns is None else as_bool(pdns, join_path(sp, "perDeviceNodeSelection")),
            devices=tuple(Device.parse(x, join_path(dp, i)) for i, x in enumerate(as_list(spec.get("devices"), dp))),
            shared_counters=shared,
            raw=m,
        )


# ---- ResourceClaim -------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ExactRequest:
    """ExactDeviceRequest or a DeviceSubRequest (``name`` is the subrequest's; "" for exactly)."""

    name: str
    device_class: str
    selectors: tuple[str, ...]
    mode: str  # ExactCount | All
    count: int
    admin_access: bool | None  # None: unset (a pointer upstream)
    tolerations: tuple[DeviceToleration, ...]
    #: ``capacity.requests`` (DRAConsumableCapacity): capacity name as written -> amount; None: unset
    capacity: dict[str, Fraction] | None = field(default=None, hash=False, compare=False)

    @classmethod
    def parse(cls, d: Any, path: str, name: str = "") -> ExactRequest:
        m = as_map(d, path)
        mode = as_str(m.get("allocationMode"), join_path(path, "allocationMode")) or EXACT_COUNT
        count = as_int(m.get("count"), join_path(path, "count"), None)
        if count is None:
            count = 1 if mode == EXACT_COUNT else 0  # API server defaulting
        admin = m.get("adminAccess")
        cap = m.get("capacity")
        cp = join_path(path, "capacity")
        return cls(
            name,
            as_str(m.get("deviceClassName"), join_path(path, "deviceClassName")),
            _selectors(m.get("selectors"), join_path(path, "selectors")),
            mode,
            count,
            None if admin is None else as_bool(admin, join_path(path, "adminAccess")),
            _tolerations(m.get("tolerations"), join_path(path, "tolerations")),
            None if cap is None else _quantity_map(as_map(cap, cp).get("requests"), join_path(cp, "requests")),
        )


@dataclass(frozen=True, slots=True)
class DeviceRequest:
    name: str
    exactly: ExactRequest | None
    first_available: tuple[ExactRequest, ...]


@dataclass(frozen=True, slots=True)
class DeviceConstraint:
    requests: tuple[str, ...]
    match_attribute: str
    distinct_attribute: str


@dataclass(frozen=True, slots=True)
class ClaimSpec:
    requests: tuple[DeviceRequest, ...]
    constraints: tuple[DeviceConstraint, ...]
    config: tuple[dict, ...]  # opaque DeviceClaimConfiguration, copied into the allocation

    @classmethod
    def parse(cls, d: Any, path: str) -> ClaimSpec:
        spec = as_map(d, path)
        dp = join_path(path, "devices")
        devices = as_map(spec.get("devices"), dp)
        rp = join_path(dp, "requests")
        requests = []
        for i, r in enumerate(as_list(devices.get("requests"), rp)):
            ip = join_path(rp, i)
            rm = as_map(r, ip)
            exactly = rm.get("exactly")
            fp = join_path(ip, "firstAvailable")
            subs = []
            for j, s in enumerate(as_list(rm.get("firstAvailable"), fp)):
                sm = as_map(s, join_path(fp, j))
                subs.append(ExactRequest.parse(sm, join_path(fp, j), as_str(sm.get("name"), join_path(fp, f"[{j}].name"))))
            requests.append(
                DeviceRequest(
                    as_str(rm.get("name"), join_path(ip, "name")),
                    None if exactly is None else ExactRequest.parse(exactly, join_path(ip, "exactly")),
                    tuple(subs),
                )
            )
        cp = join_path(dp, "constraints")
        constraints = []
        for i, c in enumerate(as_list(devices.get("constraints"), cp)):
            ip = join_path(cp, i)
            cm = as_map(c, ip)
            constraints.append(
                DeviceConstraint(
                    tuple(as_str(x, join_path(ip, "requests")) for x in as_list(cm.get("requests"), join_path(ip, "requests"))),
                    as_str(cm.get("matchAttribute"), join_path(ip, "matchAttribute")),
                    as_str(cm.get("distinctAttribute"), join_path(ip, "distinctAttribute")),
                )
            )
        config = tuple(as_map(c, join_path(join_path(dp, "config"), i)) for i, c in enumerate(as_list(devices.get("config"), join_path(dp, "config"))))
        return cls(tuple(requests), tuple(constraints), config)


@dataclass(frozen=True, slots=True)
class DeviceResult:
    """DeviceRequestAllocationResult."""

    request: str  # "<request>" or "<request>/<subrequest>"
    driver: str
    pool: str
    device: str
    admin_access: bool | None = None
    tolerations: tuple[DeviceToleration, ...] = ()
    #: a share of a device that allows multiple allocations (DRAConsumableCapacity)
    share_id: str | None = None
    consumed_capacity: tuple[tuple[str, Fraction], ...] | None = None  # (capacity name, amount)

    @property
    def device_id(self) -> tuple[str, str, str]:
        return (self.driver, self.pool, self.device)

    def wire(self) -> dict:
        out: dict[str, Any] = {"request": self.request, "driver": self.driver, "pool": self.pool, "device": self.device}
        if self.admin_access is not None:
            out["adminAccess"] = self.admin_access
        if self.share_id is not None:
            out["shareID"] = self.share_id
        if self.consumed_capacity is not None:
            out["consumedCapacity"] = {k: quantity_text(v) for k, v in self.consumed_capacity}
        if self.tolerations:
            out["tolerations"] = [
                {k: v for k, v in (("key", t.key), ("operator", t.operator), ("value", t.value), ("effect", t.effect)) if v}
                for t in self.tolerations
            ]
        return out


@dataclass(frozen=True, slots=True)
class Allocation:
    """AllocationResult: the devices, the class and claim configs, where the claim is usable."""

    results: tuple[DeviceResult, ...]
    config: tuple[dict, ...] = ()
    node_selector: NodeSelector | None = None
    node_selector_raw: dict | None = field(default=None, compare=False)

    @classmethod
    def parse(cls, d: Any, path: str) -> Allocation:
        m = as_map(d, path)
        dp = join_path(path, "devices")
        devices = as_map(m.get("devices"), dp)
        rp = join_path(dp, "results")
        results = []
        for i, r in enumerate(as_list(devices.get("results"), rp)):
            ip = join_path(rp, i)
            rm = as_map(r, ip)
            admin = rm.get("adminAccess")
            share = rm.get("shareID")
            consumed = rm.get("consumedCapacity")
            results.append(
                DeviceResult(
                    as_str(rm.get("request"), join_path(ip, "request")),
                    as_str(rm.get("driver"), join_path(ip, "driver")),
                    as_str(rm.get("pool"), join_path(ip, "pool")),
                    as_str(rm.get("device"), join_path(ip, "device")),
                    None if admin is None else as_bool(admin, join_path(ip, "adminAccess")),
                    _tolerations(rm.get("tolerations"), join_path(ip, "tolerations")),
                    None if share is None else as_str(share, join_path(ip, "shareID")),
                    None
                    if consumed is None
                    else tuple(_quantity_map(consumed, join_path(ip, "consumedCapacity")).items()),
                )
            )
        raw_sel = m.get("nodeSelector")
        config = tuple(as_list(devices.get("config"), join_path(dp, "config")))
        return cls(
            tuple(results), config, NodeSelector.parse(raw_sel, join_path(path, "nodeSelector")), raw_sel
        )

    def wire(self) -> dict:
        devices: dict[str, Any] = {"results": [r.wire() for r in self.results]}
        if self.config:
            devices["config"] = list(self.config)
        out: dict[str, Any] = {"devices": devices}
        if self.node_selector_raw is not None:
            out["nodeSelector"] = self.node_selector_raw
        return out


@dataclass(frozen=True, slots=True)
class ConsumerRef:
    """ResourceClaimConsumerReference."""

    resource: str
    name: str
    uid: str
    api_group: str = ""

    def wire(self) -> dict:
        out = {"resource": self.resource, "name": self.name, "uid": self.uid}
        if self.api_group:
            out["apiGroup"] = self.api_group
        return out


@dataclass(frozen=True, slots=True)
class ControllerRef:
    kind: str
    name: str
    uid: str


@dataclass(frozen=True, slots=True, eq=False)
class ResourceClaim:
    namespace: str
    name: str
    uid: str
    spec: ClaimSpec
    allocation: Allocation | None
    reserved_for: tuple[ConsumerRef, ...]
    deleting: bool
    controller: ControllerRef | None  # the owner with controller: true
    finalizers: tuple[str, ...]
    raw: dict = field(repr=False)

    @property
    def key(self) -> str:
        """``namespace/name`` (klog.KObj's form, so also what messages name it by)."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @classmethod
    def parse(cls, d: Any, path: str = "", *, default_namespace: str = "default") -> ResourceClaim:
        m = as_map(d, path)
        md, namespace, name, uid = _meta(m, path)
        mp = join_path(path, "metadata")
        controller = None
        for i, o in enumerate(as_list(md.get("ownerReferences"), join_path(mp, "ownerReferences"))):
            op = join_path(join_path(mp, "ownerReferences"), i)
            om = as_map(o, op)
            if om.get("controller"):
                controller = ControllerRef(
                    as_str(om.get("kind"), join_path(op, "kind")),
                    as_str(om.get("name"), join_path(op, "name")),
                    as_str(om.get("uid"), join_path(op, "uid")),
                )
        stp = join_path(path, "status")
        status = as_map(m.get("status"), stp)
        alloc = status.get("allocation")
        rp = join_path(stp, "reservedFor")
        reserved = []
        for i, r in enumerate(as_list(status.get("reservedFor"), rp)):
            ip = join_path(rp, i)
            rm = as_map(r, ip)
            reserved.append(
                ConsumerRef(
                    as_str(rm.get("resource"), join_path(ip, "resource")),
                    as_str(rm.get("name"), join_path(ip, "name")),
                    as_str(rm.get("uid"), join_path(ip, "uid")),
                    as_str(rm.get("apiGroup"), join_path(ip, "apiGroup")),
                )
            )
        return cls(
            namespace=namespace or default_namespace,
            name=name,
            uid=uid or f"claim-uid-{namespace or default_namespace}-{name}",
            spec=ClaimSpec.parse(m.get("spec"), join_path(path, "spec")),
            allocation=None if alloc is None else Allocation.parse(alloc, join_path(stp, "allocation")),
            reserved_for=tuple(reserved),
            deleting=md.get("deletionTimestamp") is not None,
            controller=controller,
            finalizers=tuple(
                as_str(x, join_path(mp, "finalizers")) for x in as_list(md.get("finalizers"), join_path(mp, "finalizers"))
            ),
            raw=m,
        )

    def reserved_for_pod(self, pod_uid: str) -> bool:
        """resourceclaim.IsReservedForPod."""
        return any(r.uid == pod_uid for r in self.reserved_for)

    @property
    def can_be_reserved(self) -> bool:
        """resourceclaim.CanBeReserved."""
        return len(self.reserved_for) < RESERVED_FOR_MAX_SIZE

    def with_status(
        self, allocation: Allocation | None, reserved_for: tuple[ConsumerRef, ...], finalizers: tuple[str, ...] | None = None
    ) -> ResourceClaim:
        """The claim after a status update: ``raw`` follows, so output shows what was written."""
        status = dict(self.raw.get("status") or {})
        if allocation is None:
            status.pop("allocation", None)
        else:
            status["allocation"] = allocation.wire()
        if reserved_for:
            status["reservedFor"] = [r.wire() for r in reserved_for]
        else:
            status.pop("reservedFor", None)
        fins = self.finalizers if finalizers is None else finalizers
        raw = {**self.raw, "status": status}
        if fins:
            raw["metadata"] = {**(self.raw.get("metadata") or {}), "finalizers": list(fins)}
        return dataclasses.replace(self, allocation=allocation, reserved_for=reserved_for, finalizers=fins, raw=raw)


# ---- ResourceClaimTemplate -----------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ResourceClaimTemplate:
    namespace: str
    name: str
    labels: dict[str, str]
    annotations: dict[str, str]
    spec: ClaimSpec
    raw: dict = field(repr=False)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @classmethod
    def parse(cls, d: Any, path: str = "", *, default_namespace: str = "default") -> ResourceClaimTemplate:
        m = as_map(d, path)
        _, namespace, name, _ = _meta(m, path)
        sp = join_path(path, "spec")
        spec = as_map(m.get("spec"), sp)
        tmp = join_path(sp, "metadata")
        tmd = as_map(spec.get("metadata"), tmp)
        return cls(
            namespace or default_namespace,
            name,
            str_map(tmd.get("labels"), join_path(tmp, "labels")),
            str_map(tmd.get("annotations"), join_path(tmp, "annotations")),
            ClaimSpec.parse(spec.get("spec"), join_path(sp, "spec")),
            m,
        )
