"""Catalog reads: exact fields and JSON types, pagination, search, filters, isolation."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Awaitable
from decimal import Decimal
from typing import Any, TypeVar

import httpx
import pytest
from sqlalchemy import Float, Numeric, event, literal, select
from sqlalchemy import cast as sql_cast
from sqlalchemy.ext.asyncio import AsyncSession

from tests.factories import Key, Shop, add_products, make_shop, reading_the_database
from tests.invariants import check_books
from tillbook.catalog import seeding as catalog
from tillbook.db import Database
from tillbook.inventory import service as inventory
from tillbook.kit import xid
from tillbook.kit.money import number
from tillbook.models import Listing, Product, ProductBarcode, StockBatch, User
from tillbook.unit import UnitOfWork, statement_observers

D = Decimal
ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")

LIST_FIELDS = {
    "id",
    "xid",
    "name",
    "slug",
    "item_code",
    "product_type",
    "sales_price",
    "purchase_price",
    "mrp",
    "current_stock",
    "category",
    "brand",
    "unit",
    # additive to the spec's shape (DESIGN.md §13): the listing's state and what a
    # till needs to know without fetching each product
    "barcode",
    "reorder_level",
    "active",
    "has_additional_units",
    # what a register needs to price a line offline (register-contract.md, Changes)
    "tax_id",
    "barcodes",
    "additional_units",
}
DETAIL_FIELDS = LIST_FIELDS | {"description", "batches"}
CATEGORY_FIELDS = {"id", "xid", "name", "slug", "parent_id", "image", "children"}

T = TypeVar("T")


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


async def get_ok(client: httpx.AsyncClient, shop: Shop, url: str, **params: Any) -> Any:
    r = await client.get(url, headers=shop.headers, params=params)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["status"] == "success"
    return body["data"]


async def product_page(client: httpx.AsyncClient, shop: Shop, **params: Any) -> dict[str, Any]:
    page: dict[str, Any] = await get_ok(client, shop, "/products", **params)
    return page


def codes(page: dict[str, Any]) -> list[str]:
    return [p["item_code"] for p in page["data"]]


def code(shop: Shop, name: str) -> str:
    """The factory's item code of a product (prefix + the shop's random tag)."""
    prefix = {"apple": "AJ", "water": "SW", "tea": "RT", "coffee": "HC"}[name]
    return f"{prefix}-{shop_tag(shop)}"


def shop_tag(shop: Shop) -> str:
    return str(shop.extra["tag"])


async def tagged(db: Database) -> Shop:
    shop = await make_shop(db)

    async def tag(session: AsyncSession) -> str:
        item_code = await session.scalar(
            select(Product.item_code).where(Product.id == shop.products["apple"])
        )
        assert item_code is not None
        return item_code.removeprefix("AJ-")

    shop.extra["tag"] = await db.read(tag)
    return shop


# --- warehouses and customers ---------------------------------------------------------


async def test_warehouses_only_the_keys_own(client: httpx.AsyncClient, shop: Shop) -> None:
    data = await get_ok(client, shop, "/warehouses")
    assert data == [
        {
            "id": shop.warehouse_id,
            "xid": xid.encode(shop.warehouse_id),
            "name": "Main street",
            "allow_negative_stock": False,
        }
    ]
    other = await client.get("/warehouses", headers=shop.other_key.headers)
    assert [w["id"] for w in other.json()["data"]] == [shop.other_warehouse_id]


async def test_customers_fields_and_search(client: httpx.AsyncClient, shop: Shop) -> None:
    page = await get_ok(client, shop, "/customers")
    assert page["current_page"] == 1
    assert page["per_page"] == 20
    assert page["total"] == 2  # the supplier, the admin and the API users are not customers
    ada, walk_in = page["data"]
    assert ada == {
        "id": shop.customer_id,
        "xid": xid.encode(shop.customer_id),
        "name": "Ada Customer",
        "phone": "555-0100",
        "email": None,
        "is_walk_in": False,
        "balance": "0.00",
    }
    assert walk_in["id"] == shop.walk_in_id
    assert walk_in["is_walk_in"] is True

    by_name = await get_ok(client, shop, "/customers", search="ADA")
    assert [c["id"] for c in by_name["data"]] == [shop.customer_id]
    by_phone = await get_ok(client, shop, "/customers", search="0100")
    assert [c["id"] for c in by_phone["data"]] == [shop.customer_id]
    none = await get_ok(client, shop, "/customers", search="Sam Supplier")
    assert none["total"] == 0 and none["data"] == []
    paged = await get_ok(client, shop, "/customers", limit=1, page=2)
    assert [c["id"] for c in paged["data"]] == [shop.walk_in_id]
    assert paged["total"] == 2 and paged["per_page"] == 1


async def test_customers_are_company_wide_and_isolated(
    client: httpx.AsyncClient, db: Database
) -> None:
    a, b = await make_shop(db), await make_shop(db)
    seen_a = await get_ok(client, a, "/customers")
    # Customers are company-wide: the other warehouse's key sees the same ones.
    other_wh = await client.get("/customers", headers=a.other_key.headers)
    assert other_wh.json()["data"] == seen_a
    ids_a = {c["id"] for c in seen_a["data"]}
    assert b.customer_id not in ids_a and b.walk_in_id not in ids_a


async def test_customer_balance_is_the_keys_warehouse_only(
    client: httpx.AsyncClient, db: Database
) -> None:
    """A key sees what a customer owes its own warehouse: a credit sale, a payment or a
    return in the other warehouse does not move it (and the other way round)."""
    shop = await make_shop(db)

    async def post(key: Key, path: str, body: dict[str, Any]) -> dict[str, Any]:
        r = await client.post(path, json=body, headers=key.headers)
        assert r.status_code == 200, r.text
        result: dict[str, Any] = r.json()
        return result

    async def balances(key: Key) -> dict[int, str]:
        r = await client.get("/customers", headers=key.headers)
        assert r.status_code == 200, r.text
        return {c["id"]: c["balance"] for c in r.json()["data"]["data"]}

    def credit_sale(product: int, quantity: int, price: str) -> dict[str, Any]:
        return {
            "user_id": shop.customer_id,
            "order_date": "2026-11-20",
            "product_items": [{"xid": product, "quantity": quantity, "unit_price": price}],
        }

    a, b = shop.key, shop.other_key
    await post(a, "/sales", credit_sale(shop.products["apple"], 2, "3.50"))  # 7.00 in A
    assert await balances(a) == {shop.customer_id: "7.00", shop.walk_in_id: "0.00"}
    assert await balances(b) == {shop.customer_id: "0.00", shop.walk_in_id: "0.00"}

    await post(b, "/sales", credit_sale(shop.other_products["coffee"], 1, "4.00"))  # 4.00 in B
    assert (await balances(a))[shop.customer_id] == "7.00"
    assert (await balances(b))[shop.customer_id] == "4.00"

    payment = {"user_id": shop.customer_id, "payment_type": "in", "amount": "5.00"}
    await post(b, "/payments", {**payment, "payment_mode_id": "cash"})  # B: 4.00 - 5.00
    assert (await balances(a))[shop.customer_id] == "7.00"
    assert (await balances(b))[shop.customer_id] == "-1.00"  # B owes the customer 1.00

    ret = {
        "user_id": shop.customer_id,
        "order_date": "2026-11-21",
        "items": [{"product_id": shop.products["apple"], "quantity": 1, "unit_price": "3.50"}],
    }
    await post(a, "/sales-returns", ret)  # A: 7.00 - 3.50
    assert (await balances(a))[shop.customer_id] == "3.50"
    assert (await balances(b))[shop.customer_id] == "-1.00"
    # The search page reports the same per-warehouse figure.
    r = await client.get("/customers", params={"search": "ada"}, headers=b.headers)
    assert r.json()["data"]["data"][0]["balance"] == "-1.00"

    # The company-wide sub-ledger is the sum of the two, and the books agree.
    total = await db.read(
        lambda s: s.scalar(select(User.balance).where(User.id == shop.customer_id))
    )
    assert total == Decimal("2.50")
    await check_books(db, shop.company_id)


# --- products: list -------------------------------------------------------------------


async def test_product_list_fields_and_types(client: httpx.AsyncClient, db: Database) -> None:
    shop = await tagged(db)
    page = await product_page(client, shop)
    assert set(page) == {"current_page", "per_page", "total", "last_page", "data"}
    assert (page["current_page"], page["per_page"], page["total"], page["last_page"]) == (
        1,
        20,
        3,
        1,
    )
    assert codes(page) == [code(shop, "apple"), code(shop, "water"), code(shop, "tea")]
    apple, water, tea = page["data"]
    for item in page["data"]:
        assert set(item) == LIST_FIELDS
        assert isinstance(item["id"], int)
        for name in ("xid", "name", "slug", "item_code", "product_type"):
            assert isinstance(item[name], str)
        for name in ("sales_price", "purchase_price", "current_stock"):
            assert is_number(item[name]), (name, item[name])
        assert item["product_type"] == "single"
        assert xid.decode(item["xid"]) == item["id"]
    assert apple == {
        "id": shop.products["apple"],
        "xid": shop.xid("apple"),
        "name": "Apple juice",
        "slug": "apple-juice",
        "item_code": code(shop, "apple"),
        "product_type": "single",
        "sales_price": 3.5,
        "purchase_price": 2,
        "mrp": None,
        "current_stock": 20,
        "category": {"xid": xid.encode(shop.child_category_id), "name": "Juice"},
        "brand": {"xid": xid.encode(shop.brand_id), "name": "Acme"},
        "unit": {"xid": xid.encode(shop.piece_unit_id), "name": "Piece", "short_name": "pc"},
        "barcode": apple["barcode"],
        "reorder_level": 0,
        "active": True,
        "has_additional_units": False,
        "tax_id": None,
        "barcodes": [apple["barcode"]],
        "additional_units": [],
    }
    assert apple["barcode"].startswith("400")
    assert water["has_additional_units"] is True  # a box of 12
    assert [u["unit"]["short_name"] for u in water["additional_units"]] == ["box"]
    assert water["category"] == {"xid": xid.encode(shop.category_id), "name": "Drinks"}
    assert water["brand"] is None
    assert water["current_stock"] == 100
    assert (water["sales_price"], water["purchase_price"]) == (1, 0.4)
    assert tea["category"] is None and tea["brand"] is None and tea["unit"] is None
    assert tea["current_stock"] == 0 and tea["sales_price"] == 9.99


async def test_product_mrp_is_a_number_when_set(client: httpx.AsyncClient, db: Database) -> None:
    shop = await make_shop(db)

    async def add(uow: UnitOfWork) -> int:
        p = await catalog.create_product(
            uow,
            company_id=shop.company_id,
            warehouse_id=shop.warehouse_id,
            name="Mango nectar",
            item_code=f"MN-{shop.company_id}",
            sales_price=D("2.25"),
            purchase_price=D("1.10"),
            mrp=D("2.50"),
        )
        return p.id

    pid = await db.unit(add)
    page = await product_page(client, shop, search="mango")
    assert [p["id"] for p in page["data"]] == [pid]
    assert page["data"][0]["mrp"] == 2.5


async def test_product_pagination(client: httpx.AsyncClient, db: Database) -> None:
    shop = await tagged(db)
    await add_products(db, shop, 102, name="Bulk item", code=f"BULK-{shop_tag(shop)}")
    total = 105

    first = await product_page(client, shop)
    assert (first["per_page"], first["total"], len(first["data"])) == (20, total, 20)
    assert first["last_page"] == 6

    two = await product_page(client, shop, limit=2, page=2)
    assert (two["current_page"], two["per_page"], two["total"]) == (2, 2, total)
    assert codes(two) == [code(shop, "tea"), f"BULK-{shop_tag(shop)}-000"]

    clamped = await product_page(client, shop, limit=500)
    assert clamped["per_page"] == 100
    assert len(clamped["data"]) == 100
    rest = await product_page(client, shop, limit=1000, page=2)
    assert rest["per_page"] == 100 and len(rest["data"]) == 5

    ids = [p["id"] for p in clamped["data"] + rest["data"]]
    assert ids == sorted(ids) and len(set(ids)) == total  # ordered by id, no overlap

    beyond = await product_page(client, shop, limit=100, page=9)
    assert beyond["data"] == [] and beyond["total"] == total and beyond["current_page"] == 9

    exact = await product_page(client, shop, limit=100)
    assert exact["per_page"] == 100
    blank = await product_page(client, shop, limit="", page="")
    assert (blank["current_page"], blank["per_page"]) == (1, 20)


async def test_product_search(client: httpx.AsyncClient, db: Database) -> None:
    shop = await tagged(db)
    tag = shop_tag(shop)
    apple = [code(shop, "apple")]
    assert codes(await product_page(client, shop, search="apple")) == apple
    assert codes(await product_page(client, shop, search="APPLE JUICE")) == apple
    assert codes(await product_page(client, shop, search="e jui")) == apple  # substring
    assert codes(await product_page(client, shop, search=f"aj-{tag}")) == apple  # SKU
    assert codes(await product_page(client, shop, search=code(shop, "water"))) == [
        code(shop, "water")
    ]
    assert codes(await product_page(client, shop, search=f"400{tag}")) == apple  # barcode
    assert codes(await product_page(client, shop, search=f"400{tag}".upper())) == apple
    assert codes(await product_page(client, shop, search="  apple  ")) == apple
    # LIKE wildcards in the search text are literal characters.
    assert (await product_page(client, shop, search="%"))["total"] == 0
    assert (await product_page(client, shop, search="_"))["total"] == 0
    assert (await product_page(client, shop, search="\\"))["total"] == 0
    # The other warehouse's product is not found by search either.
    assert (await product_page(client, shop, search="coffee"))["total"] == 0
    assert (await product_page(client, shop, search=code(shop, "coffee")))["total"] == 0
    # Blank search means no filter.
    assert (await product_page(client, shop, search=""))["total"] == 3
    page = await product_page(client, shop, search="e", limit=1)
    assert page["total"] == 3 and len(page["data"]) == 1  # apple, water, tea all have an "e"
    # A search's later pages, and a page past its end, still report the total.
    pages = [await product_page(client, shop, search="e", limit=1, page=n) for n in (1, 2, 3, 4)]
    assert [p["total"] for p in pages] == [3, 3, 3, 3]
    assert [len(p["data"]) for p in pages] == [1, 1, 1, 0]
    assert len({p["data"][0]["item_code"] for p in pages[:3]}) == 3
    assert pages[3]["last_page"] == 3


async def test_product_category_and_brand_filters(client: httpx.AsyncClient, db: Database) -> None:
    shop = await tagged(db)
    other = await make_shop(db)
    juice = xid.encode(shop.child_category_id)
    drinks = xid.encode(shop.category_id)
    acme = xid.encode(shop.brand_id)
    assert codes(await product_page(client, shop, category_id=juice)) == [code(shop, "apple")]
    assert codes(await product_page(client, shop, category_id=drinks)) == [code(shop, "water")]
    assert codes(await product_page(client, shop, brand_id=acme)) == [code(shop, "apple")]
    both = await product_page(client, shop, brand_id=acme, category_id=drinks)
    assert both["total"] == 0
    assert (await product_page(client, shop, brand_id=acme, search="apple"))["total"] == 1
    # A valid xid of another company's category or brand matches nothing.
    foreign_cat = await product_page(client, shop, category_id=xid.encode(other.category_id))
    assert foreign_cat["total"] == 0 and foreign_cat["data"] == []
    foreign_brand = await product_page(client, shop, brand_id=xid.encode(other.brand_id))
    assert foreign_brand["total"] == 0
    # A value that cannot be an xid is a 422 naming the field.
    for name in ("category_id", "brand_id"):
        r = await client.get("/products", headers=shop.headers, params={name: "not an xid!"})
        assert r.status_code == 422, r.text
        body = r.json()
        assert body["status"] == "error" and name in body["errors"]


# --- products: one --------------------------------------------------------------------


async def test_product_detail_fields_units_and_batches(
    client: httpx.AsyncClient, db: Database
) -> None:
    shop = await tagged(db)
    apple = await get_ok(client, shop, f"/products/{shop.xid('apple')}")
    assert set(apple) == DETAIL_FIELDS
    assert apple["id"] == shop.products["apple"]
    assert apple["description"] == ""
    assert apple["additional_units"] == []
    assert apple["current_stock"] == 20
    batches = apple["batches"]
    assert [set(b) for b in batches] == [
        {"id", "batch_number", "expiry_date", "quantity_remaining", "unit_cost", "received_at"}
    ] * 2
    assert [(b["quantity_remaining"], b["unit_cost"]) for b in batches] == [(10, 1.5), (10, 2)]
    assert batches[0]["id"] < batches[1]["id"]  # FIFO: oldest first
    for b in batches:
        assert isinstance(b["id"], int)
        assert b["batch_number"] is None and b["expiry_date"] is None
        assert ISO_UTC.match(b["received_at"]), b["received_at"]

    # The same product by numeric id, with the list item's fields unchanged.
    by_id = await get_ok(client, shop, f"/products/{shop.products['apple']}")
    assert by_id == apple
    listed = (await product_page(client, shop, search=code(shop, "apple")))["data"][0]
    assert {k: apple[k] for k in LIST_FIELDS} == listed

    water = await get_ok(client, shop, f"/products/{shop.xid('water')}")
    assert water["additional_units"] == [
        {
            "child_unit_id": xid.encode(shop.box_unit_id),
            "operator": "*",
            "operator_value": 12,
            "alternative_price": 10,
            "unit": {"name": "Box", "short_name": "box"},
        }
    ]
    assert [(b["quantity_remaining"], b["unit_cost"]) for b in water["batches"]] == [(100, 0.3333)]

    tea = await get_ok(client, shop, f"/products/{shop.xid('tea')}")
    assert tea["batches"] == [] and tea["additional_units"] == []
    assert tea["unit"] is None


async def test_product_read_is_one_statement(
    client: httpx.AsyncClient, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read by id is one round trip on PostgreSQL: the product with its barcodes,
    units and batches nested (``Reads.one``), outside any transaction (no BEGIN or
    COMMIT); SQLite reads the lists one statement each, in the event loop's thread,
    none through the async engine's (issue 27)."""
    shop = await tagged(db)
    path = f"/products/{shop.xid('water')}"
    reading_the_database(client, monkeypatch)
    first = await get_ok(client, shop, path)  # the key's lookup is remembered after it
    seen: list[str] = []

    threaded: list[str] = []  # through the async engine (SQLite: aiosqlite's thread)

    def cursor(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        (threaded if db.is_sqlite else seen).append(statement)

    engine = db.engine.sync_engine
    event.listen(engine, "before_cursor_execute", cursor)
    statement_observers.append(seen.append)
    try:
        again = await get_ok(client, shop, path)
    finally:
        statement_observers.remove(seen.append)
        event.remove(engine, "before_cursor_execute", cursor)
    assert again == first
    assert first["additional_units"] and first["batches"]
    if db.is_sqlite:  # the product, its barcodes, units and batches
        assert len(seen) == 4 and not threaded, (seen, threaded)
    else:
        assert len(seen) == 1, seen
        assert "product_barcodes" in seen[0] and "stock_batches" in seen[0]


async def test_a_products_feed_page_is_the_list_in_one_statement(
    client: httpx.AsyncClient, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The products' change feed (prebuilt, ``kit.changes.read``) serves each product
    as the list shows it, barcodes and additional units included, page after page;
    on PostgreSQL a page is one statement outside any transaction: the page, its
    barcodes and units, and the database's time (issue 27)."""
    shop = await tagged(db)

    async def multipack(session: AsyncSession) -> None:  # a second barcode, on the water
        water = shop.products["water"]
        session.add(ProductBarcode(company_id=shop.company_id, product_id=water, barcode="M-6"))

    await db.write(multipack)
    listed = await get_ok(client, shop, "/products", limit=100)
    by_id = {p["id"]: p for p in listed["data"]}
    assert any(p["additional_units"] for p in by_id.values())
    assert "M-6" in by_id[shop.products["water"]]["barcodes"]
    served: dict[int, Any] = {}
    params: dict[str, Any] = {"updated_since": "1970-01-01T00:00:00Z", "limit": 2}
    seen: list[str] = []

    threaded: list[str] = []  # through the async engine (SQLite: aiosqlite's thread)

    def cursor(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        (threaded if db.is_sqlite else seen).append(statement)

    engine = db.engine.sync_engine
    reading_the_database(client, monkeypatch)
    await get_ok(client, shop, "/products", **params)  # the key's lookup is remembered after it
    while True:
        seen.clear()
        threaded.clear()
        event.listen(engine, "before_cursor_execute", cursor)
        statement_observers.append(seen.append)
        try:
            page = await get_ok(client, shop, "/products", **params)
        finally:
            statement_observers.remove(seen.append)
            event.remove(engine, "before_cursor_execute", cursor)
        if db.is_sqlite:  # the time, the page, its barcodes, its units
            assert len(seen) == 4 and not threaded, (seen, threaded)
        else:
            assert len(seen) == 1, seen
            assert "product_barcodes" in seen[0] and "product_units" in seen[0]
        assert len(page["data"]) <= 2
        for item in page["data"]:
            assert item.pop("archived") is False
            assert item["id"] not in served
            served[item["id"]] = item
        if page["next_cursor"] is None:
            break
        params = {"cursor": page["next_cursor"], "limit": 2}
    assert served == by_id


async def test_product_detail_hides_empty_batches(client: httpx.AsyncClient, db: Database) -> None:
    shop = await make_shop(db)

    async def sell_first_batch(uow: UnitOfWork) -> None:
        products = await inventory.products(
            uow, shop.company_id, shop.warehouse_id, [shop.products["apple"]]
        )
        product = products[shop.products["apple"]]
        await inventory.draw(
            uow,
            product,
            D("10"),
            reason="sale",
            source_type="test",
            source_id=None,
            allow_negative=False,
        )

    await db.unit(sell_first_batch)
    apple = await get_ok(client, shop, f"/products/{shop.xid('apple')}")
    assert apple["current_stock"] == 10
    assert [(b["quantity_remaining"], b["unit_cost"]) for b in apple["batches"]] == [(10, 2)]


async def test_product_batch_number_and_expiry(client: httpx.AsyncClient, db: Database) -> None:
    shop = await make_shop(db)

    async def label(session: AsyncSession) -> None:
        batch = (
            await session.execute(
                select(StockBatch).where(StockBatch.product_id == shop.products["water"])
            )
        ).scalar_one()
        batch.batch_number = "LOT-7"
        batch.expiry_date = dt.date(2031, 2, 3)

    await db.write(label)
    water = await get_ok(client, shop, f"/products/{shop.xid('water')}")
    assert water["batches"][0]["batch_number"] == "LOT-7"
    assert water["batches"][0]["expiry_date"] == "2031-02-03"


# --- isolation ------------------------------------------------------------------------


async def test_cross_warehouse_isolation(client: httpx.AsyncClient, db: Database) -> None:
    shop = await tagged(db)
    coffee_id = shop.other_products["coffee"]
    other = await client.get("/products", headers=shop.other_key.headers)
    assert codes(other.json()["data"]) == [code(shop, "coffee")]
    assert other.json()["data"]["total"] == 1
    for ref in (str(coffee_id), xid.encode(coffee_id)):
        r = await client.get(f"/products/{ref}", headers=shop.headers)
        assert r.status_code == 404
        assert r.json() == {"status": "error", "message": "product not found"}
        ok = await client.get(f"/products/{ref}", headers=shop.other_key.headers)
        assert ok.status_code == 200 and ok.json()["data"]["id"] == coffee_id
    # And the other way round.
    r = await client.get(f"/products/{shop.xid('apple')}", headers=shop.other_key.headers)
    assert r.status_code == 404
    # Categories and brands are company-wide: both warehouses see the same ones.
    for path in (
        "/categories",
        "/brands",
        f"/categories/{shop.category_id}",
        f"/brands/{shop.brand_id}",
    ):
        a = await client.get(path, headers=shop.headers)
        b = await client.get(path, headers=shop.other_key.headers)
        assert a.status_code == b.status_code == 200
        assert a.json() == b.json()


async def test_cross_company_isolation(client: httpx.AsyncClient, db: Database) -> None:
    shop = await make_shop(db)
    other = await make_shop(db)
    not_found = {
        "/products/": "product not found",
        "/categories/": "category not found",
        "/brands/": "brand not found",
    }
    refs = {
        "/products/": [other.products["apple"], other.other_products["coffee"]],
        "/categories/": [other.category_id, other.child_category_id],
        "/brands/": [other.brand_id],
    }
    for prefix, ids in refs.items():
        for id_ in ids:
            for ref in (str(id_), xid.encode(id_)):
                r = await client.get(prefix + ref, headers=shop.headers)
                assert r.status_code == 404, (prefix, ref, r.text)
                assert r.json() == {"status": "error", "message": not_found[prefix]}
    products = await product_page(client, shop, limit=100)
    assert not {p["id"] for p in products["data"]} & set(other.products.values())
    cats = await get_ok(client, shop, "/categories")
    assert [c["id"] for c in cats] == [shop.category_id]
    brands = await get_ok(client, shop, "/brands")
    assert [b["id"] for b in brands] == [shop.brand_id]


# --- categories and brands ------------------------------------------------------------


async def test_category_tree(
    client: httpx.AsyncClient, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    shop = await make_shop(db)

    async def more(session: AsyncSession) -> dict[str, int]:
        apple = await catalog.create_category(
            session,
            shop.company_id,
            "Apple juice",
            parent_id=shop.child_category_id,
            image="https://img.example.com/apple.png",
        )
        snacks = await catalog.create_category(session, shop.company_id, "Snacks")
        return {"apple": apple.id, "snacks": snacks.id}

    ids = await db.write(more)
    tree = await get_ok(client, shop, "/categories")
    assert isinstance(tree, list)
    assert tree == [
        {
            "id": shop.category_id,
            "xid": xid.encode(shop.category_id),
            "name": "Drinks",
            "slug": "drinks",
            "parent_id": None,
            "image": None,
            "children": [
                {
                    "id": shop.child_category_id,
                    "xid": xid.encode(shop.child_category_id),
                    "name": "Juice",
                    "slug": "juice",
                    "parent_id": shop.category_id,
                    "image": None,
                    "children": [
                        {
                            "id": ids["apple"],
                            "xid": xid.encode(ids["apple"]),
                            "name": "Apple juice",
                            "slug": "apple-juice",
                            "parent_id": shop.child_category_id,
                            "image": "https://img.example.com/apple.png",
                            "children": [],
                        }
                    ],
                }
            ],
        },
        {
            "id": ids["snacks"],
            "xid": xid.encode(ids["snacks"]),
            "name": "Snacks",
            "slug": "snacks",
            "parent_id": None,
            "image": None,
            "children": [],
        },
    ]

    juice = await get_ok(client, shop, f"/categories/{shop.child_category_id}")
    assert set(juice) == CATEGORY_FIELDS
    assert juice == tree[0]["children"][0]
    by_xid = await get_ok(client, shop, f"/categories/{xid.encode(shop.child_category_id)}")
    assert by_xid == juice
    leaf = await get_ok(client, shop, f"/categories/{xid.encode(ids['apple'])}")
    assert leaf["children"] == [] and leaf["parent_id"] == shop.child_category_id
    root = await get_ok(client, shop, f"/categories/{shop.category_id}")
    assert root == tree[0]
    # A till reads the tree often: one prebuilt statement, outside any transaction.
    reading_the_database(client, monkeypatch)
    seen: list[str] = []
    threaded: list[str] = []
    again = await observed(db, seen, threaded, get_ok(client, shop, "/categories"))
    assert again == tree and len(seen) == 1 and not threaded, (seen, threaded)
    one = await observed(db, seen, threaded, get_ok(client, shop, f"/categories/{ids['apple']}"))
    assert one == leaf and len(seen) == 1 and not threaded, (seen, threaded)


async def test_brands(client: httpx.AsyncClient, db: Database) -> None:
    shop = await make_shop(db)

    async def more(session: AsyncSession) -> int:
        b = await catalog.create_brand(
            session, shop.company_id, "Zest Co", image="https://img.example.com/zest.png"
        )
        return b.id

    zest = await db.write(more)
    brands = await get_ok(client, shop, "/brands")
    assert brands == [
        {
            "id": shop.brand_id,
            "xid": xid.encode(shop.brand_id),
            "name": "Acme",
            "slug": "acme",
            "image": None,
        },
        {
            "id": zest,
            "xid": xid.encode(zest),
            "name": "Zest Co",
            "slug": "zest-co",
            "image": "https://img.example.com/zest.png",
        },
    ]
    one = await get_ok(client, shop, f"/brands/{xid.encode(zest)}")
    assert one == brands[1]
    assert await get_ok(client, shop, f"/brands/{shop.brand_id}") == brands[0]


async def test_unknown_ids_are_404(client: httpx.AsyncClient, shop: Shop) -> None:
    for path, message in (
        ("/products/", "product not found"),
        ("/categories/", "category not found"),
        ("/brands/", "brand not found"),
    ):
        for ref in (
            "999999999",
            "0",
            "-5",
            "abc",
            "99999999999999999999999",
            str(2**63),
            str(2**63 - 1),
            "a" * 32,
        ):
            r = await client.get(path + ref, headers=shop.headers)
            assert r.status_code == 404, (path, ref, r.text)
            assert r.json() == {"status": "error", "message": message}


async def observed(db: Database, seen: list[str], threaded: list[str], call: Awaitable[T]) -> T:
    """``call``'s answer; ``seen`` gets the prebuilt statements it sent on the
    driver (``unit.statement_observers``), ``threaded`` those through the async
    engine (an ORM session; on SQLite, aiosqlite's thread)."""
    seen.clear()
    threaded.clear()

    def cursor(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        threaded.append(statement)

    engine = db.engine.sync_engine
    event.listen(engine, "before_cursor_execute", cursor)
    statement_observers.append(seen.append)
    try:
        return await call
    finally:
        statement_observers.remove(seen.append)
        event.remove(engine, "before_cursor_execute", cursor)


async def test_a_product_list_page_is_two_prebuilt_statements(
    client: httpx.AsyncClient, db: Database
) -> None:
    """A page of the list or of a search is its rows (category, brand and unit
    joined, the total beside them) and its barcodes by the page's ids, outside any
    transaction and through no ORM session; its additional units are a third only
    when a product of the page has some; a page past the end counts the matches
    (issue 27: a search cost 7 ms of CPU through the session and aiosqlite)."""
    shop = await tagged(db)
    seen: list[str] = []
    threaded: list[str] = []

    async def page(**params: Any) -> dict[str, Any]:
        return await observed(db, seen, threaded, product_page(client, shop, **params))

    await product_page(client, shop)  # the key's lookup is remembered after it
    listed = await page(limit=100)
    assert listed["total"] == len(listed["data"]) == len(shop.products)
    assert any(p["additional_units"] for p in listed["data"])
    assert len(seen) == 3 and not threaded, (seen, threaded)  # rows, barcodes, units
    assert "product_barcodes" in seen[1] and "product_units" in seen[2]

    found = await page(search=shop_tag(shop), limit=1)  # every product carries the tag
    assert found["total"] == len(shop.products) and len(found["data"]) == 1
    expected = 3 if found["data"][0]["additional_units"] else 2
    assert len(seen) == expected and not threaded, (seen, threaded)

    beyond = await page(search=shop_tag(shop), limit=1, page=len(shop.products) + 1)
    assert beyond["total"] == len(shop.products) and beyond["data"] == []
    assert len(seen) == 2 and not threaded, (seen, threaded)  # no rows: the count


async def test_a_tills_reference_lists_are_one_prebuilt_statement_each(
    client: httpx.AsyncClient, db: Database, shop: Shop, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The categories, brands (the list and one by id), taxes, units, payment modes,
    expense categories and the branch a till reads at each sync are one prebuilt
    statement each, outside any transaction and through no ORM session (issue 27),
    and their items are the ones the change feeds serve (the same item functions,
    from the same columns)."""
    reading_the_database(client, monkeypatch)
    await get_ok(client, shop, "/units")  # the key's lookup is remembered after it
    seen: list[str] = []
    threaded: list[str] = []
    lists: dict[str, Any] = {}
    for path, table in (
        ("/categories", "categories"),
        ("/brands", "brands"),
        ("/taxes", "taxes"),
        ("/units", "units"),
        ("/payment-modes", "payment_modes"),
        ("/expense-categories", "expense_categories"),
        ("/warehouses", "warehouses"),
    ):
        lists[path] = await observed(db, seen, threaded, get_ok(client, shop, path))
        assert len(seen) == 1 and table in seen[0] and not threaded, (path, seen, threaded)
    assert all(lists[path] for path in lists), lists
    one = lists["/brands"][0]
    by_id = await observed(db, seen, threaded, get_ok(client, shop, f"/brands/{one['xid']}"))
    assert by_id == one and len(seen) == 1 and not threaded, (seen, threaded)

    for path in ("/brands", "/taxes", "/payment-modes"):
        fed = await get_ok(client, shop, path, updated_since="1970-01-01T00:00:00Z", limit=100)
        live = [{k: v for k, v in item.items() if k != "archived"} for item in fed["data"]]
        assert sorted(live, key=lambda i: i["id"]) == sorted(lists[path], key=lambda i: i["id"])
    stranger = await make_shop(db)  # another company: its key never sees the brand
    other = await client.get(f"/brands/{one['xid']}", headers=stranger.headers)
    assert other.status_code == 404, other.text


async def test_searches_and_filters_find_what_the_list_shows(
    client: httpx.AsyncClient, db: Database
) -> None:
    """Every search and filter answers the products the whole list shows, the same
    items, whatever the combination (the prebuilt statements, one per combination)."""
    shop = await tagged(db)
    everything = {p["id"]: p for p in (await product_page(client, shop, limit=100))["data"]}
    water = everything[shop.products["water"]]
    category, brand = water["category"], water["brand"]
    cases: list[dict[str, Any]] = [
        {"search": "WATER"},
        {"search": code(shop, "water")},
        {"search": water["barcode"]},
    ]
    if category is not None:
        cases.append({"category_id": category["xid"]})
        cases.append({"category_id": category["xid"], "search": shop_tag(shop)})
    if brand is not None:
        cases.append({"brand_id": brand["xid"]})
        if category is not None:
            cases.append(
                {"brand_id": brand["xid"], "category_id": category["xid"], "search": "water"}
            )
    for params in cases:
        got = await product_page(client, shop, limit=100, **params)
        assert water["id"] in {p["id"] for p in got["data"]}, params
        assert got["total"] == len(got["data"]), params
        for item in got["data"]:
            assert item == everything[item["id"]], params


async def test_a_products_numbers_are_the_stored_decimals_as_json_numbers(
    client: httpx.AsyncClient, db: Database
) -> None:
    """The product columns a till reads are converted to doubles by the database
    (``catalog.queries._wire_number``): each must be the number ``number`` makes of
    the stored decimal, whole ones as integers, on either database."""
    values = ["0.1", "2.675", "0.0001", "1234567.8901", "3.5", "12", "99999999999999.9999"]
    for text in values:
        stored = sql_cast(sql_cast(literal(text), Numeric(18, 4)), Float())
        got = await db.read(lambda s, e=stored: s.scalar(select(e)))
        assert number(got) == number(Decimal(text)), text
        if len(text.replace(".", "")) <= 15:  # a double's whole digits: beyond, the
            # fraction is gone either way, and the same value is written whole
            assert type(number(got)) is type(number(Decimal(text))), text
    shop = await tagged(db)
    [made] = await add_products(db, shop, 1, name="Odd", code=f"ODD-{shop_tag(shop)}")
    await db.unit(lambda uow: set_listing(uow, shop, made))
    product = await get_ok(client, shop, f"/products/{xid.encode(made)}")
    feed = await get_ok(client, shop, "/products", updated_since="1970-01-01T00:00:00Z", limit=1000)
    [listed] = [p for p in feed["data"] if p["id"] == made]
    for answer in (product, listed):
        assert (answer["sales_price"], answer["purchase_price"], answer["mrp"]) == (2.675, 0.1, 3)
        assert (answer["current_stock"], answer["reorder_level"]) == (0, 1.5)
        assert type(answer["mrp"]) is int


async def set_listing(uow: UnitOfWork, shop: Shop, product_id: int) -> None:
    listing = (
        await uow.session.execute(
            select(Listing).where(
                Listing.product_id == product_id, Listing.warehouse_id == shop.warehouse_id
            )
        )
    ).scalar_one()
    listing.sales_price = Decimal("2.675")
    listing.purchase_price = Decimal("0.1")
    listing.mrp = Decimal("3.0000")
    listing.reorder_level = Decimal("1.5")
