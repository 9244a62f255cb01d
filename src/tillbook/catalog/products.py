"""The company's catalog as the back office keeps it: products, their barcodes and
additional units, and their listings in each warehouse (DESIGN.md §13).

One rule in one place, whichever door a change comes through (admin API, CLI,
import): every change is checked whole before anything is written (every bad
field reported at once), runs in the caller's unit of work, is audited, and tells
the tills of every warehouse that lists the product (``product.updated``).
Products with history are archived, never deleted; an archived product cannot be
sold or bought (``orders.intake``) but stays readable and returnable.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from decimal import Decimal

from sqlalchemy import ColumnElement, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from typing_extensions import TypedDict

from tillbook.audit.service import record
from tillbook.catalog import queries, reference, rows, rules
from tillbook.catalog.announcements import announce, announce_everywhere
from tillbook.catalog.prices import record_price_change
from tillbook.catalog.reference import Kind
from tillbook.catalog.schemas import (
    ListingIn,
    ListingPatch,
    OpeningStockIn,
    ProductIn,
    ProductPatch,
    ProductUnitIn,
)
from tillbook.errors import NotFound, invalid
from tillbook.inventory import service as inventory
from tillbook.kit import xid
from tillbook.kit.money import money, number, price4
from tillbook.kit.pagination import Page, Paged, paged
from tillbook.kit.problems import Problems
from tillbook.kit.search import matches
from tillbook.kit.shapes import DateTimeStr, MoneyStr, answer
from tillbook.kit.versions import expect
from tillbook.ledger.service import post
from tillbook.models import (
    Listing,
    PriceAdjustmentBatch,
    Product,
    ProductBarcode,
    ProductUnit,
    Warehouse,
)
from tillbook.unit import UnitOfWork

KINDS: dict[str, Kind] = {
    "category_id": "category",
    "brand_id": "brand",
    "unit_id": "unit",
    "tax_id": "tax",
}


# --- reading ------------------------------------------------------------------------


def _iso(value: dt.datetime | None) -> str | None:
    if value is None:
        return None
    aware = value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)
    return aware.replace(microsecond=0).isoformat().replace("+00:00", "Z")


# The back office's answers (``api/admin/products.py`` puts them in the envelope):
# a product with every barcode, additional unit and listing, a listing alone, and
# the batch opening stock made. Prices and stock are JSON numbers (``kit/money.number``).


@answer
class AdminListing(TypedDict):
    warehouse_id: int
    sales_price: float
    purchase_price: float
    mrp: float | None
    current_stock: float
    reorder_level: float
    active: bool
    version: int


@answer
class AdminAdditionalUnit(TypedDict):
    unit_id: int
    operator_value: float
    alternative_price: float


@answer
class AdminProduct(TypedDict):
    id: int
    xid: str
    name: str
    slug: str
    item_code: str
    barcodes: list[str]
    product_type: str
    category_id: int | None
    brand_id: int | None
    unit_id: int | None
    tax_id: int | None
    description: str
    image: str | None
    additional_units: list[AdminAdditionalUnit]
    listings: list[AdminListing]
    archived: bool
    archived_at: DateTimeStr | None
    version: int


@answer
class OpeningStock(TypedDict):
    batch_id: int
    quantity: float
    value: MoneyStr
    current_stock: float


def listing_view(listing: Listing) -> AdminListing:
    return {
        "warehouse_id": listing.warehouse_id,
        "sales_price": number(listing.sales_price),
        "purchase_price": number(listing.purchase_price),
        "mrp": None if listing.mrp is None else number(listing.mrp),
        "current_stock": number(listing.current_stock),
        "reorder_level": number(listing.reorder_level),
        "active": listing.active,
        "version": listing.version,
    }


async def view(session: AsyncSession, product: Product) -> AdminProduct:
    """The product as the back office shows it: company-wide fields, every barcode
    and additional unit, and its listing in each warehouse."""
    barcodes = (
        await session.execute(
            select(ProductBarcode.barcode)
            .where(
                ProductBarcode.company_id == product.company_id,
                ProductBarcode.product_id == product.id,
            )
            .order_by(ProductBarcode.id)
        )
    ).scalars()
    units = (
        await session.execute(
            select(ProductUnit)
            .where(
                ProductUnit.company_id == product.company_id, ProductUnit.product_id == product.id
            )
            .order_by(ProductUnit.id)
        )
    ).scalars()
    listings = (
        await session.execute(
            select(Listing)
            .where(Listing.company_id == product.company_id, Listing.product_id == product.id)
            .order_by(Listing.warehouse_id)
        )
    ).scalars()
    return {
        "id": product.id,
        "xid": xid.encode(product.id),
        "name": product.name,
        "slug": product.slug,
        "item_code": product.item_code,
        "barcodes": list(barcodes),
        "product_type": product.product_type,
        "category_id": product.category_id,
        "brand_id": product.brand_id,
        "unit_id": product.unit_id,
        "tax_id": product.tax_id,
        "description": product.description,
        "image": product.image,
        "additional_units": [
            {
                "unit_id": u.unit_id,
                "operator_value": number(u.operator_value),
                "alternative_price": number(u.alternative_price),
            }
            for u in units
        ],
        "listings": [listing_view(li) for li in listings],
        "archived": product.archived_at is not None,
        "archived_at": _iso(product.archived_at),
        "version": product.version,
    }


async def get(session: AsyncSession, company_id: int, product_id: int) -> Product:
    """The company's product, or a 404 worded like one that does not exist."""
    product = (
        await session.execute(
            select(Product).where(Product.company_id == company_id, Product.id == product_id)
        )
    ).scalar_one_or_none()
    if product is None:
        raise NotFound(f"product {product_id} not found")
    return product


