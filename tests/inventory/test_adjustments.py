"""POST/GET /stock-adjustments: batches in at purchase_price, FIFO out, the books."""

from __future__ import annotations

import json
import re
from decimal import Decimal

import pytest
from sqlalchemy import func, select, update

from tests.factories import by_id, make_shop
from tests.invariants import check_books, gl_balance
from tillbook.models import (
    JournalEntry,
    Listing,
    OutboxEvent,
    StockAdjustment,
    StockBatch,
    StockMovement,
)

D = Decimal
ISO_Z = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


def adjust(product_id, quantity, adjustment_type="add", **extra):
    body = {"product_id": product_id, "quantity": quantity, "adjustment_type": adjustment_type}
    body.update(extra)
    return body


async def stock_of(db, product_id):
    return await db.read(
        lambda s: s.scalar(select(Listing.current_stock).where(Listing.product_id == product_id))
    )


async def gl(db, shop, code):
    return await db.read(lambda s: gl_balance(s, shop.company_id, code, shop.warehouse_id))


async def recorded(db, company_id):
    """Counts of everything a stock adjustment may write, to show nothing was."""

    async def run(s):
        out = {}
        for model in (StockAdjustment, JournalEntry, OutboxEvent, StockBatch, StockMovement):
            out[model.__name__] = await s.scalar(
                select(func.count()).select_from(model).where(model.company_id == company_id)
            )
        out["stock"] = sorted(
            (
                await s.execute(
                    select(Listing.product_id, Listing.current_stock).where(
                        Listing.company_id == company_id
                    )
                )
            ).all()
        )
        return out

    return await db.read(run)


async def events_of(db, company_id, event_type):
    rows = await db.read(
        lambda s: s.scalars(
            select(OutboxEvent.payload)
            .where(OutboxEvent.company_id == company_id, OutboxEvent.type == event_type)
            .order_by(OutboxEvent.id)
        )
    )
    return [json.loads(p) for p in rows]


async def test_subtract_takes_fifo_cost_to_shrinkage(client, shop, db):
    inventory_before = await gl(db, shop, "11700")
    body = adjust(shop.products["apple"], 12, "subtract", notes="broken bottles")
    r = await client.post("/stock-adjustments", json=body, headers=shop.headers)
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["status"] == "success" and isinstance(out["adjustment_id"], int)
    assert out["new_stock_level"] == 8
    # FIFO: 10 @ 1.50 + 2 @ 2.00 = 19.00 to 51100, out of 11700
    assert await gl(db, shop, "51100") == D("19.00")
    assert await gl(db, shop, "11700") == inventory_before - D("19.00")
    assert await stock_of(db, shop.products["apple"]) == D("8")
    row = await db.read(lambda s: by_id(s, StockAdjustment, out["adjustment_id"]))
    assert row.cost_amount == D("19.00") and row.journal_entry_id is not None
    assert row.adjustment_type == "subtract" and row.notes == "broken bottles"
    entry = await db.read(lambda s: by_id(s, JournalEntry, row.journal_entry_id))
    assert entry.source_type == "stock_adjustment" and entry.source_id == row.id
    assert entry.warehouse_id == shop.warehouse_id
    [event] = await events_of(db, shop.company_id, "stock.adjusted")
    assert event["data"]["id"] == out["adjustment_id"]
    assert event["data"]["cost_amount"] == "19.00" and event["data"]["quantity"] == "12.0000"
    assert await events_of(db, shop.company_id, "stock.discrepancy") == []
    await check_books(db, shop.company_id)


async def test_add_receives_batch_at_purchase_price(client, shop, db):
    body = adjust(
        shop.xid("tea"),
        "5",
        batch_number="LOT-7",
        expiry_date="2027-03-31",
        notes="found in back room",
    )
    r = await client.post("/stock-adjustments", json=body, headers=shop.headers)
    assert r.status_code == 200, r.text
    assert r.json()["new_stock_level"] == 5
    # 5 x purchase_price 5.00 = 25.00: Dr 11700, Cr 51100 (inventory gain)
    assert await gl(db, shop, "11700") == D("68.33") + D("25.00")
    assert await gl(db, shop, "51100") == D("-25.00")

    async def batches(s):
        rows = await s.execute(
            select(
                StockBatch.quantity_remaining,
                StockBatch.unit_cost,
                StockBatch.value_remaining,
                StockBatch.batch_number,
                StockBatch.expiry_date,
            ).where(StockBatch.product_id == shop.products["tea"])
        )
        return [(D(q), D(c), D(v), n, e.isoformat()) for q, c, v, n, e in rows]

    assert await db.read(batches) == [(D("5"), D("5"), D("25.00"), "LOT-7", "2027-03-31")]
    tea = (await client.get(f"/products/{shop.xid('tea')}", headers=shop.headers)).json()["data"]
    assert tea["current_stock"] == 5
    assert [(b["batch_number"], b["expiry_date"]) for b in tea.get("batches", [])] == [
        ("LOT-7", "2027-03-31")
    ]
    await check_books(db, shop.company_id)


