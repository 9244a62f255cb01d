"""Documents in a foreign currency entered in the back office (issue 26): a
delivery from a supplier in euros, the supplier paid a month later in euros from
their page (oldest euro invoice first, base invoices left alone), and an expense in
euros; a company with no foreign currency sees no currency fields; a bad rate is
refused beside its field with nothing written."""

from __future__ import annotations

from decimal import Decimal

import httpx

from tests.currency.test_foreign_currency import set_up
from tests.factories import Shop, by_id
from tests.invariants import check_books
from tests.payments.test_payments import make_purchase
from tests.web.test_money import as_owner, balance, first_category, tokens
from tillbook.db import Database
from tillbook.models import Expense, Order

D = Decimal


async def test_no_currency_fields_without_a_foreign_currency(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await as_owner(web, db, shop)
    for path in ("/expenses/new", "/purchases/new", f"/suppliers/{shop.supplier_id}/payment"):
        page = await web.get(path)
        assert page.status_code == 200 and 'name="exchange_rate"' not in page.text, path


async def test_a_euro_delivery_paid_later_and_a_euro_expense(
    web: httpx.AsyncClient, client: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await set_up(db, shop, ("2026-10-01", "1.10"), ("2026-11-01", "1.20"))
    await make_purchase(client, shop, date="2026-10-02")  # a base invoice: 25.50 USD
    await as_owner(web, db, shop)
    page = await web.get("/purchases/new")
    assert 'name="exchange_rate"' in page.text and "USD (base)" in page.text
    done = await web.post(
        "/purchases/new",
        data={
            **tokens(page.text),
            "warehouse_id": str(shop.warehouse_id),
            "user_id": str(shop.supplier_id),
            "order_date": "2026-10-05",
            "currency": "EUR",
            f"qty-{shop.products['tea']}": "10",
            f"cost-{shop.products['tea']}": "5.00",
        },
    )
    assert done.status_code == 303, done.text
    purchase = await db.read(
        lambda s: by_id(s, Order, int(done.headers["location"].rsplit("/", 1)[1]))
    )
    assert (purchase.currency, purchase.total, purchase.base_due) == ("EUR", D("50.00"), D("55.00"))

    page = await web.get(f"/suppliers/{shop.supplier_id}/payment")
    assert "EUR" in page.text
    paid = await web.post(
        f"/suppliers/{shop.supplier_id}/payment",
        data={
            **tokens(page.text),
            "warehouse_id": str(shop.warehouse_id),
            "amount": "50.00",
            "payment_mode_id": str(shop.cash_mode_id),
            "date": "2026-11-03",
            "currency": "EUR",
        },
    )
    assert paid.status_code == 303, paid.text
    purchase = await db.read(lambda s: by_id(s, Order, purchase.id))
    assert (purchase.due_amount, purchase.base_due) == (D("0.00"), D("0.00"))
    # 50 EUR paid at 1.20 = 60.00 for a payable carried at 55.00: a loss of 5.00; the
    # base invoice of 25.50 is still owed
    assert await balance(db, shop, "71200") == D("5.00")
    assert await balance(db, shop, "21100") == D("-25.50")

    page = await web.get("/expenses/new")
    bad = await web.post(
        "/expenses/new",
        data={
            **tokens(page.text),
            "warehouse_id": str(shop.warehouse_id),
            "expense_category_id": str(await first_category(db, shop)),
            "amount": "40.00",
            "date": "2026-11-04",
            "currency": "EUR",
            "exchange_rate": "-2",
        },
    )
    assert bad.status_code == 422 and 'id="e-exchange_rate"' in bad.text, bad.text
    page = await web.get("/expenses/new")
    good = await web.post(
        "/expenses/new",
        data={
            **tokens(page.text),
            "warehouse_id": str(shop.warehouse_id),
            "expense_category_id": str(await first_category(db, shop)),
            "amount": "40.00",
            "date": "2026-11-04",
            "currency": "EUR",
            "payment_mode_id": str(shop.cash_mode_id),
        },
    )
    assert good.status_code == 303, good.text
    expense = await db.read(
        lambda s: s.scalar(
            Expense.__table__.select()
            .where(Expense.company_id == shop.company_id)
            .with_only_columns(Expense.base_amount)
        )
    )
    assert expense == D("48.00")
    await check_books(db, shop.company_id)


async def test_a_payment_mode_of_euro_notes_from_settings(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await set_up(db, shop, ("2026-10-01", "1.10"))
    await as_owner(web, db, shop)
    page = await web.get("/settings/payment-modes")
    assert 'name="currency"' in page.text
    refused = await web.post(
        "/settings/payment-modes",
        data={
            **tokens(page.text),
            "code": "eur",
            "name": "Euro notes",
            "currency": "EUR",
            "account_code": "11101",
        },
    )
    assert refused.status_code == 422 and "create_account" in refused.text
    page = await web.get("/settings/payment-modes")
    made = await web.post(
        "/settings/payment-modes",
        data={
            **tokens(page.text),
            "code": "eur",
            "name": "Euro notes",
            "currency": "EUR",
            "create_account": "1",
        },
    )
    assert made.status_code == 303, made.text
    listing = await web.get("/settings/payment-modes")
    assert "Euro notes" in listing.text and "(EUR)" in listing.text
