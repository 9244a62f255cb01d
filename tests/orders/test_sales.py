"""POST/GET /sales: totals, rounding, FIFO cost, tenders, stock, books."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from sqlalchemy import func, select

from tests.factories import add_products, reading_the_database
from tests.invariants import check_books, gl_balance
from tests.plans import generic_plan, rows_read
from tillbook.kit import xid
from tillbook.models import Listing, OutboxEvent
from tillbook.orders import views
from tillbook.unit import statement_observers

D = Decimal


def sale(shop, items, **extra):
    body = {"user_id": shop.customer_id, "order_date": "2026-11-20", "product_items": items}
    body.update(extra)
    return body


async def stock_of(db, product_id):
    return await db.read(
        lambda s: s.scalar(select(Listing.current_stock).where(Listing.product_id == product_id))
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


# --- orders named by invoice number ----------------------------------------------------


async def post_ok(client, key, path, body):
    r = await client.post(path, json=body, headers=key.headers)
    assert r.status_code == 200, r.text
    return r.json()


async def detail_of(client, key, path):
    r = await client.get(path, headers=key.headers)
    assert r.status_code == 200, (path, r.text)
    return r.json()["data"]


def returned(shop, product, invoice=None, user_id=None):
    body = {
        "user_id": user_id or shop.customer_id,
        "order_date": "2026-11-21",
        "items": [{"product_id": product, "quantity": 1, "unit_price": 3.5}],
    }
    if invoice is not None:
        body["invoice_number"] = invoice
    return body


async def test_orders_are_found_by_invoice_number(client, shop, db):
    a, b = shop.key, shop.other_key
    apple = [{"xid": shop.xid("apple"), "quantity": 3, "unit_price": 3.5}]
    coffee = [{"xid": shop.other_products["coffee"], "quantity": 1, "unit_price": 4}]
    first = await post_ok(client, a, "/sales", sale(shop, apple))
    assert first["invoice_number"] == "SAL-00001"
    order_id = first["order_id"]
    for ref in (order_id, str(order_id), xid.encode(order_id), "SAL-00001"):
        assert (await detail_of(client, a, f"/sales/{ref}"))["id"] == order_id
    # Each warehouse numbers its own sales: B's SAL-00001 is B's sale.
    theirs = await post_ok(client, b, "/sales", sale(shop, coffee))
    assert theirs["invoice_number"] == "SAL-00001"
    assert (await detail_of(client, b, "/sales/SAL-00001"))["id"] == theirs["order_id"]
    harbour = await post_ok(client, b, "/sales", sale(shop, coffee, invoice_number="HB-0042"))
    assert (await detail_of(client, b, "/sales/HB-0042"))["id"] == harbour["order_id"]
    # Another warehouse's number, a number of another type, or none: 404 as for ids.
    for path in ("/sales/HB-0042", "/purchases/SAL-00001", "/sales/SAL-00009", "/sales/sal-00001"):
        r = await client.get(path, headers=a.headers)
        assert r.status_code == 404, (path, r.text)
        assert r.json()["status"] == "error"

    purchase = await post_ok(
        client,
        a,
        "/purchases",
        {
            "user_id": shop.supplier_id,
            "order_date": "2026-11-20",
            "product_items": [{"xid": shop.xid("tea"), "quantity": 3, "unit_price": 5}],
        },
    )
    assert (await detail_of(client, a, "/purchases/PUR-00001"))["id"] == purchase["purchase_id"]

    # A return names its original sale by number, id or xid; the return has its own.
    for ref in ("SAL-00001", str(order_id), xid.encode(order_id)):
        out = await post_ok(client, a, "/sales-returns", returned(shop, shop.xid("apple"), ref))
        assert out["original_order_id"] == order_id, ref
    ret = await detail_of(client, a, "/sales-returns/SRET-00001")
    assert ret["order_type"] == "sales-returns" and ret["original_order_id"] == order_id
    assert (await detail_of(client, a, f"/sales-returns/{xid.encode(ret['id'])}"))["id"] == ret[
        "id"
    ]
    # ...never another warehouse's sale, and at most what was sold (3 units, 3 back).
    before = (await client.get("/sales-returns", headers=a.headers)).json()["data"]["total"]
    for ref, field in (("HB-0042", "invoice_number"), ("SAL-00001", "items.0.quantity")):
        r = await client.post(
            "/sales-returns", json=returned(shop, shop.xid("apple"), ref), headers=a.headers
        )
        assert r.status_code == 422 and field in r.json()["errors"], (ref, r.text)
    after = (await client.get("/sales-returns", headers=a.headers)).json()["data"]["total"]
    assert after == before == 3

    pret = await post_ok(
        client,
        a,
        "/purchase-returns",
        returned(shop, shop.xid("tea"), "PUR-00001", user_id=shop.supplier_id),
    )
    assert pret["original_order_id"] == purchase["purchase_id"]
    assert (await detail_of(client, a, "/purchase-returns/PRET-00001"))["id"] == pret["return_id"]
    r = await client.get("/purchase-returns/PRET-00001", headers=b.headers)
    assert r.status_code == 404
    await check_books(db, shop.company_id)


async def test_an_all_digit_invoice_number_and_an_id(client, shop, db):
    """A client's own invoice number may be all digits and equal to another order's id:
    an id field (a path, ``invoices[].order_id``) then means the id, a return's
    ``invoice_number`` the invoice number."""
    apple = [{"xid": shop.xid("apple"), "quantity": 2, "unit_price": 3.5}]
    by_id = await post_ok(client, shop.key, "/sales", sale(shop, apple))
    number = str(by_id["order_id"])
    by_number = await post_ok(client, shop.key, "/sales", sale(shop, apple, invoice_number=number))
    assert by_number["invoice_number"] == number != str(by_number["order_id"])
    assert (await detail_of(client, shop.key, f"/sales/{number}"))["id"] == by_id["order_id"]
    out = await post_ok(
        client, shop.key, "/sales-returns", returned(shop, shop.xid("apple"), number)
    )
    assert out["original_order_id"] == by_number["order_id"]
    pay = {
        "user_id": shop.customer_id,
        "payment_type": "in",
        "amount": 1,
        "payment_mode_id": "cash",
        "invoices": [{"order_id": number, "amount": 1}],
    }
    out = await post_ok(client, shop.key, "/payments", pay)
    assert out["allocations"][0]["order_id"] == by_id["order_id"]
    await check_books(db, shop.company_id)


async def test_references_that_name_nothing(client, shop, db):
    """A reference no order can have (a NUL, non-ASCII, longer than stored) is unknown,
    never a database error."""
    await post_ok(
        client,
        shop.key,
        "/sales",
        sale(shop, [{"xid": shop.xid("apple"), "quantity": 1, "unit_price": 3.5}]),
    )
    for path in (
        "/sales/SAL%0000001",
        "/sales/a%00b",
        "/purchases/%00",
        "/sales-returns/" + "S" * 3000,
        "/purchase-returns/%C3%A9",
        "/sales/SAL-00001%0A",
    ):
        r = await client.get(path, headers=shop.headers)
        assert r.status_code == 404, (path, r.text)
    for ref in ("SAL-00001\x00", "\x00", "é", "SAL-00001\n"):
        body = {
            "user_id": shop.customer_id,
            "payment_type": "in",
            "amount": 1,
            "payment_mode_id": "cash",
            "invoices": [{"order_id": ref, "amount": 1}],
        }
        r = await client.post("/payments", json=body, headers=shop.headers)
        assert r.status_code == 422, (ref, r.text)
        assert "invoices.0.order_id" in r.json()["errors"]
    await check_books(db, shop.company_id)


async def test_a_sale_is_read_back_in_one_statement(client, shop, db, monkeypatch):
    """GET /sales/{id}: the sale, its party and staff member, lines, payments and
    points nested in one statement on PostgreSQL (``Reads.one``), no transaction;
    by invoice number one statement more to find it. The answer is the one the
    write path's detail builds (``views.load_detail``, the sale's event)."""
    body = sale(
        shop,
        [
            {"xid": shop.xid("apple"), "quantity": 2, "unit_price": "3.50"},
            {"xid": shop.xid("water"), "quantity": 1, "unit_price": "5.00"},
        ],
        all_payments=[{"amount": "10.00", "payment_mode_id": "cash"}],
    )
    r = await client.post("/sales", json=body, headers=shop.headers)
    assert r.status_code == 200, r.text
    order_id, number = r.json()["order_id"], r.json()["invoice_number"]
    reading_the_database(client, monkeypatch)
    await client.get(f"/sales/{order_id}", headers=shop.headers)  # the key is remembered
    seen: list[str] = []
    statement_observers.append(seen.append)
    try:
        by_id = (await client.get(f"/sales/{order_id}", headers=shop.headers)).json()["data"]
        one = len(seen)
        by_number = (await client.get(f"/sales/{number}", headers=shop.headers)).json()["data"]
    finally:
        statement_observers.remove(seen.append)
    assert by_id == by_number
    assert [i["quantity"] for i in by_id["items"]] == [2, 1]
    assert [p["amount"] for p in by_id["payments"]] == ["10.00"]
    assert by_id["paid_amount"] == "10.00" and by_id["due_amount"] == "2.00"
    if not db.is_sqlite:  # SQLite reads through a session: no observer sees it
        assert one == 1, seen
        assert len(seen) == 3, seen
    payloads = await db.read(
        lambda s: s.scalars(
            select(OutboxEvent.payload).where(
                OutboxEvent.company_id == shop.company_id, OutboxEvent.type == "order.created"
            )
        )
    )
    created = [e["data"] for e in map(json.loads, payloads.all()) if e["data"]["id"] == order_id]
    assert created and created[0]["items"] == by_id["items"]


async def test_reading_a_sale_looks_its_lines_products_up_by_key(client, shop, db, database_url):
    """A sale's detail finds each line's product by its key, wherever the product
    is in the catalog: with the generic plan every statement of the service runs
    with, PostgreSQL merge-joined the lines with the company's products read in id
    order from the first, so reading back a sale of the last product of a
    20,000-product catalog cost 10 ms of the database's CPU (the first product's,
    0.08 ms)."""
    if db.is_sqlite:
        pytest.skip("PostgreSQL's generic plans")

    *_, last = await add_products(
        db, shop, 150, name="Biscuit", code=f"BIS-{shop.company_id}",
        opening_batches=[(Decimal("5"), Decimal("0.50"))],
    )  # fmt: skip
    line = {"xid": xid.encode(last), "quantity": 1, "unit_price": "1.00"}
    r = await client.post("/sales", json=sale(shop, [line]), headers=shop.headers)
    assert r.status_code == 200, r.text
    order_id = r.json()["order_id"]
    detail = (await client.get(f"/sales/{order_id}", headers=shop.headers)).json()["data"]
    assert [i["product"]["name"] for i in detail["items"]] == ["Biscuit 149"]

    plan = await generic_plan(
        database_url,
        views.DETAIL_LISTS["items"],
        {"order_id": order_id, "company_id": shop.company_id},
        analyze=("products",),
    )
    # the line's product by its key for its name and for its item code, nothing more
    assert rows_read(plan, "products") == 2
