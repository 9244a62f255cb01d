"""The back office in a real browser: Playwright driving the system's Chromium
against ``tillbook serve`` in its own process, on the test database.

Skipped, with the reason, only when no Chromium executable is found
(``apt-get install -y chromium``; Playwright's own browser downloads are not used)."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import httpx

from tests.factories import Shop
from tests.live_server import CHROMIUM, needs_chromium
from tests.web_helpers import OWNER_PASSWORD, STAFF_PASSWORD, add_staff, owner_email
from tillbook.db import Database

pytestmark = needs_chromium
DOCS = (
    Path(os.environ["TILLBOOK_DOCS_SCREENSHOTS"])
    if "TILLBOOK_DOCS_SCREENSHOTS" in os.environ
    else None
)


async def test_the_back_office_in_a_browser(
    server: str, db: Database, shop: Shop, tmp_path: Path
) -> None:
    from playwright.async_api import async_playwright, expect

    email = await owner_email(db, shop)
    cashier = await add_staff(db, shop, "cashier")
    wh = shop.warehouse_id
    code = f"BRW-{shop.company_id}"
    shots = tmp_path / "screens"
    shots.mkdir()

    async def shot(page, name: str) -> None:  # type: ignore[no-untyped-def]
        await page.screenshot(path=str(shots / f"{name}.png"), full_page=True)
        if DOCS is not None:
            await page.screenshot(path=str(DOCS / f"{name}.png"))

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        context = await browser.new_context(viewport={"width": 1200, "height": 800})
        await context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server)
        page = await context.new_page()

        # Sign in.
        await page.goto(f"{server}/products")
        assert "/login" in page.url
        await shot(page, "login")
        await page.get_by_label("Email").fill(email)
        await page.get_by_label("Password").fill(OWNER_PASSWORD)
        await page.get_by_role("button", name="Sign in").click()
        await page.wait_for_url(f"{server}/products")

        # A product with two units, listed in a branch with opening stock.
        await page.goto(f"{server}/products/new")
        await page.get_by_label("Name", exact=True).fill("Browser beans")
        await page.get_by_label("Item code").fill(code)
        await page.get_by_label("Base unit", exact=True).select_option(str(shop.piece_unit_id))
        await page.locator("#f-units\\.0\\.unit_id").select_option(str(shop.box_unit_id))
        await page.locator("#f-units\\.0\\.operator_value").fill("6")
        await page.locator("#f-units\\.0\\.alternative_price").fill("20.00")
        await page.locator(f"input[name='list.{wh}.on']").check()
        await page.locator(f"#f-list\\.{wh}\\.sales_price").fill("4.00")
        await page.locator(f"#f-list\\.{wh}\\.purchase_price").fill("2.50")
        await page.locator(f"#f-list\\.{wh}\\.opening_stock\\.quantity").fill("30")
        await page.locator(f"#f-list\\.{wh}\\.opening_stock\\.unit_cost").fill("2.50")
        await shot(page, "product-new")
        await page.get_by_role("button", name="Create product").click()
        await page.wait_for_selector("text=Product created.")
        product_id = int(page.url.split("/products/")[1].split("?")[0])

        # The same product through the public API, and a sale of it.
        api = f"{server}/api/v1/public"
        listed = httpx.get(f"{api}/products", params={"search": code}, headers=shop.headers)
        assert listed.status_code == 200, listed.text
        (item,) = [p for p in listed.json()["data"]["data"] if p["item_code"] == code]
        today = dt.date.today().isoformat()
        sale = httpx.post(
            f"{api}/sales",
            headers=shop.headers,
            json={
                "user_id": shop.customer_id,
                "order_date": today,
                "product_items": [{"xid": item["xid"], "quantity": 3, "unit_price": "4.00"}],
            },
        )
        assert sale.status_code == 200, sale.text
        body = sale.json()
        invoice = (body.get("data") or body)["invoice_number"]

        await page.goto(f"{server}/sales")
        await page.get_by_role("link", name=invoice).click()
        await page.get_by_role("link", name="Printable invoice (A4)").click()
        # (expect retries until the invoice's page has loaded)
        await expect(page.locator("h2", has_text="Invoice")).to_have_count(1)
        assert await page.get_by_text("Browser beans").count() == 1
        await shot(page, "invoice")
        await page.goto(f"{server}/")
        figures = await page.locator("table").first.inner_text()
        assert "12.00" in figures  # 3 × 4.00 sold today in the branch
        await shot(page, "dashboard")
        await page.goto(f"{server}/products?q={code}")
        assert "27" in await page.locator("tbody").inner_text()  # 30 opening - 3 sold
        await shot(page, "products")

        # An API key's secret, shown once.
        await page.goto(f"{server}/settings/keys")
        await page.get_by_label("Name (the till or app it is for)").fill("browser till")
        await page.get_by_label("Branch", exact=True).select_option(str(wh))
        await page.get_by_role("button", name="Create key").click()
        secret = await page.locator("#secret-key").inner_text()
        assert secret.startswith("sk_")
        # its copy button (shown by the script) puts it on the clipboard
        copy = page.locator("button[data-copy=secret-key]")
        await copy.click()
        # (Playwright's expect, not a string for wait_for_function: a string expression
        # is evaluated with eval, which the page's CSP refuses when it has to poll)
        await expect(copy).to_have_text("Copied")
        assert await page.evaluate("navigator.clipboard.readText()") == secret
        await page.goto(f"{server}/settings/keys")
        assert secret not in await page.content()

        # A form without its CSRF token is refused.
        await page.goto(f"{server}/products/{product_id}/archive")
        await page.evaluate("document.querySelector('main form input[name=csrf]').remove()")
        await page.get_by_role("button", name="Archive").click()
        assert "security token" in await page.content()
        await page.goto(f"{server}/products/{product_id}")
        assert "(archived)" not in await page.content()

        # An import with bad rows lists every one and changes nothing.
        bad = tmp_path / "bad.csv"
        bad.write_text(
            "item_code,name,sales_price\n"
            f"{code}-A,Good one,1.00\n"
            f"{code}-B,Bad price,abc\n"
            f",No code,2.00\n"
        )
        await page.goto(f"{server}/import")
        await page.get_by_label("What the file holds").select_option("products")
        await page.get_by_label("CSV file").set_input_files(str(bad))
        await page.get_by_role("button", name="Import").click()
        problems = await page.locator("#problems li").all_inner_texts()
        assert any("line 3" in p for p in problems) and any("line 4" in p for p in problems), (
            problems
        )
        await shot(page, "import-problems")
        listed = httpx.get(f"{api}/products", params={"search": f"{code}-A"}, headers=shop.headers)
        assert listed.json()["data"]["data"] == []

        # Sign out; a cashier cannot open settings, and the server refuses the URL.
        await page.get_by_role("button", name="Sign out").click()
        await page.wait_for_url(f"{server}/login")
        await page.get_by_label("Email").fill(cashier)
        await page.get_by_label("Password").fill(STAFF_PASSWORD)
        await page.get_by_role("button", name="Sign in").click()
        await page.wait_for_url(f"{server}/products")
        assert await page.get_by_role("link", name="API keys").count() == 0
        refused = await page.goto(f"{server}/settings/keys")
        assert refused is not None and refused.status == 403
        phone = await browser.new_page(viewport={"width": 390, "height": 844})
        await phone.context.add_cookies(await page.context.cookies())
        await phone.goto(f"{server}/products")
        await shot(phone, "products-phone")
        await browser.close()


async def test_stock_adjustment_and_period_close_in_a_browser(
    server: str, db: Database, shop: Shop, tmp_path: Path
) -> None:
    """An adjustment recorded from the stock page shows in the stock and the books; a
    period closed from the reports page refuses a back-dated sale through the API."""
    from playwright.async_api import async_playwright

    email = await owner_email(db, shop)
    apple, wh = shop.products["apple"], shop.warehouse_id
    shots = tmp_path / "screens"
    shots.mkdir()

    async def shot(page, name: str) -> None:  # type: ignore[no-untyped-def]
        await page.screenshot(path=str(shots / f"{name}.png"), full_page=True)
        if DOCS is not None:
            await page.screenshot(path=str(DOCS / f"{name}.png"))

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = await browser.new_page(viewport={"width": 1200, "height": 800})
        await page.goto(f"{server}/login")
        await page.get_by_label("Email").fill(email)
        await page.get_by_label("Password").fill(OWNER_PASSWORD)
        await page.get_by_role("button", name="Sign in").click()
        await page.wait_for_url(f"{server}/")

        # From the stock list to the product's stock page, and an adjustment.
        await page.goto(f"{server}/stock")
        await page.get_by_role("link", name="Apple juice").first.click()
        await page.wait_for_url(f"{server}/stock/products/{apple}")
        before = await page.locator(f"#stock-{wh}").inner_text()
        await page.get_by_label("Branch", exact=True).select_option(str(wh))
        await page.get_by_label("Change").select_option("subtract")
        await page.get_by_label("Quantity").fill("3")
        await page.get_by_label("Reason").fill("broken in the back room")
        await page.get_by_role("button", name="Record adjustment").click()
        await page.wait_for_selector("text=recorded.")
        after = await page.locator(f"#stock-{wh}").inner_text()
        assert float(before) - float(after) == 3, (before, after)
        assert "adjustment" in await page.locator("section", has_text="Movements").inner_text()
        await shot(page, "stock-product")

        # The books: the inventory account's ledger carries the adjustment.
        await page.goto(f"{server}/reports/ledger?account=11700&warehouse_id={wh}")
        assert "broken in the back room" in await page.locator("table").inner_text()
        await page.goto(f"{server}/reports?report=profit-loss")
        assert await page.locator("svg.chart").count() == 1
        await shot(page, "profit-loss")

        # Close the books through yesterday from the reports page.
        yesterday = dt.date.today() - dt.timedelta(days=1)
        await page.goto(f"{server}/reports")
        await page.get_by_role("link", name="Period close").click()
        await page.get_by_label("Close through (the last day to close)").fill(yesterday.isoformat())
        await page.get_by_role("button", name="Close the books").click()
        await page.wait_for_selector("text=The books were closed.")
        assert await page.locator("#closed-through").inner_text() == yesterday.isoformat()
        await shot(page, "period-close")

        phone = await browser.new_page(viewport={"width": 390, "height": 844})
        await phone.context.add_cookies(await page.context.cookies())
        await phone.goto(f"{server}/stock?low=1")
        await shot(phone, "stock-phone")
        # at phone width no page is wider than the screen: wide tables scroll in
        # their box (the keys table's hidden "Actions" heading once widened the page)
        for path in ("/", "/products", "/stock", "/sales", "/reports", "/customers",
                     "/settings/keys", "/settings/staff", "/settings/branches",
                     "/settings/payment-modes", "/settings/webhooks"):  # fmt: skip
            await phone.goto(f"{server}{path}")
            width = await phone.evaluate("document.documentElement.scrollWidth")
            assert width <= 390, (path, width)
        await browser.close()

    # A sale dated into the closed period is refused through the public API.
    sale = httpx.post(
        f"{server}/api/v1/public/sales",
        headers=shop.headers,
        json={
            "user_id": shop.customer_id,
            "order_date": yesterday.isoformat(),
            "product_items": [{"xid": shop.xid("apple"), "quantity": 1, "unit_price": "4.00"}],
        },
    )
    assert sale.status_code == 422, sale.text
    assert "order_date" in sale.text


async def test_search_as_you_type_swaps_the_products_table(
    server: str, db: Database, shop: Shop
) -> None:
    """Typing in the products search box (no submit) narrows the table in place."""
    from playwright.async_api import async_playwright, expect

    email = await owner_email(db, shop)
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = await browser.new_page(viewport={"width": 1200, "height": 800})
        await page.goto(f"{server}/login")
        await page.get_by_label("Email").fill(email)
        await page.get_by_label("Password").fill(OWNER_PASSWORD)
        await page.get_by_role("button", name="Sign in").click()
        await page.wait_for_url(f"{server}/")
        await page.goto(f"{server}/products")
        assert await page.locator("#results", has_text="Still water").count() == 1
        await page.get_by_label("Search name, item code or barcode").press_sequentially("apple")
        await page.wait_for_url(f"{server}/products?q=apple")  # replaceState, not a load
        await expect(page.locator("#results")).not_to_contain_text("Still water")
        assert "Apple juice" in await page.locator("#results").inner_text()
        assert await page.get_by_label("Search name, item code or barcode").input_value() == "apple"
        await browser.close()


# Collects what Chromium reports as refused by the Content-Security-Policy, in the
# page, before any of the page's own scripts run.
CSP_LISTENER = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__csp.push(`${e.effectiveDirective} refused ${e.blockedURI || "inline"}`);
});
"""


