"""The openb trace (Alibaba GPU cluster, 2023) as a simulator workload.

Rows are read by ``kubesched.trace.openb``; here they get their timeline: a pod arrives at its
``creation_time`` and runs for ``deletion_time - creation_time`` once bound (forever when the
row has no deletion time).
"""

from __future__ import annotations

from kubesched.sim.workload import Workload


def load_openb(trace: str, nodes: str | None = None, *, skip_invalid: bool = False) -> Workload:
    """``trace``/``nodes``: CSV paths or shipped names (``default``; ``all`` or ``gpu``, default ``all``)."""
    from kubesched.trace import bundled
    from kubesched.trace.openb import check_fits, read_nodes, read_pods

    nodes = nodes or "all"
    node_list = read_nodes(bundled.node_list(nodes))
    # rows that cannot parse, then pods no node could ever hold: errors, or skipped and counted
    tp = check_fits(node_list, read_pods(bundled.pod_list(trace), skip_invalid=skip_invalid), skip_invalid=skip_invalid)
    durations: list[float | None] = [
        None if d is None else max(0.0, float(d) - float(c)) for c, d in zip(tp.creation_time, tp.deletion_time, strict=True)
    ]
    return Workload(
        node_list,
        list(tp.pods),
        [float(c) for c in tp.creation_time],
        durations,
        skipped=list(tp.skipped),
        source=f"{trace} on {nodes}",
    )
