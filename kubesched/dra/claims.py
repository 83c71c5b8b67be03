"""resource.k8s.io/v1 ResourceClaims and ResourceClaimTemplates as the scheduler reads them:
requests, constraints and config, and the allocation result (``kubesched.dra.objects`` holds
the classes and slices, and what both parse with). Claims change (allocation, reservations): a
new object replaces the old one (``with_status``), the parsed spec is shared."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from kubesched.api.fields import as_bool, as_int, as_list, as_map, as_str, child, maps, str_map
from kubesched.api.selectors import NodeSelector
from kubesched.dra.objects import (
    EXACT_COUNT,
    RESERVED_FOR_MAX_SIZE,
    DeviceToleration,
    parse_meta,
    parse_quantity_map,
    parse_selectors,
    parse_tolerations,
    quantity_text,
)
from kubesched.errors import join_path


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
            parse_selectors(m.get("selectors"), join_path(path, "selectors")),
            mode,
            count,
            None if admin is None else as_bool(admin, join_path(path, "adminAccess")),
            parse_tolerations(m.get("tolerations"), join_path(path, "tolerations")),
            None if cap is None else parse_quantity_map(as_map(cap, cp).get("requests"), join_path(cp, "requests")),
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
        devices, dp = child(spec, path, "devices")
        rp = join_path(dp, "requests")
        requests = []
        for rm, ip in maps(devices.get("requests"), rp):
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
        for cm, ip in maps(devices.get("constraints"), cp):
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
        devices, dp = child(m, path, "devices")
        rp = join_path(dp, "results")
        results = []
        for rm, ip in maps(devices.get("results"), rp):
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
                    parse_tolerations(rm.get("tolerations"), join_path(ip, "tolerations")),
                    None if share is None else as_str(share, join_path(ip, "shareID")),
                    None
                    if consumed is None
                    else tuple(parse_quantity_map(consumed, join_path(ip, "consumedCapacity")).items()),
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
        md, namespace, name, uid = parse_meta(m, path)
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
        status, stp = child(m, path, "status")
        alloc = status.get("allocation")
        rp = join_path(stp, "reservedFor")
        reserved = []
        for rm, ip in maps(status.get("reservedFor"), rp):
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
        _, namespace, name, _ = parse_meta(m, path)
        spec, sp = child(m, path, "spec")
        tmd, tmp = child(spec, sp, "metadata")
        return cls(
            namespace or default_namespace,
            name,
            str_map(tmd.get("labels"), join_path(tmp, "labels")),
            str_map(tmd.get("annotations"), join_path(tmp, "annotations")),
            ClaimSpec.parse(spec.get("spec"), join_path(sp, "spec")),
            m,
        )
