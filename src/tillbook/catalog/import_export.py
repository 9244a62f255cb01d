"""Products in and out as CSV (DESIGN.md §13), on the shared import framework
(``tillbook.imports``): what a shop moving from a spreadsheet or another POS has.

Columns: ``item_code,name,barcode,category,brand,unit,tax,sales_price,
purchase_price,mrp,warehouse,opening_stock,opening_cost,reorder_level``; one row
per product and warehouse listing (a row without ``warehouse`` defines the product
only). Rows are matched to the catalog by ``item_code``; ``warehouse`` is a name or
an id; ``category``, ``brand`` and ``unit`` are names (or a unit's short name),
created when missing; ``tax`` is an existing tax's name; ``barcode`` may hold
several, separated by ``|``.

The rows of one product must agree on its own fields (a cell left empty on a later
row agrees with anything). Opening stock is posted once, when the listing is
created: a batch at ``opening_cost`` (default: the purchase price), and one entry
per warehouse for the whole file, Dr 11700 Inventory / Cr 31100 Opening Balance
Equity. On a listing that exists already the two opening columns are not used (the
export writes the stock on hand there, so that export → import changes nothing;
counts are corrected with a stock adjustment).

Every row is checked before anything is written; then everything is written in the
caller's one unit of work, in a few statements per kind of row (10,000 products in
two warehouses is one file), audited and announced (``product.updated``) like any
other catalog change.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Annotated, Any

from pydantic import Field, StrictStr, TypeAdapter, field_validator
from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.audit.service import Change, record_many
from tillbook.catalog import queries, reference, rules
from tillbook.catalog.announcements import (
    NewListing,
    NewProduct,
    ProductFacts,
    announce,
    announce_everywhere,
)
from tillbook.catalog.prices import record_price_change
from tillbook.catalog.schemas import Barcode, ItemCode, Name
from tillbook.fields import Strict
from tillbook.imports import Counts, Layout, Problems, Progress, Row, check_rows, read_rows
from tillbook.imports import write_csv as csv_text
from tillbook.inventory import repository as stock
from tillbook.kit import bounds
from tillbook.kit.bounds import MONEY, AsciiNumber, Clean, UnitPrice, stored_length
from tillbook.kit.money import ZERO, money, price4
from tillbook.kit.text import quoted
from tillbook.ledger.service import post
from tillbook.models import (
    Brand,
    Category,
    Listing,
    Product,
    ProductBarcode,
    StockBatch,
    Tax,
    Unit,
    Warehouse,
)
from tillbook.models.base import table_of
from tillbook.unit import UnitOfWork

COLUMNS = (
    "item_code", "name", "barcode", "category", "brand", "unit", "tax", "sales_price",
    "purchase_price", "mrp", "warehouse", "opening_stock", "opening_cost", "reorder_level",
)  # fmt: skip
# A product file is larger than a party file: a row per product and warehouse, and
# a chain's catalog of 10,000 products in three branches is one file.
MAX_ROWS = 100_000
MAX_BYTES = 32 * 1024 * 1024
LAYOUT = Layout(
    columns=COLUMNS,
    required=frozenset({"item_code", "name"}),
    key="item_code",
    unique=("item_code", "warehouse"),
    max_rows=MAX_ROWS,
    max_bytes=MAX_BYTES,
)
PRODUCT_FIELDS = ("name", "barcode", "category", "brand", "unit", "tax")
LISTING_FIELDS = ("sales_price", "purchase_price", "mrp", "reorder_level")
CHUNK = 2_000  # rows per bulk statement and per progress step

RefName = Annotated[StrictStr, Field(min_length=1, max_length=stored_length(Category.name)), Clean]
Quantity = Annotated[Decimal, AsciiNumber, Field(max_digits=18, decimal_places=4)]


class ProductRow(Strict):
    """One row of a product file, each cell as the API would take it."""

    item_code: ItemCode
    name: Name | None = None
    barcode: str | None = None
    category: RefName | None = None
    brand: RefName | None = None
    unit: RefName | None = None
    tax: RefName | None = None
    sales_price: UnitPrice | None = None
    purchase_price: UnitPrice | None = None
    mrp: UnitPrice | None = None
    warehouse: RefName | None = None
    # Any sign here: an export carries the stock on hand, which may be below zero;
    # a new listing's opening stock is checked to be 0 or more.
    opening_stock: Quantity | None = None
    opening_cost: UnitPrice | None = None
    reorder_level: UnitPrice | None = None

    @field_validator("barcode")
    @classmethod
    def _barcodes(cls, value: str | None) -> str | None:
        """Each barcode as the API takes one (printable, no spaces), at most 20."""
        if value is None:
            return None
        codes = [c.strip() for c in value.split("|")]
        for code in codes:
            _BARCODE.validate_python(code)
        if len(codes) > rules.MAX_BARCODES:
            raise ValueError(f"at most {rules.MAX_BARCODES} barcodes, separated by |")
        if rules.repeated(codes):
            raise ValueError("a barcode is listed twice")
        return "|".join(codes)


_BARCODE: TypeAdapter[str] = TypeAdapter(Barcode)


# --- what the file asks for -----------------------------------------------------------


@dataclass
class Want:
    """One product of the file: its own fields (from its first row, every later row
    agreeing) and its listings by warehouse id."""

    item_code: str
    line: int
    fields: dict[str, Any]
    listings: dict[int, tuple[Row, ProductRow]] = field(default_factory=dict)
    bare_rows: int = 0  # rows that name no warehouse: the product alone


@dataclass
class Names:
    """A company's reference data by lower-cased name, to resolve cells; new names
    are created after the check."""

    by_kind: dict[str, dict[str, int]]
    archived: dict[str, set[str]]
    new: dict[str, dict[str, str]] = field(default_factory=lambda: defaultdict(dict))


async def _names(session: AsyncSession, company_id: int) -> Names:
    by_kind: dict[str, dict[str, int]] = {"category": {}, "brand": {}, "unit": {}, "tax": {}}
    archived: dict[str, set[str]] = {k: set() for k in by_kind}
    models: dict[str, Any] = {"category": Category, "brand": Brand, "unit": Unit, "tax": Tax}
    for kind, model in models.items():
        rows = await session.execute(
            select(model).where(model.company_id == company_id).order_by(model.id)
        )
        for rec in rows.scalars():
            keys = [rec.name.lower()]
            if kind == "unit":
                keys.append(rec.short_name.lower())
            for key in keys:
                if rec.archived_at is not None:
                    archived[kind].add(key)
                else:
                    by_kind[kind].setdefault(key, rec.id)
    return Names(by_kind, archived)


def _resolve(names: Names, kind: str, value: str | None, line: int, problems: Problems) -> None:
    """Check one name cell; a name new to the company is noted for creation (not a
    tax: a tax needs its rate, so it must exist)."""
    if value is None:
        return
    key = value.lower()
    if key in names.by_kind[kind]:
        return
    if key in names.archived[kind]:
        problems.add(line, kind, f"{kind} {quoted(value)} is archived")
    elif kind == "tax":
        known = ", ".join(sorted(names.by_kind["tax"])) or "none yet"
        problems.add(line, "tax", f"unknown tax {quoted(value)} (the company's: {known})")
    else:
        names.new[kind].setdefault(key, value)


async def _warehouses(session: AsyncSession, company_id: int) -> dict[str, Warehouse]:
    """The company's warehouses by id (as text) and by lower-cased name."""
    out: dict[str, Warehouse] = {}
    rows = await session.execute(
        select(Warehouse).where(Warehouse.company_id == company_id).order_by(Warehouse.id)
    )
    for wh in rows.scalars():
        out[str(wh.id)] = wh
        out.setdefault(wh.name.lower(), wh)
    return out


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return a.lower() == b.lower()
    return bool(a == b)


