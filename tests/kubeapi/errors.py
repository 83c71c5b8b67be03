"""metav1.Status failures shaped like kube-apiserver's (k8s.io/apimachinery/pkg/api/errors)."""

from __future__ import annotations

from typing import Any

from .resources import Resource

REASONS = {
    400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 405: "MethodNotAllowed",
    409: "Conflict", 410: "Expired", 415: "UnsupportedMediaType", 422: "Invalid", 429: "TooManyRequests",
    500: "InternalError", 503: "ServiceUnavailable", 504: "Timeout",
}


def status(code: int, message: str, reason: str | None = None, details: dict[str, Any] | None = None) -> dict:
    """A `kind: Status` failure body; details is omitted when empty, as the API server does."""
    body: dict[str, Any] = {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
        "reason": reason if reason is not None else REASONS.get(code, ""),
    }
    if details is not None:
        body["details"] = details
    body["code"] = code
    return body


class APIError(Exception):
    """A request the API refuses; carries the Status body the server sends back."""

    def __init__(self, body: dict[str, Any]) -> None:
        super().__init__(f"{body['code']} {body['reason']}: {body['message']}")
        self.body = body
        self.code: int = body["code"]


def _details(res: Resource, name: str, kind: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name}
    if res.group:
        out["group"] = res.group
    out["kind"] = kind or res.plural
    return out


def not_found(res: Resource, name: str) -> APIError:
    return APIError(status(404, f'{res.group_resource} "{name}" not found', details=_details(res, name)))


def already_exists(res: Resource, name: str) -> APIError:
    return APIError(status(409, f'{res.group_resource} "{name}" already exists', "AlreadyExists",
                           _details(res, name)))


def conflict(res: Resource, name: str, why: str, subresource: str = "") -> APIError:
    gr = res.group_resource + (f"/{subresource}" if subresource else "")
    details = _details(res, name, res.plural + (f"/{subresource}" if subresource else ""))
    return APIError(status(409, f'Operation cannot be fulfilled on {gr} "{name}": {why}', details=details))


STALE = "the object has been modified; please apply your changes to the latest version and try again"


def invalid(res: Resource, name: str, field: str, why: str) -> APIError:
    qualified = f"{res.kind}.{res.group}" if res.group else res.kind
    details = _details(res, name, res.kind)
    details["causes"] = [{"reason": "FieldValueInvalid", "message": why, "field": field}]
    return APIError(status(422, f'{qualified} "{name}" is invalid: {field}: {why}', details=details))


def bad_request(message: str) -> APIError:
    return APIError(status(400, message))


def expired(message: str) -> APIError:
    return APIError(status(410, message))


def not_served() -> APIError:
    return APIError(status(404, "the server could not find the requested resource", details={}))


def method_not_allowed() -> APIError:
    return APIError(status(405, "the server does not allow this method on the requested resource", details={}))
