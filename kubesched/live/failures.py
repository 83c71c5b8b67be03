"""The informers' failed requests, said once per distinct failure.

An API server that cannot be reached fails every informer (20-odd of them) on every retry: a line
each made 74 lines in 45 s that all said one thing. Here a failure is said when it is first seen,
with the informers that meet it counted from then on; while it lasts a reminder comes every
``remind_every`` seconds, its end (an informer listing again) is said with the count, and
``close`` sums up what is still failing when the scheduler stops.

Two failures are the same when their status, reason and message are, once what differs between
the informers' requests (the URL path, object addresses) is taken out.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from kubesched.live.client import ApiError

log = logging.getLogger("kubesched.live.informer")

#: what differs between two informers' requests that fail for one reason
_REQUEST_DETAIL = re.compile(r" with url: \S+| object at 0x[0-9a-fA-F]+")


def cause(error: ApiError) -> str:
    """The failure without the request's own detail (its URL): the same for every informer."""
    return _REQUEST_DETAIL.sub("", str(error))


@dataclass
class _Failure:
    first: float
    reminded: float
    count: int = 1
    kinds: set[str] = field(default_factory=set)


class FailureLog:
    """Shared by a scheduler's informers (thread-safe)."""

    def __init__(self, remind_every: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.remind_every = remind_every
        self.clock = clock
        self._open: dict[str, _Failure] = {}
        self._lock = threading.Lock()

    def failed(self, kind: str, error: ApiError, delay: float) -> None:
        """``kind``'s informer failed with ``error`` and retries in ``delay`` seconds."""
        key = cause(error)
        now = self.clock()
        with self._lock:
            f = self._open.get(key)
            if f is None:
                self._open[key] = _Failure(now, now, kinds={kind})
                log.warning(
                    "%s: %s; retrying in %.1fs (the informers meeting this failure are counted, not logged each time)",
                    kind, key, delay,
                )
                return
            f.count += 1
            f.kinds.add(kind)
            if now - f.reminded >= self.remind_every:
                f.reminded = now
                log.warning("still failing: %s", key, extra={"kv": self._figures(f, now)})

    def recovered(self, kind: str) -> None:
        """``kind``'s informer listed again: the failures it met are over for it."""
        now = self.clock()
        with self._lock:
            for key, f in list(self._open.items()):
                f.kinds.discard(kind)
                if not f.kinds:
                    del self._open[key]
                    log.info("recovered: %s", key, extra={"kv": self._figures(f, now)})

    def close(self) -> None:
        """One line per failure still open (the scheduler is stopping)."""
        now = self.clock()
        with self._lock:
            for key, f in self._open.items():
                log.warning("still failing at stop: %s", key, extra={"kv": self._figures(f, now)})
            self._open.clear()

    @staticmethod
    def _figures(f: _Failure, now: float) -> dict[str, object]:
        return {"failed_requests": f.count, "informers": len(f.kinds), "for_s": round(now - f.first, 1)}
