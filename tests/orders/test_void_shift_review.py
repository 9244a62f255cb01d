"""Voids, shifts and transfers against the rules of the books (DESIGN.md section 5):
a void that could not undo a sale is refused, a closed shift's Z report never
changes, transfers into and out of negative stock keep GL and layers together."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from tests.factories import make_shop
from tests.invariants import check_books, gl_balance
from tillbook.kit import xid

D = Decimal
DAY = dt.date.today().isoformat()


async def gl(db, shop, code, wh=None):
    return await db.read(lambda s: gl_balance(s, shop.company_id, code, wh))


async def test_a_void_is_refused_once_the_sales_deficit_was_filled(client, db) -> None:
    """A void is 'as if the sale had not been rung up' (orders/voids.py): the cost
    accounts must come back. Here the sale went below zero (deficit layer at
    purchase_price 5.00) and a purchase at 4.25 filled the deficit (a settlement of
    -1.50 on 51100) before the void."""
    shop = await make_shop(db, allow_negative_stock=True)
    cogs0, inv0 = await gl(db, shop, "51100"), await gl(db, shop, "11700")
    r = await client.post(
        "/sales",
        json={"user_id": shop.customer_id, "order_date": DAY,
              "product_items": [{"xid": shop.xid("tea"), "quantity": 2, "unit_price": 9}]},
        headers=shop.headers,
    )  # fmt: skip
    assert r.status_code == 200, r.text
    sale_id = r.json()["order_id"]
    r = await client.post(
        "/purchases",
        json={"user_id": shop.supplier_id, "order_date": DAY,
              "product_items": [{"xid": shop.xid("tea"), "quantity": 2, "unit_price": "4.25"}]},
        headers=shop.headers,
    )  # fmt: skip
    assert r.status_code == 200, r.text
    before = (await gl(db, shop, "11700"), await gl(db, shop, "51100"))
    r = await client.post(f"/sales/{sale_id}/void", json={"reason": "x"}, headers=shop.headers)
    # Putting the 2 units back into the filled deficit layer at purchase_price 5.00
    # would value at 10.00 what cost 8.50 and leave the -1.50 settlement on 51100: the
    # void is refused, naming the sale; a return corrects it.
    assert r.status_code == 422 and "order_id" in r.text, r.text
    assert (await gl(db, shop, "11700"), await gl(db, shop, "51100")) == before
    assert before[0] - inv0 == D("0.00") and before[1] - cogs0 == D("8.50")
    await check_books(db, shop.company_id)
    order = (await client.get(f"/sales/{sale_id}", headers=shop.headers)).json()
    assert "cancelled" not in str(order.get("data", {}).get("order_status", "")), order


async def test_a_closed_shifts_z_report_does_not_change_after_a_later_void(client, db) -> None:
    shop = await make_shop(db)
    r = await client.post("/shifts", json={"register": "a"}, headers=shop.headers)
    sid = r.json()["data"]["id"]
    r = await client.post(
        "/sales",
        json={"user_id": shop.customer_id, "order_date": DAY,
              "product_items": [{"xid": shop.xid("apple"), "quantity": 2, "unit_price": "3.50"}],
              "all_payments": [{"amount": "7.00", "payment_mode_id": "cash"}]},
        headers=shop.headers,
    )  # fmt: skip
    assert r.status_code == 200, r.text
    sale_id = r.json()["order_id"]
    r = await client.post(
        f"/shifts/{sid}/close",
        json={"counted": [{"payment_mode_id": "cash", "amount": "7.00"}]},
        headers=shop.headers,
    )
    assert r.status_code == 200, r.text
    z = r.json()["data"]
    # the next day's shift voids it
    r = await client.post("/shifts", json={"register": "a"}, headers=shop.headers)
    assert r.status_code == 200, r.text
    r = await client.post(f"/sales/{sale_id}/void", json={"reason": "x"}, headers=shop.headers)
    assert r.status_code == 200, r.text
    await check_books(db, shop.company_id)
    z_again = (await client.get(f"/shifts/{sid}", headers=shop.headers)).json()["data"]
    assert z_again["sales"] == z["sales"], (z["sales"], z_again["sales"])
    assert z_again["tax_by_rate"] == z["tax_by_rate"]


async def test_transfer_into_and_cancel_into_negative_stock(client, db) -> None:
    shop = await make_shop(db, allow_negative_stock=True)
    apple = xid.encode(shop.products["apple"])
    to_other = {"to_warehouse_id": xid.encode(shop.other_warehouse_id)}
    # 10 @ 1.50 to the harbour
    r = await client.post("/stock-transfers", json={**to_other, "items": [
        {"product_id": apple, "quantity": 10}]}, headers=shop.headers)  # fmt: skip
    t1 = r.json()["transfer_id"]
    r = await client.post(f"/stock-transfers/{t1}/receive", json={}, headers=shop.other_key.headers)
    assert r.status_code == 200, r.text
    # main: 10 @ 2.00 left; send 7 more away, then sell 6 (3 below zero @ 2.00)
    r = await client.post("/stock-transfers", json={**to_other, "items": [
        {"product_id": apple, "quantity": 7}]}, headers=shop.headers)  # fmt: skip
    t2 = r.json()["transfer_id"]
    r = await client.post(
        "/sales",
        json={"user_id": shop.customer_id, "order_date": DAY,
              "product_items": [{"xid": shop.xid("apple"), "quantity": 6, "unit_price": "3.50"}]},
        headers=shop.headers,
    )  # fmt: skip
    assert r.status_code == 200, r.text
    sale_id = r.json()["order_id"]
    await check_books(db, shop.company_id)
    # cancel t2: the 7 come back into a warehouse 3 below zero
    r = await client.post(f"/stock-transfers/{t2}/cancel", json={}, headers=shop.headers)
    assert r.status_code == 200, r.text
    await check_books(db, shop.company_id)
    # harbour sends 5 @ 1.50 back; main receives 4 of them
    r = await client.post(
        "/stock-transfers",
        json={
            "to_warehouse_id": xid.encode(shop.warehouse_id),
            "items": [{"product_id": apple, "quantity": 5}],
        },
        headers=shop.other_key.headers,
    )
    assert r.status_code == 200, r.text
    t3 = r.json()["transfer_id"]
    r = await client.post(
        f"/stock-transfers/{t3}/receive",
        json={"items": [{"product_id": apple, "quantity": "4"}]},
        headers=shop.headers,
    )
    assert r.status_code == 200, r.text
    await check_books(db, shop.company_id)
    # the sale's deficit was filled by the cancel: a void is refused (a return corrects it)
    r = await client.post(f"/sales/{sale_id}/void", json={"reason": "x"}, headers=shop.headers)
    assert r.status_code == 422 and "return" in r.text, r.text
    await check_books(db, shop.company_id)
