"""Conditional catalog reads: ``ETag`` and ``If-None-Match`` -> 304.

The tag is a hash of the answer's bytes (a weak tag: equal JSON, equal tag), so a
till polling an unchanged catalog page gets a 304 with no body. A change-feed page
is tagged over its records and position but not its ``sync_token``, which moves
with the clock (``kit.changes.tag_basis``): an unchanged delta is a 304 too. What
is saved is the transfer and the till's work; the database's work is saved by the
answers the worker keeps (``api.answers``), which every read here goes through."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.api import answers
from tillbook.api.answers import respond, tagged
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


def answer(request: Request, payload: dict[str, Any], basis: Any = None) -> Response:
    """``payload`` as JSON with its ETag (``answers.tagged``), or a 304
    (``answers.respond``): an answer read afresh every time."""
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


async def feed_answer(
    request: Request,
    db: Database,
    key: AuthContext,
    page: Callable[[], Awaitable[changes.Changes[Any]]],
) -> Response:
    """A page of a change feed (read from the replica when there is one) in the
    envelope, tagged over what changes it, kept by the worker when read from the
    primary (``api.answers``). One served from memory carries the ``sync_token`` of
    when it was read: older, so the next delta reads a little more, never less."""
    return await answers.of(request).serve(
        request, key, page, basis=changes.tag_basis, keep=db.replica_engine is None
    )


async def list_or_feed(
    request: Request,
    db: Database,
    key: AuthContext,
    walk: Walk | None,
    feed: Callable[[AsyncSession, Walk], Awaitable[Any]],
    listing: Callable[[], Awaitable[Any]],
) -> Response:
    """A reference list a till reads: the whole list (``listing``: a read in a
    session, ``db.read``, or of prebuilt statements, ``db.reads``), or with
    ``updated_since`` / ``cursor`` (``walk``) its change feed (``kit.changes``),
    tagged for 304s and kept by the worker (``api.answers``)."""
    if walk is not None:
        return await feed_answer(request, db, key, lambda: db.replica_read(lambda s: feed(s, walk)))
    return await answers.of(request).serve(request, key, listing)
