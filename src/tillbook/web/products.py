"""The catalog's pages: the product list, a new product with its listings, a
product's page (its edit form, its listings and price history) and archiving.

Each page parses its form, asks ``session.Page`` for its permission and makes one
call into ``catalog.products``, the service the back-office API calls; a refused
write (``ValidationFailed``) renders the form again with each message next to its
field (``_form_errors`` maps the service's field paths to the form's names)."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any

from fastapi import Request
from fastapi.responses import Response
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.datastructures import FormData

from tillbook.api import routing
from tillbook.api.admin.deps import path_id
from tillbook.api.deps import DB
from tillbook.auth.admin import AdminContext
from tillbook.catalog import prices as price_service
from tillbook.catalog import products as product_service
from tillbook.catalog import queries as catalog_queries
from tillbook.catalog.products import AdminProduct
from tillbook.catalog.schemas import ProductIn, ProductPatch
from tillbook.errors import ValidationFailed
from tillbook.kit import numerals
from tillbook.kit.bounds import query_text
from tillbook.kit.pagination import parse_page
from tillbook.reports import dashboard
from tillbook.unit import UnitOfWork
from tillbook.web.forms import (
    branches,
    decimal_field,
    id_field,
    parse_model,
    see_other,
    submit,
    text,
    values,
)
from tillbook.web.reference import reference_choices
from tillbook.web.render import render
from tillbook.web.session import Page, read_form

router = routing.pages()


@router.get("/products")
async def product_list(
    request: Request,
    ctx: Annotated[AdminContext, Page("catalog.read")],
    db: DB,
    q: str | None = None,
    page: str | None = None,
    archived: str | None = None,
) -> Response:
    paging = parse_page(page, "25")
    search = query_text("q", q, 200)
    shops = await branches(db, ctx)
    data = await db.read(
        lambda s: catalog_queries.stock_page(
            s, ctx.company_id, paging, search=search, include_archived=archived == "1"
        )
    )
    return render(
        request, "products.html", data=data, q=search or "", branches=shops, archived=archived
    )


async def _product_form(
    request: Request,
    ctx: AdminContext,
    db: Any,
    *,
    status: int = 200,
    errors: dict[str, list[str]] | None = None,
    form_values: dict[str, str] | None = None,
) -> Response:
    shops = await branches(db, ctx)
    listable = [(i, n) for i, n in shops if ctx.can("catalog.write", i)]
    return render(
        request,
        "product_new.html",
        status=status,
        choices=await reference_choices(db, ctx),
        branches=listable,
        stockable={i for i, _n in listable if ctx.can("stock.write", i)},
        errors=errors or {},
        values=form_values or {"units.0.unit_id": ""},
    )


@router.get("/products/new")
async def product_new(
    request: Request, ctx: Annotated[AdminContext, Page("catalog.write")], db: DB
) -> Response:
    return await _product_form(request, ctx, db)


def _product_body(
    form: FormData, shops: list[tuple[int, str]], errors: dict[str, list[str]]
) -> tuple[dict[str, Any], list[int]]:
    body: dict[str, Any] = {
        "name": text(form, "name"),
        "item_code": text(form, "item_code"),
        "barcodes": [
            b.strip() for b in text(form, "barcodes").replace(",", "\n").splitlines() if b.strip()
        ],
        "description": text(form, "description"),
        "additional_units": [],
        "listings": [],
    }
    for field in ("unit_id", "category_id", "brand_id", "tax_id"):
        body[field] = id_field(form, field, errors)
    for i in range(2):
        unit_id = id_field(form, f"units.{i}.unit_id", errors)
        if unit_id is None:
            continue
        body["additional_units"].append(
            {
                "unit_id": unit_id,
                "operator_value": decimal_field(form, f"units.{i}.operator_value", errors),
                "alternative_price": decimal_field(form, f"units.{i}.alternative_price", errors),
            }
        )
    order: list[int] = []
    for wid, _name in shops:
        prefix = f"list.{wid}."
        if form.get(prefix + "on") is None:
            continue
        listing: dict[str, Any] = {
            "warehouse_id": wid,
            "sales_price": decimal_field(form, prefix + "sales_price", errors),
            "purchase_price": decimal_field(form, prefix + "purchase_price", errors),
            "reorder_level": decimal_field(form, prefix + "reorder_level", errors) or Decimal(0),
        }
        quantity = decimal_field(form, prefix + "opening_stock.quantity", errors)
        if quantity is not None:
            listing["opening_stock"] = {
                "quantity": quantity,
                "unit_cost": decimal_field(form, prefix + "opening_stock.unit_cost", errors),
            }
        body["listings"].append(listing)
        order.append(wid)
    return body, order


def _form_errors(errors: dict[str, list[str]], order: list[int]) -> dict[str, list[str]]:
    """The service's field paths (``listings.0.sales_price``) as the form's names."""
    out: dict[str, list[str]] = {}
    for field, messages in errors.items():
        name = field
        if field.startswith("listings."):
            _l, index, *rest = field.split(".")
            i = numerals.whole(index)
            if i is not None and i < len(order):
                name = ".".join(["list", str(order[i]), *rest])
        elif field.startswith("additional_units."):
            name = "units." + field.removeprefix("additional_units.")
        out.setdefault(name, []).extend(messages)
    return out


@router.post("/products/new")
async def product_create(
    request: Request, ctx: Annotated[AdminContext, Page("catalog.write")], db: DB
) -> Response:
    form = await read_form(request)
    shops = await branches(db, ctx)
    errors: dict[str, list[str]] = {}
    body, order = _product_body(form, shops, errors)
    try:
        if errors:
            raise ValidationFailed(errors)
        parsed = parse_model(ProductIn, body)
        for listing in parsed.listings:
            ctx.may_list(listing.warehouse_id, opening_stock=listing.opening_stock is not None)

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            return dict(
                await product_service.create(uow, ctx.company_id, parsed, actor_id=ctx.user_id)
            )

        created, _replayed = await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await _product_form(
            request,
            ctx,
            db,
            status=422,
            errors=_form_errors(exc.errors, order),
            form_values=values(form),
        )
    return see_other(f"/products/{created['id']}?created=1")


async def product_page(
    request: Request,
    ctx: AdminContext,
    db: Any,
    pid: int,
    *,
    status: int = 200,
    errors: dict[str, list[str]] | None = None,
    form_values: dict[str, str] | None = None,
    message: str | None = None,
    listing_errors: dict[str, dict[str, list[str]]] | None = None,
    listing_values: dict[str, dict[str, str]] | None = None,
) -> Response:
    shops = await branches(db, ctx)

    async def read(s: AsyncSession) -> tuple[AdminProduct, list[dict[str, Any]]]:
        product = await product_service.view(s, await product_service.get(s, ctx.company_id, pid))
        changes = await price_service.history(s, ctx.company_id, pid, [i for i, _n in shops])
        return product, changes

    product, changes = await db.read(read)
    names = dict(await db.read(lambda s: dashboard.warehouses(s, ctx.company_id)))
    listed = {li["warehouse_id"] for li in product["listings"]}
    shown = form_values or {
        "name": product["name"],
        "item_code": product["item_code"],
        "barcodes": "\n".join(product["barcodes"]),
    }
    return render(
        request,
        "product.html",
        status=status,
        product=product,
        warehouse_names=names,
        choices=await reference_choices(db, ctx),
        can_edit=ctx.can("catalog.write"),
        errors=errors or {},
        values=shown,
        created=request.query_params.get("created") == "1",
        message=message,
        price_history=changes,
        may_edit={i for i, _n in shops if ctx.can("catalog.write", i)},
        may_price={i for i, _n in shops if ctx.can("prices.write", i)},
        may_stock={i for i, _n in shops if ctx.can("stock.write", i)},
        unlisted=[
            (i, n)
            for i, n in shops
            if i not in listed and ctx.can("catalog.write", i) and ctx.can("prices.write", i)
        ],
        listing_errors=listing_errors or {},
        listing_values=listing_values or {},
    )


@router.get("/products/{product_id}")
async def product_detail(
    request: Request,
    product_id: str,
    ctx: Annotated[AdminContext, Page("catalog.read")],
    db: DB,
) -> Response:
    return await product_page(request, ctx, db, path_id(product_id, "product"))


@router.post("/products/{product_id}/edit")
async def product_edit(
    request: Request,
    product_id: str,
    ctx: Annotated[AdminContext, Page("catalog.write")],
    db: DB,
) -> Response:
    pid = path_id(product_id, "product")
    form = await read_form(request)
    errors: dict[str, list[str]] = {}
    version = id_field(form, "version", errors)
    patch = {
        "name": text(form, "name"),
        "item_code": text(form, "item_code"),
        "barcodes": [
            b.strip() for b in text(form, "barcodes").replace(",", "\n").splitlines() if b.strip()
        ],
        "version": version,
    }
    try:
        if errors:
            raise ValidationFailed(errors)
        parsed = parse_model(ProductPatch, patch)

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            return dict(
                await product_service.update(
                    uow, ctx.company_id, pid, parsed, expected_version=None, actor_id=ctx.user_id
                )
            )

        await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await product_page(
            request, ctx, db, pid, status=422, errors=exc.errors, form_values=values(form)
        )
    return see_other(f"/products/{pid}")


@router.get("/products/{product_id}/archive")
async def product_archive_confirm(
    request: Request,
    product_id: str,
    ctx: Annotated[AdminContext, Page("catalog.write")],
    db: DB,
) -> Response:
    pid = path_id(product_id, "product")

    async def read(s: AsyncSession) -> AdminProduct:
        return await product_service.view(s, await product_service.get(s, ctx.company_id, pid))

    return render(request, "confirm_archive.html", product=await db.read(read))


@router.post("/products/{product_id}/archive")
async def product_archive(
    request: Request,
    product_id: str,
    ctx: Annotated[AdminContext, Page("catalog.write")],
) -> Response:
    pid = path_id(product_id, "product")

    async def work(uow: UnitOfWork) -> dict[str, Any]:
        return dict(await product_service.archive(uow, ctx.company_id, pid, actor_id=ctx.user_id))

    await submit(request, ctx, work)
    return see_other(f"/products/{pid}")
