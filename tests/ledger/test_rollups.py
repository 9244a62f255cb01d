"""Roll-ups: the reports read closed months from them and the rest from the lines,
and every figure equals a recomputation straight from the journal lines, before
and after closing, for whole ranges, single months and ranges cut mid-month."""

from __future__ import annotations

import asyncio
import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import event, func, select, update

from tests.factories import Shop
from tests.invariants import check_books
from tillbook.db import Database
from tillbook.kit.money import to_money
from tillbook.ledger import rollups
from tillbook.ledger.parties import warehouse_balances
from tillbook.ledger.service import post
from tillbook.models import Account, JournalEntry, JournalLine, LedgerRollup
from tillbook.reports import (
    balance_sheet,
    periods,
    profit_loss,
    stock_valuation,
    trial_balance,
)
from tillbook.unit import UnitOfWork, statement_observers

D = Decimal


async def sale(client, shop: Shop, day: str, qty: int = 2, paid: str | None = None) -> dict:
    body: dict[str, Any] = {
        "user_id": shop.customer_id,
        "order_date": day,
        "product_items": [{"xid": shop.xid("apple"), "quantity": qty, "unit_price": "3.50"}],
    }
    if paid is not None:
        body["all_payments"] = [{"amount": paid, "payment_mode_id": "cash"}]
    r = await client.post("/sales", json=body, headers=shop.headers)
    assert r.status_code == 200, r.text
    return r.json()


async def sales_return(client, shop: Shop, day: str, invoice_number: str) -> None:
    r = await client.post(
        "/sales-returns",
        json={
            "user_id": shop.customer_id,
            "order_date": day,
            "invoice_number": invoice_number,
            "items": [{"product_id": shop.xid("apple"), "quantity": 1, "unit_price": 3.5}],
        },
        headers=shop.headers,
    )
    assert r.status_code == 200, r.text


async def payment(
    client, shop: Shop, day: str, amount: str, user: int | None = None, kind: str = "in"
) -> None:
    r = await client.post(
        "/payments",
        json={
            "user_id": shop.customer_id if user is None else user,
            "payment_type": kind,
            "amount": amount,
            "payment_mode_id": "cash",
            "date": day,
        },
        headers=shop.headers,
    )
    assert r.status_code == 200, r.text


async def purchase(client, shop: Shop, day: str) -> None:
    r = await client.post(
        "/purchases",
        json={
            "user_id": shop.supplier_id,
            "order_date": day,
            "product_items": [{"xid": shop.xid("tea"), "quantity": 4, "unit_price": 2}],
        },
        headers=shop.headers,
    )
    assert r.status_code == 200, r.text


async def activity(client, shop: Shop) -> None:
    """Sales, a return, payments, a purchase and an expense over January to May
    2024, some days at the edges of months."""
    first = await sale(client, shop, "2024-01-05", 3)
    await sale(client, shop, "2024-01-31", 1, paid="3.50")
    await sale(client, shop, "2024-02-01", 2)
    await sale(client, shop, "2024-02-15", 1, paid="1.00")
    await sales_return(client, shop, "2024-02-20", first["invoice_number"])
    for day, amount in (("2024-03-10", "5.00"), ("2024-04-02", "2.50")):
        await payment(client, shop, day, amount)
    await purchase(client, shop, "2024-03-31")
    await sale(client, shop, "2024-04-30", 1, paid="3.50")
    await sale(client, shop, "2024-05-02", 2)


async def from_lines(
    db: Database,
    company_id: int,
    *,
    date_from: dt.date | None = None,
    date_to: dt.date | None = None,
    warehouse_id: int | None = None,
    with_closing: bool = True,
) -> dict[str, tuple[Decimal, Decimal]]:
    """code -> (Σ debit, Σ credit) recomputed from every line, no roll-up read."""

    async def run(s):
        q = (
            select(Account.code, func.sum(JournalLine.debit), func.sum(JournalLine.credit))
            .join(JournalLine, JournalLine.account_id == Account.id)
            .join(JournalEntry, JournalEntry.id == JournalLine.entry_id)
            .where(JournalEntry.company_id == company_id)
            .group_by(Account.code)
        )
        if date_from is not None:
            q = q.where(JournalEntry.entry_date >= date_from)
        if date_to is not None:
            q = q.where(JournalEntry.entry_date <= date_to)
        if warehouse_id is not None:
            q = q.where(JournalLine.warehouse_id == warehouse_id)
        if not with_closing:
            q = q.where(JournalEntry.source_type != "year_end_close")
        return {code: (to_money(d), to_money(c)) for code, d, c in (await s.execute(q)).all()}

    return await db.read(run)


