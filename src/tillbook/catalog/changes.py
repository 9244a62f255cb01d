"""What changed in the catalog since a till last synced (``kit.changes``): products
as the key's warehouse lists them, categories, brands and taxes.

A product changes for a warehouse when the company-wide product changes (name,
barcode, tax, archiving) or when its listing there does (price, active flag, stock
level: every sale moves it); it is a tombstone once archived or no longer active
there. A product never listed in the warehouse never appears."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import ColumnElement, CompoundSelect, Row, case, select, union_all
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.auth.context import AuthContext
from tillbook.catalog import views
from tillbook.catalog.queries import (
    COMPANY_ID,
    WAREHOUSE_ID,
    brand_item,
    category_fields,
    codes_and_units_of,
    listed_items,
    product_head,
    tax_item,
    with_refs,
)
from tillbook.db import Reads, Record
from tillbook.kit.changes import AFTER, Changes, Walk, changes, prebuilt, read
from tillbook.models import Brand, Category, Listing, Product, StockMovement, Tax
from tillbook.models.base import table_of

# The products' feed, built once (``kit.changes.prebuilt``): a register's first sync
# of a 10,000-product branch is a hundred pages, each one statement on PostgreSQL
# (the page, its barcodes and units, and the database's time), where building,
# compiling and reading it through a session cost more than its rows.
#
# The page walks the listings' ids (the same value as the product's), and the
# product's id range is given as well: with only ``products.id > after`` the
# planner's merge join read the branch's listings from the first one every page,
# so a page cost its position (PostgreSQL 1.7 ms of work at the 50th page of
# 10,000, 0.75 ms with both ranges at any page).
#
# A delta (a till polling from its last ``sync_token``) is served by the products
# ``_touched`` names instead (``kit.changes.Prebuilt.recent``): a listing's change
# time moves with every sale and cannot be indexed (``models.Listing``), so the walk
# read every listing of the branch to compare it, with nothing changed as with
# much: 3.9-4.2 ms of PostgreSQL's CPU a poll at 10,000 products, 0.2-0.3 now
# (bench/README.md).


def _touched(recent: Callable[[Any], ColumnElement[bool]], after: Any) -> CompoundSelect[Any]:
    """The ids after ``after`` of the branch's products that may have changed
    recently (``recent`` bounds a time column): the product edited (its change time),
    the listing edited (its edit time: price, active flag, reorder level), or its
    stock moved (a movement in the branch: every change of a stock level writes one,
    in the same transaction). Each is a range of an index; together they hold every
    product whose change time (the later of the product's and the listing's) is
    recent. A product may come more than once (``UNION ALL``: the read stops at
    ``kit.changes.TOUCHED_MOST`` of them instead of gathering them all to remove
    the repeats)."""
    return union_all(
        select(Product.id).where(
            Product.company_id == COMPANY_ID, recent(Product.updated_at), Product.id > after
        ),
        select(Listing.product_id).where(
            Listing.company_id == COMPANY_ID,
            Listing.warehouse_id == WAREHOUSE_ID,
            recent(Listing.edited_at),
            Listing.product_id > after,
        ),
        select(StockMovement.product_id).where(
            StockMovement.company_id == COMPANY_ID,
            StockMovement.warehouse_id == WAREHOUSE_ID,
            recent(StockMovement.created_at),
            StockMovement.product_id > after,
        ),
    )


_PRODUCTS = prebuilt(
    with_refs(WAREHOUSE_ID).where(Product.company_id == COMPANY_ID, Product.id > AFTER),
    case((Product.updated_at > Listing.updated_at, Product.updated_at), else_=Listing.updated_at),
    Listing.product_id,
    Product.archived_at.is_(None) & Listing.active.is_(True),
    lambda ids: codes_and_units_of(ids, COMPANY_ID),
    touched=_touched,
)


async def products(reads: Reads, key: AuthContext, walk: Walk) -> Changes[views.ProductChange]:
    def render(
        rows: Sequence[Record], lists: Mapping[str, list[Record]]
    ) -> list[views.ProductListItem]:
        return listed_items([product_head(row) for row in rows], lists["codes"], lists["units"])

    params = {COMPANY_ID.key: key.company_id, WAREHOUSE_ID.key: key.warehouse_id}
    return await read(reads, walk, _PRODUCTS, params, render)


async def _archivable(
    session: AsyncSession,
    key: AuthContext,
    walk: Walk,
    model: type[Category] | type[Brand] | type[Tax],
    item: Callable[[Record], Mapping[str, Any]],
) -> Changes[Any]:
    """The company's rows of ``model`` as ``item`` shows them (from the table's
    columns by name, as the lists read them): archived ones (never deleted) as
    tombstones."""

    async def render(rows: Sequence[Row[Any]]) -> list[Mapping[str, Any]]:
        return [item(row._mapping) for row in rows]

    return await changes(
        session,
        walk,
        select(*table_of(model).c).where(model.company_id == key.company_id),
        model.updated_at,
        model.id,
        model.archived_at.is_(None),
        render,
    )


async def categories(
    session: AsyncSession, key: AuthContext, walk: Walk
) -> Changes[views.FlatCategory]:
    return await _archivable(session, key, walk, Category, category_fields)


async def brands(session: AsyncSession, key: AuthContext, walk: Walk) -> Changes[views.BrandChange]:
    return await _archivable(session, key, walk, Brand, brand_item)


async def taxes(session: AsyncSession, key: AuthContext, walk: Walk) -> Changes[views.TaxChange]:
    return await _archivable(session, key, walk, Tax, tax_item)
