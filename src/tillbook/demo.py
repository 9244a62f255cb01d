"""The demo data set (``tillbook demo``), built through the same services as
everything else, so the books it leaves behind are real: opening stock is posted
Dr 11700 / Cr 31100 per batch, every warehouse gets an API key.

Two companies: a grocer with two stores and a hardware shop with one. Every run
creates new companies (with a fresh admin password), independent of earlier runs.

Each store then trades for the last thirty days (``_trade``): a few sales a day
(cash, card, now and then on account to a regular customer), a restock from a
supplier on credit, the electricity bill, all through the same services as the till's
requests, so that the back office opens on a shop with a history (a dashboard
with its chart, margins, low stock, money due both ways) and its books are the
books those documents make. The choices come from a generator seeded with the
company's name: the same history on every run, moved to end today.
"""

from __future__ import annotations

import datetime as dt
import random
import secrets
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from sqlalchemy import select

from tillbook.auth.context import AuthContext, acting_for
from tillbook.catalog import rows as catalog_rows
from tillbook.catalog import seeding as catalog
from tillbook.inventory.service import Listed
from tillbook.kit import xid
from tillbook.kit.money import number
from tillbook.models import Account, ExpenseCategory, Listing, PaymentMode, Product
from tillbook.orders import purchases, sales
from tillbook.orders.schemas import PurchaseIn, SaleIn
from tillbook.payments import expenses
from tillbook.payments.schemas import ExpenseIn
from tillbook.tenancy import service as tenancy
from tillbook.unit import UnitOfWork

D = Decimal
DEMO_RATE_LIMIT = "600/minute"


@dataclass(frozen=True)
class ProductSpec:
    name: str
    item_code: str
    sales_price: str
    purchase_price: str
    batches: tuple[tuple[str, str], ...]  # (quantity, unit cost), oldest first
    category: str
    brand: str | None = None
    barcode: str | None = None
    unit: str = "pc"
    box_of: int | None = None  # an extra "Box" unit of this many pieces
    box_price: str | None = None
    # The maximum retail price printed on the pack (never below the sales price);
    # None for what has no pack to print it on: loose produce, the store's own bakery,
    # nails sold by weight.
    mrp: str | None = None
    # Below this much stock the back office lists it as low (to reorder).
    reorder_level: str = "12"


@dataclass(frozen=True)
class WarehouseSpec:
    name: str
    products: tuple[ProductSpec, ...]


@dataclass(frozen=True)
class CompanySpec:
    name: str
    domain: str
    categories: tuple[tuple[str, str | None], ...]  # (name, parent name)
    brands: tuple[str, ...]
    customers: tuple[tuple[str, str], ...]  # (name, phone)
    suppliers: tuple[tuple[str, str], ...]
    warehouses: tuple[WarehouseSpec, ...]
    units: tuple[tuple[str, str], ...] = (("Piece", "pc"), ("Box", "box"), ("Kilogram", "kg"))


P = ProductSpec

