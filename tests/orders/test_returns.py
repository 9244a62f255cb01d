"""Sales returns and purchase returns: stock, cost, contra-revenue, party balances."""

from __future__ import annotations

import json
from collections import defaultdict
from decimal import Decimal

from sqlalchemy import func, select

from tests.factories import by_id
from tests.invariants import check_books, gl_balance
from tillbook.models import JournalEntry, Listing, Order, OrderItem, OutboxEvent, Product, User

D = Decimal


async def stock(db, pid):
    return await db.read(
        lambda s: s.scalar(select(Listing.current_stock).where(Listing.product_id == pid))
    )


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
    original = await db.read(lambda s: by_id(s, Order, sale["order_id"]))
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
    original = await db.read(lambda s: by_id(s, Order, sale["order_id"]))
    assert (original.due_amount, original.payment_status) == (D("0.00"), "paid")
    assert await db.read(
        lambda s: s.scalar(select(User.balance).where(User.id == shop.customer_id))
    ) == D("0.00")
    await check_books(db, shop.company_id)


# --------------------------------------------------------------- refunds and tax

ADMIN = "http://testserver/api/v1/admin"


async def trial_balance(client, db, shop) -> dict[str, Decimal]:
    """code -> debit − credit, as the back office's trial balance reports it."""
    email = await db.read(
        lambda s: s.scalar(
            select(User.email).where(User.company_id == shop.company_id, User.role == "owner")
        )
    )
    r = await client.post(
        f"{ADMIN}/login", json={"email": email, "password": "correct horse battery"}
    )
    assert r.status_code == 200, r.text
    headers = {"Authorization": f"Bearer {r.json()['token']}"}
    r = await client.get(f"{ADMIN}/reports/trial-balance", headers=headers)
    assert r.status_code == 200, r.text
    tb = r.json()["data"]
    assert tb["total_debit"] == tb["total_credit"]
    return defaultdict(lambda: D("0.00"), {a["code"]: D(a["balance"]) for a in tb["accounts"]})


async def sell(client, shop, lines, **extra):
    """A sale of (product, quantity, unit_price, tax) lines; tax None, "excl" or "incl"."""
    items = []
    for product, quantity, price, tax, *rest in lines:
        item = {"xid": shop.xid(product), "quantity": quantity, "unit_price": price}
        if tax is not None:
            item["tax_id"] = shop.tax10_id if tax == "excl" else shop.tax_incl_id
        if rest:
            item.update(rest[0])
        items.append(item)
    body = {"user_id": shop.customer_id, "order_date": "2026-11-20", "product_items": items}
    body.update(extra)
    r = await client.post("/sales", json=body, headers=shop.headers)
    assert r.status_code == 200, r.text
    return r.json()


def give_back(shop, invoice, *items, **extra):
    """A sales return of (product, quantity, unit_price) items."""
    body = {
        "user_id": shop.customer_id,
        "order_date": "2026-11-21",
        "items": [
            {"product_id": shop.xid(product), "quantity": quantity, "unit_price": price}
            for product, quantity, price in items
        ],
    }
    if invoice is not None:
        body["invoice_number"] = invoice
    body.update(extra)
    return body


async def post_return(client, shop, body, status=200):
    r = await client.post("/sales-returns", json=body, headers=shop.headers)
    assert r.status_code == status, r.text
    return r.json()


async def return_detail(client, shop, return_id):
    r = await client.get(f"/sales-returns/{return_id}", headers=shop.headers)
    assert r.status_code == 200, r.text
    return r.json()["data"]


async def recorded(db, shop):
    """What a refused return must leave untouched."""

    async def read(session):
        returns = await session.scalar(
            select(func.count())
            .select_from(Order)
            .where(Order.company_id == shop.company_id, Order.order_type == "sales-returns")
        )
        entries = await session.scalar(
            select(func.count())
            .select_from(JournalEntry)
            .where(JournalEntry.company_id == shop.company_id)
        )
        stock = (
            await session.execute(
                select(Listing.product_id, Listing.current_stock)
                .where(Listing.company_id == shop.company_id)
                .order_by(Listing.product_id)
            )
        ).all()
        returned = (
            await session.execute(
                select(OrderItem.id, OrderItem.returned_quantity)
                .where(OrderItem.company_id == shop.company_id)
                .order_by(OrderItem.id)
            )
        ).all()
        return returns, entries, [tuple(s) for s in stock], [tuple(r) for r in returned]

    return await db.read(read)


