"""Reads sent ahead (``UnitOfWork.read_ahead``): the rows a read sent with an
earlier one answers are the rows it would have read alone, a read whose values
differ from what was sent ahead is read alone, and a sale reads its customer, its
products and their FIFO layers in one round trip on PostgreSQL."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from tests.invariants import check_books
from tillbook.db import Database
from tillbook.inventory import repository as stock
from tillbook.kit.problems import Problems
from tillbook.orders import lookup
from tillbook.unit import UnitOfWork, statement_observers

TODAY = dt.date(2026, 11, 20)


def _fields(value: Any) -> dict[str, Any]:
    return {k: v for k, v in vars(value).items() if not k.startswith("_sa_")}


def _plain(found: dict[int, Any]) -> dict[int, Any]:
    return {k: v if isinstance(v, list) else _fields(v) for k, v in found.items()}


async def _alone(db: Database, shop: Any, ids: list[int]) -> tuple[Any, Any, Any]:
    async def unit(uow: UnitOfWork) -> tuple[Any, Any, Any]:
        customer, terms = await lookup.customer(
            uow, shop.company_id, shop.customer_id, "user_id", Problems()
        )
        products = await stock.products(uow, shop.company_id, shop.warehouse_id, ids)
        layers = await stock.open_layers(uow, shop.company_id, shop.warehouse_id, ids, TODAY)
        return (_fields(customer), terms), _plain(products), layers

    return await db.unit(unit)


async def test_reads_sent_ahead_answer_as_reads_alone(db: Database, shop: Any) -> None:
    ids = [shop.products["apple"], shop.products["water"]]
    alone = await _alone(db, shop, ids)
    seen: list[str] = []

    async def unit(uow: UnitOfWork) -> tuple[Any, Any, Any]:
        stock.read_ahead(uow, shop.company_id, shop.warehouse_id, ids, layers_on=TODAY)
        statement_observers.append(seen.append)
        try:
            customer, terms = await lookup.customer(
                uow, shop.company_id, shop.customer_id, "user_id", Problems()
            )
            products = await stock.products(uow, shop.company_id, shop.warehouse_id, ids)
            layers = await stock.open_layers(uow, shop.company_id, shop.warehouse_id, ids, TODAY)
        finally:
            statement_observers.remove(seen.append)
        return (_fields(customer), terms), _plain(products), layers

    ahead = await db.unit(unit)
    assert ahead == alone
    assert alone[2][shop.products["apple"]][0].quantity == Decimal("10")
    if not db.is_sqlite:
        # the customer's read carried the other two (SQLite reads each alone)
        assert len(seen) == 1, seen
        assert "stock_batches" in seen[0] and "listings" in seen[0]


async def test_a_read_whose_values_differ_is_read_alone(db: Database, shop: Any) -> None:
    apple, water = shop.products["apple"], shop.products["water"]
    seen: list[str] = []

    async def unit(uow: UnitOfWork) -> tuple[Any, Any]:
        stock.read_ahead(uow, shop.company_id, shop.warehouse_id, [apple])
        statement_observers.append(seen.append)
        try:
            await lookup.customer(uow, shop.company_id, shop.customer_id, "user_id", Problems())
            both = await stock.products(uow, shop.company_id, shop.warehouse_id, [apple, water])
            # what was sent ahead still answers its own read, once
            one = await stock.products(uow, shop.company_id, shop.warehouse_id, [apple])
            again = await stock.products(uow, shop.company_id, shop.warehouse_id, [apple])
        finally:
            statement_observers.remove(seen.append)
        assert _plain(one) == _plain(again)
        return sorted(both), sorted(one)

    assert await db.unit(unit) == (sorted([apple, water]), [apple])
    if not db.is_sqlite:
        assert len(seen) == 3, seen  # the customer with apple; apple and water; apple again


async def test_a_sale_reads_its_customer_products_and_layers_at_once(
    client: Any, shop: Any, db: Database
) -> None:
    body = {
        "user_id": shop.customer_id,
        "order_date": "2026-11-20",
        "product_items": [
            {"xid": shop.xid("apple"), "quantity": 12, "unit_price": 3.5},
            {"xid": shop.xid("water"), "quantity": 1, "unit_price": 1},
        ],
    }
    seen: list[str] = []
    statement_observers.append(seen.append)
    try:
        r = await client.post("/sales", json=body, headers=shop.headers)
    finally:
        statement_observers.remove(seen.append)
    assert r.status_code == 200, r.text
    if not db.is_sqlite:
        reads = [s for s in seen if "FROM stock_batches" in s or "FROM products" in s]
        assert len(reads) == 1, reads
        assert "FROM users" in reads[0]
    # FIFO across two layers: 10 @ 1.50 + 2 @ 2.00, as read ahead
    detail = (await client.get(f"/sales/{r.json()['order_id']}", headers=shop.headers)).json()
    assert detail["data"]["items"][0]["quantity"] == 12
    await check_books(db, shop.company_id)