GROCER = CompanySpec(
    name="Green Basket Grocers",
    domain="greenbasket.example",
    categories=(
        ("Beverages", None),
        ("Soft drinks", "Beverages"),
        ("Coffee & tea", "Beverages"),
        ("Dairy", None),
        ("Bakery", None),
        ("Produce", None),
        ("Pantry", None),
    ),
    brands=("Fresh Farms", "Sunny Valley", "Brewhouse", "Golden Mill"),
    customers=(("Maria Lopez", "555-0101"), ("Northwind Cafe", "555-0102")),
    suppliers=(("Valley Wholesale Foods", "555-0201"), ("City Beverage Distributors", "555-0202")),
    warehouses=(
        WarehouseSpec(
            "Downtown store",
            (
                P("Sparkling water 500ml", "GB-1001", "0.90", "0.40",
                  (("48", "0.35"), ("48", "0.40")), "Soft drinks", "Sunny Valley",
                  "2000000010012", box_of=12, box_price="9.50", mrp="1.00"),
                P("Orange juice 1L", "GB-1002", "2.49", "1.30",
                  (("20", "1.20"), ("20", "1.30")), "Soft drinks", "Sunny Valley",
                  "2000000010029", mrp="2.79"),
                P("Ground coffee 250g", "GB-1003", "5.99", "3.60",
                  (("15", "3.40"), ("15", "3.60")), "Coffee & tea", "Brewhouse",
                  "2000000010036", mrp="6.49"),
                P("Whole milk 1L", "GB-1004", "1.19", "0.70",
                  (("30", "0.65"), ("30", "0.70")), "Dairy", "Fresh Farms", mrp="1.25"),
                P("Cheddar cheese 200g", "GB-1005", "3.49", "2.05",
                  (("12", "1.95"), ("12", "2.05")), "Dairy", "Fresh Farms", mrp="3.99"),
                P("Sourdough loaf", "GB-1006", "3.80", "1.60",
                  (("10", "1.50"), ("10", "1.60")), "Bakery", "Golden Mill"),
                P("Bananas", "GB-1007", "1.29", "0.58",
                  (("25", "0.55"), ("25", "0.5833")), "Produce", None, unit="kg"),
                P("Basmati rice 1kg", "GB-1008", "2.99", "1.75",
                  (("20", "1.70"), ("20", "1.75")), "Pantry", "Golden Mill",
                  "2000000010081", mrp="3.29"),
            ),
        ),
        WarehouseSpec(
            "Riverside store",
            (
                P("Cola 330ml can", "GB-2001", "0.99", "0.45",
                  (("72", "0.42"), ("48", "0.45")), "Soft drinks", "Sunny Valley",
                  "2000000020011", box_of=12, box_price="10.50", mrp="1.10"),
                P("Green tea, 20 bags", "GB-2002", "2.79", "1.40",
                  (("18", "1.35"), ("18", "1.40")), "Coffee & tea", "Brewhouse",
                  "2000000020028", mrp="2.99"),
                P("Greek yoghurt 500g", "GB-2003", "2.29", "1.25",
                  (("16", "1.20"), ("16", "1.25")), "Dairy", "Fresh Farms", mrp="2.49"),
                P("Free-range eggs, 6", "GB-2004", "2.59", "1.50",
                  (("24", "1.45"), ("24", "1.50")), "Dairy", "Fresh Farms",
                  "2000000020042", mrp="2.79"),
                P("Croissant", "GB-2005", "1.10", "0.42",
                  (("30", "0.40"), ("30", "0.4167")), "Bakery", "Golden Mill"),
                P("Apples, Gala", "GB-2006", "2.20", "1.10",
                  (("20", "1.00"), ("20", "1.10")), "Produce", None, unit="kg"),
                P("Olive oil 500ml", "GB-2007", "6.49", "4.10",
                  (("10", "3.90"), ("10", "4.10")), "Pantry", None, "2000000020073", mrp="6.99"),
                # Listed in both stores (one product of the company's catalog), at
                # Riverside's own prices and with its own stock.
                P("Sparkling water 500ml", "GB-1001", "0.95", "0.41",
                  (("24", "0.41"),), "Soft drinks", "Sunny Valley",
                  "2000000010012", mrp="1.00"),
                P("Whole milk 1L", "GB-1004", "1.25", "0.72",
                  (("20", "0.72"),), "Dairy", "Fresh Farms", mrp="1.29"),
                P("Bananas", "GB-1007", "1.35", "0.60",
                  (("15", "0.60"),), "Produce", None, unit="kg"),
            ),
        ),
    ),
)  # fmt: skip

HARDWARE = CompanySpec(
    name="Oak & Iron Hardware",
    domain="oakiron.example",
    categories=(
        ("Tools", None),
        ("Hand tools", "Tools"),
        ("Fasteners", None),
        ("Electrical", None),
        ("Paint", None),
    ),
    brands=("Stanwick", "BrightLite", "FixRight"),
    customers=(("Tom Becker", "555-0301"), ("Riverside Builders Ltd", "555-0302")),
    suppliers=(("Metro Tool Supply", "555-0401"),),
    warehouses=(
        WarehouseSpec(
            "High Street shop",
            (
                P("Claw hammer 16oz", "OI-3001", "14.99", "7.80",
                  (("8", "7.50"), ("8", "7.80")), "Hand tools", "Stanwick", "2000000030010",
                  mrp="16.99"),
                P("Screwdriver set, 6 pcs", "OI-3002", "12.49", "6.20",
                  (("10", "6.00"), ("10", "6.20")), "Hand tools", "Stanwick",
                  "2000000030027", mrp="13.99"),
                P("LED bulb E27 9W", "OI-3003", "2.99", "1.10",
                  (("36", "1.05"), ("36", "1.10")), "Electrical", "BrightLite",
                  "2000000030034", box_of=12, box_price="30.00", mrp="3.49"),
                P("Extension cord 5m", "OI-3004", "9.99", "5.25",
                  (("6", "5.10"), ("6", "5.25")), "Electrical", "BrightLite", mrp="10.99"),
                P("Wood screws 4x40, 100 pcs", "OI-3005", "4.49", "1.90",
                  (("25", "1.80"), ("25", "1.90")), "Fasteners", "FixRight",
                  "2000000030058", mrp="4.99"),
                P("Wall plugs 6mm, 50 pcs", "OI-3006", "2.49", "0.95",
                  (("30", "0.90"), ("30", "0.95")), "Fasteners", "FixRight", mrp="2.79"),
                P("Interior paint white 2.5L", "OI-3007", "24.90", "13.40",
                  (("5", "13.00"), ("5", "13.40")), "Paint", None, "2000000030072",
                  mrp="27.50"),
                P("Galvanised nails 50mm, loose", "OI-3008", "6.90", "3.60",
                  (("10", "3.50"), ("10", "3.60")), "Fasteners", None, unit="kg"),
            ),
        ),
    ),
)  # fmt: skip

