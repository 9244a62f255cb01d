"""The tenant-keys migration (d3b9e6a1c724) moves a database with history and back.

Two shops with a day of trade (sales, a return, a payment, an adjustment, a
purchase, a sale under an idempotency key), and for each of them a webhook
delivery with an attempt, a terminal callback and a closed shift's count: the
rows of the four tables that had no ``company_id``. Down to the revision before,
those lose the column (and public idempotency records their company), and up
again they get it back from their parents; every table keeps its rows, and the
trial balance, the stock valuation and the books' invariants are identical at
each step. The service then sells and replays on the migrated schema.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from decimal import Decimal
from typing import Any

import httpx
from alembic import command as alembic_command
from sqlalchemy import inspect, text

from tests.factories import Shop, by_id, make_shop
from tests.invariants import check_books
from tests.migrations.test_catalog_migration import (
    _books,
    _history,
    _sql,
    fresh_url,  # noqa: F401  (the fixture)
)
from tillbook.app import create_app
from tillbook.config import Settings
from tillbook.db import Database
from tillbook.migrate import alembic_config
from tillbook.models import (
    Base,
    DeliveryAttempt,
    OutboxEvent,
    ShiftCount,
    TerminalCallback,
    TerminalProvider,
    Webhook,
    WebhookDelivery,
)
from tillbook.models.shifts import Shift
from tillbook.unit import UnitOfWork

BEFORE_KEYS = "f7a2c5e9d318"
CHILDREN = {
    "delivery_attempts": ("webhook_deliveries", "delivery_id"),
    "terminal_callbacks": ("terminal_providers", "provider_id"),
    "shift_counts": ("shifts", "shift_id"),
    "invoice_counters": ("warehouses", "warehouse_id"),
}


async def _children(db: Database, shop: Shop) -> None:
    """A row of each table that had no company_id, under ``shop``'s company."""
    now = dt.datetime.now(dt.UTC)

    async def add(uow: UnitOfWork) -> None:
        s = uow.session
        event = (
            await s.execute(
                text("SELECT min(id) FROM outbox_events WHERE company_id = :c"),
                {"c": shop.company_id},
            )
        ).scalar_one()
        assert await by_id(s, OutboxEvent, event) is not None
        hook = Webhook(
            company_id=shop.company_id, url="https://example.test/h", secret_encrypted="x"
        )
        provider = TerminalProvider(
            company_id=shop.company_id,
            warehouse_id=shop.warehouse_id,
            name="acme",
            payment_mode_id=shop.card_mode_id,
            secret_encrypted="x",
        )
        shift = Shift(
            company_id=shop.company_id,
            warehouse_id=shop.warehouse_id,
            register="R9",
            status="closed",
            cash_mode_id=shop.cash_mode_id,
            opening_float=Decimal("50.00"),
            notes="",
        )
        s.add_all([hook, provider, shift])
        await s.flush()
        delivery = WebhookDelivery(
            company_id=shop.company_id,
            event_id=event,
            webhook_id=hook.id,
            delivery_uid=f"d-{shop.company_id}",
            next_attempt_at=now,
        )
        s.add(delivery)
        await s.flush()
        s.add_all(
            [
                DeliveryAttempt(
                    company_id=shop.company_id,
                    delivery_id=delivery.id,
                    attempted_at=now,
                    status_code=500,
                ),
                TerminalCallback(
                    company_id=shop.company_id,
                    provider_id=provider.id,
                    reference=f"ref-{shop.company_id}",
                    status="approved",
                    amount=Decimal("1.00"),
                    outcome="{}",
                ),
                ShiftCount(
                    company_id=shop.company_id,
                    shift_id=shift.id,
                    payment_mode_id=shop.cash_mode_id,
                    expected=Decimal("50.00"),
                    counted=Decimal("49.00"),
                ),
            ]
        )

    await db.unit(add)


