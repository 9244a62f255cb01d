"""Conditional catalog reads: ``ETag`` and ``If-None-Match`` -> 304.

The tag is a hash of the answer's bytes (a weak tag: equal JSON, equal tag), so a
till polling an unchanged catalog page gets a 304 with no body. The query still
runs; what is saved is the transfer and the till's work."""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.api.responses import dumps
from tillbook.db import Database
from tillbook.kit.changes import Walk

IF_NONE_MATCH = {
    "name": "If-None-Match",
    "in": "header",
    "required": False,
    "description": "the ETag of an earlier answer: 304 with no body while it is unchanged",
    "schema": {"type": "string", "maxLength": 1000},
}
# ``openapi_extra`` of a route that answers through ``answer``: documents the header.
CONDITIONAL = {"parameters": [IF_NONE_MATCH]}


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


async def list_or_feed(
    request: Request,
    db: Database,
    walk: Walk | None,
    feed: Callable[[AsyncSession, Walk], Awaitable[Any]],
    listing: Callable[[AsyncSession], Awaitable[Any]],
) -> Response:
    """A reference list a till reads: the whole list, or with ``updated_since`` /
    ``cursor`` (``walk``) its change feed (``kit.changes``), tagged for 304s."""
    read: Callable[[AsyncSession], Awaitable[Any]] = (
        listing if walk is None else (lambda s: feed(s, walk))
    )
    return answer(request, {"status": "success", "data": await db.read(read)})
