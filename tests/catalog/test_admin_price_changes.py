"""Batch price changes through the admin API (``/api/v1/admin/price-changes``): the
page's service (``catalog.batch_prices``) behind a second door. What the preview
says is what apply does; bad fields are a 422 naming them with nothing written; a
cashier and an accountant are refused; another company's branch is not found and
its item codes are not ours; a scoped manager prices their own branch only; the
history lists what was applied."""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy import func, select

from tests.admin_helpers import ADMIN, assert_error, login
from tests.factories import Shop, make_shop
from tests.invariants import check_books
from tests.payments.test_admin_money import staff_login
from tests.written import snapshot
from tillbook.db import Database
from tillbook.models import AuditEvent, Listing, PriceAdjustmentBatch, Product

D = Decimal
PC = f"{ADMIN}/price-changes"


async def code_of(db: Database, product_id: int) -> str:
    return str(
        await db.read(lambda s: s.scalar(select(Product.item_code).where(Product.id == product_id)))
    )


async def prices(db: Database, shop: Shop) -> dict[tuple[int, int], tuple[Decimal, Decimal]]:
    """(product, branch) -> (sales, purchase) of every listing of the company."""

    async def read(s):  # type: ignore[no-untyped-def]
        rows = await s.execute(
            select(
                Listing.product_id,
                Listing.warehouse_id,
                Listing.sales_price,
                Listing.purchase_price,
            )
            .join(Product, Product.id == Listing.product_id)
            .where(Product.company_id == shop.company_id)
        )
        return {(p, w): (D(sp), D(pp)) for p, w, sp, pp in rows.all()}

    return await db.read(read)


async def body_for(db: Database, shop: Shop, **extra) -> dict:
    codes = [await code_of(db, shop.products[n]) for n in ("apple", "water")]
    return {
        "warehouse_ids": [shop.warehouse_id],
        "scope": "list",
        "item_codes": codes,
        "target": "both",
        "method": "percent",
        "value": "12.5",
        "step": "0.05",
        "notes": "supplier list of November",
        **extra,
    }


async def test_the_preview_is_what_apply_does(client, db, shop) -> None:
    headers = await login(client, db, shop)
    body = await body_for(db, shop)
    before = await prices(db, shop)
    shown = await client.post(f"{PC}/preview", json=body, headers=headers)
    assert shown.status_code == 200, shown.text
    preview = shown.json()["data"]
    assert preview["problems"] == 0 and preview["changing"] == 2
    assert preview["rule"] == "sales and purchase price up by 12.5%, rounded to 0.05"
    rows = {r["product_id"]: r for r in preview["rows"]}
    apple = rows[shop.products["apple"]]
    # 3.50 × 1.125 = 3.9375 -> 3.95; 2.00 × 1.125 = 2.25
    assert (apple["old_sales"], apple["new_sales"]) == ("3.50", "3.95")
    assert (apple["old_purchase"], apple["new_purchase"]) == ("2.00", "2.25")
    assert await prices(db, shop) == before  # a preview writes nothing

    applied = await client.post(
        PC,
        json={**body, "fingerprint": preview["fingerprint"]},
        headers={**headers, "Idempotency-Key": "pc-1"},
    )
    assert applied.status_code == 200, applied.text
    assert applied.json()["data"]["changed"] == 2
    assert len(applied.json()["data"]["batches"]) == 1
    after = await prices(db, shop)
    for row in preview["rows"]:
        key = (row["product_id"], row["warehouse_id"])
        assert after[key] == (D(row["new_sales"]), D(row["new_purchase"])), row
    untouched = {k: v for k, v in before.items() if k[0] not in rows}
    assert {k: after[k] for k in untouched} == untouched

    # the same key again: the same answer, nothing applied twice
    again = await client.post(
        PC,
        json={**body, "fingerprint": preview["fingerprint"]},
        headers={**headers, "Idempotency-Key": "pc-1"},
    )
    assert again.status_code == 200 and again.headers["Idempotent-Replayed"] == "true"
    assert await prices(db, shop) == after
    batches = await db.read(
        lambda s: s.scalar(
            select(func.count())
            .select_from(PriceAdjustmentBatch)
            .where(PriceAdjustmentBatch.company_id == shop.company_id)
        )
    )
    assert batches == 1
    # a stale preview (the prices moved) is refused whole
    stale = await client.post(
        PC, json={**body, "fingerprint": preview["fingerprint"]}, headers=headers
    )
    assert_error(stale, 422, "preview")
    assert await prices(db, shop) == after

    # the history: who, the rule, every old -> new; audited by the service
    history = await client.get(PC, headers=headers)
    assert history.status_code == 200, history.text
    events = history.json()["data"]["data"]
    assert len(events) == 1
    event = events[0]
    assert event["entity_id"] == shop.warehouse_id
    assert event["after"]["rule"] == preview["rule"]
    assert {i["item_code"] for i in event["after"]["items"]} == set(body["item_codes"])
    audited = await db.read(
        lambda s: s.scalar(
            select(func.count())
            .select_from(AuditEvent)
            .where(
                AuditEvent.company_id == shop.company_id,
                AuditEvent.entity_type == "price_change",
            )
        )
    )
    assert audited == 1
    await check_books(db, shop.company_id)


