"""Terminal provider callbacks: signatures, confirmation, failure, duplicates."""

from __future__ import annotations

import json
from decimal import Decimal

from sqlalchemy import func, select

from tests.factories import by_id
from tests.invariants import check_books, gl_balance
from tillbook.kit import crypto
from tillbook.models import Order, OutboxEvent, Payment, TerminalCallback
from tillbook.payments import terminal_callbacks as terminals

D = Decimal
BASE = "http://testserver"


async def provider_for(db, shop, name="acme-pay"):
    async def add(s):
        provider, secret = await terminals.add_provider(s, shop.warehouse_id, name, "card")
        return terminals.callback_path(provider), secret

    return await db.write(add)


async def credit_sale(client, shop):
    body = {
        "user_id": shop.customer_id,
        "order_date": "2026-11-20",
        "product_items": [{"xid": shop.xid("apple"), "quantity": 2, "unit_price": 3.5}],
    }
    r = await client.post("/sales", json=body, headers=shop.headers)
    assert r.status_code == 200, r.text
    return r.json()


async def send(client, path, secret, payload, signature=None):
    raw = json.dumps(payload).encode()
    sig = signature if signature is not None else crypto.hmac_hex(secret, raw)
    return await client.post(
        BASE + path,
        content=raw,
        headers={"Content-Type": "application/json", "X-Service-Signature": sig},
    )


async def test_confirmed_callback_pays_the_order_once(client, shop, db):
    path, secret = await provider_for(db, shop)
    sale = await credit_sale(client, shop)
    payload = {
        "invoice_number": sale["invoice_number"],
        "status": "confirmed",
        "amount": "7.00",
        "reference": "acq-991",
    }
    r = await send(client, path, secret, payload)
    assert r.status_code == 200, r.text
    assert r.json()["payment_status"] == "paid"
    order = await db.read(lambda s: by_id(s, Order, sale["order_id"]))
    assert (order.payment_status, order.due_amount) == ("paid", D("0.00"))
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "11105")) == D("7.00")
    again = await send(client, path, secret, payload)
    assert again.status_code == 200 and again.json()["duplicate"] is True
    payments = await db.read(
        lambda s: s.scalar(
            select(func.count()).select_from(Payment).where(Payment.company_id == shop.company_id)
        )
    )
    assert payments == 1
    types = await db.read(
        lambda s: s.scalars(
            select(OutboxEvent.type).where(OutboxEvent.company_id == shop.company_id)
        )
    )
    assert list(types).count("order.paid") == 1
    await check_books(db, shop.company_id)


async def test_failed_callback_records_attempt_only(client, shop, db):
    path, secret = await provider_for(db, shop)
    sale = await credit_sale(client, shop)
    r = await send(
        client,
        path,
        secret,
        {"order_id": sale["order_id"], "status": "failed", "amount": 7, "reference": "acq-1"},
    )
    assert r.status_code == 200, r.text
    order = await db.read(lambda s: by_id(s, Order, sale["order_id"]))
    assert order.payment_status == "unpaid"
    n = await db.read(lambda s: s.scalar(select(func.count()).select_from(TerminalCallback)))
    assert n >= 1
    await check_books(db, shop.company_id)


async def test_bad_signature_wrong_amount_unknown_order(client, shop, db):
    path, secret = await provider_for(db, shop)
    sale = await credit_sale(client, shop)
    good = {
        "order_id": sale["order_id"],
        "status": "confirmed",
        "amount": "7.00",
        "reference": "r-1",
    }
    assert (await send(client, path, secret, good, signature="0" * 64)).status_code == 401
    assert (await send(client, path, "wrong-secret", good)).status_code == 401
    r = await send(client, path, secret, {**good, "amount": "6.99"})
    assert r.status_code == 422 and "due balance 7.00" in r.json()["errors"]["amount"][0]
    r = await send(client, path, secret, {**good, "order_id": 999999999})
    assert r.status_code == 422 and "order_id" in r.json()["errors"]
    r = await send(client, path, secret, {"status": "confirmed", "amount": 1, "reference": "x"})
    assert r.status_code == 422
    r = await client.post(
        BASE + "/api/v1/public/terminal-callbacks/nope",
        content=b"{}",
        headers={"X-Service-Signature": "00"},
    )
    assert r.status_code == 404 and r.json()["status"] == "error"
    # another warehouse's sale is unknown to this terminal
    other = {
        "user_id": shop.customer_id,
        "order_date": "2026-11-20",
        "product_items": [{"xid": shop.other_products["coffee"], "quantity": 1, "unit_price": 4}],
    }
    o = await client.post("/sales", json=other, headers=shop.other_key.headers)
    r = await send(
        client, path, secret, {**good, "order_id": o.json()["order_id"], "amount": "4.00"}
    )
    assert r.status_code == 422
    order = await db.read(lambda s: by_id(s, Order, sale["order_id"]))
    assert order.payment_status == "unpaid"
    await check_books(db, shop.company_id)


async def test_a_repeated_reference_answers_the_first_answer_again(client, shop, db):
    """The answer's fields in their order (status first, the payment before its
    status); a repeat is the same answer with ``duplicate``, also when its outcome
    was kept with the envelope's ``status``, as before the answer was typed."""
    path, secret = await provider_for(db, shop)
    sale = await credit_sale(client, shop)
    payload = {
        "order_id": sale["order_id"],
        "status": "confirmed",
        "amount": "7.00",
        "reference": "acq-kept",
    }
    first = await send(client, path, secret, payload)
    assert first.status_code == 200, first.text
    assert list(first.json()) == [
        "status",
        "order_id",
        "invoice_number",
        "callback_status",
        "reference",
        "payment_id",
        "payment_status",
    ]
    expected = [*first.json().items(), ("duplicate", True)]
    again = await send(client, path, secret, payload)
    assert list(again.json().items()) == expected

    async def keep_as_before(s):
        row = await s.scalar(
            select(TerminalCallback).where(
                TerminalCallback.company_id == shop.company_id,
                TerminalCallback.reference == "acq-kept",
            )
        )
        kept = json.loads(row.outcome)
        assert "status" not in kept
        row.outcome = json.dumps({"status": "success", **kept})

    await db.write(keep_as_before)
    old_form = await send(client, path, secret, payload)
    assert list(old_form.json().items()) == expected
