"""What changed in the catalog since a till last synced (``kit.changes``): products
as the key's warehouse lists them, categories, brands and taxes.

A product changes for a warehouse when the company-wide product changes (name,
barcode, tax, archiving) or when its listing there does (price, active flag, stock
level: every sale moves it); it is a tombstone once archived or no longer active
there. A product never listed in the warehouse never appears."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import case, select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.auth.context import AuthContext
from tillbook.catalog.queries import brand_item, product_item, products_with_refs, tax_item
from tillbook.kit import xid
from tillbook.kit.changes import Walk, changes
from tillbook.models import Brand, Category, Listing, Product, Tax


async def products(session: AsyncSession, key: AuthContext, walk: Walk) -> dict[str, Any]:
    changed = case(
        (Product.updated_at > Listing.updated_at, Product.updated_at), else_=Listing.updated_at
    )
    return await changes(
        session,
        walk,
        products_with_refs(key).where(Product.company_id == key.company_id),
        changed,
        Product.id,
        Product.archived_at.is_(None) & Listing.active.is_(True),
        _products,
    )


def _category(c: Category) -> dict[str, Any]:
    """Flat: a till rebuilds the tree from ``parent_id``."""
    return {
        "id": c.id,
        "xid": xid.encode(c.id),
        "name": c.name,
        "slug": c.slug,
        "parent_id": c.parent_id,
        "image": c.image,
    }


async def _products(rows: Sequence[Sequence[Any]]) -> list[dict[str, Any]]:
    return [product_item(*row) for row in rows]


async def _categories(rows: Sequence[Sequence[Any]]) -> list[dict[str, Any]]:
    return [_category(row[0]) for row in rows]


async def _brands(rows: Sequence[Sequence[Any]]) -> list[dict[str, Any]]:
    return [brand_item(row[0]) for row in rows]


async def _taxes(rows: Sequence[Sequence[Any]]) -> list[dict[str, Any]]:
    return [tax_item(row[0]) for row in rows]


async def categories(session: AsyncSession, key: AuthContext, walk: Walk) -> dict[str, Any]:
    return await changes(
        session,
        walk,
        select(Category).where(Category.company_id == key.company_id),
        Category.updated_at,
        Category.id,
        Category.archived_at.is_(None),
        _categories,
    )


async def brands(session: AsyncSession, key: AuthContext, walk: Walk) -> dict[str, Any]:
    return await changes(
        session,
        walk,
        select(Brand).where(Brand.company_id == key.company_id),
        Brand.updated_at,
        Brand.id,
        Brand.archived_at.is_(None),
        _brands,
    )


async def taxes(session: AsyncSession, key: AuthContext, walk: Walk) -> dict[str, Any]:
    return await changes(
        session,
        walk,
        select(Tax).where(Tax.company_id == key.company_id),
        Tax.updated_at,
        Tax.id,
        Tax.archived_at.is_(None),
        _taxes,
    )
