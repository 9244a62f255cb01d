"""an order's invoice number is set in its unit's closing step

An order row is inserted early in its unit of work and numbered from the invoice
counter in the unit's closing step, so that the counter row (every sale of a
warehouse queues on it) is locked only from there to COMMIT. Until then the
number is NULL, which the unique index on (warehouse, type, number) ignores; the
unit always sets it before it commits.

Revision ID: c3a1e0b7d215
Revises: 346f67e16cd4
Create Date: 2026-11-24 03:45:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "c3a1e0b7d215"
down_revision: str | None = "346f67e16cd4"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("orders", schema=None) as batch_op:
        batch_op.alter_column("invoice_number", existing_type=sa.String(100), nullable=True)


def downgrade() -> None:
    with op.batch_alter_table("orders", schema=None) as batch_op:
        batch_op.alter_column("invoice_number", existing_type=sa.String(100), nullable=False)