def _group(
    checked: Sequence[tuple[Row, ProductRow]],
    warehouses: Mapping[str, Warehouse],
    problems: Problems,
) -> dict[str, Want]:
    wants: dict[str, Want] = {}
    for row, item in checked:
        want = wants.get(item.item_code)
        own = {name: getattr(item, name) for name in PRODUCT_FIELDS}
        if want is None:
            want = wants[item.item_code] = Want(item.item_code, row.line, own)
        else:
            for name, value in own.items():
                if value is None:
                    continue
                first = want.fields.get(name)
                if first is None:
                    want.fields[name] = value
                elif not _same(first, value):
                    problems.add(
                        row.line,
                        name,
                        f"{quoted(str(value))} differs from line {want.line} "
                        f"({quoted(str(first))}) for item code {quoted(item.item_code)}",
                    )
        if item.warehouse is None:
            want.bare_rows += 1
            for name in (*LISTING_FIELDS, "opening_stock", "opening_cost"):
                if getattr(item, name) is not None:
                    problems.add(
                        row.line,
                        name,
                        "is a warehouse's: name the warehouse, or leave it empty on a row "
                        "that defines the product only",
                    )
            continue
        wh = warehouses.get(item.warehouse.lower())
        if wh is None:
            problems.add(row.line, "warehouse", f"unknown warehouse {quoted(item.warehouse)}")
        elif wh.archived_at is not None:
            problems.add(row.line, "warehouse", f"warehouse {quoted(wh.name)} is archived")
        elif wh.id in want.listings:
            other = want.listings[wh.id][0].line
            problems.add(row.line, "warehouse", f"{quoted(wh.name)} is also on line {other}")
        else:
            want.listings[wh.id] = (row, item)
    return wants


