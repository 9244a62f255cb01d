"""Read-only catalog queries, scoped to the key's company or warehouse.

Every query filters on the key's company (and, for products, on its warehouse),
so an id from elsewhere reads exactly like an id that does not exist.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any, cast

from sqlalchemy import (
    BigInteger,
    BindParameter,
    ColumnElement,
    CompoundSelect,
    Float,
    Integer,
    Label,
    Select,
    String,
    bindparam,
    func,
    select,
    union,
)
from sqlalchemy import cast as sql_cast
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute

from tillbook.auth.context import AuthContext
from tillbook.catalog import views
from tillbook.db import AnySelect, Reads, Record
from tillbook.errors import NotFound
from tillbook.kit import xid
from tillbook.kit.idlists import IdList, in_ids
from tillbook.kit.money import number
from tillbook.kit.pagination import Page, Paged, envelope, paged
from tillbook.kit.search import contains, like_any
from tillbook.models import (
    Brand,
    Category,
    Listing,
    Product,
    ProductBarcode,
    ProductUnit,
    StockBatch,
    Tax,
    Unit,
    Warehouse,
)

# The values of the prebuilt reads by name: the key's company and branch.
COMPANY_ID: BindParameter[int] = bindparam("company_id")
WAREHOUSE_ID: BindParameter[int] = bindparam("warehouse_id")

_WAREHOUSE = select(Warehouse.id, Warehouse.name, Warehouse.allow_negative_stock).where(
    Warehouse.company_id == COMPANY_ID, Warehouse.id == WAREHOUSE_ID
)


async def warehouses(reads: Reads, key: AuthContext) -> list[views.Warehouse]:
    """Only the key's own warehouse: a key is bound to one branch."""
    rows = await reads.all(
        _WAREHOUSE, {COMPANY_ID.key: key.company_id, WAREHOUSE_ID.key: key.warehouse_id}
    )
    return [cast(views.Warehouse, xid.record(w, "name", "allow_negative_stock")) for w in rows]


# --- search -------------------------------------------------------------------------


# --- products -----------------------------------------------------------------------


def _ref(id_: int | None, name: str) -> views.XidNamed | None:
    return None if id_ is None else {"xid": xid.encode(id_), "name": name}


def product_head(row: Record) -> views.ProductHead:
    """A product as a till sees it, from a row of ``products_with_refs`` (its
    columns by name), before its barcodes and units (``_listed``)."""
    unit_id = row["unit_ref_id"]
    return {
        "id": row["id"],
        "xid": xid.encode(row["id"]),
        "name": row["name"],
        "slug": row["slug"],
        "item_code": row["item_code"],
        "barcode": row["barcode"],
        "product_type": row["product_type"],
        "sales_price": number(row["sales_price"]),
        "purchase_price": number(row["purchase_price"]),
        "mrp": None if row["mrp"] is None else number(row["mrp"]),
        "current_stock": number(row["current_stock"]),
        "reorder_level": number(row["reorder_level"]),
        "active": row["archived_at"] is None and row["listing_active"],
        "category": _ref(row["category_ref_id"], row["category_name"]),
        "brand": _ref(row["brand_ref_id"], row["brand_name"]),
        "unit": None
        if unit_id is None
        else {
            "xid": xid.encode(unit_id),
            "name": row["unit_name"],
            "short_name": row["unit_short_name"],
        },
        # So that a till knows which products to fetch for their units (a box of 12).
        "has_additional_units": row["has_units"],
        # What a register needs to price a line offline: the product's own tax.
        "tax_id": row["tax_id"],
    }


def _unit_item(pu: Record) -> views.AdditionalUnit:
    """An additional unit of a product (a box of 12), from a row of ``_UNITS``."""
    return {
        "child_unit_id": xid.encode(pu["unit_id"]),
        "operator": pu["operator"],
        "operator_value": number(pu["operator_value"]),
        "alternative_price": number(pu["alternative_price"]),
        "unit": {"name": pu["name"], "short_name": pu["short_name"]},
    }


def _listed(
    head: views.ProductHead, codes: Sequence[str], units: list[views.AdditionalUnit]
) -> views.ProductListItem:
    """``head`` as a list item, with its barcodes (the primary first) and units."""
    primary = head["barcode"]
    found = [primary, *(c for c in codes if c != primary)] if primary else list(codes)
    return {**head, "barcodes": found, "additional_units": units}


