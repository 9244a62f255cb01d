"""Batch price changes in the back office: chosen products and branches, previewed
old -> new without writing, applied in one transaction through the price service
(history rows, one ADJ-BATCH per branch, audit, ``product.updated``), refused whole
for bad input or stale previews, and limited by ``prices.write`` per branch."""

from __future__ import annotations

import re
from decimal import Decimal

import httpx
from sqlalchemy import func, select

from tests.factories import Shop
from tests.invariants import check_books
from tests.web_helpers import (
    OWNER_PASSWORD,
    STAFF_PASSWORD,
    add_staff,
    csrf_of,
    owner_email,
    sign_in,
)
from tillbook.db import Database
from tillbook.models import (
    AuditEvent,
    Listing,
    OutboxEvent,
    PriceAdjustmentBatch,
    PriceHistory,
    Product,
)


async def _prices(db: Database, warehouse_id: int, product_id: int) -> tuple[Decimal, Decimal]:
    async def read(s):  # type: ignore[no-untyped-def]
        return (
            await s.execute(
                select(Listing.sales_price, Listing.purchase_price).where(
                    Listing.warehouse_id == warehouse_id, Listing.product_id == product_id
                )
            )
        ).one()

    sales, purchase = await db.read(read)
    return Decimal(sales), Decimal(purchase)


async def _code(db: Database, product_id: int) -> str:
    return str(
        await db.read(lambda s: s.scalar(select(Product.item_code).where(Product.id == product_id)))
    )


async def _count(db: Database, model: type, company_id: int, *where: object) -> int:
    return int(
        await db.read(
            lambda s: s.scalar(
                select(func.count())
                .select_from(model)
                .where(model.company_id == company_id, *where)
            )
        )
    )


def _change(page: str, shop: Shop, **fields: str) -> dict[str, str]:
    data = {
        "csrf": csrf_of(page),
        "warehouse_ids": str(shop.warehouse_id),
        "scope": "list",
        "target": "sales",
        "method": "percent",
        "value": "10",
        "step": "0.05",
    }
    data.update(fields)
    return data


def _apply_form(preview: str) -> dict[str, str | list[str]]:
    """The preview's apply form as the browser sends it."""
    form = preview[preview.index('action="/prices/apply"') :]
    form = form[: form.index("</form>")]
    data: dict[str, str | list[str]] = {}
    for name, value in re.findall(r'name="([^"]+)" value="([^"]*)"', form):
        value = value.replace("&#10;", "\n").replace("&#13;", "\r")
        if name == "warehouse_ids":
            data.setdefault(name, [])
            assert isinstance(data[name], list)
            data[name].append(value)  # type: ignore[union-attr]
        else:
            data[name] = value
    return data