# --- the import ------------------------------------------------------------------------


@dataclass
class Plan:
    new_products: list[Want] = field(default_factory=list)
    changed_products: list[tuple[Want, Product, dict[str, Any]]] = field(default_factory=list)
    new_listings: list[tuple[Want, int, Row, ProductRow]] = field(default_factory=list)
    changed_listings: list[tuple[Product, Listing, ProductRow, dict[str, Any]]] = field(
        default_factory=list
    )
    # Rows by what the import does with them: a row is created when its product or
    # listing is new, updated when either changes, unchanged otherwise.
    counts: Counts = field(default_factory=Counts)

    def count(self, state: str, n: int = 1) -> None:
        setattr(self.counts, state, getattr(self.counts, state) + n)


async def import_products(
    uow: UnitOfWork,
    company_id: int,
    data: bytes,
    *,
    actor_id: int | None,
    progress: Progress | None = None,
) -> Counts:
    """Create or update every product and listing of the file, or raise
    ``ImportRejected`` with every bad row and write nothing."""
    session = uow.session
    problems = Problems()
    rows = read_rows(data, LAYOUT, problems)
    checked = check_rows(rows, ProductRow, problems)
    warehouses = await _warehouses(session, company_id)
    wants = _group(checked, warehouses, problems)
    names = await _names(session, company_id)
    for want in wants.values():
        for kind in ("category", "brand", "unit", "tax"):
            _resolve(names, kind, want.fields.get(kind), want.line, problems)
    existing = await _existing(session, company_id, list(wants))
    listings = await _listings(session, company_id, [p.id for p in existing.values()])
    barcodes = await _barcodes_by_product(session, company_id, [p.id for p in existing.values()])
    await _check_barcodes(session, company_id, wants, existing, problems)
    plan = _plan(wants, existing, listings, barcodes, names, problems)
    problems.raise_if_any()

    ids = await _create_names(session, company_id, names, actor_id)
    total = len(plan.new_products) + len(plan.changed_products)
    total += len(plan.new_listings) + len(plan.changed_listings)
    done = 0

    def step(n: int) -> None:
        nonlocal done
        done += n
        if progress is not None and total:
            progress(done, total)

    products: dict[str, ProductFacts] = dict(existing)
    products.update(await _insert_products(uow, company_id, plan.new_products, ids, actor_id))
    step(len(plan.new_products))
    for want, product, changes in plan.changed_products:
        await _update_product(uow, product, want, changes, ids, actor_id)
    step(len(plan.changed_products))
    await _insert_listings(uow, company_id, plan.new_listings, products, actor_id, step)
    for product, listing, item, changes in plan.changed_listings:
        await _update_listing(uow, product, listing, item, changes, actor_id)
    step(len(plan.changed_listings))
    return plan.counts


