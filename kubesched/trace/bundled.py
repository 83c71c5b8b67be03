"""The openb trace shipped inside the package, named the way the commands take it.

``kubesched/data/openb`` holds the trace's CSVs gzipped (see its README for source and licence).
Commands accept either a path or a short name: ``default``, ``gpushare40`` (pod lists),
``all``, ``gpu`` (node lists); the file names themselves (``openb_pod_list_default.csv``) work too.
"""

from __future__ import annotations

from pathlib import Path

from kubesched.errors import InputError

#: the folder of the shipped trace (inside the installed package)
OPENB_DIR = Path(__file__).resolve().parent.parent / "data" / "openb"
POD_PREFIX = "openb_pod_list_"
NODE_PREFIX = "openb_node_list_"
#: node lists by short name
NODE_LISTS = {"all": "all_node", "gpu": "gpu_node"}


def _is_file(path: Path) -> bool:
    """``path.is_file()``, False for a name the system cannot even look up (too long)."""
    try:
        return path.is_file()
    except OSError:
        return False


def csv_in(folder: str | Path, stem: str) -> Path | None:
    """``folder/stem.csv``, else ``folder/stem.csv.gz``, else None."""
    for suffix in (".csv", ".csv.gz"):
        p = Path(folder) / f"{stem}{suffix}"
        if _is_file(p):
            return p
    return None


def trace_names(folder: str | Path = OPENB_DIR) -> list[str]:
    """Names of the pod lists in a folder (``default``, ``cpu050``, ...), sorted."""
    names = set()
    for p in Path(folder).glob(f"{POD_PREFIX}*.csv*"):
        stem = p.name.removesuffix(".gz").removesuffix(".csv")
        if p.name.endswith((".csv", ".csv.gz")):
            names.add(stem[len(POD_PREFIX) :])
    return sorted(names)


def _short(name: str, prefix: str) -> str:
    return name.removesuffix(".gz").removesuffix(".csv").removeprefix(prefix)


def _resolve(spec: str, stem: str | None, *, flag: str, what: str, names: list[str]) -> Path:
    """``spec`` itself when it is a file or a path; else the shipped file ``stem``."""
    path = Path(spec)
    if _is_file(path) or "/" in spec:
        return path
    shipped = csv_in(OPENB_DIR, stem) if stem else None
    if shipped is not None:
        return shipped
    if spec.endswith((".csv", ".gz")):
        return path  # a file name after all: the reader says why it cannot be read
    raise InputError(f'"{spec}": no such file, and not a shipped openb {what} (names: {", ".join(names)})', path=flag)


def pod_list(spec: str, *, flag: str = "--trace") -> Path:
    """A pod list by path, or a shipped one by name (``default``, ``openb_pod_list_default.csv``)."""
    return _resolve(spec, POD_PREFIX + _short(spec, POD_PREFIX), flag=flag, what="pod list", names=trace_names())


def node_list(spec: str, *, flag: str = "--nodes") -> Path:
    """A node list by path, or a shipped one by name: ``all`` (1523 nodes) or ``gpu`` (1213)."""
    short = _short(spec, NODE_PREFIX)
    stem = NODE_LISTS.get(short, short if short in NODE_LISTS.values() else None)
    return _resolve(spec, stem and NODE_PREFIX + stem, flag=flag, what="node list", names=list(NODE_LISTS))
