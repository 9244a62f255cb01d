"""Citus-ready keys (DESIGN §17, issue 28): the migrated schema, table by table.

On PostgreSQL the rules are read from ``pg_catalog`` of the database the
migrations built (not from the models): every tenant table's primary key and
every unique index on it include ``company_id``, every foreign key between tenant
tables pairs ``company_id`` with ``company_id``, and every table is a tenant
table, the tenant itself, or named in the one list of reference and coordinator
tables. A table that breaks a rule, made on purpose inside a rolled-back
transaction, is reported by name, so the check cannot pass by reading nothing.

On SQLite, where a tenant table keeps its rowid key, its ``UNIQUE (id,
company_id)`` and the composite foreign keys are checked instead.
"""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession
from typer.testing import CliRunner

from tillbook.cli import app
from tillbook.db import Database
from tillbook.models import Base
from tillbook.models.base import (
    COORDINATOR_TABLES,
    DISTRIBUTION_ROOT,
    REFERENCE_TABLES,
    TENANT_KEY,
    sqlite_tenant_unique,
)
from tillbook.models.distribution import citus_script, tenant_tables, unclassified

NOT_TENANT = {DISTRIBUTION_ROOT, *REFERENCE_TABLES, *COORDINATOR_TABLES, "alembic_version"}

_COLUMNS = """
SELECT c.relname, a.attname
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
"""
# Every unique index (primary keys and unique constraints are backed by one), with
# its key columns (an expression's place is NULL) and whether it is the primary key.
_UNIQUE_INDEXES = """
SELECT t.relname, i.relname, x.indisprimary,
       array(SELECT a.attname FROM unnest(x.indkey) WITH ORDINALITY k(attnum, n)
             LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
             ORDER BY k.n) AS columns
FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
JOIN pg_namespace n ON n.oid = t.relnamespace
WHERE n.nspname = current_schema() AND x.indisunique
"""
# Every foreign key as (table, name, referred table, [(column, referred column)]).
_FOREIGN_KEYS = """
SELECT t.relname, k.conname, r.relname,
       array(SELECT a.attname FROM unnest(k.conkey) WITH ORDINALITY c(attnum, n)
             JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = c.attnum
             ORDER BY c.n),
       array(SELECT a.attname FROM unnest(k.confkey) WITH ORDINALITY c(attnum, n)
             JOIN pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = c.attnum
             ORDER BY c.n)
FROM pg_constraint k JOIN pg_class t ON t.oid = k.conrelid JOIN pg_class r ON r.oid = k.confrelid
JOIN pg_namespace n ON n.oid = t.relnamespace
WHERE n.nspname = current_schema() AND k.contype = 'f'
"""


async def violations(session: AsyncSession) -> list[str]:
    """Every way the schema on ``session``'s connection breaks the rules, one line
    each, naming the table and the constraint."""
    columns: dict[str, set[str]] = {}
    for table, column in (await session.execute(text(_COLUMNS))).all():
        columns.setdefault(table, set()).add(column)
    tenant = {t for t, cols in columns.items() if TENANT_KEY in cols} - NOT_TENANT
    found: list[str] = []
    for table in sorted(set(columns) - tenant - NOT_TENANT):
        found.append(f"{table}: no {TENANT_KEY}, and not named a reference or coordinator table")
    has_key: set[str] = set()
    for table, index, primary, cols in (await session.execute(text(_UNIQUE_INDEXES))).all():
        if table not in tenant:
            continue
        if primary:
            has_key.add(table)
        if TENANT_KEY not in cols:
            kind = "primary key" if primary else "unique index"
            found.append(
                f"{table}: {kind} {index} ({', '.join(map(str, cols))}) lacks {TENANT_KEY}"
            )
    found.extend(f"{table}: no primary key" for table in sorted(tenant - has_key))
    for table, name, referred, cols, referred_cols in (
        await session.execute(text(_FOREIGN_KEYS))
    ).all():
        pairs = list(zip(cols, referred_cols, strict=True))
        if table not in tenant:
            continue
        if referred == DISTRIBUTION_ROOT:
            if pairs != [(TENANT_KEY, "id")]:
                found.append(f"{table}: {name} to {referred} is not {TENANT_KEY} -> id")
        elif referred in tenant:
            if (TENANT_KEY, TENANT_KEY) not in pairs:
                found.append(f"{table}: {name} to {referred} does not pair {TENANT_KEY}")
        elif referred not in REFERENCE_TABLES:
            found.append(f"{table}: {name} points at {referred}, a coordinator table")
    return found


