"""The spec's pagination envelope and the page/limit parsing shared by list endpoints."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

from typing_extensions import TypedDict

from tillbook.errors import invalid
from tillbook.kit import numerals
from tillbook.kit.text import quoted

T = TypeVar("T")

DEFAULT_LIMIT = 20
MAX_LIMIT = 100


@dataclass(frozen=True)
class Page:
    page: int
    limit: int

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.limit


def parse_int(name: str, raw: str | None, default: int) -> int:
    if raw is None or raw == "":
        return default
    # ASCII digits only: "２", " 1", "+1", "1_000" are refused (kit/numerals.py). Up
    # to 100 of them, so that a huge limit is clamped below, not refused.
    value = numerals.whole(raw, max_digits=100)
    if value is None:
        raise invalid(name, f"must be a whole number (digits 0-9), got {quoted(raw)}")
    return value


def parse_page(page: str | None, limit: str | None) -> Page:
    """Limits above the maximum are clamped (and reported in ``per_page``), not refused:
    catalog sync clients in the field ask for 500 or 1000."""
    p = parse_int("page", page, 1)
    n = parse_int("limit", limit, DEFAULT_LIMIT)
    if p < 1:
        raise invalid("page", f"must be 1 or more, got {p}")
    if p > 1_000_000:
        raise invalid("page", f"must be at most 1000000, got {p}")
    if n < 1:
        raise invalid("limit", f"must be 1 or more, got {n}")
    return Page(page=p, limit=min(n, MAX_LIMIT))


class Paged(TypedDict, Generic[T]):
    """The spec's pagination envelope around one page of ``T``."""

    current_page: int
    per_page: int
    total: int
    last_page: int
    data: list[T]


def paged(page: Page, total: int, rows: list[T]) -> Paged[T]:
    """``rows`` as the page ``page`` of ``total``."""
    return {
        "current_page": page.page,
        "per_page": page.limit,
        "total": total,
        "last_page": max(1, -(-total // page.limit)),
        "data": rows,
    }


def envelope(page: Page, total: int, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """``paged`` for the views whose rows are not typed yet (issue 23: each domain
    moves to ``paged`` as its answers get their shapes)."""
    return cast(dict[str, Any], paged(page, total, rows))
