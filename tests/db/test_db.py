"""The database layer's own promises: ids back in row order; what the unit of work's
fast path relies on (statements on the driver connection, inside the transaction
SQLAlchemy began, rolled back with it, failing with errors the unit classifies by
name); the retry rules."""

from __future__ import annotations

import asyncio
import datetime as dt

import pytest
from sqlalchemy import exc, func, insert, select, text

from tillbook.db import Database, plans_by_values
from tillbook.errors import Conflict
from tillbook.models import FailedTransaction, InvoiceCounter
from tillbook.models.base import table_of
from tillbook.unit import PremiseGone, UnitOfWork, constraint_name, is_unique_race

_failed = table_of(FailedTransaction)
_counters = table_of(InvoiceCounter)
_NEW_COUNTER = insert(_counters)
_BACKEND_PID = text("SELECT pg_backend_pid()")
_ONE = text("SELECT 1")


@pytest.mark.parametrize("count", [2, 3, 57])
async def test_ids_come_back_in_row_order(db: Database, shop, count: int) -> None:
    now = dt.datetime.now(dt.UTC)
    rows = [
        {
            "company_id": shop.company_id,
            "warehouse_id": shop.warehouse_id,
            "reason": f"row {i:03d}",
            "transaction_data": "{}",
            "timestamp": now,
        }
        for i in range(count)
    ]

    async def insert_rows(uow: UnitOfWork) -> list[int]:
        await uow.run(_ONE, {})
        return await uow.insert_returning_ids(_failed, rows)

    ids = await db.unit(insert_rows)
    assert len(set(ids)) == count

    async def reasons(s):
        found = await s.execute(select(_failed.c.id, _failed.c.reason).where(_failed.c.id.in_(ids)))
        return dict(found.all())

    by_id = await db.read(reasons)
    assert [by_id[i] for i in ids] == [row["reason"] for row in rows]


async def test_driver_statements_run_in_the_units_transaction(db: Database, shop, backend) -> None:
    """The fast path sends statements on the asyncpg connection
    (``AsyncConnection.get_raw_connection().driver_connection``) once SQLAlchemy has
    begun the transaction with the unit's first statement: they must run inside it,
    and roll back with it. An upgrade of SQLAlchemy or asyncpg that changed either
    fails here."""
    if backend != "postgresql":
        pytest.skip("the driver path is PostgreSQL's")
    row = {
        "warehouse_id": shop.warehouse_id,
        "counter_type": "pin-rollback",
        "company_id": shop.company_id,
        "last_value": 1,
    }

    class Rollback(Exception):
        pass

    async def unit(uow: UnitOfWork) -> None:
        await uow.run(_ONE, {})  # the first statement: through the session
        connection = await uow.session.connection()
        driver = (await connection.get_raw_connection()).driver_connection
        assert driver.is_in_transaction()
        await uow.run(_NEW_COUNTER, row)  # on the driver
        assert (
            await driver.fetchval(
                "SELECT count(*) FROM invoice_counters WHERE counter_type = 'pin-rollback'"
            )
            == 1
        )
        raise Rollback

    with pytest.raises(Rollback):
        await db.unit(unit)
    count = await db.read(
        lambda s: s.scalar(
            select(text("count(*)"))
            .select_from(_counters)
            .where(_counters.c.counter_type == "pin-rollback")
        )
    )
    assert count == 0


async def test_unique_violation_is_named(db: Database, shop) -> None:
    row = {
        "warehouse_id": shop.warehouse_id,
        "counter_type": "test-series",
        "company_id": shop.company_id,
        "last_value": 1,
    }

    async def add(uow: UnitOfWork) -> None:
        await uow.run(_ONE, {})
        await uow.run(_NEW_COUNTER, row)

    await db.unit(add)
    with pytest.raises(Exception) as caught:
        await db.unit(add, attempts=1)
    assert constraint_name(caught.value) == "pk_invoice_counters"
    assert is_unique_race(caught.value)
    # the failed unit left nothing behind and the pool still serves
    count = await db.read(
        lambda s: s.scalar(
            select(text("count(*)"))
            .select_from(_counters)
            .where(_counters.c.counter_type == "test-series")
        )
    )
    assert count == 1


async def test_other_integrity_errors_are_not_retried(db: Database, shop) -> None:
    """A foreign key or not-null violation is a bug, not a lost race: no re-run."""
    calls = 0

    async def bad(uow: UnitOfWork) -> None:
        nonlocal calls
        calls += 1
        await uow.session.execute(
            insert(_failed).values(
                company_id=shop.company_id, reason=None, transaction_data="{}",
                timestamp=dt.datetime.now(dt.UTC),
            )
        )  # fmt: skip

    with pytest.raises(exc.IntegrityError):
        await db.unit(bad)
    assert calls == 1


async def test_premise_gone_runs_the_unit_again(db: Database, shop) -> None:
    calls = 0

    async def unit(uow: UnitOfWork) -> int:
        nonlocal calls
        calls += 1
        if calls < 3:
            raise PremiseGone("a neighbour emptied the layer")
        return calls

    assert await db.unit(unit) == 3

    async def never(uow: UnitOfWork) -> None:
        raise PremiseGone("always")

    with pytest.raises(Conflict):
        await db.unit(never, attempts=2)


