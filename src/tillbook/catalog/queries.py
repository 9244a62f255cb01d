"""Read-only catalog queries, scoped to the key's company or warehouse.

Every query filters on the key's company (and, for products, on its warehouse),
so an id from elsewhere reads exactly like an id that does not exist.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from sqlalchemy import ColumnElement, Select, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute

from tillbook.auth.context import AuthContext
from tillbook.errors import NotFound
from tillbook.kit import xid
from tillbook.kit.money import number
from tillbook.kit.pagination import Page, envelope
from tillbook.models import (
    Brand,
    Category,
    Product,
    ProductUnit,
    StockBatch,
    Unit,
    Warehouse,
)


async def warehouses(session: AsyncSession, key: AuthContext) -> list[dict[str, Any]]:
    """Only the key's own warehouse: a key is bound to one branch."""
    wh = (
        await session.execute(select(Warehouse).where(Warehouse.id == key.warehouse_id))
    ).scalar_one()
    return [
        {
            "id": wh.id,
            "xid": xid.encode(wh.id),
            "name": wh.name,
            "allow_negative_stock": wh.allow_negative_stock,
        }
    ]


# --- search -------------------------------------------------------------------------


def _contains(text: str) -> str:
    """A LIKE pattern matching ``text`` anywhere, with the user's ``%`` and ``_`` literal."""
    escaped = text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _matches(text: str, *columns: InstrumentedAttribute[Any]) -> ColumnElement[bool]:
    """Case-insensitive substring match on any of ``columns`` (SQLite and PostgreSQL)."""
    pattern = _contains(text)
    return or_(*(func.lower(col).like(pattern, escape="\\") for col in columns))


# --- products -----------------------------------------------------------------------


def _ref(obj: Category | Brand | None) -> dict[str, Any] | None:
    return None if obj is None else {"xid": xid.encode(obj.id), "name": obj.name}


def _unit(unit: Unit | None) -> dict[str, Any] | None:
    if unit is None:
        return None
    return {"xid": xid.encode(unit.id), "name": unit.name, "short_name": unit.short_name}


def _product_item(
    p: Product, category: Category | None, brand: Brand | None, unit: Unit | None
) -> dict[str, Any]:
    return {
        "id": p.id,
        "xid": xid.encode(p.id),
        "name": p.name,
        "slug": p.slug,
        "item_code": p.item_code,
        "product_type": p.product_type,
        "sales_price": number(p.sales_price),
        "purchase_price": number(p.purchase_price),
        "mrp": None if p.mrp is None else number(p.mrp),
        "current_stock": number(p.current_stock),
        "category": _ref(category),
        "brand": _ref(brand),
        "unit": _unit(unit),
    }


def _products_with_refs() -> Select[Product, Category | None, Brand | None, Unit | None]:
    """Products with their category, brand and unit in one statement (no N+1)."""
    return (
        select(Product, Category, Brand, Unit)
        .outerjoin(Category, Category.id == Product.category_id)
        .outerjoin(Brand, Brand.id == Product.brand_id)
        .outerjoin(Unit, Unit.id == Product.unit_id)
    )


def _in_warehouse(key: AuthContext) -> list[ColumnElement[bool]]:
    return [Product.company_id == key.company_id, Product.warehouse_id == key.warehouse_id]


async def products(
    session: AsyncSession,
    key: AuthContext,
    page: Page,
    *,
    search: str | None = None,
    category_id: int | None = None,
    brand_id: int | None = None,
) -> dict[str, Any]:
    """One page of the warehouse's products, in id order.

    A plain listing is a count and a page query (the page walks the primary key and
    stops at its limit). A search finds its matches once, in one statement: the
    matching ids, the page of them with their total (``count(*) OVER ()`` over the
    ids alone), the page's rows joined to their category, brand and unit; the count
    query is left for a page past the end."""
    conds = _in_warehouse(key)
    if search:
        conds.append(_matches(search, Product.name, Product.item_code, Product.barcode))
    if category_id is not None:
        conds.append(Product.category_id == category_id)
    if brand_id is not None:
        conds.append(Product.brand_id == brand_id)
    if search:
        # Materialised, so that PostgreSQL finds the matches through the trigram
        # indexes before ordering them: inlined, the planner walks the primary key
        # of every product for the LIMIT and filters each row (22 ms against 2).
        ids = (
            select(Product.id)
            .where(*conds)
            .cte("search_ids")
            .prefix_with("MATERIALIZED", dialect="postgresql")
        )
        matched = (
            select(ids.c.id, func.count().over().label("total"))
            .order_by(ids.c.id)
            .limit(page.limit)
            .offset(page.offset)
            .subquery("matched")
        )
        found = (
            await session.execute(
                _products_with_refs()
                .add_columns(matched.c.total)
                .join(matched, matched.c.id == Product.id)
                .order_by(Product.id)
            )
        ).all()
        if found or page.offset == 0:
            total = found[0][4] if found else 0
            return envelope(page, total, [_product_item(p, c, b, u) for p, c, b, u, _ in found])
    total = (
        await session.execute(select(func.count()).select_from(Product).where(*conds))
    ).scalar_one()
    rows: list[dict[str, Any]] = []
    if page.offset < total:
        result = await session.execute(
            _products_with_refs()
            .where(*conds)
            .order_by(Product.id)
            .limit(page.limit)
            .offset(page.offset)
        )
        rows = [_product_item(p, c, b, u) for p, c, b, u in result]
    return envelope(page, total, rows)


