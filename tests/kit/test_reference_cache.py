"""Taxes and payment modes are cached per (database, company): a tax or mode created
after the cache filled (by another process, say) is found, and a company never
resolves another company's rows through it."""

from __future__ import annotations

from decimal import Decimal

from tests.factories import make_shop
from tests.invariants import check_books
from tillbook.catalog import seeding as catalog
from tillbook.ledger.service import account_ids
from tillbook.models import PaymentMode

D = Decimal


def sale(shop, tax_id, mode_ref, amount):
    return {
        "user_id": shop.customer_id,
        "order_date": "2026-11-20",
        "product_items": [
            {"xid": shop.xid("apple"), "quantity": 1, "unit_price": "10.00", "tax_id": tax_id}
        ],
        "all_payments": [{"payment_mode_id": mode_ref, "amount": amount}],
    }


async def test_tax_and_mode_created_after_the_cache_filled_are_found(client, shop, db):
    r = await client.post(
        "/sales", json=sale(shop, shop.tax10_id, "cash", "11.00"), headers=shop.headers
    )
    assert r.status_code == 200, r.text  # the company's taxes and modes are cached now

    async def add(session):
        tax = await catalog.create_tax(session, shop.company_id, "VAT 5%", D("5"))
        ids = await account_ids(session, shop.company_id)
        mode = PaymentMode(
            company_id=shop.company_id, code="voucher", name="Voucher", account_id=ids["11105"]
        )
        session.add(mode)
        await session.flush()
        return tax.id

    tax5 = await db.write(add)
    r = await client.post("/sales", json=sale(shop, tax5, "voucher", "10.50"), headers=shop.headers)
    assert r.status_code == 200, r.text
    assert r.json()["total_amount"] == 10.5 and r.json()["payment_status"] == "paid"
    await check_books(db, shop.company_id)


async def test_another_companys_tax_and_mode_stay_unknown(client, shop, db):
    other = await make_shop(db)
    # Both companies' rows are cached after one sale each.
    for s in (shop, other):
        r = await client.post(
            "/sales", json=sale(s, s.tax10_id, "cash", "11.00"), headers=s.headers
        )
        assert r.status_code == 200, r.text
    body = sale(shop, other.tax10_id, other.card_mode_id, "11.00")
    r = await client.post("/sales", json=body, headers=shop.headers)
    assert r.status_code == 422, r.text
    errors = r.json()["errors"]
    assert errors["product_items.0.tax_id"] == [f"unknown tax {other.tax10_id}"]
    assert errors["all_payments.0.payment_mode_id"] == [
        f"unknown payment mode {other.card_mode_id}"
    ]
