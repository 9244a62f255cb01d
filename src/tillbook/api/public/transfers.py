"""Stock transfers between branches: the sender dispatches, the receiver receives,
the sender may cancel before receipt (``inventory.transfers`` has the state machine)."""

from __future__ import annotations

from typing import Any

from fastapi import Request

from tillbook.api import envelope, routing
from tillbook.api.body import parse_body
from tillbook.api.deps import DB, CurrentKey
from tillbook.api.idempotent import run_write
from tillbook.api.public import openapi as r
from tillbook.api.responses import JSON
from tillbook.inventory import transfers
from tillbook.inventory.schemas import StockTransferIn, TransferCancelIn, TransferReceiptIn

router = routing.public(tags=["transfers"])


@router.post(
    "/stock-transfers",
    openapi_extra=r.write_body(StockTransferIn),
    responses=r.ok(r.TransferWritten, *r.WRITE),
)
async def post_stock_transfer(request: Request, key: CurrentKey) -> JSON:
    body, raw = await parse_body(request, StockTransferIn)
    return await run_write(
        request,
        key,
        raw,
        body.unique_id,
        lambda u: transfers.create_transfer(u, key, body),
        answer=envelope.flat,
    )


@router.get("/stock-transfers", responses=r.ok(r.TransferList, *r.QUERY))
async def list_stock_transfers(
    key: CurrentKey,
    db: DB,
    page: str | None = None,
    limit: str | None = None,
    status: str | None = None,
) -> dict[str, Any]:
    return envelope.ok(
        await db.read(lambda s: transfers.transfer_page(s, key, page, limit, status))
    )


@router.get("/stock-transfers/{ref}", responses=r.ok(r.TransferResponse, *r.ONE))
async def get_stock_transfer(ref: str, key: CurrentKey, db: DB) -> dict[str, Any]:
    return envelope.ok(await db.read(lambda s: transfers.transfer_detail(s, key, ref)))


@router.post(
    "/stock-transfers/{ref}/receive",
    openapi_extra=r.write_body(TransferReceiptIn),
    responses=r.ok(r.TransferWritten, 404, *r.WRITE),
)
async def receive_stock_transfer(ref: str, request: Request, key: CurrentKey) -> JSON:
    """Only the warehouse the transfer was sent to; once (409 after that)."""
    body, raw = await parse_body(request, TransferReceiptIn)
    return await run_write(
        request,
        key,
        raw,
        body.unique_id,
        lambda u: transfers.receive_transfer(u, key, ref, body),
        answer=envelope.flat,
    )


@router.post(
    "/stock-transfers/{ref}/cancel",
    openapi_extra=r.write_body(TransferCancelIn),
    responses=r.ok(r.TransferWritten, 404, *r.WRITE),
)
async def cancel_stock_transfer(ref: str, request: Request, key: CurrentKey) -> JSON:
    """Only the warehouse that sent it, while it is not received (409 after that)."""
    body, raw = await parse_body(request, TransferCancelIn)
    return await run_write(
        request,
        key,
        raw,
        body.unique_id,
        lambda u: transfers.cancel_transfer(u, key, ref, body),
        answer=envelope.flat,
    )
