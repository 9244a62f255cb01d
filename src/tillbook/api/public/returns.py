"""Sales returns and purchase returns: record one, list them, read one."""

from __future__ import annotations

from typing import Any

from fastapi import Request, Response

from tillbook.api import envelope, routing
from tillbook.api.body import parse_body
from tillbook.api.deps import DB, CurrentKey, OrderRef
from tillbook.api.idempotent import run_write
from tillbook.api.public import openapi as r
from tillbook.api.responses import JSON
from tillbook.giftcards import guard
from tillbook.orders import queries, receipts
from tillbook.orders.returns import create_return
from tillbook.orders.schemas import ReturnIn

router = routing.public(tags=["returns"])


@router.post(
    "/sales-returns",
    openapi_extra=r.write_body(ReturnIn),
    responses=r.ok(r.ReturnCreated, *r.WRITE),
)
async def post_sales_return(request: Request, key: CurrentKey) -> JSON:
    body, raw = await parse_body(request, ReturnIn)
    # A refund onto a gift card names its code: the guessing limits apply.
    limiter = request.app.state.ratelimiter
    await guard.before(
        limiter, key, [t.gift_card_code for t in body.all_payments if t.gift_card_code]
    )
    async with guard.counting(limiter, key):
        return await run_write(
            request,
            key,
            raw,
            body.unique_id,
            lambda s: create_return(s, key, body, "sales-returns"),
            answer=envelope.flat,
        )


@router.post(
    "/purchase-returns",
    openapi_extra=r.write_body(ReturnIn),
    responses=r.ok(r.ReturnCreated, *r.WRITE),
)
async def post_purchase_return(request: Request, key: CurrentKey) -> JSON:
    body, raw = await parse_body(request, ReturnIn)
    return await run_write(
        request,
        key,
        raw,
        body.unique_id,
        lambda s: create_return(s, key, body, "purchase-returns"),
        answer=envelope.flat,
    )


@router.get(
    "/sales-returns/{order_id}/receipt",
    response_class=Response,
    responses=r.document("the return's receipt", 404, 422),
)
async def return_receipt(
    order_id: OrderRef,
    key: CurrentKey,
    db: DB,
    format: str | None = None,
    size: str | None = None,
    width: str | None = None,
) -> Response:
    """As ``GET /sales/{order_id}/receipt``: the refund tenders instead of payments."""
    options = receipts.parse_options(format, size, width, None)
    media, text = await db.read(
        lambda s: receipts.render(s, key, "sales-returns", order_id, options)
    )
    return Response(text, media_type=f"{media}; charset=utf-8")


@router.get("/sales-returns", responses=r.ok(r.OrderList, *r.QUERY))
async def list_sales_returns(
    key: CurrentKey,
    db: DB,
    dates: str | None = None,
    page: str | None = None,
    limit: str | None = None,
) -> dict[str, Any]:
    return envelope.ok(
        await db.read(lambda s: queries.order_page(s, key, "sales-returns", dates, page, limit))
    )


@router.get("/purchase-returns", responses=r.ok(r.OrderList, *r.QUERY))
async def list_purchase_returns(
    key: CurrentKey,
    db: DB,
    dates: str | None = None,
    page: str | None = None,
    limit: str | None = None,
) -> dict[str, Any]:
    return envelope.ok(
        await db.read(lambda s: queries.order_page(s, key, "purchase-returns", dates, page, limit))
    )


@router.get("/sales-returns/{order_id}", responses=r.ok(r.OrderResponse, *r.ONE))
async def get_sales_return(order_id: OrderRef, key: CurrentKey, db: DB) -> dict[str, Any]:
    """The return as its ``return.created`` event carries it: each line with the
    price, discount and tax it refunded, the return's ``tax_amount``."""
    return envelope.ok(
        await db.reads(lambda r: queries.order_detail(r, key, "sales-returns", order_id))
    )


@router.get("/purchase-returns/{order_id}", responses=r.ok(r.OrderResponse, *r.ONE))
async def get_purchase_return(order_id: OrderRef, key: CurrentKey, db: DB) -> dict[str, Any]:
    return envelope.ok(
        await db.reads(lambda r: queries.order_detail(r, key, "purchase-returns", order_id))
    )
