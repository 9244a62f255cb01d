"""Idempotent retries and concurrent writers: no oversell, no duplicate, no imbalance."""

from __future__ import annotations

import asyncio
import json
from decimal import Decimal

from sqlalchemy import func, select

from tests.factories import make_shop
from tests.invariants import check_books
from tillbook.ledger import rules
from tillbook.ledger.rules import Leg
from tillbook.models import FailedTransaction, JournalEntry, Listing, Order, OutboxEvent

D = Decimal


def one_apple(shop, **extra):
    body = {
        "user_id": shop.customer_id,
        "order_date": "2026-11-20",
        "product_items": [{"xid": shop.xid("apple"), "quantity": 1, "unit_price": 3.5}],
    }
    body.update(extra)
    return body


async def count(db, model, company_id):
    return await db.read(
        lambda s: s.scalar(
            select(func.count()).select_from(model).where(model.company_id == company_id)
        )
    )


async def test_same_token_replays_without_new_effects(client, shop, db):
    headers = {**shop.headers, "Idempotency-Key": "till-1-000042"}
    first = await client.post("/sales", json=one_apple(shop), headers=headers)
    again = await client.post("/sales", json=one_apple(shop), headers=headers)
    assert first.status_code == again.status_code == 200
    assert again.json() == first.json()
    assert again.headers["idempotent-replayed"] == "true"
    assert "idempotent-replayed" not in first.headers
    assert await count(db, Order, shop.company_id) == 1
    assert await count(db, OutboxEvent, shop.company_id) == 2
    # the same token with another body is refused and changes nothing
    other = await client.post("/sales", json=one_apple(shop, discount=1), headers=headers)
    assert other.status_code == 422 and "different request body" in other.json()["message"]
    assert await count(db, Order, shop.company_id) == 1
    await check_books(db, shop.company_id)


async def test_unique_id_in_body_is_a_token(client, shop, db):
    body = one_apple(shop, unique_id="offline-till-7-123")
    a = await client.post("/sales", json=body, headers=shop.headers)
    b = await client.post("/sales", json=body, headers=shop.headers)
    assert a.json() == b.json() and a.json()["unique_id"] == "offline-till-7-123"
    assert await count(db, Order, shop.company_id) == 1


async def test_same_client_invoice_number_returns_earlier_sale(client, shop, db):
    body = one_apple(shop, invoice_number="T7-000123")
    a = await client.post("/sales", json=body, headers=shop.headers)
    b = await client.post(
        "/sales",
        json=one_apple(shop, invoice_number="T7-000123", discount=0.5),
        headers=shop.headers,
    )
    assert a.status_code == b.status_code == 200
    assert a.json()["order_id"] == b.json()["order_id"]
    assert await count(db, Order, shop.company_id) == 1
    # a generated number skips one a client took by hand
    c = await client.post(
        "/sales", json=one_apple(shop, invoice_number="SAL-00001"), headers=shop.headers
    )
    d = await client.post("/sales", json=one_apple(shop), headers=shop.headers)
    assert c.json()["invoice_number"] == "SAL-00001"
    assert d.json()["invoice_number"] == "SAL-00002"
    await check_books(db, shop.company_id)


async def test_concurrent_same_token_creates_one_sale(client, shop, db):
    headers = {**shop.headers, "Idempotency-Key": "burst-token"}
    results = await asyncio.gather(
        *[client.post("/sales", json=one_apple(shop), headers=headers) for _ in range(10)]
    )
    assert all(r.status_code == 200 for r in results), [r.text for r in results]
    assert len({r.json()["order_id"] for r in results}) == 1
    assert await count(db, Order, shop.company_id) == 1
    stock = await db.read(
        lambda s: s.scalar(
            select(Listing.current_stock).where(Listing.product_id == shop.products["apple"])
        )
    )
    assert stock == D("19")
    await check_books(db, shop.company_id)


