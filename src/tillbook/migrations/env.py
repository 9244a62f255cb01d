"""Alembic environment: runs the migrations through the service's async engine."""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

from alembic import context
from sqlalchemy.engine import Connection

from tillbook.config import get_settings
from tillbook.db import async_url, create_engine, cross_tenant
from tillbook.models import Base
from tillbook.models.base import sqlite_tenant_unique

# SQLite's batch operations reflect the table first, and SQLAlchemy cannot reflect
# an index on an expression (``lower(email)``): the migrations that touch ``users``
# keep those indexes themselves, so the warning tells an operator nothing.
warnings.filterwarnings(
    "ignore", message="Skipped unsupported reflection of expression-based index"
)

config = context.config
target_metadata = Base.metadata


def _url() -> str:
    return async_url(config.get_main_option("sqlalchemy.url") or get_settings().database_url)


def _include_object(
    obj: Any, name: str | None, type_: str, reflected: bool, compare_to: Any
) -> bool:
    """What ``alembic check`` and ``--autogenerate`` compare with the models.

    The trigram indexes of product search (``ix_products_*_trgm``, revision
    56059980b159) exist only on PostgreSQL, and only where ``pg_trgm`` could be
    created: the migration makes them by hand, the models cannot declare them.
    Left in, every comparison on PostgreSQL would propose dropping them.

    A tenant table's ``UNIQUE (id, company_id)`` exists only on SQLite, where it
    stands in for the two-column primary key (``models/base.py``,
    ``_sqlite_primary_key``): the models' key is ``(id, company_id)``, which alembic
    does not compare.
    """
    if (
        type_ == "unique_constraint"
        and reflected
        and compare_to is None
        and obj.table is not None
        and name == sqlite_tenant_unique(obj.table.name)
    ):
        return False
    return not (
        type_ == "index"
        and reflected
        and compare_to is None
        and name is not None
        and name.startswith("ix_products_")
        and name.endswith("_trgm")
    )


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
        include_object=_include_object,
    )
    with context.begin_transaction():
        context.run_migrations()


async def _run_async() -> None:
    # Through ``create_engine``: a URL that names a pooler gets connections that keep
    # no prepared statement on the server.
    engine = create_engine(_url())
    async with engine.connect() as connection:
        await connection.run_sync(_run)
        await connection.commit()
    await engine.dispose()


if context.is_offline_mode():
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    with cross_tenant("migrations"):
        asyncio.run(_run_async())
