"""The router-query check itself (``tests/router_check.py``): which statements name
one company for every tenant table they touch. Pure: no database."""

from __future__ import annotations

import pytest

from tests.router_check import RouterAnalyser, tenant_tables

check = RouterAnalyser(frozenset({"orders", "order_items", "products", "listings"})).problems


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT orders.id FROM orders WHERE orders.company_id = $1::BIGINT AND orders.id = $2",
        "SELECT id FROM orders WHERE company_id = 7",
        "SELECT o.id FROM orders AS o WHERE o.id = $2 AND o.company_id IN ($1)",
        # joined: the second table's company_id equals the first's, which is fixed
        "SELECT i.id FROM orders o JOIN order_items i ON i.order_id = o.id "
        "AND i.company_id = o.company_id WHERE o.company_id = $1",
        "SELECT i.id FROM order_items i, orders o WHERE o.company_id = i.company_id "
        "AND i.company_id = $1",
        # a correlated subquery constrained through the outer query
        "SELECT o.id FROM orders o WHERE o.company_id = $1 AND EXISTS (SELECT 1 FROM "
        "order_items i WHERE i.order_id = o.id AND i.company_id = o.company_id)",
        "WITH x AS (SELECT id FROM products WHERE company_id = $1) "
        "SELECT orders.id FROM orders JOIN x ON x.id = orders.id WHERE orders.company_id = $2",
        "INSERT INTO orders (company_id, total) VALUES ($1, $2) RETURNING orders.id",
        "INSERT INTO order_items (company_id, order_id) SELECT $1, u.id FROM unnest($2) AS u(id)",
        "INSERT INTO order_items (company_id, order_id) "
        "SELECT $1::BIGINT AS anon_1, u.id FROM unnest($2) AS u(id)",
        # SQLAlchemy's insertmanyvalues: a VALUES list, as INSERT … VALUES
        "INSERT INTO orders (company_id, total) SELECT p0::BIGINT, p1::NUMERIC FROM "
        "(VALUES ($1, $2, 0), ($3, $4, 1)) AS imp_sen(p0, p1, sen_counter) "
        "ORDER BY sen_counter RETURNING orders.id",
        # the company row itself names the company
        "INSERT INTO orders (company_id) SELECT companies.id FROM companies "
        "WHERE companies.id = $1",
        "SELECT orders.id FROM orders JOIN companies ON companies.id = orders.company_id "
        "WHERE companies.id = $1",
        "UPDATE listings SET current_stock = $1 "
        "WHERE listings.id = $2 AND listings.company_id = $3",
        "UPDATE listings SET current_stock = listings.current_stock + u.q "
        "FROM unnest($1::BIGINT[], $2::NUMERIC[]) AS u(id, q) "
        "WHERE listings.id = u.id AND listings.company_id = $3",
        "DELETE FROM order_items WHERE order_items.company_id = $1 AND order_items.order_id = $2",
        "SELECT 1",
        "SELECT companies.id FROM companies",
        "BEGIN",
    ],
)
def test_router_queries_pass(sql: str) -> None:
    assert check(sql) == ()


