"""The register (DESIGN.md §15, issue 24) through a cashier's day in a real browser,
paired with a register's own credential (prefix R1, R2, the register endpoints):
two registers of one branch selling offline, the connection cut in the middle of
posting the queue, a shift from its float to its printed Z report, returns with and
without the invoice, and the receipt's QR code.

Playwright drives the system's Chromium against ``tillbook serve`` on the test
database (tests/registers/test_register_browser.py has the fixtures); skipped, with the
reason, only when no Chromium executable is found."""

from __future__ import annotations

import asyncio
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
import segno
from sqlalchemy import select

from tests.factories import Shop, by_id, make_shop
from tests.invariants import check_books
from tests.qr_decode import decode, format_info
from tests.registers.test_register_browser import (
    CHROMIUM,
    open_register,
    orders_of,
    pay_exact,
    queued,
    wait_queue_empty,
    wait_synced,
)
from tests.registers.test_registers import staff_id, stock
from tests.web_helpers import OWNER_PASSWORD, add_staff, owner_email
from tillbook.db import Database
from tillbook.models import Order, Product

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium executable (apt-get install -y chromium)"
)
D = Decimal


async def owner_token(http: httpx.AsyncClient, db: Database, shop: Shop) -> dict[str, str]:
    email = await owner_email(db, shop)
    r = await http.post("/login", json={"email": email, "password": OWNER_PASSWORD})
    assert r.status_code == 200, r.text
    return {"Authorization": f"Bearer {r.json()['token']}"}


async def new_register(server: str, db: Database, shop: Shop, name: str) -> dict[str, Any]:
    """A register paired by the owner through the admin API (its secret, once)."""
    async with httpx.AsyncClient(base_url=f"{server}/api/v1/admin", timeout=30) as http:
        auth = await owner_token(http, db, shop)
        r = await http.post(
            "/registers",
            json={"warehouse_id": shop.warehouse_id, "name": name},
            headers={**auth, "Idempotency-Key": f"pair-{shop.company_id}-{name}"},
        )
        assert r.status_code == 201, r.text
        data: dict[str, Any] = r.json()["data"]
        return data


def headers_of(reg: dict[str, Any]) -> dict[str, str]:
    return {"X-Service-Public-Key": reg["public_key"], "X-Service-Secret-Key": reg["secret_key"]}


async def use_register(page: Any, server: str, reg: dict[str, Any]) -> None:
    """The device takes the register's credential ("Use an API key"): the register
    endpoints answer it, so it sells under the register's own prefix."""
    await page.goto(f"{server}/register")
    await page.get_by_text("Use an API key instead").click()
    await page.get_by_label("Public key").fill(reg["public_key"])
    await page.get_by_label("Secret key").fill(reg["secret_key"])
    await page.get_by_label("Invoice prefix").fill(reg["prefix"])
    await page.get_by_role("button", name="Use this key").click()
    await page.wait_for_function(
        "() => !document.getElementById('screen-sell').hidden"
        " || !document.getElementById('screen-cashier').hidden",
        timeout=60000,
    )
    await wait_synced(page)
    state = await page.evaluate("() => window.__register.state.register")
    assert state["register_api"] is True and state["prefix"] == reg["prefix"], state


async def ring(page: Any, code: str, amount: str | None = None) -> str:
    """One sale of one item found by its code, paid in cash (exact, or ``amount``)."""
    await page.locator("#search").fill(code)
    await page.locator("#search").press("Enter")
    await page.locator("#lines tr").first.wait_for()
    return await pay_exact(page, amount)


async def until_queued(page: Any, n: int) -> None:
    """The queued count on screen reaches ``n`` (it is drawn once the queue is read)."""
    await page.wait_for_function(
        f"() => document.getElementById('queued').textContent === '{n}'", timeout=30000
    )


async def go_online(context: Any, page: Any) -> None:
    await context.set_offline(False)
    await page.evaluate(
        "async () => { const q = await import('/register/js/queue.js'); await q.wake();"
        " await window.__register.flush(); }"
    )


