"""Stocktakes in the back office and the admin API: a count sheet kept as a draft,
counts typed and scanned, sales during the count, the differences posted as stock
adjustments in one transaction, and the books checked after each scenario."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal

import httpx
from sqlalchemy import func, select

from tests.admin_helpers import ADMIN, login
from tests.factories import Shop, make_shop
from tests.invariants import check_books
from tests.web_helpers import (
    OWNER_PASSWORD,
    STAFF_PASSWORD,
    add_staff,
    csrf_of,
    form_token_of,
    owner_email,
    sign_in,
)
from tillbook.db import Database
from tillbook.models import (
    AuditEvent,
    Listing,
    Product,
    StockAdjustment,
    StockCount,
    StockMovement,
)


def _other(web: httpx.AsyncClient) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=web._transport, base_url="http://testserver")


async def _count_rows(db: Database, model: type, company_id: int) -> int:
    return int(
        await db.read(
            lambda s: s.scalar(
                select(func.count()).select_from(model).where(model.company_id == company_id)
            )
        )
    )


async def _stock(db: Database, warehouse_id: int, product_id: int) -> Decimal:
    return Decimal(
        await db.read(
            lambda s: s.scalar(
                select(Listing.current_stock).where(
                    Listing.warehouse_id == warehouse_id, Listing.product_id == product_id
                )
            )
        )
    )


async def _audits(db: Database, company_id: int, action: str) -> int:
    return int(
        await db.read(
            lambda s: s.scalar(
                select(func.count())
                .select_from(AuditEvent)
                .where(AuditEvent.company_id == company_id, AuditEvent.action == action)
            )
        )
    )


def _form(page: str, **fields: str) -> dict[str, str]:
    """The sheet's form as the browser sends it: each line's current value and the
    value it was shown with, then the fields given."""
    data = {"csrf": csrf_of(page), "form_token": form_token_of(page)}
    for name, value in re.findall(r'name="((?:qty|was)-\d+)"[^>]*value="([^"]*)"', page):
        data[name] = value
    data.update(fields)
    return data


async def _start(web: httpx.AsyncClient, shop: Shop, **fields: str) -> tuple[int, str]:
    listing = await web.get("/stock/counts")
    assert listing.status_code == 200, listing.text
    r = await web.post(
        "/stock/counts",
        data={
            "csrf": csrf_of(listing.text),
            "form_token": form_token_of(listing.text),
            "warehouse_id": str(shop.warehouse_id),
            **fields,
        },
    )
    assert r.status_code == 303, r.text
    cid = int(r.headers["location"].rsplit("/", 1)[1])
    page = await web.get(r.headers["location"])
    assert page.status_code == 200
    return cid, page.text


async def _sell(client: httpx.AsyncClient, shop: Shop, item: str, quantity: int) -> None:
    r = await client.post(
        "/sales",
        headers=shop.headers,
        json={
            "user_id": shop.walk_in_id,
            "order_date": dt.date.today().isoformat(),
            "product_items": [{"xid": shop.xid(item), "quantity": quantity, "unit_price": "3.50"}],
            "all_payments": [
                {"amount": str(Decimal("3.50") * quantity), "payment_mode_id": "cash"}
            ],
        },
    )
    assert r.status_code == 200, r.text


async def test_a_stocktake_counted_typed_and_scanned_while_the_till_sells(
    web: httpx.AsyncClient, client: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    apple, water, tea = (shop.products[k] for k in ("apple", "water", "tea"))
    listing = await web.get("/stock/counts")
    bad = await web.post(
        "/stock/counts",
        data={
            "csrf": csrf_of(listing.text),
            "form_token": form_token_of(listing.text),
            "warehouse_id": str(shop.warehouse_id),
            "scope": "category",
        },
    )
    assert bad.status_code == 422 and 'id="e-category_id"' in bad.text
    assert await _count_rows(db, StockCount, shop.company_id) == 0

    cid, page = await _start(web, shop, scope="all", notes="year end")
    for pid in (apple, water, tea):
        assert f'id="line-{pid}"' in page
    assert f"/stock/counts/{cid}/print" in page

    # typed: apple 17 of 20 (a loss of 3 at FIFO cost 1.50), tea 2 of 0 (a gain at 5.00)
    wrong = await web.post(
        f"/stock/counts/{cid}/enter", data=_form(page, **{f"qty-{apple}": "abc"})
    )
    assert wrong.status_code == 422 and f'id="e-qty-{apple}"' in wrong.text
    negative = await web.post(
        f"/stock/counts/{cid}/enter", data=_form(page, **{f"qty-{apple}": "-1"})
    )
    assert negative.status_code == 422 and f'id="e-qty-{apple}"' in negative.text
    form = _form(page, **{f"qty-{apple}": "17", f"qty-{tea}": "2"})
    saved = await web.post(f"/stock/counts/{cid}/enter", data=form)
    assert saved.status_code == 303, saved.text
    again = await web.post(f"/stock/counts/{cid}/enter", data=form)  # the same form twice
    assert again.headers["location"] == saved.headers["location"]
    assert await _audits(db, shop.company_id, "stock_count.counted") == 1

    # the count survives a reload, and is previewed at cost
    page = (await web.get(f"/stock/counts/{cid}")).text
    assert re.search(f'id="counted-{apple}"[^>]*value="17"', page)
    assert f'id="diff-{apple}">-3<' in page and f'id="cost-{apple}">4.50<' in page
    assert f'id="diff-{tea}">2<' in page and f'id="cost-{tea}">10.00<' in page
    assert 'id="count-gain">10.00<' in page and 'id="count-loss">4.50<' in page

    # scanned: the apple's barcode adds one and brings its line forward; an unknown code
    # is refused beside the field, nothing saved
    code = await _barcode(db, apple)
    unknown = await web.post(f"/stock/counts/{cid}/enter", data=_form(page, barcode="nope-1"))
    assert unknown.status_code == 422 and 'id="e-barcode"' in unknown.text
    scanned = await web.post(f"/stock/counts/{cid}/enter", data=_form(page, barcode=code))
    assert scanned.status_code == 303
    assert scanned.headers["location"].endswith(f"?focus={apple}#line-{apple}")
    page = (await web.get(scanned.headers["location"])).text
    assert f'<tr id="line-{apple}" class="focus"' in page
    assert f'id="diff-{apple}">-2<' in page

    # the till sells 5 apples during the count: the difference stays what the count
    # found (-2 against the 20 on the books when it was counted), not -7
    await _sell(client, shop, "apple", 5)
    page = (await web.get(f"/stock/counts/{cid}")).text
    assert f'id="diff-{apple}">-2<' in page

    # a stale form from before the scan does not undo it: only changed lines are sent
    assert await _stock(db, shop.warehouse_id, apple) == 15
    posted = await web.post(f"/stock/counts/{cid}/post", data=_form(page))
    assert posted.status_code == 303, posted.text
    assert await _stock(db, shop.warehouse_id, apple) == 13  # 15 - 2
    assert await _stock(db, shop.warehouse_id, tea) == 2
    assert await _stock(db, shop.warehouse_id, water) == 100  # not counted: unchanged
    adjustments = await db.read(
        lambda s: s.execute(
            select(
                StockAdjustment.product_id,
                StockAdjustment.adjustment_type,
                StockAdjustment.quantity,
                StockAdjustment.cost_amount,
                StockAdjustment.notes,
            )
            .where(StockAdjustment.company_id == shop.company_id)
            .order_by(StockAdjustment.product_id)
        )
    )
    rows = {r[0]: r[1:] for r in adjustments.all()}
    assert rows[apple][:3] == ("subtract", Decimal("2"), Decimal("3.00"))  # 2 more @ 1.50
    assert rows[tea][:3] == ("add", Decimal("2"), Decimal("10.00"))
    assert rows[apple][3] == f"Stocktake #{cid}"
    moved = await db.read(
        lambda s: s.scalar(
            select(func.count())
            .select_from(StockMovement)
            .where(
                StockMovement.company_id == shop.company_id, StockMovement.reason == "adjustment"
            )
        )
    )
    assert moved == 2
    assert await _audits(db, shop.company_id, "stock.adjusted") == 2
    assert await _audits(db, shop.company_id, "stock_count.posted") == 1
    shown = (await web.get(posted.headers["location"])).text
    assert 'id="count-status">posted<' in shown and "Post stocktake" not in shown
    assert 'id="count-gain">10.00<' in shown and 'id="count-loss">3.00<' in shown

    # posted once only; a posted count takes no more counts
    replay = await web.post(f"/stock/counts/{cid}/post", data=_form(page))
    assert replay.headers["location"] == posted.headers["location"]  # the same form: once
    twice = await web.post(f"/stock/counts/{cid}/post", data=_form(page, form_token="again-1"))
    assert twice.status_code == 409
    late = await web.post(
        f"/stock/counts/{cid}/enter", data=_form(page, form_token="again-2", **{f"qty-{tea}": "9"})
    )
    assert late.status_code == 409
    printed = await web.get(f"/stock/counts/{cid}/print")
    assert printed.status_code == 200 and "Count sheet" in printed.text
    assert "data-print" in printed.text and "/static/print.js" in printed.text
    await check_books(db, shop.company_id)


async def test_a_count_that_would_take_stock_below_zero_posts_nothing(
    web: httpx.AsyncClient, client: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    apple, water = shop.products["apple"], shop.products["water"]
    cid, page = await _start(web, shop, scope="category", category_id=str(shop.category_id))
    assert f'id="line-{water}"' in page and f'id="line-{apple}"' not in page  # Drinks only
    cid, page = await _start(
        web, shop, scope="list", item_codes=await _code(db, apple) + "\n" + await _code(db, water)
    )
    saved = await web.post(
        f"/stock/counts/{cid}/enter",
        data=_form(page, **{f"qty-{apple}": "0", f"qty-{water}": "99"}),
    )
    assert saved.status_code == 303
    await _sell(client, shop, "apple", 5)  # the books now hold 15; the count takes 20
    page = (await web.get(f"/stock/counts/{cid}")).text
    refused = await web.post(f"/stock/counts/{cid}/post", data=_form(page))
    assert refused.status_code == 422 and "insufficient stock" in refused.text
    assert f'id="e-qty-{apple}"' in refused.text
    assert await _count_rows(db, StockAdjustment, shop.company_id) == 0
    assert await _stock(db, shop.warehouse_id, water) == 100
    status = await db.read(
        lambda s: s.scalar(select(StockCount.status).where(StockCount.id == cid))
    )
    assert status == "draft"
    cancel = await web.post(
        f"/stock/counts/{cid}/cancel",
        data={"csrf": csrf_of(page), "form_token": form_token_of(page)},
    )
    assert cancel.status_code == 303
    assert 'id="count-status">cancelled<' in (await web.get(f"/stock/counts/{cid}")).text
    await check_books(db, shop.company_id)


async def _code(db: Database, product_id: int) -> str:
    return str(
        await db.read(lambda s: s.scalar(select(Product.item_code).where(Product.id == product_id)))
    )


async def _barcode(db: Database, product_id: int) -> str:
    return str(
        await db.read(lambda s: s.scalar(select(Product.barcode).where(Product.id == product_id)))
    )


async def test_roles_and_branches(web: httpx.AsyncClient, db: Database, shop: Shop) -> None:
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    cid, page = await _start(web, shop, scope="all")
    apple = shop.products["apple"]
    # a manager of the other branch does not see this branch's count
    async with _other(web) as other:
        await sign_in(
            other, await add_staff(db, shop, "manager", shop.other_warehouse_id), STAFF_PASSWORD
        )
        assert (await other.get(f"/stock/counts/{cid}")).status_code == 404
        home = (await other.get("/stock/counts")).text
        assert f"/stock/counts/{cid}" not in home
        r = await other.post(
            f"/stock/counts/{cid}/post", data={"csrf": csrf_of(home), "form_token": "x-1"}
        )
        assert r.status_code == 404
        r = await other.post(
            "/stock/counts",
            data={"csrf": csrf_of(home), "warehouse_id": str(shop.warehouse_id), "scope": "all"},
        )
        assert r.status_code == 403
    # an accountant reads the sheet, and may change nothing
    async with _other(web) as accountant:
        await sign_in(accountant, await add_staff(db, shop, "accountant"), STAFF_PASSWORD)
        seen = await accountant.get(f"/stock/counts/{cid}")
        assert seen.status_code == 200 and "Save counts" not in seen.text
        r = await accountant.post(
            f"/stock/counts/{cid}/enter",
            data={"csrf": csrf_of(seen.text), f"qty-{apple}": "1", "was-" + str(apple): ""},
        )
        assert r.status_code == 403
    # a cashier has no stocktakes at all
    async with _other(web) as cashier:
        await sign_in(cashier, await add_staff(db, shop, "cashier"), STAFF_PASSWORD)
        assert (await cashier.get(f"/stock/counts/{cid}")).status_code == 404
        listing = await cashier.get("/stock/counts")
        assert listing.status_code == 200 and "Start a stocktake" not in listing.text
    # a manager of this branch counts and posts
    async with _other(web) as manager:
        await sign_in(
            manager, await add_staff(db, shop, "manager", shop.warehouse_id), STAFF_PASSWORD
        )
        page = (await manager.get(f"/stock/counts/{cid}")).text
        saved = await manager.post(
            f"/stock/counts/{cid}/enter", data=_form(page, **{f"qty-{apple}": "21"})
        )
        assert saved.status_code == 303
        page = (await manager.get(f"/stock/counts/{cid}")).text
        assert (
            await manager.post(f"/stock/counts/{cid}/post", data=_form(page))
        ).status_code == 303
    assert await _stock(db, shop.warehouse_id, apple) == 21
    await check_books(db, shop.company_id)


async def test_the_admin_api_counts_and_posts(
    client: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    h = await login(client, db, shop)
    apple, tea = shop.products["apple"], shop.products["tea"]
    bad = await client.post(
        f"{ADMIN}/stock-counts",
        json={"warehouse_id": shop.warehouse_id, "scope": "list"},
        headers=h,
    )
    assert bad.status_code == 422 and "product_ids" in bad.json()["errors"]
    made = await client.post(
        f"{ADMIN}/stock-counts",
        json={"warehouse_id": shop.warehouse_id, "scope": "list", "product_ids": [apple]},
        headers={**h, "Idempotency-Key": f"count-{shop.company_id}"},
    )
    assert made.status_code == 201, made.text
    cid = made.json()["count_id"]
    # a scan adds the tea's line (listed in the branch, not on the list)
    tea_code = await _code(db, tea)
    entered = await client.post(
        f"{ADMIN}/stock-counts/{cid}/entries",
        json={"items": [{"product_id": apple, "counted": "19.5"}], "barcode": tea_code},
        headers=h,
    )
    assert entered.status_code == 200, entered.text
    assert entered.json()["focus"] == tea
    refused = await client.post(
        f"{ADMIN}/stock-counts/{cid}/entries",
        json={"items": [{"product_id": shop.products["water"], "counted": 1}]},
        headers=h,
    )
    assert refused.status_code == 422
    sheet = (await client.get(f"{ADMIN}/stock-counts/{cid}", headers=h)).json()["data"]
    lines = {line["product_id"]: line for line in sheet["lines"]}
    assert lines[apple]["difference"] == "-0.5000" and lines[apple]["cost"] == "0.75"
    assert lines[tea]["counted"] == "1.0000" and lines[tea]["cost"] == "5.00"
    listed = await client.get(f"{ADMIN}/stock-counts?status=draft", headers=h)
    assert [c["id"] for c in listed.json()["data"]["data"]] == [cid]
    unknown = await client.get(f"{ADMIN}/stock-counts?status=open", headers=h)
    assert unknown.status_code == 422 and "status" in unknown.json()["errors"], unknown.text
    posted = await client.post(f"{ADMIN}/stock-counts/{cid}/post", headers=h)
    assert posted.status_code == 200, posted.text
    assert posted.json()["value_loss"] == "0.75" and posted.json()["value_gain"] == "5.00"
    assert (await client.post(f"{ADMIN}/stock-counts/{cid}/post", headers=h)).status_code == 409
    assert (await client.get(f"{ADMIN}/stock-counts/999999999", headers=h)).status_code == 404
    await check_books(db, shop.company_id)


async def test_another_companys_count_is_not_found(
    client: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    other = await make_shop(db)
    h = await login(client, db, other)
    made = await client.post(
        f"{ADMIN}/stock-counts", json={"warehouse_id": other.warehouse_id}, headers=h
    )
    assert made.status_code == 201
    mine = await login(client, db, shop)
    cid = made.json()["count_id"]
    assert (await client.get(f"{ADMIN}/stock-counts/{cid}", headers=mine)).status_code == 404
    r = await client.post(
        f"{ADMIN}/stock-counts", json={"warehouse_id": other.warehouse_id}, headers=mine
    )
    assert r.status_code == 422
