"""NodeResourcesFit and NodeResourcesBalancedAllocation, as in pkg/scheduler/framework/plugins/noderesources.

This module holds the resource-name predicates both plugins share (v1helper / schedutil):
which names the scheduler tracks as scalar resources, and which of those are "extended"
resources that ``ignoredResources`` / ``ignoredResourceGroups`` may switch off.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = [
    "is_attachable_volume_resource_name",
    "is_extended_resource_name",
    "is_hugepage_resource_name",
    "is_prefixed_native_resource",
    "is_scalar_resource_name",
    "is_qualified_name",
]

DEFAULT_NAMESPACE_PREFIX = "kubernetes.io/"
REQUESTS_PREFIX = "requests."
HUGEPAGES_PREFIX = "hugepages-"
ATTACHABLE_VOLUMES_PREFIX = "attachable-volumes-"

_QUALIFIED_NAME_RE = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1123_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def is_qualified_name(value: str) -> bool:
    """validation.IsQualifiedName: ``[dns-subdomain/]name`` with name <= 63 chars."""
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix or len(prefix) > 253 or not _DNS1123_SUBDOMAIN_RE.match(prefix):
            return False
    else:
        return False
    return 0 < len(name) <= 63 and bool(_QUALIFIED_NAME_RE.match(name))


def is_prefixed_native_resource(name: str) -> bool:
    """Names in the kubernetes.io/ namespace are native even with a prefix."""
    return DEFAULT_NAMESPACE_PREFIX in name


def is_native_resource(name: str) -> bool:
    return "/" not in name or is_prefixed_native_resource(name)


def is_hugepage_resource_name(name: str) -> bool:
    return name.startswith(HUGEPAGES_PREFIX)


def is_attachable_volume_resource_name(name: str) -> bool:
    return name.startswith(ATTACHABLE_VOLUMES_PREFIX)


@lru_cache(maxsize=4096)
def is_extended_resource_name(name: str) -> bool:
    """v1helper.IsExtendedResourceName: vendor-prefixed, not native, valid as a quota name."""
    if is_native_resource(name) or name.startswith(REQUESTS_PREFIX):
        return False
    return is_qualified_name(REQUESTS_PREFIX + name)


@lru_cache(maxsize=4096)
def is_scalar_resource_name(name: str) -> bool:
    """schedutil.IsScalarResourceName: the names NodeInfo tracks besides cpu/memory/storage/pods."""
    return (
        is_extended_resource_name(name)
        or is_hugepage_resource_name(name)
        or is_prefixed_native_resource(name)
        or is_attachable_volume_resource_name(name)
    )