async def test_two_registers_offline_on_one_branch_then_online(
    server: str,
    db: Database,
    tmp_path: Path,
    pw: Any,
) -> None:
    shop = await make_shop(db)
    apple = await db.read(lambda s: by_id(s, Product, shop.products["apple"]))
    water = await db.read(lambda s: by_id(s, Product, shop.products["water"]))
    apple_before, water_before = await stock(db, shop, "apple"), await stock(db, shop, "water")
    regs = [await new_register(server, db, shop, f"Till {n}") for n in (1, 2)]
    assert [r["prefix"] for r in regs] == ["R1", "R2"]
    tills = []
    for i, reg in enumerate(regs):
        context, page = await open_register(pw, tmp_path / f"till{i}")
        page.on("dialog", lambda d: d.accept())
        await use_register(page, server, reg)
        tills.append((context, page))

    # Both lose the connection and sell the same products.
    for context, _page in tills:
        await context.set_offline(True)
    for round_ in range(3):
        for i, (_context, page) in enumerate(tills):
            number = await ring(page, apple.item_code)
            assert number == f"R{i + 1}-{(round_ + 1) * (i + 1) - i:06d}"
            if i == 1:
                assert await ring(page, water.item_code) == f"R2-{(round_ + 1) * 2:06d}"
    await until_queued(tills[0][1], 3)
    await until_queued(tills[1][1], 6)
    assert await orders_of(db, shop, "R1") == [] and await orders_of(db, shop, "R2") == []

    # Back online together: each queue posts, every sale once.
    await asyncio.gather(*(go_online(context, page) for context, page in tills))
    for _context, page in tills:
        await wait_queue_empty(page)
    r1 = await orders_of(db, shop, "R1")
    r2 = await orders_of(db, shop, "R2")
    assert [o.invoice_number for o in r1] == [f"R1-{n:06d}" for n in (1, 2, 3)]
    assert [o.invoice_number for o in r2] == [f"R2-{n:06d}" for n in range(1, 7)]
    assert sum((o.total for o in r1), D(0)) == D("10.50")
    assert sum((o.total for o in r2), D(0)) == D("13.50")
    assert await stock(db, shop, "apple") == apple_before - 6
    assert await stock(db, shop, "water") == water_before - 3
    # Posting again changes nothing.
    for _context, page in tills:
        await page.evaluate("() => window.__register.flush()")
    assert len(await orders_of(db, shop, "R1")) + len(await orders_of(db, shop, "R2")) == 9
    await check_books(db, shop.company_id)
    for context, _page in tills:
        await context.close()


async def test_the_connection_cut_while_the_queue_posts(
    server: str,
    db: Database,
    tmp_path: Path,
    pw: Any,
) -> None:
    shop = await make_shop(db)
    water = await db.read(lambda s: by_id(s, Product, shop.products["water"]))
    reg = await new_register(server, db, shop, "Till 1")
    context, page = await open_register(pw, tmp_path / "till")
    page.on("dialog", lambda d: d.accept())
    await use_register(page, server, reg)
    await context.set_offline(True)
    for _ in range(5):
        await ring(page, water.item_code)
    await until_queued(page, 5)

    # The third sale reaches the server and is recorded, but its answer never comes
    # back: the connection drops under it, and stays down for a while.
    reached: list[str] = []
    down = False

    async def cut(route: Any) -> None:
        nonlocal down
        if route.request.method != "POST":
            await route.continue_()
            return
        if down:
            await route.abort("internetdisconnected")
            return
        reached.append(route.request.headers.get("idempotency-key", ""))
        if len(reached) == 3:
            answer = await route.fetch()
            assert answer.status == 200, await answer.text()
            down = True
            await route.abort("connectionreset")
            return
        await route.continue_()

    await page.route("**/api/v1/public/sales", cut)
    await context.set_offline(False)
    await page.evaluate("() => window.__register.flush()")
    await page.wait_for_function("() => document.getElementById('queued').textContent === '3'")
    assert len(await orders_of(db, shop, "R1")) == 3  # the lost answer's sale is there
    # Reconnected: the queue goes on from the sale whose answer was lost; it is sent
    # again with its key and answered from the record.
    down = False
    await page.evaluate(
        "async () => { const q = await import('/register/js/queue.js'); await q.wake();"
        " await window.__register.flush(); }"
    )
    await wait_queue_empty(page)
    assert reached.count("register-R1-sale-000003") == 2, reached
    orders = await orders_of(db, shop, "R1")
    assert [o.invoice_number for o in orders] == [f"R1-{n:06d}" for n in range(1, 6)]
    done = await page.evaluate(
        "async () => { const db = await import('/register/js/db.js');"
        " return (await db.all('done')).map((d) => [d.key, d.answer.order_id]); }"
    )
    assert dict(done)["register-R1-sale-000003"] == orders[2].id
    await check_books(db, shop.company_id)
    await context.close()


