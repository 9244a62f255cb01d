"""POST /payments with invoice allocations, GET /payments/user-invoices; books."""

from __future__ import annotations

import asyncio
import json
from decimal import Decimal

import pytest
from sqlalchemy import func, select

from tests.factories import by_id, make_shop
from tests.invariants import check_books, gl_balance
from tillbook.kit import xid
from tillbook.models import (
    JournalEntry,
    Order,
    OutboxEvent,
    Payment,
    PaymentAllocation,
    User,
)

D = Decimal


async def make_sale(
    client,
    shop,
    *,
    quantity=4,
    price="3.50",
    date="2026-11-20",
    user_id=None,
    key=None,
    product=None,
    **extra,
):
    """A credit sale of apple juice (4 x 3.50 = 14.00 by default)."""
    key = key or shop.key
    body = {
        "user_id": user_id or shop.customer_id,
        "order_date": date,
        "product_items": [
            {"xid": product or shop.products["apple"], "quantity": quantity, "unit_price": price}
        ],
    }
    body.update(extra)
    r = await client.post("/sales", json=body, headers=key.headers)
    assert r.status_code == 200, r.text
    return r.json()["order_id"]


async def make_purchase(client, shop, *, quantity=6, price="4.25", date="2026-11-20"):
    body = {
        "user_id": shop.supplier_id,
        "order_date": date,
        "product_items": [{"xid": shop.products["tea"], "quantity": quantity, "unit_price": price}],
    }
    r = await client.post("/purchases", json=body, headers=shop.headers)
    assert r.status_code == 200, r.text
    return r.json()["purchase_id"]


def pay(shop, amount, invoices=None, **extra):
    body = {
        "user_id": shop.customer_id,
        "payment_type": "in",
        "amount": amount,
        "payment_mode_id": "cash",
    }
    if invoices is not None:
        body["invoices"] = invoices
    body.update(extra)
    return body


async def order_row(db, order_id):
    async def run(s):
        o = await by_id(s, Order, order_id)
        return o.paid_amount, o.due_amount, o.payment_status

    return await db.read(run)


async def balance_of(db, user_id):
    return await db.read(lambda s: s.scalar(select(User.balance).where(User.id == user_id)))


async def counts(db, company_id):
    async def run(s):
        out = {}
        for name, model in (
            ("payments", Payment),
            ("allocations", PaymentAllocation),
            ("entries", JournalEntry),
            ("events", OutboxEvent),
        ):
            out[name] = await s.scalar(
                select(func.count()).select_from(model).where(model.company_id == company_id)
            )
        return out

    return await db.read(run)


async def event_types(db, company_id):
    async def run(s):
        rows = await s.scalars(
            select(OutboxEvent.type)
            .where(OutboxEvent.company_id == company_id)
            .order_by(OutboxEvent.id)
        )
        return list(rows)

    return await db.read(run)


