"""A customer's loyalty points (DESIGN §18), for a till that has picked them: the
register shows them while online (offline it says it cannot look them up)."""

from __future__ import annotations

from typing import Any

from tillbook.api import envelope, routing
from tillbook.api.deps import DB, CurrentKey
from tillbook.api.public import openapi as r
from tillbook.errors import NotFound
from tillbook.kit.bounds import query_value
from tillbook.kit.refs import ref_to_id
from tillbook.loyalty import queries

router = routing.public(tags=["loyalty"])


@router.get("/customers/{customer_id}/loyalty", responses=r.ok(r.CustomerPoints, *r.ONE, *r.QUERY))
async def customer_points(customer_id: str, key: CurrentKey, db: DB) -> dict[str, Any]:
    """The customer's points and what they are worth today; another company's
    customer is a 404."""
    query_value("customer_id", customer_id)  # the path before anything else (DESIGN.md §12)
    cid = ref_to_id(customer_id)  # an id or an xid, as every public reference
    if cid is None:
        raise NotFound("customer not found")
    return envelope.ok(await db.read(lambda s: queries.summary(s, key.company_id, cid)))