async def page(
    session: AsyncSession,
    company_id: int,
    page: Page,
    *,
    search: str | None = None,
    warehouse_id: int | None = None,
    include_archived: bool = False,
) -> Paged[AdminProduct]:
    """One page of the company's catalog, in id order; ``warehouse_id``: only the
    products listed there."""
    conds: list[ColumnElement[bool]] = [Product.company_id == company_id]
    if not include_archived:
        conds.append(Product.archived_at.is_(None))
    if search:
        conds.append(
            or_(
                matches(search, Product.name, Product.item_code),
                Product.id.in_(
                    select(ProductBarcode.product_id).where(
                        ProductBarcode.company_id == company_id,
                        ProductBarcode.barcode == search.strip(),
                    )
                ),
            )
        )
    if warehouse_id is not None:
        conds.append(
            Product.id.in_(
                select(Listing.product_id).where(
                    Listing.company_id == company_id, Listing.warehouse_id == warehouse_id
                )
            )
        )
    total = (
        await session.execute(select(func.count()).select_from(Product).where(*conds))
    ).scalar_one()
    rows: list[AdminProduct] = []
    if page.offset < total:
        products = (
            await session.execute(
                select(Product)
                .where(*conds)
                .order_by(Product.id)
                .limit(page.limit)
                .offset(page.offset)
            )
        ).scalars()
        rows = [await view(session, p) for p in products]
    return paged(page, total, rows)


# --- checks -------------------------------------------------------------------------


async def _check_references(
    session: AsyncSession,
    company_id: int,
    values: Iterable[tuple[str, int | None]],
    problems: Problems,
) -> None:
    """Categories, brands, units and taxes a product may be given: the company's own
    and not archived (``catalog.reference``, the one rule for them)."""
    refs: list[tuple[str, Kind, int | str | None]] = [
        (field, KINDS[field.rsplit(".", 1)[-1]], value) for field, value in values
    ]
    await reference.check_usable(session, company_id, refs, problems)


async def _check_warehouse(
    session: AsyncSession, company_id: int, field: str, warehouse_id: int, problems: Problems
) -> None:
    wh = (
        await session.execute(
            select(Warehouse).where(
                Warehouse.company_id == company_id, Warehouse.id == warehouse_id
            )
        )
    ).scalar_one_or_none()
    if wh is None:
        problems.add(field, f"unknown warehouse {warehouse_id}")
    elif wh.archived_at is not None:
        problems.add(field, f"warehouse {warehouse_id} ({wh.name}) is archived")


async def _check_item_code(
    session: AsyncSession,
    company_id: int,
    item_code: str,
    problems: Problems,
    *,
    field: str = "item_code",
    product_id: int | None = None,
) -> None:
    taken = await session.scalar(
        select(Product.id).where(
            Product.company_id == company_id,
            Product.item_code == item_code,
            Product.id != (product_id or 0),
        )
    )
    if taken is not None:
        problems.add(field, f"item code {item_code!r} is already product {taken}'s")


