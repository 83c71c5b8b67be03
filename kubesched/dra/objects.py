"""resource.k8s.io/v1 DeviceClasses and ResourceSlices as the scheduler reads them, parsed once
from wire dicts, and what claims parse with too (``kubesched.dra.claims``: ResourceClaims and
their templates).

Only what allocation and the DynamicResources plugin read is kept (``raw`` keeps the rest for
output). Files go through the schema check and ``kubesched.dra.validation`` first; objects from
elsewhere are parsed as they come.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from kubesched.api.fields import as_bool, as_int, as_list, as_map, as_str, child, maps, str_fields
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


def parse_meta(m: dict, path: str) -> tuple[dict, str, str, str]:
    md, mp = child(m, path, "metadata")
    return (
        md,
        as_str(md.get("namespace"), join_path(mp, "namespace")),
        as_str(md.get("name"), join_path(mp, "name")),
        as_str(md.get("uid"), join_path(mp, "uid")),
    )


def parse_selectors(items: Any, path: str) -> tuple[str, ...]:
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
    return tuple(DeviceTaint(*str_fields(tm, tp, "key", "value", "effect")) for tm, tp in maps(items, path))


def parse_tolerations(items: Any, path: str) -> tuple[DeviceToleration, ...]:
    out = []
    for tm, tp in maps(items, path):
        key, operator, value, effect = str_fields(tm, tp, "key", "operator", "value", "effect")
        out.append(DeviceToleration(key, operator or "Equal", value, effect))
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
        _, _, name, _ = parse_meta(m, path)
        spec, sp = child(m, path, "spec")
        return cls(
            name,
            parse_selectors(spec.get("selectors"), join_path(sp, "selectors")),
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


def parse_quantity_map(d: Any, path: str) -> dict[str, Fraction]:
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
        _, _, name, _ = parse_meta(m, path)
        spec, sp = child(m, path, "spec")
        pool, pp = child(spec, sp, "pool")
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