async def _existing(
    session: AsyncSession, company_id: int, codes: Sequence[str]
) -> dict[str, Product]:
    out: dict[str, Product] = {}
    for start in range(0, len(codes), CHUNK):
        rows = await session.execute(
            select(Product).where(
                Product.company_id == company_id,
                Product.item_code.in_(codes[start : start + CHUNK]),
            )
        )
        out.update({p.item_code: p for p in rows.scalars()})
    return out


async def _listings(
    session: AsyncSession, company_id: int, product_ids: Sequence[int]
) -> dict[tuple[int, int], Listing]:
    out: dict[tuple[int, int], Listing] = {}
    for start in range(0, len(product_ids), CHUNK):
        rows = await session.execute(
            select(Listing).where(
                Listing.company_id == company_id,
                Listing.product_id.in_(product_ids[start : start + CHUNK]),
            )
        )
        out.update({(li.product_id, li.warehouse_id): li for li in rows.scalars()})
    return out


async def _barcodes_by_product(
    session: AsyncSession, company_id: int, product_ids: Sequence[int]
) -> dict[int, list[str]]:
    out: dict[int, list[str]] = defaultdict(list)
    for start in range(0, len(product_ids), CHUNK):
        rows = await session.execute(
            select(ProductBarcode.product_id, ProductBarcode.barcode)
            .where(
                ProductBarcode.company_id == company_id,
                ProductBarcode.product_id.in_(product_ids[start : start + CHUNK]),
            )
            .order_by(ProductBarcode.id)
        )
        for pid, code in rows.all():
            out[pid].append(code)
    return out


async def _check_barcodes(
    session: AsyncSession,
    company_id: int,
    wants: Mapping[str, Want],
    existing: Mapping[str, Product],
    problems: Problems,
) -> None:
    """A barcode names one product: not two of the file's, not another product's."""
    in_file: dict[str, str] = {}
    for want in wants.values():
        for code in _split(want.fields.get("barcode")):
            other = in_file.setdefault(code, want.item_code)
            if other != want.item_code:
                problems.add(
                    want.line, "barcode", f"{quoted(code)} is also item code {quoted(other)}'s"
                )
    owners = await queries.barcode_owners(session, company_id, list(in_file))
    for code, item_code in in_file.items():
        owner = owners.get(code)
        mine = existing.get(item_code)
        if owner is not None and (mine is None or owner != mine.id):
            problems.add(
                wants[item_code].line,
                "barcode",
                f"{quoted(code)} is already product {owner}'s",
            )


def _split(value: str | None) -> list[str]:
    return value.split("|") if value else []


def _plan(
    wants: Mapping[str, Want],
    existing: Mapping[str, Product],
    listings: Mapping[tuple[int, int], Listing],
    barcodes: Mapping[int, list[str]],
    names: Names,
    problems: Problems,
) -> Plan:
    plan = Plan()
    for want in wants.values():
        product = existing.get(want.item_code)
        state = "unchanged"
        if product is None:
            if not want.fields.get("name"):
                problems.add(want.line, "name", "is required for a new product")
            plan.new_products.append(want)
            state = "created"
        else:
            product_changes = _product_changes(product, want, barcodes.get(product.id, []), names)
            if product_changes:
                plan.changed_products.append((want, product, product_changes))
                state = "updated"
        plan.count(state, want.bare_rows)
        for wh_id, (row, item) in want.listings.items():
            listing = None if product is None else listings.get((product.id, wh_id))
            if listing is None:
                _check_new_listing(row, item, problems)
                plan.new_listings.append((want, wh_id, row, item))
                plan.count("created")
                continue
            changes = _listing_changes(listing, item)
            problem = rules.price_problem(
                changes.get("sales_price", listing.sales_price), changes.get("mrp", listing.mrp)
            )
            if problem is not None:
                problems.add(row.line, "sales_price", problem)
            if changes:
                assert product is not None
                plan.changed_listings.append((product, listing, item, changes))
            plan.count("updated" if changes else state)
    return plan


