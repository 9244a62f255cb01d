"""POST/GET /sales: totals, rounding, FIFO cost, tenders, stock, books."""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy import func, select

from tests.invariants import check_books, gl_balance
from tillbook.models import OutboxEvent, Product

D = Decimal


def sale(shop, items, **extra):
    body = {"user_id": shop.customer_id, "order_date": "2026-11-20", "product_items": items}
    body.update(extra)
    return body


async def stock_of(db, product_id):
    return await db.read(
        lambda s: s.scalar(select(Product.current_stock).where(Product.id == product_id))
    )


async def test_credit_sale_posts_fifo_cost(client, shop, db):
    body = sale(shop, [{"xid": shop.xid("apple"), "quantity": 12, "unit_price": 3.5}])
    r = await client.post("/sales", json=body, headers=shop.headers)
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["status"] == "success"
    assert out["invoice_number"] == "SAL-00001"
    assert out["total_amount"] == 42
    assert isinstance(out["order_id"], int)
    # FIFO: 10 @ 1.50 + 2 @ 2.00 = 19.00
    assert await stock_of(db, shop.products["apple"]) == D("8")
    cogs = await db.read(lambda s: gl_balance(s, shop.company_id, "51100"))
    assert cogs == D("19.00")
    ar = await db.read(lambda s: gl_balance(s, shop.company_id, "11500"))
    assert ar == D("42.00")
    detail = (await client.get(f"/sales/{out['order_id']}", headers=shop.headers)).json()["data"]
    assert detail["payment_status"] == "unpaid"
    assert detail["due_amount"] == "42.00" and detail["paid_amount"] == "0.00"
    assert detail["user"] == {"id": shop.customer_id, "name": "Ada Customer", "phone": "555-0100"}
    assert detail["items"][0]["unit_price"] == "3.50"
    assert detail["items"][0]["subtotal"] == "42.00"
    assert detail["items"][0]["product"]["id"] == shop.products["apple"]
    await check_books(db, shop.company_id)


async def test_split_tender_tax_discount_shipping(client, shop, db):
    # line 1: 3 x 3.50 = 10.50, 10% excl tax 1.05 ; line 2: 2 x 1.00 less 10% = 1.80
    # subtotal 12.30, tax 1.05, shipping 2.00, discount 0.35 -> total 15.00
    items = [
        {"xid": shop.xid("apple"), "quantity": 3, "unit_price": "3.50", "tax_id": shop.tax10_id},
        {"xid": shop.products["water"], "quantity": 2, "unit_price": 1, "discount_rate": 10},
    ]
    body = sale(
        shop,
        items,
        discount=0.35,
        shipping=2,
        total=15.00,
        subtotal=12.30,
        tax_amount=1.05,
        all_payments=[
            {"amount": 10, "payment_mode_id": "cash"},
            {"amount": "5.00", "payment_mode_id": shop.card_mode_id, "reference": "T-1"},
        ],
    )
    r = await client.post("/sales", json=body, headers=shop.headers)
    assert r.status_code == 200, r.text
    assert r.json()["total_amount"] == 15
    detail = (await client.get(f"/sales/{r.json()['order_id']}", headers=shop.headers)).json()
    d = detail["data"]
    assert (d["subtotal"], d["tax_amount"], d["discount"], d["shipping"], d["total"]) == (
        "12.30",
        "1.05",
        "0.35",
        "2.00",
        "15.00",
    )
    assert d["payment_status"] == "paid" and d["due_amount"] == "0.00"
    assert len(d["payments"]) == 2

    async def figures(s):
        return {
            c: await gl_balance(s, shop.company_id, c)
            for c in ("11101", "11105", "11500", "41100", "21200", "41300", "41400")
        }

    f = await db.read(figures)
    assert f == {
        "11101": D("10.00"),
        "11105": D("5.00"),
        "11500": D("0.00"),
        "41100": D("-12.30"),
        "21200": D("-1.05"),
        "41300": D("0.35"),
        "41400": D("-2.00"),
    }
    events = await db.read(
        lambda s: s.scalars(
            select(OutboxEvent.type).where(OutboxEvent.company_id == shop.company_id)
        )
    )
    assert sorted(events) == ["order.created", "order.paid", "sales.created"]
    await check_books(db, shop.company_id)


