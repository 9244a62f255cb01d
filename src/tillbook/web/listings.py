"""A product's listings after its creation: a branch's prices, reorder level and
active flag (``catalog.products.update_listing``), and a listing in one more
branch (``add_listing``, with opening stock).

The same permissions as the back-office API (``api/admin/products.py``): a
listing's fields need ``catalog.write`` for its branch, its prices
``prices.write`` there, opening stock ``stock.write`` there. An edit carries the
listing's version from the page it was made on (a hidden field): when someone
else changed the listing since, the page says so and shows it as it is now,
instead of overwriting their change."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any

from fastapi import Request
from fastapi.responses import Response

from tillbook.api import routing
from tillbook.api.admin.deps import path_id
from tillbook.api.admin.products import PRICE_FIELDS
from tillbook.api.deps import DB
from tillbook.auth.admin import AdminContext
from tillbook.catalog import products as product_service
from tillbook.catalog.schemas import ListingIn, ListingPatch
from tillbook.errors import PreconditionFailed, ValidationFailed
from tillbook.unit import UnitOfWork
from tillbook.web.forms import decimal_field, id_field, parse_model, see_other, submit, values
from tillbook.web.products import product_page
from tillbook.web.session import Page, read_form

router = routing.pages()
Lister = Annotated[AdminContext, Page("catalog.write", per_warehouse=True)]
STALE = (
    "Someone else changed this listing while you were editing it. "
    "Here it is as it is now; make your change again."
)


@router.post("/products/{product_id}/listings/{warehouse_id}")
async def edit_listing(
    request: Request, product_id: str, warehouse_id: str, ctx: Lister, db: DB
) -> Response:
    pid = path_id(product_id, "product")
    wid = path_id(warehouse_id, "warehouse")
    ctx.require("catalog.write", wid)
    form = await read_form(request)
    errors: dict[str, list[str]] = {}
    patch: dict[str, Any] = {"version": id_field(form, "version", errors)}
    for name in ("sales_price", "purchase_price", "reorder_level"):
        if name in form:
            patch[name] = decimal_field(form, name, errors)
            if patch[name] is None and name not in errors:
                errors[name] = ["must not be empty"]
    patch["active"] = form.get("active") is not None
    if set(patch) & PRICE_FIELDS:
        ctx.require("prices.write", wid)
    try:
        if errors:
            raise ValidationFailed(errors)
        parsed = parse_model(ListingPatch, patch)

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            return dict(
                await product_service.update_listing(
                    uow,
                    ctx.company_id,
                    pid,
                    wid,
                    parsed,
                    expected_version=None,
                    actor_id=ctx.user_id,
                )
            )

        await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await product_page(
            request,
            ctx,
            db,
            pid,
            status=422,
            listing_errors={str(wid): exc.errors},
            listing_values={str(wid): values(form)},
        )
    except PreconditionFailed:
        return await product_page(request, ctx, db, pid, status=412, message=STALE)
    return see_other(f"/products/{pid}?saved={wid}#listing-{wid}")


@router.post("/products/{product_id}/listings")
async def add_listing(request: Request, product_id: str, ctx: Lister, db: DB) -> Response:
    pid = path_id(product_id, "product")
    form = await read_form(request)
    errors: dict[str, list[str]] = {}
    wid = id_field(form, "warehouse_id", errors)
    if wid is None and "warehouse_id" not in errors:
        errors["warehouse_id"] = ["choose a branch"]
    body: dict[str, Any] = {
        "warehouse_id": wid,
        "sales_price": decimal_field(form, "sales_price", errors),
        "purchase_price": decimal_field(form, "purchase_price", errors),
        "reorder_level": decimal_field(form, "reorder_level", errors) or Decimal(0),
    }
    quantity = decimal_field(form, "opening_stock.quantity", errors)
    if quantity is not None:
        body["opening_stock"] = {
            "quantity": quantity,
            "unit_cost": decimal_field(form, "opening_stock.unit_cost", errors),
        }
    try:
        if errors:
            raise ValidationFailed(errors)
        parsed = parse_model(ListingIn, body)
        ctx.may_list(parsed.warehouse_id, opening_stock=parsed.opening_stock is not None)

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            return dict(
                await product_service.add_listing(
                    uow, ctx.company_id, pid, parsed, actor_id=ctx.user_id
                )
            )

        await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await product_page(
            request,
            ctx,
            db,
            pid,
            status=422,
            listing_errors={"new": exc.errors},
            listing_values={"new": values(form)},
        )
    return see_other(f"/products/{pid}?saved={wid}#listing-{wid}")