async def test_add_fractional_rounds_value_per_batch(client, shop, db):
    # 2.5 x 0.40 = 1.00; water also has 100 @ 0.3333 = 33.33
    r = await client.post(
        "/stock-adjustments", json=adjust(shop.products["water"], 2.5), headers=shop.headers
    )
    assert r.status_code == 200, r.text
    assert r.json()["new_stock_level"] == 102.5
    # 3 @ 0.3333 = 0.9999 -> 1.00 out of the oldest batch
    r = await client.post(
        "/stock-adjustments",
        json=adjust(shop.products["water"], 3, "subtract"),
        headers=shop.headers,
    )
    assert r.status_code == 200, r.text
    assert r.json()["new_stock_level"] == 99.5
    assert await gl(db, shop, "51100") == D("0.00")
    await check_books(db, shop.company_id)


async def test_shortage_is_refused_and_nothing_recorded(client, shop, db):
    before = await recorded(db, shop.company_id)
    r = await client.post(
        "/stock-adjustments",
        json=adjust(shop.products["apple"], 25, "subtract"),
        headers=shop.headers,
    )
    assert r.status_code == 422, r.text
    assert r.json()["status"] == "error"
    assert "requested 25, available 20" in r.json()["errors"]["quantity"][0]
    r = await client.post(
        "/stock-adjustments",
        json=adjust(shop.products["tea"], "0.01", "subtract"),
        headers=shop.headers,
    )
    assert r.status_code == 422
    assert "requested 0.01, available 0" in r.json()["errors"]["quantity"][0]
    assert await recorded(db, shop.company_id) == before
    await check_books(db, shop.company_id)


async def test_negative_stock_subtract_alerts_and_add_settles(client, db):
    shop = await make_shop(db, allow_negative_stock=True)
    r = await client.post(
        "/stock-adjustments", json=adjust(shop.products["tea"], 3, "subtract"), headers=shop.headers
    )
    assert r.status_code == 200, r.text
    assert r.json()["new_stock_level"] == -3
    # the shortfall is costed at purchase_price 5.00
    assert await gl(db, shop, "51100") == D("15.00")
    [alert] = await events_of(db, shop.company_id, "stock.discrepancy")
    assert alert["data"]["product_id"] == shop.products["tea"]
    assert alert["data"]["quantity_short"] == 3 and alert["data"]["current_stock"] == -3
    await check_books(db, shop.company_id)

    # the purchase price went up before the units turned up: 3 x 1.00 more cost
    await db.write(
        lambda s: s.execute(
            update(Listing)
            .where(Listing.product_id == shop.products["tea"])
            .values(purchase_price=D("6.00"))
        )
    )
    r = await client.post(
        "/stock-adjustments", json=adjust(shop.products["tea"], 5), headers=shop.headers
    )
    assert r.status_code == 200, r.text
    assert r.json()["new_stock_level"] == 2
    # gain 5 x 6.00 = 30.00; deficit settlement 3.00 more COGS
    assert await gl(db, shop, "51100") == D("15.00") - D("30.00") + D("3.00")
    entries = await db.read(
        lambda s: s.scalar(
            select(func.count())
            .select_from(JournalEntry)
            .where(
                JournalEntry.company_id == shop.company_id,
                JournalEntry.source_type == "stock_adjustment",
            )
        )
    )
    assert entries == 3
    await check_books(db, shop.company_id)


async def test_zero_cost_add_records_stock_without_an_entry(client, shop, db):
    await db.write(
        lambda s: s.execute(
            update(Listing)
            .where(Listing.product_id == shop.products["tea"])
            .values(purchase_price=0)
        )
    )
    r = await client.post(
        "/stock-adjustments", json=adjust(shop.products["tea"], 4), headers=shop.headers
    )
    assert r.status_code == 200, r.text
    assert r.json()["new_stock_level"] == 4
    row = await db.read(lambda s: by_id(s, StockAdjustment, r.json()["adjustment_id"]))
    assert row.cost_amount == D("0.00") and row.journal_entry_id is None
    # and taking the zero-cost units out again posts nothing either
    r = await client.post(
        "/stock-adjustments", json=adjust(shop.products["tea"], 4, "subtract"), headers=shop.headers
    )
    assert r.status_code == 200, r.text
    assert r.json()["new_stock_level"] == 0
    assert await gl(db, shop, "51100") == D("0.00")
    await check_books(db, shop.company_id)


