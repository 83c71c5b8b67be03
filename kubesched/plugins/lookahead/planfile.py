"""Reading a packing plan (``kubesched learn plan``'s JSON) as data: every field checked, one
line naming the file and the field on anything wrong."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kubesched.api.objects import Node
from kubesched.api.resources import CPU
from kubesched.errors import InputError, join_path
from kubesched.gpu.model import node_gpu_count, node_gpu_model
from kubesched.plugins.lookahead.jsonfile import load_json

FORMAT, VERSION = "kubesched-plan", 1
MAX_BYTES = 16 * 1024 * 1024


def node_type_key(node: Node) -> tuple[int, int, str]:
    """A node's type as a plan names it: (allocatable milli-CPU, GPUs, card model)."""
    return (int(node.allocatable.get(CPU, 0)), node_gpu_count(node), node_gpu_model(node))


@dataclass(frozen=True)
class PlanTable:
    """A plan as arrays. ``shape_of`` maps (milli-CPU, GPU milli, GPU count, model spec) to a shape
    index; ``configs`` is (configurations, shapes + 1) counts, the last column (pods of no known
    shape) always 0; ``ctype`` each configuration's node type; ``weight`` its LP node count."""

    shape_of: dict[tuple[int, int, int, str], int]
    type_of: dict[tuple[int, int, str], int]
    configs: np.ndarray
    ctype: np.ndarray
    weight: np.ndarray
    meta: dict[str, Any]

    @property
    def shapes(self) -> int:
        return self.configs.shape[1] - 1


def _int(v: Any, path: str, low: int = 0) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < low:
        raise InputError(f"expected an integer >= {low}, got {v!r}", path=path)
    return v


def _list(doc: dict, key: str) -> list:
    v = doc.get(key)
    if not isinstance(v, list) or not v:
        raise InputError("expected a non-empty list", path=key)
    return v


def _obj(v: Any, path: str) -> dict:
    if not isinstance(v, dict):
        raise InputError(f"expected an object, got {type(v).__name__}", path=path)
    return v


def parse_plan(doc: Any) -> PlanTable:
    doc = _obj(doc, "")
    if doc.get("format") != FORMAT or doc.get("version") != VERSION:
        raise InputError(f"not a plan (expected format {FORMAT!r}, version {VERSION})", path="format")
    shape_of: dict[tuple[int, int, int, str], int] = {}
    for i, sh in enumerate(_list(doc, "shapes")):
        p = join_path("shapes", i)
        sh = _obj(sh, p)
        model = sh.get("gpuModel", "")
        if not isinstance(model, str):
            raise InputError("expected a string", path=join_path(p, "gpuModel"))
        key = (_int(sh.get("milliCpu"), join_path(p, "milliCpu")), _int(sh.get("milliGpu"), join_path(p, "milliGpu")),
               _int(sh.get("gpuCount"), join_path(p, "gpuCount")), model)
        shape_of.setdefault(key, i)
    n_shapes = len(doc["shapes"])
    type_of: dict[tuple[int, int, str], int] = {}
    for i, t in enumerate(_list(doc, "nodeTypes")):
        p = join_path("nodeTypes", i)
        t = _obj(t, p)
        model = t.get("model", "")
        if not isinstance(model, str):
            raise InputError("expected a string", path=join_path(p, "model"))
        type_of[(_int(t.get("milliCpu"), join_path(p, "milliCpu")), _int(t.get("gpus"), join_path(p, "gpus")), model)] = i
    n_types = len(doc["nodeTypes"])
    confs = _list(doc, "configurations")
    configs = np.zeros((len(confs), n_shapes + 1), np.int32)
    ctype = np.zeros(len(confs), np.int32)
    weight = np.zeros(len(confs), np.float64)
    for c, conf in enumerate(confs):
        p = join_path("configurations", c)
        conf = _obj(conf, p)
        j = _int(conf.get("type"), join_path(p, "type"))
        if j >= n_types:
            raise InputError(f"no node type {j} (the plan has {n_types})", path=join_path(p, "type"))
        w = conf.get("nodes")
        if isinstance(w, bool) or not isinstance(w, int | float) or not 0 < w < float("inf"):
            raise InputError(f"expected a positive number, got {w!r}", path=join_path(p, "nodes"))
        pods = _obj(conf.get("pods"), join_path(p, "pods"))
        for k, v in pods.items():
            if not (isinstance(k, str) and k.isdigit() and int(k) < n_shapes):
                raise InputError(f"no shape {k!r} (the plan has {n_shapes})", path=join_path(p, "pods"))
            configs[c, int(k)] = _int(v, join_path(join_path(p, "pods"), k))
        ctype[c], weight[c] = j, float(w)
    meta = doc.get("meta", {})
    return PlanTable(shape_of, type_of, configs, ctype, weight, meta if isinstance(meta, dict) else {})


def load_plan(path: str | Path) -> PlanTable:
    """The plan in ``path``; an InputError naming the file (and the field) on anything wrong."""
    return load_json(path, parse_plan, MAX_BYTES)