@pytest.mark.parametrize(
    ("sql", "problem"),
    [
        ("SELECT orders.id FROM orders WHERE orders.id = $1", "orders without one company_id"),
        ("SELECT id FROM orders", "orders without one company_id"),
        # several values name several shards
        ("SELECT id FROM orders WHERE company_id IN ($1, $2)", "orders"),
        ("SELECT id FROM orders WHERE company_id = ANY($1::BIGINT[])", "orders"),
        # under OR, a term constrains nothing
        ("SELECT id FROM orders WHERE company_id = $1 OR id = $2", "orders"),
        # joined by id only: the second table is left open
        (
            "SELECT i.id FROM orders o JOIN order_items i ON i.order_id = o.id "
            "WHERE o.company_id = $1",
            "order_items without one company_id",
        ),
        # joined to each other only: neither is fixed
        (
            "SELECT i.id FROM orders o JOIN order_items i ON i.company_id = o.company_id",
            "orders without one company_id",
        ),
        ("INSERT INTO orders (total) VALUES ($1)", "INSERT INTO orders without company_id"),
        (
            "INSERT INTO order_items (company_id, order_id) "
            "SELECT u.company_id, u.id FROM unnest($1, $2) AS u(company_id, id)",
            "INSERT INTO order_items … SELECT with several company_id",
        ),
        ("UPDATE listings SET current_stock = 0 WHERE listings.id = $1", "listings"),
        ("DELETE FROM order_items WHERE order_items.order_id = $1", "order_items"),
        # each subquery and CTE on its own
        (
            "SELECT o.id FROM orders o WHERE o.company_id = $1 AND o.id IN "
            "(SELECT order_id FROM order_items WHERE product_id = $2)",
            "order_items without one company_id",
        ),
        (
            "WITH x AS (SELECT id FROM products) SELECT orders.id FROM orders "
            "JOIN x ON x.id = orders.id WHERE orders.company_id = $1",
            "products without one company_id",
        ),
        (
            "SELECT id FROM orders WHERE company_id = $1 UNION SELECT id FROM orders",
            "orders without one company_id",
        ),
    ],
)
def test_statements_that_are_not_router_queries(sql: str, problem: str) -> None:
    problems = check(sql)
    assert any(problem in p for p in problems), problems


def test_the_tenant_tables_come_from_the_models() -> None:
    tables = tenant_tables()
    assert {"orders", "order_items", "journal_lines", "listings"} <= tables
    assert "companies" not in tables
    assert "seen_signatures" not in tables


def test_the_units_last_statement_names_one_company() -> None:
    """The sale's last statement (every kind of queued write at once) and an array
    insert, as compiled for asyncpg, are router queries: company_id goes as one value."""
    from sqlalchemy.dialects.postgresql.asyncpg import dialect

    from tillbook.events.outbox import _INSERT as EVENTS
    from tillbook.inventory import repository as stock
    from tillbook.ledger.repository import PARTY_BALANCES
    from tillbook.models import OrderItem
    from tillbook.models.base import table_of
    from tillbook.orders.repository import ORDER_NUMBERS
    from tillbook.orders.shifts import SHIFT_ORDERS
    from tillbook.unit import _array_insert, _combine

    kinds = (
        stock.LAYER_DRAWS,
        stock.STOCK_LEVELS,
        stock.DEFICIT_FILLS,
        stock.LAYER_RESTORES,
        stock.MOVEMENTS,
        stock.ALERTS,
        PARTY_BALANCES,
        ORDER_NUMBERS,
        SHIFT_ORDERS,
        EVENTS,
    )
    analyser = RouterAnalyser(tenant_tables())
    sql = str(_combine(kinds).compile(dialect=dialect()))
    assert analyser.problems(sql) == ()
    insert = _array_insert(table_of(OrderItem), ("company_id", "order_id", "quantity"))
    assert analyser.problems(str(insert.compile(dialect=dialect()))) == ()


def test_a_units_rows_of_two_companies_are_refused() -> None:
    from tillbook.inventory.repository import MOVEMENTS

    row = dict.fromkeys(MOVEMENTS.columns, 1)
    with pytest.raises(ValueError, match="2 companies"):
        MOVEMENTS.array_params([row, {**row, "company_id": 2}])


def test_cross_tenant_work_is_named_in_the_one_list() -> None:
    from tillbook.db import CROSS_TENANT, cross_tenant, crossing_tenants

    assert crossing_tenants() is None
    with cross_tenant("outbox worker"):
        assert crossing_tenants() == "outbox worker"
    assert crossing_tenants() is None
    assert all(reason for reason in CROSS_TENANT.values())
    with pytest.raises(KeyError, match="CROSS_TENANT"), cross_tenant("a report of every shop"):
        pass