def _check_new_listing(row: Row, item: ProductRow, problems: Problems) -> None:
    if item.sales_price is None:
        problems.add(row.line, "sales_price", "is required to list the product in a warehouse")
    problem = rules.price_problem(item.sales_price, item.mrp)
    if problem is not None:
        problems.add(row.line, "sales_price", problem)
    problem = rules.opening_stock_problem(item.opening_stock or ZERO, _opening_cost(item))
    if problem is not None:
        problems.add(row.line, "opening_stock", problem)


def _opening_cost(item: ProductRow) -> Decimal:
    if item.opening_cost is not None:
        return item.opening_cost
    return item.purchase_price or ZERO


def _product_changes(
    product: Product, want: Want, barcodes: list[str], names: Names
) -> dict[str, Any]:
    """The fields a row changes on an existing product (an empty cell changes
    nothing)."""
    changes: dict[str, Any] = {}
    name = want.fields.get("name")
    if name is not None and name != product.name:
        changes["name"] = name
    barcode = want.fields.get("barcode")
    if barcode is not None and _split(barcode) != barcodes:
        changes["barcodes"] = _split(barcode)
    for kind in ("category", "brand", "unit", "tax"):
        value = want.fields.get(kind)
        if value is None:
            continue
        current = getattr(product, f"{kind}_id")
        known = names.by_kind[kind].get(value.lower())
        if known is None or known != current:
            changes[f"{kind}_id"] = value
    return changes


def _listing_changes(listing: Listing, item: ProductRow) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    for name in LISTING_FIELDS:
        value = getattr(item, name)
        if value is not None and value != getattr(listing, name):
            changes[name] = value
    return changes


# --- writing ---------------------------------------------------------------------------


async def _create_names(
    session: AsyncSession, company_id: int, names: Names, actor_id: int | None
) -> dict[str, dict[str, int]]:
    """Categories, brands and units the file names and the company lacks, made as
    the back office makes them (audited); then every name's id, by kind."""
    for key, value in names.new["category"].items():
        made = await reference.add_category(
            session, company_id, actor_id, name=value, slug=None, parent_id=None, image=None
        )
        names.by_kind["category"][key] = made.id
    for key, value in names.new["brand"].items():
        brand = await reference.add_brand(
            session, company_id, actor_id, name=value, slug=None, image=None
        )
        names.by_kind["brand"][key] = brand.id
    for key, value in names.new["unit"].items():
        unit = await reference.add_unit(
            session, company_id, actor_id, name=value, short_name=value[:20]
        )
        names.by_kind["unit"][key] = unit.id
    return names.by_kind


def _ref(ids: Mapping[str, Mapping[str, int]], kind: str, value: Any) -> int | None:
    return None if value is None else ids[kind][str(value).lower()]


