"""Documents in a foreign currency, books in the base (DESIGN §16, issue 26): sales,
purchases, payments settling at another rate, expenses and returns through the public
API; each journal line keeps its currency, foreign amount and rate; every entry
balances in the base; realised differences land on 71100 / 71200."""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
from decimal import Decimal

import pytest
from sqlalchemy import func, select

from tests.factories import by_id
from tests.invariants import check_books, gl_balance
from tillbook.auth.actor import Actor
from tillbook.auth.context import acting_for
from tillbook.currency import rates
from tillbook.models import Account, JournalEntry, JournalLine, Order, User
from tillbook.payments import expenses, setup
from tillbook.payments.schemas import ExpensePaymentIn
from tillbook.reports import periods
from tillbook.reports.journal import export_journal
from tillbook.reports.ledgers import party_statement_page

D = Decimal
SYSTEM = Actor.system()


async def set_up(db, shop, *pairs):
    """Enable EUR and set (date, rate) pairs for it."""

    async def run(uow):
        await rates.enable(uow.session, shop.company_id, "EUR", SYSTEM)
        for day, rate in pairs:
            await rates.set_rate(
                uow.session, shop.company_id, "EUR", dt.date.fromisoformat(day), D(rate), SYSTEM
            )

    await db.unit(run)


async def lines_of(db, entry_id):
    async def run(s):
        rows = await s.execute(
            select(
                Account.code,
                JournalLine.debit,
                JournalLine.credit,
                JournalLine.currency,
                JournalLine.amount_foreign,
                JournalLine.rate,
            )
            .join(Account, Account.id == JournalLine.account_id)
            .where(JournalLine.entry_id == entry_id)
            .order_by(JournalLine.id)
        )
        return [tuple(r) for r in rows]

    return await db.read(run)


async def order(db, order_id):
    return await db.read(lambda s: by_id(s, Order, order_id))


def sale_body(shop, *, quantity=3, price="10.00", date="2026-11-10", **extra):
    return {
        "user_id": shop.customer_id,
        "order_date": date,
        "product_items": [
            {"xid": shop.products["apple"], "quantity": quantity, "unit_price": price}
        ],
        **extra,
    }


async def test_a_credit_sale_in_euros_is_booked_in_the_base(client, shop, db):
    await set_up(db, shop, ("2026-11-01", "1.10"), ("2026-11-15", "1.20"))
    r = await client.post("/sales", json=sale_body(shop, currency="eur"), headers=shop.headers)
    assert r.status_code == 200, r.text
    out = r.json()
    # the rate in force on the sale's date (1 Nov's), not the later one
    assert out["currency"] == "EUR" and D(out["exchange_rate"]) == D("1.1")
    assert out["due_amount"] == "30.00" and out["base_total"] == "33.00"
    sale = await order(db, out["order_id"])
    assert (sale.total, sale.base_due) == (D("30.00"), D("33.00"))
    lines = await lines_of(db, sale.journal_entry_id)
    ar = next(line for line in lines if line[0] == "11500")
    assert ar[1:] == (D("33.00"), D("0.00"), "EUR", D("30.00"), D("1.10000000"))
    revenue = next(line for line in lines if line[0] == "41100")
    assert revenue[2] == D("33.00") and revenue[3] == "EUR"
    # the FIFO cost stays in the base, without a currency
    cost = [line for line in lines if line[0] in ("51100", "11700")]
    assert cost and all(line[3] is None for line in cost)
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "11500")) == D("33.00")
    await check_books(db, shop.company_id)


async def test_rounding_of_a_many_line_sale_lands_on_revenue(client, shop, db):
    await set_up(db, shop, ("2026-11-01", "1.3333"))
    body = {
        "user_id": shop.customer_id,
        "order_date": "2026-11-10",
        "product_items": [
            {
                "xid": shop.products["apple"],
                "quantity": 1,
                "unit_price": "0.10",
                "tax_id": shop.tax10_id,
            },
            {
                "xid": shop.products["water"],
                "quantity": 1,
                "unit_price": "0.10",
                "tax_id": shop.tax10_id,
            },
        ],
        "shipping": "0.07",
        "currency": "EUR",
        "all_payments": [
            {"amount": "0.11", "payment_mode_id": shop.cash_mode_id},
            {"amount": "0.11", "payment_mode_id": shop.card_mode_id},
        ],
    }
    r = await client.post("/sales", json=body, headers=shop.headers)
    assert r.status_code == 200, r.text
    sale = await order(db, r.json()["order_id"])
    lines = await lines_of(db, sale.journal_entry_id)
    debits = sum(line[1] for line in lines)
    credits = sum(line[2] for line in lines)
    assert debits == credits
    # every money line but revenue is exactly round(foreign × rate)
    for code, debit, credit, currency, foreign, rate in lines:
        if currency and code != "41100":
            assert debit + credit == (foreign * rate).quantize(D("0.01")), code
    await check_books(db, shop.company_id)


