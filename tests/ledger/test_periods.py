"""Closing the books: every write dated into a closed period is refused with a 422
naming its date field and nothing recorded; closing twice, out of order and
reopening; the year-end closing entry and the books after it."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from sqlalchemy import func, select

from tests.admin_helpers import ADMIN, login
from tests.factories import Shop
from tests.invariants import check_books
from tests.ledger.test_rollups import from_lines, late_entry, sale
from tillbook.db import Database
from tillbook.errors import Conflict, ValidationFailed
from tillbook.ledger import rollups
from tillbook.ledger.service import post
from tillbook.models import (
    AuditEvent,
    JournalEntry,
    LedgerPeriod,
    Order,
    Payment,
    PriceHistory,
    StockAdjustment,
    StockBatch,
)
from tillbook.reports import balance_sheet, periods, profit_loss, trial_balance
from tillbook.unit import UnitOfWork

D = Decimal
TODAY = dt.date.today()


async def counts(db: Database, company_id: int) -> dict[str, int]:
    async def run(s):
        out = {}
        for model in (JournalEntry, Order, Payment, StockAdjustment, PriceHistory, StockBatch):
            out[model.__name__] = await s.scalar(
                select(func.count()).select_from(model).where(model.company_id == company_id)
            )
        return out

    return await db.read(run)


def refused(r, field: str) -> None:
    assert r.status_code == 422, r.text
    errors = r.json()["errors"]
    assert field in errors, errors
    assert "closed period" in " ".join(errors[field]), errors


async def test_every_dated_write_into_a_closed_period_is_refused(client, db, shop):
    first = await sale(client, shop, "2024-03-05", 2)
    await periods.close(db, shop.company_id, dt.date(2024, 3, 31))
    before = await counts(db, shop.company_id)
    day = "2024-03-31"
    attempts = [
        (
            "/sales",
            {
                "user_id": shop.customer_id,
                "order_date": day,
                "product_items": [{"xid": shop.xid("apple"), "quantity": 1, "unit_price": 3}],
            },
            "order_date",
        ),
        (
            "/purchases",
            {
                "user_id": shop.supplier_id,
                "order_date": day,
                "product_items": [{"xid": shop.xid("tea"), "quantity": 2, "unit_price": 4}],
            },
            "order_date",
        ),
        (
            "/sales-returns",
            {
                "user_id": shop.customer_id,
                "order_date": day,
                "invoice_number": first["invoice_number"],
                "items": [{"product_id": shop.xid("apple"), "quantity": 1, "unit_price": 3.5}],
            },
            "order_date",
        ),
        (
            "/purchase-returns",
            {
                "user_id": shop.supplier_id,
                "order_date": day,
                "items": [{"product_id": shop.xid("apple"), "quantity": 1, "unit_price": 1.5}],
            },
            "order_date",
        ),
        (
            "/payments",
            {
                "user_id": shop.customer_id,
                "payment_type": "in",
                "amount": "2.00",
                "payment_mode_id": "cash",
                "date": day,
            },
            "date",
        ),
        (
            "/expenses",
            {"expense_category_id": await _category(db, shop), "amount": 5, "date": day},
            "date",
        ),
    ]
    for path, body, field in attempts:
        refused(await client.post(path, json=body, headers=shop.headers), field)
    assert await counts(db, shop.company_id) == before
    # the day after the close is open: the same sale goes through
    await sale(client, shop, "2024-04-01", 1)
    await check_books(db, shop.company_id)


async def _category(db: Database, shop: Shop) -> int:
    from tillbook.models import ExpenseCategory

    return await db.read(
        lambda s: s.scalar(
            select(ExpenseCategory.id).where(ExpenseCategory.company_id == shop.company_id).limit(1)
        )
    )


async def test_writes_dated_today_are_refused_once_today_is_closed(client, db, shop):
    """Stock and price adjustments and opening stock are dated today, in the public
    API and the back office alike."""
    auth = await login(client, db, shop)
    r = await client.post(
        f"{ADMIN}/periods/close", json={"through": TODAY.isoformat()}, headers=auth
    )
    assert r.status_code == 200, r.text
    before = await counts(db, shop.company_id)
    adjustment = {
        "product_id": shop.products["apple"],
        "quantity": 1,
        "adjustment_type": "subtract",
    }
    refused(await client.post("/stock-adjustments", json=adjustment, headers=shop.headers), "date")
    price = {"product_id": shop.products["apple"], "new_sales_price": "4.00"}
    refused(await client.post("/price-adjustments", json=price, headers=shop.headers), "date")
    pid = shop.products["apple"]
    r = await client.post(
        f"{ADMIN}/products/{pid}/listings/{shop.warehouse_id}/opening-stock",
        json={"quantity": 3, "unit_cost": "1.00"},
        headers=auth,
    )
    refused(r, "date")
    product = {
        "name": "Oat milk",
        "item_code": "OAT-CLOSED",
        "listings": [
            {
                "warehouse_id": shop.warehouse_id,
                "sales_price": "2.20",
                "purchase_price": "1.10",
                "opening_stock": {"quantity": 2, "unit_cost": "1.00"},
            }
        ],
    }
    refused(await client.post(f"{ADMIN}/products", json=product, headers=auth), "date")
    assert await counts(db, shop.company_id) == before
    # a zero-cost write posts no entry and is refused all the same
    with pytest.raises(ValidationFailed) as caught:
        await db.unit(
            lambda uow: post(
                uow,
                company_id=shop.company_id,
                warehouse_id=shop.warehouse_id,
                rule="opening_stock",
                figures={"cost": D("0.00")},
                narration="free",
                field="quantity",
                source_type="opening",
                source_id=None,
                entry_date=TODAY,
            )
        )
    assert "date" in caught.value.errors
    await check_books(db, shop.company_id)


async def test_close_twice_out_of_order_in_the_future_and_reopen(client, db, shop):
    cid = shop.company_id
    auth = await login(client, db, shop)
    await sale(client, shop, "2024-01-10", 1)
    await sale(client, shop, "2024-02-10", 1)
    r = await client.post(f"{ADMIN}/periods/close", json={"through": "2024-02-29"}, headers=auth)
    assert r.status_code == 200, r.text
    assert r.json()["data"]["closed_through"] == "2024-02-29"

    async def state():
        return await db.read(lambda s: s.get(LedgerPeriod, cid, populate_existing=True))

    def snapshot(row):
        return (row.closed_through, row.rolled_up_through, row.closed_at)

    kept = snapshot(await state())
    before = await counts(db, cid)
    again = await client.post(
        f"{ADMIN}/periods/close", json={"through": "2024-02-29"}, headers=auth
    )
    assert again.status_code == 409 and "already closed" in again.text
    earlier = await client.post(
        f"{ADMIN}/periods/close", json={"through": "2024-01-31"}, headers=auth
    )
    assert earlier.status_code == 409 and "2024-02-29" in earlier.text
    future = (TODAY + dt.timedelta(days=1)).isoformat()
    ahead = await client.post(f"{ADMIN}/periods/close", json={"through": future}, headers=auth)
    assert ahead.status_code == 422 and "through" in ahead.json()["errors"]
    for bad in ({"through": "2024-13-01"}, {"through": None}, {}, {"through": "yesterday"}):
        r = await client.post(f"{ADMIN}/periods/close", json=bad, headers=auth)
        assert r.status_code == 422 and "through" in r.json()["errors"], (bad, r.text)
    assert snapshot(await state()) == kept and await counts(db, cid) == before
    # reopening to a later day, or to the same day, changes nothing
    for bad in ("2024-02-29", "2024-03-31"):
        r = await client.post(f"{ADMIN}/periods/reopen", json={"through": bad}, headers=auth)
        assert r.status_code == 409, r.text
    assert snapshot(await state()) == kept
    # reopen February: the roll-ups stay (they do not depend on the close), and a
    # sale dated into reopened February adds itself to them; the reopening is audited
    r = await client.post(f"{ADMIN}/periods/reopen", json={"through": "2024-01-31"}, headers=auth)
    assert r.status_code == 200, r.text
    row = await state()
    assert (row.closed_through, row.rolled_up_through) == (
        dt.date(2024, 1, 31),
        rollups.due_through(dt.date.today()),
    )
    await sale(client, shop, "2024-02-20", 1)
    assert (await periods.check(db, cid))["ok"]
    refused(
        await client.post(
            "/sales",
            json={
                "user_id": shop.customer_id,
                "order_date": "2024-01-31",
                "product_items": [{"xid": shop.xid("apple"), "quantity": 1, "unit_price": 3}],
            },
            headers=shop.headers,
        ),
        "order_date",
    )
    events = await db.read(
        lambda s: s.execute(
            select(AuditEvent.action, AuditEvent.before, AuditEvent.after)
            .where(AuditEvent.company_id == cid, AuditEvent.entity_type == "ledger_period")
            .order_by(AuditEvent.id)
        )
    )
    actions = [row.action for row in events.all()]
    assert actions == ["period.close", "period.reopen"]
    # reopening everything, then nothing is left to reopen
    r = await client.post(f"{ADMIN}/periods/reopen", json={"through": None}, headers=auth)
    assert r.status_code == 200 and r.json()["data"]["closed_through"] is None
    r = await client.post(f"{ADMIN}/periods/reopen", json={}, headers=auth)
    assert r.status_code == 409
    status = await client.get(f"{ADMIN}/periods", headers=auth)
    assert status.json()["data"]["closed_through"] is None
    assert (await periods.check(db, cid))["ok"]
    with pytest.raises(Conflict):
        await periods.reopen(db, cid, None)
    await check_books(db, cid)


async def test_year_end_close_moves_profit_to_retained_earnings(client, db, shop):
    cid = shop.company_id
    await sale(client, shop, "2024-06-10", 4, paid="14.00")  # 14.00 revenue
    await sale(client, shop, "2024-12-31", 2)
    await sale(client, shop, "2025-01-02", 1)
    pl_before = await db.read(
        lambda s: profit_loss(s, cid, None, dt.date(2024, 1, 1), dt.date(2024, 12, 31))
    )
    profit = D(pl_before["net_profit"])
    assert profit > 0
    result = await periods.close(db, cid, dt.date(2025, 1, 31))
    assert len(result["closing_entries"]) == 1  # the one warehouse that sold
    tb = await db.read(lambda s: trial_balance(s, cid, None, None, dt.date(2024, 12, 31)))
    by_code = {a["code"]: a for a in tb["accounts"]}
    for a in by_code.values():
        if a["type"] in ("income", "contra-income", "expense", "contra-expense"):
            assert a["balance"] == "0.00", a
    assert D(by_code["31200"]["balance"]) == -profit
    assert tb["total_debit"] == tb["total_credit"]
    # the year's profit and loss is what it was; the balance sheet carries it as
    # retained earnings, no longer as current earnings
    pl_after = await db.read(
        lambda s: profit_loss(s, cid, None, dt.date(2024, 1, 1), dt.date(2024, 12, 31))
    )
    assert pl_after == pl_before
    bs = await db.read(lambda s: balance_sheet(s, cid, None, dt.date(2024, 12, 31)))
    assert bs["balanced"] and bs["equity"]["current_earnings"] == "0.00"
    equity = {a["code"]: a["amount"] for a in bs["equity"]["accounts"]}
    assert D(equity["31200"]) == profit
    bs_now = await db.read(lambda s: balance_sheet(s, cid))
    assert bs_now["balanced"] and D(bs_now["equity"]["current_earnings"]) > 0  # 2025's sale
    closing = await from_lines(
        db, cid, date_from=dt.date(2024, 12, 31), date_to=dt.date(2024, 12, 31)
    )
    assert closing["31200"][1] == profit
    # reopen 2024's last day, sell into it, close again: only the new profit moves
    await periods.reopen(db, cid, dt.date(2024, 12, 30))
    await sale(client, shop, "2024-12-31", 1, paid="3.50")
    again = await periods.close(db, cid, dt.date(2025, 1, 31))
    assert len(again["closing_entries"]) == 1
    tb = await db.read(lambda s: trial_balance(s, cid, None, None, dt.date(2024, 12, 31)))
    by_code = {a["code"]: a for a in tb["accounts"]}
    assert by_code["41100"]["balance"] == "0.00"
    pl = await db.read(
        lambda s: profit_loss(s, cid, None, dt.date(2024, 1, 1), dt.date(2024, 12, 31))
    )
    assert D(by_code["31200"]["balance"]) == -D(pl["net_profit"])
    assert (await periods.check(db, cid))["ok"]
    await check_books(db, cid)


async def test_a_close_waits_for_a_write_already_past_its_entry(db, shop):
    """A write that inserted its entry before the close took its lock commits
    first; the close then rolls up a month that includes it."""
    if db.is_sqlite:
        pytest.skip("SQLite has one writer: a close and a write cannot overlap")
    import asyncio

    entered = asyncio.Event()
    release = asyncio.Event()

    async def slow_write(uow: UnitOfWork):
        await late_entry(uow, shop, dt.date(2024, 5, 10))
        entered.set()
        await release.wait()

    writer = asyncio.create_task(db.unit(slow_write, attempts=1))
    await entered.wait()
    closer = asyncio.create_task(periods.close(db, shop.company_id, dt.date(2024, 5, 31)))
    await asyncio.sleep(0.3)
    assert not closer.done()  # held back by the open write
    release.set()
    await writer
    result = await closer
    assert result["rolled_up_through"] == str(rollups.due_through(dt.date.today()))
    check = await periods.check(db, shop.company_id)
    assert check["ok"] and check["rollups"] > 0, check