DEMO_COMPANIES = (GROCER, HARDWARE)


@dataclass
class _Names:
    """Ids of the records made so far, by the names the specs use."""

    units: dict[str, int] = field(default_factory=dict)
    categories: dict[str, int] = field(default_factory=dict)
    brands: dict[str, int] = field(default_factory=dict)
    products: dict[str, Product] = field(default_factory=dict)  # by item_code


def _party(user_id: int, name: str) -> dict[str, Any]:
    return {"id": user_id, "xid": xid.encode(user_id), "name": name}


async def _build_company(uow: UnitOfWork, spec: CompanySpec) -> dict[str, Any]:
    session = uow.session
    tag = secrets.token_hex(3)
    email = f"admin+{tag}@{spec.domain}"
    password = secrets.token_urlsafe(12)
    company, admin = await tenancy.create_company(
        session, spec.name, admin_email=email, admin_password=password
    )
    cid = company.id
    out = _Names()
    for unit_name, short in spec.units:
        out.units[short] = (await catalog.create_unit(session, cid, unit_name, short)).id
    categories = []
    for cat_name, parent in spec.categories:
        parent_id = out.categories[parent] if parent else None
        cat = await catalog.create_category(session, cid, cat_name, parent_id=parent_id)
        out.categories[cat_name] = cat.id
        categories.append(
            {"id": cat.id, "xid": xid.encode(cat.id), "name": cat.name, "parent_id": parent_id}
        )
    brands = []
    for brand_name in spec.brands:
        brand = await catalog.create_brand(session, cid, brand_name)
        out.brands[brand_name] = brand.id
        brands.append({"id": brand.id, "xid": xid.encode(brand.id), "name": brand.name})
    taxes = []
    for tax_name, rate, inclusive in (
        ("VAT 10%", D("10"), False),
        ("VAT 20% incl.", D("20"), True),
    ):
        tax = await catalog.create_tax(session, cid, tax_name, rate, inclusive)
        taxes.append({"id": tax.id, "name": tax.name, "rate": number(rate), "inclusive": inclusive})
    customers = []
    for name, phone in spec.customers:
        party = await catalog.create_party(session, cid, "customer", name, phone=phone)
        customers.append(_party(party.id, party.name))
    walk_in = await catalog.create_party(session, cid, "customer", "Walk-in customer", walk_in=True)
    customers.append(_party(walk_in.id, walk_in.name))
    suppliers = []
    for name, phone in spec.suppliers:
        party = await catalog.create_party(session, cid, "supplier", name, phone=phone)
        suppliers.append(_party(party.id, party.name))

    warehouses = []
    products: list[dict[str, Any]] = []
    for wh_spec in spec.warehouses:
        warehouse = await tenancy.create_warehouse(session, cid, wh_spec.name)
        new_key = await tenancy.create_api_key(
            session, warehouse.id, f"{wh_spec.name} till", rate_limit=DEMO_RATE_LIMIT
        )
        warehouses.append(
            {
                "id": warehouse.id,
                "xid": xid.encode(warehouse.id),
                "name": warehouse.name,
                "keys": [
                    {
                        "name": new_key.key.name,
                        "public_key": new_key.key.public_key,
                        "secret_key": new_key.secret_key,
                        "hmac_secret": new_key.hmac_secret,
                        "rate_limit": new_key.key.rate_limit,
                    }
                ],
            }
        )
        for p in wh_spec.products:
            product = await _build_product(uow, out, cid, warehouse.id, p, admin.id)
            products.append(
                {
                    "id": product.id,
                    "xid": xid.encode(product.id),
                    "name": product.name,
                    "item_code": product.item_code,
                    "warehouse_id": warehouse.id,
                    "sales_price": number(product.sales_price),
                    "purchase_price": number(product.purchase_price),
                    "mrp": None if product.mrp is None else number(product.mrp),
                    "current_stock": number(product.current_stock),
                }
            )

    modes = await session.execute(
        select(PaymentMode.id, PaymentMode.code, PaymentMode.name, Account.code)
        .join(
            Account,
            (Account.id == PaymentMode.account_id) & (Account.company_id == PaymentMode.company_id),
        )
        .where(PaymentMode.company_id == cid)
        .order_by(PaymentMode.id)
    )
    expense_categories = await session.execute(
        select(ExpenseCategory.id, ExpenseCategory.name, Account.code)
        .join(
            Account,
            (Account.id == ExpenseCategory.account_id)
            & (Account.company_id == ExpenseCategory.company_id),
        )
        .where(ExpenseCategory.company_id == cid)
        .order_by(ExpenseCategory.id)
    )
    built: dict[str, Any] = {
        "id": cid,
        "name": company.name,
        "admin": {"email": email, "password": password},
        "warehouses": warehouses,
        "customers": customers,
        "walk_in_customer_id": walk_in.id,
        "suppliers": suppliers,
        "payment_modes": [
            {"id": i, "xid": xid.encode(i), "code": code, "name": name, "account_code": acc}
            for i, code, name, acc in modes.all()
        ],
        "taxes": taxes,
        "expense_categories": [
            {"id": i, "name": name, "account_code": acc}
            for i, name, acc in expense_categories.all()
        ],
        "categories": categories,
        "brands": brands,
        "products": products,
    }
    await _trade(uow, built, admin.id, dt.datetime.now(dt.UTC).date())
    stock = {
        (row.product_id, row.warehouse_id): row.current_stock
        for row in (
            await session.execute(
                select(Listing.product_id, Listing.warehouse_id, Listing.current_stock).where(
                    Listing.warehouse_id.in_([w["id"] for w in warehouses])
                )
            )
        ).all()
    }
    for listed in products:
        listed["current_stock"] = number(stock[(listed["id"], listed["warehouse_id"])])
    return built