async def test_payment_at_another_rate_books_the_exchange_difference(client, shop, db):
    await set_up(db, shop, ("2026-11-01", "1.10"), ("2026-11-20", "1.05"))
    sale = (
        await client.post("/sales", json=sale_body(shop, currency="EUR"), headers=shop.headers)
    ).json()
    # half now at 1.05: 15 EUR of an invoice carried at 33.00 for 30 EUR
    r = await client.post(
        "/payments",
        headers=shop.headers,
        json={
            "user_id": shop.customer_id,
            "payment_type": "in",
            "amount": "15.00",
            "payment_mode_id": shop.cash_mode_id,
            "date": "2026-11-21",
            "currency": "EUR",
            "invoices": [{"order_id": sale["order_id"], "amount": "15.00"}],
        },
    )
    assert r.status_code == 200, r.text
    assert r.json()["currency"] == "EUR" and r.json()["base_amount"] == "15.75"
    row = await order(db, sale["order_id"])
    assert (row.due_amount, row.base_due) == (D("15.00"), D("16.50"))
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "71200")) == D("0.75")
    # the rest at an explicit rate above the invoice's: a gain, and nothing left in 11500
    r = await client.post(
        "/payments",
        headers=shop.headers,
        json={
            "user_id": shop.customer_id,
            "payment_type": "in",
            "amount": "15.00",
            "payment_mode_id": shop.cash_mode_id,
            "date": "2026-11-22",
            "currency": "EUR",
            "exchange_rate": "1.2",
            "invoices": [{"order_id": sale["order_id"], "amount": "15"}],
        },
    )
    assert r.status_code == 200, r.text
    row = await order(db, sale["order_id"])
    assert (row.due_amount, row.base_due, row.payment_status) == (D("0"), D("0"), "paid")
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "11500")) == D("0")
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "71100")) == D("-1.50")
    await check_books(db, shop.company_id)


async def test_a_payment_in_another_currency_than_its_invoice_is_refused(client, shop, db):
    await set_up(db, shop, ("2026-11-01", "1.10"))
    sale = (
        await client.post("/sales", json=sale_body(shop, currency="EUR"), headers=shop.headers)
    ).json()
    r = await client.post(
        "/payments",
        headers=shop.headers,
        json={
            "user_id": shop.customer_id,
            "payment_type": "in",
            "amount": "5.00",
            "payment_mode_id": shop.cash_mode_id,
            "date": "2026-11-21",
            "invoices": [{"order_id": sale["order_id"], "amount": "5.00"}],
        },
    )
    assert r.status_code == 422
    assert "invoices.0.order_id" in r.json()["errors"]
    assert (await order(db, sale["order_id"])).due_amount == D("30.00")
    await check_books(db, shop.company_id)


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"currency": "XYZ"}, "currency"),
        ({"currency": "GBP"}, "currency"),  # a real code, not enabled
        ({"currency": "EUR", "exchange_rate": "0"}, "exchange_rate"),
        ({"currency": "EUR", "exchange_rate": "-1"}, "exchange_rate"),
        ({"currency": "EUR", "exchange_rate": "1.123456789"}, "exchange_rate"),
        ({"currency": "EUR", "exchange_rate": "1e20"}, "exchange_rate"),
        ({"exchange_rate": "1.5"}, "exchange_rate"),  # a rate for the base currency
        ({"currency": "EUR", "order_date": "2026-10-01"}, "currency"),  # no rate yet
    ],
)
async def test_bad_currency_input_is_a_422_naming_the_field(client, shop, db, extra, field):
    await set_up(db, shop, ("2026-11-01", "1.10"))
    r = await client.post("/sales", json=sale_body(shop, **extra), headers=shop.headers)
    assert r.status_code == 422, r.text
    body = r.json()
    assert body["status"] == "error" and field in str(body), body
    count = await db.read(
        lambda s: s.scalar(
            select(Order.id)
            .where(Order.company_id == shop.company_id, Order.order_type == "sales")
            .limit(1)
        )
    )
    assert count is None


