"""foreign cash at the till: payment modes of a foreign currency

- ``payment_modes.currency``: a mode whose drawer or account holds a foreign
  currency (NULL: the base).
- ``payments.amount_foreign``: the foreign cash a tender in such a mode took on a
  base-currency sale; ``payments.change_given``: the change handed back in the base.

Revision ID: c9e2f4a7d318
Revises: a7d3e9c1b846
Create Date: 2026-11-26 14:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "c9e2f4a7d318"
down_revision: str | None = "a7d3e9c1b846"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

MONEY = sa.Numeric(18, 2)


def upgrade() -> None:
    with op.batch_alter_table("payment_modes") as batch:
        batch.add_column(sa.Column("currency", sa.String(3), nullable=True))
    with op.batch_alter_table("payments") as batch:
        batch.add_column(sa.Column("amount_foreign", MONEY, nullable=True))
        batch.add_column(sa.Column("change_given", MONEY, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("payments") as batch:
        batch.drop_column("change_given")
        batch.drop_column("amount_foreign")
    with op.batch_alter_table("payment_modes") as batch:
        batch.drop_column("currency")
