"""orjson responses, encoded by ``kit.jsonio`` (Decimals as strings, never floats)."""

from __future__ import annotations

from typing import Any

from fastapi.responses import JSONResponse

from tillbook.kit.jsonio import dumps

__all__ = ["JSON", "dumps"]


class JSON(JSONResponse):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return dumps(content)