def _utc_iso(value: dt.datetime) -> str:
    """ISO 8601 in UTC with a ``Z``; SQLite hands back naive UTC timestamps."""
    aware = value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)
    return aware.replace(microsecond=0).isoformat().replace("+00:00", "Z")


async def product(
    session: AsyncSession, key: AuthContext, product_id: int | None
) -> dict[str, Any]:
    """One product of the key's warehouse with its additional units and open batches."""
    found = None
    if product_id is not None:
        found = (
            await session.execute(
                _products_with_refs().where(Product.id == product_id, *_in_warehouse(key))
            )
        ).first()
    if found is None:
        raise NotFound("product not found")
    p, category, brand, unit = found
    units = await session.execute(
        select(ProductUnit, Unit)
        .join(Unit, Unit.id == ProductUnit.unit_id)
        .where(ProductUnit.product_id == p.id)
        .order_by(ProductUnit.id)
    )
    batches = (
        await session.execute(
            select(StockBatch)
            .where(
                StockBatch.product_id == p.id,
                StockBatch.warehouse_id == key.warehouse_id,
                StockBatch.quantity_remaining != 0,
            )
            .order_by(StockBatch.id)
        )
    ).scalars()
    data = _product_item(p, category, brand, unit)
    data["description"] = p.description
    data["additional_units"] = [
        {
            "child_unit_id": xid.encode(u.id),
            "operator": pu.operator,
            "operator_value": number(pu.operator_value),
            "alternative_price": number(pu.alternative_price),
            "unit": {"name": u.name, "short_name": u.short_name},
        }
        for pu, u in units
    ]
    data["batches"] = [
        {
            "id": b.id,
            "batch_number": b.batch_number,
            "expiry_date": None if b.expiry_date is None else b.expiry_date.isoformat(),
            "quantity_remaining": number(b.quantity_remaining),
            "unit_cost": number(b.unit_cost),
            "received_at": _utc_iso(b.created_at),
        }
        for b in batches
    ]
    return data


# --- categories and brands -----------------------------------------------------------


def _category_tree(
    categories: list[Category],
) -> tuple[dict[int, Category], Callable[[Category], dict[str, Any]]]:
    """The company's categories by id, and a function rendering one with its subtree."""
    by_id = {c.id: c for c in categories}
    children: dict[int, list[Category]] = defaultdict(list)
    for c in categories:
        if c.parent_id is not None:
            children[c.parent_id].append(c)

    def node(c: Category, seen: frozenset[int] = frozenset()) -> dict[str, Any]:
        seen = seen | {c.id}  # a parent loop in bad data must not recurse forever
        return {
            "id": c.id,
            "xid": xid.encode(c.id),
            "name": c.name,
            "slug": c.slug,
            "parent_id": c.parent_id,
            "image": c.image,
            "children": [node(k, seen) for k in children[c.id] if k.id not in seen],
        }

    return by_id, node


async def _company_categories(session: AsyncSession, key: AuthContext) -> list[Category]:
    return list(
        (
            await session.execute(
                select(Category)
                .where(Category.company_id == key.company_id)
                .order_by(Category.name, Category.id)
            )
        ).scalars()
    )


async def categories(session: AsyncSession, key: AuthContext) -> list[dict[str, Any]]:
    """The company's category tree: roots, each with nested ``children``."""
    cats = await _company_categories(session, key)
    by_id, node = _category_tree(cats)
    return [node(c) for c in cats if c.parent_id is None or c.parent_id not in by_id]


async def category(
    session: AsyncSession, key: AuthContext, category_id: int | None
) -> dict[str, Any]:
    cats = await _company_categories(session, key) if category_id is not None else []
    by_id, node = _category_tree(cats)
    if category_id is None or category_id not in by_id:
        raise NotFound("category not found")
    return node(by_id[category_id])


def _brand(b: Brand) -> dict[str, Any]:
    return {"id": b.id, "xid": xid.encode(b.id), "name": b.name, "slug": b.slug, "image": b.image}


async def brands(session: AsyncSession, key: AuthContext) -> list[dict[str, Any]]:
    rows = (
        await session.execute(
            select(Brand).where(Brand.company_id == key.company_id).order_by(Brand.name, Brand.id)
        )
    ).scalars()
    return [_brand(b) for b in rows]


async def brand(session: AsyncSession, key: AuthContext, brand_id: int | None) -> dict[str, Any]:
    found = None
    if brand_id is not None:
        found = (
            await session.execute(
                select(Brand).where(Brand.id == brand_id, Brand.company_id == key.company_id)
            )
        ).scalar_one_or_none()
    if found is None:
        raise NotFound("brand not found")
    return _brand(found)
