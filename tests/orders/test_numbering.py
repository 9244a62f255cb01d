"""Invoice numbers (``orders.numbering``): taken in the unit's closing step (a sale's
by its last statement on PostgreSQL), gapless under concurrency, given back by a
unit that rolls back, skipping numbers clients took by hand, growing past five
digits; the number reaches every place that names it (the order, the journal
narration, the events, the stored response)."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import func, select, update

from tests.factories import by_id
from tests.invariants import check_books
from tillbook.models import IdempotencyRecord, InvoiceCounter, JournalEntry, Order, OutboxEvent
from tillbook.orders.numbering import format_number


def sale(shop, **extra):
    body = {
        "user_id": shop.customer_id,
        "order_date": "2026-11-20",
        "product_items": [{"xid": shop.xid("apple"), "quantity": 2, "unit_price": 3.5}],
        "all_payments": [{"amount": 7, "payment_mode_id": "cash"}],
    }
    body.update(extra)
    return body


async def committed_texts(db, company_id: int, order_id: int) -> list[str]:
    """Every committed text that names the sale: its number, its narration, its
    events, its stored response."""

    async def read(s):
        order = await by_id(s, Order, order_id)
        entry = await by_id(s, JournalEntry, order.journal_entry_id)
        payloads = (
            await s.scalars(select(OutboxEvent.payload).where(OutboxEvent.company_id == company_id))
        ).all()
        responses = (await s.scalars(select(IdempotencyRecord.response_body))).all()
        return [order.invoice_number, entry.narration, *payloads, *(r for r in responses if r)]

    return await db.read(read)


async def test_number_reaches_order_entry_events_and_stored_response(client, shop, db):
    headers = {**shop.headers, "Idempotency-Key": "late-number-1"}
    first = await client.post("/sales", json=sale(shop), headers=headers)
    assert first.status_code == 200, first.text
    out = first.json()
    assert out["invoice_number"] == "SAL-00001"

    texts = await committed_texts(db, shop.company_id, out["order_id"])
    assert texts[0] == "SAL-00001"
    assert texts[1].startswith("Sale SAL-00001 to ")
    events = [json.loads(p) for p in texts[2:5]]
    assert {e["type"] for e in events} == {"order.created", "sales.created", "order.paid"}
    assert all(e["data"]["invoice_number"] == "SAL-00001" for e in events)

    # the stored response replays with the number
    again = await client.post("/sales", json=sale(shop), headers=headers)
    assert again.headers["idempotent-replayed"] == "true"
    assert again.json() == out

    second = await client.post("/sales", json=sale(shop), headers=shop.headers)
    assert second.json()["invoice_number"] == "SAL-00002"
    await check_books(db, shop.company_id)


async def test_number_grows_past_five_digits(client, shop, db):
    first = await client.post("/sales", json=sale(shop), headers=shop.headers)
    assert first.json()["invoice_number"] == "SAL-00001"

    async def jump(s):
        await s.execute(
            update(InvoiceCounter)
            .where(
                InvoiceCounter.warehouse_id == shop.warehouse_id,
                InvoiceCounter.counter_type == "sales",
            )
            .values(last_value=99_999)
        )

    await db.write(jump)
    r = await client.post("/sales", json=sale(shop), headers=shop.headers)
    assert r.json()["invoice_number"] == "SAL-100000"
    order = await db.read(lambda s: by_id(s, Order, r.json()["order_id"]))
    assert order.invoice_number == "SAL-100000"


async def test_taken_number_is_skipped(client, shop, db):
    """A client already holds the number the counter gives: the unit that takes it
    fails on the unique index, rolls the counter back with everything else, and
    runs again checking each number first."""
    taken = await client.post(
        "/sales", json=sale(shop, invoice_number="SAL-00002"), headers=shop.headers
    )
    assert taken.status_code == 200
    numbers = []
    for _ in range(3):
        r = await client.post("/sales", json=sale(shop), headers=shop.headers)
        assert r.status_code == 200, r.text
        numbers.append(r.json()["invoice_number"])
    assert numbers == ["SAL-00001", "SAL-00003", "SAL-00004"]
    await check_books(db, shop.company_id)


@pytest.mark.parametrize("value", [1, 42, 99_999, 100_000, 1_234_567])
def test_format(value: int) -> None:
    assert format_number("sales", value) == f"SAL-{value:05d}"
    assert format_number("price-adjustments", value) == f"ADJ-BATCH-{value}"


async def test_concurrent_sales_numbers_are_gapless(client, shop, db, backend):
    import asyncio

    results = await asyncio.gather(
        *[
            client.post("/sales", json=sale(shop, product_items=[
                {"xid": shop.xid("apple"), "quantity": 1, "unit_price": 3.5}
            ], all_payments=[{"amount": 3.5, "payment_mode_id": "cash"}]), headers=shop.headers)
            for _ in range(12)
        ]
    )  # fmt: skip
    assert all(r.status_code == 200 for r in results), [r.text for r in results]
    numbers = sorted(r.json()["invoice_number"] for r in results)
    assert numbers == [f"SAL-{i:05d}" for i in range(1, 13)]
    count = await db.read(
        lambda s: s.scalar(
            select(func.count()).select_from(Order).where(Order.company_id == shop.company_id)
        )
    )
    assert count == 12
    await check_books(db, shop.company_id)


async def test_refused_sale_takes_no_number(client, shop, db):
    """A sale refused (here: more apples than are on hand) takes no number: the
    next sale gets the one it would have had."""
    first = await client.post("/sales", json=sale(shop), headers=shop.headers)
    assert first.json()["invoice_number"] == "SAL-00001"
    refused = await client.post(
        "/sales",
        json=sale(
            shop,
            product_items=[{"xid": shop.xid("apple"), "quantity": 10_000, "unit_price": 3.5}],
            all_payments=[],
        ),
        headers=shop.headers,
    )
    assert refused.status_code == 422
    nxt = await client.post("/sales", json=sale(shop), headers=shop.headers)
    assert nxt.json()["invoice_number"] == "SAL-00002"
    await check_books(db, shop.company_id)


async def test_the_number_is_taken_by_the_last_statement_with_the_entry(client, shop, db):
    """On PostgreSQL a sale's number is taken by its last statement (``numbering.
    take_late``), which also writes the journal entry that names it: the counter row
    every sale of the branch queues on is locked from that one statement to COMMIT.
    No statement before it touches the counter or the journal."""
    if db.is_sqlite:
        pytest.skip("SQLite takes the number at once: one writer, nothing queues on the row")
    from sqlalchemy import event

    from tillbook.unit import statement_observers

    seen: list[str] = []

    def through_session(_conn, _cursor, statement, *_args):
        seen.append(statement)

    event.listen(db.engine.sync_engine, "before_cursor_execute", through_session)
    statement_observers.append(seen.append)
    try:
        r = await client.post("/sales", json=sale(shop), headers=shop.headers)
    finally:
        statement_observers.remove(seen.append)
        event.remove(db.engine.sync_engine, "before_cursor_execute", through_session)
    assert r.status_code == 200, r.text
    assert r.json()["invoice_number"] == "SAL-00001"
    touching = [i for i, sql in enumerate(seen) if "invoice_counters" in sql]
    journal = [i for i, sql in enumerate(seen) if "INSERT INTO journal_" in sql]
    last = len(seen) - 1
    assert touching == [last], seen
    assert journal == [last], seen
    for table in ("journal_entries", "journal_lines", "orders", "outbox_events"):
        assert table in seen[last]
    texts = await committed_texts(db, shop.company_id, r.json()["order_id"])
    assert texts[1].startswith("Sale SAL-00001 to ")
    await check_books(db, shop.company_id)


async def test_a_sale_run_again_takes_its_number_before_it_plans(client, shop, db, monkeypatch):
    """A unit run again holds its number from before it plans (``take_before_plan``),
    so its last statement takes none: the numbers stay gapless and in order."""
    from tillbook.orders import numbering

    runs: list[int] = []
    real = numbering.take_before_plan

    async def first_run_loses(uow, *args):
        runs.append(uow.attempt)
        if uow.attempt == 0:
            from tillbook.unit import PremiseGone

            raise PremiseGone("a neighbour emptied the layer")
        return await real(uow, *args)

    monkeypatch.setattr(numbering, "take_before_plan", first_run_loses)
    r = await client.post("/sales", json=sale(shop), headers=shop.headers)
    assert r.status_code == 200, r.text
    assert runs == [0, 1]
    assert r.json()["invoice_number"] == "SAL-00001"
    monkeypatch.setattr(numbering, "take_before_plan", real)
    nxt = await client.post("/sales", json=sale(shop), headers=shop.headers)
    assert nxt.json()["invoice_number"] == "SAL-00002"
    await check_books(db, shop.company_id)
