"""Stock levels and adjustments from the pages (``web/stock.py``): an adjustment
recorded once, and a scoped manager adjusting in their own branch only."""

from __future__ import annotations

import httpx

from tests.factories import Shop
from tests.web_helpers import (
    OWNER_PASSWORD,
    STAFF_PASSWORD,
    add_staff,
    audit_count,
    count_rows,
    csrf_of,
    form_token_of,
    owner_email,
    sign_in,
)
from tillbook.db import Database
from tillbook.models import StockAdjustment


async def test_stock_levels_and_an_adjustment_recorded_once(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    levels = await web.get("/stock?q=")
    assert levels.status_code == 200 and "Reorder level" in levels.text
    assert (await web.get("/stock?low=1")).status_code == 200
    apple = shop.products["apple"]
    page = await web.get(f"/stock/products/{apple}")
    assert page.status_code == 200 and "Batches" in page.text and "Movements" in page.text
    form = {
        "csrf": csrf_of(page.text),
        "form_token": form_token_of(page.text),
        "warehouse_id": str(shop.warehouse_id),
        "adjustment_type": "subtract",
        "quantity": "abc",
        "notes": "dropped",
    }
    bad = await web.post(f"/stock/products/{apple}/adjust", data=form)
    assert bad.status_code == 422 and 'id="e-quantity"' in bad.text
    form["quantity"] = "2"
    before = await audit_count(db, shop.company_id, "stock_adjustment")
    first = await web.post(f"/stock/products/{apple}/adjust", data=form)
    assert first.status_code == 303, first.text
    again = await web.post(f"/stock/products/{apple}/adjust", data=form)
    assert again.headers["location"] == first.headers["location"]
    assert await audit_count(db, shop.company_id, "stock_adjustment") == before + 1
    shown = await web.get(first.headers["location"])
    assert f'id="stock-{shop.warehouse_id}">18<' in shown.text  # 20 opening - 2
    assert "adjustment" in shown.text
    assert await count_rows(db, StockAdjustment, shop.company_id) == 1


async def test_a_scoped_manager_adjusts_stock_in_their_branch_only(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await sign_in(web, await add_staff(db, shop, "manager", shop.warehouse_id), STAFF_PASSWORD)
    apple = shop.products["apple"]
    page = await web.get(f"/stock/products/{apple}")
    assert page.status_code == 200
    r = await web.post(
        f"/stock/products/{apple}/adjust",
        data={
            "csrf": csrf_of(page.text),
            "warehouse_id": str(shop.other_warehouse_id),
            "adjustment_type": "add",
            "quantity": "1",
        },
    )
    assert r.status_code == 403
    accountant = httpx.AsyncClient(transport=web._transport, base_url="http://testserver")
    async with accountant:
        await sign_in(accountant, await add_staff(db, shop, "accountant"), STAFF_PASSWORD)
        seen = await accountant.get(f"/stock/products/{apple}")
        assert seen.status_code == 200 and "Record an adjustment" not in seen.text
        r = await accountant.post(
            f"/stock/products/{apple}/adjust",
            data={"csrf": csrf_of(seen.text), "warehouse_id": str(shop.warehouse_id)},
        )
        assert r.status_code == 403
    assert await count_rows(db, StockAdjustment, shop.company_id) == 0
