"""a branch's time zone and the company's money format (the back office)

- ``warehouses.timezone``: the IANA zone the branch's times are shown in ("UTC").
- ``companies.money_format``: how the back office writes amounts ("1,234.56").

Revision ID: d5e7a9c3b1f4
Revises: f2a8c4e6b1d3
Create Date: 2026-11-26 12:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "d5e7a9c3b1f4"
down_revision: str | None = "f2a8c4e6b1d3"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("warehouses") as batch:
        batch.add_column(sa.Column("timezone", sa.String(64), nullable=False, server_default="UTC"))
    with op.batch_alter_table("companies") as batch:
        batch.add_column(
            sa.Column("money_format", sa.String(16), nullable=False, server_default="1,234.56")
        )


def downgrade() -> None:
    with op.batch_alter_table("companies") as batch:
        batch.drop_column("money_format")
    with op.batch_alter_table("warehouses") as batch:
        batch.drop_column("timezone")
