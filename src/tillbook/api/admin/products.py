"""The company's catalog in the back office: products, their listings per warehouse
and opening stock. Thin: parse, authorize, one call into ``catalog.products``.

Who may (``auth/roles.py``): anyone reads (``catalog.read``); a product's
definition is company-wide ``catalog.write`` (a manager scoped to one warehouse is
refused, even for a product listed in their warehouse only: the name, item code
and barcodes are every branch's). A listing is one warehouse's: ``catalog.write``
for that warehouse, ``prices.write`` there for its prices, ``stock.write`` there
for opening stock; a create with listings needs the same for each of them. Every
POST is idempotent on ``Idempotency-Key`` (``api.idempotent.run_admin_unit``)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.api import routing
from tillbook.api.admin.deps import Allowed, path_id, query_id, require_json
from tillbook.api.body import openapi_body, parse_body
from tillbook.api.deps import DB
from tillbook.api.envelope import ok
from tillbook.api.idempotent import run_admin_unit
from tillbook.api.responses import JSON
from tillbook.auth.admin import AdminContext
from tillbook.catalog import products as service
from tillbook.catalog.products import AdminListing, AdminProduct
from tillbook.catalog.schemas import (
    ListingIn,
    ListingPatch,
    OpeningStockIn,
    ProductIn,
    ProductPatch,
)
from tillbook.errors import invalid
from tillbook.kit.bounds import query_text, stored_length
from tillbook.kit.pagination import parse_page
from tillbook.kit.text import quoted
from tillbook.kit.versions import etag, parse_if_match
from tillbook.models import Product
from tillbook.unit import UnitOfWork

router = routing.admin("/products", tags=["admin: catalog"])

MAX_SEARCH = stored_length(Product.name)
# The fields of a listing that are its prices (``prices.write``); the others
# (reorder level, active) are the catalog's (``catalog.write``).
PRICE_FIELDS = frozenset({"sales_price", "purchase_price", "mrp"})

Reader = Annotated[AdminContext, Allowed("catalog.read")]
Definer = Annotated[AdminContext, Allowed("catalog.write")]
Lister = Annotated[AdminContext, Allowed("catalog.write", per_warehouse=True)]
Stocker = Annotated[AdminContext, Allowed("stock.write", per_warehouse=True)]


def _flag(value: str | None, field: str) -> bool:
    if value is None or value == "":
        return False
    text = value.strip().lower()
    if text in ("1", "true", "yes"):
        return True
    if text in ("0", "false", "no"):
        return False
    raise invalid(field, f"must be true or false (got {quoted(value)})")


def _answer(response: Response, data: AdminProduct | AdminListing) -> dict[str, Any]:
    """A product or a listing, with its version as the ``ETag``."""
    response.headers["ETag"] = etag(data["version"])
    return ok(data)


def _etag(body: dict[str, Any]) -> dict[str, str]:
    return {"ETag": etag(int(body["data"]["version"]))}


@router.get("")
async def list_products(
    ctx: Reader,
    db: DB,
    page: str | None = None,
    limit: str | None = None,
    search: str | None = None,
    warehouse_id: str | None = None,
    include_archived: str | None = None,
) -> dict[str, Any]:
    p = parse_page(page, limit)
    text = query_text("search", search, MAX_SEARCH)
    wh = query_id(warehouse_id, "warehouse_id")
    archived = _flag(include_archived, "include_archived")
    data = await db.replica_read(
        lambda s: service.page(
            s, ctx.company_id, p, search=text, warehouse_id=wh, include_archived=archived
        )
    )
    return ok(data)


@router.post("", status_code=201, openapi_extra=openapi_body(ProductIn))
async def create_product(request: Request, ctx: Definer) -> JSON:
    require_json(request)
    body, _raw = await parse_body(request, ProductIn)
    for listing in body.listings:
        ctx.may_list(listing.warehouse_id, opening_stock=listing.opening_stock is not None)

    async def write(uow: UnitOfWork) -> dict[str, Any]:
        return ok(await service.create(uow, ctx.company_id, body, actor_id=ctx.user_id))

    return await run_admin_unit(request, ctx, write, status=201, headers=_etag)


@router.get("/{product_id}")
async def get_product(product_id: str, response: Response, ctx: Reader, db: DB) -> dict[str, Any]:
    pid = path_id(product_id, "product")

    async def read(s: AsyncSession) -> AdminProduct:
        return await service.view(s, await service.get(s, ctx.company_id, pid))

    return _answer(response, await db.read(read))


@router.patch("/{product_id}", openapi_extra=openapi_body(ProductPatch))
async def update_product(
    product_id: str, request: Request, response: Response, ctx: Definer, db: DB
) -> dict[str, Any]:
    pid = path_id(product_id, "product")
    require_json(request)
    body, _raw = await parse_body(request, ProductPatch)
    expected = parse_if_match(request.headers.get("if-match"))
    data = await db.unit(
        lambda uow: service.update(
            uow, ctx.company_id, pid, body, expected_version=expected, actor_id=ctx.user_id
        )
    )
    return _answer(response, data)


@router.post("/{product_id}/archive")
async def archive_product(product_id: str, request: Request, ctx: Definer) -> JSON:
    pid = path_id(product_id, "product")

    async def write(uow: UnitOfWork) -> dict[str, Any]:
        return ok(await service.archive(uow, ctx.company_id, pid, actor_id=ctx.user_id))

    return await run_admin_unit(request, ctx, write, headers=_etag)


@router.post("/{product_id}/listings", status_code=201, openapi_extra=openapi_body(ListingIn))
async def add_listing(product_id: str, request: Request, ctx: Lister) -> JSON:
    pid = path_id(product_id, "product")
    require_json(request)
    body, _raw = await parse_body(request, ListingIn)
    ctx.may_list(body.warehouse_id, opening_stock=body.opening_stock is not None)

    async def write(uow: UnitOfWork) -> dict[str, Any]:
        return ok(await service.add_listing(uow, ctx.company_id, pid, body, actor_id=ctx.user_id))

    return await run_admin_unit(request, ctx, write, status=201, headers=_etag)


@router.patch("/{product_id}/listings/{warehouse_id}", openapi_extra=openapi_body(ListingPatch))
async def update_listing(
    product_id: str,
    warehouse_id: str,
    request: Request,
    response: Response,
    ctx: Lister,
    db: DB,
) -> dict[str, Any]:
    """Prices (``sales_price``, ``purchase_price``, ``mrp``) need ``prices.write`` for
    the warehouse, the other fields ``catalog.write`` there."""
    pid = path_id(product_id, "product")
    wid = path_id(warehouse_id, "warehouse")
    require_json(request)
    body, _raw = await parse_body(request, ListingPatch)
    sent = body.model_fields_set - {"version"}
    if sent & PRICE_FIELDS:
        ctx.require("prices.write", wid)
    if sent - PRICE_FIELDS or not sent:
        ctx.require("catalog.write", wid)
    expected = parse_if_match(request.headers.get("if-match"))

    async def write(uow: UnitOfWork) -> AdminListing:
        return await service.update_listing(
            uow,
            ctx.company_id,
            pid,
            wid,
            body,
            expected_version=expected,
            actor_id=ctx.user_id,
        )

    return _answer(response, await db.unit(write))


@router.post(
    "/{product_id}/listings/{warehouse_id}/opening-stock",
    openapi_extra=openapi_body(OpeningStockIn),
)
async def add_opening_stock(
    product_id: str, warehouse_id: str, request: Request, ctx: Stocker
) -> JSON:
    pid = path_id(product_id, "product")
    wid = path_id(warehouse_id, "warehouse")
    require_json(request)
    body, _raw = await parse_body(request, OpeningStockIn)
    ctx.require("stock.write", wid)

    async def write(uow: UnitOfWork) -> dict[str, Any]:
        return ok(
            await service.add_opening_stock(
                uow, ctx.company_id, pid, wid, body, actor_id=ctx.user_id
            )
        )

    return await run_admin_unit(request, ctx, write)
