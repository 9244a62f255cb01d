"""Purchases: record one, list them, read one."""

from __future__ import annotations

from typing import Any

from fastapi import Request

from tillbook.api import envelope, routing
from tillbook.api.body import parse_body
from tillbook.api.deps import DB, CurrentKey, OrderRef
from tillbook.api.idempotent import run_write
from tillbook.api.public import openapi as r
from tillbook.api.responses import JSON
from tillbook.orders import queries
from tillbook.orders.purchases import create_purchase
from tillbook.orders.schemas import PurchaseIn

router = routing.public(tags=["purchases"])


@router.post(
    "/purchases",
    openapi_extra=r.write_body(PurchaseIn),
    responses=r.ok(r.PurchaseCreated, *r.WRITE),
)
async def post_purchase(request: Request, key: CurrentKey) -> JSON:
    body, raw = await parse_body(request, PurchaseIn)
    return await run_write(
        request,
        key,
        raw,
        body.unique_id,
        lambda s: create_purchase(s, key, body),
        answer=envelope.flat,
    )


@router.get("/purchases", responses=r.ok(r.OrderList, *r.QUERY))
async def list_purchases(
    key: CurrentKey,
    db: DB,
    dates: str | None = None,
    page: str | None = None,
    limit: str | None = None,
) -> dict[str, Any]:
    return envelope.ok(
        await db.read(lambda s: queries.order_page(s, key, "purchases", dates, page, limit))
    )


@router.get("/purchases/{order_id}", responses=r.ok(r.OrderResponse, *r.ONE))
async def get_purchase(order_id: OrderRef, key: CurrentKey, db: DB) -> dict[str, Any]:
    return envelope.ok(
        await db.reads(lambda r: queries.order_detail(r, key, "purchases", order_id))
    )
