"""order credited amount

Revision ID: b20dea2385c8
Revises: 4bf18087e394
Create Date: 2026-11-22 05:44:45.713390
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "b20dea2385c8"
down_revision: str | None = "4bf18087e394"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("orders", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                "credited_amount",
                sa.Numeric(precision=18, scale=2),
                nullable=False,
                server_default="0",
            )
        )


def downgrade() -> None:
    with op.batch_alter_table("orders", schema=None) as batch_op:
        batch_op.drop_column("credited_amount")
