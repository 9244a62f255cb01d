"""Conditional catalog reads: ``ETag`` and ``If-None-Match`` -> 304.

The tag is a hash of the answer's bytes (a weak tag: equal JSON, equal tag), so a
till polling an unchanged catalog page gets a 304 with no body. A change-feed page
is tagged over its records and position but not its ``sync_token``, which moves
with the clock (``kit.changes.tag_basis``): an unchanged delta is a 304 too. The
query still runs; what is saved is the transfer and the till's work."""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.api import envelope
from tillbook.api.responses import dumps
from tillbook.auth.context import AuthContext
from tillbook.config import cursor_key
from tillbook.db import Database
from tillbook.kit import changes
from tillbook.kit.changes import Walk
from tillbook.kit.cursors import Scope

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


def tagged(payload: dict[str, Any], basis: Any = None) -> tuple[bytes, str]:
    """``payload`` as JSON and its ETag: a hash of ``basis`` when given (what the
    answer depends on), else of the body."""
    body = dumps(payload)
    tag = f'W/"{hashlib.sha256(body if basis is None else dumps(basis)).hexdigest()[:32]}"'
    return body, tag


def respond(request: Request, body: bytes, tag: str) -> Response:
    """``body`` with its ETag, or a 304 when the request already holds that tag."""
    wanted = request.headers.get("if-none-match")
    if wanted is not None:
        tags = {_opaque(t) for t in wanted.split(",")}
        if "*" in tags or _opaque(tag) in tags:
            return Response(status_code=304, headers={"ETag": tag})
    return Response(body, media_type="application/json", headers={"ETag": tag})


def answer(request: Request, payload: dict[str, Any], basis: Any = None) -> Response:
    """``payload`` as JSON with its ETag (``tagged``), or a 304 (``respond``)."""
    return respond(request, *tagged(payload, basis))


def feed_walk(
    key: AuthContext,
    feed: str,
    updated_since: str | None,
    cursor: str | None,
    limit: str | None,
) -> Walk | None:
    """The change feed ``feed`` a request asks for (``kit.changes.parse``); its
    cursors are signed for this feed, the key's company and its warehouse (a
    product's listing, a customer's balance are per warehouse)."""
    scope = Scope(cursor_key(), ("feed", feed, key.company_id, key.warehouse_id))
    return changes.parse(updated_since, cursor, limit, scope)


def feed_answer(request: Request, page: changes.Changes[Any]) -> Response:
    """A page of a change feed in the envelope, tagged over what changes it."""
    return answer(request, envelope.ok(page), envelope.ok(changes.tag_basis(page)))


async def list_or_feed(
    request: Request,
    db: Database,
    walk: Walk | None,
    feed: Callable[[AsyncSession, Walk], Awaitable[Any]],
    listing: Callable[[], Awaitable[Any]],
) -> Response:
    """A reference list a till reads: the whole list (``listing``: a read in a
    session, ``db.read``, or of prebuilt statements, ``db.reads``), or with
    ``updated_since`` / ``cursor`` (``walk``) its change feed (``kit.changes``),
    tagged for 304s."""
    if walk is not None:
        return feed_answer(request, await db.replica_read(lambda s: feed(s, walk)))
    return answer(request, envelope.ok(await listing()))