async def test_partial_then_full_payment_of_a_credit_sale(client, shop, db):
    sale_id = await make_sale(client, shop)  # 14.00 on credit
    assert await balance_of(db, shop.customer_id) == D("14.00")

    r = await client.post(
        "/payments",
        headers=shop.headers,
        json=pay(shop, "5.00", [{"order_id": sale_id, "amount": 5}], reference="RCPT-1"),
    )
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["status"] == "success" and isinstance(out["payment_id"], int)
    assert out["payment_type"] == "in"
    assert out["amount"] == "5.00" and out["unallocated_amount"] == "0.00"
    assert out["allocations"] == [
        {
            "order_id": sale_id,
            "invoice_number": "SAL-00001",
            "amount": "5.00",
            "due_amount": "9.00",
            "payment_status": "partially_paid",
        }
    ]
    assert await order_row(db, sale_id) == (D("5.00"), D("9.00"), "partially_paid")
    assert await balance_of(db, shop.customer_id) == D("9.00")
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "11101")) == D("5.00")
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "11500")) == D("9.00")
    assert "order.paid" not in await event_types(db, shop.company_id)
    await check_books(db, shop.company_id)

    # the rest, by card, naming the sale by its xid
    r = await client.post(
        "/payments",
        headers=shop.headers,
        json=pay(
            shop,
            9,
            [{"order_id": xid.encode(sale_id), "amount": "9.00"}],
            payment_mode_id=shop.card_mode_id,
            date="2026-11-25",
        ),
    )
    assert r.status_code == 200, r.text
    assert r.json()["allocations"][0]["payment_status"] == "paid"
    assert r.json()["allocations"][0]["due_amount"] == "0.00"
    assert await order_row(db, sale_id) == (D("14.00"), D("0.00"), "paid")
    assert await balance_of(db, shop.customer_id) == D("0.00")
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "11105")) == D("9.00")
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "11500")) == D("0.00")
    types = await event_types(db, shop.company_id)
    assert types.count("payment.created") == 2 and types.count("order.paid") == 1
    paid_event = await db.read(
        lambda s: s.scalar(
            select(OutboxEvent.payload).where(
                OutboxEvent.company_id == shop.company_id, OutboxEvent.type == "order.paid"
            )
        )
    )
    data = json.loads(paid_event)["data"]
    assert data["id"] == sale_id and data["payment_status"] == "paid"
    assert data["due_amount"] == "0.00" and data["items"]
    pay_event = await db.read(
        lambda s: s.scalar(
            select(OutboxEvent.payload)
            .where(OutboxEvent.company_id == shop.company_id, OutboxEvent.type == "payment.created")
            .order_by(OutboxEvent.id.desc())
            .limit(1)
        )
    )
    assert json.loads(pay_event)["data"]["payment_id"] == r.json()["payment_id"]
    assert json.loads(pay_event)["data"]["date"] == "2026-11-25"
    detail = (await client.get(f"/sales/{sale_id}", headers=shop.headers)).json()["data"]
    assert detail["paid_amount"] == "14.00" and detail["payment_status"] == "paid"
    # later payments show on the invoice with the amount applied to it
    assert [(p["amount"], p["reference"]) for p in detail["payments"]] == [
        ("5.00", "RCPT-1"),
        ("9.00", None),
    ]
    assert data["payments"] and len(data["payments"]) == 2
    await check_books(db, shop.company_id)


async def test_payment_without_invoices_is_a_credit_on_the_party(client, shop, db):
    r = await client.post("/payments", headers=shop.headers, json=pay(shop, "20.00"))
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["unallocated_amount"] == "20.00" and out["allocations"] == []
    assert await balance_of(db, shop.customer_id) == D("-20.00")
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "11500")) == D("-20.00")
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "11101")) == D("20.00")
    payment = await db.read(lambda s: by_id(s, Payment, out["payment_id"]))
    assert payment.unallocated_amount == D("20.00") and payment.journal_entry_id
    assert payment.warehouse_id == shop.warehouse_id
    # a later sale on credit is owed on top of the credit
    await make_sale(client, shop)
    assert await balance_of(db, shop.customer_id) == D("-6.00")
    await check_books(db, shop.company_id)


async def test_payment_partly_allocated_leaves_a_credit(client, shop, db):
    sale_id = await make_sale(client, shop)  # 14.00
    r = await client.post(
        "/payments",
        headers=shop.headers,
        json=pay(shop, 20, [{"order_id": str(sale_id), "amount": 14}]),
    )
    assert r.status_code == 200, r.text
    assert r.json()["unallocated_amount"] == "6.00"
    assert await order_row(db, sale_id) == (D("14.00"), D("0.00"), "paid")
    assert await balance_of(db, shop.customer_id) == D("-6.00")
    assert "order.paid" in await event_types(db, shop.company_id)
    await check_books(db, shop.company_id)


