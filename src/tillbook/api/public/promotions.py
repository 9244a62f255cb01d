"""The branch's promotions (DESIGN §18), for a register or till that prices its own
baskets: the whole list, or with ``updated_since`` / ``cursor`` the change feed a
register keeps in IndexedDB. The server prices every sale by the same rules
(``orders/promotions.py``); a client's totals that disagree are refused."""

from __future__ import annotations

from fastapi import Request, Response

from tillbook.api import conditional, routing
from tillbook.api.conditional import CONDITIONAL, list_or_feed
from tillbook.api.deps import DB, CurrentKey
from tillbook.api.public import openapi as r
from tillbook.promotions import service

router = routing.public(tags=["promotions"])


@router.get(
    "/promotions",
    responses=r.cached(r.PromotionList, r.PromotionChanges),
    openapi_extra=CONDITIONAL,
)
async def list_promotions(
    request: Request,
    key: CurrentKey,
    db: DB,
    updated_since: str | None = None,
    cursor: str | None = None,
    limit: str | None = None,
) -> Response:
    """With ``updated_since`` or ``cursor``: the change feed (``kit.changes``)."""
    walk = conditional.feed_walk(key, "promotions", updated_since, cursor, limit)
    return await list_or_feed(
        request,
        db,
        key,
        walk,
        lambda s, w: service.feed(s, key, w),
        lambda: db.read(lambda s: service.branch_promotions(s, key)),
    )