RANGES: list[tuple[dt.date | None, dt.date | None]] = [
    (None, None),
    (dt.date(2024, 1, 1), dt.date(2024, 1, 31)),
    (dt.date(2024, 2, 1), dt.date(2024, 2, 29)),
    (dt.date(2024, 1, 15), dt.date(2024, 3, 20)),
    (dt.date(2024, 1, 31), dt.date(2024, 2, 1)),
    (None, dt.date(2024, 3, 31)),
    (dt.date(2024, 3, 1), None),
    (dt.date(2024, 2, 10), dt.date(2024, 5, 3)),
    (dt.date(2023, 1, 1), dt.date(2023, 12, 31)),
    (dt.date(2024, 4, 1), dt.date(2024, 4, 30)),
]

CHART_MONTHS = [
    (dt.date(2024, m, 1), dt.date(2024, m + 1, 1) - dt.timedelta(days=1)) for m in range(1, 6)
]
# a range cut mid-month at both ends, as the chart cuts its outer months
CHART_MONTHS_CUT = [
    (dt.date(2024, 1, 20), dt.date(2024, 1, 31)),
    *CHART_MONTHS[1:4],
    (dt.date(2024, 5, 1), dt.date(2024, 5, 10)),
]


async def assert_reports_match_lines(db: Database, shop: Shop) -> None:
    cid = shop.company_id
    for warehouse in (None, shop.warehouse_id, shop.other_warehouse_id):
        for start, end in RANGES:
            truth = await from_lines(db, cid, date_from=start, date_to=end, warehouse_id=warehouse)
            tb = await db.read(
                lambda s, w=warehouse, a=start, b=end: trial_balance(s, cid, w, a, b)
            )
            for a in tb["accounts"]:
                debit, credit = truth.get(a["code"], (D("0.00"), D("0.00")))
                assert (a["debit"], a["credit"]) == (str(debit), str(credit)), (
                    warehouse,
                    start,
                    end,
                    a,
                )
            pl = await db.read(lambda s, w=warehouse, a=start, b=end: profit_loss(s, cid, w, a, b))
            truth_pl = await from_lines(
                db, cid, date_from=start, date_to=end, warehouse_id=warehouse, with_closing=False
            )
            for a in pl["income"]["accounts"]:
                debit, credit = truth_pl.get(a["code"], (D("0.00"), D("0.00")))
                assert a["amount"] == str(credit - debit), (start, end, a)
        # the months of a profit and loss read by month equal a profit and loss per
        # month, and its figures the plain report's
        for months in (CHART_MONTHS, CHART_MONTHS_CUT):
            a, b = months[0][0], months[-1][1]
            whole = await db.read(
                lambda s, w=warehouse, a=a, b=b: profit_loss(s, cid, w, a, b, by_month=True)
            )
            nets = dict(whole.pop("months"))
            assert whole == await db.read(
                lambda s, w=warehouse, a=a, b=b: profit_loss(s, cid, w, a, b)
            )
            for start, end in months:
                pl = await db.read(
                    lambda s, w=warehouse, a=start, b=end: profit_loss(s, cid, w, a, b)
                )
                net = nets.get(start.replace(day=1), D("0.00"))
                assert str(net) == pl["net_profit"], (warehouse, start, end, net, pl)
            assert all(month.day == 1 and a.replace(day=1) <= month <= b for month in nets)
            if warehouse != shop.other_warehouse_id:  # (the other branch sells nothing)
                assert any(net != 0 for net in nets.values())
        for as_of in (dt.date(2024, 1, 31), dt.date(2024, 3, 15), None):
            bs = await db.read(lambda s, w=warehouse, d=as_of: balance_sheet(s, cid, w, d))
            assert bs["balanced"], bs
            truth = await from_lines(db, cid, date_to=as_of, warehouse_id=warehouse)
            for a in bs["assets"]["accounts"]:
                debit, credit = truth.get(a["code"], (D("0.00"), D("0.00")))
                assert a["amount"] == str(debit - credit), (as_of, a)
    valuation = await db.read(lambda s: stock_valuation(s, cid, shop.warehouse_id))
    inventory = (await from_lines(db, cid, warehouse_id=shop.warehouse_id))["11700"]
    assert valuation["gl_inventory_balance"] == str(inventory[0] - inventory[1])
    balances = await db.read(
        lambda s: warehouse_balances(s, cid, shop.warehouse_id, {shop.customer_id: "customer"})
    )

    async def owed(s):
        q = (
            select(func.sum(JournalLine.debit), func.sum(JournalLine.credit))
            .join(Account, Account.id == JournalLine.account_id)
            .where(
                JournalLine.party_id == shop.customer_id,
                JournalLine.warehouse_id == shop.warehouse_id,
                Account.code == "11500",
            )
        )
        debit, credit = (await s.execute(q)).one()
        return to_money(debit) - to_money(credit)

    assert balances[shop.customer_id] == await db.read(owed)


