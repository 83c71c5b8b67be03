"""The openb trace (Alibaba cluster-trace-gpu-v2023) as Kubernetes Nodes and Pods.

Written the way the FGD paper's simulator writes its YAML: nodes get cpu, memory, ``pods: 1001``,
``alibabacloud.com/gpu-count``/``gpu-milli`` and the ``gpu-card-model`` label; pods get
requests = limits of cpu and memory and, when ``num_gpu > 0``, the GPU annotations. ``qos`` and
``pod_phase`` are read for validation only. Bad rows raise ``InputError`` naming
``file:line: field``; with ``skip_invalid`` they are skipped and listed in ``TracePods.skipped``.
"""

from __future__ import annotations

import csv
import gzip
import math
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from kubesched.api.objects import Node, Pod
from kubesched.api.quantity import INT64_MAX
from kubesched.api.selectors import parse_int64
from kubesched.errors import InputError
from kubesched.gpu.model import (
    GPU_COUNT,
    GPU_MILLI,
    GPU_MODEL,
    MAX_GPUS_PER_NODE,
    MILLI,
    node_gpu_count,
    node_gpu_model,
    pod_gpu_ask,
)

#: A decimal number in ASCII (what the trace's time columns hold): no "nan", "inf", "1_0".
_DECIMAL_RE = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
#: The largest memory_mib whose bytes fit the int64 resource amounts.
MAX_MEMORY_MIB = INT64_MAX >> 20


def _clip(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."

NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
NODE_REQUIRED = ("sn", "cpu_milli", "memory_mib", "gpu")
POD_COLUMNS = (
    "name",
    "cpu_milli",
    "memory_mib",
    "num_gpu",
    "gpu_milli",
    "gpu_spec",
    "qos",
    "pod_phase",
    "creation_time",
    "deletion_time",
    "scheduled_time",
)
POD_REQUIRED = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli")
MAX_PODS_PER_NODE = 1001
_UNREADABLE = (OSError, EOFError, UnicodeDecodeError, zlib.error)  # as the paper's node YAML: the pod count never binds


@dataclass
class TracePods:
    pods: list[Pod]  # file order
    creation_time: list[float]  # seconds; 0.0 where the file has no column
    deletion_time: list[float | None]  # None where missing or empty
    skipped: list[str]  # "file:line: field: reason" per row skipped on request
    lines: list[int] = field(default_factory=list)  # file line of each pod
    source: str = ""


class _Row:
    """One CSV row with its position, so every error names file, line and field."""

    __slots__ = ("source", "line", "cells")

    def __init__(self, source: str, line: int, cells: dict[str, str]) -> None:
        self.source, self.line, self.cells = source, line, cells

    def error(self, fld: str, reason: str) -> InputError:
        return InputError(reason, source=f"{self.source}:{self.line}", path=fld)

    def int(self, fld: str, *, minimum: int = 0, maximum: int = INT64_MAX) -> int:
        """A decimal integer (ASCII digits, as Go's strconv reads them) within the bounds."""
        raw = self.cells[fld].strip()
        v = parse_int64(raw)
        if v is None:
            raise self.error(fld, f'invalid integer "{_clip(raw)}"')
        if v < minimum:
            raise self.error(fld, f"must be at least {minimum}, got {v}")
        if v > maximum:
            raise self.error(fld, f"must be at most {maximum}, got {v}")
        return v

    def float(self, fld: str) -> float | None:
        raw = self.cells.get(fld, "").strip()
        if raw == "":
            return None
        if not _DECIMAL_RE.fullmatch(raw):
            raise self.error(fld, f'invalid number "{_clip(raw)}"')
        v = float(raw)
        if not math.isfinite(v) or v < 0:
            raise self.error(fld, f"must be a finite, non-negative number, got {_clip(raw)}")
        return v


def _rows(path: str | Path, known: tuple[str, ...], required: tuple[str, ...]):
    """Yield _Row per data line; header problems raise at once (they are not row problems)."""
    source = str(path)
    try:
        if str(path).endswith(".gz"):  # the shipped trace is gzipped
            f = gzip.open(path, "rt", newline="", encoding="utf-8")
        else:
            f = open(path, newline="", encoding="utf-8")  # noqa: SIM115 - closed below, generator
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or e}", source=source) from None
    with f:
        reader = csv.reader(f)
        try:
            header = next(reader)
        except StopIteration:
            raise InputError("empty file: expected a CSV header", source=source) from None
        except csv.Error as e:
            raise InputError(f"malformed CSV: {e}", source=f"{source}:1") from None
        except _UNREADABLE as e:
            raise InputError(f"cannot read: {e}", source=source) from None
        header = [h.strip() for h in header]
        for h in header:
            if h not in known:
                raise InputError(
                    f"unknown column (known: {', '.join(known)})", source=f"{source}:1", path=h or '""'
                )
        if len(set(header)) != len(header):
            dup = next(h for h in header if header.count(h) > 1)
            raise InputError("duplicate column", source=f"{source}:1", path=dup)
        for r in required:
            if r not in header:
                raise InputError("missing column", source=f"{source}:1", path=r)
        width = len(header)
        while True:
            try:
                cells = next(reader)
            except StopIteration:
                return
            except csv.Error as e:
                yield InputError(f"malformed CSV: {e}", source=f"{source}:{reader.line_num}")
                continue
            except _UNREADABLE as e:  # a corrupt .gz or bytes that are not UTF-8: nothing after is readable
                raise InputError(f"cannot read: {e}", source=f"{source}:{reader.line_num + 1}") from None
            line = reader.line_num
            if not cells or (len(cells) == 1 and not cells[0].strip()):
                continue  # blank line
            if len(cells) != width:
                yield InputError(
                    f"malformed row: {len(cells)} fields, the header has {width}", source=f"{source}:{line}"
                )
                continue
            yield _Row(source, line, dict(zip(header, cells, strict=True)))