def test_every_table_is_classified_once() -> None:
    assert unclassified(Base.metadata) == []
    classes = [[DISTRIBUTION_ROOT], list(REFERENCE_TABLES), list(COORDINATOR_TABLES)]
    named = [t for names in classes for t in names]
    assert len(named) == len(set(named))
    assert not set(named) & set(tenant_tables(Base.metadata))
    for name in REFERENCE_TABLES:
        assert TENANT_KEY not in Base.metadata.tables[name].c, name


async def test_the_migrated_schema_keeps_the_rules(db: Database, backend: str) -> None:
    if backend != "postgresql":
        pytest.skip("pg_catalog; SQLite's keys: the next test")
    assert await db.read(violations) == []


async def test_a_table_that_breaks_the_rules_is_named(db: Database, backend: str) -> None:
    """Made in a transaction that rolls back: a tenant table keyed by id alone, a
    unique constraint without the tenant, a one-column reference to a product."""
    if backend != "postgresql":
        pytest.skip("pg_catalog")

    class Done(Exception):
        pass

    found: list[str] = []

    async def unit(session: AsyncSession) -> Any:
        await session.execute(
            text(
                "CREATE TABLE widgets (id bigint PRIMARY KEY, company_id bigint NOT NULL, "
                "code text UNIQUE, product_id bigint, product_company bigint, "
                "FOREIGN KEY (product_id, product_company) REFERENCES products (id, company_id))"
            )
        )
        await session.execute(text("CREATE TABLE widget_notes (id bigint PRIMARY KEY)"))
        found.extend(await violations(session))
        raise Done

    with pytest.raises(Done):
        await db.write(unit)
    assert sorted(found) == [
        "widget_notes: no company_id, and not named a reference or coordinator table",
        "widgets: primary key widgets_pkey (id) lacks company_id",
        "widgets: unique index widgets_code_key (code) lacks company_id",
        "widgets: widgets_product_id_product_company_fkey to products does not pair company_id",
    ]


async def test_sqlite_keys_stand_in_for_the_wider_primary_key(db: Database, backend: str) -> None:
    """SQLite keeps the rowid ``PRIMARY KEY (id)``: each tenant table with an id has
    ``UNIQUE (id, company_id)``, and its references to tenant tables are pairs."""
    if backend != "sqlite":
        pytest.skip("SQLite's own layout")
    tenant = set(tenant_tables(Base.metadata))

    async def read(session: AsyncSession) -> list[str]:
        problems = []
        for name in sorted(tenant):
            sql = (
                await session.execute(
                    text("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = :n"),
                    {"n": name},
                )
            ).scalar_one()
            if "id" in Base.metadata.tables[name].c and (
                f"CONSTRAINT {sqlite_tenant_unique(name)} UNIQUE (id, company_id)" not in sql
            ):
                problems.append(f"{name}: no UNIQUE (id, company_id)")
            rows = (await session.execute(text(f"PRAGMA foreign_key_list({name})"))).all()
            by_key: dict[int, list[tuple[str, str, str]]] = {}
            for row in rows:
                by_key.setdefault(row[0], []).append((row[2], row[3], row[4]))
            for pairs in by_key.values():
                referred = pairs[0][0]
                if referred in tenant and (referred, TENANT_KEY, TENANT_KEY) not in pairs:
                    problems.append(f"{name}: a key to {referred} without {TENANT_KEY}")
        return problems

    assert await db.read(read) == []


def test_the_citus_script_distributes_every_tenant_table_after_what_it_refers_to() -> None:
    result = CliRunner().invoke(app, ["citus-script"])
    assert result.exit_code == 0, result.output
    assert result.output == citus_script(Base.metadata)
    statements = [line for line in result.output.splitlines() if line.startswith("SELECT")]
    assert statements[0] == f"SELECT create_distributed_table('{DISTRIBUTION_ROOT}', 'id');"
    order = [s.split("'")[1] for s in statements[1:]]
    assert sorted(order) == sorted(tenant_tables(Base.metadata))
    for s in statements[1:]:
        assert s.endswith(f"'{TENANT_KEY}', colocate_with => '{DISTRIBUTION_ROOT}');"), s
    place = {name: n for n, name in enumerate(order)}
    for name in order:
        for fk in Base.metadata.tables[name].foreign_keys:
            referred = fk.column.table.name
            if referred in place and referred != name:
                assert place[referred] < place[name], (name, referred)
    for name in COORDINATOR_TABLES:
        assert f"--   {name}: " in result.output