async def rollup_rows(db: Database, company_id: int) -> int:
    return await db.read(
        lambda s: s.scalar(
            select(func.count())
            .select_from(LedgerRollup)
            .where(LedgerRollup.company_id == company_id)
        )
    )


async def test_reports_equal_the_lines_before_and_after_closing(client, db, shop):
    await activity(client, shop)
    await assert_reports_match_lines(db, shop)
    # the first report rolled up every month due, nobody closed anything
    due = rollups.due_through(dt.date.today())
    assert due is not None
    status = await db.read(lambda s: periods.status(s, shop.company_id))
    assert status["closed_through"] is None and status["rolled_up_through"] == due.isoformat()
    rows = await rollup_rows(db, shop.company_id)
    assert rows > 0
    result = await periods.close(db, shop.company_id, dt.date(2024, 3, 20))
    # a close half way through March changes nothing rolled up
    assert result["rolled_up_through"] == due.isoformat()
    await assert_reports_match_lines(db, shop)
    result = await periods.close(db, shop.company_id, dt.date(2024, 4, 30))
    assert result["rolled_up_through"] == due.isoformat()
    assert await rollup_rows(db, shop.company_id) == rows
    await assert_reports_match_lines(db, shop)
    # the open period keeps moving, into May 2024 (rolled up) as well: reports follow
    await sale(client, shop, "2024-05-20", 1, paid="3.50")
    await assert_reports_match_lines(db, shop)
    check = await periods.check(db, shop.company_id)
    assert check["ok"] and check["rollups"] > rows and check["party_rollups"] > 0, check
    await check_books(db, shop.company_id)


async def test_check_finds_a_rollup_that_disagrees(client, db, shop):
    await activity(client, shop)
    await periods.close(db, shop.company_id, dt.date(2024, 2, 29))
    assert (await periods.check(db, shop.company_id))["ok"]

    async def tamper(s):
        await s.execute(
            update(LedgerRollup)
            .where(
                LedgerRollup.company_id == shop.company_id,
                LedgerRollup.period == dt.date(2024, 2, 1),
            )
            .values(debit=LedgerRollup.debit + 1)
        )

    await db.write(tamper)
    check = await periods.check(db, shop.company_id)
    assert not check["ok"] and check["differences"]
    assert all(d["key"][0] == "2024-02-01" for d in check["differences"]), check
    # and the report built on it shows the tampered figure: the check is what sees it
    tb = await db.read(
        lambda s: trial_balance(s, shop.company_id, None, dt.date(2024, 2, 1), dt.date(2024, 2, 29))
    )
    assert tb["total_debit"] != tb["total_credit"]


def test_plan_splits_ranges_into_months_and_edges():
    rolled = dt.date(2024, 3, 31)
    plan = rollups.plan(None, None, rolled)
    assert (plan.first_month, plan.last_month) == (None, dt.date(2024, 3, 1))
    assert plan.live == ((dt.date(2024, 4, 1), None),)
    plan = rollups.plan(dt.date(2024, 1, 15), dt.date(2024, 3, 20), rolled)
    assert (plan.first_month, plan.last_month) == (dt.date(2024, 2, 1), dt.date(2024, 2, 1))
    assert plan.live == (
        (dt.date(2024, 1, 15), dt.date(2024, 1, 31)),
        (dt.date(2024, 3, 1), dt.date(2024, 3, 20)),
    )
    plan = rollups.plan(dt.date(2024, 1, 15), dt.date(2024, 1, 20), rolled)
    assert plan.last_month is None and plan.live == ((dt.date(2024, 1, 15), dt.date(2024, 1, 20)),)
    assert rollups.plan(None, None, None).live == ((None, None),)
    assert rollups.month_end(dt.date(2024, 2, 10)) == dt.date(2024, 2, 29)
    assert rollups.last_whole_month_end(dt.date(2024, 12, 30)) == dt.date(2024, 11, 30)


