"""The company's catalog in the back office: products, their listings per warehouse
and opening stock. Thin: parse, authorize, one call into ``catalog.products``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.api.admin.deps import CurrentAdmin, path_id, query_id, require_json
from tillbook.api.body import openapi_body, parse_body
from tillbook.api.deps import DB
from tillbook.catalog import products as service
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

router = APIRouter(prefix="/products", tags=["admin: catalog"])

MAX_SEARCH = stored_length(Product.name)


def _flag(value: str | None, field: str) -> bool:
    if value is None or value == "":
        return False
    text = value.strip().lower()
    if text in ("1", "true", "yes"):
        return True
    if text in ("0", "false", "no"):
        return False
    raise invalid(field, f"must be true or false (got {quoted(value)})")


def _answer(response: Response, data: dict[str, Any]) -> dict[str, Any]:
    response.headers["ETag"] = etag(int(data["version"]))
    return {"status": "success", "data": data}


@router.get("")
async def list_products(
    ctx: CurrentAdmin,
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
    data = await db.read(
        lambda s: service.page(
            s, ctx.company_id, p, search=text, warehouse_id=wh, include_archived=archived
        )
    )
    return {"status": "success", "data": data}


@router.post("", openapi_extra=openapi_body(ProductIn))
async def create_product(
    request: Request, response: Response, ctx: CurrentAdmin, db: DB
) -> dict[str, Any]:
    require_json(request)
    body, _raw = await parse_body(request, ProductIn)
    data = await db.unit(
        lambda uow: service.create(uow, ctx.company_id, body, actor_id=ctx.user_id)
    )
    response.status_code = 201
    return _answer(response, data)


@router.get("/{product_id}")
async def get_product(
    product_id: str, response: Response, ctx: CurrentAdmin, db: DB
) -> dict[str, Any]:
    pid = path_id(product_id, "product")

    async def read(s: AsyncSession) -> dict[str, Any]:
        return await service.view(s, await service.get(s, ctx.company_id, pid))

    return _answer(response, await db.read(read))


@router.patch("/{product_id}", openapi_extra=openapi_body(ProductPatch))
async def update_product(
    product_id: str, request: Request, response: Response, ctx: CurrentAdmin, db: DB
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
async def archive_product(
    product_id: str, response: Response, ctx: CurrentAdmin, db: DB
) -> dict[str, Any]:
    pid = path_id(product_id, "product")
    data = await db.unit(
        lambda uow: service.archive(uow, ctx.company_id, pid, actor_id=ctx.user_id)
    )
    return _answer(response, data)


@router.post("/{product_id}/listings", openapi_extra=openapi_body(ListingIn))
async def add_listing(
    product_id: str, request: Request, response: Response, ctx: CurrentAdmin, db: DB
) -> dict[str, Any]:
    pid = path_id(product_id, "product")
    require_json(request)
    body, _raw = await parse_body(request, ListingIn)
    data = await db.unit(
        lambda uow: service.add_listing(uow, ctx.company_id, pid, body, actor_id=ctx.user_id)
    )
    response.status_code = 201
    return _answer(response, data)


@router.patch("/{product_id}/listings/{warehouse_id}", openapi_extra=openapi_body(ListingPatch))
async def update_listing(
    product_id: str,
    warehouse_id: str,
    request: Request,
    response: Response,
    ctx: CurrentAdmin,
    db: DB,
) -> dict[str, Any]:
    pid = path_id(product_id, "product")
    wid = path_id(warehouse_id, "warehouse")
    require_json(request)
    body, _raw = await parse_body(request, ListingPatch)
    expected = parse_if_match(request.headers.get("if-match"))

    async def write(uow: UnitOfWork) -> dict[str, Any]:
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
    product_id: str, warehouse_id: str, request: Request, ctx: CurrentAdmin, db: DB
) -> dict[str, Any]:
    pid = path_id(product_id, "product")
    wid = path_id(warehouse_id, "warehouse")
    require_json(request)
    body, _raw = await parse_body(request, OpeningStockIn)
    data = await db.unit(
        lambda uow: service.add_opening_stock(
            uow, ctx.company_id, pid, wid, body, actor_id=ctx.user_id
        )
    )
    return {"status": "success", "data": data}