async def test_thirty_clients_buy_the_last_twenty(client, db):
    shop = await make_shop(db)
    # 20 apples on hand; 30 buyers of one each, all at once
    results = await asyncio.gather(
        *[client.post("/sales", json=one_apple(shop), headers=shop.headers) for _ in range(30)]
    )
    codes = sorted(r.status_code for r in results)
    assert codes.count(200) == 20, [r.text for r in results if r.status_code != 200][:3]
    assert codes.count(422) == 10
    refused = [r.json() for r in results if r.status_code == 422]
    assert all("insufficient stock" in str(r["errors"]) for r in refused)
    stock = await db.read(
        lambda s: s.scalar(
            select(Listing.current_stock).where(Listing.product_id == shop.products["apple"])
        )
    )
    assert stock == 0
    numbers = sorted(r.json()["invoice_number"] for r in results if r.status_code == 200)
    assert numbers == [f"SAL-{n:05d}" for n in range(1, 21)]
    await check_books(db, shop.company_id)


async def test_forced_imbalance_rolls_back_and_records_failure(client, shop, db, monkeypatch):
    """Put the shipping leg of the sale rule on the wrong side: the real posting path
    must refuse."""
    broken = tuple(
        Leg(leg.amount, "debit", leg.account, leg.party) if leg.amount == "shipping" else leg
        for leg in rules.RULES["sale"]
    )
    assert broken != rules.RULES["sale"]
    monkeypatch.setitem(rules.RULES, "sale", broken)
    r = await client.post("/sales", json=one_apple(shop, shipping=2), headers=shop.headers)
    assert r.status_code == 422
    assert "does not balance" in r.json()["message"]
    assert await count(db, Order, shop.company_id) == 0
    assert await count(db, JournalEntry, shop.company_id) == 4  # opening stock only
    assert await count(db, OutboxEvent, shop.company_id) == 0
    stock = await db.read(
        lambda s: s.scalar(
            select(Listing.current_stock).where(Listing.product_id == shop.products["apple"])
        )
    )
    assert stock == D("20")

    async def failures(s):
        rows = await s.scalars(
            select(FailedTransaction).where(FailedTransaction.company_id == shop.company_id)
        )
        return rows.all()

    failed = await db.read(failures)
    assert len(failed) == 1
    assert "debits" in failed[0].reason and failed[0].warehouse_id == shop.warehouse_id
    assert '"narration"' in failed[0].transaction_data and '"entries"' in failed[0].transaction_data
    # the rolled-back sale gave its number back (SQLite), or never took one: on
    # PostgreSQL the last statement takes it, and the record names none
    narration = json.loads(failed[0].transaction_data)["context"]["narration"]
    number = "SAL-00001" if db.is_sqlite else "(no number)"
    assert narration == f"Sale {number} to Ada Customer"
    again = await client.post("/sales", json=one_apple(shop), headers=shop.headers)
    assert again.json()["invoice_number"] == "SAL-00001"
    # without shipping the broken rule still balances: the check is real, not a blanket refusal
    ok = await client.post("/sales", json=one_apple(shop), headers=shop.headers)
    assert ok.status_code == 200
    monkeypatch.undo()
    await check_books(db, shop.company_id)


assert Leg  # the rule type the imbalance test edits


async def test_token_older_than_24_hours_starts_afresh(client, shop, db):
    import datetime as dt

    from sqlalchemy import update

    from tillbook.models import IdempotencyRecord

    headers = {**shop.headers, "Idempotency-Key": "old-token"}
    first = await client.post("/sales", json=one_apple(shop), headers=headers)
    assert first.status_code == 200

    async def age(s):
        await s.execute(
            update(IdempotencyRecord)
            .where(
                IdempotencyRecord.warehouse_id == shop.warehouse_id,
                IdempotencyRecord.token == "old-token",
            )
            .values(created_at=dt.datetime.now(dt.UTC) - dt.timedelta(hours=25))
        )

    await db.write(age)
    later = await client.post("/sales", json=one_apple(shop), headers=headers)
    assert later.status_code == 200 and "idempotent-replayed" not in later.headers
    assert later.json()["order_id"] != first.json()["order_id"]
    assert await count(db, Order, shop.company_id) == 2
    await check_books(db, shop.company_id)