async def test_a_shift_from_float_to_z_report_partly_offline(
    server: str,
    db: Database,
    tmp_path: Path,
    pw: Any,
) -> None:
    shop = await make_shop(db)
    apple = await db.read(lambda s: by_id(s, Product, shop.products["apple"]))
    reg = await new_register(server, db, shop, "Till 1")
    context, page = await open_register(pw, tmp_path / "till")
    page.on("dialog", lambda d: d.accept())
    await use_register(page, server, reg)

    # Offline: open with a float of 50.00, sell 3.50 (10.00 tendered), 5.00 out to the bank.
    await context.set_offline(True)
    await page.keyboard.press("Alt+s")
    await page.locator("#shift-float").fill("50.00")
    await page.get_by_role("button", name="Open shift").click()
    await page.wait_for_function(
        "() => document.getElementById('shift-state').textContent === 'Shift R1-S000001'"
    )
    assert await ring(page, apple.item_code, "10.00") == "R1-000001"
    await page.keyboard.press("Alt+s")
    await page.locator("#shift-cash input[value=out]").check()
    await page.locator("#cash-amount").fill("5.00")
    await page.locator("#cash-reason").fill("to the bank")
    await page.get_by_role("button", name="Record cash").click()
    await page.wait_for_function(
        "() => document.getElementById('shift-report').textContent.includes('recorded')"
    )
    await until_queued(page, 3)
    # The X report offline: this register's own figures.
    await page.get_by_role("button", name="X report").click()
    await page.wait_for_function(
        "() => document.getElementById('shift-report').textContent.includes('offline')"
    )
    assert "Sales 1, total 3.50" in (await page.locator("#shift-report").text_content() or "")

    # Online: the queue posts; the server's X report, which does not tell the drawer's
    # expected cash (the count is blind).
    await go_online(context, page)
    await wait_queue_empty(page)
    await page.get_by_role("button", name="X report").click()
    await page.wait_for_function(
        "() => document.getElementById('shift-report').textContent.startsWith('X report')"
    )
    x = await page.locator("#shift-report").text_content() or ""
    assert "Sales 1: total 3.50" in x and "Cash out 5.00 (to the bank)" in x, x
    assert "expected" not in x.lower() and "48.50" not in x, x

    # The blind count: 48.50 in the drawer (50.00 + 3.50 - 5.00); the Z report printed.
    cash = page.locator(f"#count-modes input[data-mode='{shop.cash_mode_id}']")
    await cash.fill("48.50")
    await page.get_by_role("button", name="Close shift and print Z report").click()
    await page.wait_for_function(
        "() => document.getElementById('receipt').textContent.includes('Z report')"
    )
    z_printed = await page.locator("#receipt").text_content() or ""
    assert "Sales 1: total 3.50" in z_printed, z_printed
    assert "expected 48.50, counted 48.50, difference 0.00" in z_printed, z_printed
    assert "Over/short 0.00" in z_printed, z_printed
    assert await page.locator("#shift-state").text_content() == "No shift"

    async with httpx.AsyncClient(base_url=f"{server}/api/v1/public", timeout=30) as http:
        r = await http.get("/shifts/R1-S000001", headers=headers_of(reg))
    z = r.json()["data"]
    assert z["report"] == "Z" and z["status"] == "closed" and z["register"] == "R1", z
    assert z["opening_float"] == "50.00"
    assert z["sales"]["count"] == 1 and z["sales"]["total"] == "3.50"
    assert [(c["direction"], c["amount"]) for c in z["cash_movements"]] == [("out", "5.00")]
    drawer = next(e for e in z["expected"] if e["payment_mode_id"] == shop.cash_mode_id)
    assert (drawer["expected"], drawer["counted"]) == ("48.50", "48.50")
    assert z["over_short"] == "0.00"
    sale = (await orders_of(db, shop, "R1"))[0]
    assert sale.shift_id == z["id"]
    await check_books(db, shop.company_id)
    await context.close()


async def set_pin(server: str, db: Database, shop: Shop, user_id: int, pin: str) -> None:
    async with httpx.AsyncClient(base_url=f"{server}/api/v1/admin", timeout=30) as http:
        auth = await owner_token(http, db, shop)
        r = await http.put(
            f"/staff/{user_id}/pin",
            json={"pin": pin},
            headers={**auth, "Idempotency-Key": f"pin-{user_id}"},
        )
        assert r.status_code == 200, r.text


async def sign_in_as(page: Any, name: str, pin: str) -> None:
    await page.locator("#screen-cashier").wait_for(state="visible")
    await page.locator("#cashiers").get_by_role("button", name=name).click()
    await page.locator("#pin").fill(pin)
    await page.locator("#pin-form").get_by_role("button", name="Sign in").click()
    await page.locator("#screen-sell").wait_for(state="visible")


async def returns_of(db: Database, shop: Shop) -> list[Order]:
    async def read(s: Any) -> list[Order]:
        rows = await s.scalars(
            select(Order)
            .where(Order.company_id == shop.company_id, Order.order_type == "sales-returns")
            .order_by(Order.id)
        )
        return list(rows)

    found: list[Order] = await db.read(read)
    return found