async def test_supplier_payment_out_against_a_purchase(client, shop, db):
    purchase_id = await make_purchase(client, shop)  # 25.50 payable
    body = {
        "user_id": shop.supplier_id,
        "payment_type": "out",
        "amount": "10.00",
        "payment_mode_id": shop.cash_mode_id,
        "notes": "first instalment",
        "invoices": [{"order_id": purchase_id, "amount": 10}],
    }
    r = await client.post("/payments", headers=shop.headers, json=body)
    assert r.status_code == 200, r.text
    assert r.json()["payment_type"] == "out"
    assert r.json()["allocations"][0]["due_amount"] == "15.50"
    assert await order_row(db, purchase_id) == (D("10.00"), D("15.50"), "partially_paid")
    assert await balance_of(db, shop.supplier_id) == D("15.50")
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "21100")) == D("-15.50")
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "11101")) == D("-10.00")
    # paying the rest of a purchase sends no order.paid (that event is about sales)
    body.update(amount="15.50", invoices=[{"order_id": purchase_id, "amount": "15.50"}])
    r = await client.post("/payments", headers=shop.headers, json=body)
    assert r.status_code == 200, r.text
    assert await order_row(db, purchase_id) == (D("25.50"), D("0.00"), "paid")
    assert "order.paid" not in await event_types(db, shop.company_id)
    await check_books(db, shop.company_id)


async def test_refused_allocations_record_nothing(client, shop, db):
    sale_id = await make_sale(client, shop)  # 14.00 to the customer
    walk_in_sale = await make_sale(client, shop, user_id=shop.walk_in_id)
    other_wh_sale = await make_sale(
        client, shop, key=shop.other_key, quantity=1, price=4, product=shop.other_products["coffee"]
    )
    purchase_id = await make_purchase(client, shop)
    before = await counts(db, shop.company_id)
    cases = [
        (
            pay(shop, 20, [{"order_id": sale_id, "amount": "14.01"}]),
            "invoices.0.amount",
            ["14.01", "14.00"],
        ),
        (pay(shop, 10, [{"order_id": sale_id, "amount": 12}]), "invoices", ["12", "10"]),
        (
            pay(shop, 5, [{"order_id": walk_in_sale, "amount": 5}]),
            "invoices.0.order_id",
            ["not an invoice of this customer"],
        ),
        (
            pay(shop, 5, [{"order_id": other_wh_sale, "amount": 1}]),
            "invoices.0.order_id",
            [f"unknown sale {other_wh_sale}"],
        ),
        (
            pay(
                shop,
                5,
                [
                    {"order_id": sale_id, "amount": 2},
                    {"order_id": xid.encode(sale_id), "amount": 2},
                ],
            ),
            "invoices.1.order_id",
            ["already listed as invoices.0"],
        ),
        (
            pay(shop, 5, [{"order_id": purchase_id, "amount": 2}]),
            "invoices.0.order_id",
            ["unknown sale"],
        ),
        (
            pay(shop, 5, [{"order_id": "no-such-order", "amount": 2}]),
            "invoices.0.order_id",
            ["unknown sale 'no-such-order'"],
        ),
        (
            pay(shop, 5, [{"order_id": 10**12, "amount": 2}]),
            "invoices.0.order_id",
            ["unknown sale"],
        ),
        (
            {
                **pay(shop, 5, [{"order_id": sale_id, "amount": 2}]),
                "payment_type": "out",
                "user_id": shop.supplier_id,
            },
            "invoices.0.order_id",
            ["unknown purchase"],
        ),
        ({**pay(shop, 5), "user_id": shop.supplier_id}, "user_id", ["unknown customer"]),
        ({**pay(shop, 5), "payment_type": "out"}, "user_id", ["unknown supplier"]),
    ]
    for body, field, words in cases:
        r = await client.post("/payments", headers=shop.headers, json=body)
        assert r.status_code == 422, (body, r.text)
        out = r.json()
        assert out["status"] == "error" and field in out["errors"], (body, out)
        text = " ".join(out["errors"][field])
        for word in words:
            assert word in text, (body, text)
    # several problems are reported at once
    r = await client.post(
        "/payments",
        headers=shop.headers,
        json={**pay(shop, 1, [{"order_id": sale_id, "amount": 99}]), "payment_mode_id": "bitcoin"},
    )
    assert set(r.json()["errors"]) == {"payment_mode_id", "invoices.0.amount", "invoices"}
    assert await counts(db, shop.company_id) == before
    assert await order_row(db, sale_id) == (D("0.00"), D("14.00"), "unpaid")
    assert await balance_of(db, shop.customer_id) == D("18.00")  # 14.00 + 4.00 elsewhere
    await check_books(db, shop.company_id)