async def test_the_base_currency_named_is_a_base_sale(client, shop, db):
    r = await client.post("/sales", json=sale_body(shop, currency="USD"), headers=shop.headers)
    assert r.status_code == 200, r.text
    assert "currency" not in r.json()
    assert (await order(db, r.json()["order_id"])).currency is None


async def test_a_purchase_in_euros_values_stock_line_by_line(client, shop, db):
    await set_up(db, shop, ("2026-11-01", "1.0837"))
    body = {
        "user_id": shop.supplier_id,
        "order_date": "2026-11-05",
        "currency": "EUR",
        "product_items": [
            {"xid": shop.products["tea"], "quantity": 3, "unit_price": "4.33"},
            {"xid": shop.products["water"], "quantity": 7, "unit_price": "0.71"},
        ],
        "all_payments": [{"amount": "5.01", "payment_mode_id": shop.cash_mode_id}],
    }
    r = await client.post("/purchases", json=body, headers=shop.headers)
    assert r.status_code == 200, r.text
    out = r.json()
    # 12.99 EUR -> 14.08; 4.97 EUR -> 5.39: the stock is worth 19.47 in the base
    assert out["currency"] == "EUR" and out["base_total"] == "19.47"
    assert out["due_amount"] == "12.95" and out["base_due"] == str(D("19.47") - D("5.43"))
    purchase = await order(db, out["purchase_id"])
    lines = await lines_of(db, purchase.journal_entry_id)
    assert ("11700", D("19.47"), D("0.00")) == lines[0][:3]
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "21100")) == D("-14.04")
    await check_books(db, shop.company_id)

    # paid a month later at 1.10 (dearer euros): a loss of 12.95 × 1.10 − 14.04 = 0.21
    await set_up_more(db, shop, ("2026-11-25", "1.10"))
    r = await client.post(
        "/payments",
        headers=shop.headers,
        json={
            "user_id": shop.supplier_id,
            "payment_type": "out",
            "amount": "12.95",
            "payment_mode_id": shop.cash_mode_id,
            "date": "2026-11-25",
            "currency": "EUR",
            "invoices": [{"order_id": out["purchase_id"], "amount": "12.95"}],
        },
    )
    assert r.status_code == 200, r.text
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "21100")) == D("0")
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "71200")) == D("0.21")
    await check_books(db, shop.company_id)


async def set_up_more(db, shop, *pairs):
    async def run(uow):
        for day, rate in pairs:
            await rates.set_rate(
                uow.session, shop.company_id, "EUR", dt.date.fromisoformat(day), D(rate), SYSTEM
            )

    await db.unit(run)


async def test_a_pending_expense_in_euros_paid_later_at_another_rate(client, shop, db):
    await set_up(db, shop, ("2026-11-01", "1.10"), ("2026-11-20", "1.00"))
    modes = await client.get("/payment-modes", headers=shop.headers)
    r = await client.post(
        "/expenses",
        headers=shop.headers,
        json={
            "expense_category_id": await _a_category(client, shop),
            "amount": "100.00",
            "date": "2026-11-05",
            "currency": "EUR",
        },
    )
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["expense_status"] == "pending" and out["base_amount"] == "110.00"
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "21100")) == D("-110.00")
    await check_books(db, shop.company_id)
    assert modes.status_code == 200
    paid = await pay_expense(
        db, shop, out["expense_id"], {"payment_mode_id": shop.cash_mode_id, "date": "2026-11-21"}
    )
    assert paid["expense_status"] == "paid"
    # 21100 gives up 110.00; the cash paid is worth 100.00 today: a gain of 10.00
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "21100")) == D("0")
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "11101")) == D("-100.00")
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "71100")) == D("-10.00")
    await check_books(db, shop.company_id)