async def test_full_return_with_exclusive_tax_gives_the_tax_back(client, shop, db):
    sale = await sell(client, shop, [("apple", 3, "3.50", "excl")])  # 10.50 + 1.05 tax
    assert sale["total_amount"] == 11.55
    before = await trial_balance(client, db, shop)
    assert before["21200"] == D("-1.05") and before["11500"] == D("11.55")
    out = await post_return(
        client, shop, give_back(shop, sale["invoice_number"], ("apple", 3, "3.50"))
    )
    assert out["total"] == "11.55" and out["tax_amount"] == "1.05"
    tb = await trial_balance(client, db, shop)
    assert tb["21200"] == D("0.00")  # the tax charged is all given back
    assert tb["41200"] == D("10.50")  # the return value net of tax
    assert tb["41100"] == D("-10.50")
    assert tb["11500"] == D("0.00")  # the credit settled the unpaid invoice
    assert tb["51100"] == D("0.00")  # 3 apples at 1.50 back into stock at that cost
    original = await db.read(lambda s: by_id(s, Order, sale["order_id"]))
    assert (original.due_amount, original.payment_status) == (D("0.00"), "paid")

    data = await return_detail(client, shop, out["return_id"])
    assert data["tax_amount"] == "1.05" and data["subtotal"] == "10.50"
    assert data["total"] == "11.55" and data["original_order_id"] == sale["order_id"]
    (line,) = data["items"]
    assert (line["tax_rate"], line["tax_amount"]) == (10, "1.05")
    assert (line["subtotal"], line["total"], line["unit_price"]) == ("10.50", "11.55", "3.50")
    # the event carries the same detail
    payloads = await db.read(
        lambda s: s.scalars(
            select(OutboxEvent.payload).where(
                OutboxEvent.company_id == shop.company_id, OutboxEvent.type == "return.created"
            )
        )
    )
    (event,) = [json.loads(p) for p in payloads]
    assert event["data"]["tax_amount"] == "1.05"
    assert event["data"]["items"][0]["tax_amount"] == "1.05"
    assert event["data"]["items"][0]["tax_rate"] == 10
    await check_books(db, shop.company_id)


async def test_full_return_with_inclusive_tax_refunded_in_cash(client, shop, db):
    # 2 × 6.00 with 20% included: gross 12.00 = 10.00 net + 2.00 tax
    sale = await sell(
        client,
        shop,
        [("apple", 2, "6.00", "incl")],
        all_payments=[{"amount": "12.00", "payment_mode_id": "cash"}],
    )
    assert sale["total_amount"] == 12
    too_much = give_back(
        shop,
        sale["invoice_number"],
        ("apple", 2, "6.00"),
        all_payments=[{"amount": "12.01", "payment_mode_id": "cash"}],
    )
    before = await recorded(db, shop)
    r = await post_return(client, shop, too_much, 422)
    assert "all_payments" in r["errors"]
    assert await recorded(db, shop) == before
    body = give_back(
        shop,
        sale["invoice_number"],
        ("apple", 2, "6.00"),
        all_payments=[{"amount": "12.00", "payment_mode_id": "cash"}],
    )
    out = await post_return(client, shop, body)
    assert (out["total"], out["tax_amount"]) == ("12.00", "2.00")
    tb = await trial_balance(client, db, shop)
    assert tb["21200"] == D("0.00")
    assert tb["41200"] == D("10.00")
    assert tb["11101"] == D("0.00")  # 12.00 in, 12.00 out
    assert tb["11500"] == D("0.00")
    (line,) = (await return_detail(client, shop, out["return_id"]))["items"]
    assert (line["tax_rate"], line["tax_amount"], line["subtotal"]) == (20, "2.00", "10.00")
    await check_books(db, shop.company_id)