async def test_user_invoices_oldest_first_only_outstanding(client, shop, db):
    late = await make_sale(client, shop, date="2026-11-22")
    early = await make_sale(client, shop, date="2026-11-01", quantity=2)  # 7.00
    settled = await make_sale(
        client,
        shop,
        date="2026-10-01",
        quantity=1,
        all_payments=[{"amount": "3.50", "payment_mode_id": "cash"}],
    )
    same_day = await make_sale(client, shop, date="2026-11-01", quantity=1)  # 3.50
    await make_sale(
        client, shop, key=shop.other_key, quantity=1, price=4, product=shop.other_products["coffee"]
    )  # the other warehouse's
    await make_sale(client, shop, user_id=shop.walk_in_id, quantity=1)  # another customer's
    r = await client.post(
        "/payments", headers=shop.headers, json=pay(shop, 2, [{"order_id": early, "amount": 2}])
    )
    assert r.status_code == 200, r.text

    r = await client.get(
        "/payments/user-invoices", params={"user_id": shop.customer_id}, headers=shop.headers
    )
    assert r.status_code == 200, r.text
    data = r.json()["data"]
    assert data["user"] == {
        "id": shop.customer_id,
        "name": "Ada Customer",
        "user_type": "customer",
        "balance": "22.50",  # this warehouse's: the 4.00 owed to the other one is not here
    }
    invoices = data["invoices"]
    assert [i["order_id"] for i in invoices] == [early, same_day, late]
    assert settled not in [i["order_id"] for i in invoices]
    first = invoices[0]
    assert first == {
        "order_id": early,
        "xid": xid.encode(early),
        "invoice_number": first["invoice_number"],
        "order_type": "sales",
        "order_date": "2026-11-01",
        "total": "7.00",
        "paid_amount": "2.00",
        "due_amount": "5.00",
        "payment_status": "partially_paid",
    }
    assert data["total_due"] == "22.50"  # 5.00 + 3.50 + 14.00; 4.00 elsewhere

    # by xid; a supplier's purchases
    await make_purchase(client, shop)
    r = await client.get(
        "/payments/user-invoices",
        params={"user_id": xid.encode(shop.supplier_id)},
        headers=shop.headers,
    )
    data = r.json()["data"]
    assert data["user"]["user_type"] == "supplier" and data["user"]["balance"] == "25.50"
    assert [i["order_type"] for i in data["invoices"]] == ["purchases"]
    assert data["total_due"] == "25.50"

    # nothing outstanding in the other warehouse for the supplier
    r = await client.get(
        "/payments/user-invoices",
        params={"user_id": shop.supplier_id},
        headers=shop.other_key.headers,
    )
    assert r.json()["data"]["invoices"] == [] and r.json()["data"]["total_due"] == "0.00"

    r = await client.get("/payments/user-invoices", headers=shop.headers)
    assert r.status_code == 422 and "user_id" in r.json()["errors"]
    for unknown in ("999999999", "nonsense", "0", str(shop.cash_mode_id)):
        r = await client.get(
            "/payments/user-invoices", params={"user_id": unknown}, headers=shop.headers
        )
        assert r.status_code == 404, unknown
        assert r.json() == {"status": "error", "message": "party not found"}
    other = await make_shop(db)
    r = await client.get(
        "/payments/user-invoices", params={"user_id": other.customer_id}, headers=shop.headers
    )
    assert r.status_code == 404 and r.json()["message"] == "party not found"
    await check_books(db, shop.company_id)


