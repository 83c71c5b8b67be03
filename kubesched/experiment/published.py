"""The FGD paper's published numbers, as committed with its simulator.

Source: Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation
Gradient Descent", USENIX ATC '23. Numbers from the artifact's expected results,
github.com/hkust-adsl/kubernetes-scheduler-simulator @ 8f3d6417353c5083c6d56617f255fadd8dc306bc,
``experiments/analysis/expected_results/analysis_{allo,frag,frag_ratio}_discrete.csv`` (6 policies x
17 traces x tune seeds 42..51, tune 1.3), as summarised in docs/fgd-protocol.md §4.1-§4.3.
All values are percent of the cluster's 6212 GPUs (frag ratio: percent of idle GPU).
"""

from __future__ import annotations

from dataclasses import dataclass

SOURCE = (
    "Weng et al., USENIX ATC '23 (FGD); artifact hkust-adsl/kubernetes-scheduler-simulator @ 8f3d641, "
    "experiments/analysis/expected_results/analysis_*_discrete.csv (10 seeds, tune 1.3)"
)
N_SEEDS = 10
POLICIES: tuple[str, ...] = ("Random", "DotProd", "GpuClustering", "GpuPacking", "BestFit", "FGD")

#: §4.1: default trace, unallocated GPU % (mean over 10 seeds) per arrived-workload level.
DEFAULT_CURVE: dict[str, dict[int, float]] = {
    "Random": {90: 14.98, 95: 14.28, 100: 13.70, 110: 13.12, 120: 12.72, 130: 12.53},
    "DotProd": {90: 10.02, 95: 9.42, 100: 9.38, 110: 9.30, 120: 9.24, 130: 9.15},
    "GpuClustering": {90: 10.02, 95: 8.40, 100: 8.35, 110: 8.27, 120: 8.20, 130: 8.12},
    "GpuPacking": {90: 10.02, 95: 8.26, 100: 8.22, 110: 8.15, 120: 8.08, 130: 8.00},
    "BestFit": {90: 10.01, 95: 7.18, 100: 7.14, 110: 7.07, 120: 7.00, 130: 6.92},
    "FGD": {90: 10.02, 95: 5.09, 100: 4.77, 110: 4.70, 120: 4.65, 130: 4.61},
}
#: §4.1: default trace at 100 %: median and 10-seed range (min, max).
DEFAULT_MEDIAN_100: dict[str, float] = {
    "Random": 13.75, "DotProd": 9.44, "GpuClustering": 8.42, "GpuPacking": 8.19, "BestFit": 7.09, "FGD": 4.77,
}
DEFAULT_RANGE_100: dict[str, tuple[float, float]] = {
    "Random": (13.21, 14.13),
    "DotProd": (9.00, 9.66),
    "GpuClustering": (7.25, 9.38),
    "GpuPacking": (7.42, 8.93),
    "BestFit": (6.96, 7.36),
    "FGD": (4.62, 4.94),
}


def _row(*pairs: tuple[float, float]) -> dict[str, tuple[float, float]]:
    return dict(zip(POLICIES, pairs, strict=True))


#: §4.2 (Figs 11-14): unallocated GPU % at arrived = 100 %, (mean, sd) over 10 seeds.
BARS_100: dict[str, dict[str, tuple[float, float]]] = {
    "default": _row((13.70, 0.33), (9.38, 0.19), (8.35, 0.61), (8.22, 0.53), (7.14, 0.14), (4.77, 0.11)),
    "cpu050": _row((10.98, 0.26), (6.97, 0.19), (6.48, 0.34), (6.54, 0.32), (6.44, 0.13), (5.00, 0.11)),
    "cpu100": _row((12.56, 0.28), (8.27, 0.27), (7.59, 0.40), (7.50, 0.42), (6.74, 0.13), (4.79, 0.14)),
    "cpu200": _row((16.97, 0.27), (12.54, 0.61), (10.33, 0.38), (10.02, 0.48), (7.85, 0.21), (5.18, 0.16)),
    "cpu250": _row((20.00, 0.33), (16.43, 0.45), (12.25, 0.61), (11.95, 0.68), (8.79, 0.25), (6.80, 0.29)),
    "gpushare40": _row((15.14, 0.34), (10.70, 0.14), (10.24, 0.62), (10.23, 0.53), (8.56, 0.20), (6.04, 0.07)),
    "gpushare60": _row((17.19, 0.35), (13.18, 0.28), (13.10, 0.41), (12.85, 0.37), (10.94, 0.18), (8.75, 0.13)),
    "gpushare80": _row((19.38, 0.28), (15.86, 0.19), (15.50, 0.54), (15.35, 0.50), (13.34, 0.24), (10.92, 0.11)),
    "gpushare100": _row((21.10, 0.15), (18.02, 0.30), (17.78, 0.51), (17.87, 0.50), (15.38, 0.22), (13.36, 0.16)),
    "multigpu20": _row((13.08, 0.52), (8.15, 0.32), (6.66, 0.60), (6.50, 0.64), (6.27, 0.25), (4.47, 0.16)),
    "multigpu30": _row((13.37, 0.47), (6.89, 0.31), (5.45, 0.32), (5.30, 0.32), (5.43, 0.24), (3.64, 0.10)),
    "multigpu40": _row((14.62, 0.76), (5.96, 0.22), (4.65, 0.30), (4.41, 0.31), (4.90, 0.23), (3.09, 0.10)),
    "multigpu50": _row((18.72, 0.83), (5.27, 0.20), (4.31, 0.28), (3.94, 0.31), (4.38, 0.18), (2.91, 0.11)),
    "gpuspec10": _row((13.74, 0.25), (9.83, 0.39), (8.04, 0.71), (7.76, 0.65), (6.90, 0.21), (5.34, 0.19)),
    "gpuspec20": _row((14.10, 0.35), (11.71, 0.17), (10.89, 0.21), (10.72, 0.25), (11.54, 0.12), (5.34, 0.13)),
    "gpuspec25": _row((14.58, 0.34), (14.56, 0.16), (13.59, 0.29), (13.23, 0.35), (14.33, 0.20), (6.09, 0.11)),
    "gpuspec33": _row((16.13, 0.26), (20.18, 0.25), (18.91, 0.22), (17.78, 0.39), (19.60, 0.27), (12.16, 0.18)),
}
#: §4.2: gpuspec33 at 130 % (means only): the gpuspec curves are steep around 100 %.
GPUSPEC33_130: dict[str, float] = {
    "Random": 13.54, "DotProd": 10.86, "GpuClustering": 7.88, "GpuPacking": 6.78, "BestFit": 6.91, "FGD": 5.45,
}

