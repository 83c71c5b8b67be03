"""Leader election with a coordination.k8s.io/v1 Lease (client-go's leaderelection, LeaseLock).

Only the holder schedules. A candidate takes the lease when it is free or when its record has
not changed for ``lease_duration`` as seen on the candidate's own clock (client-go judges
expiry by when it last *observed* a change, never by the holder's timestamps, so clock skew
between replicas does not matter). Writes carry the lease's resourceVersion: two candidates
racing for it cannot both win. The holder renews every ``retry_period``; if it cannot renew
within ``renew_deadline`` it has lost the lease and must stop scheduling.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from kubesched.live.bodies import micro_time
from kubesched.live.client import ApiError, KubeClient

log = logging.getLogger("kubesched.live.leader")

JITTER = 1.2  # client-go's JitterFactor for the acquire retry


@dataclass(frozen=True)
class LeaseConfig:
    name: str
    namespace: str = "kube-system"
    identity: str = ""
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0


class LeaderElector:
    def __init__(
        self,
        client: KubeClient,
        config: LeaseConfig,
        *,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
    ) -> None:
        self.client = client
        self.config = config
        self.clock = clock
        self.rng = rng or random.Random()
        self.leading = threading.Event()
        self.lost = threading.Event()  # set once leadership, after being held, could not be renewed
        self._observed: dict[str, Any] | None = None  # the lease spec last seen
        self._observed_rv = ""
        self._observed_at = 0.0  # our clock when the observed record last changed
        self._transitions = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def path(self) -> str:
        c = self.config
        return f"/apis/coordination.k8s.io/v1/namespaces/{quote(c.namespace, safe='')}/leases/{quote(c.name, safe='')}"

    @property
    def holder(self) -> str:
        return str((self._observed or {}).get("holderIdentity") or "")

    # ---- one attempt -----------------------------------------------------------------
    def try_acquire_or_renew(self) -> bool:
        """tryAcquireOrRenew: True when we hold the lease after this call."""
        c = self.config
        now_wall = time.time()
        try:
            cur = self.client.request("GET", self.path).body
        except ApiError as e:
            if e.status != 404:
                log.warning("lease %s/%s: %s", c.namespace, c.name, e)
                return False
            body = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": c.name, "namespace": c.namespace},
                "spec": self._spec(now_wall, acquire=True, transitions=0),
            }
            try:
                made = self.client.request("POST", self.path.rsplit("/", 1)[0], body=body).body
            except ApiError as e2:
                log.info("lease %s/%s: create failed: %s", c.namespace, c.name, e2)
                return False
            self._observe(made)
            return True
        spec = cur.get("spec") or {}
        rv = str((cur.get("metadata") or {}).get("resourceVersion") or "")
        if spec != self._observed or rv != self._observed_rv:
            self._observed, self._observed_rv, self._observed_at = dict(spec), rv, self.clock()
        holder = str(spec.get("holderIdentity") or "")
        duration = float(spec.get("leaseDurationSeconds") or c.lease_duration)
        ours = holder == c.identity
        if holder and not ours and self._observed_at + duration > self.clock():
            return False  # held by someone else and not expired
        transitions = int(spec.get("leaseTransitions") or 0)
        if not ours:
            transitions += 1
        new_spec = self._spec(now_wall, acquire=not ours, transitions=transitions)
        if ours and spec.get("acquireTime"):
            new_spec["acquireTime"] = spec["acquireTime"]
        upd = dict(cur)
        upd["spec"] = new_spec
        try:
            got = self.client.request("PUT", self.path, body=upd).body  # carries resourceVersion: optimistic
        except ApiError as e:
            if e.status == 409:
                log.info("lease %s/%s: lost a race for the lease", c.namespace, c.name)
            else:
                log.warning("lease %s/%s: update failed: %s", c.namespace, c.name, e)
            return False
        self._observe(got)
        return True

    def _spec(self, now_wall: float, *, acquire: bool, transitions: int) -> dict[str, Any]:
        c = self.config
        spec: dict[str, Any] = {
            "holderIdentity": c.identity,
            "leaseDurationSeconds": max(1, int(round(c.lease_duration))),
            "renewTime": micro_time(now_wall),
            "leaseTransitions": transitions,
        }
        if acquire:
            spec["acquireTime"] = micro_time(now_wall)
        return spec

    def _observe(self, lease: dict) -> None:
        self._observed = dict(lease.get("spec") or {})
        self._observed_rv = str((lease.get("metadata") or {}).get("resourceVersion") or "")
        self._observed_at = self.clock()
        self._transitions = int(self._observed.get("leaseTransitions") or 0)

    # ---- the loops -------------------------------------------------------------------
    def start(self) -> LeaderElector:
        self._thread = threading.Thread(target=self.run, name="leader-election", daemon=True)
        self._thread.start()
        return self

    def run(self) -> None:
        c = self.config
        log.info("lease %s/%s: trying to acquire as %s", c.namespace, c.name, c.identity)
        while not self._stop.is_set():  # acquire
            if self.try_acquire_or_renew():
                break
            self._stop.wait(c.retry_period * (1 + JITTER * self.rng.random()))
        if self._stop.is_set():
            return
        log.info("lease %s/%s: acquired; leading as %s", c.namespace, c.name, c.identity)
        self.leading.set()
        last_renew = self.clock()
        while not self._stop.wait(c.retry_period):  # renew
            if self.try_acquire_or_renew():
                last_renew = self.clock()
                continue
            if self.clock() - last_renew >= c.renew_deadline:
                log.error("lease %s/%s: not renewed within %.1fs: leadership lost", c.namespace, c.name, c.renew_deadline)
                self.leading.clear()
                self.lost.set()
                return

    def stop(self, release: bool = True) -> None:
        """Stop the loops; give the lease up (holder cleared) when we hold it."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=self.config.retry_period + 5)
        if release and self.leading.is_set():
            self.release()
        self.leading.clear()

    def release(self) -> bool:
        """client-go's release: keep the record, clear the holder, shorten the duration to 1 s."""
        c = self.config
        try:
            cur = self.client.request("GET", self.path).body
        except ApiError as e:
            log.warning("lease %s/%s: not released: %s", c.namespace, c.name, e)
            return False
        spec = cur.get("spec") or {}
        if spec.get("holderIdentity") != c.identity:
            return False
        now = micro_time(time.time())
        upd = dict(cur)
        upd["spec"] = {
            "holderIdentity": None,
            "leaseDurationSeconds": 1,
            "acquireTime": now,
            "renewTime": now,
            "leaseTransitions": int(spec.get("leaseTransitions") or 0),
        }
        try:
            self.client.request("PUT", self.path, body=upd)
        except ApiError as e:
            log.warning("lease %s/%s: not released: %s", c.namespace, c.name, e)
            return False
        log.info("lease %s/%s: released", c.namespace, c.name)
        return True
