"""Catalog reads: warehouses, products, categories, brands.

Query parameters arrive as plain strings and are parsed here, so a bad value is a
422 naming the field (never a 500); a path id that cannot name a record is a 404.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request, Response

from tillbook.api import answers, conditional, envelope, routing
from tillbook.api.conditional import CONDITIONAL, answer, list_or_feed
from tillbook.api.deps import DB, CurrentKey
from tillbook.api.public import openapi as r
from tillbook.catalog import changes, queries
from tillbook.errors import invalid
from tillbook.kit.bounds import query_text, query_value, stored_length
from tillbook.kit.pagination import parse_page
from tillbook.kit.refs import ref_to_id
from tillbook.models import Product

router = routing.public(tags=["catalog"])

# A search matches names (the longest text searched): a longer one matches nothing.
MAX_SEARCH = stored_length(Product.name)


def _shown(raw: str) -> str:
    return repr(raw if len(raw) <= 40 else raw[:40] + "...")


def _search(raw: str | None) -> str | None:
    """The search text, or None when absent or blank."""
    return query_text("search", raw, MAX_SEARCH)


def _xid_filter(name: str, raw: str | None) -> int | None:
    """A filter naming a record by xid (or id); one that cannot name any record is a 422.
    A well-formed reference to another company's record simply matches nothing."""
    text = query_value(name, raw)
    if text is None or raw is None:
        return None
    ref = ref_to_id(raw)  # not stripped: " 1" names no record (kit/numerals.py)
    if ref is None:
        raise invalid(name, f"must be an xid, got {_shown(text)}")
    return ref


@router.get("/warehouses", responses=r.ok(r.WarehouseList, *r.READ))
async def list_warehouses(key: CurrentKey, db: DB) -> dict[str, Any]:
    return envelope.ok(await db.reads(lambda r: queries.warehouses(r, key)))


# Catalog reads answer an ETag; If-None-Match with it is a 304 (``api.conditional``).
@router.get(
    "/products",
    responses=r.cached(r.ProductList, r.ProductChanges),
    openapi_extra=CONDITIONAL,
)
async def list_products(
    request: Request,
    key: CurrentKey,
    db: DB,
    page: str | None = None,
    limit: str | None = None,
    search: str | None = None,
    category_id: str | None = None,
    brand_id: str | None = None,
    updated_since: str | None = None,
    cursor: str | None = None,
) -> Response:
    """With ``updated_since`` or ``cursor``: the change feed of the warehouse's
    products (``kit.changes``; archived or deactivated ones as tombstones)."""
    walk = conditional.feed_walk(key, "products", updated_since, cursor, limit)
    if walk is not None:
        return await conditional.feed_answer(
            request, db, key, lambda: db.replica_reads(lambda r: changes.products(r, key, walk))
        )
    pg = parse_page(page, limit)
    text = _search(search)
    cat = _xid_filter("category_id", category_id)
    brand = _xid_filter("brand_id", brand_id)
    return await answers.of(request).serve(
        request,
        key,
        lambda: db.reads(
            lambda r: queries.products(r, key, pg, search=text, category_id=cat, brand_id=brand)
        ),
    )


@router.get(
    "/products/{ref}",
    responses=r.cached(r.ProductResponse, errors=r.ONE),
    openapi_extra=CONDITIONAL,
)
async def get_product(request: Request, ref: str, key: CurrentKey, db: DB) -> Response:
    """A product, kept by the worker until the company next writes (``api.answers``)."""
    return await answers.of(request).serve(
        request,
        key,
        lambda: db.reads(lambda r: queries.product(r, key, ref_to_id(ref))),
    )


@router.get(
    "/categories",
    responses=r.cached(r.CategoryList, r.CategoryChanges),
    openapi_extra=CONDITIONAL,
)
async def list_categories(
    request: Request,
    key: CurrentKey,
    db: DB,
    updated_since: str | None = None,
    cursor: str | None = None,
    limit: str | None = None,
) -> Response:
    """The tree; with ``updated_since`` or ``cursor``, the flat change feed."""
    walk = conditional.feed_walk(key, "categories", updated_since, cursor, limit)
    return await list_or_feed(
        request,
        db,
        key,
        walk,
        lambda s, w: changes.categories(s, key, w),
        lambda: db.reads(lambda r: queries.categories(r, key)),
    )


@router.get(
    "/categories/{ref}",
    responses=r.cached(r.CategoryResponse, errors=r.ONE),
    openapi_extra=CONDITIONAL,
)
async def get_category(request: Request, ref: str, key: CurrentKey, db: DB) -> Response:
    return answer(
        request, envelope.ok(await db.reads(lambda r: queries.category(r, key, ref_to_id(ref))))
    )


@router.get(
    "/brands",
    responses=r.cached(r.BrandList, r.BrandChanges),
    openapi_extra=CONDITIONAL,
)
async def list_brands(
    request: Request,
    key: CurrentKey,
    db: DB,
    updated_since: str | None = None,
    cursor: str | None = None,
    limit: str | None = None,
) -> Response:
    walk = conditional.feed_walk(key, "brands", updated_since, cursor, limit)
    return await list_or_feed(
        request,
        db,
        key,
        walk,
        lambda s, w: changes.brands(s, key, w),
        lambda: db.reads(lambda r: queries.brands(r, key)),
    )


@router.get(
    "/brands/{ref}",
    responses=r.cached(r.BrandResponse, errors=r.ONE),
    openapi_extra=CONDITIONAL,
)
async def get_brand(request: Request, ref: str, key: CurrentKey, db: DB) -> Response:
    return answer(
        request, envelope.ok(await db.reads(lambda r: queries.brand(r, key, ref_to_id(ref))))
    )