async def test_idempotent_replay_records_one_payment(client, shop, db):
    sale_id = await make_sale(client, shop)
    body = pay(shop, 4, [{"order_id": sale_id, "amount": 4}])
    headers = {**shop.headers, "Idempotency-Key": "pay-0001"}
    first = await client.post("/payments", headers=headers, json=body)
    assert first.status_code == 200, first.text
    assert "Idempotent-Replayed" not in first.headers
    again = await client.post("/payments", headers=headers, json=body)
    assert again.status_code == 200
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    n = await db.read(
        lambda s: s.scalar(
            select(func.count()).select_from(Payment).where(Payment.company_id == shop.company_id)
        )
    )
    assert n == 1
    assert await order_row(db, sale_id) == (D("4.00"), D("10.00"), "partially_paid")
    # the same token with another body is refused
    other = await client.post("/payments", headers=headers, json=pay(shop, 5))
    assert other.status_code == 422
    # a body unique_id works the same way
    body2 = pay(shop, 1, unique_id="pay-body-1")
    a = await client.post("/payments", headers=shop.headers, json=body2)
    b = await client.post("/payments", headers=shop.headers, json=body2)
    assert a.json() == b.json() and b.headers["Idempotent-Replayed"] == "true"
    assert (await counts(db, shop.company_id))["payments"] == 2
    await check_books(db, shop.company_id)


def _bad_payment_bodies(shop):
    base = pay(shop, 5)

    def without(name):
        return {k: v for k, v in base.items() if k != name}

    return [
        (without("user_id"), "user_id"),
        (without("payment_type"), "payment_type"),
        (without("amount"), "amount"),
        (without("payment_mode_id"), "payment_mode_id"),
        ({**base, "user_id": 1.5}, "user_id"),
        ({**base, "user_id": None}, "user_id"),
        ({**base, "user_id": [1]}, "user_id"),
        ({**base, "payment_type": "sideways"}, "payment_type"),
        ({**base, "payment_type": 1}, "payment_type"),
        ({**base, "amount": 0}, "amount"),
        ({**base, "amount": -5}, "amount"),
        ({**base, "amount": "1.005"}, "amount"),
        ({**base, "amount": 1.005}, "amount"),
        ({**base, "amount": "lots"}, "amount"),
        ({**base, "payment_mode_id": "bitcoin"}, "payment_mode_id"),
        ({**base, "payment_mode_id": 10**12}, "payment_mode_id"),
        ({**base, "date": "yesterday"}, "date"),
        ({**base, "date": "2026-02-30"}, "date"),
        ({**base, "date": 20261120}, "date"),
        ({**base, "invoices": "all"}, "invoices"),
        ({**base, "invoices": [{"amount": 1}]}, "invoices.0.order_id"),
        ({**base, "invoices": [{"order_id": 1}]}, "invoices.0.amount"),
        ({**base, "invoices": [{"order_id": 1, "amount": 0}]}, "invoices.0.amount"),
        ({**base, "invoices": [{"order_id": 1, "amount": "0.001"}]}, "invoices.0.amount"),
        ({**base, "invoices": [{"order_id": 1.5, "amount": 1}]}, "invoices.0.order_id"),
        ({**base, "reference": "x" * 201}, "reference"),
    ]


async def test_bad_payment_bodies(client, shop, db):
    await make_sale(client, shop)
    before = await counts(db, shop.company_id)
    for body, field in _bad_payment_bodies(shop):
        r = await client.post("/payments", headers=shop.headers, json=body)
        assert r.status_code == 422, (body, r.text)
        out = r.json()
        assert out["status"] == "error" and field in out["errors"], (body, out)
        if field in body and not isinstance(body[field], list | dict) and body[field] is not None:
            text = " ".join(out["errors"][field])
            assert str(body[field])[:20] in text, (body, text)
    assert await counts(db, shop.company_id) == before
    await check_books(db, shop.company_id)


@pytest.mark.parametrize("raw", [b"", b"{", b"[]"])
async def test_malformed_payment_body(client, shop, raw):
    r = await client.post(
        "/payments", headers={**shop.headers, "Content-Type": "application/json"}, content=raw
    )
    assert r.status_code in (400, 422) and r.json()["status"] == "error"