async def _insert_products(
    uow: UnitOfWork,
    company_id: int,
    wants: Sequence[Want],
    ids: Mapping[str, Mapping[str, int]],
    actor_id: int | None,
) -> dict[str, NewProduct]:
    """New products in a few statements: rows, barcodes, audit records; what the
    events of their new listings say of each."""
    out: dict[str, NewProduct] = {}
    products = table_of(Product)
    barcodes: list[dict[str, Any]] = []
    audits: list[Change] = []
    for start in range(0, len(wants), CHUNK):
        chunk = wants[start : start + CHUNK]
        rows = [
            {
                "company_id": company_id,
                "name": w.fields["name"],
                "slug": rules.slugify(w.fields["name"]),
                "item_code": w.item_code,
                "barcode": next(iter(_split(w.fields.get("barcode"))), None),
                "product_type": "single",
                "category_id": _ref(ids, "category", w.fields.get("category")),
                "brand_id": _ref(ids, "brand", w.fields.get("brand")),
                "unit_id": _ref(ids, "unit", w.fields.get("unit")),
                "tax_id": _ref(ids, "tax", w.fields.get("tax")),
                "description": "",
                "image": None,
                # Every column named: a multi-row insert on PostgreSQL
                # (``UnitOfWork.insert_returning_ids``) applies no Python default.
                "version": 1,
                "archived_at": None,
            }
            for w in chunk
        ]
        new_ids = await uow.insert_returning_ids(products, rows)
        for want, row, pid in zip(chunk, rows, new_ids, strict=True):
            out[want.item_code] = NewProduct(
                id=pid,
                name=row["name"],
                item_code=want.item_code,
                barcode=row["barcode"],
                unit_id=row["unit_id"],
                category_id=row["category_id"],
                brand_id=row["brand_id"],
                tax_id=row["tax_id"],
            )
            codes = _split(want.fields.get("barcode"))
            barcodes += [{"company_id": company_id, "product_id": pid, "barcode": c} for c in codes]
            shown = {k: v for k, v in row.items() if k not in ("company_id", "product_type")}
            audits.append(Change("imported", "product", pid, {**shown, "barcodes": codes}))
    table = table_of(ProductBarcode)
    for start in range(0, len(barcodes), CHUNK):
        await uow.session.execute(table.insert(), barcodes[start : start + CHUNK])
    await record_many(uow.session, company_id=company_id, actor_id=actor_id, changes=audits)
    return out


async def _update_product(
    uow: UnitOfWork,
    product: Product,
    want: Want,
    changes: Mapping[str, Any],
    ids: Mapping[str, Mapping[str, int]],
    actor_id: int | None,
) -> None:
    session = uow.session
    before = _product_fields(product)
    if "name" in changes:
        product.name = changes["name"]
        product.slug = rules.slugify(changes["name"])
    for kind in ("category", "brand", "unit", "tax"):
        if f"{kind}_id" in changes:
            setattr(product, f"{kind}_id", _ref(ids, kind, changes[f"{kind}_id"]))
    if "barcodes" in changes:
        current = (
            await session.execute(
                select(ProductBarcode).where(ProductBarcode.product_id == product.id)
            )
        ).scalars()
        old = sorted(b.barcode for b in current)
        if old != sorted(changes["barcodes"]):
            await session.execute(
                delete(ProductBarcode).where(ProductBarcode.product_id == product.id)
            )
            session.add_all(
                ProductBarcode(company_id=product.company_id, product_id=product.id, barcode=c)
                for c in changes["barcodes"]
            )
        product.barcode = changes["barcodes"][0] if changes["barcodes"] else None
    after = _product_fields(product)
    if after == before and "barcodes" not in changes:
        return
    product.version += 1
    await session.flush()
    await record_many(
        session,
        company_id=product.company_id,
        actor_id=actor_id,
        changes=[Change("imported", "product", product.id, after, before)],
    )
    await announce_everywhere(uow, product)


def _product_fields(product: Product) -> dict[str, Any]:
    return {
        "name": product.name,
        "barcode": product.barcode,
        "category_id": product.category_id,
        "brand_id": product.brand_id,
        "unit_id": product.unit_id,
        "tax_id": product.tax_id,
    }