async def test_returns_by_invoice_number_and_without_one_on_a_managers_pin(
    server: str,
    db: Database,
    tmp_path: Path,
    pw: Any,
) -> None:
    shop = await make_shop(db)
    apple = await db.read(lambda s: by_id(s, Product, shop.products["apple"]))
    water = await db.read(lambda s: by_id(s, Product, shop.products["water"]))
    owner_id = await staff_id(db, await owner_email(db, shop))
    cashier_id = await staff_id(db, await add_staff(db, shop, "cashier", shop.warehouse_id))
    await set_pin(server, db, shop, owner_id, "1234")
    await set_pin(server, db, shop, cashier_id, "5678")
    reg = await new_register(server, db, shop, "Till 1")
    context, page = await open_register(pw, tmp_path / "till")
    page.on("dialog", lambda d: d.accept())
    await use_register(page, server, reg)
    await sign_in_as(page, "A cashier", "5678")

    # Online: a sale, then its return by typing the receipt's invoice number.
    assert await ring(page, apple.item_code, "5.00") == "R1-000001"
    await wait_queue_empty(page)
    # The receipt's QR code says the invoice number.
    assert await page.locator("#receipt svg.qr-code").get_attribute("data-text") == "R1-000001"
    await page.keyboard.press("Alt+r")
    await page.locator("#return-number").fill("R1-000001")
    await page.get_by_role("button", name="Find").click()
    await page.locator("#return-lines input").first.fill("1")
    await page.get_by_role("button", name="Record return", exact=True).click()
    await page.wait_for_function("() => !document.getElementById('dlg-return').open")
    await wait_queue_empty(page)
    attention = await page.evaluate(
        "async () => (await import('/register/js/queue.js')).attention()"
    )
    assert attention == [], attention
    back = await returns_of(db, shop)
    assert len(back) == 1 and back[0].total == D("3.50"), back
    assert await page.locator("#attention-count").text_content() == "0"

    # Offline, no invoice: the shelf price, on a manager's PIN; a cashier's is refused.
    await context.set_offline(True)
    await page.keyboard.press("Alt+r")
    await page.get_by_text("Return without an invoice").click()
    await page.locator("#free-code").fill(water.item_code)
    await page.locator("#free-qty").fill("2")
    await page.locator("#free-manager").select_option(str(cashier_id))
    await page.locator("#free-pin").fill("5678")
    await page.get_by_role("button", name="Record return at the shelf price").click()
    await page.wait_for_function(
        "() => document.getElementById('return-error').textContent.includes('may not approve')"
    )
    assert await queued(page) == 0
    await page.locator("#free-manager").select_option(str(owner_id))
    await page.locator("#free-pin").fill("1234")
    await page.get_by_role("button", name="Record return at the shelf price").click()
    await page.wait_for_function("() => document.getElementById('queued').textContent === '1'")
    await go_online(context, page)
    await wait_queue_empty(page)
    back = await returns_of(db, shop)
    assert len(back) == 2, back
    free = back[1]
    assert free.total == D("2.00") and free.staff_user_id == owner_id, free
    assert await page.locator("#attention-count").text_content() == "0"
    await check_books(db, shop.company_id)
    await context.close()


async def test_the_receipt_qr_code_is_a_qr_code_of_the_invoice_number(
    server: str,
    pw: Any,
) -> None:
    browser = await pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
    page = await browser.new_page()
    await page.goto(f"{server}/register")
    texts = ["R1-000001", "R12-004321", "R3-RT000007", "T1-999999"]
    paths = await page.evaluate(
        "async (texts) => { const m = await import('/register/js/qr.js');"
        " return texts.map((t) => { const svg = m.qrSvg(t);"
        " return [svg.getAttribute('viewBox'), svg.querySelector('path').getAttribute('d')]; }); }",
        texts,
    )
    await browser.close()
    for text, (box, d) in zip(texts, paths, strict=True):
        size = int(box.split()[2]) - 8  # the quiet zone, 4 modules each side
        matrix = [[False] * size for _ in range(size)]
        for x, y in re.findall(r"M(\d+) (\d+)h1v1h-1z", d):
            matrix[int(y) - 4][int(x) - 4] = True
        assert decode(matrix) == text
        # Compared with segno's code of the same text, level, version and mask: the
        # same function patterns and format information (its padding may differ).
        level, mask = format_info(matrix)
        assert level == "M"
        ref = segno.make_qr(text, error="m", mode="byte", boost_error=False, mask=mask)
        theirs = [[bool(v) for v in row] for row in ref.matrix]
        assert len(theirs) == size, (text, ref.version, size)
        for r in range(size):
            for c in range(size):
                if (
                    r in (6,)
                    or c in (6,)
                    or (r < 9 and c < 9)
                    or (r < 9 and c >= size - 8)
                    or (r >= size - 8 and c < 9)
                ):
                    assert matrix[r][c] == theirs[r][c], (text, r, c)
        assert decode(theirs) == text
    # One module wrong in the data and the reader says so (the check checks).
    matrix[size - 1][size - 1] = not matrix[size - 1][size - 1]
    with pytest.raises(AssertionError):
        decode(matrix)
