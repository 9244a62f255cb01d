"""POST/GET /price-adjustments: ADJ-BATCH numbers, immutable history, no money moved."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import pytest
from sqlalchemy import func, select

from tests.invariants import check_books
from tillbook.models import (
    JournalEntry,
    Listing,
    OutboxEvent,
    PriceAdjustmentBatch,
    PriceHistory,
)

D = Decimal


def reprice(product_id, price, **extra):
    body = {"product_id": product_id, "new_sales_price": price}
    body.update(extra)
    return body


async def recorded(db, company_id):
    """Counts of everything a price adjustment may write, to show nothing was."""

    async def run(s):
        out = {}
        for model in (PriceAdjustmentBatch, PriceHistory, JournalEntry, OutboxEvent):
            out[model.__name__] = await s.scalar(
                select(func.count()).select_from(model).where(model.company_id == company_id)
            )
        out["prices"] = sorted(
            (
                await s.execute(
                    select(Listing.product_id, Listing.sales_price).where(
                        Listing.company_id == company_id
                    )
                )
            ).all()
        )
        return out

    return await db.read(run)


async def history_of(db, product_id):
    rows = await db.read(
        lambda s: s.execute(
            select(
                PriceHistory.old_price,
                PriceHistory.new_price,
                PriceHistory.created_by,
                PriceHistory.batch_id,
            )
            .where(PriceHistory.product_id == product_id)
            .order_by(PriceHistory.id)
        )
    )
    return [(D(o), D(n), c, b) for o, n, c, b in rows.all()]


async def test_price_change_numbers_batches_and_keeps_history(client, shop, db):
    entries_before = (await recorded(db, shop.company_id))["JournalEntry"]
    r = await client.post(
        "/price-adjustments",
        json=reprice(shop.xid("apple"), "3.75", notes="autumn prices"),
        headers=shop.headers,
    )
    assert r.status_code == 200, r.text
    first = r.json()
    assert first["status"] == "success" and first["batch_invoice"] == "ADJ-BATCH-1"
    assert first["new_price"] == 3.75 and isinstance(first["batch_id"], int)
    apple = (await client.get(f"/products/{shop.xid('apple')}", headers=shop.headers)).json()
    assert apple["data"]["sales_price"] == 3.75

    r = await client.post(
        "/price-adjustments", json=reprice(shop.products["apple"], 4), headers=shop.headers
    )
    assert r.status_code == 200, r.text
    second = r.json()
    assert second["batch_invoice"] == "ADJ-BATCH-2" and second["new_price"] == 4
    price = await db.read(
        lambda s: s.scalar(
            select(Listing.sales_price).where(Listing.product_id == shop.products["apple"])
        )
    )
    assert price == D("4")

    history = await history_of(db, shop.products["apple"])
    assert [(o, n, b) for o, n, _, b in history] == [
        (D("3.50"), D("3.75"), first["batch_id"]),
        (D("3.75"), D("4"), second["batch_id"]),
    ]
    assert all(c is not None for _, _, c, _ in history)

    # no money moved
    assert (await recorded(db, shop.company_id))["JournalEntry"] == entries_before

    events = await db.read(
        lambda s: s.scalars(
            select(OutboxEvent.payload)
            .where(OutboxEvent.company_id == shop.company_id, OutboxEvent.type == "product.updated")
            .order_by(OutboxEvent.id)
        )
    )
    data = [json.loads(p)["data"] for p in events]
    assert [d["sales_price"] for d in data] == [3.75, 4]
    # The one payload of every door (catalog/announcements.py), every field present.
    assert data[0] == {
        "id": shop.products["apple"],
        "xid": shop.xid("apple"),
        "name": "Apple juice",
        "item_code": data[0]["item_code"],
        "barcode": "400" + data[0]["item_code"].removeprefix("AJ-"),
        "unit_id": shop.piece_unit_id,
        "category_id": shop.child_category_id,
        "brand_id": shop.brand_id,
        "tax_id": None,
        "sales_price": 3.75,
        "purchase_price": 2,
        "mrp": None,
        "current_stock": 20,
        "active": True,
    }
    await check_books(db, shop.company_id)


async def test_zero_price_and_four_places_are_allowed(client, shop, db):
    r = await client.post(
        "/price-adjustments", json=reprice(shop.products["tea"], 0), headers=shop.headers
    )
    assert r.status_code == 200, r.text
    assert r.json()["new_price"] == 0
    r = await client.post(
        "/price-adjustments", json=reprice(shop.products["water"], 0.3333), headers=shop.headers
    )
    assert r.status_code == 200, r.text
    assert r.json()["new_price"] == 0.3333
    await check_books(db, shop.company_id)


async def test_list_batches_newest_first_with_items_and_isolation(client, shop, db):
    for ref, price in ((shop.products["apple"], "3.60"), (shop.products["tea"], "12.5")):
        r = await client.post(
            "/price-adjustments", json=reprice(ref, price, notes="n"), headers=shop.headers
        )
        assert r.status_code == 200, r.text
    r = await client.get("/price-adjustments", headers=shop.headers)
    assert r.status_code == 200, r.text
    page = r.json()["data"]
    assert page["total"] == 2 and page["current_page"] == 1
    newest, oldest = page["data"]
    assert newest["invoice_number"] == "ADJ-BATCH-2" and oldest["invoice_number"] == "ADJ-BATCH-1"
    assert oldest["date"] == dt.datetime.now(dt.UTC).date().isoformat()
    assert oldest["notes"] == "n"
    assert set(oldest["creator"]) == {"id", "name"} and isinstance(oldest["creator"]["id"], int)
    assert isinstance(oldest["id"], int)
    assert oldest["items"] == [
        {
            "product_id": shop.products["apple"],
            "product": {
                "id": shop.products["apple"],
                "xid": shop.xid("apple"),
                "name": "Apple juice",
                "item_code": oldest["items"][0]["product"]["item_code"],
            },
            "old_price": 3.5,
            "new_price": 3.6,
        }
    ]
    assert newest["items"][0]["old_price"] == 9.99 and newest["items"][0]["new_price"] == 12.5
    second = (
        await client.get("/price-adjustments", params={"limit": 1, "page": 2}, headers=shop.headers)
    ).json()["data"]
    assert [b["invoice_number"] for b in second["data"]] == ["ADJ-BATCH-1"]
    assert (
        await client.get("/price-adjustments", params={"limit": "x"}, headers=shop.headers)
    ).status_code == 422

    # the other warehouse: its own list, its own numbers, not this warehouse's products
    other = (await client.get("/price-adjustments", headers=shop.other_key.headers)).json()
    assert other["data"]["total"] == 0
    r = await client.post(
        "/price-adjustments",
        json=reprice(shop.products["apple"], 1),
        headers=shop.other_key.headers,
    )
    assert r.status_code == 422 and "product_id" in r.json()["errors"]
    r = await client.post(
        "/price-adjustments",
        json=reprice(shop.other_products["coffee"], "4.20"),
        headers=shop.other_key.headers,
    )
    assert r.status_code == 200, r.text
    assert r.json()["batch_invoice"] == "ADJ-BATCH-1"
    assert (await client.get("/price-adjustments", headers=shop.headers)).json()["data"][
        "total"
    ] == 2
    await check_books(db, shop.company_id)


async def test_idempotent_retry_creates_one_batch(client, shop, db):
    body = reprice(shop.products["apple"], "3.99")
    headers = {**shop.headers, "Idempotency-Key": "price-retry-1"}
    first = await client.post("/price-adjustments", json=body, headers=headers)
    again = await client.post("/price-adjustments", json=body, headers=headers)
    assert first.status_code == again.status_code == 200
    assert again.json() == first.json() and first.json()["batch_invoice"] == "ADJ-BATCH-1"
    assert again.headers.get("Idempotent-Replayed") == "true"
    counts = await recorded(db, shop.company_id)
    assert counts["PriceAdjustmentBatch"] == 1 and counts["PriceHistory"] == 1
    assert counts["OutboxEvent"] == 1
    nxt = await client.post(
        "/price-adjustments", json=reprice(shop.products["apple"], 4), headers=shop.headers
    )
    assert nxt.json()["batch_invoice"] == "ADJ-BATCH-2"
    await check_books(db, shop.company_id)


BAD_BODIES = [
    ({}, ["product_id", "new_sales_price"]),
    ({"new_sales_price": 1}, ["product_id"]),
    ({"product_id": "APPLE"}, ["new_sales_price"]),
    ({"product_id": "APPLE", "new_sales_price": -1}, ["new_sales_price"]),
    ({"product_id": "APPLE", "new_sales_price": "-0.01"}, ["new_sales_price"]),
    ({"product_id": "APPLE", "new_sales_price": 1.00001}, ["new_sales_price"]),
    ({"product_id": "APPLE", "new_sales_price": "abc"}, ["new_sales_price"]),
    ({"product_id": "APPLE", "new_sales_price": None}, ["new_sales_price"]),
    ({"product_id": "APPLE", "new_sales_price": {"amount": 1}}, ["new_sales_price"]),
    ({"product_id": "APPLE", "new_sales_price": "1e30"}, ["new_sales_price"]),
    ({"product_id": "APPLE", "new_sales_price": 1, "notes": ["x"]}, ["notes"]),
    ({"product_id": "APPLE", "new_sales_price": 1, "notes": "x" * 2001}, ["notes"]),
    ({"product_id": [1], "new_sales_price": 1}, ["product_id"]),
    ({"product_id": False, "new_sales_price": 1}, ["product_id"]),
    ({"product_id": 0, "new_sales_price": 1}, ["product_id"]),
    ({"product_id": 999999999, "new_sales_price": 1}, ["product_id"]),
    ({"product_id": "zzzz-not-an-xid", "new_sales_price": 1}, ["product_id"]),
    ({"product_id": "COFFEE", "new_sales_price": 1}, ["product_id"]),
    ({"product_id": "APPLE", "new_sales_price": 1, "unique_id": "x" * 256}, ["unique_id"]),
]


@pytest.mark.parametrize(("body", "fields"), BAD_BODIES)
async def test_bad_bodies_are_422_naming_the_field(client, shop, db, body, fields):
    refs = {"APPLE": shop.products["apple"], "COFFEE": shop.other_products["coffee"]}
    if isinstance(body.get("product_id"), str) and body["product_id"] in refs:
        body = {**body, "product_id": refs[body["product_id"]]}
    before = await recorded(db, shop.company_id)
    r = await client.post("/price-adjustments", json=body, headers=shop.headers)
    assert r.status_code == 422, r.text
    out = r.json()
    assert out["status"] == "error" and isinstance(out["message"], str)
    assert sorted(out["errors"]) == sorted(fields)
    for field in fields:
        value = body.get(field)
        if (
            isinstance(value, int | float | str)
            and not isinstance(value, bool)
            and (len(str(value)) < 30)
        ):
            assert any(str(value) in m for m in out["errors"][field]), out["errors"][field]
    assert await recorded(db, shop.company_id) == before
    # the counter did not move
    r = await client.post(
        "/price-adjustments", json=reprice(shop.products["apple"], 3), headers=shop.headers
    )
    assert r.json()["batch_invoice"] == "ADJ-BATCH-1"
