"""Who may talk to kubesched's servers, and how: TLS, client certificates, bearer tokens.

Modelled on kube-scheduler's secure serving (``--tls-cert-file``, ``--tls-private-key-file``,
``--client-ca-file``; ``/healthz``, ``/livez`` and ``/readyz`` always allowed):

- ``ServingTLS``: the certificate, key and optional client CA files, reloaded when they change
  (a Secret volume swaps them atomically; kube-scheduler's dynamic serving certificates do the
  same), checked at most once a second as connections arrive. A change that does not load (a
  half-written file) keeps the previous certificate and is logged.
- ``TokenFile``: bearer tokens, one per line, re-read on change, compared in constant time.
- ``Access``: with a client CA, the POST routes (the extender's verbs) need a client certificate
  it signed; ``/metrics`` needs such a certificate or a token of the token file when either is
  configured. Without them everything is open, as before (for loopback use).

kube-scheduler delegates token checks to the API server (TokenReview, SubjectAccessReview);
kubesched takes a token file instead, so its metrics port needs no extra RBAC.
"""

from __future__ import annotations

import argparse
import hmac
import logging
import os
import ssl
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from kubesched.errors import InputError
from kubesched.server.httpd import Response

log = logging.getLogger("kubesched.server")

#: How often changed certificate and token files are looked for (seconds).
RELOAD_CHECK_SECONDS = 1.0


def _stamp(path: str) -> tuple[int, int, int]:
    st = os.stat(path)  # follows the ..data symlink of a Secret volume
    return st.st_mtime_ns, st.st_size, st.st_ino


class _Reloading:
    """A value built from files, rebuilt when any of them changes (at most once per period)."""

    def __init__(self, paths: list[str]) -> None:
        self.paths = paths
        self._lock = threading.Lock()
        self._checked = time.monotonic()
        self._stamps = [_stamp(p) for p in paths]

    def _changed(self) -> list[tuple[int, int, int]] | None:
        """New stamps when a file changed since the last load; None otherwise (or too soon)."""
        now = time.monotonic()
        if now - self._checked < RELOAD_CHECK_SECONDS:
            return None
        self._checked = now
        try:
            stamps = [_stamp(p) for p in self.paths]
        except OSError as e:
            log.warning("cannot read %s: %s; keeping the loaded one", ", ".join(self.paths), e)
            return None
        return stamps if stamps != self._stamps else None


class ServingTLS(_Reloading):
    """The server's TLS context: certificate and key, and the CA that client certificates need."""

    def __init__(self, cert_file: str, key_file: str, client_ca_file: str | None = None) -> None:
        self.cert_file, self.key_file, self.client_ca_file = cert_file, key_file, client_ca_file
        for path, flag in ((cert_file, "--tls-cert-file"), (key_file, "--tls-private-key-file"), (client_ca_file, "--client-ca-file")):
            if path is not None and not Path(path).is_file():
                raise InputError(f'cannot read "{path}"', path=flag)
        super().__init__([p for p in (cert_file, key_file, client_ca_file) if p])
        self._ctx = self._build(startup=True)

    @property
    def verifies_clients(self) -> bool:
        return self.client_ca_file is not None

    def _build(self, startup: bool = False) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        try:
            ctx.load_cert_chain(self.cert_file, self.key_file)
        except (OSError, ssl.SSLError) as e:
            if not startup:
                raise
            raise InputError(f"cannot load the certificate and key: {_ssl_reason(e)}", path="--tls-cert-file") from None
        if self.client_ca_file:
            # OPTIONAL: a certificate, when sent, must verify; probes (kubelet) send none and
            # reach only the open paths (Access decides)
            ctx.verify_mode = ssl.CERT_OPTIONAL
            try:
                ctx.load_verify_locations(cafile=self.client_ca_file)
            except (OSError, ssl.SSLError) as e:
                if not startup:
                    raise
                raise InputError(f"cannot load the CA certificates: {_ssl_reason(e)}", path="--client-ca-file") from None
        return ctx

    def context(self) -> ssl.SSLContext:
        """The context for a new connection, reloaded first when the files changed."""
        with self._lock:
            stamps = self._changed()
            if stamps is not None:
                try:
                    self._ctx = self._build()
                except (OSError, ssl.SSLError) as e:
                    log.warning("certificate files changed but do not load (%s); keeping the previous ones", _ssl_reason(e))
                else:
                    self._stamps = stamps
                    log.info("reloaded the serving certificate from %s", self.cert_file)
            return self._ctx


