"""The spec's pagination envelope and the page/limit parsing shared by list endpoints."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tillbook.errors import invalid
from tillbook.kit import numerals
from tillbook.kit.text import quoted

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


def envelope(page: Page, total: int, rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "current_page": page.page,
        "per_page": page.limit,
        "total": total,
        "last_page": max(1, -(-total // page.limit)),
        "data": rows,
    }