async def _check_barcodes(
    session: AsyncSession,
    company_id: int,
    barcodes: Sequence[str],
    problems: Problems,
    *,
    field: str = "barcodes",
    product_id: int | None = None,
) -> None:
    for i in rules.repeated(barcodes):
        problems.add(f"{field}.{i}", f"barcode {barcodes[i]!r} is listed twice")
    if not barcodes:
        return
    owner = await queries.barcode_owners(session, company_id, barcodes)
    for i, code in enumerate(barcodes):
        if code in owner and owner[code] != product_id:
            problems.add(f"{field}.{i}", f"barcode {code!r} is already product {owner[code]}'s")


def _check_prices(
    prefix: str, sales: Decimal | None, mrp: Decimal | None, problems: Problems
) -> None:
    problem = rules.price_problem(sales, mrp)
    if problem is not None:
        problems.add(f"{prefix}sales_price", problem)


async def _check_units(
    session: AsyncSession,
    company_id: int,
    units: Sequence[ProductUnitIn],
    base_unit: int | None,
    problems: Problems,
) -> None:
    for i, u in enumerate(units):
        field = f"additional_units.{i}.unit_id"
        await _check_references(session, company_id, [(field, u.unit_id)], problems)
    for i, problem in rules.unit_problems([u.unit_id for u in units], base_unit):
        problems.add(f"additional_units.{i}.unit_id", problem)


async def _check_listings(
    session: AsyncSession, company_id: int, listings: Sequence[ListingIn], problems: Problems
) -> None:
    seen: set[int] = set()
    for i, li in enumerate(listings):
        field = f"listings.{i}"
        await _check_warehouse(
            session, company_id, f"{field}.warehouse_id", li.warehouse_id, problems
        )
        if li.warehouse_id in seen:
            problems.add(f"{field}.warehouse_id", f"warehouse {li.warehouse_id} is listed twice")
        seen.add(li.warehouse_id)
        _check_prices(f"{field}.", li.sales_price, li.mrp, problems)


# --- writing ------------------------------------------------------------------------


async def _edited(
    uow: UnitOfWork,
    product: Product,
    before: AdminProduct,
    action: str,
    actor_id: int | None,
) -> AdminProduct:
    """After an edit of a product: its version moves on, the change is audited and
    every warehouse that lists it is told."""
    product.version += 1
    await uow.session.flush()
    after = await view(uow.session, product)
    await record(
        uow.session,
        company_id=product.company_id,
        actor_id=actor_id,
        action=action,
        entity_type="product",
        entity_id=product.id,
        before=before,
        after=after,
    )
    await announce_everywhere(uow, product)
    return after


async def _set_units(
    session: AsyncSession, product: Product, units: Iterable[ProductUnitIn]
) -> None:
    """The product's additional units become exactly ``units`` (order items keep the
    unit and factor they were sold in, so replacing them rewrites no history)."""
    current = (
        await session.execute(select(ProductUnit).where(ProductUnit.product_id == product.id))
    ).scalars()
    for row in current:
        await session.delete(row)
    await session.flush()
    for u in units:
        await rows.add_product_unit(
            session, product, u.unit_id, u.operator_value, u.alternative_price
        )


async def _set_barcodes(session: AsyncSession, product: Product, barcodes: Sequence[str]) -> None:
    current = (
        await session.execute(select(ProductBarcode).where(ProductBarcode.product_id == product.id))
    ).scalars()
    for row in current:
        await session.delete(row)
    await session.flush()
    session.add_all(
        ProductBarcode(company_id=product.company_id, product_id=product.id, barcode=code)
        for code in barcodes
    )
    product.barcode = barcodes[0] if barcodes else None
    await session.flush()


async def create(
    uow: UnitOfWork, company_id: int, body: ProductIn, *, actor_id: int | None
) -> AdminProduct:
    """A new product with its barcodes, additional units and listings (each with its
    opening stock, if any)."""
    session = uow.session
    problems = Problems()
    await _check_references(session, company_id, ((f, getattr(body, f)) for f in KINDS), problems)
    await _check_item_code(session, company_id, body.item_code, problems)
    await _check_barcodes(session, company_id, body.barcodes, problems)
    await _check_units(session, company_id, body.additional_units, body.unit_id, problems)
    await _check_listings(session, company_id, body.listings, problems)
    problems.raise_if_any()
    product = await rows.define_product(
        session,
        company_id=company_id,
        name=body.name,
        item_code=body.item_code,
        barcodes=body.barcodes,
        unit_id=body.unit_id,
        category_id=body.category_id,
        brand_id=body.brand_id,
        tax_id=body.tax_id,
        description=body.description,
        image=body.image,
    )
    for u in body.additional_units:
        await rows.add_product_unit(
            session, product, u.unit_id, u.operator_value, u.alternative_price
        )
    for i, li in enumerate(body.listings):
        await _list(uow, product, li, actor_id=actor_id, field=f"listings.{i}.opening_stock")
    shown = await view(session, product)
    await record(
        session,
        company_id=company_id,
        actor_id=actor_id,
        action="created",
        entity_type="product",
        entity_id=product.id,
        after=shown,
    )
    await announce_everywhere(uow, product)
    return shown


