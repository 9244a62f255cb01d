"""JSON encoding the whole service shares: orjson, Decimals as strings (never
floats), dates as ISO 8601. Responses, stored idempotent answers and outbox events
are all encoded here, so they agree byte for byte."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import orjson


def _default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    raise TypeError(f"cannot encode {type(value).__name__}")


def dumps(content: Any) -> bytes:
    return orjson.dumps(content, default=_default)
