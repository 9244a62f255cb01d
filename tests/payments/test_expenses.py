"""POST/GET /expenses: paid now or pending approval, gateway fees; books."""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy import func, select

from tests.factories import by_id, make_shop
from tests.invariants import check_books, gl_balance
from tillbook.kit import xid
from tillbook.models import Account, Expense, ExpenseCategory, JournalEntry, JournalLine, User

D = Decimal


async def category_id(db, company_id, name):
    return await db.read(
        lambda s: s.scalar(
            select(ExpenseCategory.id).where(
                ExpenseCategory.company_id == company_id, ExpenseCategory.name == name
            )
        )
    )


async def gl(db, company_id, code):
    return await db.read(lambda s: gl_balance(s, company_id, code))


async def counts(db, company_id):
    async def run(s):
        out = {}
        for name, model in (("expenses", Expense), ("entries", JournalEntry)):
            out[name] = await s.scalar(
                select(func.count()).select_from(model).where(model.company_id == company_id)
            )
        return out

    return await db.read(run)


async def entry_lines(db, entry_id):
    async def run(s):
        rows = await s.execute(
            select(Account.code, JournalLine.debit, JournalLine.credit, JournalLine.party_id)
            .join(Account, Account.id == JournalLine.account_id)
            .where(JournalLine.entry_id == entry_id)
            .order_by(JournalLine.id)
        )
        return [(c, D(d), D(cr), p) for c, d, cr, p in rows.all()]

    return await db.read(run)


async def test_paid_expense_credits_the_cash_account(client, shop, db):
    general = await category_id(db, shop.company_id, "General Expenses")
    body = {
        "expense_category_id": general,
        "amount": "12.50",
        "date": "2026-11-20",
        "payment_mode_id": "cash",
        "reference": "RCPT-9",
        "notes": "mop and bucket",
    }
    r = await client.post("/expenses", json=body, headers=shop.headers)
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["status"] == "success" and out["expense_status"] == "paid"
    assert out["amount"] == "12.50"
    assert isinstance(out["expense_id"], int) and isinstance(out["journal_entry_id"], int)
    assert await entry_lines(db, out["journal_entry_id"]) == [
        ("52900", D("12.50"), D("0"), None),
        ("11101", D("0"), D("12.50"), None),
    ]
    expense = await db.read(lambda s: by_id(s, Expense, out["expense_id"]))
    assert expense.status == "paid" and expense.warehouse_id == shop.warehouse_id
    assert expense.payment_mode_id == shop.cash_mode_id
    assert expense.journal_entry_id == out["journal_entry_id"]
    assert await gl(db, shop.company_id, "11101") == D("-12.50")
    await check_books(db, shop.company_id)


async def test_pending_expense_credits_payables_without_a_party(client, shop, db):
    fuel = await category_id(db, shop.company_id, "Fuel and Energy")
    body = {
        "expense_category_id": xid.encode(fuel),
        "amount": 40,
        "date": "2026-11-21",
        "user_id": shop.supplier_id,
    }
    r = await client.post("/expenses", json=body, headers=shop.headers)
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["expense_status"] == "pending" and out["amount"] == "40.00"
    assert await entry_lines(db, out["journal_entry_id"]) == [
        ("52100", D("40.00"), D("0"), None),
        ("21100", D("0"), D("40.00"), None),
    ]
    expense = await db.read(lambda s: by_id(s, Expense, out["expense_id"]))
    assert expense.status == "pending" and expense.user_id == shop.supplier_id
    assert expense.payment_mode_id is None
    # the supplier's balance is untouched; 21100 carries the pending expense
    supplier_balance = await db.read(
        lambda s: s.scalar(select(User.balance).where(User.id == shop.supplier_id))
    )
    assert supplier_balance == D("0.00")
    assert await gl(db, shop.company_id, "21100") == D("-40.00")
    await check_books(db, shop.company_id)


async def test_gateway_fee_goes_to_52300(client, shop, db):
    # the integrator records the customer payment gross, and the fee as an expense
    sale = {
        "user_id": shop.customer_id,
        "order_date": "2026-11-20",
        "product_items": [{"xid": shop.products["apple"], "quantity": 10, "unit_price": 10}],
    }
    r = await client.post("/sales", json=sale, headers=shop.headers)
    sale_id = r.json()["order_id"]
    r = await client.post(
        "/payments",
        headers=shop.headers,
        json={
            "user_id": shop.customer_id,
            "payment_type": "in",
            "amount": 100,
            "payment_mode_id": "card",
            "invoices": [{"order_id": sale_id, "amount": 100}],
        },
    )
    assert r.status_code == 200, r.text
    gateway = await category_id(db, shop.company_id, "Bank and Gateway Charges")
    r = await client.post(
        "/expenses",
        headers=shop.headers,
        json={
            "expense_category_id": str(gateway),
            "amount": "2.90",
            "date": "2026-11-20",
            "payment_mode_id": shop.card_mode_id,
            "reference": "stripe fee ch_123",
        },
    )
    assert r.status_code == 200, r.text
    assert r.json()["expense_status"] == "paid"
    assert await gl(db, shop.company_id, "52300") == D("2.90")
    assert await gl(db, shop.company_id, "11105") == D("97.10")
    assert await gl(db, shop.company_id, "11500") == D("0.00")
    await check_books(db, shop.company_id)


