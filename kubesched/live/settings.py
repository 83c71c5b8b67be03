"""What ``kubesched run`` takes from its configuration file and what from its command line.

kube-scheduler's rules (cmd/kube-scheduler/app/options): the file's ``leaderElection`` and
``clientConnection`` apply (v1 defaults without a file: ``leaderElect`` true, 50 QPS, burst 100),
and a leader-election flag given on the command line overrides the file. kube-scheduler ignores
its deprecated ``--kubeconfig``, ``--kube-api-qps``, ``--kube-api-burst`` and
``--kube-api-content-type`` when ``--config`` is given; kubesched lets them override the file as
well (``--kubeconfig`` is how a scheduler outside the cluster is pointed at it), so any flag
given wins over the file. Two defaults differ on purpose: the Lease is named after the first
profile (kube-scheduler's default, ``kube-system/kube-scheduler``, is the cluster's own
scheduler's lock), and the protobuf content type, which the kubernetes Python client cannot
speak, becomes JSON (with a warning when the file or a flag asks for it).
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass, field
from typing import Any

from kubesched.config import SchedulerConfig
from kubesched.config.decode import parse_duration
from kubesched.errors import InputError
from kubesched.live.leader import LeaseConfig

JSON = "application/json"
PROTOBUF = "application/vnd.kubernetes.protobuf"

# flag -> (configuration field, argparse dest)
LEADER_FLAGS = {
    "--leader-elect": ("leaderElection.leaderElect", "leader_elect"),
    "--leader-elect-lease-duration": ("leaderElection.leaseDuration", "leader_elect_lease_duration"),
    "--leader-elect-renew-deadline": ("leaderElection.renewDeadline", "leader_elect_renew_deadline"),
    "--leader-elect-retry-period": ("leaderElection.retryPeriod", "leader_elect_retry_period"),
    "--leader-elect-resource-lock": ("leaderElection.resourceLock", "leader_elect_resource_lock"),
    "--leader-elect-resource-name": ("leaderElection.resourceName", "lease_name"),
    "--leader-elect-resource-namespace": ("leaderElection.resourceNamespace", "lease_namespace"),
}
CLIENT_FLAGS = {
    "--kubeconfig": ("clientConnection.kubeconfig", "kubeconfig"),
    "--kube-api-qps": ("clientConnection.qps", "kube_api_qps"),
    "--kube-api-burst": ("clientConnection.burst", "kube_api_burst"),
    "--kube-api-content-type": ("clientConnection.contentType", "kube_api_content_type"),
}


@dataclass(frozen=True)
class Value:
    """A setting and where it came from, so that a problem names the flag or the file's field."""

    value: Any
    flag: str | None  # the flag that set it, or None: the file (or its default)
    field: str
    source: str | None  # the configuration file
    explicit: bool  # set by a flag or written in the file (not a default)

    def error(self, message: str) -> InputError:
        if self.flag:
            return InputError(message, path=self.flag)
        return InputError(message, source=self.source, path=self.field)

    @property
    def where(self) -> str:
        return self.flag or (f"{self.source}: {self.field}" if self.source else self.field)


@dataclass(frozen=True)
class Settings:
    kubeconfig: Value  # value None: the in-cluster service account
    qps: float  # < 0: no client-side rate limit (client-go's rule)
    burst: int
    leader_elect: bool
    lease: LeaseConfig
    warnings: list[str] = field(default_factory=list)


def _pick(args: argparse.Namespace, flag: str, table: dict, config: SchedulerConfig, from_file: bool) -> Value:
    fld, dest = table[flag]
    given = getattr(args, dest, None)
    if given is not None:
        return Value(given, flag, fld, None, True)
    block, key = fld.split(".")
    section = config.leader_election if block == "leaderElection" else config.client_connection
    source = config.source if from_file else None
    return Value(section.get(key), None, fld, source, from_file and fld in config.explicit_fields)


def parse_bool(text: str, flag: str) -> bool:
    """strconv.ParseBool, as pflag reads ``--leader-elect=false``."""
    if text in ("1", "t", "T", "true", "TRUE", "True"):
        return True
    if text in ("0", "f", "F", "false", "FALSE", "False"):
        return False
    raise InputError(f"invalid boolean {text!r} (true or false)", path=flag)


