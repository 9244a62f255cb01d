"""How pages show what they show (``web/render.py``): a branch's time zone on an
order's time, the company's money format on every amount."""

from __future__ import annotations

import datetime as dt
import re

import httpx
from sqlalchemy.ext.asyncio import AsyncSession

from tests.factories import Shop, by_id
from tests.web_helpers import (
    OWNER_PASSWORD,
    audit_count,
    owner_email,
    owner_page,
    sign_in,
    tokens,
)
from tillbook.db import Database


def _branch_form(html: str) -> dict[str, str]:
    fields = dict(re.findall(r'name="(\w+)" type="(?:text|tel)" value="([^"]*)"', html))
    version = re.search(r'name="version" value="(\d+)"', html)
    assert version is not None
    return {**tokens(html), **fields, "version": version.group(1)}


async def test_a_branch_time_zone_changes_how_an_order_time_is_shown(
    web: httpx.AsyncClient, db: Database, shop: Shop, client: httpx.AsyncClient
) -> None:
    from tillbook.models import Order, Warehouse

    sale = await client.post(
        "/sales",
        headers=shop.headers,
        json={
            "user_id": shop.customer_id,
            "order_date": "2026-01-15",
            "product_items": [{"xid": shop.xid("apple"), "quantity": 1, "unit_price": "4"}],
        },
    )
    assert sale.status_code == 200, sale.text
    oid = sale.json()["order_id"]

    async def pin(s: AsyncSession) -> None:  # a known moment: 23:30 UTC on 15 January
        order = await by_id(s, Order, oid)
        assert order is not None
        order.created_at = dt.datetime(2026, 1, 15, 23, 30, tzinfo=dt.UTC)

    await db.write(pin)
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    before = await web.get(f"/sales/{oid}")
    assert before.status_code == 200, before.text
    assert '<dd id="recorded-at">2026-01-15 23:30 UTC</dd>' in before.text

    wh = shop.warehouse_id
    page = await web.get(f"/settings/branches/{wh}")
    assert 'id="f-timezone"' in page.text and 'value="UTC"' in page.text
    form = _branch_form(page.text)
    bad = await web.post(
        f"/settings/branches/{wh}/edit", data={**form, "timezone": "Mars/Olympus_Mons"}
    )
    assert bad.status_code == 422
    assert '<p class="error" id="e-timezone">' in bad.text and "Mars/Olympus_Mons" in bad.text
    stored = await db.read(lambda s: by_id(s, Warehouse, wh))
    assert stored is not None and stored.timezone == "UTC"
    sneaky = await web.post(
        f"/settings/branches/{wh}/edit",
        data={**form, "form_token": "form-tz2", "timezone": "../../etc/passwd"},
    )
    assert sneaky.status_code == 422 and 'id="e-timezone"' in sneaky.text

    done = await web.post(
        f"/settings/branches/{wh}/edit",
        data={**form, "form_token": "form-tz3", "timezone": "Asia/Kolkata"},
    )
    assert done.status_code == 303, done.text
    after = await web.get(f"/sales/{oid}")
    # 23:30 UTC is 05:00 the next morning in India; the business date is left alone.
    assert '<dd id="recorded-at">2026-01-16 05:00 IST</dd>' in after.text
    assert "<dd>2026-01-15</dd>" in after.text
    other = await web.get(f"/settings/branches/{shop.other_warehouse_id}")
    assert 'value="UTC"' in other.text  # each branch keeps its own zone


async def test_the_company_money_format_changes_how_money_is_shown(
    web: httpx.AsyncClient, db: Database, shop: Shop, client: httpx.AsyncClient
) -> None:
    from tillbook.models import Company

    sale = await client.post(
        "/sales",
        headers=shop.headers,
        json={
            "user_id": shop.customer_id,
            "order_date": dt.date.today().isoformat(),
            "product_items": [{"xid": shop.xid("apple"), "quantity": 1, "unit_price": "2125"}],
        },
    )
    assert sale.status_code == 200, sale.text
    page = await owner_page(web, db, shop, "/")
    due = page.split("<h2>Due</h2>")[1].split("</section>")[0]
    assert "2,125.00" in due

    settings = await web.get("/settings/company")
    assert settings.status_code == 200 and 'id="f-money_format"' in settings.text
    bad = await web.post(
        "/settings/company", data={**tokens(settings.text), "money_format": "1'234.56"}
    )
    assert bad.status_code == 422 and 'id="e-money_format"' in bad.text
    saved = await web.post(
        "/settings/company", data={**tokens(settings.text), "money_format": "1.234,56"}
    )
    assert saved.status_code == 303, saved.text
    company = await db.read(lambda s: s.get(Company, shop.company_id))
    assert company is not None and company.money_format == "1.234,56"
    assert await audit_count(db, shop.company_id, "company") == 1

    page = (await web.get("/")).text
    due = page.split("<h2>Due</h2>")[1].split("</section>")[0]
    assert "2.125,00" in due and "2,125.00" not in due
    spaced = await web.post(
        "/settings/company",
        data={**tokens((await web.get("/settings/company")).text), "money_format": "1 234,56"},
    )
    assert spaced.status_code == 303
    due = (await web.get("/")).text.split("<h2>Due</h2>")[1].split("</section>")[0]
    assert "2\u00a0125,00" in due


def test_money_is_written_in_each_format() -> None:
    from tillbook.web.render import money_text

    assert money_text("1234567.5") == "1,234,567.50"
    assert money_text("1234567.5", "1.234,56") == "1.234.567,50"
    assert money_text("-1234.5", "1 234,56") == "-1\u00a0234,50"
    assert money_text(None, "1.234,56") == ""