async def test_list_expenses_newest_first_in_the_keys_warehouse(client, shop, db):
    general = await category_id(db, shop.company_id, "General Expenses")
    gateway = await category_id(db, shop.company_id, "Bank and Gateway Charges")
    ids = []
    for day, cat, mode in (
        ("2026-11-01", general, "cash"),
        ("2026-11-03", gateway, None),
        ("2026-11-02", general, "card"),
    ):
        body = {"expense_category_id": cat, "amount": 5, "date": day}
        if mode:
            body["payment_mode_id"] = mode
        r = await client.post("/expenses", json=body, headers=shop.headers)
        assert r.status_code == 200, r.text
        ids.append(r.json()["expense_id"])
    r = await client.post(
        "/expenses",
        headers=shop.other_key.headers,
        json={"expense_category_id": general, "amount": 7, "date": "2026-11-05"},
    )
    assert r.status_code == 200, r.text

    r = await client.get("/expenses", headers=shop.headers)
    assert r.status_code == 200, r.text
    data = r.json()["data"]
    assert data["total"] == 3 and data["current_page"] == 1
    rows = data["data"]
    assert [row["id"] for row in rows] == [ids[1], ids[2], ids[0]]
    assert rows[0]["expense_category"] == {
        "id": gateway,
        "name": "Bank and Gateway Charges",
        "account_code": "52300",
    }
    assert rows[0]["status"] == "pending" and rows[0]["payment_mode_id"] is None
    assert rows[1]["status"] == "paid" and rows[1]["payment_mode_id"] == shop.card_mode_id
    assert rows[1]["amount"] == "5.00" and rows[1]["date"] == "2026-11-02"
    assert set(rows[0]) == {
        "id",
        "expense_category",
        "amount",
        "date",
        "status",
        "payment_mode_id",
        "user_id",
        "reference",
        "notes",
        "journal_entry_id",
    }
    r = await client.get(
        "/expenses",
        params={"limit": 1, "page": 2, "dates": "2026-11-01,2026-11-02"},
        headers=shop.headers,
    )
    data = r.json()["data"]
    assert data["total"] == 2 and [row["id"] for row in data["data"]] == [ids[0]]
    other = (await client.get("/expenses", headers=shop.other_key.headers)).json()["data"]
    assert other["total"] == 1 and other["data"][0]["amount"] == "7.00"
    await check_books(db, shop.company_id)


async def test_bad_expense_bodies(client, shop, db):
    general = await category_id(db, shop.company_id, "General Expenses")
    other = await make_shop(db)
    foreign = await category_id(db, other.company_id, "General Expenses")
    base = {"expense_category_id": general, "amount": 5, "date": "2026-11-20"}

    def without(name):
        return {k: v for k, v in base.items() if k != name}

    cases = [
        (without("expense_category_id"), "expense_category_id"),
        (without("amount"), "amount"),
        (without("date"), "date"),
        ({**base, "expense_category_id": 999999999}, "expense_category_id"),
        ({**base, "expense_category_id": "travel"}, "expense_category_id"),
        ({**base, "expense_category_id": foreign}, "expense_category_id"),
        ({**base, "expense_category_id": 2.5}, "expense_category_id"),
        ({**base, "amount": 0}, "amount"),
        ({**base, "amount": -5}, "amount"),
        ({**base, "amount": "1.005"}, "amount"),
        ({**base, "amount": True}, "amount"),
        ({**base, "date": "yesterday"}, "date"),
        ({**base, "date": "2026-11-20T10:00:00"}, "date"),
        ({**base, "date": None}, "date"),
        ({**base, "payment_mode_id": "bitcoin"}, "payment_mode_id"),
        ({**base, "payment_mode_id": other.cash_mode_id}, "payment_mode_id"),
        ({**base, "user_id": shop.customer_id}, "user_id"),
        ({**base, "user_id": other.supplier_id}, "user_id"),
        ({**base, "notes": ["x"]}, "notes"),
    ]
    before = await counts(db, shop.company_id)
    for body, field in cases:
        r = await client.post("/expenses", json=body, headers=shop.headers)
        assert r.status_code == 422, (body, r.text)
        out = r.json()
        assert out["status"] == "error" and field in out["errors"], (body, out)
        value = body.get(field)
        if value is not None and not isinstance(value, list | dict | bool):
            assert str(value) in " ".join(out["errors"][field]), (body, out)
    # every problem at once
    r = await client.post(
        "/expenses",
        headers=shop.headers,
        json={
            **base,
            "expense_category_id": "travel",
            "payment_mode_id": "bitcoin",
            "user_id": shop.customer_id,
        },
    )
    assert set(r.json()["errors"]) == {"expense_category_id", "payment_mode_id", "user_id"}
    assert await counts(db, shop.company_id) == before
    await check_books(db, shop.company_id)


async def test_expense_idempotent_replay(client, shop, db):
    general = await category_id(db, shop.company_id, "General Expenses")
    body = {"expense_category_id": general, "amount": 3, "date": "2026-11-20", "unique_id": "exp-1"}
    a = await client.post("/expenses", json=body, headers=shop.headers)
    b = await client.post("/expenses", json=body, headers=shop.headers)
    assert a.status_code == b.status_code == 200
    assert a.json() == b.json() and b.headers["Idempotent-Replayed"] == "true"
    assert (await counts(db, shop.company_id))["expenses"] == 1
    await check_books(db, shop.company_id)