async def _insert_listings(
    uow: UnitOfWork,
    company_id: int,
    new: Sequence[tuple[Want, int, Row, ProductRow]],
    products: Mapping[str, ProductFacts],
    actor_id: int | None,
    step: Callable[[int], None],
) -> None:
    """New listings with their opening stock: listing rows, batches and movements in
    a few statements, and one opening entry per warehouse for the file."""
    listings_table = table_of(Listing)
    batches_table = table_of(StockBatch)
    opening_value: dict[int, Decimal] = defaultdict(lambda: ZERO)
    opening_count: dict[int, int] = defaultdict(int)
    for start in range(0, len(new), CHUNK):
        chunk = new[start : start + CHUNK]
        rows = []
        for want, wh_id, _row, item in chunk:
            rows.append(
                {
                    "company_id": company_id,
                    "warehouse_id": wh_id,
                    "product_id": products[want.item_code].id,
                    "sales_price": item.sales_price,
                    "purchase_price": item.purchase_price or ZERO,
                    "mrp": item.mrp,
                    "current_stock": item.opening_stock or ZERO,
                    "reorder_level": item.reorder_level or ZERO,
                    "active": True,
                    "version": 1,
                    "archived_at": None,
                }
            )
        listing_ids = await uow.insert_returning_ids(listings_table, rows)
        batch_rows: list[dict[str, Any]] = []
        audits: list[Change] = []
        for (want, wh_id, _row, item), row, listing_id in zip(
            chunk, rows, listing_ids, strict=True
        ):
            pid = row["product_id"]
            shown = {k: v for k, v in row.items() if k not in ("company_id", "version")}
            audits.append(Change("imported", "listing", listing_id, shown))
            listed = NewListing(
                warehouse_id=wh_id,
                sales_price=item.sales_price or ZERO,
                purchase_price=item.purchase_price or ZERO,
                mrp=item.mrp,
                current_stock=item.opening_stock or ZERO,
            )
            announce(uow, company_id, products[want.item_code], listed)
            quantity = item.opening_stock or ZERO
            if quantity <= 0:
                continue
            cost = price4(_opening_cost(item))
            value = money(quantity * cost)
            opening_value[wh_id] += value
            opening_count[wh_id] += 1
            batch_rows.append(
                {
                    "company_id": company_id,
                    "warehouse_id": wh_id,
                    "product_id": pid,
                    "batch_number": None,
                    "expiry_date": None,
                    "unit_cost": cost,
                    "quantity_received": quantity,
                    "quantity_remaining": quantity,
                    "value_remaining": value,
                    "source_type": "opening",
                    "source_id": pid,
                }
            )
        batch_ids = await uow.insert_returning_ids(batches_table, batch_rows)
        movements = [
            {
                "company_id": company_id,
                "warehouse_id": b["warehouse_id"],
                "product_id": b["product_id"],
                "batch_id": batch_id,
                "quantity": b["quantity_received"],
                "cost_amount": b["value_remaining"],
                "reason": "opening",
                "source_type": "opening",
                "source_id": b["product_id"],
            }
            for b, batch_id in zip(batch_rows, batch_ids, strict=True)
        ]
        uow.defer(stock.MOVEMENTS, movements)
        await record_many(uow.session, company_id=company_id, actor_id=actor_id, changes=audits)
        step(len(chunk))
    for wh_id, value in sorted(opening_value.items()):
        bounds.check("opening_stock", value, MONEY, "the opening stock of this file")
        await post(
            uow,
            company_id=company_id,
            warehouse_id=wh_id,
            rule="opening_stock",
            figures={"cost": value},
            narration=f"Opening stock imported: {opening_count[wh_id]} products",
            field="opening_stock",
            source_type="opening",
            source_id=None,
            entry_date=dt.date.today(),
            created_by=actor_id,
        )


async def _update_listing(
    uow: UnitOfWork,
    product: Product,
    listing: Listing,
    item: ProductRow,
    changes: Mapping[str, Any],
    actor_id: int | None,
) -> None:
    """A listing's new prices or reorder level; a new sales price is a price change
    with its history, as from the back office."""
    session = uow.session
    before = {name: getattr(listing, name) for name in LISTING_FIELDS}
    version = listing.version + 1
    if "sales_price" in changes:
        await record_price_change(
            uow,
            product,
            listing,
            changes["sales_price"],
            actor_id=actor_id,
            notes="import",
            announce=False,
        )
    for name in ("purchase_price", "mrp", "reorder_level"):
        if name in changes:
            setattr(listing, name, changes[name])
    listing.version = version
    await session.flush()
    after = {name: getattr(listing, name) for name in LISTING_FIELDS}
    await record_many(
        session,
        company_id=product.company_id,
        actor_id=actor_id,
        changes=[
            Change(
                "imported",
                "listing",
                listing.id,
                {"product_id": product.id, **after},
                {"product_id": product.id, **before},
            )
        ],
    )
    announce(uow, product.company_id, product, listing)