async def pay_expense(db, shop, expense_id, body):
    """Approve and pay, as the back office does (for the shop's first branch)."""

    async def run(uow):
        admin = await uow.session.scalar(
            select(User.id).where(User.company_id == shop.company_id, User.user_type == "staff")
        )
        key = await acting_for(uow.session, shop.company_id, shop.warehouse_id, admin)
        return await expenses.pay_expense(
            uow, key, expense_id, ExpensePaymentIn.model_validate(body)
        )

    return await db.unit(run)


async def _a_category(client, shop):
    r = await client.get("/expense-categories", headers=shop.headers)
    assert r.status_code == 200, r.text
    return r.json()["data"][0]["id"]


async def test_returns_against_a_foreign_invoice_use_its_rate(client, shop, db):
    await set_up(db, shop, ("2026-11-01", "1.10"), ("2026-11-15", "1.30"))
    sale = (
        await client.post("/sales", json=sale_body(shop, currency="EUR"), headers=shop.headers)
    ).json()
    # one of three back, dated when the rate is 1.30: credited at the invoice's 1.10
    body = {
        "user_id": shop.customer_id,
        "order_date": "2026-11-16",
        "invoice_number": sale["invoice_number"],
        "items": [{"product_id": shop.products["apple"], "quantity": 1, "unit_price": "10.00"}],
    }
    r = await client.post("/sales-returns", json=body, headers=shop.headers)
    assert r.status_code == 200, r.text
    row = await order(db, sale["order_id"])
    assert (row.due_amount, row.base_due) == (D("20.00"), D("22.00"))
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "11500")) == D("22.00")
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "41200")) == D("11.00")
    await check_books(db, shop.company_id)
    # the rest back: nothing left owing, in either currency
    body["items"][0]["quantity"] = 2
    r = await client.post("/sales-returns", json=body, headers=shop.headers)
    assert r.status_code == 200, r.text
    row = await order(db, sale["order_id"])
    assert (row.due_amount, row.base_due) == (D("0.00"), D("0.00"))
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "11500")) == D("0")
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "71100")) == D("0")
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "71200")) == D("0")
    await check_books(db, shop.company_id)


@pytest.mark.parametrize(
    ("extra", "field"),
    [({"currency": "USD"}, "currency"), ({"exchange_rate": "1.3"}, "exchange_rate")],
)
async def test_a_return_in_another_currency_or_rate_than_its_invoice(
    client, shop, db, extra, field
):
    await set_up(db, shop, ("2026-11-01", "1.10"))
    sale = (
        await client.post("/sales", json=sale_body(shop, currency="EUR"), headers=shop.headers)
    ).json()
    body = {
        "user_id": shop.customer_id,
        "order_date": "2026-11-16",
        "invoice_number": sale["invoice_number"],
        "items": [{"product_id": shop.products["apple"], "quantity": 1, "unit_price": "10.00"}],
        **extra,
    }
    r = await client.post("/sales-returns", json=body, headers=shop.headers)
    assert r.status_code == 422 and field in r.json()["errors"], r.text
    assert (await order(db, sale["order_id"])).due_amount == D("30.00")


async def test_a_foreign_cash_sale_refunded_and_a_purchase_returned(client, shop, db):
    await set_up(db, shop, ("2026-11-01", "0.9"), ("2026-11-10", "0.95"))
    sale = await client.post(
        "/sales",
        json=sale_body(
            shop,
            currency="EUR",
            date="2026-11-02",
            all_payments=[{"amount": "30.00", "payment_mode_id": shop.cash_mode_id}],
        ),
        headers=shop.headers,
    )
    assert sale.status_code == 200, sale.text
    r = await client.post(
        "/sales-returns",
        headers=shop.headers,
        json={
            "user_id": shop.customer_id,
            "order_date": "2026-11-12",
            "invoice_number": sale.json()["invoice_number"],
            "items": [{"product_id": shop.products["apple"], "quantity": 2, "unit_price": "10"}],
            "all_payments": [{"amount": "20.00", "payment_mode_id": shop.cash_mode_id}],
        },
    )
    assert r.status_code == 200, r.text
    # 30 EUR in at 0.90, 20 EUR out at the invoice's 0.90: 9.00 left in the drawer
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "11101")) == D("9.00")
    purchase = await client.post(
        "/purchases",
        headers=shop.headers,
        json={
            "user_id": shop.supplier_id,
            "order_date": "2026-11-03",
            "currency": "EUR",
            "product_items": [{"xid": shop.products["tea"], "quantity": 4, "unit_price": "2.50"}],
        },
    )
    assert purchase.status_code == 200, purchase.text
    r = await client.post(
        "/purchase-returns",
        headers=shop.headers,
        json={
            "user_id": shop.supplier_id,
            "order_date": "2026-11-12",
            "invoice_number": purchase.json()["invoice_number"],
            "items": [{"product_id": shop.products["tea"], "quantity": 4, "unit_price": "2.50"}],
        },
    )
    assert r.status_code == 200, r.text
    row = await order(db, purchase.json()["purchase_id"])
    assert (row.due_amount, row.base_due) == (D("0.00"), D("0.00"))
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "21100")) == D("0")
    await check_books(db, shop.company_id)


