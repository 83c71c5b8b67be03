"""Node utilization from Prometheus' HTTP API, as paypal/load-watcher queries it, with a cache.

Four instant queries per refresh (``GET /api/v1/query``): ``avg_over_time`` and
``stddev_over_time`` of a CPU and a memory utilization ratio over the window, scaled to percent
as load-watcher does. Series map to nodes by a label (``instance`` by default, a trailing
``:port`` dropped, since node names never hold a colon).

The cache is refreshed at most every ``updateIntervalSeconds`` (a failed refresh is not retried
sooner, so a hung Prometheus costs one timeout per interval, not one per pod). Data older than
``stalenessSeconds`` are unavailable: ``usage()`` then raises UtilizationUnavailable and the
plugins fall back to requests.
"""

from __future__ import annotations

import json
import logging
import re
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path

from kubesched.errors import InputError
from kubesched.framework.utilization import NodeUsage, UtilizationUnavailable
from kubesched.plugins.loadaware.args import MetricProvider, PrometheusOptions

log = logging.getLogger("kubesched.loadaware")

_METRIC_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
_PORT = re.compile(r":\d+$")


def default_queries(opts: PrometheusOptions) -> tuple[str, str]:
    """Utilization ratios (0..1) per node from node-exporter's series."""
    by = opts.node_label
    cpu = f'1 - avg by ({by}) (rate(node_cpu_seconds_total{{mode="idle"}}[{opts.rate_window}]))'
    mem = f"1 - sum by ({by}) (node_memory_MemAvailable_bytes) / sum by ({by}) (node_memory_MemTotal_bytes)"
    return cpu, mem


def over_time(fn: str, expr: str, opts: PrometheusOptions) -> str:
    """``fn`` over the window: a range selector on a recorded series (load-watcher's form, e.g.
    ``instance:node_cpu:ratio``), a subquery on any other expression."""
    if _METRIC_NAME.match(expr):
        return f"{fn}({expr}[{opts.window}])"
    return f"{fn}(({expr})[{opts.window}:{opts.resolution}])"


def node_name(label_value: str) -> str:
    return _PORT.sub("", label_value)


