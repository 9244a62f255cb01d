"""Money in and out through the back-office API: payments against invoices, an
expense pending and then approved and paid (once only, also when two approvals
race), money moved from the till's cash to the bank; the roles that may, and the
books after each."""

from __future__ import annotations

import asyncio
from decimal import Decimal

from sqlalchemy import func, select

from tests.admin_helpers import ADMIN, assert_error, login
from tests.factories import Shop, by_id
from tests.invariants import check_books, gl_balance
from tests.payments.test_payments import make_purchase, make_sale
from tests.web_helpers import STAFF_PASSWORD, add_staff
from tillbook.db import Database
from tillbook.models import AuditEvent, Expense, PaymentMode

D = Decimal


async def staff_login(client, db: Database, shop: Shop, role: str, warehouse_id=None) -> dict:
    email = await add_staff(db, shop, role, warehouse_id)
    r = await client.post(f"{ADMIN}/login", json={"email": email, "password": STAFF_PASSWORD})
    assert r.status_code == 200, r.text
    return {"Authorization": f"Bearer {r.json()['token']}"}


async def balance(db: Database, shop: Shop, code: str) -> Decimal:
    return await db.read(lambda s: gl_balance(s, shop.company_id, code))


async def test_every_new_company_has_a_bank_mode_on_11110(db, shop) -> None:
    mode = await db.read(
        lambda s: s.scalar(
            select(PaymentMode).where(
                PaymentMode.company_id == shop.company_id, PaymentMode.code == "bank"
            )
        )
    )
    assert mode is not None and mode.name == "Bank"
    from tillbook.ledger.accounts import by_id

    account = await db.read(lambda s: by_id(s, shop.company_id, mode.account_id))
    assert account.code == "11110" and account.parent_code == "11100" and account.is_posting


async def test_a_customer_payment_settles_invoices_and_is_audited(client, db, shop) -> None:
    headers = await login(client, db, shop)
    first = await make_sale(client, shop, date="2026-11-18")
    second = await make_sale(client, shop, quantity=2, date="2026-11-19")
    body = {
        "warehouse_id": shop.warehouse_id,
        "user_id": shop.customer_id,
        "payment_type": "in",
        "amount": "20.00",
        "payment_mode_id": "cash",
        "invoices": [
            {"order_id": first, "amount": "14.00"},
            {"order_id": second, "amount": "6.00"},
        ],
    }
    r = await client.post(
        f"{ADMIN}/payments", json=body, headers={**headers, "Idempotency-Key": "pay-1"}
    )
    assert r.status_code == 201, r.text
    out = r.json()
    assert [a["payment_status"] for a in out["allocations"]] == ["paid", "partially_paid"]
    again = await client.post(
        f"{ADMIN}/payments", json=body, headers={**headers, "Idempotency-Key": "pay-1"}
    )
    assert again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"
    assert await balance(db, shop, "11101") == D("20.00")
    audit = await db.read(
        lambda s: s.scalar(
            select(func.count()).where(
                AuditEvent.company_id == shop.company_id, AuditEvent.action == "payment.received"
            )
        )
    )
    assert audit == 1
    # Too much for an invoice: a 422 naming it, nothing written.
    body["invoices"] = [{"order_id": second, "amount": "99.00"}]
    body["amount"] = "99.00"
    assert_error(
        await client.post(f"{ADMIN}/payments", json=body, headers=headers), 422, "invoices.0.amount"
    )
    await check_books(db, shop.company_id)


async def test_who_may_record_which_payment(client, db, shop) -> None:
    await make_purchase(client, shop)
    sale = await make_sale(client, shop)
    cashier = await staff_login(client, db, shop, "cashier", shop.warehouse_id)
    body = {
        "user_id": shop.customer_id,
        "payment_type": "in",
        "amount": "5.00",
        "payment_mode_id": "cash",
        "invoices": [{"order_id": sale, "amount": "5.00"}],
    }
    r = await client.post(f"{ADMIN}/payments", json=body, headers=cashier)
    assert r.status_code == 201, r.text  # their branch by default
    out = {**body, "user_id": shop.supplier_id, "payment_type": "out", "invoices": []}
    assert_error(await client.post(f"{ADMIN}/payments", json=out, headers=cashier), 403)
    other = {**body, "warehouse_id": shop.other_warehouse_id, "invoices": []}
    assert_error(await client.post(f"{ADMIN}/payments", json=other, headers=cashier), 403)
    accountant = await staff_login(client, db, shop, "accountant")
    assert_error(await client.post(f"{ADMIN}/payments", json=body, headers=accountant), 403)
    manager = await staff_login(client, db, shop, "manager", shop.warehouse_id)
    r = await client.post(f"{ADMIN}/payments", json={**out, "amount": "10.00"}, headers=manager)
    assert r.status_code == 201, r.text
    await check_books(db, shop.company_id)