def _seconds(v: Value) -> float:
    """A duration: Go's form ("15s", "1m30s") from the file or a flag; plain seconds from a flag."""
    text = str(v.value)
    seconds = parse_duration(text)
    if seconds is None and v.flag:
        try:
            seconds = float(text)
        except ValueError:
            seconds = None
    if seconds is None or not math.isfinite(seconds):
        raise v.error(f'invalid duration "{text}" (e.g. "15s", "1m30s", or seconds)')
    if seconds <= 0:
        raise v.error(f'invalid value "{text}": must be greater than zero')
    return seconds


def _media_types(v: Value, accept: bool) -> list[str]:
    """The media types of a content-type field; anything but JSON or protobuf is refused."""
    out = []
    for part in str(v.value or "").split(","):
        mt = part.split(";", 1)[0].strip().lower()
        if not mt:
            continue
        if mt not in (JSON, PROTOBUF) and not (accept and mt == "*/*"):
            raise v.error(f'unsupported media type "{mt}" (the kubernetes Python client speaks {JSON})')
        out.append(mt)
    return out


def _content_warnings(args: argparse.Namespace, config: SchedulerConfig, from_file: bool) -> list[str]:
    """Requests and responses are JSON whatever is asked: say so when protobuf is asked for."""
    out = []
    ct = _pick(args, "--kube-api-content-type", CLIENT_FLAGS, config, from_file)
    if PROTOBUF in _media_types(ct, accept=False) and ct.explicit:
        out.append(f"{ct.where}: {PROTOBUF} is not supported by the kubernetes Python client; requests are sent as {JSON}")
    src = config.source if from_file else None
    accept = Value(config.client_connection.get("acceptContentTypes"), None, "clientConnection.acceptContentTypes",
                   src, from_file and "clientConnection.acceptContentTypes" in config.explicit_fields)
    if PROTOBUF in _media_types(accept, accept=True) and accept.explicit:
        out.append(
            f"{accept.where}: {PROTOBUF} is not supported by the kubernetes Python client; responses are read as {JSON}"
        )
    return out


def resolve(args: argparse.Namespace, config: SchedulerConfig, *, from_file: bool) -> Settings:
    """The client and leader-election settings ``run`` uses; ``InputError`` names the flag or field."""
    warnings = _content_warnings(args, config, from_file)

    kubeconfig = _pick(args, "--kubeconfig", CLIENT_FLAGS, config, from_file)
    if not kubeconfig.value:
        kubeconfig = Value(None, kubeconfig.flag, kubeconfig.field, kubeconfig.source, False)
    qps_v = _pick(args, "--kube-api-qps", CLIENT_FLAGS, config, from_file)
    qps = float(qps_v.value)
    if not math.isfinite(qps) or qps == 0:
        raise qps_v.error(f"must be a positive number (or negative: no client-side limit), got {qps:g}")
    burst_v = _pick(args, "--kube-api-burst", CLIENT_FLAGS, config, from_file)
    burst = int(burst_v.value)
    if burst < 1 and qps > 0:
        raise burst_v.error(f"must be a positive integer, got {burst}")

    def leader(flag: str) -> Value:
        return _pick(args, flag, LEADER_FLAGS, config, from_file)

    elect_v = leader("--leader-elect")
    elect = parse_bool(elect_v.value, elect_v.flag) if isinstance(elect_v.value, str) else bool(elect_v.value)
    name_v = leader("--leader-elect-resource-name")
    name = str(name_v.value) if name_v.explicit else config.profiles[0].scheduler_name
    namespace_v = leader("--leader-elect-resource-namespace")
    durations = [leader(f) for f in ("--leader-elect-lease-duration", "--leader-elect-renew-deadline",
                                     "--leader-elect-retry-period")]
    if elect:
        lock = leader("--leader-elect-resource-lock")
        if lock.value != "leases":
            raise lock.error(f'invalid value "{lock.value}": resourceLock value must be "leases"')
        if not name:
            raise name_v.error("required")
        if not namespace_v.value:
            raise namespace_v.error("required")
        lease_d, renew, retry = (_seconds(v) for v in durations)
        if renew >= lease_d:
            raise durations[1].error(f"must be less than the lease duration ({durations[0].where}, {lease_d:g}s)")
        if retry >= renew:
            raise durations[2].error(f"must be less than the renew deadline ({durations[1].where}, {renew:g}s)")
    else:
        lease_d, renew, retry = 15.0, 10.0, 2.0  # not used
    lease = LeaseConfig(name, str(namespace_v.value or ""), "", lease_d, renew, retry)
    return Settings(kubeconfig, qps, burst, elect, lease, warnings)