# --- export ----------------------------------------------------------------------------


def _cell(value: Decimal | None) -> str:
    if value is None:
        return ""
    text = format(value.normalize(), "f")
    return "0" if text in ("-0", "") else text


async def export_products(session: AsyncSession, company_id: int) -> str:
    """Every product of the company (archived ones too) in the import's columns, a
    row per listing (a product listed nowhere: one row without a warehouse), with the
    stock on hand as ``opening_stock`` and its average cost as ``opening_cost``: the
    file re-imported changes nothing, and imported into a new company it carries the
    stock and its value across."""
    names: dict[str, dict[int, str]] = {}
    for kind, model in (("category", Category), ("brand", Brand), ("unit", Unit), ("tax", Tax)):
        rows = await session.execute(
            select(model.id, model.name).where(model.company_id == company_id)
        )
        names[kind] = {i: n for i, n in rows.all()}
    warehouses = dict(
        (
            await session.execute(
                select(Warehouse.id, Warehouse.name).where(Warehouse.company_id == company_id)
            )
        ).all()
    )
    barcodes: dict[int, list[str]] = defaultdict(list)
    for pid, code in await session.execute(
        select(ProductBarcode.product_id, ProductBarcode.barcode)
        .where(ProductBarcode.company_id == company_id)
        .order_by(ProductBarcode.id)
    ):
        barcodes[pid].append(code)
    values: dict[tuple[int, int], Decimal] = {}
    for pid, wh, value in await session.execute(
        select(StockBatch.product_id, StockBatch.warehouse_id, func.sum(StockBatch.value_remaining))
        .where(StockBatch.company_id == company_id)
        .group_by(StockBatch.product_id, StockBatch.warehouse_id)
    ):
        values[(pid, wh)] = Decimal(str(value or 0))
    listings: dict[int, list[Listing]] = defaultdict(list)
    for listing in (
        await session.execute(
            select(Listing).where(Listing.company_id == company_id).order_by(Listing.warehouse_id)
        )
    ).scalars():
        listings[listing.product_id].append(listing)
    products = (
        await session.execute(
            select(Product).where(Product.company_id == company_id).order_by(Product.id)
        )
    ).scalars()
    out: list[dict[str, str]] = []
    for p in products:
        own = {
            "item_code": p.item_code,
            "name": p.name,
            "barcode": "|".join(barcodes.get(p.id, [])),
            "category": names["category"].get(p.category_id or 0, ""),
            "brand": names["brand"].get(p.brand_id or 0, ""),
            "unit": names["unit"].get(p.unit_id or 0, ""),
            "tax": names["tax"].get(p.tax_id or 0, ""),
        }
        if not listings.get(p.id):
            out.append(own)
            continue
        for li in listings[p.id]:
            stock_on_hand = Decimal(str(li.current_stock))
            value = values.get((p.id, li.warehouse_id), ZERO)
            cost = price4(value / stock_on_hand) if stock_on_hand > 0 else None
            out.append(
                {
                    **own,
                    "sales_price": _cell(li.sales_price),
                    "purchase_price": _cell(li.purchase_price),
                    "mrp": _cell(li.mrp),
                    "warehouse": warehouses[li.warehouse_id],
                    "opening_stock": _cell(stock_on_hand),
                    "opening_cost": _cell(cost),
                    "reorder_level": _cell(li.reorder_level),
                }
            )
    return csv_text(COLUMNS, out)
