"""A seeded synthetic workload: node shapes, Poisson arrivals, run lengths and request mixes.

The spec is a small YAML document (every field optional; ``DEFAULT_SPEC`` shows them all):

    nodes:                         # one shape, or a list of shapes
      - {count: 16, cpu: "32", memory: 128Gi, gpus: 8, gpuModel: V100}
    pods:
      count: 1000
      arrivalRate: 0.05            # pods per second (exponential gaps)
      duration: {dist: exponential, mean: 3600}       # or lognormal {median, sigma}, constant {value}, none
      cpu: {dist: choice, values: ["1", "2", "4", "8"], weights: [4, 3, 2, 1]}   # or uniform {min, max}
      memory: {dist: choice, values: [2Gi, 4Gi, 8Gi, 16Gi]}
      gpu:
        fraction: 0.7              # share of pods that ask for GPUs
        shareFraction: 0.4         # of those, share asking for part of one GPU (GPU sharing)
        milli: {dist: uniform, min: 100, max: 900}    # a sharing pod's milli-GPU
        count: {dist: choice, values: [1, 2, 4, 8], weights: [85, 5, 5, 5]}   # a whole-GPU pod's GPUs

The same spec and seed always give the same workload.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np

from kubesched.api.objects import Node, Pod
from kubesched.api.quantity import resource_value
from kubesched.documents import load_scalar, read_documents
from kubesched.errors import InputError, SourceReader, join_path
from kubesched.gpu.model import GPU_COUNT, GPU_MILLI, GPU_MODEL, MAX_GPUS_PER_NODE, MILLI
from kubesched.sim.workload import Workload

DEFAULT_SPEC: dict[str, Any] = {
    "nodes": [{"count": 16, "cpu": "32", "memory": "128Gi", "gpus": 8, "gpuModel": "V100"}],
    "pods": {
        "count": 1000,
        "arrivalRate": 0.05,
        "duration": {"dist": "exponential", "mean": 3600},
        "cpu": {"dist": "choice", "values": ["1", "2", "4", "8"], "weights": [4, 3, 2, 1]},
        "memory": {"dist": "choice", "values": ["2Gi", "4Gi", "8Gi", "16Gi"]},
        "gpu": {
            "fraction": 0.7,
            "shareFraction": 0.4,
            "milli": {"dist": "uniform", "min": 100, "max": 900},
            "count": {"dist": "choice", "values": [1, 2, 4, 8], "weights": [85, 5, 5, 5]},
        },
    },
}
NODE_KEYS = ("count", "cpu", "memory", "gpus", "gpuModel", "namePrefix")
#: Bounds that keep a spec within what one process simulates (kube-scheduler's own scalability
#: targets are 5,000 nodes and 150,000 pods).
MAX_NODES = 100_000
MAX_PODS = 1_000_000
MAX_CHOICES = 10_000
MAX_NUMBER = 1e9  # seconds, milli-GPUs, GPU counts: keeps virtual times finite
MIN_RATE, MAX_RATE = 1e-6, 1e6  # pods per second
MAX_AMOUNT = float(2**62)  # a drawn request (milli-CPU, bytes): far beyond any node, exact as a float
POD_KEYS = ("count", "arrivalRate", "duration", "cpu", "memory", "gpu", "namespace")
GPU_KEYS = ("fraction", "shareFraction", "milli", "count")
DISTS = {
    "constant": ("value",),
    "choice": ("values", "weights"),
    "uniform": ("min", "max"),
    "exponential": ("mean",),
    "lognormal": ("median", "sigma"),
    "none": (),
}


class _Spec(SourceReader):
    """Field access that names the file and the field path in every error."""

    def number(self, v: Any, path: str, *, lo: float = 0.0, lo_open: bool = False, hi: float | None = None) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise self.err(path, f'invalid value "{_shown(v)}": expected a number')
        if v < lo or (lo_open and v == lo) or (hi is not None and v > hi):
            bound = f"greater than {lo:g}" if lo_open else f"at least {lo:g}"
            if hi is not None:
                bound += f" and at most {hi:g}"
            raise self.err(path, f"invalid value {v}: must be {bound}")
        return float(v)

    def count(self, v: Any, path: str, maximum: int) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise self.err(path, f'invalid value "{_shown(v)}": expected a whole number, 0 or more')
        if v > maximum:
            raise self.err(path, f"invalid value {v}: at most {maximum:,}")
        return v

    def text(self, v: Any, path: str, default: str) -> str:
        if v is None:
            return default
        if not isinstance(v, str | int | float) or isinstance(v, bool):
            raise self.err(path, f"expected a string, got {type(v).__name__}")
        return str(v)

    def quantity(self, resource: str, v: Any, path: str, *, positive: bool = False) -> int:
        if isinstance(v, bool) or not isinstance(v, (str, int, float)):
            raise self.err(path, f'invalid value "{_shown(v)}": expected a quantity such as "4" or "16Gi"')
        try:
            amount = resource_value(resource, v, path)
        except InputError as e:
            raise self.err(path, e.reason) from None
        if amount < 0 or (positive and amount == 0):
            raise self.err(path, f'invalid value "{_shown(v)}": must be {"greater than 0" if positive else "0 or more"}')
        return amount


def _shown(v: Any) -> str:
    text = str(v)
    return text if len(text) <= 40 else text[:37] + "..."


class Dist:
    """A seeded distribution over base units (milli-CPU, bytes, seconds, milli-GPU, counts)."""

    def __init__(self, spec: _Spec, raw: Any, path: str, unit: str) -> None:
        if isinstance(raw, list):
            raise spec.err(path, "expected a value or a mapping with dist, got a list")
        if not isinstance(raw, dict):  # a bare value is a constant
            raw = {"dist": "constant", "value": raw}
        kind = raw.get("dist", "constant")
        if not isinstance(kind, str) or kind not in DISTS:
            raise spec.err(join_path(path, "dist"), f'unknown value "{_shown(kind)}" (known: {", ".join(DISTS)})')
        spec.mapping(raw, path, ("dist", *DISTS[kind]))
        self.kind = kind
        conv = self._converter(spec, unit)
        if kind == "constant":
            self.value = conv(raw.get("value"), join_path(path, "value"))
        elif kind == "choice":
            vals = raw.get("values")
            if not isinstance(vals, list) or not vals:
                raise spec.err(join_path(path, "values"), "expected a non-empty list")
            if len(vals) > MAX_CHOICES:
                raise spec.err(join_path(path, "values"), f"at most {MAX_CHOICES:,} values")
            self.values = np.asarray([conv(x, join_path(path, f"values[{i}]")) for i, x in enumerate(vals)], float)
            w = raw.get("weights")
            if w is None:
                self.weights = np.full(len(vals), 1.0 / len(vals))
            else:
                if not isinstance(w, list) or len(w) != len(vals):
                    raise spec.err(join_path(path, "weights"), f"expected a list of {len(vals)} numbers")
                ww = np.asarray([spec.number(x, join_path(path, f"weights[{i}]")) for i, x in enumerate(w)])
                if ww.sum() <= 0:
                    raise spec.err(join_path(path, "weights"), "weights must not all be 0")
                self.weights = ww / ww.sum()
        elif kind == "uniform":
            self.lo = conv(raw.get("min"), join_path(path, "min"))
            self.hi = conv(raw.get("max"), join_path(path, "max"))
            if self.hi < self.lo:
                raise spec.err(join_path(path, "max"), "must be at least min")
        elif kind == "exponential":
            self.mean = conv(raw.get("mean"), join_path(path, "mean"))
        elif kind == "lognormal":
            self.median = conv(raw.get("median"), join_path(path, "median"))
            self.sigma = spec.number(raw.get("sigma", 1.0), join_path(path, "sigma"), hi=10.0)

    @staticmethod
    def _converter(spec: _Spec, unit: str):  # noqa: ANN205 - a small local factory
        if unit in ("cpu", "memory"):
            return lambda v, p: float(spec.quantity(unit, v, p))
        return lambda v, p: spec.number(v, p, hi=MAX_NUMBER)

    def minimum(self) -> float:
        """The smallest value a draw can take (before rounding)."""
        if self.kind == "constant":
            return self.value
        if self.kind == "choice":
            return float(self.values[self.weights > 0].min())
        if self.kind == "uniform":
            return self.lo
        return 0.0

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray | None:
        if self.kind == "none":
            return None
        if self.kind == "constant":
            return np.full(n, self.value)
        if self.kind == "choice":
            return self.values[rng.choice(len(self.values), size=n, p=self.weights)]
        if self.kind == "uniform":
            return rng.uniform(self.lo, self.hi, n)
        if self.kind == "exponential":
            return rng.exponential(self.mean, n)
        return self.median * np.exp(self.sigma * rng.standard_normal(n))


def load_spec(path: str | None, overrides: list[str] | None = None) -> tuple[dict[str, Any], str]:
    """The spec (defaults when ``path`` is None or "default") with ``KEY.PATH=VALUE`` overrides."""
    if path in (None, "", "default"):
        spec, source = copy.deepcopy(DEFAULT_SPEC), "synthetic"
    else:
        docs = read_documents(path)
        if len(docs) > 1:
            raise InputError(f"expected one document, found {len(docs)}", source=path)
        spec = docs[0] if docs else {}
        if not isinstance(spec, dict):
            raise InputError("expected a mapping with nodes and pods", source=path)
        source = path
    for ov in overrides or []:
        key, sep, raw = ov.partition("=")
        if not sep or not key:
            raise InputError(f'--synth: invalid override "{ov}": expected KEY.PATH=VALUE, e.g. pods.count=500')
        _set_path(spec, key.split("."), load_scalar(raw), ov)
    return spec, source


def _set_path(doc: Any, parts: list[str], value: Any, original: str) -> None:
    cur = doc
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if isinstance(cur, list):
            if not part.isdigit() or int(part) >= len(cur):
                raise InputError(f'--synth: "{original}": no list item {part}')
            if last:
                cur[int(part)] = value
            else:
                cur = cur[int(part)]
        elif isinstance(cur, dict):
            if last:
                cur[part] = value
            else:
                cur = cur.setdefault(part, {})
        else:
            raise InputError(f'--synth: "{original}": {".".join(parts[:i])} is not a mapping or list')


def _nodes(s: _Spec, raw_nodes: Any) -> tuple[list[Node], int]:
    """The nodes of the spec's node shapes, and the most GPUs one of them has."""
    if isinstance(raw_nodes, dict):
        raw_nodes = [raw_nodes]
    if not isinstance(raw_nodes, list) or not raw_nodes:
        raise s.err("nodes", "expected a node shape or a non-empty list of them")
    nodes: list[Node] = []
    shapes = []
    total = 0
    for k, shape in enumerate(raw_nodes):
        path = f"nodes[{k}]"
        sh = s.mapping(shape, path, NODE_KEYS)
        count = s.count(sh.get("count", 1), join_path(path, "count"), MAX_NODES)
        total += count
        if total > MAX_NODES:
            raise s.err(join_path(path, "count"), f"the node shapes add up to more than {MAX_NODES:,} nodes")
        cpu = s.quantity("cpu", sh.get("cpu", "32"), join_path(path, "cpu"), positive=True)
        mem = s.quantity("memory", sh.get("memory", "128Gi"), join_path(path, "memory"), positive=True)
        gpus = s.count(sh.get("gpus", 0), join_path(path, "gpus"), MAX_GPUS_PER_NODE)
        model = s.text(sh.get("gpuModel"), join_path(path, "gpuModel"), "GPU" if gpus else "")
        prefix = s.text(sh.get("namePrefix"), join_path(path, "namePrefix"), f"node-{k}-")
        shapes.append((path, count, cpu, mem, gpus, model, prefix))
    if total == 0:
        raise s.err("nodes", "no nodes: every shape has count 0")
    for _path, count, cpu, mem, gpus, model, prefix in shapes:
        for j in range(count):
            alloc = {"cpu": f"{cpu}m", "memory": str(mem), "pods": "110"}
            labels = {"kubernetes.io/hostname": f"{prefix}{j}"}
            if gpus:
                alloc[GPU_COUNT] = str(gpus)
                alloc[GPU_MILLI] = str(gpus * MILLI)
                labels[GPU_MODEL] = model
            doc = {
                "kind": "Node",
                "metadata": {"name": f"{prefix}{j}", "uid": f"{prefix}{j}", "labels": labels},
                "status": {"allocatable": alloc, "capacity": alloc},
            }
            try:
                nodes.append(Node.parse(doc))
            except InputError as e:
                raise s.err(_path, e.reason) from None
    if len({n.name for n in nodes}) != len(nodes):
        raise s.err("nodes", "node names collide: give each shape its own namePrefix")
    return nodes, max(gpus for *_, gpus, _model, _prefix in shapes)


