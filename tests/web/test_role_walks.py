"""A branch manager's and a cashier's work in a real browser, at desk (1280 px) and
phone (390 px) widths, and what the server refuses them when they type a URL.

The manager, scoped to one branch, receives a supplier's delivery (one line with its
input tax), counts the branch's stock, changes a price for the branch, and is
refused (403, by the server) the company's settings and the other branch's report.
The cashier sees their own sales and shifts only, looks up a product's stock in the
other branch without any cost, takes a customer's payment at the counter, and is
refused the reports, the prices, the purchases and the settings. After each walk the
books themselves are checked: what the pages said is what the server recorded.

Playwright drives the system's Chromium against ``tillbook serve`` in its own
process (``tests/live_server.py``); skipped, with the reason, without Chromium."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import httpx
from sqlalchemy import select

from tests.factories import Key, Shop
from tests.invariants import check_books, gl_balance
from tests.live_server import CHROMIUM, needs_chromium
from tests.web_helpers import STAFF_PASSWORD, add_staff
from tillbook.db import Database
from tillbook.models import Listing, Order, Payment, StockCount, User
from tillbook.tenancy import service as tenancy

pytestmark = needs_chromium
D = Decimal
WIDE = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


async def _sign_in(browser: Any, server: str, email: str, viewport: dict[str, int]) -> Any:
    page = await browser.new_page(viewport=viewport)
    await page.goto(f"{server}/login")
    await page.get_by_label("Email").fill(email)
    await page.get_by_label("Password").fill(STAFF_PASSWORD)
    await page.get_by_role("button", name="Sign in").click()
    await page.wait_for_load_state()
    assert "/login" not in page.url, await page.content()
    return page


async def _refused(page: Any, server: str, path: str) -> None:
    """Typed into the address bar: the server answers 403 and says why."""
    response = await page.goto(f"{server}{path}")
    assert response is not None and response.status == 403, (path, response)
    assert "permission" in await page.content(), path


async def _narrow(page: Any, server: str, paths: list[str]) -> None:
    """Each page again at phone width: none wider than the screen."""
    await page.set_viewport_size(PHONE)
    for path in dict.fromkeys(paths):
        response = await page.goto(f"{server}{path}")
        assert response is not None and response.status == 200, path
        width = await page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], (path, width)


async def _gl(db: Database, shop: Shop, code: str) -> Decimal:
    return await db.read(lambda s: gl_balance(s, shop.company_id, code))


async def test_a_branch_manager_runs_their_branch(server: str, db: Database, shop: Shop) -> None:
    from playwright.async_api import async_playwright

    email = await add_staff(db, shop, "manager", shop.warehouse_id)
    tea, apple, water = (shop.products[n] for n in ("tea", "apple", "water"))
    seen: list[str] = []

    def here(page: Any) -> str:
        path: str = page.url.removeprefix(server)
        seen.append(path)
        return path

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = await _sign_in(browser, server, email, WIDE)
        failures: list[str] = []
        page.on("response", lambda r: failures.append(r.url) if r.status >= 500 else None)

        # A delivery without an order: four teas at 5.00, the supplier's VAT added.
        await page.goto(f"{server}/purchases/new")
        here(page)
        receivers = await page.get_by_label("Into").locator("option").all_inner_texts()
        assert receivers == ["Main street"], receivers  # their branch only
        await page.get_by_label("Supplier", exact=True).select_option(label="Sam Supplier")
        await page.get_by_label("Supplier's invoice number").fill("SUP-M1")
        await page.get_by_label("Quantity of Rare tea").fill("4")
        await page.get_by_label("Unit cost of Rare tea").fill("5.00")
        await page.get_by_label("Tax on Rare tea").select_option(label="VAT 10% (10%, added)")
        await page.get_by_role("button", name="Receive", exact=True).click()
        await page.wait_for_url(f"{server}/purchases/*")
        here(page)
        lines = await page.locator("table.lines").inner_text()
        assert "2.00" in lines and "22.00" in lines, lines  # the tax, the gross

        # A stocktake of the branch, counted on a phone: one juice short.
        await page.set_viewport_size(PHONE)
        await page.goto(f"{server}/stock/counts")
        here(page)
        await page.get_by_label("Branch", exact=True).last.select_option(str(shop.warehouse_id))
        await page.get_by_label("Count", exact=True).select_option("all")
        await page.get_by_role("button", name="Start counting").click()
        await page.wait_for_url(f"{server}/stock/counts/*")
        count = here(page)
        await page.get_by_label("Counted of Apple juice").fill("19")
        await page.get_by_label("Counted of Rare tea").fill("4")
        await page.get_by_role("button", name="Save counts").click()
        await page.wait_for_url(f"{server}{count}?saved=1")
        assert await page.locator(f"#diff-{apple}").inner_text() == "-1"
        assert await page.locator(f"#diff-{tea}").inner_text() == "0"
        assert await page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        await page.get_by_role("button", name="Post stocktake").click()
        await page.wait_for_url(f"{server}{count}?posted=1")
        assert await page.locator("#count-status").inner_text() == "posted"
        await page.set_viewport_size(WIDE)

        # A price change for the branch: the water 10 % up, previewed then applied.
        await page.goto(f"{server}/prices")
        here(page)
        boxes = await page.locator('input[name="warehouse_ids"]').count()
        assert boxes == 1  # their branch only
        await page.get_by_label("Main street").check()
        await page.get_by_label("Products", exact=True).select_option("search")
        await page.get_by_label("Name or item code contains").fill("Still water")
        await page.get_by_label("Price", exact=True).select_option("sales")
        await page.get_by_label("Change", exact=True).select_option("percent")
        await page.get_by_label("By / to").fill("10")
        await page.get_by_role("button", name="Preview").click()
        preview = await page.locator("#preview").inner_text()
        assert "1.00" in preview and "1.10" in preview, preview
        await page.get_by_role("button", name="Apply to 1 listing(s)").click()
        await page.wait_for_url(f"{server}/prices?applied=1")

        # Typed into the address bar: the company's settings and the other branch.
        for path in (
            "/settings/company",
            "/settings/staff",
            "/settings/keys",
            f"/reports?warehouse_id={shop.other_warehouse_id}",
            "/products/new",
        ):
            await _refused(page, server, path)
        await _narrow(page, server, seen)
        assert failures == [], failures
        await browser.close()

    # What the server recorded: the purchase with its tax, the count, the price.
    async def recorded(s: Any) -> dict[str, Any]:
        purchase = await s.scalar(
            select(Order).where(
                Order.company_id == shop.company_id, Order.invoice_number == "SUP-M1"
            )
        )
        counted = await s.scalar(
            select(StockCount.status).where(StockCount.company_id == shop.company_id)
        )
        prices = dict(
            (
                await s.execute(
                    select(Listing.warehouse_id, Listing.sales_price).where(
                        Listing.product_id == water
                    )
                )
            ).all()
        )
        stock = dict(
            (
                await s.execute(
                    select(Listing.product_id, Listing.current_stock).where(
                        Listing.warehouse_id == shop.warehouse_id
                    )
                )
            ).all()
        )
        return {"purchase": purchase, "count": counted, "prices": prices, "stock": stock}

    got = await db.read(recorded)
    purchase = got["purchase"]
    assert purchase.warehouse_id == shop.warehouse_id
    assert (purchase.subtotal, purchase.tax_amount, purchase.total) == (
        D("20.00"),
        D("2.00"),
        D("22.00"),
    )
    assert got["count"] == "posted"
    assert got["prices"] == {shop.warehouse_id: D("1.10")}
    assert got["stock"][apple] == D("19") and got["stock"][tea] == D("4")
    assert await _gl(db, shop, "11800") == D("2.00")
    assert await _gl(db, shop, "21100") == D("-22.00")
    await check_books(db, shop.company_id)


async def test_a_cashier_at_the_counter(server: str, db: Database, shop: Shop) -> None:
    from playwright.async_api import async_playwright

    email = await add_staff(db, shop, "cashier", shop.warehouse_id)
    cashier_id = int(await db.read(lambda s: s.scalar(select(User.id).where(User.email == email))))
    made = await db.write(
        lambda s: tenancy.create_api_key(s, shop.warehouse_id, "Counter", user_id=cashier_id)
    )
    till = Key(made.key.public_key, made.secret_key, made.hmac_secret, shop.warehouse_id)
    api = f"{server}/api/v1/public"
    today = dt.date.today().isoformat()

    def post(key: Key, path: str, body: dict[str, Any]) -> dict[str, Any]:
        r = httpx.post(f"{api}{path}", headers=key.headers, json=body)
        assert r.status_code in (200, 201), r.text
        out: dict[str, Any] = r.json().get("data") or r.json()
        return out

    # The cashier's till and the other one: a shift and a sale each; the regular
    # customer buys on credit at the other till.
    post(till, "/shifts", {"register": "till-c"})
    post(shop.key, "/shifts", {"register": "till-o"})

    def sale(key: Key, customer: int, paid: bool) -> str:
        body: dict[str, Any] = {
            "user_id": customer,
            "order_date": today,
            "product_items": [{"xid": shop.xid("apple"), "quantity": 2, "unit_price": "3.50"}],
        }
        if paid:
            body["all_payments"] = [{"amount": "7.00", "payment_mode_id": "cash"}]
        return str(post(key, "/sales", body)["invoice_number"])

    mine = sale(till, shop.walk_in_id, paid=True)
    theirs = sale(shop.key, shop.customer_id, paid=False)
    coffee = shop.other_products["coffee"]

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = await _sign_in(browser, server, email, PHONE)  # at the counter, on a phone
        failures: list[str] = []
        page.on("response", lambda r: failures.append(r.url) if r.status >= 500 else None)
        seen = ["/sales", "/shifts", f"/stock/products/{coffee}", "/account"]

        # Their own sales and shifts, not the other till's.
        await page.goto(f"{server}/sales")
        listed = await page.locator("main").inner_text()
        assert mine in listed and theirs not in listed, listed
        await page.get_by_role("link", name=mine).click()
        await page.wait_for_url(f"{server}/sales/*")
        seen.append(page.url.removeprefix(server))
        await page.goto(f"{server}/shifts")
        shifts = await page.locator("main").inner_text()
        assert "till-c" in shifts and "till-o" not in shifts, shifts

        # The coffee is only at the harbour: its stock there, and no cost anywhere.
        await page.goto(f"{server}/stock/products/{coffee}")
        stock = await page.locator("main").inner_text()
        assert "Harbour" in stock and "5" in stock, stock
        for hidden in ("Unit cost", "Purchase price", "2.50", "Value"):
            assert hidden not in stock, (hidden, stock)

        # The regular pays what they owe at the counter.
        await page.goto(f"{server}/customers/{shop.customer_id}/payment")
        if await page.get_by_label("Branch", exact=True).count():
            await page.get_by_label("Branch", exact=True).select_option(str(shop.warehouse_id))
            await page.get_by_role("button", name="Show its invoices").click()
        assert "7.00" in await page.locator("#balance").inner_text()
        await page.get_by_label("Amount").fill("7.00")
        await page.get_by_label("Paid by").select_option(label="Cash")
        await page.get_by_role("button", name="Record the payment").click()
        await page.wait_for_url(f"{server}/payments/*")
        assert "Payment received" in await page.content()
        seen.append(page.url.removeprefix(server))
        assert await page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]

        # At a desk: the same pages, still without costs; the rest refused by the server.
        await page.set_viewport_size(WIDE)
        for path in dict.fromkeys(seen):
            response = await page.goto(f"{server}{path}")
            assert response is not None and response.status == 200, path
            assert "Unit cost" not in await page.content(), path
        for path in (
            "/",
            "/reports",
            "/reports?report=stock-valuation",
            "/reports/ledger",
            "/prices",
            "/purchases",
            "/settings/company",
            "/settings/staff",
            "/settings/payment-modes",
        ):
            if path == "/":  # no dashboard (its figures and margins): sent on
                response = await page.goto(f"{server}{path}")
                assert response is not None and response.status == 200
                assert page.url.rstrip("/") != server, page.url
                continue
            await _refused(page, server, path)
        await _narrow(page, server, seen)
        assert failures == [], failures
        await browser.close()

    # What the server recorded: the customer settled by a payment the cashier took.
    async def recorded(s: Any) -> tuple[Decimal, int | None, Decimal]:
        balance = await s.scalar(select(User.balance).where(User.id == shop.customer_id))
        payment = (
            await s.execute(
                select(Payment.created_by, Payment.amount).where(
                    Payment.company_id == shop.company_id,
                    Payment.user_id == shop.customer_id,
                    Payment.payment_type == "in",
                )
            )
        ).one()
        return D(balance), payment[0], D(payment[1])

    balance, taken_by, amount = await db.read(recorded)
    assert balance == 0 and amount == D("7.00")
    assert taken_by == cashier_id
    assert await _gl(db, shop, "11500") == 0
    await check_books(db, shop.company_id)