async def test_partial_returns_of_a_line_add_up_to_its_total(client, shop, db):
    # 3 × 3.33 + 10%: 9.99 net, 1.00 tax (0.999), 10.99 in all
    sale = await sell(client, shop, [("apple", 3, "3.33", "excl")])
    invoice = sale["invoice_number"]
    totals, taxes = [], []
    for _ in range(3):
        out = await post_return(client, shop, give_back(shop, invoice, ("apple", 1, "3.33")))
        totals.append(D(out["total"]))
        taxes.append(D(out["tax_amount"]))
    assert sum(totals) == D("10.99") and sum(taxes) == D("1.00")
    assert totals == [D("3.66"), D("3.67"), D("3.66")]  # cumulative rounding
    # nothing is left to return
    before = await recorded(db, shop)
    r = await post_return(client, shop, give_back(shop, invoice, ("apple", 1, "3.33")), 422)
    assert "items.0.quantity" in r["errors"]
    assert await recorded(db, shop) == before
    tb = await trial_balance(client, db, shop)
    assert tb["21200"] == D("0.00") and tb["41200"] == D("9.99") and tb["11500"] == D("0.00")

    # a line whose per-unit share rounds up: 10 × 0.005 = 0.05, returned one by one
    cheap = await sell(client, shop, [("water", 10, "0.005", None)])
    assert cheap["total_amount"] == 0.05
    back = []
    for _ in range(10):
        out = await post_return(
            client, shop, give_back(shop, cheap["invoice_number"], ("water", 1, "0.005"))
        )
        back.append(D(out["total"]))
    assert sum(back) == D("0.05")  # never 10 × 0.01
    await check_books(db, shop.company_id)


async def test_return_of_several_units_then_the_rest(client, shop, db):
    """Two lines of the same product: the return draws them in line order."""
    sale = await sell(
        client, shop, [("apple", 2, "3.50", "excl"), ("apple", 1, "3.00", "incl")]
    )  # 7.00 + 0.70; 3.00 incl 0.50
    invoice = sale["invoice_number"]
    # 3.50 is above what the second line charged: refused for the units that reach it
    r = await post_return(client, shop, give_back(shop, invoice, ("apple", 3, "3.50")), 422)
    assert "items.0.unit_price" in r["errors"]
    first = await post_return(client, shop, give_back(shop, invoice, ("apple", 2, "3.50")))
    assert (first["total"], first["tax_amount"]) == ("7.70", "0.70")
    rest = await post_return(client, shop, give_back(shop, invoice, ("apple", 1, "3.00")))
    assert (rest["total"], rest["tax_amount"]) == ("3.00", "0.50")
    tb = await trial_balance(client, db, shop)
    assert tb["21200"] == D("0.00") and tb["41200"] == D("9.50")
    await check_books(db, shop.company_id)


async def test_unit_price_above_the_original_is_refused_below_is_partial(client, shop, db):
    sale = await sell(
        client, shop, [("apple", 2, "3.50", "excl", {"discount_rate": 10})]
    )  # 6.30 net (10% off), 0.63 tax
    invoice = sale["invoice_number"]
    before = await recorded(db, shop)
    r = await post_return(client, shop, give_back(shop, invoice, ("apple", 1, "3.51")), 422)
    assert list(r["errors"]) == ["items.0.unit_price"]
    assert "3.50" in r["errors"]["items.0.unit_price"][0]
    # the 2.49-for-500 attack, against an invoice
    r = await post_return(
        client,
        shop,
        give_back(
            shop,
            invoice,
            ("apple", 1, 500),
            all_payments=[{"amount": 500, "payment_mode_id": "cash"}],
        ),
        422,
    )
    assert "items.0.unit_price" in r["errors"]
    assert await recorded(db, shop) == before

    # below: a partial refund at the line's discount and tax rate on the lower price
    out = await post_return(client, shop, give_back(shop, invoice, ("apple", 1, "2.00")))
    assert (out["total"], out["tax_amount"]) == ("1.98", "0.18")  # 1.80 + 10%
    line = (await return_detail(client, shop, out["return_id"]))["items"][0]
    assert (line["unit_price"], line["discount_rate"], line["tax_rate"]) == ("2.00", 10, 10)
    assert (line["subtotal"], line["tax_amount"], line["total"]) == ("1.80", "0.18", "1.98")
    # the last unit at the full price takes exactly its own share, not what the
    # partial refund left over
    out = await post_return(client, shop, give_back(shop, invoice, ("apple", 1, "3.50")))
    # (the first unit's share was 3.47 with 0.32 tax: what is left is 6.93 − 3.47, 0.63 − 0.32)
    assert (out["total"], out["tax_amount"]) == ("3.46", "0.31")
    tb = await trial_balance(client, db, shop)
    assert tb["21200"] == D("-0.14")  # 0.63 − 0.18 − 0.31: tax kept on the price kept
    assert tb["41200"] == D("4.95")  # 1.80 + 3.15
    await check_books(db, shop.company_id)


