"""The register (DESIGN.md §15) in a real browser: Playwright driving the system's
Chromium against ``tillbook serve`` in its own process, on the test database.

The register is paired here with an ordinary API key of the branch (the pairing
screen's "Use an API key"), which the register treats as a till without the
register endpoints: no cashier on the sale, no ``offline`` flag. Selling, the
scanner, the queue, offline and a browser restart, refusals and the totals are the
same code either way.

Skipped, with the reason, only when no Chromium executable is found."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import random
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from tests.factories import Shop, by_id, make_shop
from tests.invariants import check_books
from tests.live_server import CHROMIUM
from tillbook.catalog import seeding as catalog
from tillbook.db import Database
from tillbook.models import Order, Product

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium executable (apt-get install -y chromium)"
)
ARGS = ["--no-sandbox"]
D = Decimal


async def open_register(pw: Any, profile: Path, **kw: Any) -> tuple[Any, Any]:
    """A browser with its own profile on disk (IndexedDB and the service worker's
    cache survive closing it), on /register."""
    context = await pw.chromium.launch_persistent_context(
        str(profile),
        executable_path=CHROMIUM,
        args=ARGS,
        viewport=kw.pop("viewport", {"width": 1024, "height": 768}),
        **kw,
    )
    page = context.pages[0] if context.pages else await context.new_page()
    page.on("pageerror", lambda e: print("PAGEERROR", e))
    return context, page


async def pair_with_key(page: Any, server: str, shop: Shop, prefix: str = "T1") -> None:
    await page.goto(f"{server}/register")
    await page.get_by_text("Use an API key instead").click()
    await page.get_by_label("Public key").fill(shop.key.public_key)
    await page.get_by_label("Secret key").fill(shop.key.secret_key)
    await page.get_by_label("Invoice prefix").fill(prefix)
    await page.get_by_role("button", name="Use this key").click()
    await page.locator("#screen-sell").wait_for(state="visible", timeout=30000)
    await wait_synced(page)
    # The test machine is shared and busy: Playwright's keys, 10 ms apart, reach the
    # page up to ~100 ms apart under load. The register's own setting allows for it
    # (a scanner's 50 ms is the default).
    await page.evaluate(
        "async () => { const db = await import('/register/js/db.js');"
        " await db.config.set('scan_gap_ms', 150); }"
    )
    await page.reload()
    await page.locator("#screen-sell").wait_for(state="visible", timeout=30000)


async def wait_synced(page: Any) -> None:
    await page.wait_for_function(
        "() => document.getElementById('last-sync').textContent !== 'never'", timeout=30000
    )


async def scan(page: Any, code: str) -> None:
    """A scanner: the characters 10 ms apart, then Enter."""
    await page.keyboard.type(code, delay=10)
    await page.keyboard.press("Enter")


async def pay_exact(page: Any, amount: str | None = None) -> str:
    """Tender the basket (F9), ``amount`` in cash or the exact total. On a loaded
    machine a key press can land while the page is still busy drawing the last
    line: F9 is pressed again (it only opens the tender, never pays)."""
    box = page.locator("#pay-amount")
    for attempt in range(3):
        await page.keyboard.press("F9")
        try:
            await box.wait_for(state="visible", timeout=10_000)
            break
        except Exception:
            if attempt == 2:
                raise
    if amount is not None:
        await box.fill(amount)
    before = await page.evaluate("() => window.__lastSale || ''")
    await box.press("Enter")
    await page.wait_for_function(f"() => (window.__lastSale || '') !== {before!r}")
    return str(await page.evaluate("() => window.__lastSale"))


async def queued(page: Any) -> int:
    return int(await page.locator("#queued").text_content() or "0")


async def wait_queue_empty(page: Any, timeout: float = 60000) -> None:
    """Until the register's queue itself (IndexedDB) is empty and its counter says
    so. The counter alone is not enough: a write queued just now is shown by a
    render that has not run yet, and the counter still says 0 from before."""
    deadline = asyncio.get_running_loop().time() + timeout / 1000
    while True:
        left = await page.evaluate(
            "async () => (await (await import('/register/js/queue.js')).pending()).length"
        )
        if left == 0 and await queued(page) == 0:
            return
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError(f"the register's queue still holds {left} writes")
        await asyncio.sleep(0.05)


async def orders_of(db: Database, shop: Shop, prefix: str) -> list[Order]:
    async def read(s: Any) -> list[Order]:
        rows = await s.scalars(
            select(Order)
            .where(
                Order.company_id == shop.company_id,
                Order.order_type == "sales",
                Order.invoice_number.like(f"{prefix}-%"),
            )
            .order_by(Order.id)
        )
        return list(rows)

    result: list[Order] = await db.read(read)
    return result


async def test_sell_scan_cash_offline_restart_and_catch_up(
    server: str,
    db: Database,
    tmp_path: Path,
    pw: Any,
) -> None:
    shop = await make_shop(db)
    apple = await db.read(lambda s: by_id(s, Product, shop.products["apple"]))
    apple_code = apple.barcode
    water = await db.read(lambda s: by_id(s, Product, shop.products["water"]))
    profile = tmp_path / "profile"
    context, page = await open_register(pw, profile)
    page.on("dialog", lambda d: d.accept())
    await pair_with_key(page, server, shop)
    assert await page.locator("#net").text_content() == "Online"

    # A scan while the focus is in the search box: a line, and nothing typed there.
    await page.locator("#search").click()
    await scan(page, apple_code)
    await page.locator("#lines tr").first.wait_for()
    assert await page.locator("#search").input_value() == ""
    assert "Apple juice" in (await page.locator("#lines").text_content() or "")
    assert await page.locator("#t-total").text_content() == "3.50"
    # An unknown code says so, and adds nothing.
    await scan(page, "999000111")
    assert "Unknown code 999000111" in (await page.locator("#scan-message").text_content() or "")
    assert await page.locator("#lines tr").count() == 1
    # Typing (slowly) still types.
    await page.locator("#search").press_sequentially("Still", delay=250)
    assert await page.locator("#search").input_value() == "Still"
    await page.locator("#search").fill("")

    # Cash with change: 10.00 for 3.50.
    number = await pay_exact(page, "10.00")
    assert number == "T1-000001"
    assert "change 6.50" in (await page.locator("#scan-message").text_content() or "")
    assert "Change" in (await page.locator("#receipt").text_content() or "")
    assert await page.evaluate("() => window.__printed") == 1
    await wait_queue_empty(page)
    first = await orders_of(db, shop, "T1")
    assert [o.invoice_number for o in first] == ["T1-000001"]
    assert first[0].total == D("3.50")

    # Offline: the page reloads from the service worker's cache and sells twenty.
    await context.set_offline(True)
    await page.reload()
    await page.locator("#screen-sell").wait_for(state="visible")
    await page.wait_for_function("() => document.getElementById('net').textContent === 'Offline'")
    for i in range(20):
        await page.locator("#search").click()
        await scan(page, water.item_code)
        if i % 2:
            await scan(page, water.item_code)  # two of them
        await page.locator("#lines tr").first.wait_for()
        n = await pay_exact(page)
        assert n == f"T1-{i + 2:06d}"
    # the count on screen follows the sale (drawn once the queue is read)
    await page.wait_for_function("() => document.getElementById('queued').textContent === '20'")
    assert len(await orders_of(db, shop, "T1")) == 1
    await context.close()

    # The browser restarts (same profile), back online: the queue posts, in order.
    context, page = await open_register(pw, profile)
    page.on("dialog", lambda d: d.accept())
    await page.goto(f"{server}/register")
    await page.locator("#screen-sell").wait_for(state="visible")
    await wait_queue_empty(page)
    orders = await orders_of(db, shop, "T1")
    numbers = [o.invoice_number for o in orders]
    assert numbers == [f"T1-{n:06d}" for n in range(1, 22)], numbers
    assert [o.total for o in orders[1:]] == [
        D("1.00") if i % 2 == 0 else D("2.00") for i in range(20)
    ]
    # Posting the queue again changes nothing (each write is done once its answer is stored).
    await page.evaluate("() => window.__register.flush()")
    assert len(await orders_of(db, shop, "T1")) == 21
    await check_books(db, shop.company_id)
    await context.close()


async def test_a_promotion_prices_an_offline_sale_as_the_server_records_it(
    server: str,
    db: Database,
    tmp_path: Path,
    pw: Any,
) -> None:
    """Three for two on water, synced from the promotions feed, rung up offline: the
    screen, the receipt and the recorded sale agree, and the line names the offer."""
    from tillbook.models import OrderItem
    from tillbook.promotions import service as promotions
    from tillbook.promotions.schemas import PromotionIn

    shop = await make_shop(db)
    water = await db.read(lambda s: by_id(s, Product, shop.products["water"]))
    body = PromotionIn(name="Water 3 for 2", kind="buy_x_get_y", buy=2, get=1,
                       applies_to="products", targets=[water.id],
                       starts_on="2026-01-01")  # type: ignore[arg-type]  # fmt: skip
    promo = await db.unit(lambda uow: promotions.create(uow.session, shop.company_id, None, body))
    context, page = await open_register(pw, tmp_path / "profile")
    page.on("dialog", lambda d: d.accept())
    await pair_with_key(page, server, shop, prefix="P1")
    await context.set_offline(True)
    await page.reload()
    await page.locator("#screen-sell").wait_for(state="visible")
    await page.wait_for_function("() => document.getElementById('net').textContent === 'Offline'")
    for _ in range(3):
        await page.locator("#search").click()
        await scan(page, water.item_code)
    await page.wait_for_function("() => document.getElementById('t-total').textContent === '2.00'")
    assert "Water 3 for 2" in (await page.locator("#lines").text_content() or "")
    number = await pay_exact(page)
    assert "Water 3 for 2" in (await page.locator("#receipt").text_content() or "")
    await context.set_offline(False)
    await wait_queue_empty(page)
    (order,) = await orders_of(db, shop, "P1")
    assert order.invoice_number == number and order.total == D("2.00")
    line = await db.read(
        lambda s: s.scalar(select(OrderItem).where(OrderItem.order_id == order.id))
    )
    assert (line.promotion_id, line.promotion_discount) == (promo.id, D("1.00"))
    await check_books(db, shop.company_id)
    await context.close()


async def test_a_refused_write_needs_attention_and_the_rest_go_on(
    server: str,
    db: Database,
    tmp_path: Path,
    pw: Any,
) -> None:
    shop = await make_shop(db)
    tea = await db.read(lambda s: by_id(s, Product, shop.products["tea"]))
    apple = await db.read(lambda s: by_id(s, Product, shop.products["apple"]))
    context, page = await open_register(pw, tmp_path / "profile")
    page.on("dialog", lambda d: d.accept())
    await pair_with_key(page, server, shop, prefix="T7")
    # Rare tea has no stock and the branch refuses negative stock: the server refuses.
    await context.set_offline(True)
    for code in (tea.item_code, apple.barcode):
        await page.locator("#search").fill(code)
        await page.locator("#search").press("Enter")
        await pay_exact(page)
    await page.wait_for_function("() => document.getElementById('queued').textContent === '2'")
    await context.set_offline(False)
    await page.evaluate("() => window.__register.flush()")
    await wait_queue_empty(page)
    await page.locator("#attention-btn").wait_for(state="visible")
    assert await page.locator("#attention-count").text_content() == "1"
    await page.keyboard.press("Alt+n")
    await page.locator("#attention li").first.wait_for()  # filled once the store is read
    text = await page.locator("#attention").text_content() or ""
    assert "T7-000001" in text and "stock" in text.lower(), text
    assert [o.invoice_number for o in await orders_of(db, shop, "T7")] == ["T7-000002"]
    await check_books(db, shop.company_id)
    await context.close()


def _pin_record(user_id: int, name: str, pin: str) -> dict[str, Any]:
    salt = os.urandom(16)
    digest = hashlib.pbkdf2_hmac("sha256", pin.encode(), salt, 100000, 32)
    return {
        "id": user_id,
        "name": name,
        "role": "cashier",
        "may_refund_without_invoice": False,
        "pin": {
            "algorithm": "PBKDF2-SHA256",
            "iterations": 100000,
            "salt": base64.b64encode(salt).decode(),
            "hash": base64.b64encode(digest).decode(),
        },
    }


async def test_pin_sign_in_offline_locks_after_five_tries_and_keeps_the_cart(
    server: str,
    db: Database,
    tmp_path: Path,
    pw: Any,
) -> None:
    shop = await make_shop(db)
    apple = await db.read(lambda s: by_id(s, Product, shop.products["apple"]))
    context, page = await open_register(pw, tmp_path / "profile")
    page.on("dialog", lambda d: d.accept())
    await pair_with_key(page, server, shop)
    # The cashiers' PIN hashes as the register endpoint serves them (contract).
    cashiers = [_pin_record(901, "Cara", "4321"), _pin_record(902, "Dan", "1111")]
    await page.evaluate(
        "async (c) => { const db = await import('/register/js/db.js');"
        " await db.apply('cashiers', c); }",
        cashiers,
    )
    await context.set_offline(True)
    await page.reload()
    await page.locator("#screen-cashier").wait_for(state="visible")
    await page.get_by_role("button", name="Dan").click()
    for left in (4, 3, 2, 1):
        await page.locator("#pin").fill("0000")
        await page.get_by_role("button", name="Sign in").click()
        await page.wait_for_function(
            f"() => document.getElementById('pin-error').textContent.includes('{left} tr')"
        )
    await page.locator("#pin").fill("0000")
    await page.get_by_role("button", name="Sign in").click()
    await page.wait_for_function(
        "() => document.getElementById('pin-error').textContent.includes('locked')"
    )
    # Locked: even the right PIN is refused now.
    await page.locator("#pin").fill("1111")
    await page.get_by_role("button", name="Sign in").click()
    await page.wait_for_function(
        "() => document.getElementById('pin-error').textContent.includes('locked')"
    )
    # Another cashier signs in; the cart survives a change of cashier.
    await page.locator("#pin-cancel").click()
    await page.get_by_role("button", name="Cara").click()
    await page.locator("#pin").fill("4321")
    await page.get_by_role("button", name="Sign in").click()
    await page.locator("#screen-sell").wait_for(state="visible")
    await page.wait_for_function(
        "() => document.getElementById('cashier-name').textContent.includes('Cara')"
    )
    await page.locator("#search").click()
    await scan(page, apple.barcode)
    await page.keyboard.press("Alt+c")
    await page.locator("#screen-cashier").wait_for(state="visible")
    await page.get_by_role("button", name="Cara").click()
    await page.locator("#pin").fill("4321")
    await page.get_by_role("button", name="Sign in").click()
    await page.locator("#screen-sell").wait_for(state="visible")
    assert await page.locator("#lines tr").count() == 1
    await context.close()


async def test_the_shell_is_public_installable_and_strict(server: str) -> None:
    async with httpx.AsyncClient(base_url=server) as http:
        page = await http.get("/register")
        assert page.status_code == 200
        csp = page.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "style-src 'self'" in csp
        assert "<script>" not in page.text and " style=" not in page.text
        assert " on" not in page.text.replace(" one", "").split("<body")[1].split("=")[0]
        manifest = (await http.get("/register/manifest.webmanifest")).json()
        assert manifest["start_url"] == "/register" and manifest["display"] == "standalone"
        assert (await http.get(manifest["icons"][0]["src"])).status_code == 200
        sw = await http.get("/register/sw.js")
        assert sw.headers["service-worker-allowed"] == "/register"
        assert "__VERSION__" not in sw.text and "/register/js/app.js" in sw.text
        assert (await http.get("/register/../app.py")).status_code == 404
        assert (await http.get("/register/js/nothing.js")).status_code == 404


# --- totals: the browser's arithmetic against POST /sales/preview -------------------


def _basket(rng: random.Random, shop: Shop, taxes: list[int | None]) -> dict[str, Any]:
    lines = []
    for _ in range(rng.randint(1, 6)):
        product = rng.choice(["apple", "water", "tea"])
        scale = rng.choice([0, 1, 2, 4])
        price = D(rng.randint(1, 2_000_000)) / D(10) ** scale / 100
        price = price.quantize(D("0.0001"))
        qty = D(rng.randint(1, 40000)) / D(10) ** rng.choice([0, 0, 1, 2, 4])
        qty = max(qty.quantize(D("0.0001")), D("0.0001"))
        line: dict[str, Any] = {
            "xid": shop.xid(product),
            "quantity": str(qty),
            "unit_price": str(price),
        }
        if product == "water" and rng.random() < 0.3:
            line["selected_unit_id"] = shop.box_unit_id
            line["quantity"] = str(rng.randint(1, 5))
        tax = rng.choice(taxes)
        if tax is not None:
            line["tax_id"] = tax
        if rng.random() < 0.5:
            rate = D(rng.randint(0, 1000000)) / D(10) ** rng.choice([4, 2, 0]) / 100
            line["discount_rate"] = str(min(rate, D(100)).quantize(D("0.0001")))
        lines.append(line)
    discount = rng.choice(["0", "0", "0.01", str(D(rng.randint(0, 500)) / 100)])
    return {"lines": lines, "discount": discount}


async def test_totals_equal_the_preview_over_random_baskets(
    server: str,
    db: Database,
    pw: Any,
) -> None:
    shop = await make_shop(db)

    async def more_taxes(uow: Any) -> list[int]:
        odd = await catalog.create_tax(uow.session, shop.company_id, "Odd 7.125%", D("7.125"))
        incl = await catalog.create_tax(
            uow.session, shop.company_id, "Odd 15.5% incl", D("15.5"), True
        )
        tiny = await catalog.create_tax(uow.session, shop.company_id, "Tiny 0.0001%", D("0.0001"))
        return [odd.id, incl.id, tiny.id]

    extra = await db.unit(more_taxes)
    rates = {shop.tax10_id: ("10", False), shop.tax_incl_id: ("20", True)}
    rates.update(
        {extra[0]: ("7.125", False), extra[1]: ("15.5", True), extra[2]: ("0.0001", False)}
    )
    taxes: list[int | None] = [None, *rates]
    rng = random.Random(20261126)
    baskets = [_basket(rng, shop, taxes) for _ in range(300)]
    browser = await pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
    page = await browser.new_page()
    await page.goto(f"{server}/register")
    inputs = [
        {
            "lines": [
                {
                    "quantity": ln["quantity"],
                    "unit_price": ln["unit_price"],
                    "discount_rate": ln.get("discount_rate", "0"),
                    "tax_rate": rates[ln["tax_id"]][0] if "tax_id" in ln else "0",
                    "tax_inclusive": rates[ln["tax_id"]][1] if "tax_id" in ln else False,
                }
                for ln in b["lines"]
            ],
            "discount": b["discount"],
        }
        for b in baskets
    ]
    computed = await page.evaluate(
        "async (baskets) => { const m = await import('/register/js/totals.js');"
        " return baskets.map((b) => m.asText(m.saleTotals(b))); }",
        inputs,
    )
    await browser.close()
    compared = 0
    async with httpx.AsyncClient(base_url=f"{server}/api/v1/public", timeout=30) as http:
        for basket, mine in zip(baskets, computed, strict=True):
            body = {
                "user_id": shop.walk_in_id,
                "order_date": "2026-11-26T10:00:00Z",
                "product_items": basket["lines"],
                "discount": basket["discount"],
            }
            r = await http.post("/sales/preview", json=body, headers=shop.headers)
            if r.status_code == 422 and D(mine["total"]) < 0:
                assert "discount" in r.json()["errors"], r.text  # more than the sale
                continue
            assert r.status_code == 200, (body, r.text)
            server_figures = r.json()["data"]
            for name in ("subtotal", "tax_amount", "discount", "total"):
                assert server_figures[name] == mine[name], (name, body, server_figures, mine)
            for line, got in zip(server_figures["items"], mine["items"], strict=True):
                assert (line["net"], line["tax"], line["discount"], line["total"]) == (
                    got["net"],
                    got["tax"],
                    got["discount"],
                    got["total"],
                ), (body, line, got)
            compared += 1
    assert compared >= 250, compared


PROMOTIONS: list[dict[str, Any]] = [
    {"name": "Drinks 15%", "kind": "percent_off", "percent": "15", "applies_to": "categories",
     "targets": ["drinks"], "priority": 2},
    {"name": "Water less 7c", "kind": "amount_off", "amount": "0.07", "applies_to": "products",
     "targets": ["water"], "priority": 3},
    {"name": "Acme 3 for 2.5", "kind": "buy_x_get_y", "buy": 2, "get": 1, "percent": "50",
     "applies_to": "brands", "targets": ["brand"], "priority": 5},
    {"name": "Bulk", "kind": "quantity_break", "combines": False,
     "tiers": [{"min_quantity": "3", "percent": "5"}, {"min_quantity": "10", "percent": "12.5"}]},
    {"name": "Lunch", "kind": "bundle", "price": "3.99",
     "items": [{"product_id": "apple", "quantity": "1"}, {"product_id": "tea", "quantity": "2"}],
     "priority": 9},
    {"name": "Weekend", "kind": "percent_off", "percent": "50", "weekdays": [6, 7]},
    {"name": "Evenings", "kind": "percent_off", "percent": "40", "from_time": "18:00",
     "until_time": "21:00", "priority": 20},
]  # fmt: skip


async def test_promoted_totals_equal_the_preview_over_random_baskets(
    server: str,
    db: Database,
    pw: Any,
) -> None:
    """The register's promotion engine (promotions.js) against the server's, line by
    line: which promotion priced it, what it took off, and every total (issue 29)."""
    from tillbook.promotions import service as promotions
    from tillbook.promotions.schemas import PromotionIn

    shop = await make_shop(db)
    refs = {"drinks": shop.category_id, "water": shop.products["water"],
            "brand": shop.brand_id, "apple": shop.products["apple"],
            "tea": shop.products["tea"]}  # fmt: skip

    async def create(uow: Any) -> None:
        for spec in PROMOTIONS:
            body = {**spec, "starts_on": "2026-01-01"}
            body["targets"] = [refs[t] for t in spec.get("targets", [])]
            if "items" in spec:
                body["items"] = [{**i, "product_id": refs[i["product_id"]]} for i in spec["items"]]
            await promotions.create(uow.session, shop.company_id, None, PromotionIn(**body))

    await db.unit(create)
    rates = {shop.tax10_id: ("10", False), shop.tax_incl_id: ("20", True)}
    rng = random.Random(20261127)
    baskets = [_basket(rng, shop, [None, *rates]) for _ in range(200)]
    for basket in baskets[::3]:  # enough whole units for the groups and bundles
        for line in basket["lines"]:
            if "selected_unit_id" not in line:
                line["quantity"] = str(rng.randint(1, 7))
    moments = ["2026-11-26T10:00:00Z", "2026-11-25T19:30:00Z", "2026-11-21T10:00:00Z"]
    # each product's category and the ones above it (Juice sits under Drinks)
    products = {shop.products["apple"]: ([shop.child_category_id, shop.category_id], shop.brand_id),
                shop.products["water"]: ([shop.category_id], None),
                shop.products["tea"]: ([], None)}  # fmt: skip
    by_xid = {shop.xid(k): v for k, v in shop.products.items()}
    async with httpx.AsyncClient(base_url=f"{server}/api/v1/public", timeout=30) as http:
        rules = (await http.get("/promotions", headers=shop.headers)).json()["data"]
        assert len(rules) == len(PROMOTIONS)
        inputs = [
            {
                "at": moments[n % 3],
                "lines": [
                    {
                        "quantity": ln["quantity"],
                        "unit_price": ln["unit_price"],
                        "discount_rate": ln.get("discount_rate", "0"),
                        "tax_rate": rates[ln["tax_id"]][0] if "tax_id" in ln else "0",
                        "tax_inclusive": rates[ln["tax_id"]][1] if "tax_id" in ln else False,
                        "product_id": by_xid[ln["xid"]],
                        "categories": products[by_xid[ln["xid"]]][0],
                        "brand_id": products[by_xid[ln["xid"]]][1],
                    }
                    for ln in b["lines"]
                ],
                "discount": b["discount"],
            }
            for n, b in enumerate(baskets)
        ]
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = await browser.new_page()
        await page.goto(f"{server}/register")
        computed = await page.evaluate(
            "async ([baskets, rules, wid]) => {"
            " const t = await import('/register/js/totals.js');"
            " const p = await import('/register/js/promotions.js');"
            " return baskets.map((b) => t.asText(t.saleTotals({...b,"
            "   rules: rules.filter((r) => p.inForce(r, wid, new Date(b.at), 'UTC'))}))); }",
            [inputs, rules, shop.warehouse_id],
        )
        await browser.close()
        compared = promoted = 0
        for n, (basket, mine) in enumerate(zip(baskets, computed, strict=True)):
            body = {
                "user_id": shop.walk_in_id,
                "order_date": moments[n % 3],
                "product_items": basket["lines"],
                "discount": basket["discount"],
            }
            r = await http.post("/sales/preview", json=body, headers=shop.headers)
            if r.status_code == 422 and D(mine["total"]) < 0:
                continue
            assert r.status_code == 200, (body, r.text)
            server_figures = r.json()["data"]
            for name in ("subtotal", "tax_amount", "discount", "total"):
                assert server_figures[name] == mine[name], (name, body, server_figures, mine)
            for line, got in zip(server_figures["items"], mine["items"], strict=True):
                ours = (line["net"], line["tax"], line["discount"], line["total"],
                        line["promotion_id"], line["promotion_discount"])  # fmt: skip
                theirs = (got["net"], got["tax"], got["discount"], got["total"],
                          got["promotion_id"], got["promotion_discount"])  # fmt: skip
                assert ours == theirs, (body, line, got)
                promoted += line["promotion_id"] is not None
            compared += 1
    assert compared >= 150 and promoted >= 100, (compared, promoted)
    # Every kind priced some line, and the weekday and hours rules both bit.
    names = {r["id"]: r["name"] for r in rules}
    seen = {names[i["promotion_id"]] for m in computed for i in m["items"] if i["promotion_id"]}
    drinks = next(r["id"] for r in rules if r["name"] == "Drinks 15%")
    assert any(
        line["product_id"] == shop.products["apple"] and got["promotion_id"] == drinks
        for basket, mine in zip(inputs, computed, strict=True)
        for line, got in zip(basket["lines"], mine["items"], strict=True)
    ), "a promotion on Drinks prices the juice filed under Drinks › Juice"
    assert seen >= {"Drinks 15%", "Water less 7c", "Acme 3 for 2.5", "Lunch", "Weekend",
                    "Evenings"}, seen  # fmt: skip


async def test_pair_in_the_browser_sell_and_be_revoked(
    server: str,
    db: Database,
    tmp_path: Path,
    pw: Any,
) -> None:
    from tests.web_helpers import OWNER_PASSWORD, owner_email

    shop = await make_shop(db)
    apple = await db.read(lambda s: by_id(s, Product, shop.products["apple"]))
    email = await owner_email(db, shop)
    context, page = await open_register(pw, tmp_path / "profile")
    page.on("dialog", lambda d: d.accept())
    await page.goto(f"{server}/register")
    await page.get_by_label("Email").fill(email)
    await page.get_by_label("Password").fill(OWNER_PASSWORD)
    await page.get_by_role("button", name="Sign in").click()
    await page.get_by_label("Branch").select_option(str(shop.warehouse_id))
    await page.get_by_label("Register name").fill("Front till 1")
    await page.get_by_role("button", name="Pair this register").click()
    await page.locator("#screen-sell").wait_for(state="visible", timeout=30000)
    await wait_synced(page)
    reg = await page.evaluate("() => window.__register.state.register")
    assert reg["register_api"] is True and reg["prefix"].startswith("R"), reg
    prefix = reg["prefix"]
    await page.locator("#search").click()
    await page.locator("#search").fill(apple.item_code)
    await page.locator("#search").press("Enter")
    assert await pay_exact(page, "5.00") == f"{prefix}-000001"
    await wait_queue_empty(page)
    assert [o.invoice_number for o in await orders_of(db, shop, prefix)] == [f"{prefix}-000001"]

    # The owner revokes it: its next write is refused and stays on the device.
    async with httpx.AsyncClient(base_url=f"{server}/api/v1/admin") as http:
        token = (
            await http.post("/login", json={"email": email, "password": OWNER_PASSWORD})
        ).json()["token"]
        auth = {"Authorization": f"Bearer {token}", "Idempotency-Key": "revoke-1"}
        r = await http.post(f"/registers/{reg['id']}/revoke", headers=auth, json={})
        assert r.status_code == 200, r.text
    await page.locator("#search").fill(apple.item_code)
    await page.locator("#search").press("Enter")
    await pay_exact(page, "5.00")
    await page.evaluate("() => window.__register.flush()")
    await page.wait_for_function(
        "() => document.getElementById('net').textContent.startsWith('Refused')"
    )
    assert await queued(page) == 1
    assert len(await orders_of(db, shop, prefix)) == 1
    await check_books(db, shop.company_id)
    await context.close()


# --- gift cards at the register (issue 29 item 2) ------------------------------------

CARD_CODE = re.compile(r"[A-Z2-7]{4}(?:-[A-Z2-7]{4}){3}")


async def card_balance(db: Database, shop: Shop, code: str) -> Decimal:
    from tillbook.giftcards import service as giftcards

    card = await db.read(lambda s: giftcards.card_by_code(s, shop.company_id, code))
    assert card is not None, code
    return D(card.balance)


async def stored(page: Any, store: str) -> str:
    """One IndexedDB store of the register, as JSON text."""
    text = await page.evaluate(
        "async (s) => { const db = await import('/register/js/db.js');"
        " return JSON.stringify(await db.all(s)); }",
        store,
    )
    return str(text)


async def posted_orders(page: Any, db: Database, shop: Shop, prefix: str, n: int) -> list[Order]:
    """The register's sales once ``n`` are on the server (the queue's count on screen
    lags a sale by a moment, so it is not waited on); none refused."""
    for _ in range(300):
        orders = await orders_of(db, shop, prefix)
        if len(orders) >= n:
            return orders
        await asyncio.sleep(0.1)
    raise AssertionError(await stored(page, "attention"))


async def sell_card_at_register(page: Any, amount: str, mode_id: int) -> None:
    await page.keyboard.press("Alt+g")
    await page.locator("#giftcard-amount").wait_for(state="visible")
    await page.locator("#giftcard-amount").fill(amount)
    await page.locator("#giftcard-mode").select_option(str(mode_id))
    await page.locator("#giftcard-sell").click()


async def card_tender(page: Any, code: str, amount: str) -> None:
    await page.locator("#pay-card").fill(code)
    await page.locator("#pay-amount").fill(amount)
    await page.locator("#pay-amount").press("Enter")


async def test_gift_cards_sold_spent_and_refused_offline_at_the_register(
    server: str,
    db: Database,
    tmp_path: Path,
    pw: Any,
) -> None:
    """A card sold at the register prints its code once and keeps only its last
    four; two cards and cash pay one sale, each card checked with the server first;
    offline the gift mode refuses, and a card sold offline prints when posted."""
    from tillbook.models import Payment

    shop = await make_shop(db)
    apple = await db.read(lambda s: by_id(s, Product, shop.products["apple"]))
    context, page = await open_register(pw, tmp_path / "profile")
    page.on("dialog", lambda d: d.accept())
    await pair_with_key(page, server, shop, prefix="GC")

    # Sold online: the receipt prints the code in full; the device keeps the last four.
    await sell_card_at_register(page, "30.00", shop.cash_mode_id)
    await page.wait_for_function("() => (window.__printedCards || 0) === 1")
    receipt = await page.locator("#receipt").text_content() or ""
    found = CARD_CODE.search(receipt)
    assert found and "Gift card sold GC-G000001" in receipt, receipt
    first = found.group(0)
    assert await card_balance(db, shop, first) == D("30.00")
    done = await stored(page, "done")
    assert first not in done and first.replace("-", "") not in done and first[-4:] in done
    assert await queued(page) == 0 and await stored(page, "attention") == "[]"
    async with httpx.AsyncClient(base_url=f"{server}/api/v1/public") as http:
        body = {"amount": "2.00", "all_payments": [{"amount": "2.00", "payment_mode_id": "cash"}]}
        headers = {**shop.headers, "Idempotency-Key": "second-card"}
        r = await http.post("/gift-cards", json=body, headers=headers)
        assert r.status_code == 200, r.text
        second = r.json()["data"]["code"]

    # A sale of three apples: card one partly, card two wholly, the rest in cash.
    for _ in range(3):
        await page.locator("#search").click()
        await scan(page, apple.barcode)
    await page.wait_for_function(
        "() => document.querySelector('#lines td.num')?.textContent.startsWith('3')"
    )
    total = D(await page.locator("#t-total").text_content() or "0")
    assert total > D("7.00"), total
    await page.keyboard.press("F9")
    await page.locator("#pay-modes button", has_text="Gift card").click()
    await page.locator("#pay-card").wait_for(state="visible")
    error = page.locator("#pay-error")
    await card_tender(page, "AAAA-AAAA-AAAA-AAAA", "5.00")  # no such card
    await page.wait_for_function(
        "() => /unknown/.test(document.getElementById('pay-error').textContent)"
    )
    assert await page.locator("#tenders li").count() == 0
    # The first card scanned into the code field: its code, never a product.
    await page.locator("#pay-card").fill("")
    await page.locator("#pay-card").focus()
    await scan(page, first)
    await page.wait_for_function(f"() => document.getElementById('pay-card').value === {first!r}")
    assert await page.locator("#lines tr").count() == 1
    await page.locator("#pay-amount").fill("5.00")
    await page.locator("#pay-amount").press("Enter")
    await page.locator("#tenders li").first.wait_for()
    # More than the second card holds: said, nothing added; then all of it.
    await card_tender(page, second, "3.00")
    await page.wait_for_function(
        "() => /holds 2\\.00/.test(document.getElementById('pay-error').textContent)"
    )
    assert await page.locator("#tenders li").count() == 1
    await card_tender(page, second, "2.00")
    await page.wait_for_function("() => document.querySelectorAll('#tenders li').length === 2")
    assert await error.text_content() == ""
    await page.locator("#pay-modes button", has_text="Cash").click()
    cash = total - D("7.00")
    assert await page.locator("#pay-amount").input_value() == str(cash)
    before = await page.evaluate("() => window.__lastSale || ''")
    await page.locator("#pay-amount").press("Enter")
    await page.wait_for_function(f"() => (window.__lastSale || '') !== {before!r}")
    receipt = await page.locator("#receipt").text_content() or ""
    for code in (first, second):
        assert f"Gift card ••••{code[-4:]}" in receipt, receipt
        assert code not in receipt and code.replace("-", "") not in receipt
    (order,) = await posted_orders(page, db, shop, "GC", 1)
    assert order.total == total
    gift_mode = await page.evaluate("() => window.__register.state.giftMode.id")
    tenders = await db.read(
        lambda s: s.execute(
            select(Payment.payment_mode_id, Payment.amount)
            .where(Payment.order_id == order.id)
            .order_by(Payment.amount)
        )
    )
    assert sorted((m, D(a)) for m, a in tenders) == sorted(
        [(gift_mode, D("2.00")), (gift_mode, D("5.00")), (shop.cash_mode_id, cash)]
    )
    assert await card_balance(db, shop, first) == D("25.00")
    assert await card_balance(db, shop, second) == D("0.00")
    assert first not in await stored(page, "history")

    # Offline: the gift mode says it needs the connection and takes nothing.
    await context.set_offline(True)
    await page.wait_for_function("() => document.getElementById('net').textContent === 'Offline'")
    await page.locator("#search").click()
    await scan(page, apple.barcode)
    await page.locator("#lines tr").first.wait_for()
    await page.keyboard.press("F9")
    await page.locator("#pay-modes button", has_text="Gift card").click()
    await page.wait_for_function(
        "() => document.getElementById('pay-error').textContent.includes('needs the connection')"
    )
    await card_tender(page, first, "1.00")
    assert "needs the connection" in (await error.text_content() or "")
    assert await page.locator("#tenders li").count() == 0
    await page.keyboard.press("Escape")
    assert await queued(page) == 0
    # A card sold offline queues; its code prints when the answer comes.
    await sell_card_at_register(page, "7.50", shop.cash_mode_id)
    await page.wait_for_function(
        "() => document.getElementById('scan-message').textContent.includes('back online')"
    )
    await page.wait_for_function("() => document.getElementById('queued').textContent === '1'")
    assert await page.evaluate("() => window.__printedCards") == 1
    await context.set_offline(False)
    await page.evaluate("() => window.__register.flush()")
    await page.wait_for_function("() => window.__printedCards === 2")
    receipt = await page.locator("#receipt").text_content() or ""
    found = CARD_CODE.search(receipt)
    assert found and "GC-G000002" in receipt, receipt
    assert await card_balance(db, shop, found.group(0)) == D("7.50")
    assert found.group(0) not in await stored(page, "done")
    await check_books(db, shop.company_id)
    await context.close()
