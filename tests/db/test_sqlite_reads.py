"""SQLite's hot reads in the event loop's thread (``db._LoopReads``): the same
answers as the threaded session's, a busy database read the threaded way, and the
planner's statistics that let a feed page find its barcodes by product (issue 27)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import Column, Integer, MetaData, Numeric, String, Table, select, text
from sqlalchemy.dialects import sqlite
from sqlalchemy.dialects.postgresql.asyncpg import dialect as asyncpg_dialect

from tests.admin_helpers import sale_body
from tests.factories import make_shop
from tillbook import db as db_module
from tillbook.catalog import changes as catalog_changes
from tillbook.catalog import queries as catalog_queries
from tillbook.db import Database
from tillbook.errors import ServiceUnavailable
from tillbook.kit import changes as kit_changes
from tillbook.unit import driver_sql


@pytest.fixture(autouse=True)
def _sqlite_only(db: Database) -> None:
    if not db.is_sqlite:
        pytest.skip("SQLite's own read path")


async def _get(client: httpx.AsyncClient, headers: dict[str, str], url: str, **params: Any) -> Any:
    r = await client.get(url, headers=headers, params=params)
    assert r.status_code == 200, r.text
    return r.json()["data"]


async def test_loop_reads_answer_as_the_threaded_session_does(
    client: httpx.AsyncClient, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A product (its barcodes, units and batches: dates, decimals, booleans), a sale
    (lines, payments) and a feed page read in the loop's thread give the very answers
    the aiosqlite session gave before."""
    shop = await make_shop(db)
    r = await client.post("/sales", headers=shop.headers, json=sale_body(shop, quantity=2))
    assert r.status_code in (200, 201), r.text
    sale_id = r.json()["order_id"]
    urls: list[tuple[str, dict[str, Any]]] = [
        (f"/products/{shop.xid('apple')}", {}),
        (f"/sales/{sale_id}", {}),
        ("/products", {"updated_since": "1970-01-01T00:00:00Z", "limit": 100}),
    ]
    in_loop = [await _get(client, shop.headers, url, **params) for url, params in urls]
    monkeypatch.setattr(db, "_loop_engine", None)  # every read through aiosqlite's thread
    threaded = [await _get(client, shop.headers, url, **params) for url, params in urls]
    for page in (in_loop[2], threaded[2]):  # the database's time, to the second
        assert page.pop("sync_token") and page.pop("next_cursor") is None
    assert in_loop == threaded
    assert in_loop[0]["batches"] and in_loop[1]["items"]


def _table_database(tmp_path: Path) -> tuple[Database, Table, str]:
    path = tmp_path / "busy.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE things (id INTEGER PRIMARY KEY, name TEXT, price NUMERIC)")
    conn.execute("INSERT INTO things VALUES (1, 'tea', 2.50)")
    conn.commit()
    conn.close()
    things = Table(
        "things",
        MetaData(),
        Column("id", Integer, primary_key=True),
        Column("name", String),
        Column("price", Numeric(12, 2)),
    )
    return Database(f"sqlite:///{path}"), things, str(path)


async def test_a_busy_database_is_read_through_the_threaded_session(tmp_path: Path) -> None:
    """A connection holding the database exclusively makes the loop's read busy at
    once (it never waits in the loop's thread); the read waits in aiosqlite's thread
    instead and answers when the lock is gone."""
    database, things, path = _table_database(tmp_path)
    statement = select(things.c.id, things.c.name, things.c.price).where(things.c.id == 1)
    try:
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("PRAGMA locking_mode=EXCLUSIVE")
        holder.execute("BEGIN EXCLUSIVE")
        holder.execute("UPDATE things SET name = 'green tea' WHERE id = 1")
        read = asyncio.create_task(database.reads(lambda r: r.all(statement, {})))
        await asyncio.sleep(0.3)
        assert not read.done()  # waiting, in a thread: the loop itself is free
        holder.execute("COMMIT")
        holder.close()
        rows = await asyncio.wait_for(read, 30)
        assert [dict(r) for r in rows] == [{"id": 1, "name": "green tea", "price": 2.5}]
        again = await database.reads(lambda r: r.all(statement, {}))
        assert [dict(r) for r in again] == [dict(r) for r in rows]
    finally:
        await database.dispose()


