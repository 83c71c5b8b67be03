"""CoschedulingArgs: how long a gang may hold its members at Permit, and how long it backs off."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.errors import InputError, join_path
from kubesched.framework.plugin_args import args_body, shown

NAME = "Coscheduling"
DEFAULT_PERMIT_WAITING_TIME_SECONDS = 60  # apis/config/v1 defaults
DEFAULT_POD_GROUP_BACKOFF_SECONDS = 0
#: Fields of older CoschedulingArgs versions that mean nothing here (no API client, no deny list).
LEGACY_FIELDS = ("kubeConfigPath", "kubeMaster", "deniedPGExpirationTimeSeconds")
FIELDS = ("permitWaitingTimeSeconds", "podGroupBackoffSeconds", *LEGACY_FIELDS)


@dataclass(frozen=True, slots=True)
class CoschedulingArgs:
    permit_waiting_time_seconds: int = DEFAULT_PERMIT_WAITING_TIME_SECONDS
    pod_group_backoff_seconds: int = DEFAULT_POD_GROUP_BACKOFF_SECONDS


def _seconds(body: Mapping[str, Any], key: str, default: int) -> int:
    value = body.get(key, default)
    path = join_path(f"{NAME}Args", key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"expected an integer number of seconds, got {shown(value)}", path=path)
    if value < 0:
        raise InputError(f"invalid value {value}: cannot be negative", path=path)
    return value


def parse_args(args: Mapping[str, Any] | None) -> CoschedulingArgs:
    """Defaulted, validated args; a bad field raises InputError naming ``CoschedulingArgs.<field>``."""
    body = args_body(NAME, args, FIELDS)
    return CoschedulingArgs(
        _seconds(body, "permitWaitingTimeSeconds", DEFAULT_PERMIT_WAITING_TIME_SECONDS),
        _seconds(body, "podGroupBackoffSeconds", DEFAULT_POD_GROUP_BACKOFF_SECONDS),
    )
