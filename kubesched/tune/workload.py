"""What a study simulates for each simulator seed.

A trace or manifest workload is the same for every seed (the seed moves tie-breaks and the usage
model). A synthetic workload is generated anew per seed, and ``--inflate`` replays the trace in
the FGD paper's protocol per seed (``kubesched.experiment.protocol.prepare``: shuffled, cloned or
thinned to INFLATE x the GPU capacity, nodes in a seeded order): there a held-out seed is a
genuinely unseen arrival sequence.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kubesched.errors import InputError
from kubesched.sim.workload import Workload


def sample_nodes(wl: Workload, n: int, seed: int) -> Workload:
    """``n`` of the workload's nodes, drawn with ``seed`` (kept in their original order)."""
    if n >= len(wl.nodes):
        return wl
    keep = np.sort(np.random.default_rng([seed, 7]).choice(len(wl.nodes), n, replace=False))
    nodes = [wl.nodes[i] for i in keep]
    return Workload(
        nodes,
        wl.pods,
        wl.arrival,
        wl.duration,
        wl.node_events,
        wl.objects,
        wl.skipped,
        f"{wl.source}, {n} nodes sampled",
    )


@dataclass
class WorkloadSource:
    """Gives the workload of each simulator seed (built once per seed, then reused)."""

    fixed: Workload | None = None  # trace or manifests
    spec: dict[str, Any] | None = None  # synthetic spec
    spec_source: str = "synthetic"
    inflate: float | None = None
    node_sample: int | None = None
    sample_seed: int = 0
    limit: int | None = None
    _cache: dict[int, Workload] = field(default_factory=dict, repr=False)

    def for_seed(self, seed: int) -> Workload:
        wl = self._cache.get(seed)
        if wl is None:
            wl = self._cache[seed] = self._build(seed)
        return wl

    def _build(self, seed: int) -> Workload:
        if self.fixed is not None:
            wl = self.fixed
        else:
            from kubesched.sim.synthetic import generate

            assert self.spec is not None
            wl = generate(self.spec, seed, self.spec_source)
            if self.node_sample:
                wl = sample_nodes(wl, self.node_sample, self.sample_seed)
            if self.limit:
                wl = wl.head(self.limit)
        if self.inflate is None:
            return wl
        from kubesched.experiment.protocol import prepare

        try:
            prep = prepare(wl.pods, wl.nodes, seed, self.inflate)
        except ValueError as e:
            raise InputError(f"--inflate: {e}", source=wl.source or None) from None
        n = len(prep.pods)
        return Workload(
            prep.nodes,
            prep.pods,
            [float(i) for i in range(n)],
            [None] * n,
            objects=wl.objects,
            source=f"{wl.source}, shuffled and inflated to {self.inflate:g}x GPU capacity (seed {seed})",
        )

    def fix(self, wl: Workload) -> None:
        """Set the fixed workload, with the node sample and limit applied once."""
        if self.node_sample:
            wl = sample_nodes(wl, self.node_sample, self.sample_seed)
        if self.limit:
            wl = wl.head(self.limit)
        self.fixed = wl
