"""Sales: record one, list them, read one."""

from __future__ import annotations

from typing import Any

from fastapi import Request, Response

from tillbook.api import answers, envelope, routing
from tillbook.api.body import parse_body
from tillbook.api.conditional import CONDITIONAL
from tillbook.api.deps import DB, CurrentKey, OrderRef
from tillbook.api.idempotent import run_write
from tillbook.api.public import openapi as r
from tillbook.api.responses import JSON
from tillbook.giftcards import guard
from tillbook.kit.bounds import query_value
from tillbook.orders import queries, receipts, sales, voids
from tillbook.orders.sales import create_sale
from tillbook.orders.schemas import SaleIn, VoidIn
from tillbook.unit import UnitOfWork

router = routing.public(tags=["sales"])


@router.post("/sales", openapi_extra=r.write_body(SaleIn), responses=r.ok(r.SaleCreated, *r.WRITE))
async def post_sale(request: Request, key: CurrentKey) -> JSON:
    body, raw = await parse_body(request, SaleIn)
    # Gift card codes among the tenders pass the guessing limits (DESIGN §18).
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
            lambda s: create_sale(s, key, body),
            answer=envelope.flat,
        )


@router.post(
    "/sales/preview",
    openapi_extra=r.write_body(SaleIn),
    responses=r.ok(r.SalePreviewResponse, 400, 415, 422),
)
async def preview_sale(request: Request, key: CurrentKey, db: DB) -> dict[str, Any]:
    """The figures POST /sales would record for this body (same pricing code),
    recording nothing: a till that tenders the previewed total is never refused."""
    body, _raw = await parse_body(request, SaleIn)
    return envelope.ok(await db.read(lambda s: sales.preview_sale(UnitOfWork(s), key, body)))


@router.post(
    "/sales/{order_id}/void",
    openapi_extra=r.write_body(VoidIn),
    responses=r.ok(r.SaleVoided, 404, *r.WRITE),
)
async def void_sale(request: Request, order_id: OrderRef, key: CurrentKey) -> JSON:
    query_value("order_id", order_id)  # the path before the body (DESIGN.md §12)
    body, raw = await parse_body(request, VoidIn)
    return await run_write(
        request,
        key,
        raw,
        body.unique_id,
        lambda uow: voids.void_sale(uow, key, order_id, body),
        answer=envelope.flat,
    )


@router.get(
    "/sales/{order_id}/receipt",
    response_class=Response,
    responses=r.document("the sale's receipt", 404, 422),
)
async def sale_receipt(
    order_id: OrderRef,
    key: CurrentKey,
    db: DB,
    format: str | None = None,
    size: str | None = None,
    width: str | None = None,
    tendered: str | None = None,
) -> Response:
    """``format=html`` (``size=80mm|a4``) or ``format=text`` (``width=42|48``, for
    ESC/POS printers); ``tendered``: the cash handed over, to print the change."""
    options = receipts.parse_options(format, size, width, tendered)
    media, text = await db.read(lambda s: receipts.render(s, key, "sales", order_id, options))
    return Response(text, media_type=f"{media}; charset=utf-8")


@router.get("/sales", responses=r.ok(r.OrderList, *r.QUERY))
async def list_sales(
    key: CurrentKey,
    db: DB,
    dates: str | None = None,
    page: str | None = None,
    limit: str | None = None,
) -> dict[str, Any]:
    return envelope.ok(
        await db.read(lambda s: queries.order_page(s, key, "sales", dates, page, limit))
    )


@router.get(
    "/sales/{order_id}",
    responses=r.cached(r.OrderResponse, errors=r.ONE),
    openapi_extra=CONDITIONAL,
)
async def get_sale(request: Request, order_id: OrderRef, key: CurrentKey, db: DB) -> Response:
    """A sale, kept by the worker until the company next writes (``api.answers``)."""
    return await answers.of(request).serve(
        request,
        key,
        lambda: db.reads(lambda r: queries.order_detail(r, key, "sales", order_id)),
    )