async def test_a_pending_expense_is_approved_and_paid_once(client, db, shop) -> None:
    headers = await login(client, db, shop)
    cat = await first_category(db, shop)
    r = await client.post(
        f"{ADMIN}/expenses",
        json={
            "warehouse_id": shop.warehouse_id,
            "expense_category_id": cat,
            "amount": "800.00",
            "date": "2026-11-01",
            "reference": "rent November",
        },
        headers=headers,
    )
    assert r.status_code == 201, r.text
    expense_id = r.json()["expense_id"]
    assert r.json()["expense_status"] == "pending"
    assert await balance(db, shop, "21100") == D("-800.00")
    await check_books(db, shop.company_id)

    bad = await client.post(
        f"{ADMIN}/expenses/{expense_id}/pay",
        json={"payment_mode_id": "bank", "date": "2026-10-01"},
        headers=headers,
    )
    assert_error(bad, 422, "date")
    assert_error(
        await client.post(
            f"{ADMIN}/expenses/{expense_id}/pay", json={"payment_mode_id": "gold"}, headers=headers
        ),
        422,
        "payment_mode_id",
    )
    cashier = await staff_login(client, db, shop, "cashier")
    assert_error(
        await client.post(
            f"{ADMIN}/expenses/{expense_id}/pay", json={"payment_mode_id": "bank"}, headers=cashier
        ),
        403,
    )
    paid = await client.post(
        f"{ADMIN}/expenses/{expense_id}/pay",
        json={"payment_mode_id": "bank", "date": "2026-11-05"},
        headers=headers,
    )
    assert paid.status_code == 200, paid.text
    assert paid.json()["expense_status"] == "paid"
    assert await balance(db, shop, "21100") == D("0.00")
    assert await balance(db, shop, "11110") == D("-800.00")
    expense = await db.read(lambda s: by_id(s, Expense, expense_id))
    assert expense.status == "paid" and expense.payment_entry_id == paid.json()["payment_entry_id"]
    twice = await client.post(
        f"{ADMIN}/expenses/{expense_id}/pay", json={"payment_mode_id": "cash"}, headers=headers
    )
    assert_error(twice, 409)
    assert await balance(db, shop, "11101") == D("0.00")
    assert_error(
        await client.post(
            f"{ADMIN}/expenses/999999999/pay", json={"payment_mode_id": "cash"}, headers=headers
        ),
        404,
    )
    await check_books(db, shop.company_id)


async def test_racing_approvals_pay_once(client, db, shop) -> None:
    headers = await login(client, db, shop)
    cat = await first_category(db, shop)
    ids = []
    for _ in range(3):
        r = await client.post(
            f"{ADMIN}/expenses",
            json={
                "warehouse_id": shop.warehouse_id,
                "expense_category_id": cat,
                "amount": "10.00",
                "date": "2026-11-01",
            },
            headers=headers,
        )
        ids.append(r.json()["expense_id"])
    for expense_id in ids:
        answers = await asyncio.gather(
            *(
                client.post(
                    f"{ADMIN}/expenses/{expense_id}/pay",
                    json={"payment_mode_id": "cash"},
                    headers=headers,
                )
                for _ in range(4)
            )
        )
        codes = sorted(a.status_code for a in answers)
        assert codes == [200, 409, 409, 409], [a.text for a in answers]
    assert await balance(db, shop, "11101") == D("-30.00")
    assert await balance(db, shop, "21100") == D("0.00")
    await check_books(db, shop.company_id)


async def test_takings_paid_into_the_bank(client, db, shop) -> None:
    headers = await login(client, db, shop)
    body = {
        "warehouse_id": shop.warehouse_id,
        "from_payment_mode_id": "cash",
        "to_payment_mode_id": "bank",
        "amount": "150.00",
        "reference": "deposit slip 17",
    }
    r = await client.post(f"{ADMIN}/money-moves", json=body, headers=headers)
    assert r.status_code == 201, r.text
    assert await balance(db, shop, "11110") == D("150.00")
    assert await balance(db, shop, "11101") == D("-150.00")
    listed = await client.get(f"{ADMIN}/money-moves", headers=headers)
    assert listed.status_code == 200 and listed.json()["data"]["total"] == 1
    same = {**body, "to_payment_mode_id": "cash"}
    assert_error(
        await client.post(f"{ADMIN}/money-moves", json=same, headers=headers),
        422,
        "to_payment_mode_id",
    )
    assert_error(
        await client.post(f"{ADMIN}/money-moves", json={**body, "amount": "-1"}, headers=headers),
        422,
        "amount",
    )
    assert_error(
        await client.post(
            f"{ADMIN}/money-moves", json={**body, "warehouse_id": "x"}, headers=headers
        ),
        422,
        "warehouse_id",
    )
    cashier = await staff_login(client, db, shop, "cashier", shop.warehouse_id)
    assert_error(await client.post(f"{ADMIN}/money-moves", json=body, headers=cashier), 403)
    scoped = await staff_login(client, db, shop, "manager", shop.other_warehouse_id)
    assert_error(await client.post(f"{ADMIN}/money-moves", json=body, headers=scoped), 403)
    await check_books(db, shop.company_id)


async def first_category(db: Database, shop: Shop) -> int:
    from tillbook.models import ExpenseCategory

    return int(
        await db.read(
            lambda s: s.scalar(
                select(func.min(ExpenseCategory.id)).where(
                    ExpenseCategory.company_id == shop.company_id
                )
            )
        )
    )
