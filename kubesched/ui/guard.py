"""Who may talk to `kubesched ui`: the browser tab its user opened, nobody else.

The UI listens on loopback, where every web page the user visits can send it requests. Three
checks, in the order a request meets them (as Jupyter's server does):

- **Host**: the ``Host`` header must be a name the server listens under (loopback names by
  default). A DNS-rebinding page (``evil.example`` resolved to 127.0.0.1) sends its own name, so
  it is refused before anything is read.
- **Origin**: an API request that a browser marks as coming from another origin (``Origin``
  that is not this server, or ``Sec-Fetch-Site`` other than ``same-origin``/``none``) is refused,
  reads included: another page on localhost is *same-site* for cookies, not same-origin.
- **Token**: a random token made per run and printed in the URL. Opening ``/?token=…`` sets it
  as a ``SameSite=Strict``, ``HttpOnly`` cookie (named for the port: cookies do not tell ports
  apart) and redirects to ``/``; the page's requests carry the cookie. Scripts can send
  ``Authorization: Bearer TOKEN`` (or ``token TOKEN``) instead. Every ``/api/`` request and the
  page itself need it; the static files (the built JavaScript and CSS, public code) do not.

Refusals are HTTP 403 with the usual one-line JSON error, before the app sees the request.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import secrets
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import orjson

from kubesched.errors import InputError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
TOKEN_ENV = "KUBESCHED_UI_TOKEN"


def new_token() -> str:
    return secrets.token_urlsafe(32)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_wildcard(host: str) -> bool:
    return host in ("0.0.0.0", "::", "")


def _host_header(name: str, port: int) -> str:
    name = f"[{name}]" if ":" in name and not name.startswith("[") else name
    return name if port == 80 else f"{name}:{port}"


@dataclass(frozen=True)
class Access:
    """The token and the ``Host`` values the server answers to."""

    token: str
    hosts: frozenset[str]  # exact Host header values, ports included (lower case)
    cookie: str  # the cookie that carries the token

    @classmethod
    def for_listen(cls, host: str, port: int, token: str, extra_hosts: Iterable[str] = ()) -> Access:
        """Loopback names, the listen address itself unless it is a wildcard, and ``extra_hosts``
        (``NAME`` or ``NAME:PORT``; a name without a port gets the listen port)."""
        names = list(LOOPBACK_NAMES)
        if not is_wildcard(host):
            names.append(host.strip("[]"))
        hosts = {_host_header(n, port) for n in names}
        for h in extra_hosts:
            name, sep, p = h.rpartition(":") if not h.endswith("]") else ("", "", "")
            if sep and p.isdigit() and "]" not in p:
                hosts.add(_host_header(name.strip("[]"), int(p)))
            else:
                hosts.add(_host_header(h.strip("[]"), port))
        return cls(token=token, hosts=frozenset(x.lower() for x in hosts), cookie=f"kubesched-ui-token-{port}")

    def token_ok(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())


def _headers(scope: Scope) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in scope.get("headers") or []:
        key = k.decode("latin-1").lower()
        if key in out:  # a repeated Host/Origin/Cookie header is not something a browser sends
            out[key] = out[key] + ("; " if key == "cookie" else ",") + v.decode("latin-1")
        else:
            out[key] = v.decode("latin-1")
    return out


def _cookie(header: str | None, name: str) -> str | None:
    for part in (header or "").split(";"):
        k, sep, v = part.strip().partition("=")
        if sep and k == name:
            return v
    return None


def _bearer(header: str | None) -> str | None:
    if not header:
        return None
    scheme, _, value = header.partition(" ")
    return value.strip() if scheme.lower() in ("bearer", "token") else None


async def _answer(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _refuse(send: Send, message: str, field: str) -> None:
    body = orjson.dumps({"error": message, "field": field})
    await _answer(send, 403, body, [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())])


class Guard:
    """ASGI middleware in front of the UI's app: Host, then Origin, then the token."""

    def __init__(self, app: ASGIApp, access: Access) -> None:
        self.app = app
        self.access = access

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        h = _headers(scope)
        host = h.get("host", "").lower()
        if host not in self.access.hosts:
            await _refuse(send, f"Host {host!r} is not a name this server answers to (DNS rebinding protection)", "Host")
            return
        path: str = scope.get("path", "")
        if path.startswith("/static/"):
            await self.app(scope, receive, send)
            return
        origin = h.get("origin")
        if origin is not None and origin.lower() != f"http://{host}":
            await _refuse(send, f"cross-origin request from {origin!r} refused", "Origin")
            return
        site = h.get("sec-fetch-site")
        if site is not None and site not in ("same-origin", "none"):
            await _refuse(send, f"cross-site request ({site}) refused", "Sec-Fetch-Site")
            return
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        in_url = (query.get("token") or [None])[0]
        if path == "/" and scope.get("method") == "GET" and self.access.token_ok(in_url):
            # the printed URL: keep the token in a cookie and take it out of the address bar
            cookie = f"{self.access.cookie}={self.access.token}; Path=/; HttpOnly; SameSite=Strict"
            await _answer(send, 303, b"", [(b"location", b"/"), (b"set-cookie", cookie.encode()), (b"content-length", b"0")])
            return
        given = _bearer(h.get("authorization")) or _cookie(h.get("cookie"), self.access.cookie) or in_url
        if not self.access.token_ok(given):
            await _refuse(
                send, "missing or wrong token: open the URL kubesched ui printed (it carries ?token=)", "token"
            )
            return
        await self.app(scope, receive, send)


@dataclass(frozen=True)
class Roots:
    """The folders the Open box may read: those the command line named, the working directory,
    and ``--allow-open`` folders. A path outside is refused before it is looked at, so the answer
    says nothing about what exists elsewhere."""

    folders: tuple[Path, ...]

    @classmethod
    def of(cls, paths: Iterable[str | Path]) -> Roots:
        out: list[Path] = []
        for p in paths:
            real = Path(os.path.realpath(Path(p).expanduser()))
            folder = real if real.is_dir() or not real.exists() else real.parent
            if folder not in out:
                out.append(folder)
        return cls(tuple(out))

    def check(self, path: str, field: str = "path") -> Path:
        real = Path(os.path.realpath(Path(path).expanduser()))
        if not any(real.is_relative_to(r) for r in self.folders):
            shown = ", ".join(str(r) for r in self.folders) or "none"
            raise InputError(
                f"{path!r} is outside the folders this UI may open ({shown}); start kubesched ui with "
                "--allow-open DIR to widen them",
                path=field,
            )
        return real
