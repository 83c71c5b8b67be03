"""Values derived from one snapshot, kept until what they were derived from changes.

Plugins and the GPU model read the same derived data cycle after cycle: a node mask per pod
shape, a table of images per node, counts of matching pods per topology domain. Each ``Snapshot``
owns a ``Memo`` (``snap.memo``); a value is asked for by key and by what it depends on,

    mask = snap.memo.get(("NodeAffinity/added", self), lambda: selector.mask(snap.labels), on=NODES)

and is built again only when one of those changed since it was built. A value that is cheaper
to bring up to date than to rebuild follows the snapshot's change logs instead (``follow``):
it is updated with the rows (or pods with affinity terms) that changed since its last read, and
built anew when the nodes change. Keys are any hashable values: include the plugin instance
(or its args) when the value depends on them. Values are shared between callers: read them,
never write to them, except through ``follow``'s update.

The memo lives and dies with its snapshot, so nothing here has to tell one snapshot from another.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from operator import attrgetter
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from kubesched.state.snapshot import Snapshot

T = TypeVar("T")

#: What a value depends on (combine with ``|``).
NODES = 1  # nodes added, removed or changed (labels, taints, allocatable)
PODS = 2  # assigned pods added or removed
NAMESPACES = 4  # namespace labels
AFFINITY_PODS = 8  # assigned pods with (anti-)affinity terms added or removed
EVERYTHING = NODES | PODS | NAMESPACES | AFFINITY_PODS

_COUNTERS = ("node_generation", "pod_generation", "namespace_generation", "affinity_generation")
#: dependency mask -> reader of the matching counters (an int for one, a tuple for several)
_STAMP = {
    mask: attrgetter(*(name for bit, name in enumerate(_COUNTERS) if mask >> bit & 1))
    for mask in range(1, EVERYTHING + 1)
}

#: Change logs ``follow`` reads: rows whose pods changed, and uids of pods with affinity terms
#: that came or went. Each log restarts (its epoch bumps) when nodes or namespaces change.
ROWS = "rows"
AFFINITY = "affinity"

#: Values kept before stale ones are dropped (and all of them, when none is stale).
LIMIT = 1024


class Memo:
    __slots__ = ("_snap", "_values", "_follows")

    def __init__(self, snap: Snapshot) -> None:
        self._snap = snap
        self._values: dict[Hashable, tuple[Any, Hashable, Any, int]] = {}  # key -> (stamp, version, value, on)
        self._follows: dict[Hashable, list[Any]] = {}  # key -> [stamp, epoch, position, value, generation]

    def get(self, key: Hashable, build: Callable[[], T], *, on: int, version: Hashable = None) -> T:
        """The value of ``key``, built by ``build()`` unless kept since before the last change of
        ``on``; ``version`` (of an input outside the snapshot, such as fetched metrics) must match too."""
        stamp = _STAMP[on](self._snap)
        hit = self._values.get(key)
        if hit is not None and hit[0] == stamp and hit[1] == version:
            return hit[2]
        value = build()
        if len(self._values) >= LIMIT and key not in self._values:
            self._trim()
        self._values[key] = (stamp, version, value, on)
        return value

    def follow(
        self,
        key: Hashable,
        build: Callable[[T | None], T],
        update: Callable[[T, list[Any]], None],
        *,
        on: int = NODES,
        log: str = ROWS,
    ) -> T:
        """The value of ``key`` brought up to date: ``update(value, changes)`` with the log's
        entries since the last read (in order, repeats kept; not called when there are none), or
        ``build(old)`` when ``on`` changed or the log restarted since (``old``: the value being
        replaced, None the first time, for state that outlives a rebuild)."""
        snap = self._snap
        f = self._follows.get(key)
        if f is not None and f[4] == snap.generation:  # nothing changed since the last read
            return f[3]
        stamp = _STAMP[on](snap)
        entries, epoch = (snap.changed_rows, snap.structure) if log == ROWS else (snap.affinity_log, snap.affinity_log_epoch)
        if f is None or f[0] != stamp or f[1] != epoch or f[2] > len(entries):
            value = build(None if f is None else f[3])
            if f is None and len(self._follows) >= LIMIT:
                self._follows.clear()
            self._follows[key] = [stamp, epoch, len(entries), value, snap.generation]
            return value
        if f[2] < len(entries):
            changes = entries[f[2] :]
            f[2] = len(entries)
            update(f[3], changes)
        f[4] = snap.generation
        return f[3]

    def current(self, key: Hashable) -> Any:
        """The value ``follow`` keeps for ``key`` while the snapshot has not changed since its last
        read, else None: a reader asked many times per cycle checks this before building the
        ``build`` and ``update`` closures ``follow`` needs."""
        f = self._follows.get(key)
        return f[3] if f is not None and f[4] == self._snap.generation else None

    def _trim(self) -> None:
        """Drop values whose dependencies changed since they were built; all of them if none did."""
        snap = self._snap
        fresh = {k: v for k, v in self._values.items() if v[0] == _STAMP[v[3]](snap)}
        self._values = fresh if len(fresh) < LIMIT // 2 else {}
