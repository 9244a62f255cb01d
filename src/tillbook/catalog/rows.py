"""A product's rows as they are given: the product with its barcodes, its listing in
a warehouse with opening stock (batches posted as an opening entry), and its
additional units.

Nothing here checks, audits or announces: these are the writes the checked path
(``catalog.products``) makes once its checks (``catalog.rules`` and the reads
behind them) have passed, and that seeding (``catalog.seeding``: the demo, tests,
the bench) makes directly. A change from a client goes through ``catalog.products``
or ``catalog.import_export``, never here.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from decimal import Decimal

from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.catalog.rules import slugify
from tillbook.inventory import service as inventory
from tillbook.inventory.service import Listed
from tillbook.kit.money import ZERO, money, price4
from tillbook.ledger.service import post
from tillbook.models import Listing, Product, ProductBarcode, ProductUnit
from tillbook.unit import UnitOfWork


async def define_product(
    session: AsyncSession,
    *,
    company_id: int,
    name: str,
    item_code: str,
    barcodes: Sequence[str] = (),
    unit_id: int | None = None,
    category_id: int | None = None,
    brand_id: int | None = None,
    tax_id: int | None = None,
    description: str = "",
    image: str | None = None,
) -> Product:
    """A product of the company's catalog, listed nowhere yet; ``barcodes`` in order
    (the first is the primary one)."""
    product = Product(
        company_id=company_id,
        name=name,
        slug=slugify(name),
        item_code=item_code,
        barcode=barcodes[0] if barcodes else None,
        category_id=category_id,
        brand_id=brand_id,
        unit_id=unit_id,
        tax_id=tax_id,
        description=description,
        image=image,
    )
    session.add(product)
    await session.flush()
    session.add_all(
        ProductBarcode(company_id=company_id, product_id=product.id, barcode=code)
        for code in barcodes
    )
    await session.flush()
    return product


def listed(product: Product, listing: Listing) -> Listed:
    """The value the stock rules work on, for a product and listing of this unit."""
    return Listed(
        id=product.id,
        listing_id=listing.id,
        company_id=product.company_id,
        warehouse_id=listing.warehouse_id,
        name=product.name,
        slug=product.slug,
        item_code=product.item_code,
        barcode=product.barcode,
        product_type=product.product_type,
        category_id=product.category_id,
        brand_id=product.brand_id,
        unit_id=product.unit_id,
        tax_id=product.tax_id,
        description=product.description,
        sales_price=listing.sales_price,
        purchase_price=listing.purchase_price,
        mrp=listing.mrp,
        current_stock=listing.current_stock,
        reorder_level=listing.reorder_level,
        available=product.archived_at is None and listing.active,
        archived_at=product.archived_at,
        listing_active=listing.active,
    )


async def list_product(
    uow: UnitOfWork,
    product: Product,
    *,
    warehouse_id: int,
    sales_price: Decimal,
    purchase_price: Decimal,
    mrp: Decimal | None = None,
    reorder_level: Decimal = ZERO,
    opening_batches: Sequence[tuple[Decimal, Decimal]] = (),
    created_by: int | None = None,
    field: str = "opening_batches",
    opened_on: dt.date | None = None,
) -> Listed:
    """The product listed in a warehouse with its prices there, and optional opening
    stock: one batch per (quantity, unit_cost), posted Dr 11700 / Cr 31100 Opening
    Balance Equity on ``opened_on`` (default today; the demo opens its stores before
    the month of trading it makes up)."""
    session = uow.session
    listing = Listing(
        company_id=product.company_id,
        warehouse_id=warehouse_id,
        product_id=product.id,
        sales_price=sales_price,
        purchase_price=purchase_price,
        mrp=mrp,
        reorder_level=reorder_level,
        current_stock=sum((qty for qty, _ in opening_batches), ZERO),
    )
    session.add(listing)
    await session.flush()
    value_of = listed(product, listing)
    for qty, cost in opening_batches:
        value = money(qty * cost)
        await inventory.receive(
            uow,
            value_of,
            qty,
            unit_cost=price4(cost),
            value=value,
            reason="opening",
            source_type="opening",
            source_id=product.id,
            new_product=True,
            field=field,
        )
        await post(
            uow,
            company_id=product.company_id,
            warehouse_id=warehouse_id,
            rule="opening_stock",
            figures={"cost": value},
            narration=f"Opening stock {product.name} ({product.item_code}) {qty} @ {cost}",
            field=field,
            source_type="opening",
            source_id=product.id,
            entry_date=opened_on or dt.date.today(),
            created_by=created_by,
        )
    return value_of


async def add_product_unit(
    session: AsyncSession,
    product: Product | Listed,
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