def _ssl_reason(e: Exception) -> str:
    if isinstance(e, ssl.SSLError):
        return e.reason or str(e)
    if isinstance(e, OSError):
        return e.strerror or str(e)
    return str(e)


class TokenFile(_Reloading):
    """Bearer tokens, one per line (blank lines and ``#`` comments ignored), re-read on change."""

    def __init__(self, path: str, flag: str = "--metrics-token-file") -> None:
        self.flag = flag
        try:
            super().__init__([path])
            self._tokens = self._read(path)
        except (OSError, UnicodeDecodeError) as e:
            raise InputError(f'cannot read "{path}": {getattr(e, "strerror", None) or e}', path=flag) from None
        if not self._tokens:
            raise InputError(f'"{path}" holds no token', path=flag)

    @staticmethod
    def _read(path: str) -> list[bytes]:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
        return [ln.strip().encode() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]

    def matches(self, token: str | None) -> bool:
        if not token:
            return False
        with self._lock:
            stamps = self._changed()
            if stamps is not None:
                try:
                    tokens = self._read(self.paths[0])
                except (OSError, UnicodeDecodeError) as e:
                    log.warning("token file changed but cannot be read (%s); keeping the previous tokens", e)
                else:
                    self._tokens, self._stamps = tokens, stamps
            tokens = self._tokens
        given = token.encode("utf-8", "surrogateescape")
        ok = False
        for t in tokens:  # every token compared: the time does not tell which one was close
            ok |= hmac.compare_digest(t, given)
        return ok


@dataclass
class Access:
    """Who may call what (see the module docstring)."""

    client_certs: bool = False  # the TLS layer verifies client certificates against a CA
    metrics_tokens: TokenFile | None = None

    def allows(self, kind: str, verified_peer: bool, bearer: str | None) -> bool:
        if kind == "probe":
            return True
        if kind == "metrics":
            if not self.client_certs and self.metrics_tokens is None:
                return True
            return verified_peer or (self.metrics_tokens is not None and self.metrics_tokens.matches(bearer))
        return not self.client_certs or verified_peer

    def denial(self, path: str) -> Response:
        ways = []
        if self.client_certs:
            ways.append("a client certificate signed by --client-ca-file")
        if path == "/metrics" and self.metrics_tokens is not None:
            ways.append("a bearer token of --metrics-token-file")
        return Response.text(f"{path}: unauthorized: send {' or '.join(ways)}", 401, [("www-authenticate", "Bearer")])


# ---- command-line flags ------------------------------------------------------------------------
def from_args(args: argparse.Namespace) -> tuple[ServingTLS | None, Access]:
    """Validate the flags of ``kubesched.commands.flags.add_serving_security``: (TLS or None, the access rules)."""
    cert, key, ca = args.tls_cert_file, args.tls_private_key_file, args.client_ca_file
    if (cert is None) != (key is None):
        flag = "--tls-private-key-file" if key is None else "--tls-cert-file"
        raise InputError("--tls-cert-file and --tls-private-key-file go together", path=flag)
    if ca is not None and cert is None:
        raise InputError("client certificates need TLS: give --tls-cert-file and --tls-private-key-file", path="--client-ca-file")
    tls = ServingTLS(cert, key, ca) if cert is not None and key is not None else None
    tokens = TokenFile(args.metrics_token_file) if args.metrics_token_file is not None else None
    if tokens is not None and tls is None:
        raise InputError("a bearer token needs TLS: give --tls-cert-file and --tls-private-key-file", path="--metrics-token-file")
    return tls, Access(client_certs=ca is not None, metrics_tokens=tokens)


__all__ = ["Access", "ServingTLS", "TokenFile", "from_args"]
