"""The loyalty migration (f7a2c5e9d318) gives every existing company a ``loyalty``
payment mode on 21400 and moves its ``reference_version`` on, so no process keeps
a copy of its modes without it; a company that already has one is left alone."""

from __future__ import annotations

import asyncio
from typing import Any

from alembic import command as alembic_command
from sqlalchemy import text

from tests.factories import make_shop
from tests.migrations.test_catalog_migration import fresh_url  # noqa: F401  (the fixture)
from tillbook.db import Database
from tillbook.migrate import alembic_config

BEFORE_LOYALTY = "e2b7c9d4f161"


async def _sql(url: str, statement: str, **params: Any) -> list[Any]:
    db = Database(url)
    try:

        async def run(session: Any) -> list[Any]:
            result = await session.execute(text(statement), params)
            return list(result.all()) if result.returns_rows else []

        if statement.lstrip().upper().startswith("SELECT"):
            return await db.read(run)
        return await db.write(run)
    finally:
        await db.dispose()


async def test_the_migration_adds_the_loyalty_mode_to_existing_companies(
    fresh_url: str,  # noqa: F811
) -> None:
    db = Database(fresh_url)
    try:
        lacking, having = await make_shop(db), await make_shop(db)
    finally:
        await db.dispose()
    await asyncio.to_thread(alembic_command.downgrade, alembic_config(fresh_url), BEFORE_LOYALTY)
    # A company from before loyalty had no such mode.
    await _sql(
        fresh_url,
        "DELETE FROM payment_modes WHERE code = 'loyalty' AND company_id = :c",
        c=lacking.company_id,
    )
    versions = dict(
        await _sql(
            fresh_url,
            "SELECT id, reference_version FROM companies WHERE id IN (:a, :b)",
            a=lacking.company_id,
            b=having.company_id,
        )
    )
    await asyncio.to_thread(alembic_command.upgrade, alembic_config(fresh_url), "head")
    modes = await _sql(
        fresh_url,
        "SELECT m.company_id, a.code FROM payment_modes m JOIN accounts a ON a.id = m.account_id "
        "WHERE m.code = 'loyalty' AND m.company_id IN (:a, :b) ORDER BY m.company_id",
        a=lacking.company_id,
        b=having.company_id,
    )
    assert [tuple(m) for m in modes] == [
        (lacking.company_id, "21400"),
        (having.company_id, "21400"),
    ]
    after = dict(
        await _sql(
            fresh_url,
            "SELECT id, reference_version FROM companies WHERE id IN (:a, :b)",
            a=lacking.company_id,
            b=having.company_id,
        )
    )
    assert after[lacking.company_id] == versions[lacking.company_id] + 1
    assert after[having.company_id] == versions[having.company_id]
    tables = await _sql(fresh_url, "SELECT COUNT(*) FROM loyalty_programmes")
    assert tables == [(0,)]