def _node(row: _Row) -> Node:
    name = row.cells["sn"].strip()
    if not name:
        raise row.error("sn", "empty node name")
    cpu = row.int("cpu_milli")
    mem = row.int("memory_mib", maximum=MAX_MEMORY_MIB)
    if cpu <= 0:
        raise row.error("cpu_milli", "node without capacity: cpu_milli must be positive")
    if mem <= 0:
        raise row.error("memory_mib", "node without capacity: memory_mib must be positive")
    gpus = row.int("gpu", maximum=MAX_GPUS_PER_NODE)
    model = row.cells.get("model", "").strip()
    alloc = {"cpu": f"{cpu}m", "memory": f"{mem}Mi", "pods": str(MAX_PODS_PER_NODE)}
    labels = {"kubernetes.io/hostname": name}
    if gpus:
        alloc[GPU_COUNT] = str(gpus)
        alloc[GPU_MILLI] = str(gpus * MILLI)
    if model:
        labels[GPU_MODEL] = model
    return Node.parse(
        {
            "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": alloc, "capacity": dict(alloc)},
        }
    )


def read_nodes(path: str | Path) -> list[Node]:
    """openb node CSV (sn, cpu_milli, memory_mib, gpu, model) -> Nodes, in file order."""
    out: list[Node] = []
    seen: dict[str, int] = {}
    for row in _rows(path, NODE_COLUMNS, NODE_REQUIRED):
        if isinstance(row, InputError):
            raise row
        node = _node(row)
        if node.name in seen:
            raise row.error("sn", f'duplicate node name "{node.name}" (first on line {seen[node.name]})')
        seen[node.name] = row.line
        out.append(node)
    return out


def _pod_like(template: Pod, name: str, namespace: str, annotations: dict[str, str], raw: dict) -> Pod:
    """A copy of a parsed pod with another name and annotations (parsing every row is the slow part;
    pods with equal requests share their parsed, never mutated, fields)."""
    p = template.copy()
    p.name, p.namespace, p.uid = name, namespace, f"{namespace}/{name}"
    p.labels, p.annotations, p.raw = {}, annotations, raw  # copy() left the signature to be computed
    return p


