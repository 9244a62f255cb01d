"""Creating catalog records (operators, demo data, tests): one way to make each."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal

from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.inventory import service as inventory
from tillbook.kit.money import money, price4
from tillbook.ledger.service import post
from tillbook.models import Brand, Category, Product, ProductUnit, Tax, Unit, User
from tillbook.unit import UnitOfWork


def slugify(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "item"


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
    barcode: str | None = None,
    mrp: Decimal | None = None,
    description: str = "",
    opening_batches: list[tuple[Decimal, Decimal]] | None = None,
    created_by: int | None = None,
) -> Product:
    """A product with optional opening stock: one batch per (quantity, unit_cost),
    posted Dr 11700 / Cr 31100 Opening Balance Equity."""
    session = uow.session
    opening = opening_batches or []
    product = Product(
        company_id=company_id,
        warehouse_id=warehouse_id,
        name=name,
        slug=slugify(name),
        item_code=item_code,
        barcode=barcode,
        category_id=category_id,
        brand_id=brand_id,
        unit_id=unit_id,
        sales_price=sales_price,
        purchase_price=purchase_price,
        mrp=mrp,
        current_stock=sum((qty for qty, _ in opening), Decimal("0")),
        description=description,
    )
    session.add(product)
    await session.flush()
    for qty, cost in opening:
        value = money(qty * cost)
        await inventory.receive(
            uow,
            product,
            qty,
            unit_cost=price4(cost),
            value=value,
            reason="opening",
            source_type="opening",
            source_id=product.id,
            new_product=True,
            field="opening_batches",
        )
        await post(
            uow,
            company_id=company_id,
            warehouse_id=warehouse_id,
            rule="opening_stock",
            figures={"cost": value},
            narration=f"Opening stock {name} ({item_code}) {qty} @ {cost}",
            field="opening_batches",
            source_type="opening",
            source_id=product.id,
            entry_date=dt.date.today(),
            created_by=created_by,
        )
    return product


async def add_product_unit(
    session: AsyncSession,
    product: Product,
    unit_id: int,
    operator_value: Decimal,
    alternative_price: Decimal,
) -> ProductUnit:
    pu = ProductUnit(
        company_id=product.company_id,
        product_id=product.id,
        unit_id=unit_id,
        operator="*",
        operator_value=operator_value,
        alternative_price=alternative_price,
    )
    session.add(pu)
    await session.flush()
    return pu