async def test_no_page_breaks_the_content_security_policy(
    server: str, db: Database, shop: Shop
) -> None:
    """The back office's main pages, the printable invoice and receipt, the API's
    receipt with its inline QR code, the sign-in page and the documentation pages
    all work under the service's Content-Security-Policy: Chromium reports no
    violation (an inline script, handler or style would be one), and the scripts
    that the pages rely on still run."""
    from playwright.async_api import async_playwright

    email = await owner_email(db, shop)
    sale = httpx.post(
        f"{server}/api/v1/public/sales",
        headers=shop.headers,
        json={
            "user_id": shop.customer_id,
            "order_date": dt.date.today().isoformat(),
            "product_items": [{"xid": shop.xid("apple"), "quantity": 1, "unit_price": "4.00"}],
        },
    )
    assert sale.status_code == 200, sale.text
    invoice = (sale.json().get("data") or sale.json())["invoice_number"]

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        context = await browser.new_context(viewport={"width": 1200, "height": 800})
        await context.add_init_script(CSP_LISTENER)
        page = await context.new_page()
        console: list[str] = []
        page.on(
            "console",
            lambda m: console.append(m.text) if "Content Security Policy" in m.text else None,
        )

        async def visit(path: str, ready: str | None = None, expected: str = "\x00") -> None:
            response = await page.goto(f"{server}{path}")
            assert response is not None and response.status == 200, path
            policy = await response.header_value("content-security-policy")
            assert policy and "frame-ancestors 'none'" in policy, (path, policy)
            if ready is not None:
                await page.wait_for_selector(ready, state="attached", timeout=90_000)
            await page.wait_for_load_state("networkidle")
            refused = [r for r in await page.evaluate("window.__csp") if expected not in r]
            assert refused == [], (path, refused, console)
            assert [m for m in console if expected not in m] == [], (path, console)
            console.clear()

        await visit("/login")
        await page.get_by_label("Email").fill(email)
        await page.get_by_label("Password").fill(OWNER_PASSWORD)
        await page.get_by_role("button", name="Sign in").click()
        await page.wait_for_url(f"{server}/")
        for path in ("/", "/products", f"/products/{shop.products['apple']}", "/stock",
                     "/sales", "/reports", "/reports?report=profit-loss", "/customers",
                     f"/customers/{shop.customer_id}", "/settings/keys", "/settings/staff",
                     "/settings/branches", "/account", "/import"):  # fmt: skip
            await visit(path)
        # The search box's script runs (search.js, a file of ours).
        await visit("/products")
        await page.get_by_label("Search name, item code or barcode").press_sequentially("apple")
        await page.wait_for_url(f"{server}/products?q=apple")
        # The printable pages: their Print button is wired by print.js, not onclick.
        await page.goto(f"{server}/sales")
        await page.get_by_role("link", name=invoice).click()
        order = page.url.split("?")[0].removeprefix(server)
        for kind in ("invoice", "receipt"):
            await visit(f"{order}?print={kind}")
            assert await page.get_by_role("button", name="Print").is_visible()
        # The documentation, drawn by the bundled Swagger UI and ReDoc.
        await visit("/docs", ready=".swagger-ui .opblock")
        assert await page.locator(".swagger-ui .opblock").first.is_visible()
        # ReDoc's "API docs by Redocly" logo comes from the internet: refused, as
        # it should be (the documentation is served offline); the page is drawn.
        await visit("/redoc", ready="h1", expected="https://cdn.redoc.ly/")
        assert "tillbook" in await page.locator("h1").first.inner_text()

        # The receipt the API serves (inline style by hash, inline SVG QR code).
        till = await browser.new_context()
        await till.add_init_script(CSP_LISTENER)
        await till.set_extra_http_headers(
            {k: v for k, v in shop.headers.items() if k.startswith("X-Service")}
        )
        page = await till.new_page()
        page.on(
            "console",
            lambda m: console.append(m.text) if "Content Security Policy" in m.text else None,
        )
        for size in ("80mm", "a4"):
            await visit(f"/api/v1/public/sales/{invoice}/receipt?format=html&size={size}")
            qr = await page.locator("svg.segno").bounding_box()
            assert qr is not None and qr["width"] > 40, qr
            align = await page.evaluate("getComputedStyle(document.querySelector('h1')).textAlign")
            assert align == "center"  # the inline style applied
        await browser.close()
