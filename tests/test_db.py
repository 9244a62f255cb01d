"""The database layer's own promises: ids back in row order, and statements sent on
the asyncpg connection (``tillbook.rawsql``) failing as SQLAlchemy's would."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import exc, insert, select, text

from tillbook.db import Database, insert_returning_ids
from tillbook.models import FailedTransaction, InvoiceCounter
from tillbook.models.base import table_of
from tillbook.rawsql import run

_failed = table_of(FailedTransaction)
_counters = table_of(InvoiceCounter)
_NEW_COUNTER = insert(_counters)
_BACKEND_PID = text("SELECT pg_backend_pid()")


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
    ids = await db.write(lambda s: insert_returning_ids(s, _failed, rows))
    assert len(set(ids)) == count

    async def reasons(s):
        found = await s.execute(select(_failed.c.id, _failed.c.reason).where(_failed.c.id.in_(ids)))
        return dict(found.all())

    by_id = await db.read(reasons)
    assert [by_id[i] for i in ids] == [row["reason"] for row in rows]


async def test_unique_violation_is_sqlalchemys_integrity_error(db: Database, shop) -> None:
    row = {"warehouse_id": shop.warehouse_id, "counter_type": "test-series", "last_value": 1}
    await db.write(lambda s: run(s, _NEW_COUNTER, row))
    with pytest.raises(exc.IntegrityError):
        await db.standalone(lambda s: run(s, _NEW_COUNTER, row))
    # the failed unit left nothing behind and the pool still serves
    count = await db.read(
        lambda s: s.scalar(
            select(text("count(*)"))
            .select_from(_counters)
            .where(_counters.c.counter_type == "test-series")
        )
    )
    assert count == 1


async def test_dead_connection_is_invalidated_and_the_unit_runs_again(
    db: Database, shop, backend: str
) -> None:
    if backend != "postgresql":
        pytest.skip("a backend to terminate is PostgreSQL's")
    calls = 0

    async def unit(s):
        nonlocal calls
        calls += 1
        if calls == 1:
            pid = (await run(s, _BACKEND_PID, {}))[0][0]
            async with db.engine.connect() as other:
                await other.execute(text("SELECT pg_terminate_backend(:p)"), {"p": pid})
        row = {"warehouse_id": shop.warehouse_id, "counter_type": f"dead-{calls}", "last_value": 1}
        await run(s, _NEW_COUNTER, row)
        return calls

    assert await db.write(unit) == 2
    types = await db.read(
        lambda s: s.scalars(
            select(_counters.c.counter_type).where(_counters.c.counter_type.like("dead-%"))
        )
    )
    assert list(types) == ["dead-2"]
