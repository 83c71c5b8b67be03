"""Sites that go offline mid-run and come back: the experiment's outage events.

An outage takes a whole site away at ``offline`` (seconds of the run's clock, after compression)
and brings it back at ``back`` (never, when None): its nodes are gone, and the pods running there
end with them. What happens to the site's pods then depends on the mode (``run._Replay``):

- ``isolated`` and ``cloud-only`` have no layer above the site: its running pods are lost (they
  fail, ``offline``); its pending pods, and those that keep arriving for it, stay pending there and
  are placed once it is back, unless their class timeout passes first.
- ``collaborative``: Karmada's cluster controller taints the unreachable cluster
  (``cluster.karmada.io/unreachable:NoSchedule``, ``taints.taint_cluster_by_condition`` for a
  ``Ready`` condition turned ``Unknown``, so the TaintToleration filter rejects it), and
  cluster failover evicts every pod of the site at once and decides each again with the others.
  A pod that was running starts over where it lands (its whole duration; nothing is checkpointed)
  and has its class timeout, from the eviction, to be placed again; a pod that was pending keeps
  its deadline. When the site is back the taint goes and the pods waiting at the federation are
  decided again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubesched.errors import InputError, check_mapping, join_path


@dataclass(frozen=True)
class Outage:
    site: str
    offline: float  # seconds of the run's clock
    back: float | None  # None: the site stays offline


def _seconds(v: Any, path: str | None, source: str | None) -> float:
    """A time of the run: seconds (a number, or a string of one on the command line) or a Go
    duration (``90m``, ``1h30m``)."""
    import math

    from kubesched.config.decode import parse_duration

    s = None if isinstance(v, bool) else v
    if isinstance(v, str):
        try:
            s = float(v) if source == "--outage" else None
        except ValueError:
            s = None
        if s is None:
            s = parse_duration(v)
    if not isinstance(s, int | float) or not math.isfinite(s) or s < 0:
        raise InputError(f"expected seconds or a duration such as 90m or 1h30m, 0 or more, got {v!r}", source=source,
                         path=path)
    return float(s)


def parse_flag(text: str) -> Outage:
    """``SITE:OFFLINE[:BACK]`` (``edge-japan-east:1h:1h30m``)."""
    parts = text.split(":")
    if len(parts) not in (2, 3) or not parts[0]:
        raise InputError(f'expected SITE:OFFLINE[:BACK] (e.g. edge-japan-east:1h:1h30m), got "{text}"', source="--outage")
    off = _seconds(parts[1], None, "--outage")
    back = _seconds(parts[2], None, "--outage") if len(parts) == 3 else None
    return Outage(parts[0], off, back)


def parse_list(v: Any, path: str) -> tuple[Outage, ...]:
    """The scenario file's ``outages``: ``[{site, offline, back}]`` (``back`` may be left out)."""
    from kubesched.api.fields import as_list, as_str

    out = []
    for i, item in enumerate(as_list(v, path)):
        p = join_path(path, i)
        m = check_mapping(item, p, ("site", "offline", "back"))
        site = as_str(m.get("site"), join_path(p, "site"))
        if not site:
            raise InputError("site is required", path=p)
        if "offline" not in m:
            raise InputError("offline is required", path=p)
        off = _seconds(m["offline"], join_path(p, "offline"), None)
        back = None if m.get("back") is None else _seconds(m["back"], join_path(p, "back"), None)
        out.append(Outage(site, off, back))
    return tuple(out)


def check(outages: tuple[Outage, ...], sites: list[str], source: str | None, path: str | None) -> None:
    """Each outage names a site, comes back after it went, and does not overlap another of its site."""
    for k, o in enumerate(outages):
        p = join_path(path, k) if path else None
        if o.site not in sites:
            raise InputError(f'no site named "{o.site}" (sites: {", ".join(sites)})', source=source, path=p)
        if o.back is not None and o.back <= o.offline:
            raise InputError(f"{o.site} comes back ({o.back:g} s) before it goes offline ({o.offline:g} s)", source=source,
                             path=p)
    by_site: dict[str, list[Outage]] = {}
    for o in outages:
        by_site.setdefault(o.site, []).append(o)
    for site, os_ in by_site.items():
        os_.sort(key=lambda o: o.offline)
        for a, b in zip(os_, os_[1:], strict=False):
            if a.back is None or b.offline < a.back:
                raise InputError(f"two outages of {site} overlap (offline at {a.offline:g} s and {b.offline:g} s)",
                                 source=source, path=path)