async def test_return_without_invoice_uses_the_product_tax_and_price(client, shop, db):
    async def tax_apple(session):
        product = await by_id(session, Product, shop.products["apple"])
        product.tax_id = shop.tax_incl_id

    await db.write(tax_apple)
    before = await recorded(db, shop)
    # the 2.49-for-500 attack: a refund price above the shelf price, paid in cash
    attack = give_back(
        shop, None, ("apple", 1, 500), all_payments=[{"amount": 500, "payment_mode_id": "cash"}]
    )
    r = await post_return(client, shop, attack, 422)
    assert "items.0.unit_price" in r["errors"]
    assert await recorded(db, shop) == before
    assert (await trial_balance(client, db, shop))["11101"] == D("0.00")

    # 2 × 3.50 with the product's 20% included: 7.00 = 5.83 + 1.17
    body = give_back(
        shop, None, ("apple", 2, "3.50"), all_payments=[{"amount": 7, "payment_mode_id": "cash"}]
    )
    out = await post_return(client, shop, body)
    assert (out["total"], out["tax_amount"]) == ("7.00", "1.17")
    assert out["original_order_id"] is None
    (line,) = (await return_detail(client, shop, out["return_id"]))["items"]
    assert (line["tax_rate"], line["tax_amount"], line["subtotal"]) == (20, "1.17", "5.83")
    tb = await trial_balance(client, db, shop)
    assert tb["21200"] == D("1.17") and tb["41200"] == D("5.83") and tb["11101"] == D("-7.00")
    assert tb["51100"] == D("-4.00")  # back into stock at purchase_price 2.00
    await check_books(db, shop.company_id)


async def test_order_discount_is_not_refunded(client, shop, db):
    """A sale's order-level discount lowers what its returns give back."""
    sale = await sell(
        client,
        shop,
        [("apple", 2, "5.00", "excl")],  # 10.00 + 1.00 tax = 11.00
        discount="2.00",
        shipping="1.00",  # the discount spreads over 11.00 of goods and 1.00 of shipping
        all_payments=[{"amount": "10.00", "payment_mode_id": "card"}],
    )
    assert sale["total_amount"] == 10
    invoice = sale["invoice_number"]
    first = await post_return(client, shop, give_back(shop, invoice, ("apple", 1, "5.00")))
    # the goods' share of the discount is 1.83 (2.00 × 11/12): the customer paid 9.17
    # for the two units, 4.585 each
    assert (first["total"], first["tax_amount"]) == ("4.59", "0.50")
    data = await return_detail(client, shop, first["return_id"])
    assert (data["subtotal"], data["discount"]) == ("5.00", "0.91")
    refund = give_back(
        shop,
        invoice,
        ("apple", 1, "5.00"),
        all_payments=[{"amount": "4.59", "payment_mode_id": "card"}],
    )
    r = await post_return(client, shop, refund, 422)  # 4.58 is all the last unit gives back
    assert "all_payments" in r["errors"]
    refund["all_payments"][0]["amount"] = "4.58"
    second = await post_return(client, shop, refund)
    assert (second["total"], second["tax_amount"]) == ("4.58", "0.50")
    data = await return_detail(client, shop, second["return_id"])
    assert (data["subtotal"], data["discount"]) == ("5.00", "0.92")
    # the customer paid 10.00 of which 1.00 for shipping (less its 0.17 discount)
    assert D(first["total"]) + D(second["total"]) == D("9.17")
    tb = await trial_balance(client, db, shop)
    assert tb["21200"] == D("0.00")
    assert tb["41200"] == D("8.17")  # 10.00 net − 1.83 discount
    await check_books(db, shop.company_id)


async def test_return_by_the_box_price(client, shop, db):
    """A line sold by the box: the return counts pieces at the box price per piece."""
    sale = await sell(
        client, shop, [("water", 1, "10.00", None, {"selected_unit_id": shop.box_unit_id})]
    )
    invoice = sale["invoice_number"]
    r = await post_return(client, shop, give_back(shop, invoice, ("water", 12, "0.8334")), 422)
    assert "items.0.unit_price" in r["errors"]
    out = await post_return(client, shop, give_back(shop, invoice, ("water", 12, "0.8333")))
    assert out["total"] == "10.00"
    await check_books(db, shop.company_id)