async def _build_product(
    uow: UnitOfWork,
    built: _Names,
    company_id: int,
    warehouse_id: int,
    spec: ProductSpec,
    admin_id: int,
) -> Listed:
    """The spec's product listed in the warehouse: defined in the company's catalog
    the first time its item code appears, listed again (with this warehouse's
    prices and stock) after that."""
    session = uow.session
    product = built.products.get(spec.item_code)
    if product is None:
        product = await catalog_rows.define_product(
            session,
            company_id=company_id,
            name=spec.name,
            item_code=spec.item_code,
            barcodes=[spec.barcode] if spec.barcode else [],
            unit_id=built.units[spec.unit],
            category_id=built.categories[spec.category],
            brand_id=built.brands[spec.brand] if spec.brand else None,
        )
        built.products[spec.item_code] = product
        if spec.box_of is not None and spec.box_price is not None:
            await catalog_rows.add_product_unit(
                session, product, built.units["box"], D(spec.box_of), D(spec.box_price)
            )
    return await catalog_rows.list_product(
        uow,
        product,
        warehouse_id=warehouse_id,
        sales_price=D(spec.sales_price),
        purchase_price=D(spec.purchase_price),
        mrp=D(spec.mrp) if spec.mrp is not None else None,
        reorder_level=D(spec.reorder_level),
        opening_batches=[(D(q), D(c)) for q, c in spec.batches],
        created_by=admin_id,
        opened_on=dt.datetime.now(dt.UTC).date() - dt.timedelta(days=HISTORY_DAYS),
    )


async def create_demo(uow: UnitOfWork) -> dict[str, Any]:
    """Build the whole demo set in the caller's transaction and return it in the
    ``tillbook demo --json`` shape (DESIGN.md §11)."""
    return {"companies": [await _build_company(uow, spec) for spec in DEMO_COMPANIES]}


HISTORY_DAYS = 30
# Units a sale never takes the last of: the demo's products stay sellable by the
# tills and the examples that try them.
RESERVE = D(4)