_UNITS = select(
    ProductUnit.product_id,
    ProductUnit.operator,
    ProductUnit.operator_value,
    ProductUnit.alternative_price,
    Unit.id.label("unit_id"),
    Unit.name,
    Unit.short_name,
).join(Unit, (Unit.id == ProductUnit.unit_id) & (Unit.company_id == ProductUnit.company_id))


def listed_items(
    items: Sequence[views.ProductHead], codes: Sequence[Record], units: Sequence[Record]
) -> list[views.ProductListItem]:
    """``items`` as list items, given the rows of their barcodes (``product_id``,
    ``barcode``) and additional units (``_UNITS``), each in the products' order."""
    by_product: dict[int, list[str]] = defaultdict(list)
    for row in codes:
        by_product[row["product_id"]].append(row["barcode"])
    units_of: dict[int, list[views.AdditionalUnit]] = defaultdict(list)
    for row in units:
        units_of[row["product_id"]].append(_unit_item(row))
    return [
        _listed(item, by_product.get(item["id"], []), units_of.get(item["id"], []))
        for item in items
    ]


def codes_and_units_of(
    products: Callable[[Any], ColumnElement[bool]], company_id: Any
) -> dict[str, Select[*tuple[Any, ...]]]:
    """The statements of ``listed_items``' rows: the barcodes (``codes``) and the
    additional units (``units``) of the products ``products`` names (a condition on a
    product id column: ``in_`` a list, or ``kit.changes``' page of a prebuilt feed),
    of a company id or a ``bindparam`` of one, in the products' order."""
    return {
        "codes": select(ProductBarcode.product_id, ProductBarcode.barcode)
        .where(ProductBarcode.company_id == company_id, products(ProductBarcode.product_id))
        .order_by(ProductBarcode.product_id, ProductBarcode.id),
        "units": _UNITS.where(
            ProductUnit.company_id == company_id, products(ProductUnit.product_id)
        ).order_by(ProductUnit.product_id, ProductUnit.id),
    }


_has_units = (
    select(ProductUnit.id)
    .where(ProductUnit.product_id == Product.id, ProductUnit.company_id == Product.company_id)
    .correlate(Product)
    .exists()
    .label("has_units")
)


def _wire_number(column: InstrumentedAttribute[Any]) -> Label[float]:
    """A listing's price or stock as the JSON number the answer sends (``number``),
    converted by the database: asyncpg's Decimal for a numeric cost 1.3 µs a value to
    decode and ``number`` 1.7 more to make a float of it, about a sixth of a feed
    page's CPU (five a product). The double is the one ``float`` of the decimal
    gives (PostgreSQL converts through the decimal's text, correctly rounded)."""
    return sql_cast(column, Float()).label(column.key)


# What a product item shows, by name (``product_head``): columns only, no ORM
# entities to build (a feed page of 100 products built 500 of them).
_PRODUCT_COLUMNS = (
    Product.id,
    Product.name,
    Product.slug,
    Product.item_code,
    Product.barcode,
    Product.product_type,
    Product.archived_at,
    Product.tax_id,
    _wire_number(Listing.sales_price),
    _wire_number(Listing.purchase_price),
    _wire_number(Listing.mrp),
    _wire_number(Listing.current_stock),
    _wire_number(Listing.reorder_level),
    Listing.active.label("listing_active"),
    Category.id.label("category_ref_id"),
    Category.name.label("category_name"),
    Brand.id.label("brand_ref_id"),
    Brand.name.label("brand_name"),
    Unit.id.label("unit_ref_id"),
    Unit.name.label("unit_name"),
    Unit.short_name.label("unit_short_name"),
    _has_units,
)


def products_with_refs(key: AuthContext) -> Select[*tuple[Any, ...]]:
    """Products with the warehouse's listing, their category, brand and unit and
    whether they have additional units, in one statement (no N+1); the columns of
    ``product_head``."""
    return with_refs(key.warehouse_id)


