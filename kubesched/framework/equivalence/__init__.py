"""The equivalence cache: pods with equal signatures reuse the plugins' verdicts and raw scores.

Most pods of a workload are copies of one template. The plugins that sign a pod NODE or ROW
(``SignPlugin``: resources, taints, node affinity, ports, images, the GPU plugins) judge every
node once per pod shape; rows whose pods changed since are judged again when a cycle's window
reaches them. Plugins that do not sign the pod (PodTopologySpread with constraints,
InterPodAffinity in general, user plugins) run fresh every cycle beside the kept verdicts. The
cache is part of ``kubesched.framework.cycle``'s "find feasible nodes"; it returns what the
regular path would (``tests/framework/test_equivalence.py`` runs workloads both ways), and hands
the raw scores it keeps to ``Framework.run_score`` (``KnownScores``), the cycle's one scoring loop.

``cache`` (the cache and one cycle's window), ``entry`` (a pod shape's verdicts and raw scores
per node), ``records`` (why each node fails, for the FitError of a pod that fits nowhere).
"""

from kubesched.framework.equivalence.cache import Batch, EquivalenceCache
from kubesched.framework.equivalence.records import NO_DETAIL

__all__ = ["NO_DETAIL", "Batch", "EquivalenceCache"]