async def test_mixed_currency_journal_passes_bean_check_and_hledger(client, shop, db, tmp_path):
    """The exported journal weighs each foreign line at the base it was booked at
    (``100.00 EUR @@ 108.50 USD``): beancount and hledger both find it balanced."""
    loader = pytest.importorskip("beancount.loader")
    await set_up(db, shop, ("2026-11-01", "1.0837"), ("2026-11-20", "1.1213"))
    sale = (
        await client.post(
            "/sales", json=sale_body(shop, currency="EUR", price="9.99"), headers=shop.headers
        )
    ).json()
    await client.post(
        "/payments",
        headers=shop.headers,
        json={
            "user_id": shop.customer_id,
            "payment_type": "in",
            "amount": "29.97",
            "payment_mode_id": shop.cash_mode_id,
            "date": "2026-11-21",
            "currency": "EUR",
            "invoices": [{"order_id": sale["order_id"], "amount": "29.97"}],
        },
    )
    await client.post(
        "/purchases",
        headers=shop.headers,
        json={
            "user_id": shop.supplier_id,
            "order_date": "2026-11-03",
            "currency": "EUR",
            "product_items": [{"xid": shop.products["tea"], "quantity": 3, "unit_price": "3.33"}],
        },
    )
    await client.post("/sales", json=sale_body(shop, quantity=1), headers=shop.headers)
    await check_books(db, shop.company_id)

    async def export(fmt):
        async def run(s):
            return [line async for line in export_journal(s, shop.company_id, fmt)]

        return "\n".join(await db.read(run)) + "\n"

    beancount_text = await export("beancount")
    assert " EUR @@ " in beancount_text and "71100" in beancount_text
    _entries, errors, _options = loader.load_string(beancount_text)
    assert errors == [], errors
    hledger = shutil.which("hledger")
    if hledger is None:
        pytest.fail("hledger is not installed (.ci/run installs Debian's hledger)")
    journal = tmp_path / "books.journal"
    journal.write_text(await export("hledger"))
    done = subprocess.run([hledger, "-f", str(journal), "check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    # in the base, cost-valued, the receivable is cleared and the gain is on 71100
    done = subprocess.run(
        [hledger, "-f", str(journal), "balance", "--cost", "-N", "11500|71100"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    gain = (29.97 * 1.1213) - round(29.97 * 1.0837, 2)
    assert f"{-round(gain, 2):.2f} USD" in done.stdout, done.stdout


async def test_a_foreign_sale_voided_leaves_nothing_carried(client, shop, db):
    await set_up(db, shop, ("2026-11-01", "1.10"))
    today = dt.date.today().isoformat()
    sale = (
        await client.post(
            "/sales",
            json=sale_body(
                shop,
                currency="EUR",
                date=today,
                all_payments=[{"amount": "12.00", "payment_mode_id": shop.cash_mode_id}],
            ),
            headers=shop.headers,
        )
    ).json()
    r = await client.post(
        f"/sales/{sale['order_id']}/void", json={"reason": "wrong till"}, headers=shop.headers
    )
    assert r.status_code == 200, r.text
    row = await order(db, sale["order_id"])
    assert (row.due_amount, row.base_due) == (D("0"), D("0"))
    for code in ("11500", "11101", "41100"):
        assert await db.read(lambda s, code=code: gl_balance(s, shop.company_id, code)) == D("0")
    await check_books(db, shop.company_id)


async def test_closing_revalues_open_foreign_invoices_and_reverses_next_day(client, shop, db):
    await set_up(db, shop, ("2026-10-01", "1.10"), ("2026-10-31", "1.25"), ("2026-11-10", "1.20"))
    sale = (
        await client.post(
            "/sales", json=sale_body(shop, currency="EUR", date="2026-10-05"), headers=shop.headers
        )
    ).json()
    purchase = (
        await client.post(
            "/purchases",
            headers=shop.headers,
            json={
                "user_id": shop.supplier_id,
                "order_date": "2026-10-06",
                "currency": "EUR",
                "product_items": [{"xid": shop.products["tea"], "quantity": 2, "unit_price": "10"}],
            },
        )
    ).json()
    done = await periods.close(db, shop.company_id, dt.date(2026, 10, 31))
    summary = done["revaluation"]
    # receivable 30 EUR: 33.00 -> 37.50 (+4.50 gain); payable 20 EUR: 22.00 -> 25.00 (-3.00)
    assert summary["by_currency"] == [
        {"currency": "EUR", "rate": "1.25000000", "unrealised": "1.50"}
    ]
    assert len(summary["entries"]) == 4

    async def balance_on(code, day):
        async def run(s):
            stmt = (
                select(func.coalesce(func.sum(JournalLine.debit - JournalLine.credit), 0))
                .join(Account, Account.id == JournalLine.account_id)
                .join(JournalEntry, JournalEntry.id == JournalLine.entry_id)
                .where(
                    JournalLine.company_id == shop.company_id,
                    Account.code == code,
                    JournalEntry.entry_date <= day,
                )
            )
            return D(await s.scalar(stmt))

        return await db.read(run)

    october = dt.date(2026, 10, 31)
    assert await balance_on("11500", october) == D("37.50")
    assert await balance_on("21100", october) == D("-25.00")
    assert await balance_on("71100", october) == D("-4.50")
    assert await balance_on("71200", october) == D("3.00")
    # the next day, back at the carried values; the invoices themselves untouched
    assert await balance_on("11500", dt.date(2026, 11, 1)) == D("33.00")
    assert (await order(db, sale["order_id"])).base_due == D("33.00")
    assert (await order(db, purchase["purchase_id"])).base_due == D("22.00")
    # paid in November at 1.20: the whole realised difference from the invoice's rate
    r = await client.post(
        "/payments",
        headers=shop.headers,
        json={
            "user_id": shop.customer_id,
            "payment_type": "in",
            "amount": "30.00",
            "payment_mode_id": shop.cash_mode_id,
            "date": "2026-11-12",
            "currency": "EUR",
            "invoices": [{"order_id": sale["order_id"], "amount": "30.00"}],
        },
    )
    assert r.status_code == 200, r.text
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "11500")) == D("0")
    # 4.50 unrealised, reversed, then 3.00 realised
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "71100")) == D("-3.00")
    await check_books(db, shop.company_id)