def with_refs(warehouse_id: Any) -> Select[*tuple[Any, ...]]:
    """``products_with_refs`` for a warehouse id or a ``bindparam`` of one (the
    prebuilt reads)."""
    return (
        select(*_PRODUCT_COLUMNS)
        .select_from(Product)
        .join(
            Listing,
            (Listing.product_id == Product.id)
            & (Listing.company_id == Product.company_id)
            & (Listing.warehouse_id == warehouse_id),
        )
        .outerjoin(
            Category,
            (Category.id == Product.category_id) & (Category.company_id == Product.company_id),
        )
        .outerjoin(Brand, (Brand.id == Product.brand_id) & (Brand.company_id == Product.company_id))
        .outerjoin(Unit, (Unit.id == Product.unit_id) & (Unit.company_id == Product.company_id))
    )


def searched(
    conds: Sequence[ColumnElement[bool]],
    pattern: Any,
    code: Any,
    company_id: Any,
    *columns: Any,
) -> CompoundSelect[Any]:
    """The ids of the products meeting ``conds`` that a search finds: ``columns``
    containing its text (``pattern``, a ``kit.search.contains`` pattern), or any of
    their barcodes being exactly ``code`` (what a scanner sends). Values or bound
    parameters. A UNION, so that PostgreSQL answers the text through the trigram
    indexes, combined, and the barcode through its unique index: as one OR, the
    barcodes' subquery kept it from combining the indexes and it read every product
    (21 ms of its CPU a search of the bench's 20,000, against 3)."""
    coded = select(ProductBarcode.product_id).where(
        ProductBarcode.company_id == company_id, ProductBarcode.barcode == code
    )
    return union(
        select(Product.id).where(*conds, like_any(pattern, *columns)),
        select(Product.id).where(*conds, Product.id.in_(coded)),
    )


# The values of a page of the product list (``products``), named for ``Reads``.
_PATTERN: BindParameter[str] = bindparam("search_pattern", type_=String())
_CODE: BindParameter[str] = bindparam("search_code", type_=String())
_CATEGORY: BindParameter[int] = bindparam("category_id", type_=BigInteger())
_BRAND: BindParameter[int] = bindparam("brand_id", type_=BigInteger())
_LIMIT: BindParameter[int] = bindparam("list_limit", type_=Integer())
_OFFSET: BindParameter[int] = bindparam("list_offset", type_=Integer())
_PAGE_IDS: BindParameter[list[int]] = bindparam("page_ids", type_=IdList())


@functools.cache
def _product_list(
    search: bool, category: bool, brand: bool
) -> tuple[AnySelect, AnySelect, dict[str, AnySelect]]:
    """The statements of a page of the product list with these filters, built once
    each (``Reads``): the page's rows with the total of matches beside them, the
    count on its own (for a page past the end, which has no row to carry it), and
    the page's barcodes and units by its ids."""
    listed = (
        select(Listing.id)
        .where(
            Listing.product_id == Product.id,
            Listing.company_id == Product.company_id,
            Listing.warehouse_id == WAREHOUSE_ID,
            Listing.active.is_(True),
        )
        .correlate(Product)
        .exists()
    )
    conds: list[ColumnElement[bool]] = [
        Product.company_id == COMPANY_ID,
        Product.archived_at.is_(None),
        listed,
    ]
    if category:
        conds.append(Product.category_id == _CATEGORY)
    if brand:
        conds.append(Product.brand_id == _BRAND)
    ids: Any
    if search:
        # Materialised, so that the matches are found (by index) before they are
        # ordered: inlined, the planner walks the primary key of every product for
        # the LIMIT and filters each row.
        ids = (
            searched(
                conds,
                _PATTERN,
                _CODE,
                COMPANY_ID,
                Product.name,
                Product.item_code,
                Product.barcode,
            )
            .cte("search_ids")
            .prefix_with("MATERIALIZED", dialect="postgresql")
        )
    else:
        ids = select(Product.id).where(*conds).subquery("listed_ids")
    matched = select(ids.c.id).order_by(ids.c.id).limit(_LIMIT).offset(_OFFSET).subquery("matched")
    count = select(func.count().label("total")).select_from(ids)
    # The total as a subquery of its own, run once: a window over every match
    # (``count(*) OVER ()``) kept a plain list of 10,000 products from walking the
    # primary key for its page, a third slower than the count and the page apart.
    rows = (
        with_refs(WAREHOUSE_ID)
        .add_columns(count.scalar_subquery().label("total"))
        .join(matched, matched.c.id == Product.id)
        .where(Product.company_id == COMPANY_ID)
        .order_by(Product.id)
    )
    return rows, count, codes_and_units_of(lambda c: in_ids(c, _PAGE_IDS), COMPANY_ID)