def generate(spec_doc: dict[str, Any], seed: int | None, source: str = "synthetic") -> Workload:
    """Nodes and pods drawn from the spec; equal spec and seed give an equal workload."""
    s = _Spec(source)
    root = s.mapping(spec_doc, "", ("nodes", "pods"))
    rng = np.random.default_rng(seed if seed is not None else 0)
    nodes, most_gpus = _nodes(s, root.get("nodes", DEFAULT_SPEC["nodes"]))
    pp = s.mapping(root.get("pods", {}), "pods", POD_KEYS)
    dflt = DEFAULT_SPEC["pods"]
    n = s.count(pp.get("count", dflt["count"]), "pods.count", MAX_PODS)
    rate = s.number(pp.get("arrivalRate", dflt["arrivalRate"]), "pods.arrivalRate", lo=MIN_RATE, hi=MAX_RATE)
    ns = s.text(pp.get("namespace"), "pods.namespace", "default")
    dur = Dist(s, pp.get("duration", dflt["duration"]), "pods.duration", "seconds")
    cpu_d = Dist(s, pp.get("cpu", dflt["cpu"]), "pods.cpu", "cpu")
    mem_d = Dist(s, pp.get("memory", dflt["memory"]), "pods.memory", "memory")
    g = s.mapping(pp.get("gpu", dflt["gpu"]), "pods.gpu", GPU_KEYS)
    gfrac = s.number(g.get("fraction", 0.0), "pods.gpu.fraction", hi=1.0)
    sfrac = s.number(g.get("shareFraction", 0.0), "pods.gpu.shareFraction", hi=1.0)
    milli_d = Dist(s, g.get("milli", dflt["gpu"]["milli"]), "pods.gpu.milli", "number")
    count_d = Dist(s, g.get("count", 1), "pods.gpu.count", "number")
    if gfrac > 0 and most_gpus == 0:
        # GPU pods could never be placed; each would be retried on every cluster change
        raise s.err("pods.gpu.fraction", f"{gfrac:g} of the pods ask for GPUs, but no node shape has gpus")
    if gfrac > 0 and sfrac < 1 and count_d.minimum() > most_gpus:
        raise s.err("pods.gpu.count", f"every whole-GPU pod asks for more GPUs than any node has ({most_gpus})")

    # every draw comes from one generator in a fixed order: same spec + seed = same workload
    arrival = np.cumsum(rng.exponential(1.0 / rate, n))
    durations = dur.sample(rng, n)
    # amounts up to the quantities' int64 clamp: clipped below 2^63 so that the cast cannot wrap
    cpus = np.clip(np.rint(cpu_d.sample(rng, n)), 1, MAX_AMOUNT).astype(np.int64)  # type: ignore[arg-type]
    mems = np.clip(np.rint(mem_d.sample(rng, n)), 1, MAX_AMOUNT).astype(np.int64)  # type: ignore[arg-type]
    is_gpu = rng.random(n) < gfrac
    is_share = rng.random(n) < sfrac
    millis = np.clip(np.rint(milli_d.sample(rng, n)), 1, MILLI - 1).astype(np.int64)  # type: ignore[arg-type]
    counts = np.maximum(1, np.rint(count_d.sample(rng, n))).astype(np.int64)  # type: ignore[arg-type]
    pods: list[Pod] = []
    for i in range(n):
        name = f"synth-{i:06d}"
        ann: dict[str, str] = {}
        if is_gpu[i]:
            if is_share[i]:
                ann = {GPU_COUNT: "1", GPU_MILLI: str(int(millis[i]))}
            else:
                ann = {GPU_COUNT: str(int(counts[i])), GPU_MILLI: str(MILLI)}
        req = {"cpu": f"{int(cpus[i])}m", "memory": str(int(mems[i]))}
        doc = {
            "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "uid": f"{ns}/{name}", "annotations": ann},
            "spec": {"containers": [{"name": "main", "resources": {"requests": req, "limits": req}}]},
        }
        pods.append(Pod.parse(doc))
    dlist: list[float | None] = [None] * n if durations is None else [max(float(d), 1e-3) for d in durations]
    return Workload(nodes, pods, [float(a) for a in arrival], dlist, source=f"synthetic ({source})")
