"""Conditional catalog reads: ``ETag`` and ``If-None-Match`` -> 304.

The tag is a hash of the answer's bytes (a weak tag: equal JSON, equal tag), so a
till polling an unchanged catalog page gets a 304 with no body. The query still
runs; what is saved is the transfer and the till's work."""

from __future__ import annotations

import hashlib
from typing import Any

from fastapi import Request, Response

from tillbook.api.responses import dumps

IF_NONE_MATCH = {
    "name": "If-None-Match",
    "in": "header",
    "required": False,
    "description": "the ETag of an earlier answer: 304 with no body while it is unchanged",
    "schema": {"type": "string", "maxLength": 1000},
}


def _opaque(tag: str) -> str:
    tag = tag.strip()
    return tag[2:] if tag.startswith("W/") else tag


def answer(request: Request, payload: dict[str, Any]) -> Response:
    body = dumps(payload)
    tag = f'W/"{hashlib.sha256(body).hexdigest()[:32]}"'
    wanted = request.headers.get("if-none-match")
    if wanted is not None:
        tags = {_opaque(t) for t in wanted.split(",")}
        if "*" in tags or _opaque(tag) in tags:
            return Response(status_code=304, headers={"ETag": tag})
    return Response(body, media_type="application/json", headers={"ETag": tag})
