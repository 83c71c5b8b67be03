"""GPU fragmentation against a target workload (FGD, Weng et al., ATC'23), vectorised over nodes.

For a node with GPUs ``L`` (milli left each), CPU left ``C`` and card model ``md``, and a typical
pod m = (cpu, milli, count, models) with popularity p_m:

    F_n(m) = R_n = sum(L)                 if m asks for no GPU, cannot use model md, or does not fit
                                          (fewer than count GPUs with L >= milli, or C < cpu)
           = sum(L_g for L_g < milli)     otherwise (the GPUs too small for m)
    F_n(M) = sum_m p_m F_n(m)

Every F_n(m) is an integer, so a change of state is scored exactly from the integer differences
(``sum_m p_m (F_n(m) - F_n'(m))``): identical states give a delta of exactly 0.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.gpu.model import GpuAsk, parse_models, pod_gpu_ask

# the ufunc's own reduction: ndarray.sum goes through a Python wrapper, and the stats are taken
# for every pod (the metrics after each one, FGDScore on the rows it changed)
_SUM = np.add.reduce

if TYPE_CHECKING:
    from kubesched.api.objects import Pod

POPULARITY_THRESHOLD = 95  # percent of pods the typical specs must cover (the paper's setting)


@dataclass(frozen=True)
class TypicalPods:
    """The target workload M: pod specs and their popularity (sums to 1 after the cut)."""

    cpu: np.ndarray  # (M,) milli-CPU
    milli: np.ndarray  # (M,) milli of one GPU; 0 for CPU-only specs
    count: np.ndarray  # (M,) GPUs
    spec: tuple[str, ...]  # gpu-card-model constraint as written ("" = any)
    p: np.ndarray  # (M,) float popularity
    coverage: float = 1.0  # share of the source pods the kept specs cover

    def __len__(self) -> int:
        return len(self.spec)

    @classmethod
    def from_specs(
        cls, specs: Sequence[tuple[int, int, int, str, float]], coverage: float = 1.0
    ) -> TypicalPods:
        """(milli-CPU, milli-GPU, GPU count, model spec, popularity) tuples."""
        return cls(
            np.array([s[0] for s in specs], np.int64),
            np.array([s[1] if s[2] > 0 else 0 for s in specs], np.int64),
            np.array([s[2] if s[1] > 0 else 0 for s in specs], np.int64),
            tuple(s[3] for s in specs),
            np.array([s[4] for s in specs], np.float64),
            coverage,
        )

    def to_args(self) -> list[dict[str, Any]]:
        """The ``typicalPods`` list of FGDScoreArgs that rebuilds these specs."""
        return [
            {
                "milliCpu": int(c),
                "milliGpu": int(g),
                "gpuCount": int(n),
                "gpuModel": s,
                "percentage": float(p),
            }
            for c, g, n, s, p in zip(self.cpu, self.milli, self.count, self.spec, self.p, strict=True)
        ]

    def access(self, models: Sequence[str]) -> np.ndarray:
        """(M, len(models)) bool: may spec m use card model j (model "" = a node without GPUs)."""
        out = np.ones((len(self), len(models)), bool)
        for m, spec in enumerate(self.spec):
            allowed = parse_models(spec)
            if allowed:
                out[m] = [md in allowed for md in models]
        return out


def typical_pods(
    asks: Iterable[tuple[int, GpuAsk | None]], threshold: float = POPULARITY_THRESHOLD
) -> TypicalPods:
    """The most popular (cpu, milli, count, model spec) keys covering >= threshold % of the pods.

    ``asks`` are (milli-CPU, GPU ask) per pod of the original (un-inflated) trace; CPU-only pods
    count. Ties in popularity go to the larger (cpu, milli, count, spec), as the paper's
    simulator sorts; the kept specs' popularity is renormalised to sum to 1.
    """
    counts: Counter[tuple[int, int, int, str]] = Counter()
    for cpu, ask in asks:
        key = (cpu, 0, 0, "") if ask is None else (cpu, ask.milli, ask.count, ask.spec)
        counts[key] += 1
    total = sum(counts.values())
    if total == 0:
        raise ValueError("no pods to derive typical pods from")
    ranked = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    need = threshold * total / 100.0
    kept: list[tuple[tuple[int, int, int, str], int]] = []
    cum = 0
    for key, cnt in ranked:
        if cum >= need:
            break
        kept.append((key, cnt))
        cum += cnt
    share = cum / total
    specs = [(k[0], k[1], k[2], k[3], (c / total) / share) for k, c in kept]
    return TypicalPods.from_specs(specs, coverage=share)


def typical_pods_of(pods: Iterable[Pod], threshold: float = POPULARITY_THRESHOLD) -> TypicalPods:
    """Typical pods of a pod list (CPU as scores count it: non-zero default for none)."""
    return typical_pods(((int(p.non_zero_cpu), pod_gpu_ask(p)) for p in pods), threshold)


class FragModel:
    """Typical pods prepared against a list of card models (codes as in ``GpuState.models``)."""

    def __init__(self, typical: TypicalPods, models: Sequence[str]) -> None:
        self.typical = typical
        self.models = list(models)
        self.acc = typical.access(self.models)  # (M, n_models)
        self.cpu = typical.cpu
        self.count = typical.count
        self.p = typical.p
        self.gpu = typical.milli > 0
        # Distinct milli thresholds: counts and sums below are computed once per threshold.
        self.kvals, self.kidx = np.unique(np.where(self.gpu, typical.milli, 1), return_inverse=True)
        # F_n(M) of one node depends on its CPU left only through which typical pods' CPU fits:
        # memoised per (GPUs left, that count, model) for the row-by-row updates.
        self._cpu_steps: list[int] = sorted(set(np.asarray(self.cpu).tolist()))
        self._memo: dict[tuple[tuple[int, ...], int, int], float] = {}
        # per (model, CPU band): the typical pods that may use the model and whose CPU fits
        self._base: dict[tuple[int, int], np.ndarray] = {}

    def stats(self, left: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per node state: (#GPUs with L >= k, sum of L < k) per distinct k, and total left R."""
        ge = left[:, :, None] >= self.kvals[None, None, :]
        cnt = _SUM(ge, 1)
        small = _SUM(np.where(ge, 0, left[:, :, None]), 1)
        return cnt, small, _SUM(left, 1)

    def per_pod(
        self, cnt: np.ndarray, small: np.ndarray, total: np.ndarray, cpu_left: np.ndarray, model: np.ndarray
    ) -> np.ndarray:
        """(P, M) int64 F_n(m) from the per-threshold stats."""
        fits = (
            self.gpu[None, :]
            & self.acc[:, model].T
            & (cnt[:, self.kidx] >= self.count[None, :])
            & (cpu_left[:, None] >= self.cpu[None, :])
        )
        return np.where(fits, small[:, self.kidx], total[:, None])

    def amount(self, left: np.ndarray, cpu_left: np.ndarray, model: np.ndarray) -> np.ndarray:
        """F_n(M) per node (float milli-GPU)."""
        if left.shape[0] == 0:
            return np.zeros(0)
        cnt, small, total = self.stats(left)
        return self.per_pod(cnt, small, total, cpu_left, model) @ self.p

    def node_amount(self, left: list[int], cpu_left: int, model: int) -> float:
        """``amount`` of one node (its GPUs' milli left, CPU left, model code), memoised: the
        same number ``amount`` gives, computed by it the first time."""
        # F_n reads the GPUs as a multiset (counts and sums per threshold): a sorted key
        band = bisect_right(self._cpu_steps, cpu_left)
        key = (tuple(sorted(left)), band, model)
        v = self._memo.get(key)
        if v is None:
            v = self._one(np.asarray(left, np.int64), band, model)
            if len(self._memo) > 100_000:
                self._memo.clear()
            self._memo[key] = v
        return v

    def _one(self, left: np.ndarray, band: int, model: int) -> float:
        """``amount`` of one node, in fewer steps: the model and CPU masks are kept per (model,
        CPU band), and the sum is the same (1, M) @ (M,) product, so the float is identical."""
        base = self._base.get((model, band))
        if base is None:
            fits_cpu = self.cpu <= self._cpu_steps[band - 1] if band else np.zeros(len(self.cpu), bool)
            base = self._base[(model, band)] = self.gpu & self.acc[:, model] & fits_cpu
        ge = left[:, None] >= self.kvals[None, :]
        cnt = _SUM(ge, 0)
        small = _SUM(np.where(ge, 0, left[:, None]), 0)
        fits = base & (cnt[self.kidx] >= self.count)
        vals = np.where(fits, small[self.kidx], _SUM(left))
        return float((vals[None, :] @ self.p)[0])

    def moved(
        self,
        cnt: np.ndarray,
        small: np.ndarray,
        total: np.ndarray,
        old: np.ndarray,
        new: np.ndarray,
        n: np.ndarray | int,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Stats after ``n`` GPUs go from ``old`` to ``new`` milli left (per row arrays)."""
        k = self.kvals[None, :]
        o, w = np.asarray(old)[:, None], np.asarray(new)[:, None]
        per_row = np.ndim(n) > 0
        nn = np.asarray(n)[:, None] if per_row else n
        cnt2 = cnt - nn * (o >= k) + nn * (w >= k)
        small2 = small - nn * np.where(o < k, o, 0) + nn * np.where(w < k, w, 0)
        total2 = total + (np.asarray(new) - np.asarray(old)) * (np.asarray(n) if per_row else n)
        return cnt2, small2, total2


DELTA_SCALE = 1000.0  # the paper's divisor: one score point is ~40 milli of delta near 0


def sigmoid_score(delta: np.ndarray, scale: float = DELTA_SCALE) -> np.ndarray:
    """FGD's node score: int(100 * sigmoid(delta / scale)), delta = F before - F after (milli)."""
    return ((1.0 / (1.0 + np.exp(-(delta / scale)))) * 100.0).astype(np.int64)
