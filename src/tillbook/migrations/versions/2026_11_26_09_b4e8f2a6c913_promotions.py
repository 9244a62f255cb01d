"""promotions: the rules table, and each sale line's promotion

- ``promotions``: a company's price rules (DESIGN §18), their dates, weekdays and
  hours, priority and whether they combine, and the history of their states.
- ``order_items`` gains ``promotion_id``, ``promotion_discount`` (what it took off
  the line on the price as given) and ``promotion_cost`` (the revenue given up, net
  of tax: the line's share of the sale's 41300 debit). Existing lines had none: 0.

Revision ID: b4e8f2a6c913
Revises: e2b7c9d4f161
Create Date: 2026-11-26 16:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "b4e8f2a6c913"
down_revision: str | None = "e2b7c9d4f161"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
MONEY = sa.Numeric(18, 2)


def upgrade() -> None:
    op.create_table(
        "promotions",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("company_id", BigId, sa.ForeignKey("companies.id"), nullable=False),
        sa.Column("warehouse_id", BigId, sa.ForeignKey("warehouses.id"), nullable=True),
        sa.Column("name", sa.String(120), nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("applies_to", sa.String(12), nullable=False),
        sa.Column("targets", sa.Text(), nullable=False),
        sa.Column("rule", sa.Text(), nullable=False),
        sa.Column("starts_on", sa.Date(), nullable=False),
        sa.Column("ends_on", sa.Date(), nullable=True),
        sa.Column("weekdays", sa.String(7), nullable=False),
        sa.Column("from_time", sa.Time(), nullable=True),
        sa.Column("until_time", sa.Time(), nullable=True),
        sa.Column("priority", sa.Integer(), nullable=False),
        sa.Column("combines", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("states", sa.Text(), nullable=False),
        sa.Column("created_by", BigId, nullable=True),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.Column("version", sa.Integer(), server_default="1", nullable=False),
        sa.Column("archived_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column(
            "updated_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
    )
    op.create_index("ix_promotions_company_id", "promotions", ["company_id"])
    op.create_index("ix_promotions_warehouse_id", "promotions", ["warehouse_id"])
    with op.batch_alter_table("order_items") as batch:
        batch.add_column(sa.Column("promotion_id", BigId, nullable=True))
        batch.add_column(sa.Column("promotion_discount", MONEY, nullable=False, server_default="0"))
        batch.add_column(sa.Column("promotion_cost", MONEY, nullable=False, server_default="0"))
        batch.create_index("ix_order_items_promotion_id", ["promotion_id"])


def downgrade() -> None:
    with op.batch_alter_table("order_items") as batch:
        batch.drop_index("ix_order_items_promotion_id")
        batch.drop_column("promotion_cost")
        batch.drop_column("promotion_discount")
        batch.drop_column("promotion_id")
    op.drop_index("ix_promotions_warehouse_id", table_name="promotions")
    op.drop_index("ix_promotions_company_id", table_name="promotions")
    op.drop_table("promotions")
