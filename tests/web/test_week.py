"""A week of a shop run from the back office in a real browser, as its owner would:
a purchase order placed and received in two deliveries (one line with its batch
number and expiry), the supplier paid from their page, credit sales rung up by the
till through the public API, the customer's payment taken (at phone width, as at
the counter), a refund in cash, the rent recorded pending then approved and paid,
a stocktake with differences, a price change, the takings paid into the bank, the
books closed. Then the books themselves: the trial balance balances, every branch's
stock at cost equals its inventory account (11700), the invariants hold and the
exported journal passes ``bean-check``.

Playwright drives the system's Chromium against ``tillbook serve`` in its own
process (the same fixture as ``tests/web/test_browser.py``); skipped, with the
reason, when no Chromium executable is found."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import httpx
import pytest

from tests.cli_run import Run, cli_run  # noqa: F401  (the fixture)
from tests.factories import Shop
from tests.invariants import check_books, gl_balance
from tests.live_server import CHROMIUM, needs_chromium
from tests.web_helpers import OWNER_PASSWORD, owner_email
from tillbook.db import Database
from tillbook.ledger import chart

pytestmark = needs_chromium
D = Decimal
WIDE = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


def _amount(text: str) -> Decimal:
    return D(text.strip().replace(",", ""))


async def test_a_week_of_a_shop_in_the_browser(
    server: str,
    db: Database,
    shop: Shop,
    cli_run: Run,  # noqa: F811
    tmp_path: Path,
) -> None:
    from playwright.async_api import Page, async_playwright, expect

    email = await owner_email(db, shop)
    wh = shop.warehouse_id
    today = dt.date.today().isoformat()
    api = f"{server}/api/v1/public"
    shots = tmp_path / "screens"
    shots.mkdir()
    # Every screen the week went through, opened again at phone width at the end.
    seen: list[str] = []

    async def visit(page: Page, path: str) -> None:
        response = await page.goto(f"{server}{path}")
        assert response is not None and response.status == 200, (path, response)
        seen.append(path)

    def here(page: Page) -> str:
        return page.url.removeprefix(server)

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = await browser.new_page(viewport=WIDE)
        failures: list[str] = []
        page.on(
            "response",
            lambda r: failures.append(f"{r.status} {r.url}") if r.status >= 500 else None,
        )
        await page.goto(f"{server}/login")
        await page.get_by_label("Email").fill(email)
        await page.get_by_label("Password").fill(OWNER_PASSWORD)
        await page.get_by_role("button", name="Sign in").click()
        await page.wait_for_url(f"{server}/")

        # Monday: a purchase order for the supplier, saved as a draft, then ordered.
        await visit(page, "/purchase-orders")
        await page.get_by_role("link", name="New purchase order").click()
        await page.get_by_label("For", exact=True).select_option(str(wh))
        await page.get_by_role("button", name="Show").click()
        await page.get_by_label("Supplier", exact=True).select_option(label="Sam Supplier")
        await page.get_by_label("Quantity of Apple juice").fill("12")
        await page.get_by_label("Unit cost of Apple juice").fill("2.00")
        await page.get_by_label("Quantity of Rare tea").fill("6")
        await page.get_by_label("Unit cost of Rare tea").fill("5.00")
        await page.get_by_role("button", name="Save the draft").click()
        await page.wait_for_url(f"{server}/purchase-orders/*")
        po = here(page)
        seen.append(po)
        assert await page.locator("#po-status").inner_text() == "draft"
        await page.get_by_role("button", name="Mark as ordered").click()
        await expect(page.locator("#po-status")).to_have_text("ordered")

        # Tuesday: the apple juice comes, with its batch number and expiry...
        await page.get_by_role("link", name="Receive a delivery…").click()
        seen.append(here(page))
        await page.get_by_label("Supplier's invoice number").fill("SUP-W1")
        await page.get_by_label("Quantity received of Apple juice").fill("12")
        await page.get_by_label("Unit cost of Apple juice").fill("2.00")
        await page.get_by_label("Batch number of Apple juice").fill("LOT-A1")
        await page.get_by_label("Expiry date of Apple juice").fill("2027-06-30")
        # the form offers everything still to come; the tea is not in this delivery
        tea_offered = await page.get_by_label("Quantity received of Rare tea").input_value()
        assert D(tea_offered) == 6, tea_offered
        await page.get_by_label("Quantity received of Rare tea").fill("")
        await page.get_by_role("button", name="Receive", exact=True).click()
        await page.wait_for_url(f"{server}/purchases/*")
        seen.append(here(page))
        await visit(page, f"/stock/products/{shop.products['apple']}")
        batch = await page.locator("tr", has_text="LOT-A1").inner_text()
        assert "2027-06-30" in batch and "12" in batch, batch
        await visit(page, po)
        assert await page.locator("#po-status").inner_text() == "partially received"
        # ... and on Wednesday the tea.
        await page.get_by_role("link", name="Receive a delivery…").click()
        await page.get_by_label("Supplier's invoice number").fill("SUP-W2")
        await page.get_by_label("Quantity received of Rare tea").fill("6")
        await page.get_by_label("Unit cost of Rare tea").fill("5.00")
        await page.get_by_role("button", name="Receive", exact=True).click()
        await page.wait_for_url(f"{server}/purchases/*")
        await visit(page, po)
        assert await page.locator("#po-status").inner_text() == "received"
        assert await page.locator("#po-receipts tr").count() == 2

        # The supplier paid from their page, by bank transfer: 12 x 2.00 + 6 x 5.00.
        await page.get_by_role("link", name="Sam Supplier").click()
        seen.append(here(page))
        await page.get_by_role("link", name="Record a payment").click()
        seen.append(here(page))
        if await page.get_by_label("Branch", exact=True).count():
            await page.get_by_label("Branch", exact=True).select_option(str(wh))
            await page.get_by_role("button", name="Show its invoices").click()
        assert _amount(await page.locator("#balance").inner_text()) == D("54.00")
        await page.get_by_label("Amount").fill("54.00")
        await page.get_by_label("Paid by").select_option(label="Bank")
        await page.get_by_role("button", name="Record the payment").click()
        await page.wait_for_url(f"{server}/payments/*")
        seen.append(here(page))

        # Thursday: the till sells on credit to a regular, through the public API.
        sale = httpx.post(
            f"{api}/sales",
            headers=shop.headers,
            json={
                "user_id": shop.customer_id,
                "order_date": today,
                "product_items": [{"xid": shop.xid("apple"), "quantity": 4, "unit_price": "3.50"}],
            },
        )
        assert sale.status_code == 200, sale.text
        body = sale.json().get("data") or sale.json()
        invoice, sale_id = body["invoice_number"], body["order_id"]

        # The customer pays at the counter: taken on a phone, from their page.
        await page.set_viewport_size(PHONE)
        await visit(page, f"/customers/{shop.customer_id}")
        await page.get_by_role("link", name="Record a payment").click()
        if await page.get_by_label("Branch", exact=True).count():
            await page.get_by_label("Branch", exact=True).select_option(str(wh))
            await page.get_by_role("button", name="Show its invoices").click()
        seen.append(here(page))
        assert _amount(await page.locator("#balance").inner_text()) == D("14.00")
        await page.get_by_label("Amount").fill("14.00")
        await page.get_by_label("Paid by").select_option(label="Cash")
        await page.get_by_role("button", name="Record the payment").click()
        await page.wait_for_url(f"{server}/payments/*")
        assert "Payment received" in await page.content()
        assert await page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        await page.set_viewport_size(WIDE)

        # Friday: one bottle comes back, refunded in cash from the sale's page.
        await visit(page, "/sales")
        await page.get_by_role("link", name=invoice).click()
        await page.wait_for_url(f"{server}/sales/{sale_id}*")
        seen.append(f"/sales/{sale_id}")
        await page.get_by_role("link", name="Return…").click()
        seen.append(here(page))
        await page.get_by_label("Quantity of Apple juice back").fill("1")
        await page.get_by_label("Refund to").select_option(label="Cash")
        await page.get_by_role("button", name="Take the return").click()
        await page.wait_for_url(f"{server}/sales-returns/*")
        await visit(page, f"/sales/{sale_id}")
        assert "refunded 3.50" in await page.locator("#returns").inner_text()
        assert await page.get_by_role("link", name="Void…").count() == 0

        # The rent: recorded pending, then approved and paid by bank.
        await visit(page, "/expenses")
        await page.get_by_role("link", name="Record an expense").click()
        seen.append(here(page))
        await page.get_by_label("Branch", exact=True).select_option(str(wh))
        await page.get_by_label("Category").select_option(label="General Expenses")
        await page.get_by_label("Amount").fill("40.00")
        await page.get_by_label("Date").fill(today)
        await page.get_by_label("Reference").fill("rent, this week")
        assert await page.get_by_label("Paid by").input_value() == ""  # pending
        await page.get_by_role("button", name="Record", exact=True).click()
        await page.wait_for_url(f"{server}/expenses?recorded=*")
        expense_id = page.url.rsplit("=", 1)[1]
        await page.get_by_role("link", name="pending: approve and pay…").click()
        await page.wait_for_url(f"{server}/expenses/{expense_id}/pay")
        seen.append(here(page))
        assert await page.locator("#status").inner_text() == "pending"
        await page.get_by_label("Paid by").select_option(label="Bank")
        await page.get_by_role("button", name="Approve and pay 40.00").click()
        await expect(page.locator("#status")).to_have_text("paid")

        # Saturday: a stocktake of the branch; one bottle of juice short, a water over.
        await visit(page, "/stock/counts")
        await page.get_by_label("Branch", exact=True).select_option(str(wh))
        await page.get_by_label("Count", exact=True).select_option("all")
        await page.get_by_role("button", name="Start counting").click()
        await page.wait_for_url(f"{server}/stock/counts/*")
        count = here(page)
        seen.append(count)
        apple, water = shop.products["apple"], shop.products["water"]
        # 20 opening + 12 received - 4 sold + 1 returned; 100 opening
        await page.get_by_label("Counted of Apple juice").fill("28")
        await page.get_by_label("Counted of Still water").fill("101")
        await page.get_by_role("button", name="Save counts").click()
        await page.wait_for_url(f"{server}{count}?saved=1")
        assert await page.locator(f"#diff-{apple}").inner_text() == "-1"
        assert await page.locator(f"#diff-{water}").inner_text() == "1"
        await page.reload()  # the count survives a reload
        assert await page.get_by_label("Counted of Apple juice").input_value() == "28"
        await page.get_by_role("button", name="Post stocktake").click()
        await page.wait_for_url(f"{server}{count}?posted=1")
        assert await page.locator("#count-status").inner_text() == "posted"

        # A price change for the juice in the branch: previewed, then applied.
        await visit(page, "/prices")
        await page.get_by_label("Main street").check()
        await page.get_by_label("Products", exact=True).select_option("search")
        await page.get_by_label("Name or item code contains").fill("Apple juice")
        await page.get_by_label("Price", exact=True).select_option("sales")
        await page.get_by_label("Change", exact=True).select_option("percent")
        await page.get_by_label("By / to").fill("10")
        await page.get_by_role("button", name="Preview").click()
        preview = await page.locator("#preview").inner_text()
        assert "3.85" in preview, preview
        await page.get_by_role("button", name="Apply to 1 listing(s)").click()
        await page.wait_for_url(f"{server}/prices?applied=1")
        listed = httpx.get(f"{api}/products/{shop.xid('apple')}", headers=shop.headers)
        assert listed.status_code == 200, listed.text
        assert "3.85" in listed.text

        # The till's takings paid into the bank.
        await visit(page, "/money-moves")
        await page.get_by_label("Branch", exact=True).select_option(str(wh))
        await page.get_by_label("From", exact=True).select_option(label="Cash (11101)")
        await page.get_by_label("To", exact=True).select_option(label="Bank (11110)")
        await page.get_by_label("Amount").fill("10.50")
        await page.get_by_label("Reference").fill("takings of the week")
        await page.get_by_role("button", name="Record the move").click()
        await page.wait_for_url(f"{server}/money-moves?moved=*")
        assert "10.50" in await page.locator("section", has_text="Moves").inner_text()

        # Sunday: the books closed through today, from the reports.
        await visit(page, "/reports")
        await page.get_by_role("link", name="Period close").click()
        seen.append(here(page))
        await page.get_by_label("Close through (the last day to close)").fill(today)
        await page.get_by_role("button", name="Close the books").click()
        await page.wait_for_selector("text=The books were closed.")
        assert await page.locator("#closed-through").inner_text() == today

        # The trial balance, as the owner reads it.
        await visit(page, "/reports?report=trial-balance")
        totals = page.locator("tfoot tr.total td.num")
        debit, credit = [_amount(t) for t in await totals.all_inner_texts()]
        assert debit == credit and debit > 0, (debit, credit)
        await page.screenshot(path=str(shots / "trial-balance.png"), full_page=True)

        # Every screen of the week at phone width: none wider than the screen.
        phone = await browser.new_page(viewport=PHONE)
        await phone.context.add_cookies(await page.context.cookies())
        for path in dict.fromkeys(seen):
            response = await phone.goto(f"{server}{path}")
            assert response is not None and response.status == 200, path
            width = await phone.evaluate("document.documentElement.scrollWidth")
            assert width <= PHONE["width"], (path, width)
        assert failures == [], failures
        await browser.close()

    # The books closed: a sale dated today is refused by the API.
    late = httpx.post(
        f"{api}/sales",
        headers=shop.headers,
        json={
            "user_id": shop.customer_id,
            "order_date": today,
            "product_items": [{"xid": shop.xid("apple"), "quantity": 1, "unit_price": "3.85"}],
        },
    )
    assert late.status_code == 422 and "order_date" in late.text, late.text

    # Every branch's stock at cost equals its inventory account.
    for branch in (shop.warehouse_id, shop.other_warehouse_id):
        valuation = cli_run(
            "report", "stock-valuation", "--company", str(shop.company_id),
            "--warehouse", str(branch), "--json",
        ).json()  # fmt: skip
        valuation = valuation.get("data", valuation)
        assert D(valuation["total_value"]) == D(valuation["gl_inventory_balance"]), valuation
    main = cli_run(
        "report", "stock-valuation", "--company", str(shop.company_id),
        "--warehouse", str(shop.warehouse_id), "--json",
    ).json()  # fmt: skip
    main = main.get("data", main)
    # Juice: 10 at 1.50 and 10 at 2.00 opening, 12 at 2.00 received; 4 sold from the
    # 1.50 layer, 1 back at that cost, 1 lost at FIFO cost: 6 x 1.50 + 22 x 2.00.
    # Tea: 6 x 5.00. Water: 100 x 0.3333 opening, 1 found at the purchase price 0.40.
    assert D(main["total_value"]) == D("53.00") + D("30.00") + D("33.73"), main

    # The money as entered: supplier and customer settled, the till's cash, the bank.
    async def gl(code: str) -> Decimal:
        return await db.read(lambda s: gl_balance(s, shop.company_id, code))

    assert await gl(chart.PAYABLE) == 0  # 54.00 received on credit, 54.00 paid
    assert await gl(chart.RECEIVABLE) == 0  # 14.00 sold on credit, 14.00 paid
    assert await gl(chart.CASH_ON_HAND) == 0  # 14.00 in, 3.50 refunded, 10.50 banked
    assert await gl(chart.BANK_ACCOUNT) == D("-83.50")  # the supplier, the rent, takings
    assert await gl(chart.GENERAL_EXPENSES) == D("40.00")
    await check_books(db, shop.company_id)

    # The journal as the accountant takes it: bean-check finds nothing wrong.
    bean_check = shutil.which("bean-check", path=os.path.dirname(sys.executable))
    if bean_check is None:
        pytest.skip("bean-check is not installed")
    journal = cli_run(
        "export", "journal", "--company", str(shop.company_id), "--format", "beancount"
    ).stdout
    (tmp_path / "week.beancount").write_text(journal)
    checked = subprocess.run(
        [bean_check, str(tmp_path / "week.beancount")], capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
