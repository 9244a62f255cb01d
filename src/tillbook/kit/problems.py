"""Collecting a request's field errors, to report them all in one 422.

Every domain resolves the references of a request body (a party, a tender's
payment mode, a tax, a unit) before it writes anything; each bad one is added
here under its field path, and the request is refused once with all of them.
"""

from __future__ import annotations

from tillbook.errors import ValidationFailed


class Problems:
    """Collects every bad reference of a request, to report them all at once."""

    def __init__(self) -> None:
        self.errors: dict[str, list[str]] = {}

    def add(self, field: str, message: str) -> None:
        self.errors.setdefault(field, []).append(message)

    def raise_if_any(self) -> None:
        if self.errors:
            raise ValidationFailed(self.errors)
