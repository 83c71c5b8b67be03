"""The Kubernetes API over the official client's configuration, auth and HTTP, with raw JSON bodies.

The generated model classes cost ~100 µs per pod to build; kubesched decodes response bodies
itself (orjson, then ``Pod.parse``), so requests go through ``ApiClient.param_serialize`` (auth
headers, host, query encoding) and ``ApiClient.call_api`` (the client's urllib3 pool, TLS,
timeouts), and the body is read raw.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from kubesched import __version__
from kubesched.errors import InputError
from kubesched.live.ratelimit import TokenBucket

#: the Kubernetes client is the ``live`` extra: only ``run``, ``extender --kubeconfig`` and ``autoscale`` need it
INSTALL_HINT = "talking to a Kubernetes API needs the Kubernetes client: pip install 'kubesched[live]'"
try:
    import urllib3
    from kubernetes import client as k8s_client
    from kubernetes import config as k8s_config
    from kubernetes.config.config_exception import ConfigException
except ImportError:
    raise InputError(INSTALL_HINT) from None

#: (connect, read) seconds for ordinary requests: a dead connection never hangs a caller.
DEFAULT_TIMEOUT = (5.0, 30.0)
USER_AGENT = f"kubesched/{__version__}"

JSON = "application/json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
MERGE_PATCH = "application/merge-patch+json"


class ApiError(Exception):
    """A non-2xx answer (``status`` > 0) or a transport failure (``status`` == 0)."""

    def __init__(self, status: int, reason: str, message: str = "", body: dict | None = None) -> None:
        self.status = status
        self.reason = reason  # metav1.Status reason (Conflict, NotFound, Expired...) or the HTTP reason
        self.message = message
        self.body = body or {}
        super().__init__(f"{status} {reason}: {message}" if message else f"{status} {reason}")


def load_configuration(
    kubeconfig: str | None,
    context: str | None = None,
    *,
    field: str = "--kubeconfig",
    source: str | None = None,
) -> k8s_client.Configuration:
    """kube-scheduler's rule: the kubeconfig when given, the in-cluster service account otherwise.

    Problems are one-line ``InputError``s naming the file (exit code 2); ``field`` is where the
    path was given (a flag, or a field of the configuration file ``source``).
    """
    cfg = k8s_client.Configuration()
    if kubeconfig:
        if not os.path.isfile(kubeconfig):
            if source:
                raise InputError(f"no such file: {kubeconfig}", source=source, path=field)
            raise InputError("no such file", source=kubeconfig, path=field)
        try:
            k8s_config.load_kube_config(
                config_file=kubeconfig, context=context, client_configuration=cfg, persist_config=False
            )
        except (ConfigException, OSError, ValueError, TypeError, KeyError) as e:
            line = " ".join(str(e).split()) or type(e).__name__
            raise InputError(f"invalid kubeconfig: {line}", source=kubeconfig) from None
        except Exception as e:  # noqa: BLE001 - YAML errors and friends from the loader: still bad input
            line = " ".join(str(e).split()) or type(e).__name__
            raise InputError(f"invalid kubeconfig: {line}", source=kubeconfig) from None
    else:
        try:
            k8s_config.load_incluster_config(client_configuration=cfg)
        except ConfigException as e:
            raise InputError(
                f"not running in a cluster ({' '.join(str(e).split())}); pass --kubeconfig", path="--kubeconfig"
            ) from None
    return cfg


@dataclass
class Response:
    status: int
    body: dict


class KubeClient:
    """Raw-JSON requests against one API server; every non-watch request takes a token first."""

    def __init__(
        self,
        configuration: k8s_client.Configuration,
        limiter: TokenBucket | None = None,
        *,
        timeout: tuple[float, float] = DEFAULT_TIMEOUT,
        pool_size: int = 64,
        api_client: k8s_client.ApiClient | None = None,
    ) -> None:
        if api_client is None:
            # binds, events, status patches and one long-lived connection per watch share the pool
            configuration.connection_pool_maxsize = max(configuration.connection_pool_maxsize or 0, pool_size)
            api_client = k8s_client.ApiClient(configuration)
            api_client.user_agent = USER_AGENT
        self.api = api_client
        self.limiter = limiter
        self.timeout = timeout

    def with_limiter(self, limiter: TokenBucket | None) -> KubeClient:
        """The same connection pool under another rate limiter (leader election, events)."""
        return KubeClient(self.api.configuration, limiter, timeout=self.timeout, api_client=self.api)

    @property
    def host(self) -> str:
        return str(self.api.configuration.host)

    def _call(
        self,
        method: str,
        path: str,
        query: list[tuple[str, Any]] | None,
        body: Any,
        content_type: str,
        timeout: Any,
    ) -> urllib3.BaseHTTPResponse:
        headers = {"Accept": JSON}
        if body is not None:
            headers["Content-Type"] = content_type
        # param_serialize gives the URL (host, path, query) and the auth headers (bearer token,
        # refreshed by the configuration's hook); the request then goes straight to the client's
        # urllib3 pool (TLS, proxy, retries as configured), with the body encoded by orjson: the
        # generic path (sanitize_for_serialization, json.dumps, RESTClientObject) costs about
        # twice the client CPU per request, and the live path makes two requests per pod.
        _, url, hdrs, _, _ = self.api.param_serialize(
            method=method,
            resource_path=path,
            query_params=list(query or []),
            header_params=headers,
            auth_settings=["BearerToken"],
        )
        payload = None if body is None else orjson.dumps(body)
        try:
            return self.api.rest_client.pool_manager.request(
                method, url, body=payload, headers=hdrs, timeout=_timeout(timeout), preload_content=False
            )
        except (urllib3.exceptions.HTTPError, OSError) as e:
            raise ApiError(0, type(e).__name__, " ".join(str(e).split())) from None

    def request(
        self,
        method: str,
        path: str,
        *,
        query: list[tuple[str, Any]] | None = None,
        body: Any = None,
        content_type: str = JSON,
        timeout: Any = None,
        before_send: Callable[[], None] | None = None,
    ) -> Response:
        """One request; the decoded body of a 2xx answer, ``ApiError`` otherwise.

        ``before_send`` runs once the rate limiter has let the request through, just before it
        is sent (the wait for a token may be long): it raises to call the request off.
        """
        if self.limiter is not None:
            self.limiter.acquire()
        if before_send is not None:
            before_send()
        raw = self._call(method, path, query, body, content_type, timeout or self.timeout)
        try:
            data = raw.data
        except (urllib3.exceptions.HTTPError, OSError) as e:
            raise ApiError(0, type(e).__name__, " ".join(str(e).split())) from None
        finally:
            raw.release_conn()
        status = raw.status
        doc = _decode(data)
        if not 200 <= status <= 299:
            raise error_from(status, doc, getattr(raw, "reason", "") or "")
        return Response(status, doc)

    def watch(self, path: str, query: list[tuple[str, Any]], read_timeout: float) -> WatchStream:
        """Open a watch stream; ``ApiError`` if the server refuses it (e.g. 410 Gone)."""
        raw = self._call("GET", path, query, None, JSON, (DEFAULT_TIMEOUT[0], read_timeout))
        if not 200 <= raw.status <= 299:
            try:
                doc = _decode(raw.data)
            except (urllib3.exceptions.HTTPError, OSError):
                doc = {}
            finally:
                raw.release_conn()
            raise error_from(raw.status, doc, getattr(raw, "reason", "") or "")
        return WatchStream(raw)


def _timeout(value: Any) -> urllib3.Timeout:
    """``_request_timeout`` as the official client reads it: seconds, or (connect, read)."""
    if isinstance(value, tuple | list) and len(value) == 2:
        return urllib3.Timeout(connect=value[0], read=value[1])
    return urllib3.Timeout(total=value)


def _decode(data: bytes | None) -> dict:
    if not data:
        return {}
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        return {"message": data[:200].decode("utf-8", "replace")}
    return doc if isinstance(doc, dict) else {"items": doc}


def error_from(status: int, doc: dict, http_reason: str = "") -> ApiError:
    """An ``ApiError`` from a metav1.Status body (or whatever the server sent)."""
    reason = doc.get("reason") if isinstance(doc.get("reason"), str) else ""
    msg = doc.get("message") if isinstance(doc.get("message"), str) else ""
    return ApiError(status, reason or http_reason or "Error", " ".join(msg.split()), doc)


class WatchStream:
    """Newline-delimited watch events from an open response, decoded with orjson as they arrive."""

    def __init__(self, raw: urllib3.BaseHTTPResponse) -> None:
        self.raw = raw
        self._closed = False

    def _chunks(self) -> Iterator[bytes]:
        raw = self.raw
        if getattr(raw, "chunked", False) and hasattr(raw, "read_chunked"):
            yield from raw.read_chunked(decode_content=True)
            return
        read1 = getattr(raw, "read1", None)
        while True:  # not chunked (HTTP/1.0 style, ends at EOF): whatever has arrived, not a full buffer
            data = read1(65536) if read1 is not None else raw.read(1)
            if not data:
                return
            yield data

    def events(self) -> Iterator[dict]:
        """Yields each event object; ends when the server closes the stream.

        Transport failures (read timeout, reset) raise ``ApiError`` with status 0.
        """
        buf = b""
        try:
            for chunk in self._chunks():
                buf += chunk
                while True:
                    nl = buf.find(b"\n")
                    if nl < 0:
                        break
                    line, buf = buf[:nl], buf[nl + 1 :]
                    if line.strip():
                        yield _event(line)
            if buf.strip():
                yield _event(buf)
        except (urllib3.exceptions.HTTPError, OSError, ValueError) as e:
            if self._closed:
                return
            raise ApiError(0, type(e).__name__, " ".join(str(e).split())) from None

    def close(self) -> None:
        self._closed = True
        conn = getattr(self.raw, "connection", None)
        sock = getattr(conn, "sock", None)
        try:
            if sock is not None:  # wakes a reader blocked in recv() on another thread
                sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self.raw.close()
        except Exception:  # noqa: BLE001,S110 - closing a broken socket may fail; it is closed either way
            pass


def _event(line: bytes) -> dict:
    try:
        ev = orjson.loads(line)
    except orjson.JSONDecodeError as e:
        raise ApiError(0, "BadWatchEvent", f"undecodable watch event: {e}") from None
    if not isinstance(ev, dict):
        raise ApiError(0, "BadWatchEvent", "watch event is not an object")
    return ev
