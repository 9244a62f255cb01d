"""Catalog reads: warehouses, products, categories, brands.

Query parameters arrive as plain strings and are parsed here, so a bad value is a
422 naming the field (never a 500); a path id that cannot name a record is a 404.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from tillbook.api.deps import DB, CurrentKey
from tillbook.api.public import openapi as r
from tillbook.catalog import queries
from tillbook.errors import invalid
from tillbook.kit.bounds import query_text, query_value, stored_length
from tillbook.kit.pagination import parse_page
from tillbook.kit.refs import ref_to_id
from tillbook.models import Product

router = APIRouter(tags=["catalog"])

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
    if text is None:
        return None
    ref = ref_to_id(text)
    if ref is None:
        raise invalid(name, f"must be an xid, got {_shown(text)}")
    return ref


def _ok(data: Any) -> dict[str, Any]:
    return {"status": "success", "data": data}


@router.get("/warehouses", responses=r.ok(r.WarehouseList, *r.READ))
async def list_warehouses(key: CurrentKey, db: DB) -> dict[str, Any]:
    return _ok(await db.read(lambda s: queries.warehouses(s, key)))


@router.get("/products", responses=r.ok(r.ProductList, *r.QUERY))
async def list_products(
    key: CurrentKey,
    db: DB,
    page: str | None = None,
    limit: str | None = None,
    search: str | None = None,
    category_id: str | None = None,
    brand_id: str | None = None,
) -> dict[str, Any]:
    pg = parse_page(page, limit)
    text = _search(search)
    cat = _xid_filter("category_id", category_id)
    brand = _xid_filter("brand_id", brand_id)
    return _ok(
        await db.read(
            lambda s: queries.products(s, key, pg, search=text, category_id=cat, brand_id=brand)
        )
    )


@router.get("/products/{ref}", responses=r.ok(r.ProductResponse, *r.ONE))
async def get_product(ref: str, key: CurrentKey, db: DB) -> dict[str, Any]:
    return _ok(await db.read(lambda s: queries.product(s, key, ref_to_id(ref))))


@router.get("/categories", responses=r.ok(r.CategoryList, *r.READ))
async def list_categories(key: CurrentKey, db: DB) -> dict[str, Any]:
    return _ok(await db.read(lambda s: queries.categories(s, key)))


@router.get("/categories/{ref}", responses=r.ok(r.CategoryResponse, *r.ONE))
async def get_category(ref: str, key: CurrentKey, db: DB) -> dict[str, Any]:
    return _ok(await db.read(lambda s: queries.category(s, key, ref_to_id(ref))))


@router.get("/brands", responses=r.ok(r.BrandList, *r.READ))
async def list_brands(key: CurrentKey, db: DB) -> dict[str, Any]:
    return _ok(await db.read(lambda s: queries.brands(s, key)))


@router.get("/brands/{ref}", responses=r.ok(r.BrandResponse, *r.ONE))
async def get_brand(ref: str, key: CurrentKey, db: DB) -> dict[str, Any]:
    return _ok(await db.read(lambda s: queries.brand(s, key, ref_to_id(ref))))