def test_a_month_is_due_a_whole_day_after_it_ends():
    assert rollups.due_through(dt.date(2024, 11, 1)) == dt.date(2024, 9, 30)
    assert rollups.due_through(dt.date(2024, 11, 2)) == dt.date(2024, 10, 31)
    assert rollups.due_through(dt.date(2024, 11, 30)) == dt.date(2024, 10, 31)
    assert rollups.due_through(dt.date(2024, 3, 2)) == dt.date(2024, 2, 29)
    today = dt.date(2024, 11, 1)
    assert rollups.may_be_rolled_up(dt.date(2024, 10, 31), today)
    assert not rollups.may_be_rolled_up(dt.date(2024, 11, 1), today)
    assert not rollups.may_be_rolled_up(dt.date(2024, 12, 5), today)


async def test_back_dated_entries_into_rolled_up_months_keep_them_exact(client, db, shop):
    """Nobody closes: the first report rolls up the past months, then a sale, a
    return, a payment, a purchase and a supplier payment dated into those months
    add themselves to the roll-ups; every report still equals the lines."""
    cid = shop.company_id
    first = await sale(client, shop, "2024-01-05", 3)
    await sale(client, shop, "2024-03-31", 1, paid="3.50")
    assert (await db.read(lambda s: periods.status(s, cid)))["rolled_up_through"] is None
    await db.read(lambda s: trial_balance(s, cid))
    due = rollups.due_through(dt.date.today())
    status = await db.read(lambda s: periods.status(s, cid))
    assert status["rolled_up_through"] == str(due) and status["closed_through"] is None
    rows = await rollup_rows(db, cid)

    await sale(client, shop, "2024-01-20", 2)  # a credit sale: the customer's roll-ups
    await sale(client, shop, "2024-02-29", 1, paid="1.00")
    await sales_return(client, shop, "2024-02-10", first["invoice_number"])
    await purchase(client, shop, "2024-03-05")
    await payment(client, shop, "2024-03-10", "2.50")
    await payment(client, shop, "2024-03-20", "2.50", user=shop.supplier_id, kind="out")
    # the months were not rolled up again: the entries added themselves
    status = await db.read(lambda s: periods.status(s, cid))
    assert status["rolled_up_through"] == str(due)
    assert await rollup_rows(db, cid) > rows
    await assert_reports_match_lines(db, shop)
    check = await periods.check(db, cid)
    assert check["ok"] and check["party_rollups"] > 0, check
    await check_books(db, cid)


async def test_a_sale_dated_today_leaves_the_rollups_alone(client, db, shop):
    """The hot path reads and locks nothing for the roll-ups: no statement of a
    sale dated today names them or the period row."""
    await sale(client, shop, "2024-01-05", 1)
    await db.read(lambda s: trial_balance(s, shop.company_id))
    seen: list[str] = []

    def observe(sql: str) -> None:
        seen.append(sql)

    def cursor(_conn, _cursor, statement, *_args) -> None:
        seen.append(statement)

    engine = db.write_engine.sync_engine
    event.listen(engine, "before_cursor_execute", cursor)
    statement_observers.append(observe)
    try:
        await sale(client, shop, dt.date.today().isoformat(), 1, paid="3.50")
    finally:
        statement_observers.remove(observe)
        event.remove(engine, "before_cursor_execute", cursor)
    assert any("journal_lines" in sql for sql in seen)
    assert not [sql for sql in seen if "ledger_rollups" in sql or "ledger_periods" in sql]
    assert not [sql for sql in seen if "ledger_party_rollups" in sql]
    assert (await periods.check(db, shop.company_id))["ok"]