def test_a_page_condition_is_a_condition_on_sqlite() -> None:
    """``kit.idlists``' conditions render as a plain IN on SQLite (``IN (…) = 1``
    would keep SQLite from looking the page's ids up by index) and as ``= ANY`` of an
    array on PostgreSQL: a feed page's ids by a SELECT, a list page's as one bound
    list."""
    feed_codes = catalog_changes._PRODUCTS.lists["codes"]
    list_codes = catalog_queries._product_list(True, False, False)[2]["codes"]
    feed_sql = str(feed_codes.compile(dialect=sqlite.dialect()))
    assert "IN (SELECT" in feed_sql and ") = 1" not in feed_sql
    list_sql = str(list_codes.compile(dialect=sqlite.dialect()))
    assert "IN (SELECT value FROM json_each(?))" in list_sql and ") = 1" not in list_sql
    on_postgresql = driver_sql(list_codes, ("company_id", "page_ids"), asyncpg_dialect()).sql  # type: ignore[no-untyped-call]
    assert "product_id = any($2::BIGINT[])" in on_postgresql, on_postgresql


async def test_a_list_pages_barcodes_are_found_by_its_ids(db: Database) -> None:
    """A list page's barcodes, by the page's ids bound as one JSON list, are looked up
    by company and product id on SQLite's statistics, and are the page's own."""
    shop = await make_shop(db)
    await db.analyze()
    codes = catalog_queries._product_list(False, False, False)[2]["codes"]
    ids = sorted(shop.products.values())
    compiled = codes.compile(dialect=sqlite.dialect())
    given = {"company_id": shop.company_id, "page_ids": json.dumps(ids)}
    values = [given[name] for name in compiled.positiontup or ()]
    path = db.url.split("///", 1)[1]
    with sqlite3.connect(path) as conn:
        plan = " ".join(
            str(row[3]) for row in conn.execute(f"EXPLAIN QUERY PLAN {compiled}", values)
        )
        found = {row[0] for row in conn.execute(str(compiled), values)}
    assert "product_barcodes USING INDEX ix_product_barcodes_company_product" in plan, plan
    assert found and found <= set(ids)
    rows = await db.reads(
        lambda r: r.all(codes, {"company_id": shop.company_id, "page_ids": ids[:1]})
    )
    assert {row["product_id"] for row in rows} == {ids[0]}


def _feed_params(shop: Any, *, after: int) -> dict[str, Any]:
    """The values of a products' feed page of ``shop``'s branch after id ``after``."""
    return {
        "company_id": shop.company_id,
        "warehouse_id": shop.warehouse_id,
        kit_changes.SINCE.key: kit_changes.EPOCH,
        kit_changes.AFTER.key: after,
        kit_changes.LIMIT.key: 101,
    }


def _feed_plan(db: Database, statement: Any, params: dict[str, Any]) -> tuple[str, list[Any]]:
    """SQLite's plan of ``statement`` over ``params`` (its statistics checked to be
    there), and its rows."""
    compiled = statement.compile(dialect=sqlite.dialect())
    given = compiled.construct_params(params)
    values = [given[name] for name in compiled.positiontup or ()]
    path = db.url.split("///", 1)[1]
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM sqlite_stat1").fetchone()[0] > 0
        plan = " ".join(
            str(row[3]) for row in conn.execute(f"EXPLAIN QUERY PLAN {compiled}", values)
        )
        return plan, list(conn.execute(str(compiled), values))