async def products(
    reads: Reads,
    key: AuthContext,
    page: Page,
    *,
    search: str | None = None,
    category_id: int | None = None,
    brand_id: int | None = None,
) -> Paged[views.ProductListItem]:
    """One page of the warehouse's products, in id order, with its total.

    Prebuilt statements (``_product_list``), outside a transaction: the matching
    page with its total, then the page's barcodes and, only when one of its products
    has additional units, their units (most products have none). A register walking
    a catalog must not ask for each product's detail."""
    params: dict[str, Any] = {
        COMPANY_ID.key: key.company_id,
        WAREHOUSE_ID.key: key.warehouse_id,
        _LIMIT.key: page.limit,
        _OFFSET.key: page.offset,
    }
    if search:
        params[_PATTERN.key] = contains(search)
        params[_CODE.key] = search.strip()
    if category_id is not None:
        params[_CATEGORY.key] = category_id
    if brand_id is not None:
        params[_BRAND.key] = brand_id
    rows, count, lists = _product_list(bool(search), category_id is not None, brand_id is not None)
    found = await reads.all(rows, params)
    if not found:
        total = 0 if page.offset == 0 else (await reads.all(count, params))[0]["total"]
        return paged(page, total, [])
    heads = [product_head(row) for row in found]
    ids = {COMPANY_ID.key: key.company_id, _PAGE_IDS.key: [h["id"] for h in heads]}
    codes = await reads.all(lists["codes"], ids)
    units: Sequence[Record] = []
    with_units = [h["id"] for h in heads if h["has_additional_units"]]
    if with_units:
        units = await reads.all(
            lists["units"], {COMPANY_ID.key: key.company_id, _PAGE_IDS.key: with_units}
        )
    return paged(page, found[0]["total"], listed_items(heads, codes, units))


def _utc_iso(value: dt.datetime) -> str:
    """ISO 8601 in UTC with a ``Z``; SQLite hands back naive UTC timestamps."""
    aware = value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)
    return aware.replace(microsecond=0).isoformat().replace("+00:00", "Z")


# A product read (``product``): prebuilt, so that a till's read by id costs its round
# trips and not the building and compiling of its statements (issue 27).
_ID: BindParameter[int] = bindparam("product_id")
_PRODUCT = (
    with_refs(WAREHOUSE_ID)
    .add_columns(Product.description)
    .where(Product.id == _ID, Product.company_id == COMPANY_ID)
)
_CODES = (
    select(ProductBarcode.barcode)
    .where(ProductBarcode.product_id == _ID, ProductBarcode.company_id == COMPANY_ID)
    .order_by(ProductBarcode.id)
)
_UNITS_OF = _UNITS.where(
    ProductUnit.product_id == _ID, ProductUnit.company_id == COMPANY_ID
).order_by(ProductUnit.id)
_OPEN_BATCHES = (
    select(
        StockBatch.id,
        StockBatch.batch_number,
        StockBatch.expiry_date,
        StockBatch.quantity_remaining,
        StockBatch.unit_cost,
        StockBatch.created_at,
    )
    .where(
        StockBatch.product_id == _ID,
        StockBatch.company_id == COMPANY_ID,
        StockBatch.warehouse_id == WAREHOUSE_ID,
        StockBatch.quantity_remaining != 0,
    )
    .order_by(StockBatch.id)
)


async def product(reads: Reads, key: AuthContext, product_id: int | None) -> views.ProductDetail:
    """One product listed in the key's warehouse (archived ones too: a till may hold
    one in an old sale), with its barcodes, additional units and open batches."""
    params = {
        "product_id": product_id,
        "company_id": key.company_id,
        "warehouse_id": key.warehouse_id,
    }
    found = None
    if product_id is not None:
        found = await reads.one(
            _PRODUCT, params, codes=_CODES, units=_UNITS_OF, batches=_OPEN_BATCHES
        )
    if found is None:
        raise NotFound("product not found")
    row, lists = found
    listed = _listed(
        product_head(row),
        [r["barcode"] for r in lists["codes"]],
        [_unit_item(u) for u in lists["units"]],
    )
    return {
        **listed,
        "description": row["description"],
        "batches": [
            {
                "id": b["id"],
                "batch_number": b["batch_number"],
                "expiry_date": None if b["expiry_date"] is None else b["expiry_date"].isoformat(),
                "quantity_remaining": number(b["quantity_remaining"]),
                "unit_cost": number(b["unit_cost"]),
                "received_at": _utc_iso(b["created_at"]),
            }
            for b in lists["batches"]
        ],
    }


