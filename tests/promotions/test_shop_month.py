"""A month of a shop (issue 29's check): a weekend promotion on drinks, gift cards
sold in one branch and spent in the other, returns refunded to store credit, loyalty
points earned and redeemed; every sale's lines compared with a recomputation of the
promotion, every receipt naming it on weekends only, and the liability accounts
(21300, 21400) and 41300 compared with what the month should have left in them."""

from __future__ import annotations

import datetime as dt
import random
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from sqlalchemy import select

from tests.admin_helpers import ADMIN, login
from tests.invariants import check_books, gl_balance
from tillbook.giftcards import service as giftcards
from tillbook.models import OrderItem

D = Decimal
CENT = D("0.01")
PRICES = {"apple": D("3.50"), "water": D("1.00")}


def cents(x: Decimal) -> Decimal:
    return x.quantize(CENT, rounding=ROUND_HALF_UP)


async def test_a_month_of_a_shop(client, shop, db) -> None:
    admin = await login(client, db, shop)
    r = await client.put(
        f"{ADMIN}/loyalty", json={"earn_unit": "1.00", "point_value": "0.01"}, headers=admin
    )
    assert r.status_code in (200, 201), r.text
    r = await client.post(
        f"{ADMIN}/promotions",
        json={
            "name": "Weekend drinks",
            "kind": "percent_off",
            "percent": "20",
            "applies_to": "categories",
            "targets": [shop.category_id],
            "weekdays": [6, 7],
            "starts_on": "2026-11-01",
        },
        headers=admin,
    )
    assert r.status_code == 201, r.text
    promo_id = r.json()["data"]["id"]

    # The month's stock, bought on the 1st.
    r = await client.post(
        "/purchases",
        json={
            "user_id": shop.supplier_id,
            "order_date": "2026-11-01",
            "product_items": [
                {"xid": shop.products[name], "quantity": 100, "unit_price": "0.50"}
                for name in ("apple", "water")
            ],
        },
        headers=shop.headers,
    )
    assert r.status_code == 200, r.text
    rng = random.Random(2611)
    expected_cost = D(0)
    points = 0
    sales: list[tuple[dict[str, Any], bool]] = []
    card_code = None
    for day in range(1, 26):
        date = dt.date(2026, 11, day)
        weekend = date.isoweekday() in (6, 7)
        moment = f"{date.isoformat()}T12:00:00Z"
        if day == 3:  # a gift card sold at the main branch
            r = await client.post(
                "/gift-cards",
                json={"amount": "40.00", "date": date.isoformat(),
                      "all_payments": [{"amount": "40.00", "payment_mode_id": "cash"}]},
                headers=shop.headers,
            )  # fmt: skip
            assert r.status_code == 200, r.text
            card_code = r.json()["data"]["code"]
        lines = [(name, rng.randint(1, 4)) for name in rng.sample(["apple", "water"], 2)]
        body = {
            "user_id": shop.customer_id,
            "order_date": moment,
            "product_items": [
                {"xid": shop.xid(name), "quantity": q, "unit_price": str(PRICES[name])}
                for name, q in lines
            ],
        }
        off = {name: cents(PRICES[name] * q * D("0.20")) if weekend else D(0) for name, q in lines}
        total = sum((PRICES[n] * q - off[n] for n, q in lines), D(0))
        tenders = [{"amount": str(total), "payment_mode_id": "cash"}]
        if day == 22 and points >= 100:  # a point is 0.01: redeem a whole 1.00
            tenders = [
                {"amount": "1.00", "payment_mode_id": "loyalty"},
                {"amount": str(total - 1), "payment_mode_id": "cash"},
            ]
        body["all_payments"] = tenders
        r = await client.post("/sales", json=body, headers=shop.headers)
        assert r.status_code == 200, r.text
        answer = r.json()
        assert D(str(answer["total_amount"])) == total, (day, answer)
        earned_on = total - (1 if day == 22 and points >= 100 else 0)
        assert answer["points_earned"] == int(earned_on // 1)
        points += answer["points_earned"] - answer["points_redeemed"]
        expected_cost += sum(off.values(), D(0))  # no tax on these lines: cost = discount
        sales.append((answer, weekend))
        rows = await db.read(
            lambda s, oid=answer["order_id"]: s.scalars(
                select(OrderItem).where(OrderItem.order_id == oid).order_by(OrderItem.id)
            )
        )
        for row, (name, _q) in zip(list(rows), lines, strict=True):
            assert row.promotion_discount == off[name], (day, name)
            assert row.promotion_id == (promo_id if weekend else None)
        receipt = await client.get(
            f"/sales/{answer['order_id']}/receipt?format=text", headers=shop.headers
        )
        assert ("Weekend drinks" in receipt.text) == weekend, receipt.text

        # The card is spent at the other branch, twice.
        if day in (10, 20) and card_code:
            spend = {
                "user_id": shop.customer_id,
                "order_date": moment,
                "product_items": [
                    {"xid": shop.other_products["coffee"], "quantity": 1, "unit_price": "4.00"}
                ],
                "all_payments": [
                    {"amount": "4.00", "payment_mode_id": "gift-card", "gift_card_code": card_code}
                ],
            }
            r = await client.post("/sales", json=spend, headers=shop.other_key.headers)
            assert r.status_code == 200, r.text
            points += r.json()["points_earned"]

    # A weekend sale comes back on the 25th, refunded to store credit.
    answer, _weekend = next(s for s in sales if s[1])
    detail = (await client.get(f"/sales/{answer['order_id']}", headers=shop.headers)).json()
    first = detail["data"]["items"][0]
    back = D(first["total"]) / D(str(first["quantity"]))
    r = await client.post(
        "/sales-returns",
        json={"user_id": shop.customer_id, "order_date": "2026-11-25",
              "invoice_number": answer["invoice_number"],
              "items": [{"product_id": first["product_id"], "quantity": 1,
                         "unit_price": first["unit_price"]}],
              "all_payments": [{"amount": str(cents(back)), "payment_mode_id": "gift-card"}]},
        headers=shop.headers,
    )  # fmt: skip
    assert r.status_code == 200, r.text
    points -= r.json().get("points_taken_back", 0)

    # The books against the month: the card holds 40 − 8, the customer's credit the
    # refund; 21400 owes the points at 0.01; 41300 the promotions and the points given.
    await check_books(db, shop.company_id)
    card = await db.read(lambda s: giftcards.card_by_code(s, shop.company_id, card_code))
    credit = await db.read(lambda s: giftcards.store_credit(s, shop.company_id, shop.customer_id))
    assert card is not None and card.balance == D("32.00")
    assert credit is not None and credit.balance == cents(back)
    gl = await db.read(lambda s: gl_balance(s, shop.company_id, "21300"))
    assert -gl == D("32.00") + cents(back)
    owed = await client.get(f"{ADMIN}/customers/{shop.customer_id}/loyalty", headers=admin)
    assert owed.status_code == 200, owed.text
    assert owed.json()["data"]["points"] == points
    assert -(await db.read(lambda s: gl_balance(s, shop.company_id, "21400"))) == D(points) / 100
    report = await client.get(
        f"{ADMIN}/reports/promotions?from=2026-11-01&to=2026-11-30", headers=admin
    )
    (row,) = report.json()["data"]["promotions"]
    assert D(row["cost"]) == expected_cost and row["units_returned"] == 1