async def late_entry(uow: UnitOfWork, shop: Shop, day: dt.date) -> None:
    await post(
        uow,
        company_id=shop.company_id,
        warehouse_id=shop.warehouse_id,
        rule="opening_stock",
        figures={"cost": D("5.00")},
        narration="late",
        field="quantity",
        source_type="opening",
        source_id=None,
        entry_date=day,
    )


async def test_a_build_and_a_back_dated_write_at_once_count_it_once(client, db, shop):
    """PostgreSQL: a back-dated write that comes during a month's build waits for
    it and adds itself; one that was there first holds the build back until it
    commits, and the build counts it. Either way the roll-ups equal the lines."""
    if db.is_sqlite:
        pytest.skip("SQLite has one writer: a build and a write cannot overlap")
    cid = shop.company_id
    for day in ("2024-01-05", "2024-02-05", "2024-03-05"):
        await sale(client, shop, day, 1)
    built = asyncio.Event()
    release = asyncio.Event()

    async def slow_build(session):
        # as if on 2 February 2024: January is due, the first build
        step = await rollups.build(session, cid, today=dt.date(2024, 2, 2))
        built.set()
        await release.wait()
        return step

    # 1. the build of January holds the period row; a write dated in January waits
    builder = asyncio.create_task(db.write(slow_build, attempts=1))
    await built.wait()
    writer = asyncio.create_task(
        db.unit(lambda uow: late_entry(uow, shop, dt.date(2024, 1, 20)), attempts=1)
    )
    await asyncio.sleep(0.3)
    assert not writer.done()
    release.set()
    assert (await builder).rolled_up_through == dt.date(2024, 1, 31)
    await writer
    check = await periods.check(db, cid)
    assert check["ok"] and check["rolled_up_through"] == "2024-01-31", check

    # 2. a write dated in February holds the row first; February's build waits for
    # it (or, skipping locked rows, builds nothing now), then counts it
    entered = asyncio.Event()
    done = asyncio.Event()

    async def slow_write(uow: UnitOfWork) -> None:
        await late_entry(uow, shop, dt.date(2024, 2, 20))
        entered.set()
        await done.wait()

    writer = asyncio.create_task(db.unit(slow_write, attempts=1))
    await entered.wait()
    skipped = await db.write(lambda s: rollups.build(s, cid, months=1, skip_locked=True))
    assert skipped.rolled_up_through == dt.date(2024, 1, 31)
    builder = asyncio.create_task(
        db.write(lambda s: rollups.build(s, cid, months=1, today=dt.date(2024, 3, 2)), attempts=1)
    )
    await asyncio.sleep(0.3)
    assert not builder.done()
    done.set()
    await writer
    assert (await builder).rolled_up_through == dt.date(2024, 2, 29)
    check = await periods.check(db, cid)
    assert check["ok"] and check["rolled_up_through"] == "2024-02-29", check
    truth = await from_lines(db, cid, date_from=dt.date(2024, 1, 1), date_to=dt.date(2024, 2, 29))
    tb = await db.read(
        lambda s: trial_balance(s, cid, None, dt.date(2024, 1, 1), dt.date(2024, 2, 29))
    )
    for a in tb["accounts"]:
        assert (a["debit"], a["credit"]) == tuple(
            str(v) for v in truth.get(a["code"], (D("0.00"), D("0.00")))
        ), a
    # (no check_books: the late entries are bare journal entries, with no stock)


async def test_the_background_step_rolls_up_the_companies_behind(client, db, shop):
    """``tillbook serve``'s step rolls up a company nobody closed before any report
    asks, and stops when told."""
    cid = shop.company_id
    await sale(client, shop, "2024-01-05", 1)
    await sale(client, shop, "2024-02-05", 1, paid="3.50")
    due = str(rollups.due_through(dt.date.today()))
    stop = asyncio.Event()
    task = asyncio.create_task(rollups.keep_rolled_up(db, stop, 3600))
    for _ in range(400):
        status = await db.read(lambda s: periods.status(s, cid))
        if status["rolled_up_through"] == due:
            break
        await asyncio.sleep(0.05)
    stop.set()
    await asyncio.wait_for(task, 30)
    assert status["rolled_up_through"] == due and status["closed_through"] is None
    check = await periods.check(db, cid)
    assert check["ok"] and check["rollups"] > 0 and check["party_rollups"] > 0, check