async def _trade(uow: UnitOfWork, company: dict[str, Any], admin_id: int, today: dt.date) -> None:
    """The stores' last ``HISTORY_DAYS`` days (the module says what and why). Every
    document goes through its service, as the admin acting for the store, and the
    unit's queue is sent after each (``UnitOfWork.finish``) so that the next one
    plans on the stock as it now is."""
    rng = random.Random(company["name"])
    modes = {m["code"]: m["xid"] for m in company["payment_modes"]}
    regulars = [c for c in company["customers"] if c["id"] != company["walk_in_customer_id"]]
    supplier = company["suppliers"][0]
    energy = next(
        (e for e in company["expense_categories"] if "energy" in e["name"].lower()),
        company["expense_categories"][0],
    )
    for warehouse in company["warehouses"]:
        key = await acting_for(uow.session, company["id"], warehouse["id"], admin_id)
        listed = [p for p in company["products"] if p["warehouse_id"] == warehouse["id"]]
        stock = {p["id"]: D(str(p["current_stock"])) for p in listed}
        for back in range(HISTORY_DAYS - 1, -1, -1):
            day = today - dt.timedelta(days=back)
            if back in (21, 7):
                await _restock(uow, key, supplier, listed, stock, day)
            if back == 10:
                await expenses.create_expense(
                    uow,
                    key,
                    ExpenseIn.model_validate(
                        {
                            "expense_category_id": xid.encode(energy["id"]),
                            "amount": "184.60" if len(listed) > 8 else "126.35",
                            "date": day.isoformat(),
                            "payment_mode_id": modes["card"],
                            "notes": "Electricity, last month",
                        }
                    ),
                )
                await uow.finish()
            for _ in range(rng.randint(2, 5)):
                await _sell(uow, key, rng, company, listed, stock, day, modes, regulars)


async def _sell(
    uow: UnitOfWork,
    key: AuthContext,
    rng: random.Random,
    company: dict[str, Any],
    listed: list[dict[str, Any]],
    stock: dict[int, Decimal],
    day: dt.date,
    modes: dict[str, str],
    regulars: list[dict[str, Any]],
) -> None:
    lines = []
    for product in rng.sample(listed, k=min(len(listed), rng.choice((1, 1, 2, 2, 3)))):
        quantity = D(rng.choice((1, 1, 1, 2, 2, 3)))
        if stock[product["id"]] - quantity < RESERVE:
            continue
        stock[product["id"]] -= quantity
        lines.append(
            {
                "xid": product["xid"],
                "quantity": str(quantity),
                "unit_price": str(product["sales_price"]),
            }
        )
    if not lines:
        return
    minute = rng.randint(8 * 60, 20 * 60 - 1)
    now = dt.datetime.now(dt.UTC)
    if day >= now.date():  # today's sales happened before now, whenever that is
        minute = minute * (now.hour * 60 + now.minute) // (24 * 60)
    when = dt.datetime.combine(day, dt.time(minute // 60, minute % 60), dt.UTC)
    on_account = rng.random() < 0.08
    customer = rng.choice(regulars) if on_account else None
    body: dict[str, Any] = {
        "user_id": customer["xid"] if customer else xid.encode(company["walk_in_customer_id"]),
        "order_date": when.isoformat(),
        "product_items": lines,
    }
    if not on_account:
        total = (await sales.price_sale(uow, key, SaleIn.model_validate(body))).total
        mode = modes["cash"] if rng.random() < 0.65 else modes["card"]
        body["all_payments"] = [{"amount": str(total), "payment_mode_id": mode}]
    await sales.create_sale(uow, key, SaleIn.model_validate(body))
    await uow.finish()


async def _restock(
    uow: UnitOfWork,
    key: AuthContext,
    supplier: dict[str, Any],
    listed: list[dict[str, Any]],
    stock: dict[int, Decimal],
    day: dt.date,
) -> None:
    """What has fallen to a dozen or less, two dozen more, bought on account."""
    low = [p for p in listed if stock[p["id"]] <= 12]
    if not low:
        return
    for product in low:
        stock[product["id"]] += 24
    await purchases.create_purchase(
        uow,
        key,
        PurchaseIn.model_validate(
            {
                "user_id": supplier["xid"],
                "order_date": day.isoformat(),
                "product_items": [
                    {"xid": p["xid"], "quantity": "24", "unit_price": str(p["purchase_price"])}
                    for p in low
                ],
            }
        ),
    )
    await uow.finish()