async def _sale_with_key(db: Database, shop: Shop, token: str) -> dict[str, Any]:
    app = create_app(Settings(database_url=db.url), database=db)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://testserver/api/v1/public"
        ) as client:
            body = {
                "user_id": shop.customer_id,
                "order_date": "2026-11-23",
                "product_items": [{"xid": shop.xid("water"), "quantity": 1, "unit_price": 1}],
                "all_payments": [{"amount": 1, "payment_mode_id": "cash"}],
            }
            headers = {**shop.headers, "Idempotency-Key": token}
            first = await client.post("/sales", json=body, headers=headers)
            assert first.status_code == 200, first.text
            again = await client.post("/sales", json=body, headers=headers)
            assert again.status_code == 200, again.text
            assert again.json()["order_id"] == first.json()["order_id"]
            return dict(first.json())


async def _state(db: Database, shops: list[Shop]) -> dict[str, Any]:
    state: dict[str, Any] = {}
    for shop in shops:
        state[f"books {shop.company_id}"] = await _books(db, shop)
        await check_books(db, shop.company_id)
    for table in sorted(set(Base.metadata.tables) - {"staff_logins"}):  # not there before
        state[f"rows {table}"] = await _sql(db, f"SELECT count(*) FROM {table}")
    return state


async def _children_companies(db: Database) -> dict[str, list[Any]]:
    found = {}
    for table, (parent, column) in CHILDREN.items():
        found[table] = await _sql(
            db,
            f"SELECT c.company_id, p.company_id FROM {table} c "
            f"JOIN {parent} p ON p.id = c.{column} ORDER BY p.company_id",
        )
    return found


async def test_tenant_keys_migration_keeps_the_books_both_ways(fresh_url: str) -> None:  # noqa: F811
    db = Database(fresh_url)
    try:
        shop, _orders = await _history(db)
        other = await make_shop(db)
        shops = [shop, other]
        for s in shops:
            await _sale_with_key(db, s, f"key-{s.company_id}")
            await _children(db, s)
        before = await _state(db, shops)
        children = await _children_companies(db)
        for table, rows in children.items():
            assert rows and all(mine == parents for mine, parents in rows), table
    finally:
        await db.dispose()

    await asyncio.to_thread(alembic_command.downgrade, alembic_config(fresh_url), BEFORE_KEYS)
    db = Database(fresh_url)
    try:
        async with db.engine.connect() as conn:
            for table in CHILDREN:
                columns = await conn.run_sync(
                    lambda sync, t=table: [c["name"] for c in inspect(sync).get_columns(t)]
                )
                assert "company_id" not in columns, table
        public = await _sql(
            db,
            "SELECT count(*), count(company_id) FROM idempotency_records "
            "WHERE warehouse_id IS NOT NULL",
        )
        assert public[0][0] >= 2 and public[0][1] == 0
        assert await _state(db, shops) == before
    finally:
        await db.dispose()

    await asyncio.to_thread(alembic_command.upgrade, alembic_config(fresh_url), "head")
    db = Database(fresh_url)
    try:
        assert await _state(db, shops) == before
        assert await _children_companies(db) == children
        public = await _sql(
            db,
            "SELECT count(*) FROM idempotency_records r JOIN warehouses w "
            "ON w.id = r.warehouse_id WHERE r.company_id <> w.company_id",
        )
        assert public == [(0,)]
        # Every staff email is a login of its own again (``staff_logins``).
        logins = await _sql(
            db,
            "SELECT l.email, l.company_id, l.user_id FROM staff_logins l "
            "JOIN users u ON u.id = l.user_id ORDER BY l.user_id",
        )
        staff = await _sql(
            db,
            "SELECT lower(email), company_id, id FROM users "
            "WHERE user_type = 'staff' AND email IS NOT NULL ORDER BY id",
        )
        assert logins == staff and len(staff) >= 2
        # The service sells, numbers and replays on the new keys.
        for s in shops:
            sale = await _sale_with_key(db, s, f"after-{s.company_id}")
            assert sale["status"] == "success"
            await check_books(db, s.company_id)
    finally:
        await db.dispose()
