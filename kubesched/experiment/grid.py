"""The experiment grid: which traces, policies and seeds, parsed from the command line.

Every parse error is an ``InputError`` naming the flag, so the CLI prints one line and exits 2.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kubesched.errors import InputError
from kubesched.experiment.published import POLICIES
from kubesched.trace.bundled import csv_in, trace_names

NODE_STEM = "openb_node_list_gpu_node"  # the paper uses only the 1213 GPU nodes (protocol §1.1)
NODE_FILE = f"{NODE_STEM}.csv"
POD_STEM = "openb_pod_list_{}"

#: trace families as the paper groups them (Figs 11-14), in plotting order
FAMILIES: dict[str, tuple[str, ...]] = {
    "default": ("default",),
    "gpushare": ("gpushare40", "gpushare60", "gpushare80", "gpushare100"),  # Fig 11
    "multigpu": ("multigpu20", "multigpu30", "multigpu40", "multigpu50"),  # Fig 12
    "gpuspec": ("gpuspec10", "gpuspec20", "gpuspec25", "gpuspec33"),  # Fig 13
    "cpu": ("cpu050", "cpu100", "cpu200", "cpu250"),  # Fig 14
}
#: the paper's 17 traces ("all")
PAPER_TRACES: tuple[str, ...] = tuple(t for fam in FAMILIES.values() for t in fam)
DEFAULT_SEEDS = "42-51"
MAX_SEEDS = 10_000


def family_of(trace: str) -> str:
    for fam, traces in FAMILIES.items():
        if trace in traces:
            return fam
    return "other"


@dataclass(frozen=True)
class RunSpec:
    """One run of the grid. ``max_nodes``/``max_pods`` take a deterministic subset (smoke runs)."""

    trace: str
    policy: str
    seed: int
    data_dir: str
    tune: float = 1.3
    max_nodes: int | None = None
    max_pods: int | None = None
    gpu_model: str = "annotations"  # or "dra": the GPUs as ResourceSlices and ResourceClaims

    @property
    def key(self) -> str:
        return f"{self.trace}/{self.policy}/seed-{self.seed}"

    @property
    def node_file(self) -> Path:
        return csv_in(self.data_dir, NODE_STEM) or Path(self.data_dir) / NODE_FILE

    @property
    def pod_file(self) -> Path:
        stem = POD_STEM.format(self.trace)
        return csv_in(self.data_dir, stem) or Path(self.data_dir) / f"{stem}.csv"


def _items(text: str, flag: str) -> list[str]:
    items = [s.strip() for s in text.split(",")]
    if not text.strip() or any(not s for s in items):
        raise InputError(f"empty name in {text!r}", source=flag)
    return items


def available_traces(data_dir: str | Path) -> list[str]:
    """Trace names that have a pod list in the data folder (the paper's first, then the rest)."""
    found = trace_names(data_dir)
    return [t for t in PAPER_TRACES if t in found] + [t for t in found if t not in PAPER_TRACES]


def parse_traces(text: str, data_dir: str | Path) -> list[str]:
    """``all`` (the paper's 17), a family name (``gpushare``) or trace names, comma separated."""
    avail = available_traces(data_dir)
    out: list[str] = []
    for item in _items(text, "--traces"):
        if item == "all":
            names = list(PAPER_TRACES)
        elif item in FAMILIES:
            names = list(FAMILIES[item])
        else:
            names = [item]
        for name in names:
            if name not in avail:
                known = ", ".join(avail) if avail else "none"
                raise InputError(
                    f"unknown trace {name!r}: no {POD_STEM.format(name)}.csv(.gz) in {data_dir} (available: {known})",
                    source="--traces",
                )
            if name not in out:
                out.append(name)
    return out


def parse_policies(text: str) -> list[str]:
    out: list[str] = []
    lower = {p.lower(): p for p in POLICIES}
    for item in _items(text, "--policies"):
        name = lower.get(item.lower())
        if name is None:
            raise InputError(f"unknown policy {item!r} (one of {', '.join(POLICIES)})", source="--policies")
        if name not in out:
            out.append(name)
    return out


def _seed(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise InputError(f"not an integer seed: {text!r}", source="--seeds") from None
    if v < 0:
        raise InputError(f"seeds must be non-negative, got {v}", source="--seeds")
    return v


def at_least_one(value: int | None, flag: str) -> None:
    """A count flag of the experiment commands (``--max-nodes``, ``--trials``, ...): unset or 1 and up."""
    if value is not None and value < 1:
        raise InputError(f"must be at least 1, got {value}", source=flag)


def parse_seeds(text: str) -> list[int]:
    """``42-51``, ``42,45`` or a mix (``42-44,50``); ranges are inclusive and ascending."""
    out: list[int] = []
    for item in _items(text, "--seeds"):
        lo_s, dash, hi_s = item.partition("-")
        if dash:
            lo, hi = _seed(lo_s), _seed(hi_s)
            if hi < lo:
                raise InputError(f"empty range {item!r}: {hi} < {lo}", source="--seeds")
            if hi - lo + 1 > MAX_SEEDS:
                raise InputError(f"range {item!r} has more than {MAX_SEEDS} seeds", source="--seeds")
            seeds = range(lo, hi + 1)
        else:
            seeds = range(_seed(item), _seed(item) + 1)
        out.extend(s for s in seeds if s not in out)
    return out


def check_data_dir(data_dir: str | Path) -> Path:
    p = Path(data_dir)
    if not p.is_dir():
        raise InputError(f"not a folder: {data_dir}", source="--data-dir")
    if csv_in(p, NODE_STEM) is None:
        raise InputError(f"no {NODE_FILE} (or .csv.gz) in {data_dir}", source="--data-dir")
    return p


def build_grid(
    traces: list[str],
    policies: list[str],
    seeds: list[int],
    data_dir: str | Path,
    *,
    tune: float = 1.3,
    max_nodes: int | None = None,
    max_pods: int | None = None,
    gpu_model: str = "annotations",
) -> list[RunSpec]:
    """Every (trace, policy, seed), in trace, policy, seed order."""
    d = str(data_dir)
    return [RunSpec(t, p, s, d, tune, max_nodes, max_pods, gpu_model) for t in traces for p in policies for s in seeds]
