"""The lists of payments and expenses (``web/cashbook.py``) and the roles that may
read them."""

from __future__ import annotations

import httpx
from sqlalchemy import select

from tests.factories import Shop
from tests.web_helpers import (
    STAFF_PASSWORD,
    add_staff,
    owner_page,
    sign_in,
)
from tillbook.db import Database


async def test_payments_and_expenses_lists_and_who_may_read_them(
    web: httpx.AsyncClient, client: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    from tillbook.models import ExpenseCategory

    general = await db.read(
        lambda s: s.scalar(
            select(ExpenseCategory.id).where(
                ExpenseCategory.company_id == shop.company_id,
                ExpenseCategory.name == "General Expenses",
            )
        )
    )
    spent = await client.post(
        "/expenses",
        json={
            "expense_category_id": general,
            "amount": "1234.50",
            "date": "2026-11-20",
            "payment_mode_id": "cash",
            "reference": "RCPT-WEB-1",
        },
        headers=shop.headers,
    )
    assert spent.status_code == 200, spent.text
    paid = await client.post(
        "/payments",
        json={
            "user_id": shop.customer_id,
            "payment_type": "in",
            "amount": "20.00",
            "payment_mode_id": "cash",
            "reference": "PAY-WEB-1",
        },
        headers=shop.headers,
    )
    assert paid.status_code == 200, paid.text

    listed = await owner_page(web, db, shop, "/payments")
    assert "PAY-WEB-1" in listed and "20.00" in listed and "received" in listed
    assert "PAY-WEB-1" not in (await web.get("/payments?reference=NOPE")).text
    assert "PAY-WEB-1" not in (await web.get("/payments?date_to=2000-01-01")).text
    bad = await web.get("/payments?date_from=yesterday")
    assert bad.status_code == 422 and 'id="e-date_from"' in bad.text
    expenses = await web.get("/expenses?reference=RCPT-WEB")
    assert expenses.status_code == 200
    assert "RCPT-WEB-1" in expenses.text and "1,234.50" in expenses.text
    assert "General Expenses" in expenses.text
    assert "RCPT-WEB-1" in (await web.get("/expenses?reference=General")).text
    assert "RCPT-WEB-1" not in (await web.get("/expenses?date_from=2026-11-21")).text

    accountant = await add_staff(db, shop, "accountant")
    await sign_in(web, accountant, STAFF_PASSWORD)
    assert (await web.get("/payments")).status_code == 200
    other_branch = await add_staff(db, shop, "accountant", shop.other_warehouse_id)
    await sign_in(web, other_branch, STAFF_PASSWORD)
    scoped = await web.get("/payments")
    assert scoped.status_code == 200 and "PAY-WEB-1" not in scoped.text
    cashier = await add_staff(db, shop, "cashier")
    await sign_in(web, cashier, STAFF_PASSWORD)
    for path in ("/payments", "/expenses"):
        r = await web.get(path)
        assert r.status_code == 403 and "lacks the permission" in r.text