async def test_statistics_send_a_feed_pages_barcodes_by_product(db: Database) -> None:
    """With ``Database.analyze``'s statistics, a page's barcodes are found by company
    and product id, not by scanning the company's barcodes, on the test database
    itself: hundreds of small companies, the shape whose statistics once sent every
    page through the company's index (a page of a large company read all of its
    barcodes)."""
    shop = await make_shop(db)
    await db.analyze()
    codes = catalog_changes._PRODUCTS.lists["codes"]
    plan, _rows = _feed_plan(db, codes, _feed_params(shop, after=0))
    assert "product_barcodes USING INDEX ix_product_barcodes_company_product" in plan, plan
    assert "(company_id=? AND product_id=?)" in plan, plan


def test_a_statement_compiled_for_one_dialect_is_never_sent_to_the_other() -> None:
    """``unit.driver_sql`` keeps a statement's SQL per dialect: a process that read
    on SQLite (the loop's reads) and then on PostgreSQL sent SQLite's ``?``."""
    codes = catalog_changes._PRODUCTS.lists["codes"]
    keys = ("company_id", "warehouse_id", "walk_since", "walk_after", "walk_limit")
    on_sqlite = driver_sql(codes, keys, sqlite.dialect()).sql
    on_postgresql = driver_sql(codes, keys, asyncpg_dialect()).sql  # type: ignore[no-untyped-call]
    assert "?" in on_sqlite and "$1" not in on_sqlite
    assert "$1" in on_postgresql and "?" not in on_postgresql


def test_a_lock_is_told_by_its_primary_code() -> None:
    """Busy is SQLite's primary code, whatever the extended one: a reader that finds
    another connection rebuilding the log after a crash (SQLITE_BUSY_RECOVERY) waits
    the threaded way; a broken constraint is no lock."""

    class DriverError(Exception):
        def __init__(self, code: int):
            self.sqlite_errorcode = code

    assert db_module._busy(DriverError(5)) and db_module._busy(DriverError(6))
    assert db_module._busy(DriverError(5 | 1 << 8))  # SQLITE_BUSY_RECOVERY
    assert not db_module._busy(DriverError(19 | 8 << 8))  # SQLITE_CONSTRAINT_UNIQUE
    assert not db_module._busy(ValueError("no code"))


async def test_what_the_loop_cannot_send_goes_the_threaded_way(tmp_path: Path) -> None:
    """A statement that is no prebuilt SELECT is read through the session, as before;
    a database error is the 503 it always was, not a 500."""
    database, _, _ = _table_database(tmp_path)
    try:
        rows = await database.reads(lambda r: r.all(text("SELECT name FROM things"), {}))
        assert [dict(r) for r in rows] == [{"name": "tea"}]
        missing = select(Table("nothing", MetaData(), Column("id", Integer)).c.id)
        with pytest.raises(ServiceUnavailable):
            await database.reads(lambda r: r.all(missing, {}))
    finally:
        await database.dispose()


async def test_a_feed_page_starts_at_its_cursor_in_the_listings(db: Database) -> None:
    """A products' feed page reads the branch's listings from its cursor on, by
    (warehouse, product id), not from the branch's first listing: with only the
    product's id bounded, PostgreSQL's merge join read every listing before the
    cursor, so the hundredth page of a till's first sync cost a hundred times the
    first. Both ids are bounded, and SQLite's plan shows the listing's range."""
    shop = await make_shop(db)
    await db.analyze()
    page = catalog_changes._PRODUCTS.rows
    params = _feed_params(shop, after=min(shop.products.values()))
    plan, rows = _feed_plan(db, page, params)
    found = [row[-2] for row in rows]
    assert "(warehouse_id=? AND product_id>?)" in plan, plan
    assert found == sorted(found) and min(shop.products.values()) not in found
    on_postgresql = driver_sql(page, tuple(params), asyncpg_dialect()).sql  # type: ignore[no-untyped-call]
    cte = on_postgresql.split(")\n SELECT", 1)[0]
    assert "products.id > $" in cte and "listings.product_id > $" in cte, cte
