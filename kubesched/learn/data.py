"""The openb inputs of the learning track: shipped traces by name (or paths), loaded once per
process, prepared with the FGD protocol, optionally cut down for small instances."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from kubesched.api.objects import Node
from kubesched.errors import InputError
from kubesched.experiment.protocol import Prepared, prepare
from kubesched.trace.bundled import node_list, pod_list
from kubesched.trace.openb import TracePods, read_nodes, read_pods

HELD_OUT_SEEDS = tuple(range(42, 52))  # the paper's seeds: evaluation only, never training


@dataclass(frozen=True)
class Instance:
    """A trace on a node list, optionally a small instance: ``max_nodes`` nodes spread over the
    list (the model mix kept) and the first ``max_pods`` pods (tuned to 1.3 x *their* capacity)."""

    trace: str = "default"
    nodes: str = "gpu"
    max_nodes: int | None = None
    max_pods: int | None = None
    tune: float = 1.3

    def prepare(self, seed: int) -> Prepared:
        nodes, pods = load(self)
        try:
            return prepare(pods, nodes, seed, self.tune)
        except ValueError as e:  # e.g. a small instance whose pods ask for no GPU
            raise InputError(str(e), source=f"trace {self.trace}") from None


@lru_cache(maxsize=16)
def _nodes(spec: str, limit: int | None) -> tuple[Node, ...]:
    nodes = read_nodes(node_list(spec))
    if limit is not None and limit < len(nodes):
        step = len(nodes) / limit
        nodes = [nodes[int(i * step)] for i in range(limit)]
    return tuple(nodes)


@lru_cache(maxsize=16)
def _pods(spec: str, limit: int | None) -> TracePods:
    tp = read_pods(pod_list(spec))
    if limit is not None:
        m = limit
        tp = TracePods(tp.pods[:m], tp.creation_time[:m], tp.deletion_time[:m], [], tp.lines[:m], tp.source)
    return tp


def load(inst: Instance) -> tuple[list[Node], TracePods]:
    """The instance's nodes and trace (parsed once per process; ``prepare`` copies the pods)."""
    return list(_nodes(inst.nodes, inst.max_nodes)), _pods(inst.trace, inst.max_pods)


def check_training_seeds(seeds: list[int], flag: str = "--seeds") -> list[int]:
    """Training must not touch the held-out evaluation seeds."""
    bad = sorted(set(seeds) & set(HELD_OUT_SEEDS))
    if bad:
        raise InputError(
            f"seeds {','.join(map(str, bad))} are held out for evaluation (42-51); train on others", source=flag
        )
    return seeds
