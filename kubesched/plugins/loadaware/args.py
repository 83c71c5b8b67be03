"""Trimaran's plugin args (scheduler-plugins apis/config), decoded and defaulted as upstream.

Upstream fields keep their names and defaults. Differences, all documented in
docs/plugins/TargetLoadPacking.md: ``metricProvider.type`` accepts ``Prometheus`` and kubesched's
``Simulator``; ``watcherAddress``, ``KubernetesMetricsServer`` and ``SignalFx`` are rejected with
one line; ``prometheus`` (kubesched's) tunes queries, cache and staleness. Values upstream would
turn into out-of-range scores (``targetUtilization > 100``) are rejected instead.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.resources import CPU, parse_resource_list
from kubesched.errors import InputError, join_path
from kubesched.framework.plugin_args import args_body, shown

PROMETHEUS = "Prometheus"
SIMULATOR = "Simulator"
PROVIDER_TYPES = (PROMETHEUS, SIMULATOR)
UNSUPPORTED_TYPES = ("KubernetesMetricsServer", "SignalFx")
DEFAULT_PROM_ADDRESS = "http://prometheus-k8s:9090"  # load-watcher's DefaultPromAddress
TRIMARAN_FIELDS = ("metricProvider", "watcherAddress", "prometheus")

# TargetLoadPacking defaults (apis/config/v1/defaults.go)
DEFAULT_REQUESTS_MILLI_CORES = 1000
DEFAULT_REQUESTS_MULTIPLIER = "1.5"
DEFAULT_TARGET_UTILIZATION = 40
# LoadVariationRiskBalancing defaults
DEFAULT_SAFE_VARIANCE_MARGIN = 1.0
DEFAULT_SAFE_VARIANCE_SENSITIVITY = 1.0

_DURATION = re.compile(r"^(\d+(ms|s|m|h|d|w|y))+$")
_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}


def duration_seconds(text: str) -> float:
    """A PromQL duration (``15m``, ``1m30s``) in seconds."""
    return sum(int(n) * _UNITS[u] for n, u in re.findall(r"(\d+)(ms|s|m|h|d|w|y)", text))


@dataclass(frozen=True)
class PrometheusOptions:
    """How kubesched queries Prometheus (the ``prometheus`` block; all optional)."""

    node_label: str = "instance"  # series label naming the node (a trailing :port is dropped)
    window: str = "15m"  # avg/stddev range (load-watcher's 15m window)
    resolution: str = "1m"  # subquery step
    rate_window: str = "1m"  # rate() range in the default CPU query
    cpu_query: str | None = None  # utilization ratio 0..1 per node; None = node-exporter default
    memory_query: str | None = None
    update_interval_seconds: float = 30.0  # upstream's metricsUpdateIntervalSeconds
    staleness_seconds: float = 120.0  # older data count as unavailable -> requests fallback
    timeout_seconds: float = 5.0


@dataclass(frozen=True)
class MetricProvider:
    """Where utilization comes from: ``Prometheus``, ``Simulator`` or None (the handle's, else requests)."""

    type: str | None = None
    address: str = DEFAULT_PROM_ADDRESS
    token: str | None = field(default=None, repr=False)  # never in logs or error lines
    token_file: str | None = None  # kubesched's: the token read from this file (a mounted Secret), per query
    insecure_skip_verify: bool = True  # upstream's default for Prometheus
    prometheus: PrometheusOptions = PrometheusOptions()


def _map(v: Any, path: str) -> Mapping[str, Any]:
    if v is None:
        return {}
    if not isinstance(v, Mapping):
        raise InputError(f"expected an object, got {type(v).__name__}", path=path)
    return v


def _known(m: Mapping[str, Any], allowed: tuple[str, ...], path: str) -> None:
    for key in m:
        if key not in allowed:
            raise InputError(
                f'unknown field "{key}" (known: {", ".join(allowed)})', path=join_path(path, str(key))
            )


def _str(m: Mapping[str, Any], key: str, path: str, default: str | None) -> str | None:
    v = m.get(key, default)
    if v is None:
        return None
    if not isinstance(v, str) or not v:
        raise InputError(f"invalid value {shown(v)}: must be a non-empty string", path=join_path(path, key))
    return v


def _number(
    m: Mapping[str, Any], key: str, path: str, default: float | None, *, positive: bool
) -> float | None:
    v = m.get(key, default)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or (positive and v <= 0):
        need = "a number > 0" if positive else "a number"
        raise InputError(f"invalid value {shown(v)}: must be {need}", path=join_path(path, key))
    return float(v)


def _duration(m: Mapping[str, Any], key: str, path: str, default: str) -> str:
    v = m.get(key, default)
    if not isinstance(v, str) or not _DURATION.match(v) or duration_seconds(v) <= 0:
        raise InputError(
            f'invalid value {shown(v)}: must be a Prometheus duration such as "15m" or "30s"',
            path=join_path(path, key),
        )
    return v


def parse_prometheus_options(raw: Any, path: str) -> PrometheusOptions:
    m = _map(raw, path)
    fields = (
        "nodeLabel",
        "window",
        "resolution",
        "rateWindow",
        "cpuQuery",
        "memoryQuery",
        "updateIntervalSeconds",
        "stalenessSeconds",
        "timeoutSeconds",
    )
    _known(m, fields, path)
    d = PrometheusOptions()
    label = _str(m, "nodeLabel", path, d.node_label)
    if not re.match(r"^[a-zA-Z_][a-zA-Z0-9_]*$", label or ""):
        raise InputError(
            f"invalid value {shown(label)}: must be a Prometheus label name", path=join_path(path, "nodeLabel")
        )
    interval = _number(m, "updateIntervalSeconds", path, d.update_interval_seconds, positive=False)
    if interval is not None and interval < 0:
        raise InputError(
            f"invalid value {shown(interval)}: must be >= 0", path=join_path(path, "updateIntervalSeconds")
        )
    return PrometheusOptions(
        node_label=label or d.node_label,
        window=_duration(m, "window", path, d.window),
        resolution=_duration(m, "resolution", path, d.resolution),
        rate_window=_duration(m, "rateWindow", path, d.rate_window),
        cpu_query=_str(m, "cpuQuery", path, None),
        memory_query=_str(m, "memoryQuery", path, None),
        update_interval_seconds=interval if interval is not None else d.update_interval_seconds,
        staleness_seconds=_number(m, "stalenessSeconds", path, d.staleness_seconds, positive=True)
        or d.staleness_seconds,
        timeout_seconds=_number(m, "timeoutSeconds", path, d.timeout_seconds, positive=True)
        or d.timeout_seconds,
    )


def parse_metric_provider(body: Mapping[str, Any], root: str) -> MetricProvider:
    """TrimaranSpec: ``metricProvider`` (+ kubesched's ``prometheus``); ``watcherAddress`` is refused."""
    if body.get("watcherAddress"):
        raise InputError(
            "not supported: kubesched queries Prometheus itself instead of a load-watcher service; use "
            "metricProvider: {type: Prometheus, address: http://...}",
            path=join_path(root, "watcherAddress"),
        )
    mpath = join_path(root, "metricProvider")
    mp = _map(body.get("metricProvider"), mpath)
    _known(mp, ("type", "address", "token", "tokenFile", "insecureSkipVerify"), mpath)
    token_file = _str(mp, "tokenFile", mpath, None)
    if token_file is not None and mp.get("token"):
        raise InputError("set only one of token and tokenFile", path=join_path(mpath, "tokenFile"))
    kind = mp.get("type") or None
    if kind in UNSUPPORTED_TYPES:
        raise InputError(
            f'unsupported value "{kind}": kubesched reads utilization from Prometheus or the simulator '
            f"(supported: {', '.join(PROVIDER_TYPES)})",
            path=join_path(mpath, "type"),
        )
    if kind is not None and kind not in PROVIDER_TYPES:
        raise InputError(
            f"unknown value {shown(kind)} (supported: {', '.join(PROVIDER_TYPES)})", path=join_path(mpath, "type")
        )
    address = _str(mp, "address", mpath, DEFAULT_PROM_ADDRESS) or DEFAULT_PROM_ADDRESS
    if not re.match(r"^https?://[^/\s]+", address):
        raise InputError(
            f"invalid value {shown(address)}: must be an http:// or https:// URL", path=join_path(mpath, "address")
        )
    skip = mp.get("insecureSkipVerify", True)
    if not isinstance(skip, bool):
        raise InputError(
            f"invalid value {shown(skip)}: must be true or false", path=join_path(mpath, "insecureSkipVerify")
        )
    return MetricProvider(
        type=kind,
        address=address.rstrip("/"),
        token=_str(mp, "token", mpath, None),
        token_file=token_file or None,
        insecure_skip_verify=skip,
        prometheus=parse_prometheus_options(body.get("prometheus"), join_path(root, "prometheus")),
    )


@dataclass(frozen=True)
class TargetLoadPackingArgs:
    provider: MetricProvider
    default_requests_milli: int = DEFAULT_REQUESTS_MILLI_CORES
    multiplier: float = 1.5
    target_utilization: int = DEFAULT_TARGET_UTILIZATION


def parse_target_load_packing(args: Mapping[str, Any] | None) -> TargetLoadPackingArgs:
    root = "TargetLoadPackingArgs"
    body = args_body(
        "TargetLoadPacking", args, (*TRIMARAN_FIELDS, "defaultRequests", "defaultRequestsMultiplier", "targetUtilization")
    )
    provider = parse_metric_provider(body, root)
    dr = body.get("defaultRequests")
    milli = DEFAULT_REQUESTS_MILLI_CORES
    if dr is not None:
        # upstream reads only the cpu entry (a ResourceList without cpu means 0)
        milli = parse_resource_list(dr, join_path(root, "defaultRequests")).get(CPU, 0)
    mult_raw = body.get("defaultRequestsMultiplier", DEFAULT_REQUESTS_MULTIPLIER)
    mpath = join_path(root, "defaultRequestsMultiplier")
    try:
        # upstream's field is a string parsed with strconv.ParseFloat; a YAML number is taken too
        if isinstance(mult_raw, bool) or not isinstance(mult_raw, str | int | float):
            raise ValueError
        mult = float(mult_raw)
    except ValueError:
        raise InputError(f"invalid value {shown(mult_raw)}: unable to parse as a number", path=mpath) from None
    if not math.isfinite(mult) or mult < 0:
        raise InputError(f"invalid value {shown(mult_raw)}: must be a number >= 0", path=mpath)
    target = body.get("targetUtilization")
    tpath = join_path(root, "targetUtilization")
    if target is not None and (isinstance(target, bool) or not isinstance(target, int)):
        raise InputError(f"invalid value {shown(target)}: must be an integer", path=tpath)
    if target is None or target <= 0:  # upstream defaulting: unset or <= 0 -> 40
        target = DEFAULT_TARGET_UTILIZATION
    if target > 100:
        raise InputError(f"invalid value {target}: must be at most 100 (a percentage)", path=tpath)
    return TargetLoadPackingArgs(provider, milli, mult, target)


@dataclass(frozen=True)
class LoadVariationRiskBalancingArgs:
    provider: MetricProvider
    margin: float = DEFAULT_SAFE_VARIANCE_MARGIN
    sensitivity: float = DEFAULT_SAFE_VARIANCE_SENSITIVITY


def parse_load_variation_risk_balancing(args: Mapping[str, Any] | None) -> LoadVariationRiskBalancingArgs:
    root = "LoadVariationRiskBalancingArgs"
    body = args_body("LoadVariationRiskBalancing", args, (*TRIMARAN_FIELDS, "safeVarianceMargin", "safeVarianceSensitivity"))
    provider = parse_metric_provider(body, root)
    margin = _number(body, "safeVarianceMargin", root, None, positive=False)
    sensitivity = _number(body, "safeVarianceSensitivity", root, None, positive=False)
    # upstream defaulting: unset or negative -> 1
    if margin is None or margin < 0:
        margin = DEFAULT_SAFE_VARIANCE_MARGIN
    if sensitivity is None or sensitivity < 0:
        sensitivity = DEFAULT_SAFE_VARIANCE_SENSITIVITY
    return LoadVariationRiskBalancingArgs(provider, margin, sensitivity)
