"""Errors as exceptions: every non-2xx answer becomes an ``ApiError`` subclass
carrying the status, the service's message and, on a 422, the field errors."""

from __future__ import annotations

from typing import Any


class TillbookError(Exception):
    """Base of every error this package raises."""


class TransportError(TillbookError):
    """No answer: the connection failed or timed out, after every retry."""


class ApiError(TillbookError):
    """The service answered with an error envelope ``{"status": "error", ...}``."""

    def __init__(
        self,
        status: int,
        message: str,
        errors: dict[str, list[str]] | None = None,
        *,
        request_id: str | None = None,
        retry_after: float | None = None,
        body: Any = None,
    ) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message
        self.errors: dict[str, list[str]] = errors or {}
        self.request_id = request_id
        self.retry_after = retry_after
        self.body = body


class BadRequest(ApiError):
    """400: malformed JSON."""


class AuthenticationError(ApiError):
    """401: missing or wrong keys, a bad, stale or replayed signature."""


class PermissionDenied(ApiError):
    """403: subscription expired (public API) or permission missing (back office)."""


class NotFound(ApiError):
    """404: no such record in the key's warehouse or company."""


class Conflict(ApiError):
    """409: a concurrent request holds the same records or idempotency token."""


class PreconditionFailed(ApiError):
    """412 or 428: a stale or missing version on an edit."""


class ValidationError(ApiError):
    """422: ``errors`` maps each bad field (dotted path) to its problems; nothing
    was recorded."""


class RateLimited(ApiError):
    """429: the key's rate limit; ``retry_after`` seconds."""


class ServiceUnavailable(ApiError):
    """503: the database is unavailable; ``retry_after`` seconds."""


class ServerError(ApiError):
    """500: an unexpected failure (``request_id`` to quote)."""


_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequest,
    401: AuthenticationError,
    403: PermissionDenied,
    404: NotFound,
    409: Conflict,
    412: PreconditionFailed,
    428: PreconditionFailed,
    422: ValidationError,
    429: RateLimited,
    500: ServerError,
    503: ServiceUnavailable,
}


def error_for(status: int, body: Any, headers: dict[str, str]) -> ApiError:
    message = ""
    errors: dict[str, list[str]] | None = None
    if isinstance(body, dict):
        message = str(body.get("message", ""))
        raw = body.get("errors")
        if isinstance(raw, dict):
            errors = {str(k): [str(m) for m in v] for k, v in raw.items() if isinstance(v, list)}
    retry_after = parse_retry_after(headers.get("retry-after"))
    cls = _BY_STATUS.get(status, ApiError)
    return cls(
        status,
        message or f"HTTP {status}",
        errors,
        request_id=headers.get("x-request-id"),
        retry_after=retry_after,
        body=body,
    )


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (the service sends whole seconds)."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return seconds if seconds >= 0 else None