async def test_inclusive_tax_and_partial_tender(client, shop, db):
    items = [
        {"xid": shop.xid("apple"), "quantity": 1, "unit_price": "12.00", "tax_id": shop.tax_incl_id}
    ]
    body = sale(shop, items, all_payments=[{"amount": 5, "payment_mode_id": "cash"}])
    r = await client.post("/sales", json=body, headers=shop.headers)
    assert r.status_code == 200, r.text
    d = (await client.get(f"/sales/{r.json()['order_id']}", headers=shop.headers)).json()["data"]
    # 12.00 gross incl 20%: tax = 2.00, net = 10.00
    assert (d["subtotal"], d["tax_amount"], d["total"]) == ("10.00", "2.00", "12.00")
    assert d["payment_status"] == "partially_paid" and d["due_amount"] == "7.00"
    await check_books(db, shop.company_id)


async def test_multi_unit_line(client, shop, db):
    items = [
        {
            "xid": shop.xid("water"),
            "quantity": 2,
            "unit_price": 10,
            "selected_unit_id": shop.box_unit_id,
        }
    ]
    r = await client.post("/sales", json=sale(shop, items), headers=shop.headers)
    assert r.status_code == 200, r.text
    assert r.json()["total_amount"] == 20
    assert await stock_of(db, shop.products["water"]) == D("76")
    await check_books(db, shop.company_id)


async def test_oversell_refused_and_nothing_recorded(client, shop, db):
    items = [
        {"xid": shop.xid("apple"), "quantity": 21, "unit_price": 3.5},
        {"xid": shop.xid("tea"), "quantity": 1, "unit_price": 9.99},
    ]
    r = await client.post("/sales", json=sale(shop, items), headers=shop.headers)
    assert r.status_code == 422
    errors = r.json()["errors"]
    assert "requested 21, available 20" in errors["product_items.0.quantity"][0]
    assert "requested 1, available 0" in errors["product_items.1.quantity"][0]
    assert await stock_of(db, shop.products["apple"]) == D("20")
    n = await db.read(
        lambda s: s.scalar(
            select(func.count())
            .select_from(OutboxEvent)
            .where(OutboxEvent.company_id == shop.company_id)
        )
    )
    assert n == 0
    # the counter did not move either
    ok = await client.post(
        "/sales",
        json=sale(
            shop, items[:1][:1] and [{"xid": shop.xid("apple"), "quantity": 1, "unit_price": 3.5}]
        ),
        headers=shop.headers,
    )
    assert ok.json()["invoice_number"] == "SAL-00001"
    await check_books(db, shop.company_id)


async def test_list_sales_dates_and_pagination(client, shop, db):
    for day in ("2026-01-01", "2026-01-05", "2026-02-01"):
        body = sale(
            shop, [{"xid": shop.xid("water"), "quantity": 1, "unit_price": 1}], order_date=day
        )
        assert (await client.post("/sales", json=body, headers=shop.headers)).status_code == 200
    r = await client.get(
        "/sales", params={"dates": "2026-01-01,2026-01-31", "limit": 1}, headers=shop.headers
    )
    data = r.json()["data"]
    assert data["total"] == 2 and data["current_page"] == 1 and len(data["data"]) == 1
    row = data["data"][0]
    assert row["order_type"] == "sales" and row["total"] == "1.00"
    assert row["staff_member"]["id"] and row["user"]["id"] == shop.customer_id
    # another warehouse sees none of them, and cannot read them
    other = await client.get("/sales", headers=shop.other_key.headers)
    assert other.json()["data"]["total"] == 0
    r = await client.get(f"/sales/{row['id']}", headers=shop.other_key.headers)
    assert r.status_code == 404 and r.json()["status"] == "error"
    await check_books(db, shop.company_id)


async def test_product_named_twice_draws_twice_across_layers(client, shop, db):
    """Both lines of one product draw in order, and the stock, layer and movement
    writes of the sale (one statement, and the movements with the COMMIT) add up."""
    before = await stock_of(db, shop.products["apple"])
    items = [
        {"xid": shop.xid("apple"), "quantity": 6, "unit_price": 3.5},
        {"xid": shop.xid("apple"), "quantity": 6, "unit_price": 3.5},
    ]
    r = await client.post("/sales", json=sale(shop, items), headers=shop.headers)
    assert r.status_code == 200, r.text
    assert await stock_of(db, shop.products["apple"]) == before - 12
    # FIFO over both lines: 6 @ 1.50, then 4 @ 1.50 and 2 @ 2.00 = 19.00
    cogs = await db.read(lambda s: gl_balance(s, shop.company_id, "51100"))
    assert cogs == D("19.00")
    await check_books(db, shop.company_id)
