"""The company-wide catalog migration (e61c0f3d9a57) keeps the books' meaning.

A shop with history in two warehouses (sales, a return, a customer payment, an
expense, a stock adjustment, a product sold in both warehouses) is taken down to
the per-warehouse product rows of the revision before, checked there, and brought
up again: the trial balance, every warehouse's stock valuation, the orders as the
API shows them and the books' invariants are identical before and after.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from alembic import command as alembic_command
from sqlalchemy import text

from tests.conftest import PG_URL, _create_pg_database, _drop_pg_database
from tests.factories import Shop, by_id, make_shop
from tests.invariants import check_books
from tillbook.app import create_app
from tillbook.catalog import rows as catalog_rows
from tillbook.config import Settings
from tillbook.db import Database
from tillbook.migrate import alembic_config
from tillbook.models import Product
from tillbook.reports.stock import stock_valuation_company
from tillbook.reports.trial_balance import trial_balance
from tillbook.unit import UnitOfWork

D = Decimal
BEFORE_CATALOG = "8b3e5f1a7c42"


@pytest.fixture
async def fresh_url(backend: str, tmp_path: Path) -> AsyncIterator[str]:
    """A database of its own, at head: this test moves its schema."""
    if backend == "sqlite":
        url = f"sqlite:///{tmp_path / 'migrating.db'}"
        name = None
    else:
        assert PG_URL is not None
        url, name = await _create_pg_database(PG_URL)
    await asyncio.to_thread(alembic_command.upgrade, alembic_config(url), "head")
    yield url
    if name is not None:
        assert PG_URL is not None
        await _drop_pg_database(PG_URL, name)


async def _history(db: Database) -> tuple[Shop, list[int]]:
    """A shop with the apple juice listed in both warehouses and a day of trade."""
    shop = await make_shop(db)

    async def list_apple_at_harbour(uow: UnitOfWork) -> None:
        product = await by_id(uow.session, Product, shop.products["apple"])
        assert product is not None
        await catalog_rows.list_product(
            uow,
            product,
            warehouse_id=shop.other_warehouse_id,
            sales_price=D("3.90"),
            purchase_price=D("2.10"),
            opening_batches=[(D("6"), D("2.10"))],
        )

    await db.unit(list_apple_at_harbour)
    app = create_app(Settings(database_url=db.url), database=db)
    orders: list[int] = []
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://testserver/api/v1/public"
        ) as client:

            async def post(path: str, body: dict[str, Any], headers: dict[str, str]) -> Any:
                r = await client.post(path, json=body, headers=headers)
                assert r.status_code == 200, r.text
                return r.json()

            apple = shop.xid("apple")
            sale = await post(
                "/sales",
                {
                    "user_id": shop.customer_id,
                    "order_date": "2026-11-20",
                    "product_items": [
                        {"xid": apple, "quantity": 12, "unit_price": 3.5},
                        {"xid": shop.xid("water"), "quantity": 5, "unit_price": 1},
                    ],
                    "all_payments": [{"amount": 10, "payment_mode_id": "cash"}],
                },
                shop.headers,
            )
            orders.append(sale["order_id"])
            harbour = await post(
                "/sales",
                {
                    "user_id": shop.walk_in_id,
                    "order_date": "2026-11-20",
                    "product_items": [{"xid": apple, "quantity": 4, "unit_price": 3.9}],
                    "all_payments": [{"amount": 15.6, "payment_mode_id": "card"}],
                },
                shop.other_key.headers,
            )
            orders.append(harbour["order_id"])
            await post(
                "/sales-returns",
                {
                    "user_id": shop.customer_id,
                    "order_date": "2026-11-21",
                    "invoice_number": sale["invoice_number"],
                    "items": [{"product_id": apple, "quantity": 2, "unit_price": 3.5}],
                },
                shop.headers,
            )
            await post(
                "/payments",
                {
                    "user_id": shop.customer_id,
                    "payment_type": "in",
                    "amount": "20.00",
                    "payment_mode_id": "cash",
                    "invoices": [{"order_id": sale["order_id"], "amount": 20}],
                },
                shop.headers,
            )
            await post(
                "/stock-adjustments",
                {
                    "product_id": shop.products["water"],
                    "quantity": 3,
                    "adjustment_type": "subtract",
                },
                shop.headers,
            )
            await post(
                "/purchases",
                {
                    "user_id": shop.supplier_id,
                    "order_date": "2026-11-22",
                    "product_items": [{"xid": apple, "quantity": 10, "unit_price": 2.2}],
                },
                shop.other_key.headers,
            )
    return shop, orders


async def _books(db: Database, shop: Shop) -> dict[str, Any]:
    async def read(session: Any) -> dict[str, Any]:
        tb = await trial_balance(session, shop.company_id)
        tb.pop("as_of")
        return {
            "trial_balance": tb,
            "stock": await stock_valuation_company(session, shop.company_id),
        }

    return await db.read(read)


async def _sql(db: Database, statement: str, **params: Any) -> list[Any]:
    async def run(session: Any) -> list[Any]:
        return list((await session.execute(text(statement), params)).all())

    return await db.read(run)


async def test_catalog_migration_keeps_the_books(fresh_url: str) -> None:
    db = Database(fresh_url)
    try:
        shop, orders = await _history(db)
        await check_books(db, shop.company_id)
        before = await _books(db, shop)
        listings = await _sql(
            db,
            "SELECT product_id, warehouse_id, current_stock FROM listings "
            "WHERE company_id = :c ORDER BY warehouse_id, product_id",
            c=shop.company_id,
        )
        assert len(listings) == 5  # apple in both warehouses
    finally:
        await db.dispose()

    # Down to a product row per warehouse: the apple juice is two rows there.
    await asyncio.to_thread(alembic_command.downgrade, alembic_config(fresh_url), BEFORE_CATALOG)
    db = Database(fresh_url)
    try:
        rows = await _sql(
            db,
            "SELECT id, warehouse_id, item_code, current_stock FROM products "
            "WHERE company_id = :c ORDER BY warehouse_id, id",
            c=shop.company_id,
        )
        assert len(rows) == 5
        apple_rows = [r for r in rows if r[0] == shop.products["apple"] or r[2].startswith("AJ-")]
        assert {r[1] for r in apple_rows} == {shop.warehouse_id, shop.other_warehouse_id}
        assert sorted(D(str(r[3])) for r in rows) == sorted(D(str(r[2])) for r in listings)
        # each warehouse's batches and movements name that warehouse's row
        strays = await _sql(
            db,
            "SELECT count(*) FROM stock_batches b JOIN products p ON p.id = b.product_id "
            "WHERE b.company_id = :c AND p.warehouse_id <> b.warehouse_id",
            c=shop.company_id,
        )
        assert strays == [(0,)]
    finally:
        await db.dispose()

    # And up again: one product per item code, the books as they were.
    await asyncio.to_thread(alembic_command.upgrade, alembic_config(fresh_url), "head")
    db = Database(fresh_url)
    try:
        after = await _books(db, shop)
        assert after == before
        again = await _sql(
            db,
            "SELECT product_id, warehouse_id, current_stock FROM listings "
            "WHERE company_id = :c ORDER BY warehouse_id, product_id",
            c=shop.company_id,
        )
        assert again == listings
        await check_books(db, shop.company_id)
        app = create_app(Settings(database_url=db.url), database=db)
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(
                transport=transport, base_url="http://testserver/api/v1/public"
            ) as client:
                r = await client.get(f"/sales/{orders[1]}", headers=shop.other_key.headers)
                assert r.status_code == 200, r.text
                items = r.json()["data"]["items"]
                assert [i["product"]["id"] for i in items] == [shop.products["apple"]]
                # the product is one id in both warehouses, with each one's own price
                here = await client.get(f"/products/{shop.xid('apple')}", headers=shop.headers)
                there = await client.get(
                    f"/products/{shop.xid('apple')}", headers=shop.other_key.headers
                )
                assert here.status_code == there.status_code == 200
                assert (
                    here.json()["data"]["sales_price"],
                    there.json()["data"]["sales_price"],
                ) == (
                    3.5,
                    3.9,
                )
    finally:
        await db.dispose()
