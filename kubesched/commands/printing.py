"""What the cluster commands print besides their tables: the JSON/YAML contract and warnings."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubesched.load import ClusterObjects


def emit(data: Any, fmt: str) -> None:
    """``data`` as ``-o json`` or ``-o yaml`` on stdout (the experiments' result documents are
    printed the same way: ``kit.report.print_document``)."""
    from kubesched.kit.report import print_document

    print_document(data, fmt)


def warn(warnings: Iterable[str]) -> None:
    for w in warnings:
        sys.stderr.write(f"kubesched: warning: {w}\n")


def templates_note(objects: ClusterObjects) -> str | None:
    """A line for input that holds workload templates (a Deployment, ...) but no Pod: the
    templates are not pods, and a dump of the pods is what schedules."""
    if objects.pods or not objects.templates:
        return None
    kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(objects.templates.items()))
    return (
        f"no Pod in the input, only workload templates ({kinds}): templates are not pods (their controllers "
        "create the pods); to schedule the pods, give them: kubectl get pods -A -o yaml"
    )