# --- categories and brands -----------------------------------------------------------


def _category_tree(
    categories: Sequence[Record],
) -> tuple[dict[int, Record], Callable[[Record], views.Category]]:
    """The company's categories (rows of ``_CATEGORIES``) by id, and a function
    rendering one with its subtree."""
    by_id = {c["id"]: c for c in categories}
    children: dict[int, list[Record]] = defaultdict(list)
    for c in categories:
        if c["parent_id"] is not None:
            children[c["parent_id"]].append(c)

    def node(c: Record, seen: frozenset[int] = frozenset()) -> views.Category:
        seen = seen | {c["id"]}  # a parent loop in bad data must not recurse forever
        children_ = [node(k, seen) for k in children[c["id"]] if k["id"] not in seen]
        return {**category_fields(c), "children": children_}

    return by_id, node


# The company's categories, a prebuilt read (``Reads``): a till reads the tree often.
_CATEGORIES = (
    select(Category.id, Category.name, Category.slug, Category.parent_id, Category.image)
    .where(Category.company_id == COMPANY_ID)
    .order_by(Category.name, Category.id)
)


async def categories(reads: Reads, key: AuthContext) -> list[views.Category]:
    """The company's category tree: roots, each with nested ``children``."""
    cats = await reads.all(_CATEGORIES, {COMPANY_ID.key: key.company_id})
    by_id, node = _category_tree(cats)
    return [node(c) for c in cats if c["parent_id"] is None or c["parent_id"] not in by_id]


async def category(reads: Reads, key: AuthContext, category_id: int | None) -> views.Category:
    cats: Sequence[Record] = []
    if category_id is not None:
        cats = await reads.all(_CATEGORIES, {COMPANY_ID.key: key.company_id})
    by_id, node = _category_tree(cats)
    if category_id is None or category_id not in by_id:
        raise NotFound("category not found")
    return node(by_id[category_id])


def brand_item(b: Record) -> views.Brand:
    """A brand from a row holding its columns by name (``_BRANDS``, a feed's row)."""
    return cast(views.Brand, xid.record(b, "name", "slug", "image"))


def category_fields(c: Record) -> views.CategoryFields:
    """A category without its subtree (the feed's, flat), from its columns by name."""
    return cast(views.CategoryFields, xid.record(c, "name", "slug", "parent_id", "image"))


# The reference lists a till reads at each sync (brands, units, taxes), built once
# and read as the categories are (``Database.reads``): through a session each cost
# a transaction's two round trips and SQLAlchemy's compilation and entities, more
# than their few rows.
_BRANDS = select(Brand.id, Brand.name, Brand.slug, Brand.image).where(
    Brand.company_id == COMPANY_ID
)
_BRAND_LIST = _BRANDS.order_by(Brand.name, Brand.id)
_BRAND_BY_ID = _BRANDS.where(Brand.id == bindparam("brand_id"))


async def brands(reads: Reads, key: AuthContext) -> list[views.Brand]:
    rows = await reads.all(_BRAND_LIST, {COMPANY_ID.key: key.company_id})
    return [brand_item(b) for b in rows]


async def brand(reads: Reads, key: AuthContext, brand_id: int | None) -> views.Brand:
    rows: Sequence[Record] = []
    if brand_id is not None:
        rows = await reads.all(_BRAND_BY_ID, {COMPANY_ID.key: key.company_id, "brand_id": brand_id})
    if not rows:
        raise NotFound("brand not found")
    return brand_item(rows[0])


# --- units and taxes, as a till reads them (GET /units, GET /taxes) -----------------


