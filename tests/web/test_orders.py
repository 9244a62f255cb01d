"""The lists of orders (``web/orders.py``): sales and purchase returns, and the roles
that may read them."""

from __future__ import annotations

import httpx

from tests.factories import Shop
from tests.web_helpers import (
    OWNER_PASSWORD,
    STAFF_PASSWORD,
    add_staff,
    csrf_of,
    owner_email,
    sign_in,
)
from tillbook.db import Database


async def test_returns_lists_and_who_may_read_them(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    for path in ("/sales-returns", "/purchase-returns"):
        r = await web.get(path)
        assert r.status_code == 200 and "Sales returns" in r.text, path
    await web.post("/logout", data={"csrf": csrf_of(r.text)})
    await sign_in(web, await add_staff(db, shop, "cashier"), STAFF_PASSWORD)
    assert (await web.get("/sales-returns")).status_code == 403
    assert (await web.get("/stock")).status_code == 200
    assert (await web.get("/reports/ledger?account=11700")).status_code == 403
    assert (await web.get("/reports/periods")).status_code == 403
