"""Sales returns and purchase returns: stock, cost, contra-revenue, party balances."""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy import select

from tests.invariants import check_books, gl_balance
from tillbook.models import Order, Product, User

D = Decimal


async def stock(db, pid):
    return await db.read(lambda s: s.scalar(select(Product.current_stock).where(Product.id == pid)))


async def gl(db, shop, code):
    return await db.read(lambda s: gl_balance(s, shop.company_id, code))


async def credit_sale(client, shop, qty=12):
    body = {
        "user_id": shop.customer_id,
        "order_date": "2026-11-20",
        "product_items": [{"xid": shop.xid("apple"), "quantity": qty, "unit_price": 3.5}],
    }
    r = await client.post("/sales", json=body, headers=shop.headers)
    assert r.status_code == 200, r.text
    return r.json()


def ret(shop, qty, invoice=None, **extra):
    body = {
        "user_id": shop.customer_id,
        "order_date": "2026-11-21",
        "items": [{"product_id": shop.xid("apple"), "quantity": qty, "unit_price": 3.5}],
    }
    if invoice:
        body["invoice_number"] = invoice
    body.update(extra)
    return body


async def test_return_against_invoice_at_original_cost(client, shop, db):
    sale = await credit_sale(client, shop)  # 12 apples: 10 @ 1.50 + 2 @ 2.00 = 19.00
    r = await client.post(
        "/sales-returns", json=ret(shop, 6, sale["invoice_number"]), headers=shop.headers
    )
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["invoice_number"] == "SRET-00001" and isinstance(out["return_id"], int)
    assert await stock(db, shop.products["apple"]) == D("14")
    assert await gl(db, shop, "41200") == D("21.00")
    # average original cost 19/12 per unit: 6 units -> 9.50 back into inventory
    assert await gl(db, shop, "51100") == D("9.50")
    original = await db.read(lambda s: s.get(Order, sale["order_id"]))
    assert original.due_amount == D("21.00") and original.credited_amount == D("21.00")
    assert original.payment_status == "unpaid"  # nothing paid on what remains
    balance = await db.read(
        lambda s: s.scalar(select(User.balance).where(User.id == shop.customer_id))
    )
    assert balance == D("21.00")
    # more than remains returnable on the invoice is refused
    too_many = await client.post(
        "/sales-returns", json=ret(shop, 7, sale["invoice_number"]), headers=shop.headers
    )
    assert too_many.status_code == 422 and "items.0.quantity" in too_many.json()["errors"]
    listing = (await client.get("/sales-returns", headers=shop.headers)).json()["data"]
    assert listing["total"] == 1
    row = listing["data"][0]
    assert row["order_type"] == "sales-returns" and row["total"] == "21.00"
    await check_books(db, shop.company_id)


async def test_return_with_cash_refund_and_no_invoice(client, shop, db):
    body = ret(shop, 2, all_payments=[{"amount": 7, "payment_mode_id": "cash"}])
    r = await client.post("/sales-returns", json=body, headers=shop.headers)
    assert r.status_code == 200, r.text
    assert await gl(db, shop, "11101") == D("-7.00")
    # unknown original: valued at purchase_price 2.00
    assert await gl(db, shop, "51100") == D("-4.00")
    await check_books(db, shop.company_id)


async def test_purchase_return_fifo_and_difference(client, shop, db):
    body = {
        "user_id": shop.supplier_id,
        "order_date": "2026-11-21",
        "items": [{"product_id": shop.products["apple"], "quantity": 12, "unit_price": "1.80"}],
    }
    r = await client.post("/purchase-returns", json=body, headers=shop.headers)
    assert r.status_code == 200, r.text
    assert r.json()["invoice_number"] == "PRET-00001"
    assert await stock(db, shop.products["apple"]) == D("8")
    # credit 21.60 against FIFO cost 19.00: 2.60 to 51200 (credit)
    assert await gl(db, shop, "21100") == D("21.60")
    assert await gl(db, shop, "51200") == D("-2.60")
    too_many = {
        **body,
        "items": [{"product_id": shop.products["apple"], "quantity": 9, "unit_price": 1}],
    }
    r = await client.post("/purchase-returns", json=too_many, headers=shop.headers)
    assert r.status_code == 422 and "available 8" in str(r.json()["errors"])
    listing = (await client.get("/purchase-returns", headers=shop.headers)).json()["data"]
    assert listing["total"] == 1
    await check_books(db, shop.company_id)


async def test_return_bad_input_changes_nothing(client, shop, db):
    sale = await credit_sale(client, shop, qty=1)
    cases = [
        ({"items": []}, "items"),
        (
            {"items": [{"product_id": shop.xid("apple"), "quantity": 0.001, "unit_price": 1}]},
            "items.0.quantity",
        ),
        (
            {
                "items": [
                    {"product_id": shop.other_products["coffee"], "quantity": 1, "unit_price": 1}
                ]
            },
            "items.0.product_id",
        ),
        ({"user_id": shop.supplier_id}, "user_id"),
        ({"invoice_number": "SAL-99999"}, "invoice_number"),
        (
            {
                "items": [{"product_id": shop.xid("water"), "quantity": 1, "unit_price": 1}],
                "invoice_number": sale["invoice_number"],
            },
            "items.0.product_id",
        ),
        ({"all_payments": [{"amount": 99, "payment_mode_id": "cash"}]}, "all_payments"),
    ]
    for patch, field in cases:
        body = {**ret(shop, 1), **patch}
        r = await client.post("/sales-returns", json=body, headers=shop.headers)
        assert r.status_code == 422, (patch, r.text)
        assert field in r.json()["errors"], (patch, r.json())
    assert await stock(db, shop.products["apple"]) == D("19")
    ok = await client.post("/sales-returns", json=ret(shop, 1), headers=shop.headers)
    assert ok.json()["invoice_number"] == "SRET-00001"
    await check_books(db, shop.company_id)


async def test_payment_after_return_credit_settles_the_invoice(client, shop, db):
    sale = await credit_sale(client, shop)  # 42.00 due
    r = await client.post(
        "/sales-returns", json=ret(shop, 6, sale["invoice_number"]), headers=shop.headers
    )
    assert r.status_code == 200, r.text
    pay = {
        "user_id": shop.customer_id,
        "payment_type": "in",
        "amount": 21,
        "payment_mode_id": "cash",
        "invoices": [{"order_id": sale["order_id"], "amount": 21}],
    }
    r = await client.post("/payments", json=pay, headers=shop.headers)
    assert r.status_code == 200, r.text
    assert r.json()["allocations"][0]["payment_status"] == "paid"
    original = await db.read(lambda s: s.get(Order, sale["order_id"]))
    assert (original.due_amount, original.payment_status) == (D("0.00"), "paid")
    assert await db.read(
        lambda s: s.scalar(select(User.balance).where(User.id == shop.customer_id))
    ) == D("0.00")
    await check_books(db, shop.company_id)
