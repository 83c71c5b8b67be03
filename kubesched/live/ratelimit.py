"""A token bucket: client-go's flowcontrol rate limiter behind ``--kube-api-qps``/``--kube-api-burst``."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class TokenBucket:
    """``qps`` tokens a second, at most ``burst`` saved up; ``acquire`` waits for one.

    Callers reserve a token first and then sleep off the debt (golang.org/x/time/rate's Wait), so
    concurrent callers are served in arrival order without a busy loop.
    """

    def __init__(
        self,
        qps: float,
        burst: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if qps <= 0:
            raise ValueError(f"qps must be > 0, got {qps}")
        if burst < 1:
            raise ValueError(f"burst must be >= 1, got {burst}")
        self.qps = float(qps)
        self.burst = int(burst)
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._tokens = float(burst)
        self._last = clock()

    def _refill(self, now: float) -> None:
        self._tokens = min(self.burst, self._tokens + (now - self._last) * self.qps)
        self._last = now

    def reserve(self) -> float:
        """Take a token now (possibly on credit); the seconds to wait before using it."""
        with self._lock:
            self._refill(self._clock())
            self._tokens -= 1.0
            return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    def try_acquire(self) -> bool:
        """A token if one is available now, without waiting."""
        with self._lock:
            self._refill(self._clock())
            if self._tokens >= 1.0:
                self._tokens -= 1.0
                return True
            return False

    def acquire(self) -> float:
        """Wait for a token; returns the seconds waited."""
        wait = self.reserve()
        if wait > 0:
            self._sleep(wait)
        return wait
