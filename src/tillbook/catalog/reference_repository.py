"""SQL of the catalog's reference data beyond the steps every edit shares
(``audit/setup_records.py``): the category tree, the products a category or brand change
touches, whether a tax has been charged, which references are still usable."""

from __future__ import annotations

from collections.abc import Collection

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.models import Brand, Category, OrderItem, Product, Tax, Unit


async def category_parents(session: AsyncSession, company_id: int) -> dict[int, int | None]:
    """id -> parent id of every category of the company (a tree of at most a few
    hundred rows: read whole to walk it)."""
    rows = await session.execute(
        select(Category.id, Category.parent_id).where(Category.company_id == company_id)
    )
    return {r[0]: r[1] for r in rows}


async def live_children(session: AsyncSession, company_id: int, category_id: int) -> int:
    """How many categories directly under this one are not archived."""
    rows = await session.execute(
        select(Category.id).where(
            Category.company_id == company_id,
            Category.parent_id == category_id,
            Category.archived_at.is_(None),
        )
    )
    return len(rows.all())


async def products_in_category(
    session: AsyncSession, company_id: int, category_id: int
) -> list[int]:
    rows = await session.execute(
        select(Product.id)
        .where(Product.company_id == company_id, Product.category_id == category_id)
        .order_by(Product.id)
    )
    return [r[0] for r in rows]


async def products_of_brand(session: AsyncSession, company_id: int, brand_id: int) -> list[int]:
    rows = await session.execute(
        select(Product.id)
        .where(Product.company_id == company_id, Product.brand_id == brand_id)
        .order_by(Product.id)
    )
    return [r[0] for r in rows]


async def tax_charged(session: AsyncSession, company_id: int, tax_id: int) -> bool:
    """Whether any order line was charged this tax."""
    found = await session.scalar(
        select(OrderItem.id)
        .where(OrderItem.company_id == company_id, OrderItem.tax_id == tax_id)
        .limit(1)
    )
    return found is not None


REFERENCE_MODELS: dict[str, type[Unit] | type[Category] | type[Brand] | type[Tax]] = {
    "unit": Unit,
    "category": Category,
    "brand": Brand,
    "tax": Tax,
}


async def states(
    session: AsyncSession, company_id: int, kind: str, ids: Collection[int]
) -> dict[int, bool]:
    """id -> archived, for the ids of this kind the company has (others absent)."""
    if not ids:
        return {}
    model = REFERENCE_MODELS[kind]
    rows = await session.execute(
        select(model.id, model.archived_at.is_not(None)).where(
            model.company_id == company_id, model.id.in_(list(ids))
        )
    )
    return {r[0]: bool(r[1]) for r in rows}
