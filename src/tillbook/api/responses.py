"""orjson responses; Decimals that reach the encoder become strings (never floats)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import orjson
from fastapi.responses import JSONResponse


def _default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    raise TypeError(f"cannot encode {type(value).__name__}")


def dumps(content: Any) -> bytes:
    return orjson.dumps(content, default=_default)


class JSON(JSONResponse):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return dumps(content)