_UNIT_LIST = (
    select(Unit.id, Unit.name, Unit.short_name)
    .where(Unit.company_id == COMPANY_ID, Unit.archived_at.is_(None))
    .order_by(Unit.name, Unit.id)
)
_TAX_LIST = (
    select(Tax.id, Tax.name, Tax.rate, Tax.inclusive)
    .where(Tax.company_id == COMPANY_ID, Tax.archived_at.is_(None))
    .order_by(Tax.name, Tax.id)
)


async def units(reads: Reads, key: AuthContext) -> list[views.UnitItem]:
    rows = await reads.all(_UNIT_LIST, {COMPANY_ID.key: key.company_id})
    return [cast(views.UnitItem, xid.record(u, "name", "short_name")) for u in rows]


async def taxes(reads: Reads, key: AuthContext) -> list[views.TaxItem]:
    rows = await reads.all(_TAX_LIST, {COMPANY_ID.key: key.company_id})
    return [tax_item(t) for t in rows]


def tax_item(t: Record) -> views.TaxItem:
    """A tax from a row holding its columns by name (``_TAX_LIST``, a feed's row)."""
    item = xid.record(t, "name")
    item["rate"] = number(t["rate"])
    item["inclusive"] = t["inclusive"]
    return cast(views.TaxItem, item)


async def stock_page(
    session: AsyncSession,
    company_id: int,
    page: Page,
    *,
    search: str | None = None,
    include_archived: bool = False,
) -> dict[str, Any]:
    """One page of the company's products for the back office's list, with each one's
    listings (warehouse, price, stock, reorder level) in one more statement: three
    statements per page whatever its length. Searched like ``catalog.products.page``
    (name or item code, or an exact barcode)."""
    conds: list[ColumnElement[bool]] = [Product.company_id == company_id]
    if not include_archived:
        conds.append(Product.archived_at.is_(None))
    if search:
        found = searched(
            list(conds),
            contains(search),
            search.strip(),
            company_id,
            Product.name,
            Product.item_code,
        )
        conds.append(Product.id.in_(found))
    total = (
        await session.execute(select(func.count()).select_from(Product).where(*conds))
    ).scalar_one()
    rows: list[dict[str, Any]] = []
    if page.offset < total:
        products = (
            await session.execute(
                select(Product.id, Product.name, Product.item_code, Product.archived_at)
                .where(*conds)
                .order_by(Product.id)
                .limit(page.limit)
                .offset(page.offset)
            )
        ).all()
        listed: dict[int, list[dict[str, Any]]] = defaultdict(list)
        if products:
            for li in (
                await session.execute(
                    select(
                        Listing.product_id,
                        Listing.warehouse_id,
                        Listing.sales_price,
                        Listing.current_stock,
                        Listing.reorder_level,
                        Listing.active,
                    )
                    .where(
                        Listing.company_id == company_id,
                        Listing.product_id.in_([p.id for p in products]),
                    )
                    .order_by(Listing.product_id, Listing.warehouse_id)
                )
            ).all():
                listed[li.product_id].append(
                    {
                        "warehouse_id": li.warehouse_id,
                        "sales_price": li.sales_price,
                        "current_stock": li.current_stock,
                        "reorder_level": li.reorder_level,
                        "active": li.active,
                    }
                )
        rows = [
            {
                "id": p.id,
                "name": p.name,
                "item_code": p.item_code,
                "archived": p.archived_at is not None,
                "listings": listed[p.id],
            }
            for p in products
        ]
    return envelope(page, total, rows)


# Barcodes per statement: well under any database's limit on bound parameters.
BARCODE_CHUNK = 2_000


async def barcode_owners(
    session: AsyncSession, company_id: int, codes: Sequence[str]
) -> dict[str, int]:
    """Which of the company's products each of ``codes`` already belongs to (a
    barcode names one product): the one read behind the barcode check of a product
    edit and of an import, in chunks so that a file's 10,000 codes are a few
    statements."""
    wanted = list(dict.fromkeys(codes))
    out: dict[str, int] = {}
    for start in range(0, len(wanted), BARCODE_CHUNK):
        rows = await session.execute(
            select(ProductBarcode.barcode, ProductBarcode.product_id).where(
                ProductBarcode.company_id == company_id,
                ProductBarcode.barcode.in_(wanted[start : start + BARCODE_CHUNK]),
            )
        )
        out.update({code: pid for code, pid in rows.all()})
    return out
