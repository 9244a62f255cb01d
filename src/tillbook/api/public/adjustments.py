"""Stock adjustments and price adjustments: record one, list them."""

from __future__ import annotations

from typing import Any

from fastapi import Request

from tillbook.api import envelope, routing
from tillbook.api.body import parse_body
from tillbook.api.deps import DB, CurrentKey
from tillbook.api.idempotent import run_write
from tillbook.api.public import openapi as r
from tillbook.api.responses import JSON
from tillbook.catalog import prices
from tillbook.catalog.schemas import PriceAdjustmentIn
from tillbook.inventory import adjustments
from tillbook.inventory.schemas import StockAdjustmentIn

router = routing.public(tags=["adjustments"])


@router.post(
    "/stock-adjustments",
    openapi_extra=r.write_body(StockAdjustmentIn),
    responses=r.ok(r.StockAdjustmentCreated, *r.WRITE),
)
async def post_stock_adjustment(request: Request, key: CurrentKey) -> JSON:
    body, raw = await parse_body(request, StockAdjustmentIn)
    return await run_write(
        request,
        key,
        raw,
        body.unique_id,
        lambda s: adjustments.create_adjustment(s, key, body),
        answer=envelope.flat,
    )


@router.get("/stock-adjustments", responses=r.ok(r.StockAdjustmentList, *r.QUERY))
async def list_stock_adjustments(
    key: CurrentKey, db: DB, page: str | None = None, limit: str | None = None
) -> dict[str, Any]:
    return envelope.ok(await db.read(lambda s: adjustments.adjustment_page(s, key, page, limit)))


@router.post(
    "/price-adjustments",
    openapi_extra=r.write_body(PriceAdjustmentIn),
    responses=r.ok(r.PriceAdjustmentCreated, *r.WRITE),
)
async def post_price_adjustment(request: Request, key: CurrentKey) -> JSON:
    body, raw = await parse_body(request, PriceAdjustmentIn)
    return await run_write(
        request,
        key,
        raw,
        body.unique_id,
        lambda s: prices.create_price_adjustment(s, key, body),
        answer=envelope.flat,
    )


@router.get("/price-adjustments", responses=r.ok(r.PriceAdjustmentList, *r.QUERY))
async def list_price_adjustments(
    key: CurrentKey, db: DB, page: str | None = None, limit: str | None = None
) -> dict[str, Any]:
    return envelope.ok(await db.read(lambda s: prices.price_adjustment_page(s, key, page, limit)))