async def test_a_statement_shows_foreign_lines_and_open_invoices_per_currency(client, shop, db):
    await set_up(db, shop, ("2026-11-01", "1.10"))
    await client.post("/sales", json=sale_body(shop, currency="EUR"), headers=shop.headers)
    await client.post("/sales", json=sale_body(shop, quantity=1), headers=shop.headers)
    page = await db.read(lambda s: party_statement_page(s, shop.company_id, shop.customer_id))
    foreign = [line for line in page["lines"] if "currency" in line]
    assert len(foreign) == 1 and foreign[0]["amount_foreign"] == "30.00"
    assert foreign[0]["debit"] == "33.00" and foreign[0]["rate"] == "1.10000000"
    assert page["closing_balance"] == "43.00"  # 33.00 + one base sale of 10.00
    assert page["open_by_currency"] == [
        {"currency": "EUR", "due": "30.00", "base_carried": "33.00"}
    ]


async def test_a_taxed_purchase_in_euros_and_its_return(client, shop, db):
    await set_up(db, shop, ("2026-11-01", "1.1"))
    r = await client.post(
        "/purchases",
        headers=shop.headers,
        json={
            "user_id": shop.supplier_id,
            "order_date": "2026-11-03",
            "currency": "EUR",
            "product_items": [
                {
                    "xid": shop.products["tea"],
                    "quantity": 3,
                    "unit_price": "3.33",
                    "tax_id": shop.tax10_id,
                }
            ],
        },
    )
    assert r.status_code == 200, r.text
    # 9.99 EUR net -> 10.99; tax 1.00 EUR -> 1.10; payable 12.09
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "11700")) > 0
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "11800")) == D("1.10")
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "21100")) == D("-12.09")
    back = await client.post(
        "/purchase-returns",
        headers=shop.headers,
        json={
            "user_id": shop.supplier_id,
            "order_date": "2026-11-04",
            "invoice_number": r.json()["invoice_number"],
            "items": [{"product_id": shop.products["tea"], "quantity": 3, "unit_price": "3.33"}],
        },
    )
    assert back.status_code == 200, back.text
    for code in ("11800", "21100"):
        assert await db.read(lambda s, code=code: gl_balance(s, shop.company_id, code)) == D("0")
    await check_books(db, shop.company_id)


