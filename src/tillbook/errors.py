"""The error tree: every domain error carries its HTTP status.

Services raise these; one handler in ``app.py`` renders the spec's envelope
``{"status": "error", "message": ...}``. Nothing else builds error bodies.
"""

from __future__ import annotations

from typing import Any


class TillbookError(Exception):
    status_code = 500
    message = "internal error"

    def __init__(self, message: str | None = None, *, headers: dict[str, str] | None = None):
        self.message = message or self.message
        self.headers = headers or {}
        super().__init__(self.message)

    def body(self) -> dict[str, Any]:
        return {"status": "error", "message": self.message}


class BadRequest(TillbookError):
    status_code = 400
    message = "malformed request"


class Unauthorized(TillbookError):
    status_code = 401
    message = "authentication failed"


class Forbidden(TillbookError):
    status_code = 403
    message = "forbidden"


class NotFound(TillbookError):
    status_code = 404
    message = "not found"


class Conflict(TillbookError):
    status_code = 409
    message = "conflict"


class PreconditionFailed(TillbookError):
    """412: an edit based on a copy of a record that has changed since (If-Match)."""

    status_code = 412
    message = "the record changed since it was read"


class PreconditionRequired(TillbookError):
    """428: an edit that does not say which version of the record it is based on."""

    status_code = 428
    message = "send If-Match with the record's ETag"


class UnsupportedMediaType(TillbookError):
    status_code = 415
    message = "Content-Type must be application/json"


class ValidationFailed(TillbookError):
    """422 with a field-by-field ``errors`` object (DESIGN.md §8)."""

    status_code = 422

    def __init__(self, errors: dict[str, list[str]], message: str | None = None):
        self.errors = errors
        if message is None:
            first_field, first_msgs = next(iter(errors.items()))
            message = f"{first_field}: {first_msgs[0]}"
            if len(errors) > 1:
                message += f" (and {len(errors) - 1} more)"
        super().__init__(message)

    def body(self) -> dict[str, Any]:
        return {"status": "error", "message": self.message, "errors": self.errors}


def invalid(field: str, message: str) -> ValidationFailed:
    return ValidationFailed({field: [message]})


class Duplicate(ValidationFailed):
    """409 naming the field: a name or code the company already uses for another
    record of the same kind (a shop expects one "Box" unit, one "cash" mode)."""

    status_code = 409


def duplicate(field: str, message: str) -> Duplicate:
    return Duplicate({field: [message]})


class Unprocessable(TillbookError):
    """422 without field detail: a request that is well-formed but cannot be honoured."""

    status_code = 422


class LedgerImbalance(TillbookError):
    status_code = 422
    message = "journal entry does not balance; the transaction was rolled back"

    def __init__(self, reason: str, entries: list[dict[str, Any]], narration: str):
        self.reason = reason
        self.entries = entries
        self.narration = narration
        super().__init__(f"journal entry does not balance: {reason}; nothing was recorded")


class RateLimited(TillbookError):
    status_code = 429
    message = "rate limit exceeded"


class ServiceUnavailable(TillbookError):
    status_code = 503
    message = "the database is unavailable; retry shortly"