async def test_list_fields_order_pagination_and_isolation(client, shop, db):
    for body in (
        adjust(shop.products["apple"], "2.5", "subtract", notes="spoiled"),
        adjust(shop.products["tea"], 1, batch_number="B1", expiry_date="2027-01-01"),
    ):
        r = await client.post("/stock-adjustments", json=body, headers=shop.headers)
        assert r.status_code == 200, r.text
    r = await client.get("/stock-adjustments", headers=shop.headers)
    assert r.status_code == 200, r.text
    page = r.json()["data"]
    assert page["total"] == 2 and page["current_page"] == 1 and page["per_page"] == 20
    newest, oldest = page["data"]
    assert newest["product_id"] == shop.products["tea"] and newest["adjustment_type"] == "add"
    assert newest["batch_number"] == "B1" and newest["expiry_date"] == "2027-01-01"
    assert newest["cost_amount"] == "5.00" and newest["quantity"] == "1.0000"
    assert oldest == {
        "id": oldest["id"],
        "product_id": shop.products["apple"],
        "quantity": "2.5000",
        "adjustment_type": "subtract",
        "notes": "spoiled",
        "batch_number": None,
        "expiry_date": None,
        "cost_amount": "3.75",
        "created_at": oldest["created_at"],
        "product": {
            "id": shop.products["apple"],
            "xid": shop.xid("apple"),
            "name": "Apple juice",
            "item_code": oldest["product"]["item_code"],
        },
        "creator": oldest["creator"],
    }
    assert isinstance(oldest["id"], int) and ISO_Z.match(oldest["created_at"])
    assert set(oldest["creator"]) == {"id", "name"} and isinstance(oldest["creator"]["id"], int)
    # the outbox carries the same shape
    events = await events_of(db, shop.company_id, "stock.adjusted")
    assert [e["data"] for e in events] == [oldest, newest]
    second = (
        await client.get("/stock-adjustments", params={"limit": 1, "page": 2}, headers=shop.headers)
    ).json()["data"]
    assert second["total"] == 2 and [a["id"] for a in second["data"]] == [oldest["id"]]
    assert (
        await client.get("/stock-adjustments", params={"page": 0}, headers=shop.headers)
    ).status_code == 422
    # the other warehouse sees none, and cannot adjust this warehouse's products
    other = (await client.get("/stock-adjustments", headers=shop.other_key.headers)).json()
    assert other["data"]["total"] == 0 and other["data"]["data"] == []
    r = await client.post(
        "/stock-adjustments", json=adjust(shop.products["apple"], 1), headers=shop.other_key.headers
    )
    assert r.status_code == 422 and "product_id" in r.json()["errors"]
    await check_books(db, shop.company_id)


async def test_idempotent_retry_creates_one_adjustment(client, shop, db):
    body = adjust(shop.products["apple"], 3, "subtract")
    headers = {**shop.headers, "Idempotency-Key": "adj-retry-1"}
    first = await client.post("/stock-adjustments", json=body, headers=headers)
    again = await client.post("/stock-adjustments", json=body, headers=headers)
    assert first.status_code == again.status_code == 200
    assert again.json() == first.json()
    assert again.headers.get("Idempotent-Replayed") == "true"
    # the body token works the same way
    token_body = adjust(shop.products["apple"], 1, "subtract", unique_id="adj-body-1")
    a = await client.post("/stock-adjustments", json=token_body, headers=shop.headers)
    b = await client.post("/stock-adjustments", json=token_body, headers=shop.headers)
    assert a.json()["adjustment_id"] == b.json()["adjustment_id"]
    # same token, other body: refused
    other = await client.post(
        "/stock-adjustments", json=adjust(shop.products["apple"], 4), headers=headers
    )
    assert other.status_code == 422
    n = await db.read(
        lambda s: s.scalar(
            select(func.count())
            .select_from(StockAdjustment)
            .where(StockAdjustment.company_id == shop.company_id)
        )
    )
    assert n == 2
    assert await stock_of(db, shop.products["apple"]) == D("16")
    assert len(await events_of(db, shop.company_id, "stock.adjusted")) == 2
    await check_books(db, shop.company_id)