async def test_a_price_change_previewed_then_applied_once(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    apple, water = shop.products["apple"], shop.products["water"]
    codes = f"{await _code(db, apple)}\n{await _code(db, water)}"
    page = await web.get("/prices")
    assert page.status_code == 200
    assert 'href="/prices"' in page.text  # in the menu
    events_before = await _count(db, OutboxEvent, shop.company_id)

    preview = await web.post("/prices/preview", data=_change(page.text, shop, item_codes=codes))
    assert preview.status_code == 200, preview.text
    # 3.50 +10% = 3.85; 1.00 +10% = 1.10; old and new both shown.
    assert "3.50" in preview.text and "3.85" in preview.text and "1.10" in preview.text
    assert await _prices(db, shop.warehouse_id, apple) == (Decimal("3.50"), Decimal("2.00"))
    assert await _count(db, PriceHistory, shop.company_id) == 0

    form = _apply_form(preview.text)
    applied = await web.post("/prices/apply", data=form)
    assert applied.status_code == 303, applied.text
    assert await _prices(db, shop.warehouse_id, apple) == (Decimal("3.85"), Decimal("2.00"))
    assert await _prices(db, shop.warehouse_id, water) == (Decimal("1.10"), Decimal("0.40"))
    # One batch for the branch, one history row per product, one audit of the change,
    # and each listing announced to the tills.
    assert await _count(db, PriceAdjustmentBatch, shop.company_id) == 1
    assert await _count(db, PriceHistory, shop.company_id) == 2
    assert (
        await _count(db, AuditEvent, shop.company_id, AuditEvent.entity_type == "price_change") == 1
    )
    assert (
        await _count(db, OutboxEvent, shop.company_id, OutboxEvent.type == "product.updated") >= 2
    )
    assert await _count(db, OutboxEvent, shop.company_id) > events_before

    # The same form again: done once.
    again = await web.post("/prices/apply", data=form)
    assert again.status_code == 303
    assert await _count(db, PriceHistory, shop.company_id) == 2
    assert await _prices(db, shop.warehouse_id, apple) == (Decimal("3.85"), Decimal("2.00"))

    history = await web.get("/prices")
    assert "sales price up by 10%" in history.text
    assert "3.50 → 3.85" in history.text
    await check_books(db, shop.company_id)


async def test_purchase_price_set_for_a_category_in_two_branches(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    page = await web.get("/prices")
    data = _change(
        page.text,
        shop,
        scope="search",
        search="e",
        target="purchase",
        method="amount",
        value="-0.10",
        step="0.01",
    )
    data["warehouse_ids"] = [str(shop.warehouse_id), str(shop.other_warehouse_id)]  # type: ignore[assignment]
    preview = await web.post("/prices/preview", data=data)
    assert preview.status_code == 200, preview.text
    assert "Harbour coffee" in preview.text
    applied = await web.post("/prices/apply", data=_apply_form(preview.text))
    assert applied.status_code == 303, applied.text
    coffee = shop.other_products["coffee"]
    assert await _prices(db, shop.other_warehouse_id, coffee) == (Decimal("4.00"), Decimal("2.40"))
    assert await _prices(db, shop.warehouse_id, shop.products["apple"]) == (
        Decimal("3.50"),
        Decimal("1.90"),
    )
    # Purchase prices have no sales-price history, but the change is in the history.
    assert await _count(db, PriceHistory, shop.company_id) == 0
    assert (
        await _count(db, AuditEvent, shop.company_id, AuditEvent.entity_type == "price_change") == 2
    )


async def test_bad_input_is_a_message_beside_the_field(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    page = await web.get("/prices")
    code = await _code(db, shop.products["apple"])
    cases = [
        ({"value": "abc", "item_codes": code}, "e-value"),
        ({"value": ""}, "e-value"),
        ({"value": "1e999999", "item_codes": code}, "e-value"),
        ({"value": "-150", "item_codes": code}, "e-value"),
        ({"item_codes": ""}, "e-item_codes"),
        ({"item_codes": "NO-SUCH-CODE"}, "e-item_codes"),
        ({"scope": "category", "category_id": "x"}, "e-category_id"),
        ({"scope": "nope"}, "e-scope"),
        ({"step": "0.07", "item_codes": code}, "e-step"),
        ({"warehouse_ids": "abc", "item_codes": code}, "e-warehouse_ids"),
        ({"warehouse_ids": "", "item_codes": code}, "e-warehouse_ids"),
    ]
    for i, (fields, marker) in enumerate(cases):
        for path in ("/prices/preview", "/prices/apply"):
            data = _change(page.text, shop, **fields)
            data["form_token"] = f"form-bad-{i}-{path[8:]}"
            r = await web.post(path, data=data)
            assert r.status_code == 422, (fields, path, r.text[:300])
            assert marker in r.text, (fields, path)
    # A price below zero: the preview says so and offers no apply; forcing it is refused.
    preview = await web.post(
        "/prices/preview",
        data=_change(page.text, shop, item_codes=code, method="amount", value="-5"),
    )
    assert preview.status_code == 200
    assert "below zero" in preview.text and 'action="/prices/apply"' not in preview.text
    forced = _change(page.text, shop, item_codes=code, method="amount", value="-5")
    forced["form_token"] = "form-forced"
    r = await web.post("/prices/apply", data=forced)
    assert r.status_code == 422
    assert await _count(db, PriceHistory, shop.company_id) == 0
    assert await _prices(db, shop.warehouse_id, shop.products["apple"]) == (
        Decimal("3.50"),
        Decimal("2.00"),
    )


async def test_a_stale_preview_is_refused(web: httpx.AsyncClient, db: Database, shop: Shop) -> None:
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    code = await _code(db, shop.products["apple"])
    page = await web.get("/prices")
    first = await web.post("/prices/preview", data=_change(page.text, shop, item_codes=code))
    second = await web.post("/prices/preview", data=_change(page.text, shop, item_codes=code))
    assert (await web.post("/prices/apply", data=_apply_form(first.text))).status_code == 303
    stale = await web.post("/prices/apply", data=_apply_form(second.text))
    assert stale.status_code == 422
    assert "preview again" in stale.text
    assert (await _prices(db, shop.warehouse_id, shop.products["apple"]))[0] == Decimal("3.85")


async def test_prices_write_per_branch(web: httpx.AsyncClient, db: Database, shop: Shop) -> None:
    email = await add_staff(db, shop, "manager", shop.warehouse_id)
    await sign_in(web, email, STAFF_PASSWORD)
    page = await web.get("/prices")
    assert page.status_code == 200
    assert "Harbour" not in page.text.split("<legend>Branches</legend>")[1].split("</fieldset>")[0]
    data = _change(page.text, shop, scope="search", search="coffee")
    data["warehouse_ids"] = str(shop.other_warehouse_id)
    assert (await web.post("/prices/preview", data=data)).status_code == 403
    data["form_token"] = "form-other-branch"
    assert (await web.post("/prices/apply", data=data)).status_code == 403
    assert await _prices(db, shop.other_warehouse_id, shop.other_products["coffee"]) == (
        Decimal("4.00"),
        Decimal("2.50"),
    )
    # A cashier and an accountant may not change prices at all.
    for role in ("cashier", "accountant"):
        other = httpx.AsyncClient(transport=web._transport, base_url="http://testserver")
        await sign_in(other, await add_staff(db, shop, role), STAFF_PASSWORD)
        assert (await other.get("/prices")).status_code == 403
        assert 'href="/prices"' not in (await other.get("/account")).text
        await other.aclose()
