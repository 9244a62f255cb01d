"""The company-wide catalog in the back office: products, listings per warehouse,
opening stock, optimistic concurrency, archiving, and bad input that changes
nothing."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from tests.factories import Shop, make_shop
from tests.invariants import check_books, gl_balance
from tillbook.db import Database
from tillbook.models import (
    AuditEvent,
    Listing,
    OutboxEvent,
    PriceHistory,
    Product,
    ProductBarcode,
    StockBatch,
    User,
)

D = Decimal
ADMIN = "http://testserver/api/v1/admin"
PASSWORD = "correct horse battery"


async def login(client: httpx.AsyncClient, db: Database, shop: Shop) -> dict[str, str]:
    email = await db.read(
        lambda s: s.scalar(
            select(User.email)
            .where(User.company_id == shop.company_id, User.user_type.in_(("admin", "staff")))
            .order_by(User.id)
            .limit(1)
        )
    )
    r = await client.post(f"{ADMIN}/login", json={"email": email, "password": PASSWORD})
    assert r.status_code == 200, r.text
    return {"Authorization": f"Bearer {r.json()['token']}"}


def new_product(shop: Shop, code: str = "NEW-1", **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": "Oat milk 1L",
        "item_code": code,
        "barcodes": [f"590{code}", f"591{code}"],
        "category_id": shop.category_id,
        "brand_id": shop.brand_id,
        "unit_id": shop.piece_unit_id,
        "tax_id": shop.tax10_id,
        "additional_units": [
            {"unit_id": shop.box_unit_id, "operator_value": 6, "alternative_price": "10.00"}
        ],
        "listings": [
            {
                "warehouse_id": shop.warehouse_id,
                "sales_price": "2.20",
                "purchase_price": "1.10",
                "mrp": "2.50",
                "reorder_level": 5,
                "opening_stock": {"quantity": 12, "unit_cost": "1.05"},
            },
            {
                "warehouse_id": shop.other_warehouse_id,
                "sales_price": "2.40",
                "purchase_price": "1.10",
            },
        ],
    }
    body.update(extra)
    return body


async def counts(db: Database, company_id: int) -> tuple[int, ...]:
    async def read(s: Any) -> tuple[int, ...]:
        out = []
        for model in (Product, Listing, ProductBarcode, StockBatch, AuditEvent):
            out.append(
                await s.scalar(
                    select(func.count()).select_from(model).where(model.company_id == company_id)
                )
            )
        return tuple(out)

    return await db.read(read)


async def test_a_product_defined_once_listed_in_two_warehouses(
    client: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    auth = await login(client, db, shop)
    inventory_before = await db.read(lambda s: gl_balance(s, shop.company_id, "11700"))
    r = await client.post(f"{ADMIN}/products", json=new_product(shop), headers=auth)
    assert r.status_code == 201, r.text
    data = r.json()["data"]
    assert r.headers["etag"] == '"1"' and data["version"] == 1
    assert data["barcodes"] == ["590NEW-1", "591NEW-1"]
    assert data["additional_units"] == [
        {"unit_id": shop.box_unit_id, "operator_value": 6, "alternative_price": 10}
    ]
    here, there = data["listings"]
    assert (here["warehouse_id"], here["sales_price"], here["current_stock"]) == (
        shop.warehouse_id,
        2.2,
        12,
    )
    assert (there["warehouse_id"], there["sales_price"], there["current_stock"]) == (
        shop.other_warehouse_id,
        2.4,
        0,
    )
    # opening stock: Dr 11700 / Cr 31100 at its cost
    inventory_after = await db.read(lambda s: gl_balance(s, shop.company_id, "11700"))
    assert inventory_after - inventory_before == D("12.60")
    await check_books(db, shop.company_id)

    # each till sees the one product with its own warehouse's price and stock
    pid = data["id"]
    mine = await client.get(f"/products/{pid}", headers=shop.headers)
    theirs = await client.get(f"/products/{pid}", headers=shop.other_key.headers)
    assert mine.json()["data"]["sales_price"] == 2.2 and mine.json()["data"]["current_stock"] == 12
    assert theirs.json()["data"]["sales_price"] == 2.4
    assert mine.json()["data"]["has_additional_units"] is True
    found = await client.get("/products", params={"search": "591NEW-1"}, headers=shop.headers)
    assert [p["id"] for p in found.json()["data"]["data"]] == [pid]

    # and sells it: a sale in the second warehouse draws from its own (empty) stock
    sale = {
        "user_id": shop.customer_id,
        "order_date": "2026-11-20",
        "product_items": [{"xid": str(pid), "quantity": 2, "unit_price": 2.2}],
    }
    ok = await client.post("/sales", json=sale, headers=shop.headers)
    assert ok.status_code == 200, ok.text
    short = await client.post("/sales", json=sale, headers=shop.other_key.headers)
    assert short.status_code == 422 and "insufficient stock" in short.text
    await check_books(db, shop.company_id)

    # recorded in the audit trail, with the product's fields after
    audit = await db.read(
        lambda s: s.scalar(
            select(AuditEvent.after).where(
                AuditEvent.entity_type == "product", AuditEvent.entity_id == pid
            )
        )
    )
    assert json.loads(audit)["item_code"] == "NEW-1"


async def test_a_product_not_listed_in_a_warehouse_is_not_found_there(
    client: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    auth = await login(client, db, shop)
    body = new_product(shop, "ONE-1")
    body["listings"] = body["listings"][:1]
    pid = (await client.post(f"{ADMIN}/products", json=body, headers=auth)).json()["data"]["id"]
    assert (await client.get(f"/products/{pid}", headers=shop.other_key.headers)).status_code == 404

    # the back office's list of a branch's products (a router query on PostgreSQL:
    # its listings are read by company too, tests/router_check.py)
    async def listed_in(warehouse_id: int) -> list[int]:
        params = {"warehouse_id": warehouse_id, "per_page": 100}
        r = await client.get(f"{ADMIN}/products", params=params, headers=auth)
        assert r.status_code == 200, r.text
        return [p["id"] for p in r.json()["data"]["data"]]

    assert pid in await listed_in(shop.warehouse_id)
    assert pid not in await listed_in(shop.other_warehouse_id)
    listing = {"warehouse_id": shop.other_warehouse_id, "sales_price": 3, "purchase_price": 1}
    r = await client.post(f"{ADMIN}/products/{pid}/listings", json=listing, headers=auth)
    assert r.status_code == 201, r.text
    assert (await client.get(f"/products/{pid}", headers=shop.other_key.headers)).status_code == 200
    again = await client.post(f"{ADMIN}/products/{pid}/listings", json=listing, headers=auth)
    assert again.status_code == 422 and "warehouse_id" in again.json()["errors"]
    stock = {"quantity": 4, "unit_cost": "0.80"}
    r = await client.post(
        f"{ADMIN}/products/{pid}/listings/{shop.other_warehouse_id}/opening-stock",
        json=stock,
        headers=auth,
    )
    assert r.status_code == 200, r.text
    assert r.json()["data"]["current_stock"] == 4
    await check_books(db, shop.company_id)


async def test_edits_name_the_version_they_are_based_on(
    client: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    auth = await login(client, db, shop)
    created = (await client.post(f"{ADMIN}/products", json=new_product(shop), headers=auth)).json()
    pid = created["data"]["id"]
    url = f"{ADMIN}/products/{pid}"
    none = await client.patch(url, json={"name": "Oat drink"}, headers=auth)
    assert none.status_code == 428, none.text
    ok = await client.patch(url, json={"name": "Oat drink"}, headers={**auth, "If-Match": '"1"'})
    assert ok.status_code == 200, ok.text
    assert ok.json()["data"]["version"] == 2 and ok.headers["etag"] == '"2"'
    assert ok.json()["data"]["slug"] == "oat-drink"
    stale = await client.patch(url, json={"name": "Lost edit"}, headers={**auth, "If-Match": '"1"'})
    assert stale.status_code == 412, stale.text
    assert (await client.get(url, headers=auth)).json()["data"]["name"] == "Oat drink"
    by_field = await client.patch(url, json={"description": "barista", "version": 2}, headers=auth)
    assert by_field.status_code == 200 and by_field.json()["data"]["version"] == 3

    # a listing's price: history kept, the till's price changes, product.updated goes out
    listing_url = f"{url}/listings/{shop.warehouse_id}"
    r = await client.patch(listing_url, json={"sales_price": "2.35", "version": 1}, headers=auth)
    assert r.status_code == 200, r.text
    assert r.json()["data"]["version"] == 2
    till = await client.get(f"/products/{pid}", headers=shop.headers)
    assert till.json()["data"]["sales_price"] == 2.35
    history = await db.read(
        lambda s: s.execute(
            select(PriceHistory.old_price, PriceHistory.new_price).where(
                PriceHistory.product_id == pid
            )
        )
    )
    assert [(D(str(a)), D(str(b))) for a, b in history.all()] == [(D("2.2"), D("2.35"))]
    above_mrp = await client.patch(
        listing_url, json={"sales_price": "2.60", "version": 2}, headers=auth
    )
    assert above_mrp.status_code == 422 and "sales_price" in above_mrp.json()["errors"]
    events = await db.read(
        lambda s: s.scalar(
            select(func.count())
            .select_from(OutboxEvent)
            .where(OutboxEvent.company_id == shop.company_id, OutboxEvent.type == "product.updated")
        )
    )
    assert events >= 4  # created (2 warehouses), renamed (2), repriced (1)


async def test_an_archived_product_is_not_sold_but_stays_readable(
    client: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    auth = await login(client, db, shop)
    pid = shop.products["apple"]
    r = await client.post(f"{ADMIN}/products/{pid}/archive", headers=auth)
    assert r.status_code == 200 and r.json()["data"]["archived"] is True
    sale = {
        "user_id": shop.customer_id,
        "order_date": "2026-11-20",
        "product_items": [{"xid": shop.xid("apple"), "quantity": 1, "unit_price": 3.5}],
    }
    refused = await client.post("/sales", json=sale, headers=shop.headers)
    assert refused.status_code == 422, refused.text
    assert "product_items.0.xid" in refused.json()["errors"]
    assert "archived" in refused.text
    listed = await client.get("/products", headers=shop.headers)
    assert pid not in [p["id"] for p in listed.json()["data"]["data"]]
    one = await client.get(f"/products/{pid}", headers=shop.headers)
    assert one.status_code == 200 and one.json()["data"]["active"] is False
    default = await client.get(f"{ADMIN}/products", headers=auth)
    assert pid not in [p["id"] for p in default.json()["data"]["data"]]
    everything = await client.get(
        f"{ADMIN}/products", params={"include_archived": "true"}, headers=auth
    )
    assert pid in [p["id"] for p in everything.json()["data"]["data"]]


async def test_another_companys_products_are_not_found(
    client: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    other = await make_shop(db)
    auth = await login(client, db, other)
    pid = shop.products["apple"]
    for method, url, body in (
        ("GET", f"{ADMIN}/products/{pid}", None),
        ("PATCH", f"{ADMIN}/products/{pid}", {"name": "mine now", "version": 1}),
        ("POST", f"{ADMIN}/products/{pid}/archive", None),
        (
            "POST",
            f"{ADMIN}/products/{pid}/listings",
            {"warehouse_id": other.warehouse_id, "sales_price": 1, "purchase_price": 1},
        ),
        (
            "PATCH",
            f"{ADMIN}/products/{pid}/listings/{shop.warehouse_id}",
            {"sales_price": 0, "version": 1},
        ),
        (
            "POST",
            f"{ADMIN}/products/{pid}/listings/{shop.warehouse_id}/opening-stock",
            {"quantity": 1, "unit_cost": 1},
        ),
    ):
        r = await client.request(method, url, json=body, headers=auth)
        assert r.status_code == 404, (method, url, r.text)
    listed = await client.get(f"{ADMIN}/products", headers=auth)
    assert pid not in [p["id"] for p in listed.json()["data"]["data"]]


def one(**listing: Any) -> dict[str, Any]:
    return {"listings": [{"warehouse_id": 1, "sales_price": 1, "purchase_price": 1, **listing}]}


BAD = [
    ("name", {"name": ""}),
    ("name", {"name": "Oat\u0000milk"}),
    ("item_code", {"item_code": " padded "}),
    ("barcodes.1", {"barcodes": ["111", "111"]}),
    ("barcodes.0", {"barcodes": ["not a barcode"]}),
    ("category_id", {"category_id": 2**62}),
    ("category_id", {"category_id": "drinks"}),
    ("unit_id", {"unit_id": -1}),
    ("listings.0.sales_price", one(sales_price=-1)),
    ("listings.0.sales_price", one(sales_price="1.00001")),
    ("listings.0.warehouse_id", one(warehouse_id=2**62)),
    ("additional_units.0.operator_value",
     {"additional_units": [{"unit_id": 1, "operator_value": 0, "alternative_price": 1}]}),
]  # fmt: skip


@pytest.mark.parametrize(("field", "change"), BAD, ids=[f"{f}-{i}" for i, (f, _) in enumerate(BAD)])
async def test_bad_input_names_the_field_and_changes_nothing(
    client: httpx.AsyncClient, db: Database, shop: Shop, field: str, change: dict[str, Any]
) -> None:
    auth = await login(client, db, shop)
    before = await counts(db, shop.company_id)
    r = await client.post(f"{ADMIN}/products", json=new_product(shop, **change), headers=auth)
    assert r.status_code == 422, r.text
    assert field in r.json()["errors"], r.json()
    assert await counts(db, shop.company_id) == before


async def test_references_of_the_company_itself_only(
    client: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    other = await make_shop(db)
    auth = await login(client, db, shop)
    before = await counts(db, shop.company_id)
    cases = {
        "item_code": new_product(shop, code=(await _item_code(db, shop.products["apple"]))),
        "barcodes.0": new_product(shop, barcodes=[await _barcode(db, shop.products["apple"])]),
        "category_id": new_product(shop, category_id=other.category_id),
        "tax_id": new_product(shop, tax_id=other.tax10_id),
        "listings.0.warehouse_id": new_product(
            shop,
            listings=[{"warehouse_id": other.warehouse_id, "sales_price": 1, "purchase_price": 1}],
        ),
        "listings.1.warehouse_id": new_product(
            shop,
            listings=[
                {"warehouse_id": shop.warehouse_id, "sales_price": 1, "purchase_price": 1},
                {"warehouse_id": shop.warehouse_id, "sales_price": 1, "purchase_price": 1},
            ],
        ),
        "listings.0.sales_price": new_product(
            shop,
            listings=[
                {"warehouse_id": shop.warehouse_id, "sales_price": 3, "purchase_price": 1, "mrp": 2}
            ],
        ),
        "additional_units.0.unit_id": new_product(
            shop,
            additional_units=[
                {"unit_id": shop.piece_unit_id, "operator_value": 2, "alternative_price": 1}
            ],
        ),
    }
    for field, body in cases.items():
        r = await client.post(f"{ADMIN}/products", json=body, headers=auth)
        assert r.status_code == 422, (field, r.text)
        assert field in r.json()["errors"], (field, r.json())
    assert await counts(db, shop.company_id) == before


async def _item_code(db: Database, pid: int) -> str:
    code = await db.read(lambda s: s.scalar(select(Product.item_code).where(Product.id == pid)))
    assert isinstance(code, str)
    return code


async def _barcode(db: Database, pid: int) -> str:
    code = await db.read(
        lambda s: s.scalar(select(ProductBarcode.barcode).where(ProductBarcode.product_id == pid))
    )
    assert isinstance(code, str)
    return code