#: §4.3 (Fig 7): default trace, fragmentation amount (% of GPU capacity), mean over seeds.
FRAG_AMOUNT_DEFAULT: dict[str, dict[int, float]] = {
    "Random": {0: 13.97, 50: 15.10, 70: 15.90, 80: 15.92, 90: 14.48, 100: 13.49},
    "DotProd": {0: 14.08, 50: 12.09, 70: 10.78, 80: 10.09, 90: 9.43, 100: 9.30},
    "GpuClustering": {0: 13.92, 50: 12.11, 70: 10.27, 80: 9.36, 90: 8.44, 100: 8.22},
    "GpuPacking": {0: 13.93, 50: 12.01, 70: 10.18, 80: 9.28, 90: 8.37, 100: 8.13},
    "BestFit": {0: 14.04, 50: 10.81, 70: 9.13, 80: 8.29, 90: 7.41, 100: 7.06},
    "FGD": {0: 13.88, 50: 8.93, 70: 6.95, 80: 5.97, 90: 5.00, 100: 4.73},
}
#: §4.3 (Fig 7): default trace, fragmentation ratio (% of idle GPU), mean over seeds.
FRAG_RATIO_DEFAULT: dict[str, dict[int, float]] = {
    "Random": {50: 30.17, 70: 51.63, 80: 74.64, 90: 96.65},
    "DotProd": {50: 24.19, 70: 35.92, 80: 50.50, 90: 94.18},
    "GpuClustering": {50: 24.23, 70: 34.23, 80: 46.86, 90: 84.33},
    "GpuPacking": {50: 24.02, 70: 33.95, 80: 46.43, 90: 83.60},
    "BestFit": {50: 21.62, 70: 30.44, 80: 41.49, 90: 74.08},
    "FGD": {50: 17.86, 70: 23.17, 80: 29.86, 90: 49.97},
}


@dataclass(frozen=True)
class Published:
    """One published point: mean over ``n`` seeds, with sd/median/range where the source has them."""

    mean: float
    sd: float | None = None
    median: float | None = None
    low: float | None = None
    high: float | None = None
    n: int = N_SEEDS


def unallocated(trace: str, policy: str, level: int) -> Published | None:
    """The published unallocated GPU % of (trace, policy) at an arrived level, if there is one."""
    if trace == "default" and level == 100:
        mean, sd = BARS_100["default"][policy]
        lo, hi = DEFAULT_RANGE_100[policy]
        return Published(mean, sd, DEFAULT_MEDIAN_100[policy], lo, hi)
    if trace == "default" and level in DEFAULT_CURVE[policy]:
        return Published(DEFAULT_CURVE[policy][level])
    if trace == "gpuspec33" and level == 130:
        return Published(GPUSPEC33_130[policy])
    if level == 100 and trace in BARS_100:
        mean, sd = BARS_100[trace][policy]
        return Published(mean, sd)
    return None


def curve_points(trace: str, policy: str) -> dict[int, float]:
    """Every published unallocated-% mean of (trace, policy), by level (for figure markers)."""
    if trace == "default":
        return dict(DEFAULT_CURVE[policy])
    out: dict[int, float] = {}
    if trace in BARS_100:
        out[100] = BARS_100[trace][policy][0]
    if trace == "gpuspec33":
        out[130] = GPUSPEC33_130[policy]
    return out