async def test_concurrent_payments_never_overpay_an_invoice(client, shop, db):
    sale_id = await make_sale(client, shop)  # 14.00
    body = pay(shop, 10, [{"order_id": sale_id, "amount": 10}])
    results = await asyncio.gather(
        *(client.post("/payments", headers=shop.headers, json=body) for _ in range(3))
    )
    codes = sorted(r.status_code for r in results)
    assert codes == [200, 422, 422], [r.text for r in results]
    refused = next(r for r in results if r.status_code == 422)
    assert "4.00" in " ".join(refused.json()["errors"]["invoices.0.amount"])
    assert await order_row(db, sale_id) == (D("10.00"), D("4.00"), "partially_paid")
    await check_books(db, shop.company_id)


# --- warehouse isolation of balances and invoices ---------------------------------------


async def user_invoices(client, key, user_id):
    r = await client.get(
        "/payments/user-invoices", params={"user_id": user_id}, headers=key.headers
    )
    assert r.status_code == 200, r.text
    return r.json()["data"]


async def test_balances_and_invoices_of_the_keys_warehouse_only(client, shop, db):
    a, b = shop.key, shop.other_key
    a_sale = await make_sale(client, shop)  # 14.00 on credit in A
    coffee = shop.other_products["coffee"]
    b_sale = await make_sale(
        client, shop, key=b, quantity=1, price=4, product=coffee, invoice_number="HB-0042"
    )
    seen_a = await user_invoices(client, a, shop.customer_id)
    assert seen_a["user"]["balance"] == "14.00"
    assert [i["order_id"] for i in seen_a["invoices"]] == [a_sale]
    assert seen_a["total_due"] == "14.00"
    seen_b = await user_invoices(client, b, shop.customer_id)
    assert seen_b["user"]["balance"] == "4.00"
    assert [i["order_id"] for i in seen_b["invoices"]] == [b_sale]

    # The other warehouse's invoice is no allocation target, by id, xid or number.
    before = await counts(db, shop.company_id)
    for ref in (b_sale, str(b_sale), xid.encode(b_sale), "HB-0042"):
        r = await client.post(
            "/payments", headers=a.headers, json=pay(shop, 1, [{"order_id": ref, "amount": 1}])
        )
        assert r.status_code == 422, (ref, r.text)
        assert r.json()["errors"] == {"invoices.0.order_id": [f"unknown sale {ref!r}"]}
    assert await counts(db, shop.company_id) == before

    # A payment in B settles B's invoice and moves B's balance only.
    r = await client.post(
        "/payments", headers=b.headers, json=pay(shop, 4, [{"order_id": "HB-0042", "amount": 4}])
    )
    assert r.status_code == 200, r.text
    assert r.json()["allocations"][0]["order_id"] == b_sale
    assert (await user_invoices(client, b, shop.customer_id))["user"]["balance"] == "0.00"
    assert (await user_invoices(client, b, shop.customer_id))["invoices"] == []
    assert (await user_invoices(client, a, shop.customer_id))["user"]["balance"] == "14.00"

    # Suppliers alike: a purchase on credit in B is not A's payable.
    body = {
        "user_id": shop.supplier_id,
        "order_date": "2026-11-20",
        "product_items": [
            {"xid": shop.other_products["coffee"], "quantity": 2, "unit_price": "2.50"}
        ],
    }
    r = await client.post("/purchases", json=body, headers=b.headers)
    assert r.status_code == 200, r.text
    supplier_a = await user_invoices(client, a, shop.supplier_id)
    assert supplier_a["user"]["balance"] == "0.00" and supplier_a["invoices"] == []
    supplier_b = await user_invoices(client, b, shop.supplier_id)
    assert supplier_b["user"]["balance"] == "5.00" and len(supplier_b["invoices"]) == 1

    assert await balance_of(db, shop.customer_id) == D("14.00")  # company-wide: A + B
    await check_books(db, shop.company_id)


# --- invoices named by invoice number ------------------------------------------------


async def invoice_number_of(client, shop, order_id, path="/sales"):
    r = await client.get(f"{path}/{order_id}", headers=shop.headers)
    assert r.status_code == 200, r.text
    return r.json()["data"]["invoice_number"]