async def _list(
    uow: UnitOfWork, product: Product, li: ListingIn, *, actor_id: int | None, field: str
) -> None:
    opening = [(li.opening_stock.quantity, li.opening_stock.unit_cost)] if li.opening_stock else []
    await rows.list_product(
        uow,
        product,
        warehouse_id=li.warehouse_id,
        sales_price=li.sales_price,
        purchase_price=li.purchase_price,
        mrp=li.mrp,
        reorder_level=li.reorder_level,
        opening_batches=opening,
        created_by=actor_id,
        field=field,
    )


async def update(
    uow: UnitOfWork,
    company_id: int,
    product_id: int,
    body: ProductPatch,
    *,
    expected_version: int | None,
    actor_id: int | None,
) -> AdminProduct:
    """The fields sent change (the others stay); the edit must name the product's
    current version."""
    session = uow.session
    product = await get(session, company_id, product_id)
    expect(product.version, body.version or expected_version, f"product {product_id}")
    sent = body.model_fields_set - {"version"}
    problems = Problems()
    await _check_references(
        session, company_id, ((f, getattr(body, f)) for f in KINDS if f in sent), problems
    )
    if "name" in sent and body.name is None:
        problems.add("name", "must not be empty")
    if "item_code" in sent:
        if body.item_code is None:
            problems.add("item_code", "must not be empty")
        else:
            await _check_item_code(
                session, company_id, body.item_code, problems, product_id=product.id
            )
    if body.barcodes is not None:
        await _check_barcodes(session, company_id, body.barcodes, problems, product_id=product.id)
    if body.additional_units is not None:
        base = body.unit_id if "unit_id" in sent else product.unit_id
        await _check_units(session, company_id, body.additional_units, base, problems)
    problems.raise_if_any()
    before = await view(session, product)
    for field in ("name", "item_code", "category_id", "brand_id", "unit_id", "tax_id", "image"):
        if field in sent:
            setattr(product, field, getattr(body, field))
    if "name" in sent and body.name is not None:
        product.slug = rules.slugify(body.name)
    if body.description is not None:
        product.description = body.description
    if body.barcodes is not None:
        await _set_barcodes(session, product, body.barcodes)
    if body.additional_units is not None:
        await _set_units(session, product, body.additional_units)
    return await _edited(uow, product, before, "updated", actor_id)


async def archive(
    uow: UnitOfWork, company_id: int, product_id: int, *, actor_id: int | None
) -> AdminProduct:
    """Archived: no longer sold or bought anywhere; its history and stock stay
    (archiving twice changes nothing)."""
    session = uow.session
    product = await get(session, company_id, product_id)
    if product.archived_at is not None:
        return await view(session, product)
    before = await view(session, product)
    product.archived_at = dt.datetime.now(dt.UTC)
    return await _edited(uow, product, before, "archived", actor_id)


async def _listing(
    session: AsyncSession, product: Product, warehouse_id: int, *, lock: bool = False
) -> Listing:
    statement = select(Listing).where(
        Listing.company_id == product.company_id,
        Listing.product_id == product.id,
        Listing.warehouse_id == warehouse_id,
    )
    if lock:
        statement = statement.with_for_update()
    listing = (await session.execute(statement)).scalar_one_or_none()
    if listing is None:
        raise NotFound(f"product {product.id} is not listed in warehouse {warehouse_id}")
    return listing


async def add_listing(
    uow: UnitOfWork, company_id: int, product_id: int, body: ListingIn, *, actor_id: int | None
) -> AdminListing:
    """The product listed in one more warehouse (with opening stock, if any)."""
    session = uow.session
    product = await get(session, company_id, product_id)
    problems = Problems()
    await _check_warehouse(session, company_id, "warehouse_id", body.warehouse_id, problems)
    _check_prices("", body.sales_price, body.mrp, problems)
    if product.archived_at is not None:
        problems.add("product_id", f"product {product_id} is archived")
    problems.raise_if_any()
    existing = await session.scalar(
        select(Listing.id).where(
            Listing.company_id == company_id,
            Listing.product_id == product.id,
            Listing.warehouse_id == body.warehouse_id,
        )
    )
    if existing is not None:
        raise invalid(
            "warehouse_id",
            f"product {product_id} is already listed in warehouse {body.warehouse_id}",
        )
    await _list(uow, product, body, actor_id=actor_id, field="opening_stock")
    listing = await _listing(session, product, body.warehouse_id)
    after = listing_view(listing)
    await record(
        session,
        company_id=company_id,
        actor_id=actor_id,
        action="listed",
        entity_type="listing",
        entity_id=listing.id,
        after={"product_id": product.id, **after},
    )
    announce(uow, company_id, product, listing)
    return after