async def test_dead_connection_is_invalidated_and_the_unit_runs_again(
    db: Database, shop, backend: str
) -> None:
    if backend != "postgresql":
        pytest.skip("a backend to terminate is PostgreSQL's")
    calls = 0

    async def unit(uow: UnitOfWork) -> int:
        nonlocal calls
        calls += 1
        if calls == 1:
            pid = (await uow.run(_BACKEND_PID, {}))[0][0]
            async with db.engine.connect() as other:
                await other.execute(text("SELECT pg_terminate_backend(:p)"), {"p": pid})
        else:
            await uow.run(_ONE, {})
        row = {
            "warehouse_id": shop.warehouse_id,
            "counter_type": f"dead-{calls}",
            "company_id": shop.company_id,
            "last_value": 1,
        }
        await uow.run(_NEW_COUNTER, row)
        return calls

    assert await db.unit(unit) == 2
    types = await db.read(
        lambda s: s.scalars(
            select(_counters.c.counter_type).where(_counters.c.counter_type.like("dead-%"))
        )
    )
    assert list(types) == ["dead-2"]


async def test_numeric_overflow_at_the_database_is_a_422(db: Database, shop, backend) -> None:
    """Bounds are checked on what a write reads; two concurrent writes pushing one
    balance past the column's limit together would reach PostgreSQL with a value it
    cannot hold: that is a 422 with nothing recorded, never a 500."""
    if backend != "postgresql":
        pytest.skip("SQLite keeps NUMERIC as floating point and does not overflow")
    from tillbook.errors import Unprocessable

    async def overflow(uow: UnitOfWork) -> None:
        await uow.run(_ONE, {})
        await uow.session.execute(
            text("UPDATE users SET balance = balance + 1e20 WHERE id = :id"),
            {"id": shop.customer_id},
        )

    with pytest.raises(Unprocessable):
        await db.unit(overflow)


async def test_units_pass_a_gate_in_arrival_order_two_at_a_time(db: Database, backend) -> None:
    if backend != "postgresql":
        pytest.skip("SQLite runs one write unit at a time: there is no queue to order")
    gate = ("test gate", id(db))
    inside = 0
    most_inside = 0
    entered: list[int] = []

    def unit_for(n: int):
        async def unit(uow: UnitOfWork) -> None:
            nonlocal inside, most_inside
            await uow.gate(gate)
            await uow.gate(gate)  # asking again takes no second place
            entered.append(n)
            inside += 1
            most_inside = max(most_inside, inside)
            await asyncio.sleep(0.02)
            inside -= 1
            if n == 3:
                raise RuntimeError("a unit that fails gives its place back")

        return unit

    tasks = []
    for n in range(8):
        tasks.append(asyncio.create_task(db.unit(unit_for(n))))
        await asyncio.sleep(0.005)  # arrival order: 0, 1, 2, …
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert isinstance(results[3], RuntimeError)
    assert entered == list(range(8))
    assert most_inside == 2


async def test_a_unit_that_waits_too_long_at_a_gate_is_a_409(db: Database, backend) -> None:
    if backend != "postgresql":
        pytest.skip("SQLite runs one write unit at a time")
    gate = ("slow gate", id(db))
    release = asyncio.Event()

    async def holder(uow: UnitOfWork) -> None:
        await uow.gate(gate)
        await release.wait()

    async def late(uow: UnitOfWork) -> None:
        await uow.gate(gate)

    held = [asyncio.create_task(db.unit(holder)) for _ in range(2)]
    await asyncio.sleep(0.05)
    with pytest.raises(Conflict):
        await db.unit(late, lock_timeout_s=0.2)
    release.set()
    await asyncio.gather(*held)
    await db.unit(late)  # the places were given back with the holders' commits


_PLAN_MODE = select(func.current_setting("plan_cache_mode").label("mode"))


async def test_hot_paths_keep_generic_plans_and_session_reads_plan_by_values(
    db: Database, backend
) -> None:
    """The service's connections plan a prepared statement once (``db.GENERIC_PLANS``:
    a sale's products, layers and last statement were planned again at every sale);
    a read through a session (reports, back-office pages) and a write that asks for
    it (``plans_by_values``) plan for their values, as PostgreSQL does by default. Behind a pooler
    statements are anonymous and planned as they run: nothing is set."""
    if backend != "postgresql":
        pytest.skip("PostgreSQL's plan cache")
    hot = "auto" if db.pooler else "force_generic_plan"

    async def in_unit(uow: UnitOfWork) -> str:
        return str((await uow.run(_PLAN_MODE, {}))[0]["mode"])

    assert (await db.reads(lambda r: r.all(_PLAN_MODE, {})))[0]["mode"] == hot
    assert await db.unit(in_unit) == hot
    assert await db.read(lambda s: s.scalar(_PLAN_MODE)) == "auto"
    # a write that aggregates over dates (a month's roll-up, a period's close)

    async def aggregating(uow: UnitOfWork) -> str:
        await plans_by_values(uow.session)
        return await in_unit(uow)

    assert await db.unit(aggregating) == "auto"
    assert await db.unit(in_unit) == hot  # (per transaction: the connection keeps its own)