async def test_bad_fields_are_named_and_nothing_is_written(client, db, shop) -> None:
    headers = await login(client, db, shop)
    good = await body_for(db, shop)
    before = await snapshot(db, shop)
    cases = [
        ({"value": "abc"}, "value"),
        ({"value": "１０"}, "value"),
        ({"value": "1e400"}, "value"),
        ({"value": "-150", "method": "percent"}, "value"),
        ({"value": "-1", "method": "set"}, "value"),
        ({"method": "double"}, "method"),
        ({"target": "cost"}, "target"),
        ({"scope": "everything"}, "scope"),
        ({"step": "0.07"}, "step"),
        ({"warehouse_ids": []}, "warehouse_ids"),
        ({"warehouse_ids": ["x!"]}, "warehouse_ids.0"),
        ({"scope": "search", "search": None}, "search"),
        ({"scope": "category", "category_id": None}, "category_id"),
        ({"item_codes": ["NOPE-1"]}, "item_codes"),
    ]
    for change, field in cases:
        body = {**good, **change}
        for url in (f"{PC}/preview", PC):
            sent = {**body, "fingerprint": "f"} if url == PC else body
            r = await client.post(url, json=sent, headers=headers)
            assert r.status_code in (400, 422), (change, url, r.text)
            if r.status_code == 422:
                assert_error(r, 422, field)
    missing = {k: v for k, v in good.items() if k != "method"}
    assert_error(await client.post(f"{PC}/preview", json=missing, headers=headers), 422, "method")
    assert_error(await client.post(PC, json=good, headers=headers), 422, "fingerprint")
    assert_error(await client.get(f"{PC}?warehouse_id=x", headers=headers), 422, "warehouse_id")
    # a change that would take a price above the MRP or below zero is refused whole
    below = await client.post(
        f"{PC}/preview", json={**good, "method": "amount", "value": "-3"}, headers=headers
    )
    assert below.status_code == 200 and below.json()["data"]["problems"] >= 1
    refused = await client.post(
        PC,
        json={
            **good,
            "method": "amount",
            "value": "-3",
            "fingerprint": below.json()["data"]["fingerprint"],
        },
        headers=headers,
    )
    assert_error(refused, 422, "value")
    assert await snapshot(db, shop) == before


async def test_cashiers_and_accountants_are_refused(client, db, shop) -> None:
    body = await body_for(db, shop)
    sessions = {
        role: await staff_login(client, db, shop, role) for role in ("cashier", "accountant")
    }
    before = await snapshot(db, shop)
    for headers in sessions.values():
        for method, url, sent in (
            ("POST", f"{PC}/preview", body),
            ("POST", PC, {**body, "fingerprint": "f"}),
            ("GET", PC, None),
        ):
            r = await client.request(method, url, json=sent, headers=headers)
            err = assert_error(r, 403)
            assert "'prices.write'" in err["message"], err
    assert await snapshot(db, shop) == before


async def test_another_companys_branch_and_products_are_not_ours(client, db, shop) -> None:
    other = await make_shop(db)
    headers = await login(client, db, shop)
    before = await snapshot(db, shop)
    theirs_before = await prices(db, other)
    body = await body_for(db, shop, warehouse_ids=[other.warehouse_id])
    for url, sent in ((f"{PC}/preview", body), (PC, {**body, "fingerprint": "f"})):
        assert_error(await client.post(url, json=sent, headers=headers), 404)
    their_code = await code_of(db, other.products["apple"])
    foreign = await body_for(db, shop, item_codes=[their_code])
    assert_error(
        await client.post(f"{PC}/preview", json=foreign, headers=headers), 422, "item_codes"
    )
    by_category = await body_for(db, shop, scope="category", category_id=other.category_id)
    assert_error(
        await client.post(f"{PC}/preview", json=by_category, headers=headers), 422, "scope"
    )
    assert await snapshot(db, shop) == before
    assert await prices(db, other) == theirs_before


async def test_a_scoped_manager_prices_their_branch_only(client, db, shop) -> None:
    headers = await staff_login(client, db, shop, "manager", shop.warehouse_id)
    owner = await login(client, db, shop)
    body = await body_for(db, shop, warehouse_ids=[shop.other_warehouse_id])
    before = await snapshot(db, shop)
    refused = await client.post(f"{PC}/preview", json=body, headers=headers)
    assert "'prices.write'" in assert_error(refused, 403)["message"]
    both = await body_for(db, shop, warehouse_ids=[shop.warehouse_id, shop.other_warehouse_id])
    assert_error(await client.post(PC, json={**both, "fingerprint": "f"}, headers=headers), 403)
    assert await snapshot(db, shop) == before
    mine = await body_for(db, shop)
    shown = (await client.post(f"{PC}/preview", json=mine, headers=headers)).json()["data"]
    done = await client.post(
        PC, json={**mine, "fingerprint": shown["fingerprint"]}, headers=headers
    )
    assert done.status_code == 200, done.text
    # the owner prices the other branch; the manager's history shows their own only
    coffee = await code_of(db, shop.other_products["coffee"])
    theirs = await body_for(db, shop, warehouse_ids=[shop.other_warehouse_id], item_codes=[coffee])
    seen = (await client.post(f"{PC}/preview", json=theirs, headers=owner)).json()["data"]
    r = await client.post(PC, json={**theirs, "fingerprint": seen["fingerprint"]}, headers=owner)
    assert r.status_code == 200, r.text
    own = (await client.get(PC, headers=headers)).json()["data"]["data"]
    assert [e["entity_id"] for e in own] == [shop.warehouse_id]
    everyone = (await client.get(PC, headers=owner)).json()["data"]["data"]
    assert sorted(e["entity_id"] for e in everyone) == sorted(
        [shop.warehouse_id, shop.other_warehouse_id]
    )
    asked = await client.get(f"{PC}?warehouse_id={shop.other_warehouse_id}", headers=headers)
    assert_error(asked, 403)
    await check_books(db, shop.company_id)