async def test_foreign_cash_at_the_till_change_in_the_base_and_a_drawer_per_currency(
    client, shop, db
):
    """A border shop: a base-currency sale paid with euro notes at the day's rate, the
    change in dollars; the Z report counts the euro drawer in euros; the close of the
    period revalues the euros in the drawer."""
    today = dt.date.today()
    await set_up(db, shop, (today.isoformat(), "1.10"))

    async def add_mode(uow):
        mode, _account = await setup.add_payment_mode(
            uow.session,
            shop.company_id,
            None,
            code="eur-cash",
            name="Euro notes",
            account_code=None,
            create_account=True,
            currency="EUR",
        )
        return mode.id

    await db.unit(add_mode)
    shift = await client.post(
        "/shifts", json={"opening_float": "20.00", "register": "border"}, headers=shop.headers
    )
    sid = shift.json()["data"]["id"]
    body = sale_body(
        shop,
        quantity=1,
        price="32.50",
        date=today.isoformat(),
        all_payments=[
            {"payment_mode_id": "eur-cash", "amount": "32.50", "foreign_amount": "30.00"}
        ],
    )
    r = await client.post("/sales", json=body, headers=shop.headers)
    assert r.status_code == 200, r.text
    assert r.json()["payment_status"] == "paid" and "currency" not in r.json()
    lines = await lines_of(db, (await order(db, r.json()["order_id"])).journal_entry_id)
    euros = next(line for line in lines if line[3] == "EUR")
    assert euros[1:] == (D("33.00"), D("0.00"), "EUR", D("30.00"), D("1.10000000"))
    change = next(line for line in lines if line[0] == "11101")
    assert change[2] == D("0.50")  # the change, out of the dollar drawer

    # not enough euros for what they pay: refused, nothing written
    short = sale_body(
        shop,
        quantity=1,
        price="40.00",
        date=today.isoformat(),
        all_payments=[
            {"payment_mode_id": "eur-cash", "amount": "40.00", "foreign_amount": "30.00"}
        ],
    )
    r = await client.post("/sales", json=short, headers=shop.headers)
    assert r.status_code == 422 and "all_payments.0.foreign_amount" in r.json()["errors"]

    report = (await client.get(f"/shifts/{sid}", headers=shop.headers)).json()["data"]
    drawers = {row["code"]: row for row in report["expected"]}
    assert drawers["eur-cash"]["expected"] == "30.00" and drawers["eur-cash"]["currency"] == "EUR"
    assert drawers["cash"]["expected"] == "19.50"  # the float less the change

    closed = await client.post(
        f"/shifts/{sid}/close",
        json={
            "counted": [
                {"payment_mode_id": "cash", "amount": "19.50"},
                {"payment_mode_id": "eur-cash", "amount": "29.00"},
            ]
        },
        headers=shop.headers,
    )
    assert closed.status_code == 200, closed.text
    assert closed.json()["data"]["over_short"] == "-1.10"  # one euro short at 1.10
    await check_books(db, shop.company_id)

    # the euros left (29) revalued when the period closes at 1.20: +2.90
    await set_up_more(db, shop, (today.isoformat(), "1.20"))
    done = await periods.close(db, shop.company_id, today)
    assert done["revaluation"]["by_currency"] == [
        {"currency": "EUR", "rate": "1.20000000", "unrealised": "2.90"}
    ]
    await check_books(db, shop.company_id)