def _pod(row: _Row, namespace: str, templates: dict[tuple[int, int], Pod]) -> tuple[Pod, float, float | None]:
    c = row.cells
    name = c["name"].strip()
    if not name:
        raise row.error("name", "empty pod name")
    cpu = row.int("cpu_milli")
    mem = row.int("memory_mib", maximum=MAX_MEMORY_MIB)
    num = row.int("num_gpu", maximum=MAX_GPUS_PER_NODE)
    milli = row.int("gpu_milli")
    spec = c.get("gpu_spec", "").strip()
    if num > 0 and milli == 0:
        raise row.error("gpu_milli", f"must be positive when num_gpu is {num}")
    if milli > MILLI:
        raise row.error("gpu_milli", f"at most {MILLI} (one GPU), got {milli}")
    if num > 1 and milli != MILLI:
        raise row.error("gpu_milli", f"must be {MILLI} when num_gpu is {num} (whole GPUs)")
    created = row.float("creation_time") if "creation_time" in c else 0.0
    if created is None:
        raise row.error("creation_time", "empty")
    deleted = row.float("deletion_time")
    if deleted is not None and deleted < created:
        raise row.error("deletion_time", f"before creation_time ({deleted} < {created})")
    row.float("scheduled_time")
    res = {"cpu": f"{cpu}m", "memory": f"{mem}Mi"}
    annotations = {}
    if num > 0:
        annotations = {GPU_MILLI: str(milli), GPU_COUNT: str(num)}
        if spec:
            annotations[GPU_MODEL] = spec
    raw = {
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": f"{namespace}/{name}",
            "annotations": annotations,
        },
        "spec": {"containers": [{"name": "main", "resources": {"requests": res, "limits": dict(res)}}]},
    }
    template = templates.get((cpu, mem))
    if template is None:
        template = templates[(cpu, mem)] = Pod.parse(raw)
    return _pod_like(template, name, namespace, dict(annotations), raw), created, deleted


def read_pods(path: str | Path, *, skip_invalid: bool = False, namespace: str = "default") -> TracePods:
    """openb pod CSV -> Pods (requests = limits; GPU annotations), creation and deletion times."""
    out = TracePods([], [], [], [], [], str(path))
    seen: dict[str, int] = {}
    templates: dict[tuple[int, int], Pod] = {}
    for row in _rows(path, POD_COLUMNS, POD_REQUIRED):
        try:
            if isinstance(row, InputError):
                raise row
            pod, created, deleted = _pod(row, namespace, templates)
            if pod.name in seen:
                raise row.error("name", f'duplicate pod name "{pod.name}" (first on line {seen[pod.name]})')
        except InputError as e:
            if not skip_invalid:
                raise
            out.skipped.append(str(e))
            continue
        seen[pod.name] = row.line
        out.pods.append(pod)
        out.creation_time.append(created)
        out.deletion_time.append(deleted)
        out.lines.append(row.line)
    return out


def check_fits(nodes: list[Node], trace: TracePods, *, skip_invalid: bool = False) -> TracePods:
    """Reject (or, with ``skip_invalid``, skip and list) pods asking for more GPUs than any node
    of an allowed card model has; returns the trace with those pods left out."""
    most: dict[str, int] = {}
    for nd in nodes:
        m = node_gpu_model(nd)
        most[m] = max(most.get(m, 0), node_gpu_count(nd))
    overall = max(most.values(), default=0)
    keep = TracePods([], [], [], list(trace.skipped), [], trace.source)
    for i, pod in enumerate(trace.pods):
        ask = pod_gpu_ask(pod)
        line = trace.lines[i] if i < len(trace.lines) else None
        if ask is not None:
            cap = max((most.get(m, 0) for m in ask.models), default=0) if ask.models else overall
            if ask.count > cap:
                where = f"{trace.source}:{line}" if line is not None else (trace.source or pod.key)
                models = f" of model {ask.spec}" if ask.models else ""
                err = InputError(
                    f"asks for {ask.count} GPUs but no node{models} has more than {cap}",
                    source=where,
                    path="num_gpu",
                )
                if not skip_invalid:
                    raise err
                keep.skipped.append(str(err))
                continue
        keep.pods.append(pod)
        keep.creation_time.append(trace.creation_time[i])
        keep.deletion_time.append(trace.deletion_time[i])
        if line is not None:
            keep.lines.append(line)
    return keep
