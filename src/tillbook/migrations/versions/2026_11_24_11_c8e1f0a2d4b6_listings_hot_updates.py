"""HOT stock updates on listings and layers (PostgreSQL)

Every sale rewrites its listings' rows (``current_stock``) and the FIFO layers it
draws from (``quantity_remaining``, ``value_remaining``). Since the catalog became
company-wide (e61c0f3d9a57) that row is a listing, not a product, and the fill
factor that kept those updates HOT (revision 56059980b159, on products) must follow
it: room left on each page lets an update of columns no index covers stay on its
page without touching an index, which is what the hot-item contention of a shop's
best seller is made of.

Revision ID: c8e1f0a2d4b6
Revises: a9d3f6c1e824
Create Date: 2026-11-24 08:10:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "c8e1f0a2d4b6"
down_revision: str | None = "a9d3f6c1e824"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = ("listings", "stock_batches")


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for table in TABLES:
        op.execute(f"ALTER TABLE {table} SET (fillfactor = 85)")


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for table in TABLES:
        op.execute(f"ALTER TABLE {table} RESET (fillfactor)")