class PrometheusSource:
    """A UtilizationSource over Prometheus; ``window_end`` is the wall time of the data."""

    def __init__(
        self, provider: MetricProvider, *, clock: Callable[[], float] = time.time, owner: str = ""
    ) -> None:
        self.address = provider.address
        self.token = provider.token
        self.token_file = provider.token_file
        if self.token_file is not None:
            self._read_token()  # an unreadable file is a configuration error, found at start
        self.opts = provider.prometheus
        self.clock = clock
        self.owner = owner  # plugin name, for log lines
        cpu, mem = default_queries(self.opts)
        cpu = self.opts.cpu_query or cpu
        mem = self.opts.memory_query or mem
        self.queries = {
            ("cpu", "avg"): over_time("avg_over_time", cpu, self.opts),
            ("cpu", "std"): over_time("stddev_over_time", cpu, self.opts),
            ("mem", "avg"): over_time("avg_over_time", mem, self.opts),
            ("mem", "std"): over_time("stddev_over_time", mem, self.opts),
        }
        self._ssl: ssl.SSLContext | None = None
        if self.address.startswith("https://") and provider.insecure_skip_verify:
            self._ssl = ssl.create_default_context()
            self._ssl.check_hostname = False
            self._ssl.verify_mode = ssl.CERT_NONE
        self._data: dict[str, NodeUsage] | None = None
        self.window_end: float = float("-inf")  # when the cached data were fetched
        self.fetches = 0  # successful fetches: what the data in hand are numbered by
        self._last_attempt: float = float("-inf")
        self.last_error: str | None = None

    def _read_token(self) -> str:
        """The token file's content, read at each query so that a rotated Secret is picked up."""
        assert self.token_file is not None
        try:
            return Path(self.token_file).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as e:
            raise InputError(
                f'cannot read "{self.token_file}": {getattr(e, "strerror", None) or e}', path="metricProvider.tokenFile"
            ) from None

    # ---- HTTP ------------------------------------------------------------------------
    def query(self, promql: str) -> list[tuple[dict[str, str], float]]:
        """One instant query: (labels, value) per series; raises UtilizationUnavailable."""
        url = f"{self.address}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
        req = urllib.request.Request(url, headers={"Accept": "application/json"})
        token = self.token
        if self.token_file is not None:
            try:
                token = self._read_token()
            except InputError as e:
                raise UtilizationUnavailable(str(e)) from None
        if token:
            req.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(req, timeout=self.opts.timeout_seconds, context=self._ssl) as resp:  # noqa: S310
                body = json.loads(resp.read())
        except urllib.error.HTTPError as e:
            detail = ""
            try:
                detail = json.loads(e.read()).get("error", "")
            except (ValueError, OSError):
                pass
            raise UtilizationUnavailable(
                f"Prometheus at {self.address}: HTTP {e.code} {detail}".rstrip()
            ) from None
        except (OSError, ValueError) as e:  # refused, timeout, DNS, bad JSON
            reason = getattr(e, "reason", e)
            raise UtilizationUnavailable(f"Prometheus at {self.address} unreachable: {reason}") from None
        if not isinstance(body, dict) or body.get("status") != "success":
            err = body.get("error", "bad response") if isinstance(body, dict) else "bad response"
            raise UtilizationUnavailable(f"Prometheus at {self.address}: query {promql!r} failed: {err}")
        data = body.get("data") or {}
        if data.get("resultType") != "vector":
            kind = data.get("resultType")
            raise UtilizationUnavailable(
                f"Prometheus at {self.address}: query {promql!r} returned {kind!r}, not a vector"
            )
        out = []
        for series in data.get("result") or []:
            try:
                value = float(series["value"][1])
            except (KeyError, IndexError, TypeError, ValueError):
                continue
            out.append((series.get("metric") or {}, value))
        return out

    def fetch(self) -> dict[str, NodeUsage]:
        """Query Prometheus now: node -> usage in percent; memory NaN where it has no series."""
        vals: dict[tuple[str, str], dict[str, float]] = {}
        for key, promql in self.queries.items():
            got: dict[str, float] = {}
            for labels, value in self.query(promql):
                label = labels.get(self.opts.node_label)
                if label and value == value:  # NaN (e.g. stddev of nothing) is no data
                    got[node_name(label)] = value * 100.0  # load-watcher reports percent
            vals[key] = got
        if not vals[("cpu", "avg")]:
            raise UtilizationUnavailable(
                f"Prometheus at {self.address} has no CPU utilization series by label "
                f"{self.opts.node_label!r} (query: {self.queries[('cpu', 'avg')]})"
            )
        nan = float("nan")
        return {
            node: NodeUsage(
                cpu_avg=cpu,
                cpu_std=vals[("cpu", "std")].get(node, 0.0),
                mem_avg=vals[("mem", "avg")].get(node, nan),
                mem_std=vals[("mem", "std")].get(node, 0.0),
            )
            for node, cpu in vals[("cpu", "avg")].items()
        }

    # ---- UtilizationSource -----------------------------------------------------------
    def usage(self) -> dict[str, NodeUsage]:
        now = self.clock()
        if now - self._last_attempt >= self.opts.update_interval_seconds:
            self._last_attempt = now
            try:
                self._data = self.fetch()
                self.fetches += 1
                self.window_end = now
                if self.last_error is not None:
                    log.info("%s: Prometheus at %s answers again", self.owner, self.address)
                self.last_error = None
            except UtilizationUnavailable as e:
                self.last_error = str(e)
                age = now - self.window_end
                if self._data is not None and age <= self.opts.staleness_seconds:
                    log.warning("%s: %s; using metrics from %.0f s ago", self.owner, e, age)
        if self._data is None:
            raise UtilizationUnavailable(self.last_error or f"no data from Prometheus at {self.address} yet")
        age = now - self.window_end
        if age > self.opts.staleness_seconds:
            raise UtilizationUnavailable(
                f"metrics from Prometheus at {self.address} are {age:.0f} s old, beyond stalenessSeconds "
                f"{self.opts.staleness_seconds:g}" + (f" ({self.last_error})" if self.last_error else "")
            )
        return self._data
