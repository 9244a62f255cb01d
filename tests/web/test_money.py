"""Money in and out, and returns, from the back office's pages over HTTP: a
customer's payment taken from their page (oldest invoices first, or as typed), a
supplier paid, an expense recorded pending and then approved and paid once, takings
paid into the bank, a sale's return refunded to a tender or to the account; who may
do each, CSRF and one-time tokens, messages beside the fields, the books after
each scenario."""

from __future__ import annotations

import re
from decimal import Decimal

import httpx
from sqlalchemy import func, select

from tests.factories import Shop, by_id
from tests.invariants import check_books, gl_balance
from tests.payments.test_payments import make_purchase, make_sale
from tests.web_helpers import (
    OWNER_PASSWORD,
    STAFF_PASSWORD,
    add_staff,
    csrf_of,
    form_token_of,
    owner_email,
    sign_in,
)
from tillbook.db import Database
from tillbook.models import AuditEvent, Expense, ExpenseCategory, Order, Payment

D = Decimal


async def as_owner(web: httpx.AsyncClient, db: Database, shop: Shop) -> None:
    r = await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    assert r.status_code == 303, r.text


def other_client(web: httpx.AsyncClient) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=web._transport, base_url="http://testserver")


async def as_staff(
    client: httpx.AsyncClient, db: Database, shop: Shop, role: str, warehouse_id=None
) -> None:
    r = await sign_in(client, await add_staff(db, shop, role, warehouse_id), STAFF_PASSWORD)
    assert r.status_code == 303, r.text


def tokens(html: str) -> dict[str, str]:
    return {"csrf": csrf_of(html), "form_token": form_token_of(html)}


async def balance(db: Database, shop: Shop, code: str) -> Decimal:
    return await db.read(lambda s: gl_balance(s, shop.company_id, code))


async def count(db: Database, model: type, shop: Shop) -> int:
    return int(
        await db.read(
            lambda s: s.scalar(
                select(func.count()).select_from(model).where(model.company_id == shop.company_id)
            )
        )
    )


async def order_of(db: Database, oid: int) -> Order:
    return await db.read(lambda s: by_id(s, Order, oid))


# --- payments ------------------------------------------------------------------------------


