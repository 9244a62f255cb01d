"""POST/GET /purchases: batches at unit cost, payable, outward tenders."""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy import select

from tests.invariants import check_books, gl_balance
from tillbook.models import Listing, StockBatch

D = Decimal


def purchase(shop, items, **extra):
    body = {"user_id": shop.supplier_id, "order_date": "2026-11-20", "product_items": items}
    body.update(extra)
    return body


async def test_purchase_creates_batch_and_payable(client, shop, db):
    items = [{"xid": shop.xid("tea"), "quantity": 6, "unit_price": "4.25"}]
    r = await client.post("/purchases", json=purchase(shop, items), headers=shop.headers)
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["invoice_number"] == "PUR-00001" and isinstance(out["purchase_id"], int)
    assert isinstance(out["current_status"], str)

    async def batches(s):
        rows = await s.execute(
            select(StockBatch.quantity_remaining, StockBatch.unit_cost).where(
                StockBatch.product_id == shop.products["tea"]
            )
        )
        return [(D(a), D(b)) for a, b in rows.all()]

    assert await db.read(batches) == [(D("6"), D("4.25"))]
    ap = await db.read(lambda s: gl_balance(s, shop.company_id, "21100"))
    assert ap == D("-25.50")
    d = (await client.get(f"/purchases/{out['purchase_id']}", headers=shop.headers)).json()["data"]
    assert d["order_type"] == "purchases" and d["total"] == "25.50"
    assert d["user"]["id"] == shop.supplier_id and d["payments"] == []
    await check_books(db, shop.company_id)


async def test_purchase_with_outward_payment_then_sale_uses_fifo(client, shop, db):
    items = [
        {"xid": shop.xid("tea"), "quantity": 2, "unit_price": 5},
        {"xid": shop.xid("tea"), "quantity": 1, "unit_price": 8},
    ]
    body = purchase(
        shop,
        items,
        invoice_number="SUP-778",
        all_payments=[{"amount": 10, "payment_mode_id": "cash"}],
    )
    r = await client.post("/purchases", json=body, headers=shop.headers)
    assert r.status_code == 200, r.text
    assert r.json()["invoice_number"] == "SUP-778"
    assert r.json()["payment_status"] == "partially_paid"
    d = (await client.get(f"/purchases/{r.json()['purchase_id']}", headers=shop.headers)).json()
    assert d["data"]["payments"][0]["payment_type"] == "out"
    assert d["data"]["payments"][0]["amount"] == "10.00"
    # same supplier document number again: the earlier purchase, nothing new
    again = await client.post("/purchases", json=body, headers=shop.headers)
    assert again.json()["purchase_id"] == r.json()["purchase_id"]
    stock = await db.read(
        lambda s: s.scalar(
            select(Listing.current_stock).where(Listing.product_id == shop.products["tea"])
        )
    )
    assert stock == D("3")
    sale = {
        "user_id": shop.customer_id,
        "order_date": "2026-11-21",
        "product_items": [{"xid": shop.xid("tea"), "quantity": 3, "unit_price": 10}],
    }
    assert (await client.post("/sales", json=sale, headers=shop.headers)).status_code == 200
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "51100")) == D("18.00")
    listing = (await client.get("/purchases", headers=shop.headers)).json()["data"]
    assert listing["total"] == 1 and listing["data"][0]["invoice_number"] == "SUP-778"
    await check_books(db, shop.company_id)


async def test_negative_stock_sale_then_purchase_settles_deficit(client, db):
    from tests.factories import make_shop

    shop = await make_shop(db, allow_negative_stock=True)
    sale = {
        "user_id": shop.customer_id,
        "order_date": "2026-11-21",
        "product_items": [{"xid": shop.xid("tea"), "quantity": 2, "unit_price": 10}],
    }
    r = await client.post("/sales", json=sale, headers=shop.headers)
    assert r.status_code == 200, r.text
    stock = await db.read(
        lambda s: s.scalar(
            select(Listing.current_stock).where(Listing.product_id == shop.products["tea"])
        )
    )
    assert stock == D("-2")
    await check_books(db, shop.company_id)
    items = [{"xid": shop.xid("tea"), "quantity": 5, "unit_price": 6}]
    r = await client.post("/purchases", json=purchase(shop, items), headers=shop.headers)
    assert r.status_code == 200, r.text
    # sold 2 booked at purchase_price 5.00; they really cost 6.00: 2.00 more COGS
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "51100")) == D("12.00")
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "11700", shop.warehouse_id)) == D(
        "68.33"
    ) + D("18.00")
    await check_books(db, shop.company_id)
