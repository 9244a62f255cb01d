"""product search trigram indexes, HOT stock updates (PostgreSQL)

GET /products?search= matches a substring of the name, SKU or barcode,
case-insensitively: ``lower(column) LIKE '%term%'``. A B-tree cannot serve a
leading wildcard, so every search read every product row of the warehouse. On
PostgreSQL, trigram GIN indexes on the same expressions let the planner find the
matching rows directly. SQLite keeps its scan (one shop's catalog, one file).

Every sale rewrites its products' rows (``current_stock``). With full pages that
update cannot be HOT and inserts into every index of the table, these GIN indexes
included, whose pending list then makes searches slow and their plans bad until
the next vacuum. A fill factor of 85 leaves room on each page for stock updates
to stay HOT (no index touched at all), and the GIN indexes take the rare update
that is not HOT directly (``fastupdate = off``).

Needs the pg_trgm extension (in PostgreSQL's contrib, trusted since 13, so the
database owner may create it). Where it cannot be created, the migration leaves
search as it was instead of failing.

Revision ID: 56059980b159
Revises: b20dea2385c8
Create Date: 2026-11-22 06:40:00.000000
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "56059980b159"
down_revision: str | None = "b20dea2385c8"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

log = logging.getLogger("alembic.runtime.migration")

INDEXES = {
    "ix_products_name_trgm": "name",
    "ix_products_item_code_trgm": "item_code",
    "ix_products_barcode_trgm": "barcode",
}


def _has_trgm(bind: sa.Connection) -> bool:
    if bind.execute(sa.text("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'")).scalar():
        return True
    if not bind.execute(
        sa.text("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'")
    ).scalar():
        return False
    try:
        with bind.begin_nested():
            bind.execute(sa.text("CREATE EXTENSION IF NOT EXISTS pg_trgm"))
    except sa.exc.DBAPIError as exc:
        log.warning("pg_trgm not created (%s); product search stays a scan", exc.orig)
        return False
    return True


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    op.execute("ALTER TABLE products SET (fillfactor = 85)")
    if not _has_trgm(bind):
        return
    for name, column in INDEXES.items():
        op.execute(
            f"CREATE INDEX IF NOT EXISTS {name} "
            f"ON products USING gin (lower({column}) gin_trgm_ops) WITH (fastupdate = off)"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for name in INDEXES:
        op.execute(f"DROP INDEX IF EXISTS {name}")
    op.execute("ALTER TABLE products RESET (fillfactor)")
