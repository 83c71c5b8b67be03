"""The four GPU scores LearnedScore also reads as features (BestFitScore, DotProductScore,
GpuClusteringScore, GpuPackingScore): one module holds each formula, twice written but side by side
and tested equal: over numpy rows (many nodes) and per node in plain Python (a handful of rows,
where one numpy call costs more than a row's arithmetic: about 8-10 k instructions whatever the
size). The plugins take the Python form for up to ``FEW_ROWS`` rows, the numpy one above; the
Python form's floats are the numpy form's bit for bit (the same IEEE operations in the same order,
``int`` truncating as ``astype(np.int64)``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kubesched.framework.interfaces import MAX_NODE_SCORE, go_div
from kubesched.gpu.model import MAX_SPEC_CPU, MAX_SPEC_GPU, MILLI, GpuAsk
from kubesched.gpu.state import SHARE_TAG

if TYPE_CHECKING:
    from kubesched.gpu.state import GpuState

#: up to this many rows the plugins score in plain Python
FEW_ROWS = 32

_HALF_CPU, _HALF_GPU = 2.0 * MAX_SPEC_CPU, 2.0 * MAX_SPEC_GPU  # x / m * 0.5 == x / (2 m) exactly


# ---- BestFitScore: raw = int(100 (1 - [(cpuLeft - cpu)/128000 * 0.5 + (gpuLeft - gpu)/8000 * 0.5]))
def bestfit_array(cl: np.ndarray, gl: np.ndarray, c: float, g: float) -> np.ndarray:
    cl, gl = cl.astype(np.float64), gl.astype(np.float64)
    s = (cl - c) / _HALF_CPU + (gl - g) / _HALF_GPU
    raw = ((1.0 - s) * 100.0).astype(np.int64)
    return np.where((cl < c) | (gl < g), 0, raw)


def bestfit_rows(cl: list[int], gl: list[int], c: float, g: float) -> list[int]:
    return [0 if x < c or y < g else int((1.0 - ((x - c) / _HALF_CPU + (y - g) / _HALF_GPU)) * 100.0)
            for x, y in zip(cl, gl, strict=True)]


# ---- DotProductScore: int(100 (1 - dot/2)), dot = (cpuLeft/128000)(cpu/128000) + (gpuLeft/8000)(gpu/8000)
def dotprod_array(cl: np.ndarray, gl: np.ndarray, c: float, g: float) -> np.ndarray:
    cl = cl.astype(np.float64)
    dot = (cl / MAX_SPEC_CPU) * (c / MAX_SPEC_CPU) + (gl / MAX_SPEC_GPU) * (g / MAX_SPEC_GPU)
    score = (100.0 * (1.0 - dot / 2.0)).astype(np.int64)
    # np.minimum(np.maximum()) is np.clip on integers, without its Python-level argument checks
    return np.where(cl < c, 0, np.minimum(np.maximum(score, 0), 100)).astype(np.int64)


def dotprod_rows(cl: list[int], gl: list[int], c: float, g: float) -> list[int]:
    cc, gg = c / MAX_SPEC_CPU, g / MAX_SPEC_GPU
    out = []
    for x, y in zip(cl, gl, strict=True):
        v = int(100.0 * (1.0 - ((x / MAX_SPEC_CPU) * cc + (y / MAX_SPEC_GPU) * gg) / 2.0))
        out.append(0 if x < c or v < 0 else (v if v <= 100 else 100))
    return out


# ---- GpuClusteringScore: int(25 (8000 - gpuLeft) / 8000) + 75 (only the pod's kind), 50 (its kind
# among others), 25 (no GPU pod), 0 (only other kinds)
def clustering_array(aff: np.ndarray, gl: np.ndarray, ask: GpuAsk) -> np.ndarray:
    tag = SHARE_TAG if ask.sharing else ask.count
    same = aff[:, tag] > 0 if tag < aff.shape[1] else np.zeros(len(aff), bool)
    kinds = (aff > 0).sum(axis=1)
    base = go_div((MAX_NODE_SCORE // 4) * (MAX_SPEC_GPU - gl), MAX_SPEC_GPU)
    bonus = np.where(same, np.where(kinds == 1, 75, 50), np.where(kinds == 0, 25, 0))
    return (base + bonus).astype(np.int64)


def clustering_rows(aff: list[list[int]], gl: list[int], ask: GpuAsk) -> list[int]:
    tag = SHARE_TAG if ask.sharing else ask.count
    out = []
    for row, y in zip(aff, gl, strict=True):
        kinds = len(row) - row.count(0)  # pod counts are never negative: > 0 is != 0
        a = (MAX_NODE_SCORE // 4) * (MAX_SPEC_GPU - y)
        base = -(-a // MAX_SPEC_GPU) if a < 0 else a // MAX_SPEC_GPU  # toward zero, as go_div
        if tag < len(row) and row[tag] > 0:
            out.append(base + (75 if kinds == 1 else 50))
        else:
            out.append(base + (25 if kinds == 0 else 0))
    return out


# ---- GpuPackingScore: share a used GPU > use free GPUs of a used node > open a fresh node
def packing_array(left: np.ndarray, count: np.ndarray, milli: int, num: int) -> np.ndarray:
    """Per node row of ``left`` (padded with 0 beyond ``count`` GPUs); 0 where the pod cannot fit."""
    ff = (left == MILLI).sum(axis=1)
    srt = np.sort(left, axis=1)
    ok = srt >= milli
    taken = ok & (np.cumsum(ok, axis=1) <= num)
    fits = taken.sum(axis=1) == num
    free_used = (taken & (srt == MILLI)).sum(axis=1)
    ratio = np.where(taken, srt * 100 // MILLI, 0).sum(axis=1)
    case1 = np.maximum(100 - ratio // 10, 50)
    case2 = np.maximum(50 - free_used, 33)
    case3 = np.maximum(33 - ff, ff)
    out = np.where(ff == count, case3, np.where(free_used > 0, case2, case1))
    return np.where((ff == count) | fits, out, 0).astype(np.int64)


def packing_rows(left: list[list[int]], count: list[int], milli: int, num: int) -> list[int]:
    out = []
    for row, n in zip(left, count, strict=True):
        ff = row.count(MILLI)
        if ff == n:  # every GPU free: smaller fresh nodes first
            out.append(max(33 - ff, ff))
            continue
        taken = [v for v in sorted(row) if v >= milli][:num]  # ascending milli left, with room
        if len(taken) != num:
            out.append(0)
            continue
        free_used = taken.count(MILLI)
        if free_used:
            out.append(max(50 - free_used, 33))
        else:
            out.append(max(100 - sum(v * 100 // MILLI for v in taken) // 10, 50))
    return out


def few(rows: np.ndarray) -> bool:
    return len(rows) <= FEW_ROWS


def packing(st: GpuState, rows: np.ndarray, ask: GpuAsk) -> np.ndarray:
    if few(rows):
        return np.array(packing_rows(st.left[rows].tolist(), st.count[rows].tolist(), ask.milli, ask.count), np.int64)
    return packing_array(st.left[rows], st.count[rows], ask.milli, ask.count)


def clustering(st: GpuState, rows: np.ndarray, ask: GpuAsk) -> np.ndarray:
    if few(rows):
        return np.array(clustering_rows(st.affinity[rows].tolist(), st.total[rows].tolist(), ask), np.int64)
    return clustering_array(st.affinity[rows], st.total[rows], ask)
