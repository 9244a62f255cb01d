"""Searching text columns the same way on SQLite and PostgreSQL: case-insensitive,
anywhere in the value, with the user's ``%`` and ``_`` taken literally (a search for
"50%" finds "50% off", not everything)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, func, or_


def contains(text: str) -> str:
    """A LIKE pattern matching ``text`` anywhere (escape character ``\\``)."""
    escaped = text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def matches(text: str, *columns: Any) -> ColumnElement[bool]:
    """Any of ``columns`` contains ``text``, case-insensitively. PostgreSQL answers
    it through the trigram indexes on ``lower(column)`` where they exist."""
    return like_any(contains(text), *columns)


def like_any(pattern: Any, *columns: Any) -> ColumnElement[bool]:
    """Any of ``columns``, lower-cased, is LIKE ``pattern`` (a ``contains`` pattern,
    or a bound parameter of one in a statement built once)."""
    return or_(*(func.lower(col).like(pattern, escape="\\") for col in columns))