async def test_allocations_name_invoices_by_number(client, shop, db):
    first = await make_sale(client, shop)  # 14.00
    second = await make_sale(client, shop, quantity=2)  # 7.00
    number = await invoice_number_of(client, shop, second)
    assert number == "SAL-00002"
    invoices = [{"order_id": number, "amount": 7}, {"order_id": xid.encode(first), "amount": 2}]
    r = await client.post("/payments", headers=shop.headers, json=pay(shop, 9, invoices))
    assert r.status_code == 200, r.text
    allocations = r.json()["allocations"]
    assert [(x["order_id"], x["invoice_number"], x["payment_status"]) for x in allocations] == [
        (second, "SAL-00002", "paid"),
        (first, "SAL-00001", "partially_paid"),
    ]
    assert await order_row(db, second) == (D("7.00"), D("0.00"), "paid")

    # The same invoice named twice, by id and by number, is refused.
    before = await counts(db, shop.company_id)
    invoices = [{"order_id": first, "amount": 1}, {"order_id": "SAL-00001", "amount": 1}]
    r = await client.post("/payments", headers=shop.headers, json=pay(shop, 2, invoices))
    assert r.status_code == 422, r.text
    assert r.json()["errors"] == {
        "invoices.1.order_id": ["order 'SAL-00001' is already listed as invoices.0"]
    }
    # Numbers that name nothing of this type here.
    for ref in ("SAL-09999", "sal-00001", "PUR-00001", " SAL-00001x"):
        r = await client.post(
            "/payments", headers=shop.headers, json=pay(shop, 1, [{"order_id": ref, "amount": 1}])
        )
        assert r.status_code == 422 and "invoices.0.order_id" in r.json()["errors"], ref
    assert await counts(db, shop.company_id) == before

    # A purchase by its number, for a payment out.
    purchase = await make_purchase(client, shop)  # 25.50
    number = await invoice_number_of(client, shop, purchase, "/purchases")
    body = {
        **pay(shop, 5, [{"order_id": number, "amount": 5}]),
        "payment_type": "out",
        "user_id": shop.supplier_id,
    }
    r = await client.post("/payments", headers=shop.headers, json=body)
    assert r.status_code == 200, r.text
    assert r.json()["allocations"][0]["order_id"] == purchase
    await check_books(db, shop.company_id)


async def test_terminal_callback_names_the_sale_by_number(client, shop, db):
    from tillbook.kit import crypto
    from tillbook.payments import terminal_callbacks as terminals

    async def add(s):
        provider, secret = await terminals.add_provider(s, shop.warehouse_id, "acme", "card")
        return terminals.callback_path(provider), secret

    path, secret = await db.write(add)
    sale_id = await make_sale(client, shop, quantity=2)  # 7.00
    coffee = shop.other_products["coffee"]
    await make_sale(
        client,
        shop,
        key=shop.other_key,
        quantity=1,
        price=4,
        product=coffee,
        invoice_number="HB-0042",
    )
    number = await invoice_number_of(client, shop, sale_id)

    async def send(payload):
        raw = json.dumps(payload).encode()
        return await client.post(
            "http://testserver" + path,
            content=raw,
            headers={
                "Content-Type": "application/json",
                "X-Service-Signature": crypto.hmac_hex(secret, raw),
            },
        )

    # Another warehouse's sale is not this terminal's, by number or by id.
    for field, ref in (("order_id", "HB-0042"), ("invoice_number", "HB-0042")):
        payload = {field: ref, "status": "confirmed", "amount": "4.00", "reference": "x-1"}
        r = await send(payload)
        assert r.status_code == 422, r.text
        assert field in r.json()["errors"]
    r = await send(
        {"order_id": number, "status": "confirmed", "amount": "7.00", "reference": "acq-1"}
    )
    assert r.status_code == 200, r.text
    assert r.json()["order_id"] == sale_id and r.json()["payment_status"] == "paid"
    assert await order_row(db, sale_id) == (D("7.00"), D("0.00"), "paid")
    await check_books(db, shop.company_id)