async def test_a_customer_payment_settles_the_oldest_invoices_first(
    web: httpx.AsyncClient, client: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    older = await make_sale(client, shop, date="2026-11-18")  # 14.00 due
    newer = await make_sale(client, shop, quantity=2, date="2026-11-19")  # 7.00 due
    await as_owner(web, db, shop)
    party = await web.get(f"/customers/{shop.customer_id}")
    assert f'href="/customers/{shop.customer_id}/payment"' in party.text
    page = await web.get(f"/customers/{shop.customer_id}/payment")
    assert page.status_code == 200 and f'name="alloc-{older}"' in page.text
    form = {
        **tokens(page.text),
        "warehouse_id": str(shop.warehouse_id),
        "amount": "17.00",
        "payment_mode_id": str(shop.cash_mode_id),
        "date": "2026-11-20",
        f"alloc-{older}": "",
        f"alloc-{newer}": "",
    }
    # Bad input: a message beside the field, nothing written.
    bad = await web.post(f"/customers/{shop.customer_id}/payment", data={**form, "amount": "ten"})
    assert bad.status_code == 422 and 'id="e-amount"' in bad.text
    assert await count(db, Payment, shop) == 0
    forged = await web.post(
        f"/customers/{shop.customer_id}/payment", data={**form, "csrf": "forged"}
    )
    assert forged.status_code == 403
    done = await web.post(f"/customers/{shop.customer_id}/payment", data=form)
    assert done.status_code == 303, done.text
    receipt_url = done.headers["location"]
    again = await web.post(f"/customers/{shop.customer_id}/payment", data=form)
    assert again.status_code == 303 and again.headers["location"] == receipt_url
    assert await count(db, Payment, shop) == 1
    assert (await order_of(db, older)).due_amount == D("0.00")
    assert (await order_of(db, newer)).due_amount == D("4.00")
    receipt = await web.get(receipt_url)
    assert receipt.status_code == 200 and "Payment received" in receipt.text
    assert re.search(r'id="amount">[^<]*17\.00', receipt.text)
    assert "data-print" in receipt.text and "/static/print.js" in receipt.text
    assert await balance(db, shop, "11101") == D("17.00")
    audited = await count(db, AuditEvent, shop)
    assert audited >= 1
    await check_books(db, shop.company_id)


async def test_allocations_typed_per_invoice_and_refused_beside_the_row(
    web: httpx.AsyncClient, client: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    older = await make_sale(client, shop, date="2026-11-18")
    newer = await make_sale(client, shop, quantity=2, date="2026-11-19")
    await as_owner(web, db, shop)
    page = await web.get(f"/customers/{shop.customer_id}/payment")
    form = {
        **tokens(page.text),
        "warehouse_id": str(shop.warehouse_id),
        "amount": "10.00",
        "payment_mode_id": str(shop.card_mode_id),
        f"alloc-{older}": "",
        f"alloc-{newer}": "8.00",
    }
    too_much = await web.post(f"/customers/{shop.customer_id}/payment", data=form)
    assert too_much.status_code == 422, too_much.text
    assert f'id="e-alloc-{newer}"' in too_much.text and "exceeds the due amount" in too_much.text
    assert await count(db, Payment, shop) == 0
    form[f"alloc-{newer}"] = "7.00"
    done = await web.post(f"/customers/{shop.customer_id}/payment", data=form)
    assert done.status_code == 303, done.text
    assert (await order_of(db, newer)).due_amount == D("0.00")
    assert (await order_of(db, older)).due_amount == D("14.00")
    payment = await db.read(
        lambda s: s.scalar(select(Payment).where(Payment.company_id == shop.company_id))
    )
    assert payment.unallocated_amount == D("3.00")
    await check_books(db, shop.company_id)


async def test_a_cashier_takes_a_customer_payment_but_pays_no_supplier(
    web: httpx.AsyncClient, client: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    sale = await make_sale(client, shop)
    await make_purchase(client, shop)
    await as_staff(web, db, shop, "cashier", shop.warehouse_id)
    party = await web.get(f"/customers/{shop.customer_id}")
    assert party.status_code == 200 and "Record a payment" in party.text
    page = await web.get(f"/customers/{shop.customer_id}/payment")
    assert page.status_code == 200 and f'name="alloc-{sale}"' in page.text
    done = await web.post(
        f"/customers/{shop.customer_id}/payment",
        data={
            **tokens(page.text),
            "warehouse_id": str(shop.warehouse_id),
            "amount": "14.00",
            "payment_mode_id": str(shop.cash_mode_id),
        },
    )
    assert done.status_code == 303, done.text
    assert (await web.get(done.headers["location"])).status_code == 200  # the receipt
    # Another branch, a supplier: refused by the server, not only hidden.
    other = await web.post(
        f"/customers/{shop.customer_id}/payment",
        data={
            **tokens(page.text),
            "warehouse_id": str(shop.other_warehouse_id),
            "amount": "1.00",
            "payment_mode_id": str(shop.cash_mode_id),
        },
    )
    assert other.status_code == 403
    supplier = await web.get(f"/suppliers/{shop.supplier_id}")
    assert "Record a payment" not in supplier.text
    assert (await web.get(f"/suppliers/{shop.supplier_id}/payment")).status_code == 403
    paid = await web.post(
        f"/suppliers/{shop.supplier_id}/payment",
        data={
            **tokens(page.text),
            "warehouse_id": str(shop.warehouse_id),
            "amount": "1.00",
            "payment_mode_id": str(shop.cash_mode_id),
        },
    )
    assert paid.status_code == 403
    assert (await web.get("/money-moves")).status_code == 403
    assert (await web.get("/expenses/new")).status_code == 403
    assert await count(db, Payment, shop) == 1  # the cashier's, and only that
    await check_books(db, shop.company_id)


async def test_a_manager_pays_a_supplier_and_an_accountant_may_not(
    web: httpx.AsyncClient, client: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await make_purchase(client, shop)
    await as_staff(web, db, shop, "manager", shop.warehouse_id)
    page = await web.get(f"/suppliers/{shop.supplier_id}/payment")
    assert page.status_code == 200 and "Payment to" in page.text
    done = await web.post(
        f"/suppliers/{shop.supplier_id}/payment",
        data={
            **tokens(page.text),
            "warehouse_id": str(shop.warehouse_id),
            "amount": "25.50",
            "payment_mode_id": str(shop.cash_mode_id),
        },
    )
    assert done.status_code == 303, done.text
    receipt = await web.get(done.headers["location"])
    assert "Payment made" in receipt.text
    async with other_client(web) as accountant:
        await as_staff(accountant, db, shop, "accountant")
        assert (await accountant.get(f"/suppliers/{shop.supplier_id}/payment")).status_code == 403
        assert (await accountant.get(done.headers["location"])).status_code == 200  # books.read
    await check_books(db, shop.company_id)


# --- expenses --------------------------------------------------------------------------------


async def first_category(db: Database, shop: Shop) -> int:
    return int(
        await db.read(
            lambda s: s.scalar(
                select(func.min(ExpenseCategory.id)).where(
                    ExpenseCategory.company_id == shop.company_id
                )
            )
        )
    )


async def test_the_rent_recorded_pending_then_approved_and_paid_once(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await as_owner(web, db, shop)
    listing = await web.get("/expenses")
    assert 'href="/expenses/new"' in listing.text
    page = await web.get("/expenses/new")
    assert page.status_code == 200
    form = {
        **tokens(page.text),
        "warehouse_id": str(shop.warehouse_id),
        "expense_category_id": str(await first_category(db, shop)),
        "amount": "900.00",
        "date": "2026-11-01",
        "payment_mode_id": "",
        "reference": "rent November",
    }
    bad = await web.post("/expenses/new", data={**form, "amount": "-5"})
    assert bad.status_code == 422 and 'id="e-amount"' in bad.text
    no_category = await web.post("/expenses/new", data={**form, "expense_category_id": ""})
    assert no_category.status_code == 422 and 'id="e-expense_category_id"' in no_category.text
    assert await count(db, Expense, shop) == 0
    done = await web.post("/expenses/new", data=form)
    assert done.status_code == 303, done.text
    expense_id = int(done.headers["location"].split("recorded=")[1])
    assert await balance(db, shop, "21100") == D("-900.00")
    await check_books(db, shop.company_id)

    listing = await web.get("/expenses")
    assert f'href="/expenses/{expense_id}/pay"' in listing.text
    pay = await web.get(f"/expenses/{expense_id}/pay")
    assert pay.status_code == 200 and "Approve and pay" in pay.text
    async with other_client(web) as cashier:
        await as_staff(cashier, db, shop, "cashier")
        assert (await cashier.get(f"/expenses/{expense_id}/pay")).status_code == 403
        home = await cashier.get("/account")
        r = await cashier.post(
            f"/expenses/{expense_id}/pay",
            data={"csrf": csrf_of(home.text), "payment_mode_id": "1"},
        )
        assert r.status_code == 403
    pay_form = {**tokens(pay.text), "payment_mode_id": "", "date": "2026-11-03"}
    unnamed = await web.post(f"/expenses/{expense_id}/pay", data=pay_form)
    assert unnamed.status_code == 422 and 'id="e-payment_mode_id"' in unnamed.text
    early = await web.post(
        f"/expenses/{expense_id}/pay",
        data={**pay_form, "payment_mode_id": str(shop.cash_mode_id), "date": "2026-10-01"},
    )
    assert early.status_code == 422 and 'id="e-date"' in early.text
    bank = re.search(r'<option value="(\d+)"[^>]*>Bank</option>', pay.text)
    assert bank, pay.text
    paid = await web.post(
        f"/expenses/{expense_id}/pay", data={**pay_form, "payment_mode_id": bank.group(1)}
    )
    assert paid.status_code == 303, paid.text
    shown = await web.get(f"/expenses/{expense_id}/pay")
    assert 'id="status">paid<' in shown.text and "Approve and pay" not in shown.text
    assert await balance(db, shop, "21100") == D("0.00")
    assert await balance(db, shop, "11110") == D("-900.00")
    # A second approval, from a form opened before the first was sent: refused,
    # nothing paid twice.
    twice = await web.post(
        f"/expenses/{expense_id}/pay",
        data={
            **tokens(early.text),
            "payment_mode_id": str(shop.cash_mode_id),
            "date": "2026-11-04",
        },
    )
    assert twice.status_code == 409 and "already paid" in twice.text
    assert await balance(db, shop, "11101") == D("0.00")
    await check_books(db, shop.company_id)


async def test_an_expense_paid_now(web: httpx.AsyncClient, db: Database, shop: Shop) -> None:
    await as_staff(web, db, shop, "manager", shop.warehouse_id)
    page = await web.get("/expenses/new")
    assert page.status_code == 200
    done = await web.post(
        "/expenses/new",
        data={
            **tokens(page.text),
            "warehouse_id": str(shop.warehouse_id),
            "expense_category_id": str(await first_category(db, shop)),
            "amount": "12.40",
            "date": "2026-11-02",
            "payment_mode_id": str(shop.cash_mode_id),
        },
    )
    assert done.status_code == 303, done.text
    assert await balance(db, shop, "11101") == D("-12.40")
    elsewhere = await web.post(
        "/expenses/new",
        data={
            **tokens(page.text),
            "warehouse_id": str(shop.other_warehouse_id),
            "expense_category_id": str(await first_category(db, shop)),
            "amount": "1.00",
            "date": "2026-11-02",
        },
    )
    assert elsewhere.status_code == 403
    await check_books(db, shop.company_id)


# --- cash and bank -------------------------------------------------------------------------


async def test_takings_paid_into_the_bank_from_the_browser(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await as_owner(web, db, shop)
    home = await web.get("/money-moves")
    assert home.status_code == 200 and 'href="/money-moves"' in home.text  # in the menu
    form = {
        **tokens(home.text),
        "warehouse_id": str(shop.warehouse_id),
        "from_payment_mode_id": str(shop.cash_mode_id),
        "to_payment_mode_id": str(shop.cash_mode_id),
        "amount": "300.00",
        "reference": "slip 4",
    }
    same = await web.post("/money-moves", data=form)
    assert same.status_code == 422 and 'id="e-to_payment_mode_id"' in same.text
    bank = re.search(r'<option value="(\d+)"[^>]*>Bank \(11110\)</option>', home.text)
    assert bank, home.text
    huge = await web.post(
        "/money-moves",
        data={**form, "to_payment_mode_id": bank.group(1), "amount": "1" + "0" * 30},
    )
    assert huge.status_code == 422 and 'id="e-amount"' in huge.text
    done = await web.post("/money-moves", data={**form, "to_payment_mode_id": bank.group(1)})
    assert done.status_code == 303, done.text
    again = await web.post("/money-moves", data={**form, "to_payment_mode_id": bank.group(1)})
    assert again.status_code == 303
    assert await balance(db, shop, "11110") == D("300.00")
    assert await balance(db, shop, "11101") == D("-300.00")
    listed = await web.get("/money-moves")
    assert "Money moved from Cash to Bank" in listed.text
    async with other_client(web) as manager:
        await as_staff(manager, db, shop, "manager", shop.other_warehouse_id)
        page = await manager.get("/money-moves")
        assert page.status_code == 200 and "Money moved" not in page.text  # another branch's
        fields = {k: v for k, v in form.items() if k not in ("csrf", "form_token")}
        r = await manager.post(
            "/money-moves",
            data={**tokens(page.text), **fields, "to_payment_mode_id": bank.group(1)},
        )
        assert r.status_code == 403
    await check_books(db, shop.company_id)


# --- returns -------------------------------------------------------------------------------


async def test_a_return_from_the_sales_page_to_cash_and_to_the_account(
    web: httpx.AsyncClient, client: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    sale = await client.post(
        "/sales",
        json={
            "user_id": shop.customer_id,
            "order_date": "2026-11-20",
            "product_items": [{"xid": shop.xid("apple"), "quantity": 3, "unit_price": 3.5}],
            "all_payments": [{"amount": "10.50", "payment_mode_id": "cash"}],
        },
        headers=shop.headers,
    )
    assert sale.status_code == 200, sale.text
    oid = sale.json()["order_id"]
    apple = shop.products["apple"]
    await as_owner(web, db, shop)
    detail = await web.get(f"/sales/{oid}")
    assert (
        f'href="/sales/{oid}/return"' in detail.text and f'href="/sales/{oid}/void"' in detail.text
    )
    page = await web.get(f"/sales/{oid}/return")
    assert page.status_code == 200 and f'name="qty-{apple}"' in page.text
    form = {**tokens(page.text), "refund_to": str(shop.cash_mode_id), f"qty-{apple}": "5"}
    over = await web.post(f"/sales/{oid}/return", data=form)
    assert over.status_code == 422 and f'id="e-qty-{apple}"' in over.text
    none = await web.post(f"/sales/{oid}/return", data={**form, f"qty-{apple}": ""})
    assert none.status_code == 422 and 'id="e-items"' in none.text
    odd = await web.post(f"/sales/{oid}/return", data={**form, f"qty-{apple}": "x"})
    assert odd.status_code == 422 and f'id="e-qty-{apple}"' in odd.text
    returned = await web.post(f"/sales/{oid}/return", data={**form, f"qty-{apple}": "1"})
    assert returned.status_code == 303, returned.text
    assert await balance(db, shop, "11101") == D("7.00")  # 10.50 in, 3.50 back
    after = await web.get(f"/sales/{oid}")
    assert 'id="returns"' in after.text and f'href="/sales/{oid}/void"' not in after.text
    page = await web.get(f"/sales/{oid}/return")
    to_account = await web.post(
        f"/sales/{oid}/return",
        data={**tokens(page.text), "refund_to": "account", f"qty-{apple}": "1"},
    )
    assert to_account.status_code == 303, to_account.text
    assert await balance(db, shop, "11500") == D("-3.50")  # a credit on the account
    assert await balance(db, shop, "11101") == D("7.00")
    async with other_client(web) as cashier:
        await as_staff(cashier, db, shop, "cashier", shop.warehouse_id)
        assert (await cashier.get(f"/sales/{oid}/return")).status_code == 403
        home = await cashier.get("/account")
        r = await cashier.post(
            f"/sales/{oid}/return", data={"csrf": csrf_of(home.text), f"qty-{apple}": "1"}
        )
        assert r.status_code == 403
    await check_books(db, shop.company_id)


async def test_a_voided_sale_offers_no_return(
    web: httpx.AsyncClient, client: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    oid = await make_sale(client, shop)
    await as_owner(web, db, shop)
    confirm = await web.get(f"/sales/{oid}/void")
    voided = await web.post(
        f"/sales/{oid}/void", data={**tokens(confirm.text), "reason": "rang up twice"}
    )
    assert voided.status_code == 303, voided.text
    detail = await web.get(f"/sales/{oid}")
    assert f'href="/sales/{oid}/return"' not in detail.text
    assert (await web.get(f"/sales/{oid}/return")).status_code == 409
    await check_books(db, shop.company_id)
