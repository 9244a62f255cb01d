"""The dashboard (``web/dashboard.py``): top products and what is due."""

from __future__ import annotations

import datetime as dt

import httpx

from tests.factories import Shop
from tests.web_helpers import (
    OWNER_PASSWORD,
    owner_email,
    sign_in,
)
from tillbook.db import Database


async def test_the_dashboard_shows_top_products_and_what_is_due(
    web: httpx.AsyncClient, db: Database, shop: Shop, client: httpx.AsyncClient
) -> None:

    for item, quantity in (("apple", 3), ("water", 1)):
        sale = await client.post(
            "/sales",
            headers=shop.headers,
            json={
                "user_id": shop.customer_id,
                "order_date": dt.date.today().isoformat(),
                "product_items": [{"xid": shop.xid(item), "quantity": quantity, "unit_price": "4"}],
            },
        )
        assert sale.status_code == 200, sale.text
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    page = await web.get("/")
    assert page.status_code == 200, page.text
    top = page.text.split("Top products")[1].split("</section>")[0]
    assert top.index("Apple juice") < top.index("Still water")  # 12.00 before 4.00
    due = page.text.split("<h2>Due</h2>")[1].split("</section>")[0]
    assert "16.00" in due  # two credit sales, nothing paid
