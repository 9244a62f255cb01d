"""Stock: levels per branch (with a low-stock filter), a product's batches with
their expiry and its movements, and recording a stock adjustment.

Reading needs ``catalog.read`` (a scoped staff member sees their own branch);
an adjustment needs ``stock.write`` for its branch, and is made by the till's
own rule (``inventory.adjustments.create_adjustment``, through
``adjust_as_staff``, which acts for the branch and audits the change)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Request
from fastapi.responses import Response
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.api import routing
from tillbook.api.admin.deps import path_id
from tillbook.api.deps import DB
from tillbook.auth.admin import AdminContext
from tillbook.catalog import products as product_service
from tillbook.errors import ValidationFailed
from tillbook.inventory import queries as stock_queries
from tillbook.inventory.adjustments import adjust_as_staff
from tillbook.inventory.schemas import StockAdjustmentIn
from tillbook.kit import bounds
from tillbook.kit.pagination import parse_page
from tillbook.reports import dashboard
from tillbook.unit import UnitOfWork
from tillbook.web.forms import (
    branches,
    decimal_field,
    id_field,
    parse_model,
    query_id,
    see_other,
    submit,
    text,
    values,
)
from tillbook.web.render import render
from tillbook.web.session import Page, read_form

router = routing.pages()
Reader = Annotated[AdminContext, Page("catalog.read")]


def _branch(raw: str | None, shops: list[tuple[int, str]]) -> list[int]:
    """The branches a list covers: the one asked for (if it is one of the staff
    member's), else all of theirs."""
    ids = [i for i, _n in shops]
    wid = query_id(raw)
    return [wid] if wid in ids else ids


@router.get("/stock")
async def levels(request: Request, ctx: Reader, db: DB) -> Response:
    params = request.query_params
    paging = parse_page(params.get("page"), "50")
    search = bounds.query_text("q", params.get("q"), 200)
    low = params.get("low") == "1"
    shops = await branches(db, ctx)
    data = await db.read(
        lambda s: stock_queries.levels_page(
            s,
            ctx.company_id,
            _branch(params.get("warehouse_id"), shops),
            paging,
            search=search,
            low_only=low,
        )
    )
    return render(
        request,
        "stock.html",
        data=data,
        branches=shops,
        warehouse_names=dict(shops),
        values={"q": search or "", "warehouse_id": params.get("warehouse_id") or ""},
        low=low,
    )


async def _product_stock(
    request: Request,
    ctx: AdminContext,
    db: Any,
    pid: int,
    *,
    status: int = 200,
    errors: dict[str, list[str]] | None = None,
    form_values: dict[str, str] | None = None,
    done: dict[str, Any] | None = None,
) -> Response:
    shops = await branches(db, ctx)
    ids = [i for i, _n in shops]
    paging = parse_page(request.query_params.get("page"), "25")

    async def read(s: AsyncSession) -> dict[str, Any]:
        product = await product_service.view(s, await product_service.get(s, ctx.company_id, pid))
        return {
            "product": product,
            "batches": await stock_queries.open_batches(s, ctx.company_id, pid, ids),
            "movements": await stock_queries.movements_page(s, ctx.company_id, pid, ids, paging),
        }

    data = await db.read(read)
    # A cashier sends a customer to the branch that has it: every branch's stock.
    everywhere = dict(shops)
    if ctx.can("stock.lookup"):
        everywhere = dict(await db.read(lambda s: dashboard.warehouses(s, ctx.company_id, None)))
    listed = {li["warehouse_id"] for li in data["product"]["listings"]}
    adjustable = [(i, n) for i, n in shops if i in listed and ctx.can("stock.write", i)]
    return render(
        request,
        "stock_product.html",
        status=status,
        warehouse_names=dict(shops),
        every_branch=everywhere,
        adjustable=adjustable,
        errors=errors or {},
        values=form_values or {"adjustment_type": "subtract"},
        done=done,
        **data,
    )


@router.get("/stock/products/{product_id}")
async def product_stock(request: Request, product_id: str, ctx: Reader, db: DB) -> Response:
    return await _product_stock(request, ctx, db, path_id(product_id, "product"))


@router.post("/stock/products/{product_id}/adjust")
async def adjust(
    request: Request,
    product_id: str,
    ctx: Annotated[AdminContext, Page("stock.write", per_warehouse=True)],
    db: DB,
) -> Response:
    pid = path_id(product_id, "product")
    form = await read_form(request)
    errors: dict[str, list[str]] = {}
    warehouse_id = id_field(form, "warehouse_id", errors)
    if warehouse_id is None and "warehouse_id" not in errors:
        errors["warehouse_id"] = ["choose a branch"]
    quantity = decimal_field(form, "quantity", errors)
    body: dict[str, Any] = {
        "product_id": str(pid),
        "quantity": quantity,
        "adjustment_type": text(form, "adjustment_type"),
        "notes": text(form, "notes") or None,
        "batch_number": text(form, "batch_number") or None,
        "expiry_date": text(form, "expiry_date") or None,
    }
    try:
        if warehouse_id is not None:
            ctx.require("stock.write", warehouse_id)
        if errors:
            raise ValidationFailed(errors)
        parsed = parse_model(StockAdjustmentIn, body)
        assert warehouse_id is not None
        wid = warehouse_id

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            return dict(await adjust_as_staff(uow, ctx.company_id, wid, ctx.user_id, parsed))

        done, _replayed = await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await _product_stock(
            request, ctx, db, pid, status=422, errors=exc.errors, form_values=values(form)
        )
    return see_other(f"/stock/products/{pid}?adjusted={done['adjustment_id']}")