async def update_listing(
    uow: UnitOfWork,
    company_id: int,
    product_id: int,
    warehouse_id: int,
    body: ListingPatch,
    *,
    expected_version: int | None,
    actor_id: int | None,
    price_batch: PriceAdjustmentBatch | None = None,
) -> AdminListing:
    """A warehouse's prices, reorder level or active flag. A new sales price is a
    price change with its history (``catalog.prices``), as from a till; in
    ``price_batch`` when it is one of a batch price change."""
    session = uow.session
    product = await get(session, company_id, product_id)
    listing = await _listing(session, product, warehouse_id, lock=True)
    expect(
        listing.version,
        body.version or expected_version,
        f"the listing of product {product_id} in warehouse {warehouse_id}",
    )
    sent = body.model_fields_set - {"version"}
    problems = Problems()
    for field in ("sales_price", "purchase_price", "reorder_level", "active"):
        if field in sent and getattr(body, field) is None:
            problems.add(field, "must not be null")
    sales = body.sales_price if "sales_price" in sent else listing.sales_price
    mrp = body.mrp if "mrp" in sent else listing.mrp
    _check_prices("", sales, mrp, problems)
    problems.raise_if_any()
    before = listing_view(listing)
    version = listing.version + 1  # one edit, one step, whatever it changes
    if body.sales_price is not None and body.sales_price != listing.sales_price:
        await record_price_change(
            uow,
            product,
            listing,
            body.sales_price,
            actor_id=actor_id,
            notes="back office",
            announce=False,
            batch=price_batch,
        )
    for field in ("purchase_price", "mrp", "reorder_level", "active"):
        if field in sent:
            setattr(listing, field, getattr(body, field))
    listing.version = version
    await session.flush()
    after = listing_view(listing)
    await record(
        session,
        company_id=company_id,
        actor_id=actor_id,
        action="updated",
        entity_type="listing",
        entity_id=listing.id,
        before={"product_id": product.id, **before},
        after={"product_id": product.id, **after},
    )
    announce(uow, company_id, product, listing)
    return after


async def add_opening_stock(
    uow: UnitOfWork,
    company_id: int,
    product_id: int,
    warehouse_id: int,
    body: OpeningStockIn,
    *,
    actor_id: int | None,
) -> OpeningStock:
    """Stock the shop had before it used tillbook: a batch at its cost, posted
    Dr 11700 Inventory / Cr 31100 Opening Balance Equity."""
    session = uow.session
    product = await get(session, company_id, product_id)
    await _listing(session, product, warehouse_id)
    listed = (await inventory.products(uow, company_id, warehouse_id, [product.id]))[product.id]
    value = money(body.quantity * body.unit_cost)
    receipt = await inventory.receive(
        uow,
        listed,
        body.quantity,
        unit_cost=price4(body.unit_cost),
        value=value,
        reason="opening",
        source_type="opening",
        source_id=product.id,
        field="quantity",
    )
    await post(
        uow,
        company_id=company_id,
        warehouse_id=warehouse_id,
        rule="opening_stock",
        figures={"cost": value},
        narration=(
            f"Opening stock {product.name} ({product.item_code}) {body.quantity} @ {body.unit_cost}"
        ),
        field="quantity",
        source_type="opening",
        source_id=product.id,
        entry_date=dt.date.today(),
        created_by=actor_id,
    )
    await record(
        session,
        company_id=company_id,
        actor_id=actor_id,
        action="opening_stock",
        entity_type="listing",
        entity_id=listed.listing_id,
        after={
            "product_id": product.id,
            "warehouse_id": warehouse_id,
            "quantity": number(body.quantity),
            "unit_cost": number(body.unit_cost),
            "value": str(value),
            "batch_id": receipt.batch_id,
        },
    )
    return {
        "batch_id": receipt.batch_id,
        "quantity": number(body.quantity),
        "value": str(value),
        "current_stock": number(listed.current_stock),
    }
