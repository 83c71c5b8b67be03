"""PodTopologySpread: spread pods across topology domains (kube-scheduler v1.36 semantics)."""

from kubesched.plugins.podtopologyspread.common import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    NAME,
)
from kubesched.plugins.podtopologyspread.defaults import (
    default_selector,
    parse_args,
)
from kubesched.plugins.podtopologyspread.plugin import PodTopologySpread

__all__ = [
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "NAME",
    "PodTopologySpread",
    "default_selector",
    "parse_args",
]
