"""Purchase orders in the back-office API (``/purchase-orders``): the same service as
the pages (``orders.purchase_orders``). Reading needs ``books.read`` for the order's
branch; every change ``purchases.write`` there, and paying at receipt
``payments.make`` too. An order of a branch outside a scoped staff member's is not
found. Every POST is idempotent on ``Idempotency-Key``."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Request
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.api import envelope, routing
from tillbook.api.admin.deps import Allowed, path_id, query_id, require_json
from tillbook.api.body import openapi_body, parse_body
from tillbook.api.deps import DB
from tillbook.api.idempotent import run_admin_unit
from tillbook.api.responses import JSON
from tillbook.auth.admin import AdminContext
from tillbook.errors import NotFound, invalid
from tillbook.kit.bounds import query_value
from tillbook.kit.pagination import parse_page
from tillbook.kit.refs import ref_to_id
from tillbook.orders import purchase_orders as pos
from tillbook.orders.schemas import (
    PO_FILTERS,
    PurchaseOrderCloseIn,
    PurchaseOrderIn,
    PurchaseOrderReceiptIn,
)
from tillbook.reports import dashboard
from tillbook.unit import UnitOfWork

router = routing.admin("/purchase-orders", tags=["admin: buying"])
Reader = Annotated[AdminContext, Allowed("books.read", per_warehouse=True)]
Buyer = Annotated[AdminContext, Allowed("purchases.write", per_warehouse=True)]


async def _branch(db: Any, ctx: AdminContext, po_id: int, permission: str) -> int:
    wid: int = await db.read(lambda s: pos.warehouse_of(s, ctx.company_id, po_id))
    if not ctx.can(permission, wid):
        if ctx.can("books.read", wid):
            ctx.require(permission, wid)  # readable: say which permission is missing
        raise NotFound(f"purchase order {po_id} not found")
    return wid


@router.get("")
async def list_orders(
    ctx: Reader,
    db: DB,
    warehouse_id: str | None = None,
    status: str | None = None,
    supplier_id: str | None = None,
    page: str | None = None,
    limit: str | None = None,
) -> dict[str, Any]:
    p = parse_page(page, limit)
    wid = query_id(warehouse_id, "warehouse_id")
    sid = query_id(supplier_id, "supplier_id")
    state = query_value("status", status)
    if state is not None and state not in PO_FILTERS:
        raise invalid("status", f"must be one of {', '.join(PO_FILTERS)}")
    if wid is not None:
        ctx.require("books.read", wid)

    async def read(s: AsyncSession) -> dict[str, Any]:
        ids = (
            [wid]
            if wid is not None
            else [i for i, _n in await dashboard.warehouses(s, ctx.company_id, ctx.warehouse_id)]
        )
        return await pos.orders_page(s, ctx.company_id, ids, p, state, sid)

    return envelope.ok(await db.read(read))


@router.post("", status_code=201, openapi_extra=openapi_body(PurchaseOrderIn))
async def create_order(request: Request, ctx: Buyer) -> JSON:
    require_json(request)
    body, _raw = await parse_body(request, PurchaseOrderIn)
    wid = ref_to_id(body.warehouse_id) if body.warehouse_id is not None else None
    if wid is None and ctx.warehouse_id is not None:
        wid = ctx.warehouse_id
    ctx.require("purchases.write", wid)
    body = body.model_copy(update={"warehouse_id": wid})

    async def work(uow: UnitOfWork) -> dict[str, Any]:
        return await pos.create_order(uow, ctx.company_id, ctx.user_id, body)

    return await run_admin_unit(request, ctx, work, status=201)


@router.get("/{po_id}")
async def get_order(po_id: str, ctx: Reader, db: DB) -> dict[str, Any]:
    pid = path_id(po_id, "purchase order")
    await _branch(db, ctx, pid, "books.read")
    data = await db.read(lambda s: pos.detail(s, ctx.company_id, pid))
    return envelope.ok(data)


@router.put("/{po_id}", openapi_extra=openapi_body(PurchaseOrderIn))
async def edit_order(po_id: str, request: Request, ctx: Buyer, db: DB) -> JSON:
    pid = path_id(po_id, "purchase order")
    await _branch(db, ctx, pid, "purchases.write")
    require_json(request)
    body, _raw = await parse_body(request, PurchaseOrderIn)

    async def work(uow: UnitOfWork) -> dict[str, Any]:
        return await pos.edit_order(uow, ctx.company_id, pid, ctx.user_id, body)

    return await run_admin_unit(request, ctx, work)


@router.post("/{po_id}/order")
async def mark_ordered(po_id: str, request: Request, ctx: Buyer, db: DB) -> JSON:
    pid = path_id(po_id, "purchase order")
    await _branch(db, ctx, pid, "purchases.write")

    async def work(uow: UnitOfWork) -> dict[str, Any]:
        return await pos.mark_ordered(uow, ctx.company_id, pid, ctx.user_id)

    return await run_admin_unit(request, ctx, work)


@router.post(
    "/{po_id}/receipts", status_code=201, openapi_extra=openapi_body(PurchaseOrderReceiptIn)
)
async def receive(po_id: str, request: Request, ctx: Buyer, db: DB) -> JSON:
    pid = path_id(po_id, "purchase order")
    wid = await _branch(db, ctx, pid, "purchases.write")
    require_json(request)
    body, _raw = await parse_body(request, PurchaseOrderReceiptIn)
    if body.all_payments:
        ctx.require("payments.make", wid)

    async def work(uow: UnitOfWork) -> dict[str, Any]:
        return await pos.receive(uow, ctx.company_id, pid, ctx.user_id, body)

    return await run_admin_unit(request, ctx, work, status=201)


@router.post("/{po_id}/close", openapi_extra=openapi_body(PurchaseOrderCloseIn))
async def close_order(po_id: str, request: Request, ctx: Buyer, db: DB) -> JSON:
    pid = path_id(po_id, "purchase order")
    await _branch(db, ctx, pid, "purchases.write")
    body = PurchaseOrderCloseIn()
    if await request.body():
        require_json(request)
        body, _raw = await parse_body(request, PurchaseOrderCloseIn)

    async def work(uow: UnitOfWork) -> dict[str, Any]:
        return await pos.close_order(uow, ctx.company_id, pid, ctx.user_id, body)

    return await run_admin_unit(request, ctx, work)