BAD_BODIES = [
    ({}, ["product_id", "quantity", "adjustment_type"]),
    ({"quantity": 1, "adjustment_type": "add"}, ["product_id"]),
    ({"product_id": "APPLE", "adjustment_type": "add"}, ["quantity"]),
    ({"product_id": "APPLE", "quantity": 1}, ["adjustment_type"]),
    ({"product_id": "APPLE", "quantity": 0, "adjustment_type": "add"}, ["quantity"]),
    ({"product_id": "APPLE", "quantity": 0.001, "adjustment_type": "add"}, ["quantity"]),
    ({"product_id": "APPLE", "quantity": "0.00001", "adjustment_type": "add"}, ["quantity"]),
    ({"product_id": "APPLE", "quantity": -1, "adjustment_type": "subtract"}, ["quantity"]),
    ({"product_id": "APPLE", "quantity": "abc", "adjustment_type": "add"}, ["quantity"]),
    ({"product_id": "APPLE", "quantity": [1], "adjustment_type": "add"}, ["quantity"]),
    ({"product_id": "APPLE", "quantity": 1, "adjustment_type": "remove"}, ["adjustment_type"]),
    ({"product_id": "APPLE", "quantity": 1, "adjustment_type": 1}, ["adjustment_type"]),
    (
        {
            "product_id": "APPLE",
            "quantity": 1,
            "adjustment_type": "add",
            "expiry_date": "2026-13-01",
        },
        ["expiry_date"],
    ),
    (
        {
            "product_id": "APPLE",
            "quantity": 1,
            "adjustment_type": "add",
            "expiry_date": "2026-12-01T10:00:00",
        },
        ["expiry_date"],
    ),
    (
        {"product_id": "APPLE", "quantity": 1, "adjustment_type": "add", "expiry_date": 1796083200},
        ["expiry_date"],
    ),
    (
        {"product_id": "APPLE", "quantity": 1, "adjustment_type": "add", "batch_number": "x" * 101},
        ["batch_number"],
    ),
    (
        {"product_id": "APPLE", "quantity": 1, "adjustment_type": "add", "batch_number": 12},
        ["batch_number"],
    ),
    ({"product_id": "APPLE", "quantity": 1, "adjustment_type": "add", "notes": 5}, ["notes"]),
    ({"product_id": True, "quantity": 1, "adjustment_type": "add"}, ["product_id"]),
    ({"product_id": 1.5, "quantity": 1, "adjustment_type": "add"}, ["product_id"]),
    ({"product_id": "", "quantity": 1, "adjustment_type": "add"}, ["product_id"]),
    ({"product_id": 999999999, "quantity": 1, "adjustment_type": "add"}, ["product_id"]),
    ({"product_id": "not-an-xid!", "quantity": 1, "adjustment_type": "add"}, ["product_id"]),
    ({"product_id": "COFFEE", "quantity": 1, "adjustment_type": "add"}, ["product_id"]),
    ({"product_id": "COFFEE", "quantity": 1, "adjustment_type": "subtract"}, ["product_id"]),
    (
        {"product_id": "APPLE", "quantity": 1, "adjustment_type": "add", "unique_id": ""},
        ["unique_id"],
    ),
]


@pytest.mark.parametrize(("body", "fields"), BAD_BODIES)
async def test_bad_bodies_are_422_naming_the_field(client, shop, db, body, fields):
    refs = {"APPLE": shop.products["apple"], "COFFEE": shop.other_products["coffee"]}
    if isinstance(body.get("product_id"), str) and body["product_id"] in refs:
        body = {**body, "product_id": refs[body["product_id"]]}
    before = await recorded(db, shop.company_id)
    r = await client.post("/stock-adjustments", json=body, headers=shop.headers)
    assert r.status_code == 422, r.text
    out = r.json()
    assert out["status"] == "error" and isinstance(out["message"], str)
    assert sorted(out["errors"]) == sorted(fields)
    for field in fields:
        if field in body and body[field] not in ("",) and not isinstance(body[field], list):
            shown = str(body[field])[:20]
            assert any(shown in m for m in out["errors"][field]), out["errors"][field]
    assert await recorded(db, shop.company_id) == before


async def test_malformed_and_non_object_bodies(client, shop, db):
    headers = {**shop.headers, "Content-Type": "application/json"}
    r = await client.post("/stock-adjustments", content=b"{not json", headers=headers)
    assert r.status_code == 400
    r = await client.post("/stock-adjustments", content=b"[1, 2]", headers=headers)
    assert r.status_code == 422 and "body" in r.json()["errors"]
    r = await client.post(
        "/stock-adjustments",
        content=b'{"product_id": 1}',
        headers={**shop.headers, "Content-Type": "text/plain"},
    )
    assert r.status_code == 415
    await check_books(db, shop.company_id)
