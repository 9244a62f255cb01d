"""Seeding the catalog for the demo (``tillbook demo``), tests and the bench: units,
categories, brands, taxes, parties and products written as given, in one call each.

This path skips the API's checks, its audit records and its ``product.updated``
events on purpose: seed data is made up to be right, and a test shop of a thousand
products should not queue a thousand events. A change from a client (the admin
API, the back office, the CLI, an import) goes through ``catalog.products``,
``catalog.reference`` or ``catalog.import_export`` instead, which check it whole,
audit it and announce it.
"""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.catalog.rows import define_product, list_product
from tillbook.catalog.rules import slugify
from tillbook.inventory.service import Listed
from tillbook.models import Brand, Category, Tax, Unit, User
from tillbook.unit import UnitOfWork


async def create_unit(session: AsyncSession, company_id: int, name: str, short: str) -> Unit:
    unit = Unit(company_id=company_id, name=name, short_name=short)
    session.add(unit)
    await session.flush()
    return unit


async def create_category(
    session: AsyncSession,
    company_id: int,
    name: str,
    parent_id: int | None = None,
    image: str | None = None,
) -> Category:
    cat = Category(
        company_id=company_id, name=name, slug=slugify(name), parent_id=parent_id, image=image
    )
    session.add(cat)
    await session.flush()
    return cat


async def create_brand(
    session: AsyncSession, company_id: int, name: str, image: str | None = None
) -> Brand:
    brand = Brand(company_id=company_id, name=name, slug=slugify(name), image=image)
    session.add(brand)
    await session.flush()
    return brand


async def create_tax(
    session: AsyncSession, company_id: int, name: str, rate: Decimal, inclusive: bool = False
) -> Tax:
    tax = Tax(company_id=company_id, name=name, rate=rate, inclusive=inclusive)
    session.add(tax)
    await session.flush()
    return tax


async def create_party(
    session: AsyncSession,
    company_id: int,
    user_type: str,
    name: str,
    *,
    phone: str | None = None,
    email: str | None = None,
    walk_in: bool = False,
) -> User:
    assert user_type in ("customer", "supplier")
    party = User(
        company_id=company_id,
        user_type=user_type,
        name=name,
        phone=phone,
        email=email,
        is_walk_in=walk_in,
    )
    session.add(party)
    await session.flush()
    return party


async def create_product(
    uow: UnitOfWork,
    *,
    company_id: int,
    warehouse_id: int,
    name: str,
    item_code: str,
    sales_price: Decimal,
    purchase_price: Decimal,
    unit_id: int | None = None,
    category_id: int | None = None,
    brand_id: int | None = None,
    tax_id: int | None = None,
    barcode: str | None = None,
    mrp: Decimal | None = None,
    description: str = "",
    opening_batches: list[tuple[Decimal, Decimal]] | None = None,
    created_by: int | None = None,
) -> Listed:
    """A product defined and listed in one warehouse (the demo and tests' shorthand
    for ``define_product`` then ``list_product``)."""
    product = await define_product(
        uow.session,
        company_id=company_id,
        name=name,
        item_code=item_code,
        barcodes=[barcode] if barcode else [],
        unit_id=unit_id,
        category_id=category_id,
        brand_id=brand_id,
        tax_id=tax_id,
        description=description,
    )
    return await list_product(
        uow,
        product,
        warehouse_id=warehouse_id,
        sales_price=sales_price,
        purchase_price=purchase_price,
        mrp=mrp,
        opening_batches=opening_batches or [],
        created_by=created_by,
    )
